//! `kco log`, `kco show --at` and `kco apply --at / --changed-since / --fail-on` as text, on
//! the generated history of `tests/cli/history.rs` (fixed dates: stable commit ids).

use super::snap;
use crate::history::{fake_at_head, history};
use crate::support::run::Run;

/// A run's exit code, stdout and stderr as one text.
fn text(r: Run) -> String {
    format!(
        "exit: {}\n[stdout]\n{}[stderr]\n{}",
        r.code, r.stdout, r.stderr
    )
}

#[test]
fn log_and_show_as_text() {
    let (r, _) = history();
    snap!("log", text(r.kco(&["log"])));
    snap!("log_stalled", text(r.kco(&["log", "--stalled", "2"])));
    snap!(
        "show_at",
        text(r.kco(&["show", "orders", "--at", "2026-11-28 03:00"]))
    );
    snap!(
        "show_before_history",
        text(r.kco(&["show", "orders", "--at", "2026-01-01"]))
    );
}

#[test]
fn apply_from_history_as_text() {
    let (r, _) = history();
    let fake = fake_at_head();
    let on = |args: &[&str]| text(r.on(&fake, args));
    snap!(
        "apply_at_dry_run",
        on(&["apply", "snapshots/a", "--at", "HEAD~2", "--dry-run"])
    );
    snap!(
        "apply_changed_since_forward_change_left",
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

/// `log` folds at a known width (`COLUMNS`) as `diff` does: every line within it, the same
/// words.
#[test]
fn log_at_60_columns_fits_and_says_the_same() {
    let (r, _) = history();
    let wide = r.kco(&["log"]);
    assert!(wide.stdout.lines().any(|l| l.chars().count() > 60));
    let narrow = r.cmd().env("COLUMNS", "60").args(["log"]).run();
    assert!(
        narrow.stdout.lines().all(|l| l.chars().count() <= 60),
        "{}",
        narrow.stdout
    );
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(words(&narrow.stdout), words(&wide.stdout));
}
