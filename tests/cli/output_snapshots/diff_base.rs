//! `kco diff --base REV`: what a change to the files would do, in a scratch git repository,
//! as text and markdown. The files are written by `kco snapshot` from the fake.

use super::{sink_offsets, snap, source_offsets, Env, SINK, SOURCE};
use crate::fake_connect::{ConnectorSpec, FakeConnect, State};
use crate::support::git::git;

/// A repository with two commits of snapshot files: the second rewinds `orders/0`, skips
/// `orders/2` ahead, drops `orders/1`, rewinds the source `billing`, adds `newbie` and
/// removes `legacy`; `cdc` stays as it was.
pub(super) fn repo() -> (Env, FakeConnect) {
    let env = Env::new();
    let fake = FakeConnect::builder()
        .source("billing", SOURCE, State::Running, source_offsets(900))
        .source("cdc", SOURCE, State::Stopped, source_offsets(50))
        .sink(
            "orders",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 1500), (1, 700), (2, 40)]),
        )
        .sink(
            "legacy",
            SINK,
            State::Running,
            sink_offsets("old", &[(0, 1)]),
        )
        .start();
    git(env.path(), &["init", "-q", "-b", "main"]);
    env.snapshot(&fake);
    git(env.path(), &["add", "."]);
    git(env.path(), &["commit", "-q", "-m", "snapshot"]);

    fake.set_offsets("billing", source_offsets(400));
    let orders = sink_offsets("orders", &[(0, 1000), (2, 90)]);
    fake.set_offsets("orders", orders);
    fake.remove_connector("legacy");
    fake.add_connector(ConnectorSpec::sink("newbie", SINK).offsets(sink_offsets("new", &[(0, 3)])));
    let out = env.text_on(&fake, &["snapshot", "--prune"]);
    assert!(out.starts_with("exit: 0\n"), "{out}");
    git(env.path(), &["add", "-A"]);
    git(env.path(), &["commit", "-q", "-m", "rewind orders"]);
    (env, fake)
}

#[test]
fn a_change_as_text_and_markdown() {
    let (env, _fake) = repo();
    snap!("diff_base", env.text(&["diff", "--base", "HEAD~1"]));
    let markdown = env.text(&["diff", "--base", "HEAD~1", "-o", "markdown"]);
    snap!("diff_base_markdown", markdown);
}

#[test]
fn no_change() {
    let (env, _fake) = repo();
    snap!("diff_base_unchanged", env.text(&["diff", "--base", "HEAD"]));
    let markdown = env.text(&["diff", "--base", "HEAD", "-o", "markdown"]);
    snap!("diff_base_unchanged_markdown", markdown);
}

#[test]
fn an_unknown_revision() {
    let (env, _fake) = repo();
    snap!(
        "diff_base_unknown_rev",
        env.text(&["diff", "--base", "nope"])
    );
}
