//! The line numbers of `kco diff`'s unified diff are those of the files: a hunk starts where
//! `git diff` says it does for the same change, whether the sides are diffed whole (a small
//! file) or walked item by item (a wide one), at the top, in the middle and at the end of a
//! file's offsets.

use std::path::Path;

use kco::model::{ConnectorState, ConnectorType};
use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{sink_entry, SnapshotFile};
use crate::support::git::git;
use crate::support::run::Kco;

/// `n` partitions of `orders`; partition `moved` at another offset than the others'.
fn sink_offsets(n: i64, moved: i64) -> Value {
    Value::Array(
        (0..n)
            .map(|p| sink_entry("orders", p, if p == moved { 9_999 } else { 100 + p }))
            .collect(),
    )
}

/// The `@@ -a,b +c,d @@` lines of a unified diff, as (a, b, c, d).
fn hunks(diff: &str) -> Vec<(u64, u64, u64, u64)> {
    let range = |r: &str| -> (u64, u64) {
        let r = &r[1..];
        match r.split_once(',') {
            Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
            None => (r.parse().unwrap(), 1),
        }
    };
    diff.lines()
        .filter_map(|l| l.strip_prefix("@@ "))
        .map(|l| {
            let mut parts = l.split(' ');
            let (a, b) = range(parts.next().unwrap());
            let (c, d) = range(parts.next().unwrap());
            (a, b, c, d)
        })
        .collect()
}

/// A repository whose one file of `n` partitions is committed, then changed in the working
/// tree: partition `moved` gets another offset. Returns kco's and git's hunks.
type Hunks = Vec<(u64, u64, u64, u64)>;
fn both_diffs(n: i64, moved: i64) -> (Hunks, Hunks) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    git(root, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(root.join("snapshots/a")).unwrap();
    let file = root.join("snapshots/a/orders.yaml");
    let write = |offsets: Value| {
        let text = SnapshotFile::captured("orders", ConnectorType::Sink, offsets).text();
        std::fs::write(&file, text).unwrap();
    };
    write(sink_offsets(n, -1));
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "snapshot"]);
    write(sink_offsets(n, moved));
    let r = Kco::new(root)
        .args(["diff", "--base", "HEAD", "snapshots"])
        .run();
    assert_eq!(r.code, 2, "{}", r.stderr);
    let out = r.stdout;
    let theirs = git_diff(root);
    let ours = hunks(&out);
    assert!(!ours.is_empty(), "{out}");
    assert_lengths(&out);
    let before = git(root, &["show", "HEAD:snapshots/a/orders.yaml"]);
    let after = std::fs::read_to_string(&file).unwrap();
    assert_lines_are_the_files(&out, &before, Some(&after));
    (ours, hunks(&theirs))
}

/// Each hunk's lengths count the lines it shows: context and deletions on the old side,
/// context and insertions on the new.
fn assert_lengths(diff: &str) {
    let body: Vec<&str> = diff
        .lines()
        .skip_while(|l| !l.starts_with("@@ "))
        .take_while(|l| l.starts_with([' ', '-', '+', '@']))
        .collect();
    let heads = hunks(diff);
    let mut shown = Vec::new();
    for l in body {
        if l.starts_with("@@ ") {
            shown.push((0, 0));
            continue;
        }
        let last = shown.last_mut().unwrap();
        match l.as_bytes()[0] {
            b' ' => *last = (last.0 + 1, last.1 + 1),
            b'-' => last.0 += 1,
            _ => last.1 += 1,
        }
    }
    let counted: Vec<(u64, u64)> = heads.iter().map(|h| (h.1, h.3)).collect();
    assert_eq!(counted, shown, "{diff}");
}

/// Every line a hunk shows is the line of the file its number names: context and `-` lines
/// in `old`, context and `+` lines in `new` (when the new side is a file).
fn assert_lines_are_the_files(diff: &str, old: &str, new: Option<&str>) {
    let (old, new): (Vec<&str>, Option<Vec<&str>>) =
        (old.lines().collect(), new.map(|t| t.lines().collect()));
    let heads = hunks(diff);
    let mut at = 0;
    let (mut o, mut n) = (0, 0);
    for l in diff.lines().skip_while(|l| !l.starts_with("@@ ")) {
        if l.starts_with("@@ ") {
            (o, n) = (heads[at].0 as usize, heads[at].2 as usize);
            at += 1;
            continue;
        }
        let Some((tag, text)) = l.split_at_checked(1) else {
            break;
        };
        let in_old = tag == " " || tag == "-";
        let in_new = tag == " " || tag == "+";
        if !in_old && !in_new {
            break;
        }
        // kco shows `metadata`'s class and type without their indent.
        let same = |file: &str| file.trim_start() == text.trim_start();
        if in_old {
            assert!(
                same(old[o - 1]),
                "old line {o} is {:?}, shown {l:?}",
                old[o - 1]
            );
            o += 1;
        }
        if let (true, Some(new)) = (in_new, &new) {
            assert!(
                same(new[n - 1]),
                "new line {n} is {:?}, shown {l:?}",
                new[n - 1]
            );
        }
        if in_new {
            n += 1;
        }
    }
}

fn git_diff(root: &Path) -> String {
    git(
        root,
        &["diff", "-U3", "HEAD", "--", "snapshots/a/orders.yaml"],
    )
}

#[test]
fn hunks_start_where_git_diff_says_for_small_and_wide_files() {
    // 20 partitions: the plain diff of both sides; 2,100: the walk over their items.
    for n in [20, 2_100] {
        for (place, moved) in [("top", 0), ("middle", n / 2), ("end", n - 1)] {
            let (ours, theirs) = both_diffs(n, moved);
            // kco shows one change; git also the checksum line, in a hunk of its own
            // unless the change is near it.
            assert_eq!(ours.len(), 1, "{place} of {n}: {ours:?}");
            let (a, b, c, d) = ours[0];
            let first = theirs[0];
            assert_eq!(
                (a, c),
                (first.0, first.2),
                "{place} of {n}: {ours:?} vs {theirs:?}"
            );
            if theirs.len() == 2 {
                // The change's own hunk: the same lines as git's.
                assert_eq!((a, b, c, d), first, "{place} of {n}");
            } else {
                // git's hunk runs on to the checksum line, which kco leaves out: it is
                // longer.
                assert!(
                    b < first.1 && d < first.3,
                    "{place} of {n}: {ours:?} vs {theirs:?}"
                );
            }
        }
    }
}

#[test]
fn against_the_cluster_the_file_side_is_numbered_by_the_file() {
    for n in [20, 2_100] {
        for moved in [0, n / 2, n - 1] {
            let t = tempfile::tempdir().unwrap();
            // Recorded STOPPED: a partition moved since is drift.
            let file = SnapshotFile::captured("orders", ConnectorType::Sink, sink_offsets(n, -1))
                .state(Some(ConnectorState::Stopped))
                .write_in(&t.path().join("snapshots/a"));
            let fake = FakeConnect::builder()
                .version("4.1.0")
                .sink(
                    "orders",
                    "FileStreamSink",
                    State::Stopped,
                    sink_offsets(n, moved),
                )
                .start();
            let r = Kco::new(t.path()).on(&fake).args(["diff"]).run();
            assert_eq!(r.code, 2, "{}", r.stderr);
            assert_lengths(&r.stdout);
            let text = std::fs::read_to_string(&file).unwrap();
            assert_lines_are_the_files(&r.stdout, &text, None);
            // The live side is numbered where its lines would be in the file: here, where
            // the file has the same lines.
            let (a, _, c, _) = hunks(&r.stdout)[0];
            assert_eq!(a, c, "{}", r.stdout);
        }
    }
}
