use serde_json::json;

use super::*;
use crate::engine::diff::side_yaml;
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

fn yaml(class: &str, entries: &[OffsetEntry]) -> String {
    side_yaml(Some(ConnectorType::Sink), Some(class), entries)
}

fn plain(old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header("file", "live")
        .to_string()
}

fn paired(old: &str, new: &str) -> String {
    let (a, b) = (lines(old), lines(new));
    render("file", "live", &a, &b, paired_ops(&a, &b))
}

/// The old and the new text, read back from the edit operations.
fn replay(old: &str, new: &str) -> (String, String) {
    let (a, b) = (lines(old), lines(new));
    let (mut x, mut y) = (String::new(), String::new());
    for op in paired_ops(&a, &b) {
        match op {
            DiffOp::Equal { .. } => {
                x.extend(a[op.old_range()].iter().copied());
                y.extend(b[op.new_range()].iter().copied());
            }
            DiffOp::Delete { .. } => x.extend(a[op.old_range()].iter().copied()),
            DiffOp::Insert { .. } => y.extend(b[op.new_range()].iter().copied()),
            DiffOp::Replace { .. } => panic!("no replace expected"),
        }
    }
    (x, y)
}

#[test]
fn moved_partitions_give_the_same_diff_as_a_plain_line_diff() {
    let old = yaml("a.Sink", &sink((0..300).map(|p| (p, 100))));
    let new = yaml(
        "b.Sink",
        &sink((0..300).map(|p| (p, if p % 7 == 0 { 150 } else { 100 }))),
    );
    let got = paired(&old, &new);
    assert_eq!(got, plain(&old, &new));
    assert_eq!(got.matches("\n+    kafka_offset: 150").count(), 43);
    assert!(got.contains("-connectorClass: a.Sink\n+connectorClass: b.Sink\n"));
}

#[test]
fn added_and_removed_partitions_are_whole_items_and_the_texts_replay() {
    let old = yaml(
        "a.Sink",
        &sink((0..200).filter(|p| p % 5 != 0).map(|p| (p, 1))),
    );
    let new = yaml(
        "a.Sink",
        &sink((0..200).filter(|p| p % 3 != 0).map(|p| (p, 2))),
    );
    assert_eq!(replay(&old, &new), (old.clone(), new.clone()));
    let got = paired(&old, &new);
    // Partition 3 (topic t0, partition 3) is only in the file: its whole item is removed.
    assert!(got.contains(
        "-- partition:\n-    kafka_partition: 3\n-    kafka_topic: t0\n-  offset:\n-    kafka_offset: 1\n"
    ));
    // Partition 5 is only live.
    assert!(got.contains(
        "+- partition:\n+    kafka_partition: 5\n+    kafka_topic: t0\n+  offset:\n+    kafka_offset: 2\n"
    ));
    let removed = got
        .lines()
        .filter(|l| l.starts_with("-- partition:"))
        .count();
    let added = got
        .lines()
        .filter(|l| l.starts_with("+- partition:"))
        .count();
    // Multiples of 3 but not of 15, multiples of 5 but not of 15.
    assert_eq!((removed, added), (53, 26));
}

#[test]
fn one_side_empty_and_equal_sides() {
    let text = yaml("a.Sink", &sink((0..50).map(|p| (p, 1))));
    assert_eq!(paired("", &text), plain("", &text));
    assert_eq!(paired(&text, ""), plain(&text, ""));
    assert_eq!(paired(&text, &text), "");
}

#[test]
fn above_the_threshold_every_moved_partition_is_one_line_pair() {
    let old = yaml("a.Sink", &sink((0..20_000).map(|p| (p, 7))));
    let new = yaml("a.Sink", &sink((0..20_000).map(|p| (p, 8))));
    let got = unified("file", &old, "live", &new);
    assert_eq!(got.matches("\n-    kafka_offset: 7\n").count(), 20_000);
    assert_eq!(got.matches("\n+    kafka_offset: 8\n").count(), 20_000);
    assert!(got.starts_with("--- file\n+++ live\n@@ -"));
}

#[test]
fn values_are_spelled_as_the_snapshot_file_spells_them() {
    // Scalars that YAML 1.1 readers take for booleans and dates, and a float without a dot:
    // the diff shows them as the file has them, quoted and with a dot.
    let source = |date: &str| -> Vec<OffsetEntry> {
        vec![serde_json::from_value(json!({
            "partition": {"server": "on"},
            "offset": {"day": "2024-01-01", "lsn": 1e300, "ts": date},
        }))
        .unwrap()]
    };
    let side = |date| side_yaml(Some(ConnectorType::Source), Some("x.Source"), &source(date));
    let got = unified("file", &side("yes"), "live", &side("no"));
    for line in [
        "     day: \"2024-01-01\"",
        "     lsn: 1.0e+300",
        "-    ts: \"yes\"",
        "+    ts: \"no\"",
    ] {
        assert!(got.lines().any(|l| l == line), "{line:?} not in\n{got}");
    }
}

#[test]
fn a_wide_diff_is_handed_on_a_line_at_a_time() {
    let old = yaml("a.Sink", &sink((0..20_000).map(|p| (p, 7))));
    let new = yaml("a.Sink", &sink((0..20_000).map(|p| (p, 8))));
    let mut lines = Vec::new();
    unified_lines("file", &old, "live", &new, &mut |l| {
        lines.push(l.to_string())
    });
    assert!(lines.iter().all(|l| !l.contains('\n')));
    assert_eq!(lines.join("\n") + "\n", unified("file", &old, "live", &new));
    let mut none = 0;
    unified_lines("file", &old, "live", &old, &mut |_| none += 1);
    assert_eq!(none, 0);
}
