//! docs/getting-started.md, run: every ```sh block of the page, in order, in one scratch
//! directory, with `kco` on PATH and the page's worker URL pointing at the fake Connect.
//! A step of the page that stops working fails here, so the page cannot rot.

use std::path::Path;

use serde_json::json;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::SINK;
use crate::support::docs::{page_shell, shell_blocks, succeeded};
use crate::support::git::git;

const PAGE_URL: &str = "http://localhost:8083";

#[test]
fn the_getting_started_page_runs_from_an_empty_directory_to_a_nightly_commit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/getting-started.md")).unwrap();
    assert!(
        page.contains(PAGE_URL),
        "the page names the worker URL the test replaces"
    );
    let blocks = shell_blocks(&page);
    assert!(blocks.len() >= 5, "{} blocks", blocks.len());
    let offsets = |n: i64| {
        json!([{"partition": {"kafka_topic": "orders", "kafka_partition": 0},
                "offset": {"kafka_offset": n}}])
    };
    let fake = FakeConnect::builder()
        .sink("orders-sink", SINK, State::Running, offsets(10))
        .start();
    let dir = tempfile::tempdir().unwrap();
    let script = blocks.join("\n").replace(PAGE_URL, &fake.url());
    let run = |script: &str| {
        let mut sh = page_shell("sh", dir.path(), dir.path());
        succeeded(script, &sh.args(["-e", "-c", script]).output().unwrap());
    };
    run(&script);
    let repo = dir.path().join("offsets");
    let log = |repo: &Path| git(repo, &["log", "--format=%s"]) + "\n";
    // Nothing moved between the first snapshot and the nightly step: no nightly commit.
    assert_eq!(
        log(&repo),
        "merge snapshot files with kco merge-file\noffsets of prod\n"
    );
    // The merge driver is registered for the snapshot files.
    assert_eq!(
        git(
            &repo,
            &["check-attr", "merge", "snapshots/prod/orders-sink.yaml"]
        ),
        "snapshots/prod/orders-sink.yaml: merge: kco"
    );
    assert_eq!(
        git(&repo, &["config", "merge.kco.driver"]),
        "kco merge-file %O %A %B --path %P"
    );
    let file = std::fs::read_to_string(repo.join("snapshots/prod/orders-sink.yaml")).unwrap();
    assert!(file.contains("kafka_offset: 10"), "{file}");
    // The nightly block again, after the sink moved on: it commits the new position.
    fake.set_offsets("orders-sink", offsets(25));
    let nightly = blocks
        .iter()
        .find(|b| b.contains("snapshot --commit"))
        .expect("a nightly block");
    assert!(
        nightly.contains("kco diff --fail-on drift,failed"),
        "the nightly checks drift first, as examples/ci/nightly-snapshot.sh does: {nightly}"
    );
    run(&format!("cd offsets\n{nightly}"));
    assert_eq!(
        log(&repo),
        "offsets of prod\nmerge snapshot files with kco merge-file\noffsets of prod\n"
    );
    assert_eq!(
        git(
            &repo,
            &[
                "log",
                "-1",
                "--format=%(trailers:key=Kco-Snapshot,valueonly)"
            ]
        )
        .trim(),
        "prod",
        "an observation, as the recipe commits it"
    );
    fake.assert_no_mutations();
}
