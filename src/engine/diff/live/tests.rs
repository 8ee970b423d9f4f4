use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::client::ConnectorListing;
use crate::compare::Direction;
use crate::engine::diff::{Class, ConnectorDiff, DiffReport, Mode, PartitionKind, Sides, Status};
use crate::engine::testkit;
use crate::fake::{FakeConnect, State};
use crate::model::file::{Metadata, OffsetsFile};
use crate::model::ConnectorState;
use crate::model::ConnectorType;

fn entries(v: serde_json::Value) -> Vec<OffsetEntry> {
    serde_json::from_value(v).unwrap()
}

fn sink(p: i64, o: i64) -> serde_json::Value {
    json!({"partition":{"kafka_topic":"t","kafka_partition":p},"offset":{"kafka_offset":o}})
}

fn file(name: &str, kind: ConnectorType, class: &str, offsets: Vec<OffsetEntry>) -> LoadedFile {
    let metadata = Metadata {
        connector_class: Some(class.into()),
        state: Some(ConnectorState::Running),
        ..Metadata::new(name, "a", kind)
    };
    let f = OffsetsFile::new(metadata, offsets, None);
    testkit::loaded(&format!("/w/snapshots/a/{name}.yaml"), f)
}

fn listing(name: &str, kind: &str, class: &str, state: &str) -> ConnectorListing {
    ConnectorListing::from_json(
        name,
        &json!({
            "status": {"name":name,"connector":{"state":state},"tasks":[],"type":kind},
            "info": {"name":name,"config":{"connector.class":class},"tasks":[],"type":kind}
        }),
    )
    .unwrap()
}

fn run(
    f: Option<&LoadedFile>,
    l: Option<&ConnectorListing>,
    live: &[OffsetEntry],
) -> ConnectorDiff {
    classify(
        "c",
        f,
        l.map(|l| (l, live)),
        None,
        "a",
        std::path::Path::new("/w"),
    )
}

#[test]
fn running_sink_ahead_and_new_partitions_are_advanced() {
    let f = file(
        "c",
        ConnectorType::Sink,
        "K",
        entries(json!([sink(0, 100), sink(1, 50)])),
    );
    let l = listing("c", "sink", "K", "RUNNING");
    let live = entries(json!([sink(0, 130), sink(1, 50), sink(2, 7)]));
    let d = run(Some(&f), Some(&l), &live);
    assert_eq!(d.status, Status::Advanced);
    assert_eq!(d.file.as_deref(), Some("snapshots/a/c.yaml"));
    assert_eq!(d.partitions.len(), 2);
    let p0 = &d.partitions[0];
    assert_eq!(
        (p0.kind(), p0.direction, p0.distance, p0.class),
        (
            PartitionKind::Moved,
            Some(Direction::Forward),
            Some(30),
            Some(Class::Advanced)
        )
    );
    assert_eq!(p0.unit.as_deref(), Some("records"));
    assert_eq!(d.partitions[1].kind(), PartitionKind::OnlyWanted);
    assert_eq!(d.partitions[1].class, Some(Class::Advanced));
    assert_eq!(d.counts.unchanged, 1);
    assert!(!d.status.counts(ExitOn::Drift));
    assert!(d.status.counts(ExitOn::Any));
}

#[test]
fn same_changes_on_a_stopped_connector_are_drift() {
    // Its file records it STOPPED: it cannot have run on since.
    let mut f = file(
        "c",
        ConnectorType::Sink,
        "K",
        entries(json!([sink(0, 100)])),
    );
    f.file.metadata.state = Some(ConnectorState::Stopped);
    let l = listing("c", "sink", "K", "STOPPED");
    let d = run(
        Some(&f),
        Some(&l),
        &entries(json!([sink(0, 130), sink(2, 7)])),
    );
    assert_eq!(d.status, Status::Drifted);
    assert!(d.partitions.iter().all(|p| p.class == Some(Class::Drift)));
}

#[test]
fn running_but_behind_or_missing_partition_is_drift() {
    let f = file(
        "c",
        ConnectorType::Sink,
        "K",
        entries(json!([sink(0, 100), sink(1, 5)])),
    );
    let l = listing("c", "sink", "K", "RUNNING");
    let d = run(Some(&f), Some(&l), &entries(json!([sink(0, 40)])));
    assert_eq!(d.status, Status::Drifted);
    let p0 = &d.partitions[0];
    assert_eq!(
        (p0.direction, p0.distance, p0.class),
        (Some(Direction::Backward), Some(60), Some(Class::Drift))
    );
    assert_eq!(d.partitions[1].kind(), PartitionKind::OnlyActual);
    assert_eq!(d.partitions[1].class, Some(Class::Drift));
}

#[test]
fn unordered_source_change_is_drift_with_both_values() {
    let part = json!({"db":"x"});
    let f = file(
        "c",
        ConnectorType::Source,
        "S",
        entries(json!([{"partition":part,"offset":{"token":"a","ts":1}}])),
    );
    let l = listing("c", "source", "S", "RUNNING");
    let d = run(
        Some(&f),
        Some(&l),
        &entries(json!([{"partition":part,"offset":{"token":"b","ts":2}}])),
    );
    assert_eq!(d.status, Status::Drifted);
    let p = &d.partitions[0];
    assert_eq!(p.direction, None);
    match &p.offsets {
        Sides::Live {
            file_offset,
            live_offset,
            ..
        } => {
            assert_eq!(file_offset.as_ref().unwrap()["token"], "a");
            assert_eq!(live_offset.as_ref().unwrap()["token"], "b");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn type_and_class_changes_and_in_sync() {
    let f = file("c", ConnectorType::Sink, "K", entries(json!([sink(0, 1)])));
    let d = run(Some(&f), Some(&listing("c", "source", "K", "RUNNING")), &[]);
    assert_eq!(d.status, Status::TypeChanged);
    assert_eq!(d.notes[0], "type changed from sink to source");
    let d = run(
        Some(&f),
        Some(&listing("c", "sink", "K2", "RUNNING")),
        &entries(json!([sink(0, 1)])),
    );
    assert_eq!(d.status, Status::ClassChanged);
    let d = run(
        Some(&f),
        Some(&listing("c", "sink", "K", "RUNNING")),
        &entries(json!([sink(0, 1)])),
    );
    assert_eq!(d.status, Status::InSync);
    assert!(d.yaml.is_none());
}

#[test]
fn a_connector_paused_or_stopped_outside_kco_is_a_routine_state_not_drift() {
    let f = file("c", ConnectorType::Sink, "K", entries(json!([sink(0, 1)])));
    for live in ["STOPPED", "PAUSED"] {
        let d = run(
            Some(&f),
            Some(&listing("c", "sink", "K", live)),
            &entries(json!([sink(0, 1)])),
        );
        assert_eq!(d.status, Status::StateChanged, "{live}");
        assert!(
            d.notes[0].contains(&format!("live state {live}")),
            "{:?}",
            d.notes
        );
        assert!(!d.status.counts(ExitOn::Drift), "the nightly passes");
        assert!(d.status.counts(ExitOn::Any));
    }
    // Ahead of a file that records it RUNNING: it ran on, then was paused or stopped; routine.
    for live in ["STOPPED", "PAUSED"] {
        let d = run(
            Some(&f),
            Some(&listing("c", "sink", "K", live)),
            &entries(json!([sink(0, 7)])),
        );
        assert_eq!(d.status, Status::StateChanged, "{live}");
        assert_eq!(d.partitions[0].class, Some(Class::Advanced), "{live}");
        assert!(!d.status.counts(ExitOn::Drift), "the nightly passes");
    }
    // Offsets that also drifted (behind the file) stay `drifted`, with the state noted.
    let behind = file("c", ConnectorType::Sink, "K", entries(json!([sink(0, 9)])));
    let d = run(
        Some(&behind),
        Some(&listing("c", "sink", "K", "STOPPED")),
        &entries(json!([sink(0, 7)])),
    );
    assert_eq!(d.status, Status::Drifted);
    assert!(
        d.notes.iter().any(|n| n.contains("records RUNNING")),
        "{:?}",
        d.notes
    );
    // A file that records STOPPED is in sync with a stopped connector.
    let mut stopped = f.clone();
    stopped.file.metadata.state = Some(ConnectorState::Stopped);
    let d = run(
        Some(&stopped),
        Some(&listing("c", "sink", "K", "STOPPED")),
        &entries(json!([sink(0, 1)])),
    );
    assert_eq!(d.status, Status::InSync);
}

#[test]
fn missing_and_untracked() {
    let f = file("c", ConnectorType::Sink, "K", entries(json!([sink(0, 1)])));
    let d = run(Some(&f), None, &[]);
    assert_eq!(d.status, Status::Missing);
    assert!(d.yaml.as_ref().unwrap().new.is_none());
    let l = listing("c", "sink", "K", "STOPPED");
    let d = run(None, Some(&l), &entries(json!([sink(0, 1)])));
    assert_eq!(d.status, Status::Untracked);
    assert_eq!(d.connector_type, Some(ConnectorType::Sink));
}

/// Every request so far, as `METHOD path`.
fn calls(fake: &FakeConnect) -> Vec<String> {
    let requests = fake.requests().into_iter();
    requests
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn the_files_connectors_are_read_while_the_cluster_is_listed_and_the_listings_error_wins() {
    // The listing answers late, with an error: the file's connector was read meanwhile (one
    // after the other, nothing would be read), and the diff fails with the listing's error.
    let fake = FakeConnect::builder()
        .sink("c", "KSink", State::Running, json!([sink(0, 1)]))
        .in_process();
    let listing = crate::fake::Fault::on("GET", "/connectors?*");
    fake.fault(listing.delay_ms(500).respond(500, "listing broke"));
    let files = vec![file(
        "c",
        ConnectorType::Sink,
        "KSink",
        entries(json!([sink(0, 1)])),
    )];
    let e = diff_live(&fake.client(), testkit::live_input(&files, "a")).unwrap_err();
    assert!(e.to_string().contains("listing connectors"), "{e}");
    assert!(
        calls(&fake).contains(&"GET /connectors/c/offsets".to_string()),
        "{:?}",
        calls(&fake)
    );
}

#[test]
fn whole_dir_reports_untracked_and_reads_each_connector_once() {
    let fake = FakeConnect::builder()
        .sink("c", "KSink", State::Running, json!([sink(0, 1)]))
        .sink("extra", "KSink", State::Running, json!([sink(0, 1)]))
        .in_process();
    let files = vec![
        file(
            "c",
            ConnectorType::Sink,
            "KSink",
            entries(json!([sink(0, 1)])),
        ),
        file(
            "gone",
            ConnectorType::Sink,
            "KSink",
            entries(json!([sink(0, 1)])),
        ),
    ];
    let input = |whole_dir| LiveInput {
        whole_dir,
        parallel: 4,
        ..testkit::live_input(&files, "a")
    };
    let r = diff_live(&fake.client(), input(true)).unwrap();
    assert_eq!(
        testkit::statuses(&r),
        vec![
            ("c", Status::InSync),
            ("extra", Status::Untracked),
            ("gone", Status::Missing)
        ]
    );
    assert_eq!(r.exit_code, 2);
    assert_eq!(r.summary.differences, 2);
    // Each connector read once: the files' beside the listing (`gone`'s read answers 404
    // and counts for nothing: the listing says it is missing), then the untracked one.
    let mut calls = calls(&fake);
    calls.sort();
    assert_eq!(
        calls,
        vec![
            "GET /",
            "GET /connectors/c/offsets",
            "GET /connectors/extra/offsets",
            "GET /connectors/gone/offsets",
            "GET /connectors?expand=status&expand=info",
        ]
    );
    fake.clear_requests();
    let r = diff_live(&fake.client(), input(false)).unwrap();
    fake.assert_no_mutations();
    assert_eq!(r.connectors.len(), 2, "no untracked with explicit files");
}

#[test]
fn two_files_for_one_connector_fail_before_any_request() {
    let fake = FakeConnect::builder().in_process();
    let mut other = file("c", ConnectorType::Sink, "K", Vec::new());
    other.path = PathBuf::from("/w/snapshots/b/c.yaml");
    let files = vec![file("c", ConnectorType::Sink, "K", Vec::new()), other];
    let e = diff_live(
        &fake.client(),
        LiveInput {
            parallel: 1,
            ..testkit::live_input(&files, "a")
        },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("/w/snapshots/b/c.yaml: connector `c` is also in /w/snapshots/a/c.yaml"),
        "{e}"
    );
    assert!(fake.requests().is_empty());
}

#[test]
fn a_state_change_under_a_held_lock_is_state_drift() {
    let f = file("c", ConnectorType::Sink, "K", entries(json!([sink(0, 1)])));
    let d = run(
        Some(&f),
        Some(&listing("c", "sink", "K", "STOPPED")),
        &entries(json!([sink(0, 1)])),
    );
    let mut report = DiffReport::new(Mode::Live, ExitOn::Drift, Some("a".into()), None, vec![d]);
    assert_eq!(report.exit_code, 0);
    assert!(report.has_state_changes());
    report.state_left_by("refs/kco/locks/a on git remote `origin`, pid 7 on runner-1");
    assert_eq!(report.connectors[0].status, Status::StateDrifted);
    assert!(report.connectors[0].notes[1].contains("pid 7 on runner-1"));
    assert_eq!(report.summary.statuses["state_drifted"], 1);
    assert_eq!(report.summary.statuses["state_changed"], 0);
    assert_eq!(report.exit_code, 2);
}

#[test]
fn a_drifted_connector_left_stopped_under_a_held_lock_names_the_lock() {
    // Stopped behind its file (a rewind patched, then the runner killed): drifted whatever
    // the lock; the held lock is named all the same, as what may have left it stopped.
    let f = file("c", ConnectorType::Sink, "K", entries(json!([sink(0, 5)])));
    let d = run(
        Some(&f),
        Some(&listing("c", "sink", "K", "STOPPED")),
        &entries(json!([sink(0, 1)])),
    );
    assert_eq!(d.status, Status::Drifted, "{d:?}");
    let mut report = DiffReport::new(Mode::Live, ExitOn::Drift, Some("a".into()), None, vec![d]);
    assert!(report.has_state_changes());
    report.state_left_by("refs/kco/locks/a on git remote `origin`, pid 7 on runner-1");
    let c = &report.connectors[0];
    assert_eq!(c.status, Status::Drifted);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("pid 7 on runner-1") && n.contains("`kco recover`")),
        "{:?}",
        c.notes
    );
    assert_eq!(report.exit_code, 2);
}
