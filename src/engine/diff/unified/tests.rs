use proptest::prelude::*;
use serde_json::json;
use similar::{Algorithm, DiffOp, TextDiff};

use super::edit::{Edit, CONTEXT};
use super::walk::{disjoint_middle, walked};
use super::*;
use crate::model::{ConnectorType, OffsetEntry};

fn sink(partitions: impl IntoIterator<Item = (usize, i64)>) -> Vec<OffsetEntry> {
    partitions
        .into_iter()
        .map(|(p, o)| {
            serde_json::from_value(json!({
                "partition": {"kafka_topic": format!("t{}", p / 10), "kafka_partition": p % 10},
                "offset": {"kafka_offset": o},
            }))
            .unwrap()
        })
        .collect()
}

fn side(class: &str, entries: &[OffsetEntry]) -> Option<Side> {
    Some(Side::new(Some(ConnectorType::Sink), Some(class), entries))
}

fn sides(old: Option<Side>, new: Option<Side>) -> YamlSides {
    YamlSides {
        old_label: "file".into(),
        old,
        new_label: "live".into(),
        new,
    }
}

fn text(s: &Option<Side>) -> String {
    s.as_ref().map(Side::yaml).unwrap_or_default()
}

/// The plain line diff of both sides' whole texts.
fn plain(y: &YamlSides) -> String {
    TextDiff::from_lines(&text(&y.old), &text(&y.new))
        .unified_diff()
        .context_radius(CONTEXT)
        .header("file", "live")
        .to_string()
}

/// The walk over items, whatever the size.
fn walk(y: &YamlSides) -> String {
    let mut out = String::new();
    walked(y, &mut |l| {
        out.push_str(l);
        out.push('\n');
    });
    out
}

/// What the text-based pairing made of the same sides.
fn oracle(y: &YamlSides) -> String {
    oracle::paired("file", &text(&y.old), "live", &text(&y.new))
}

#[test]
fn moved_partitions_give_the_same_diff_as_a_plain_line_diff() {
    let y = sides(
        side("a.Sink", &sink((0..300).map(|p| (p, 100)))),
        side(
            "b.Sink",
            &sink((0..300).map(|p| (p, if p % 7 == 0 { 150 } else { 100 }))),
        ),
    );
    let got = walk(&y);
    assert_eq!(got, plain(&y));
    assert_eq!(got.matches("\n+    kafka_offset: 150").count(), 43);
    assert!(got.contains("-connectorClass: a.Sink\n+connectorClass: b.Sink\n"));
}

#[test]
fn added_and_removed_partitions_are_whole_items() {
    let y = sides(
        side(
            "a.Sink",
            &sink((0..200).filter(|p| p % 5 != 0).map(|p| (p, 1))),
        ),
        side(
            "a.Sink",
            &sink((0..200).filter(|p| p % 3 != 0).map(|p| (p, 2))),
        ),
    );
    let got = walk(&y);
    assert_eq!(got, oracle(&y));
    // Partition 3 (topic t0, partition 3) is only in the file: its whole item is removed.
    assert!(got.contains(
        "-- partition:\n-    kafka_partition: 3\n-    kafka_topic: t0\n-  offset:\n-    kafka_offset: 1\n"
    ));
    // Partition 5 is only live.
    assert!(got.contains(
        "+- partition:\n+    kafka_partition: 5\n+    kafka_topic: t0\n+  offset:\n+    kafka_offset: 2\n"
    ));
    let count = |prefix: &str| got.lines().filter(|l| l.starts_with(prefix)).count();
    // Multiples of 3 but not of 15, multiples of 5 but not of 15.
    assert_eq!((count("-- partition:"), count("+- partition:")), (53, 26));
}

#[test]
fn one_side_absent_and_equal_sides() {
    let s = side("a.Sink", &sink((0..50).map(|p| (p, 1))));
    assert_eq!(
        walk(&sides(None, s.clone())),
        plain(&sides(None, s.clone()))
    );
    assert_eq!(
        walk(&sides(s.clone(), None)),
        plain(&sides(s.clone(), None))
    );
    assert_eq!(walk(&sides(s.clone(), s.clone())), "");
    assert_eq!(unified(&sides(s.clone(), s)), "");
    assert_eq!(unified(&sides(None, None)), "");
}

#[test]
fn above_the_threshold_every_moved_partition_is_one_line_pair() {
    let y = sides(
        side("a.Sink", &sink((0..20_000).map(|p| (p, 7)))),
        side("a.Sink", &sink((0..20_000).map(|p| (p, 8)))),
    );
    let got = unified(&y);
    assert_eq!(got.matches("\n-    kafka_offset: 7\n").count(), 20_000);
    assert_eq!(got.matches("\n+    kafka_offset: 8\n").count(), 20_000);
    assert!(got.starts_with("--- file\n+++ live\n@@ -"));
    assert_eq!(got, oracle(&y));
}

#[test]
fn values_are_spelled_as_the_snapshot_file_spells_them() {
    // Scalars that YAML 1.1 readers take for booleans and dates, and a float without a dot:
    // the diff shows them as the file has them, quoted and with a dot.
    let source = |date: &str| -> Option<Side> {
        let e: Vec<OffsetEntry> = vec![serde_json::from_value(json!({
            "partition": {"server": "on"},
            "offset": {"day": "2024-01-01", "lsn": 1e300, "ts": date},
        }))
        .unwrap()];
        Some(Side::new(Some(ConnectorType::Source), Some("x.Source"), &e))
    };
    let y = sides(source("yes"), source("no"));
    for got in [unified(&y), walk(&y)] {
        for line in [
            "     day: \"2024-01-01\"",
            "     lsn: 1.0e+300",
            "-    ts: \"yes\"",
            "+    ts: \"no\"",
        ] {
            assert!(got.lines().any(|l| l == line), "{line:?} not in\n{got}");
        }
    }
}

#[test]
fn a_wide_diff_is_handed_on_a_line_at_a_time() {
    let y = sides(
        side("a.Sink", &sink((0..20_000).map(|p| (p, 7)))),
        side("a.Sink", &sink((0..20_000).map(|p| (p, 8)))),
    );
    let mut lines = Vec::new();
    unified_lines(&y, &mut |l| lines.push(l.to_string()));
    assert!(lines.iter().all(|l| !l.contains('\n')));
    assert_eq!(lines.join("\n") + "\n", unified(&y));
}

/// Source entries whose offsets have one to three fields, so that a moved pair can differ in
/// several lines, some of them shared.
fn source(entries: &[(u8, u8, u8, u8)]) -> Vec<OffsetEntry> {
    entries
        .iter()
        .map(|&(p, a, b, shape)| {
            let offset = match shape % 3 {
                0 => json!({"pos": a}),
                1 => json!({"pos": a, "file": format!("f{b}")}),
                _ => json!({"a": b, "pos": a, "z": b}),
            };
            serde_json::from_value(json!({"partition": {"f": format!("p{p}")}, "offset": offset}))
                .unwrap()
        })
        .collect()
}

proptest! {
    /// Whatever the two sides, the walk gives what the text-based pairing gave.
    #[test]
    fn the_walk_diffs_as_the_text_pairing_did(
        old in proptest::collection::vec((0u8..12, 0u8..4, 0u8..3, 0u8..3), 0..14),
        new in proptest::collection::vec((0u8..12, 0u8..4, 0u8..3, 0u8..3), 0..14),
        absent in 0u8..8,
        sink_side in any::<bool>(),
        class in 0u8..3,
    ) {
        let make = |e: &[(u8, u8, u8, u8)], class: &str| -> Option<Side> {
            if sink_side {
                let entries = sink(e.iter().map(|&(p, a, _, _)| (p as usize, a as i64)));
                Some(Side::new(Some(ConnectorType::Sink), Some(class), &entries))
            } else {
                Some(Side::new(Some(ConnectorType::Source), Some(class), &source(e)))
            }
        };
        let y = sides(
            (absent != 1).then(|| make(&old, "a.C")).flatten(),
            (absent != 2).then(|| make(&new, if class == 0 { "b.C" } else { "a.C" })).flatten(),
        );
        prop_assert_eq!(walk(&y), oracle(&y));
        // Small sides are diffed whole: the lines of `similar`'s unified diff of their
        // texts, each hunk counting the lines it shows (`similar`'s own count can be off).
        let (got, theirs) = (unified(&y), plain(&y));
        prop_assert_eq!(without_heads(&got), without_heads(&theirs));
        assert_counts(&got);
    }

    /// Where the middles have no line in common, the shortcut is what Myers gives.
    #[test]
    fn a_disjoint_middle_is_what_myers_gives(
        a in proptest::collection::vec(0u8..5, 0..7),
        b in proptest::collection::vec(0u8..5, 0..7),
    ) {
        let (ta, tb): (Vec<String>, Vec<String>) = (
            a.iter().map(|x| format!("{x}\n")).collect(),
            b.iter().map(|x| format!("{x}\n")).collect(),
        );
        let (la, lb): (Vec<&str>, Vec<&str>) = (
            ta.iter().map(String::as_str).collect(),
            tb.iter().map(String::as_str).collect(),
        );
        let record = |fast: bool| {
            let mut out = Vec::new();
            let mut f = |e: Edit, o: usize, n: usize, l: &[&str]| out.push((e, o, n, l.len()));
            if fast {
                for (edit, or, nr) in disjoint_middle(&la, &lb).unwrap() {
                    let len = if edit == Edit::Insert { nr.len() } else { or.len() };
                    if len > 0 {
                        f(edit, or.start, nr.start, &vec![""; len]);
                    }
                }
            } else {
                for op in similar::capture_diff_slices(Algorithm::Myers, &la, &lb) {
                    let (or, nr) = (op.old_range(), op.new_range());
                    match op {
                        DiffOp::Equal { .. } => f(Edit::Equal, or.start, nr.start, &la[or]),
                        _ => {
                            if !or.is_empty() {
                                f(Edit::Delete, or.start, nr.start, &la[or.clone()]);
                            }
                            if !nr.is_empty() {
                                f(Edit::Insert, or.end, nr.start, &lb[nr]);
                            }
                        }
                    }
                }
            }
            out
        };
        if disjoint_middle(&la, &lb).is_some() {
            prop_assert_eq!(record(true), record(false));
        }
    }
}

/// The `@@` lines of a diff.
fn heads(diff: &str) -> Vec<&str> {
    diff.lines().filter(|l| l.starts_with("@@")).collect()
}

#[test]
fn hunks_are_numbered_by_the_file_and_where_live_lines_would_be_in_it() {
    use crate::engine::diff::Numbering;
    use crate::model::{FileLines, HeaderLines};
    let header = HeaderLines {
        class: Some(6),
        kind: Some(7),
        offsets: Some(9),
    };
    // Entry k of a file laid out as kco writes it: lines 10 + 5k to 14 + 5k.
    let file = |n: usize| FileLines {
        header,
        entries: (0..n as u32).map(|k| (10 + 5 * k, 5)).collect(),
    };
    for n in [10, 3_000] {
        let moved = |at: i64| sink((0..n).map(move |p| (p, if p == 3 { at } else { 1 })));
        let y = sides(
            side("a.Sink", &moved(1)).map(|s| s.numbered(Numbering::File(file(n).into()))),
            side("a.Sink", &moved(2)).map(|s| s.numbered(Numbering::Into(header))),
        );
        // Entry 3's offset is line 29; the hunk starts three lines before.
        assert_eq!(heads(&unified(&y)), ["@@ -26,7 +26,7 @@"], "{n} partitions");
        assert_eq!(heads(&walk(&y)), ["@@ -26,7 +26,7 @@"], "{n} partitions");
    }
    // A hand-written entry on one line (line 25): the lines shown of it are numbered 25.
    let mut hand = file(10);
    hand.entries[3] = (25, 1);
    let y = sides(
        side("a.Sink", &sink((0..10).map(|p| (p, 1))))
            .map(|s| s.numbered(Numbering::File(hand.into()))),
        side("a.Sink", &sink((0..10).map(|p| (p, i64::from(p == 3) + 1)))),
    );
    assert_eq!(heads(&unified(&y)), ["@@ -25,7 +20,7 @@"]);
    // A class changed: the hunk starts at the class's line.
    let y = sides(
        side("a.Sink", &sink([(0, 1)])).map(|s| s.numbered(Numbering::File(file(1).into()))),
        side("b.Sink", &sink([(0, 1)])).map(|s| s.numbered(Numbering::Into(header))),
    );
    assert_eq!(heads(&unified(&y)), ["@@ -6,4 +6,4 @@"]);
}

#[test]
fn an_insertion_after_an_equal_line_is_placed_after_it() {
    // `similar` gives the insertion of partition p5's second item the old index of the
    // equal line before it; counted from the lengths, it is one line further, and the six
    // equal lines before the next change keep both changes in one hunk, as `diff -u` does.
    let old = [
        (11, 2, 0, 0),
        (11, 1, 0, 0),
        (7, 0, 0, 0),
        (6, 2, 0, 2),
        (7, 0, 0, 0),
    ];
    let new = [
        (0, 0, 0, 2),
        (10, 0, 0, 0),
        (5, 2, 0, 0),
        (7, 0, 0, 0),
        (0, 0, 0, 1),
        (5, 0, 0, 1),
        (10, 0, 0, 0),
        (7, 1, 0, 2),
        (7, 0, 0, 1),
        (0, 3, 0, 1),
    ];
    let make = |e: &[(u8, u8, u8, u8)]| {
        Some(Side::new(
            Some(ConnectorType::Source),
            Some("a.C"),
            &source(e),
        ))
    };
    let y = sides(make(&old), make(&new));
    let got = unified(&y);
    assert_eq!(heads(&got).len(), 1, "{got}");
    assert_eq!(without_heads(&got), without_heads(&plain(&y)));
    assert_counts(&got);
}

/// A diff without its `@@` lines.
fn without_heads(diff: &str) -> Vec<&str> {
    diff.lines().filter(|l| !l.starts_with("@@")).collect()
}

/// Each hunk's `@@ -a,b +c,d @@` counts the lines it shows: `b` its context and `-` lines,
/// `d` its context and `+` lines.
fn assert_counts(diff: &str) {
    let count = |r: &str| {
        r.split_once(',')
            .map_or(1, |(_, n)| n.parse::<usize>().unwrap())
    };
    let mut hunks: Vec<[usize; 4]> = Vec::new();
    for l in diff.lines().skip(2) {
        if let Some(head) = l.strip_prefix("@@ -") {
            let (old, rest) = head.split_once(" +").unwrap();
            let new = rest.strip_suffix(" @@").unwrap();
            hunks.push([count(old), count(new), 0, 0]);
            continue;
        }
        let h = hunks.last_mut().unwrap();
        match l.as_bytes()[0] {
            b' ' => (h[2], h[3]) = (h[2] + 1, h[3] + 1),
            b'-' => h[2] += 1,
            b'+' => h[3] += 1,
            _ => {}
        }
    }
    for h in hunks {
        assert_eq!((h[0], h[1]), (h[2], h[3]), "{diff}");
    }
}
