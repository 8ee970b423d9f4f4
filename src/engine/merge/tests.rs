use std::path::Path;

use serde_json::json;

use super::*;
use crate::model::file::Metadata;
use crate::model::{ConnectorType, OffsetEntry};

const NIGHT0: &str = "2026-12-01T02:00:00Z";
const NIGHT1: &str = "2026-12-02T02:00:00Z";
const NIGHT2: &str = "2026-12-03T02:00:00Z";

/// A sink's file captured at `at`, `offsets` on partitions 0, 1, 2 of `t`.
fn sink(at: &str, offsets: &[i64]) -> OffsetsFile {
    let mut m = Metadata::new("orders-sink", "a", ConnectorType::Sink);
    m.captured_at = Some(at.into());
    let entries = offsets
        .iter()
        .enumerate()
        .map(|(p, o)| OffsetEntry::sink("t", p as i64, *o))
        .collect();
    OffsetsFile::new(m, entries, None)
}

/// The same file with partition `p` set to `offset` (or removed), re-sealed as `kco fmt`
/// does: the metadata untouched.
fn edited(f: &OffsetsFile, p: i64, offset: Option<i64>) -> OffsetsFile {
    let mut f = f.clone();
    f.offsets
        .retain(|e| e.partition.get("kafka_partition") != Some(&json!(p)));
    if let Some(o) = offset {
        f.offsets.push(OffsetEntry::sink("t", p, o));
    }
    f.seal();
    f
}

fn text(f: &OffsetsFile) -> String {
    f.render(crate::model::file::DEFAULT_SCHEMA_REF)
}

fn run(base: &OffsetsFile, ours: &OffsetsFile, theirs: &OffsetsFile) -> (Merged, OffsetsFile) {
    let m = merge(Path::new("f.yaml"), &text(base), &text(ours), &text(theirs)).unwrap();
    assert!(!m.conflicted(), "{}", m.text);
    let f = OffsetsFile::parse(Path::new("f.yaml"), &m.text).unwrap();
    assert!(f.is_sealed(), "re-sealed");
    assert!(f.is_canonical_text(&m.text), "{}", m.text);
    (m, f)
}

fn offsets(f: &OffsetsFile) -> Vec<(i64, i64)> {
    f.offsets
        .iter()
        .map(|e| {
            (
                e.partition
                    .get("kafka_partition")
                    .unwrap()
                    .as_i64()
                    .unwrap(),
                e.offset.get("kafka_offset").unwrap().as_i64().unwrap(),
            )
        })
        .collect()
}

fn decisions(m: &Merged) -> &[Decision] {
    match &m.how {
        How::Merged { decisions, .. } => decisions,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_change_on_one_side_only_is_taken() {
    let base = sink(NIGHT0, &[900, 900, 900]);
    let pr = edited(&base, 0, Some(800));
    let (m, f) = run(&base, &pr, &base);
    assert_eq!(offsets(&f), [(0, 800), (1, 900), (2, 900)]);
    assert!(decisions(&m).is_empty());
    let (_, f) = run(&base, &base, &pr);
    assert_eq!(offsets(&f), [(0, 800), (1, 900), (2, 900)]);
}

#[test]
fn the_same_change_on_both_sides_is_taken_once() {
    let base = sink(NIGHT0, &[900, 900, 900]);
    let pr = edited(&base, 0, Some(800));
    let (m, f) = run(&base, &pr, &pr);
    assert_eq!(offsets(&f), [(0, 800), (1, 900), (2, 900)]);
    assert!(decisions(&m).is_empty());
    assert_eq!(f.metadata.captured_at.as_deref(), Some(NIGHT0));
}

#[test]
fn a_deliberate_change_wins_over_a_snapshot_whichever_side_it_is_on() {
    let base = sink(NIGHT0, &[900, 900, 900]);
    let pr = edited(&base, 0, Some(800));
    let mut nightly = sink(NIGHT1, &[1000, 1003, 1006]);
    nightly.metadata.connect_version = Some("4.1.0".into());
    nightly.seal();
    for (ours, theirs, kept) in [(&pr, &nightly, Side::Ours), (&nightly, &pr, Side::Theirs)] {
        let (m, f) = run(&base, ours, theirs);
        // The rewound partition as the PR has it; the others as the snapshot saw them.
        assert_eq!(offsets(&f), [(0, 800), (1, 1003), (2, 1006)]);
        // The metadata is the snapshot's: a later merge from the same base still tells
        // the PR's side for a deliberate one.
        assert_eq!(f.metadata.captured_at.as_deref(), Some(NIGHT1));
        assert_eq!(f.metadata.connect_version.as_deref(), Some("4.1.0"));
        let d = decisions(&m);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].kept, kept);
        assert_eq!(
            crate::model::sink_partition(&d[0].partition),
            Some(("t", 0))
        );
        assert_eq!(
            d[0].kept_offset,
            Some(OffsetEntry::sink("t", 0, 800).offset)
        );
        assert_eq!(d[0].observed, Some(OffsetEntry::sink("t", 0, 1000).offset));
        assert_eq!(d[0].observed_at.as_deref(), Some(NIGHT1));
    }
}

#[test]
fn the_result_merges_again_with_the_next_snapshot() {
    // PR merged main's first nightly; main then took a second nightly: the merge base is
    // the first nightly, and the PR's merged file still reads as a deliberate change.
    let base = sink(NIGHT0, &[900, 900, 900]);
    let pr = edited(&base, 0, Some(800));
    let nightly1 = sink(NIGHT1, &[1000, 1003, 1006]);
    let (_, merged) = run(&base, &pr, &nightly1);
    let nightly2 = sink(NIGHT2, &[1010, 1013, 1016]);
    let (m, f) = run(&nightly1, &merged, &nightly2);
    assert_eq!(offsets(&f), [(0, 800), (1, 1013), (2, 1016)]);
    assert_eq!(decisions(&m).len(), 1);
}

#[test]
fn two_deliberate_changes_of_one_partition_are_a_conflict_between_markers() {
    let base = sink(NIGHT0, &[900, 900, 900]);
    let ours = edited(&edited(&base, 0, Some(800)), 2, Some(950));
    let theirs = edited(&edited(&base, 0, Some(700)), 1, Some(990));
    let m = merge(
        Path::new("f.yaml"),
        &text(&base),
        &text(&ours),
        &text(&theirs),
    )
    .unwrap();
    assert!(m.conflicted());
    match &m.how {
        How::Merged { conflicts, .. } => {
            assert_eq!(conflicts.len(), 1, "{conflicts:?}");
            assert!(matches!(&conflicts[0], Conflict::Partition(p)
                if crate::model::sink_partition(p) == Some(("t", 0))));
        }
        other => panic!("{other:?}"),
    }
    // The markers stand around partition 0's offset alone; the rest is merged.
    let t = &m.text;
    let open = t.find("<<<<<<< ours\n").expect(t);
    let mid = t.find("\n=======\n").expect(t);
    let close = t.find(">>>>>>> theirs\n").expect(t);
    assert!(open < mid && mid < close, "{t}");
    assert!(t[open..mid].contains("kafka_offset: 800"), "{t}");
    assert!(t[mid..close].contains("kafka_offset: 700"), "{t}");
    assert_eq!(t.matches("<<<<<<<").count(), 1, "{t}");
    assert!(
        t.contains("kafka_offset: 990") && t.contains("kafka_offset: 950"),
        "{t}"
    );
    // The loader says what it is.
    let problem = OffsetsFile::parse(Path::new("f.yaml"), t).unwrap_err();
    assert_eq!(problem.kind, crate::model::file::ProblemKind::MergeConflict);
    // Taking ours' side gives a valid file once re-sealed.
    let resolved: String = {
        let mut keep = true;
        let mut out = String::new();
        for line in t.lines() {
            if line.starts_with("<<<<<<<") || line.starts_with(">>>>>>>") {
                keep = true;
            } else if line == "=======" {
                keep = false;
            } else if keep {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    };
    let mut f = OffsetsFile::parse(Path::new("f.yaml"), &resolved).unwrap();
    f.seal();
    assert_eq!(offsets(&f), [(0, 800), (1, 990), (2, 950)]);
}

#[test]
fn added_and_removed_partitions_follow_the_same_rules() {
    let base = sink(NIGHT0, &[900, 900]);
    // The PR removes partition 1; the nightly advances it and sees a new partition 2.
    let pr = edited(&base, 1, None);
    let nightly = sink(NIGHT1, &[1000, 1003, 5]);
    let (m, f) = run(&base, &pr, &nightly);
    assert_eq!(offsets(&f), [(0, 1000), (2, 5)]);
    let d = decisions(&m);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].kept, d[0].kept_offset.clone()), (Side::Ours, None));
    // The PR adds partition 3 by hand: kept beside the nightly's advance.
    let pr = edited(&base, 3, Some(42));
    let (m, f) = run(&base, &nightly, &pr);
    assert_eq!(offsets(&f), [(0, 1000), (1, 1003), (2, 5), (3, 42)]);
    assert!(decisions(&m).is_empty());
}

#[test]
fn of_two_snapshots_the_newer_is_the_file() {
    let base = sink(NIGHT0, &[900, 900, 900]);
    let older = sink(NIGHT1, &[1000, 1000, 1000]);
    let newer = sink(NIGHT2, &[1100, 1100]);
    for (o, t, kept) in [(&older, &newer, Side::Theirs), (&newer, &older, Side::Ours)] {
        let (m, f) = run(&base, o, t);
        assert_eq!(offsets(&f), [(0, 1100), (1, 1100)]);
        assert_eq!(
            m.how,
            How::NewerSnapshot {
                kept,
                captured_at: Some(NIGHT2.into())
            }
        );
    }
}

/// A Debezium-like source: partitions and offsets are maps of their own.
fn source(at: &str, config: Option<&[(&str, &str)]>, entries: &[(&str, i64)]) -> OffsetsFile {
    let mut m = Metadata::new("pg-src", "a", ConnectorType::Source);
    m.captured_at = Some(at.into());
    m.connector_class = Some("io.debezium.connector.postgresql.PostgresConnector".into());
    let entries = entries
        .iter()
        .map(|(server, lsn)| OffsetEntry {
            partition: json!({"server": server})
                .as_object()
                .unwrap()
                .clone()
                .into(),
            offset: json!({"lsn": lsn, "txId": 7, "ts_usec": 1})
                .as_object()
                .unwrap()
                .clone()
                .into(),
        })
        .collect();
    let config = config.map(|c| {
        c.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    });
    OffsetsFile::new(m, entries, config)
}

#[test]
fn a_source_connector_with_map_partitions_merges_by_partition_and_config_by_key() {
    let cfg: &[(&str, &str)] = &[("slot.name", "s1"), ("tasks.max", "1")];
    let base = source(NIGHT0, Some(cfg), &[("pg1", 100), ("pg2", 200)]);
    // The PR rewinds pg2 and changes a config key by hand.
    let mut pr = source(NIGHT0, Some(cfg), &[("pg1", 100), ("pg2", 150)]);
    pr.config
        .as_mut()
        .unwrap()
        .insert("tasks.max".into(), "2".into());
    pr.seal();
    let nightly = source(NIGHT1, Some(cfg), &[("pg1", 300), ("pg2", 400)]);
    let (m, f) = run(&base, &nightly, &pr);
    let lsn = |f: &OffsetsFile| -> Vec<(String, i64)> {
        f.offsets
            .iter()
            .map(|e| {
                (
                    e.partition
                        .get("server")
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_string(),
                    e.offset.get("lsn").unwrap().as_i64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(lsn(&f), [("pg1".into(), 300), ("pg2".into(), 150)]);
    assert_eq!(f.config.as_ref().unwrap()["tasks.max"], "2");
    assert_eq!(f.metadata.captured_at.as_deref(), Some(NIGHT1));
    let d = decisions(&m);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].kept, Side::Theirs);
    assert_eq!(d[0].partition.get("server"), Some(&json!("pg2")));
}

#[test]
fn a_version_kco_cannot_read_is_merged_as_text_and_said_why() {
    let base = sink(NIGHT0, &[900]);
    let ours = edited(&base, 0, Some(800));
    // An unsealed hand edit: re-sealing it here would hide it.
    let theirs = text(&base).replace("kafka_offset: 900", "kafka_offset: 901");
    let m = merge(Path::new("f.yaml"), &text(&base), &text(&ours), &theirs).unwrap();
    match &m.how {
        How::AsText { why, conflicted } => {
            assert_eq!(why.kind, crate::model::file::ProblemKind::ChecksumMismatch);
            assert!(
                why.message.starts_with("their version: checksum mismatch"),
                "{why}"
            );
            assert!(*conflicted);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        m.conflicted() && m.text.contains("<<<<<<< ours"),
        "{}",
        m.text
    );
}

#[test]
fn a_conflict_on_the_last_line_merges_as_text() {
    // libgit2's merge_file does not initialise the library itself; a first call in a
    // process must still work.
    assert_eq!(
        merge_text("a\nb\n", "a\nx\n", "a\ny\n").unwrap(),
        (
            "a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n".to_string(),
            true
        )
    );
}

#[test]
fn a_forward_change_whose_target_the_snapshot_passed_keeps_the_snapshot() {
    // The revert of an applied rewind (`git revert -m 1` of its merge): the ancestor is the
    // merge (clicks/0 rewound to 350), their side the version before it (555: a deliberate
    // change back, forward from 350), ours the snapshot taken since (602: live moved on).
    let before = sink(NIGHT0, &[555, 900, 900]);
    let merged = edited(&before, 0, Some(350));
    let nightly = sink(NIGHT1, &[602, 1003, 1006]);
    for (ours, theirs, side) in [
        (&nightly, &before, Side::Theirs),
        (&before, &nightly, Side::Ours),
    ] {
        let (m, f) = run(&merged, ours, theirs);
        assert_eq!(offsets(&f), [(0, 602), (1, 1003), (2, 1006)], "{}", m.text);
        assert_eq!(f.metadata.captured_at.as_deref(), Some(NIGHT1));
        let d = decisions(&m);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].passed, "{d:?}");
        assert_eq!(d[0].kept, side);
        assert_eq!(
            d[0].kept_offset,
            Some(OffsetEntry::sink("t", 0, 555).offset)
        );
        assert_eq!(d[0].observed, Some(OffsetEntry::sink("t", 0, 602).offset));
    }
    // The snapshot not yet past the change's target: the change wins, as before.
    let behind = sink(NIGHT1, &[500, 1003, 1006]);
    let (m, f) = run(&merged, &behind, &before);
    assert_eq!(offsets(&f), [(0, 555), (1, 1003), (2, 1006)]);
    assert!(!decisions(&m)[0].passed);
    // A rewind is exact wherever the snapshot is.
    let rewind = edited(&before, 0, Some(300));
    let (m, f) = run(&before, &nightly, &rewind);
    assert_eq!(offsets(&f), [(0, 300), (1, 1003), (2, 1006)]);
    assert!(!decisions(&m)[0].passed);
}
