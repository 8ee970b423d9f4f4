//! `kco log`, `kco show --at` and `kco apply --at / --changed-since / --fail-on` as text, on
//! the generated history of `tests/cli/history.rs` (fixed dates: stable commit ids).

use super::snap;
use crate::fake_connect::{FakeConnect, State};
use crate::history::{billing, history, orders};

fn kco(dir: &std::path::Path, args: &[&str]) -> String {
    let (code, out, err) = crate::history::kco(dir, args);
    format!("exit: {code}\n[stdout]\n{out}[stderr]\n{err}")
}

#[test]
fn log_and_show_as_text() {
    let (r, _) = history();
    snap!("log", kco(r.path(), &["log"]));
    snap!("log_stalled", kco(r.path(), &["log", "--stalled", "2"]));
    snap!(
        "show_at",
        kco(r.path(), &["show", "orders", "--at", "2026-11-28 03:00"])
    );
    snap!(
        "show_before_history",
        kco(r.path(), &["show", "orders", "--at", "2026-01-01"])
    );
}

#[test]
fn apply_from_history_as_text() {
    let (r, _) = history();
    let fake = FakeConnect::builder()
        .sink(
            "orders",
            "FileStreamSink",
            State::Running,
            orders(&[(0, 900)]),
        )
        .sink(
            "newbie",
            "FileStreamSink",
            State::Running,
            orders(&[(2, 5)]),
        )
        .sink(
            "legacy",
            "FileStreamSink",
            State::Stopped,
            orders(&[(0, 7)]),
        )
        .source("billing", "FileStreamSource", State::Running, billing(30))
        .start();
    let url = fake.url();
    let on = |args: &[&str]| {
        let mut all = vec!["--url", url.as_str()];
        all.extend_from_slice(args);
        kco(r.path(), &all)
    };
    snap!(
        "apply_at_dry_run",
        on(&["apply", "snapshots/a", "--at", "HEAD~2", "--dry-run"])
    );
    snap!(
        "apply_changed_since_refused",
        on(&[
            "apply",
            "snapshots/a",
            "--changed-since",
            "HEAD~1",
            "--fail-on",
            "reprocessing",
            "--yes"
        ])
    );
    fake.assert_no_mutations();
}
