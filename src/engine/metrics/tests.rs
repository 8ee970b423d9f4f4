use serde_json::json;

use super::exposition::{read_success, render};
use super::*;
use crate::engine::diff::{diff_live, LiveInput, Status};
use crate::engine::testkit;
use crate::fake::{FakeConnect, State};
use crate::model::file::{Metadata, OffsetsFile};
use crate::model::{ConnectorState, ConnectorType, OffsetEntry};

fn sink(p: i64, o: i64) -> serde_json::Value {
    json!({"partition":{"kafka_topic":"t","kafka_partition":p},"offset":{"kafka_offset":o}})
}

fn file(name: &str, offsets: serde_json::Value) -> crate::engine::LoadedFile {
    let metadata = Metadata {
        connector_class: Some("KSink".into()),
        state: Some(ConnectorState::Running),
        captured_at: Some("2026-01-02T03:04:05Z".into()),
        ..Metadata::new(name, "a", ConnectorType::Sink)
    };
    let offsets: Vec<OffsetEntry> = serde_json::from_value(offsets).unwrap();
    testkit::loaded(
        &format!("/w/snapshots/a/{name}.yaml"),
        OffsetsFile::new(metadata, offsets, None),
    )
}

fn value(m: &Metrics, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    m.samples(name)
        .iter()
        .find(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && lv == v))
        })
        .map(|s| s.value)
}

fn drifted_report() -> (
    crate::engine::diff::DiffReport,
    Vec<crate::engine::LoadedFile>,
) {
    let fake = FakeConnect::builder()
        .sink(
            "back",
            "KSink",
            State::Running,
            json!([sink(0, 40), sink(1, 5)]),
        )
        .sink("same", "KSink", State::Running, json!([sink(0, 7)]))
        .in_process();
    let files = vec![
        file("back", json!([sink(0, 100), sink(1, 5)])),
        file("same", json!([sink(0, 7)])),
        file("gone", json!([sink(0, 1)])),
    ];
    let r = diff_live(
        &fake.client(),
        LiveInput {
            ..testkit::live_input(&files, "a")
        },
    )
    .unwrap();
    (r, files)
}

#[test]
fn a_live_diff_gives_each_connector_its_status_distance_and_capture_time() {
    let (r, files) = drifted_report();
    assert_eq!(
        testkit::statuses(&r),
        [
            ("back", Status::Drifted),
            ("gone", Status::Missing),
            ("same", Status::InSync)
        ]
    );
    let m = diff_metrics(&r, &files, &PartitionSeries::default());
    let st = |c: &str, s: &str| {
        value(
            &m,
            "kco_connector_status",
            &[("connector", c), ("status", s)],
        )
    };
    assert_eq!(st("back", "drifted"), Some(1.0));
    assert_eq!(st("gone", "missing"), Some(1.0));
    assert_eq!(st("same", "in_sync"), Some(1.0));
    assert_eq!(st("same", "drifted"), None);
    let dist = |c: &str, d: &str| {
        value(
            &m,
            "kco_connector_offset_distance",
            &[("connector", c), ("direction", d)],
        )
    };
    assert_eq!(dist("back", "backward"), Some(60.0));
    assert_eq!(dist("back", "forward"), Some(0.0));
    assert_eq!(
        value(&m, "kco_connectors", &[("status", "drifted")]),
        Some(1.0)
    );
    assert_eq!(
        value(&m, "kco_connectors", &[("status", "untracked")]),
        Some(0.0)
    );
    // 2026-01-02T03:04:05Z
    assert_eq!(
        value(
            &m,
            "kco_snapshot_captured_timestamp_seconds",
            &[("connector", "back")]
        ),
        Some(1_767_323_045.0)
    );
    // No per-partition series unless asked for.
    assert!(m.samples("kco_partition_offset_distance").is_empty());
    let m = diff_metrics(
        &r,
        &files,
        &PartitionSeries {
            connectors: vec!["back".into()],
        },
    );
    assert_eq!(
        value(
            &m,
            "kco_partition_offset_distance",
            &[("connector", "back"), ("partition", "t/0")]
        ),
        Some(60.0)
    );
}

#[test]
fn the_text_has_help_type_escaped_labels_and_ends_with_eof() {
    let mut m = Metrics::default();
    m.add(
        Def {
            name: "kco_b",
            help: "B \\ help",
        },
        vec![("connector", "a\"b\\c\nd".into())],
        1.5,
    );
    m.add(
        Def {
            name: "kco_a",
            help: "A",
        },
        vec![],
        1_767_323_045.0,
    );
    assert_eq!(
        render(&m),
        "# HELP kco_a A\n# TYPE kco_a gauge\nkco_a 1767323045\n\
         # HELP kco_b B \\\\ help\n# TYPE kco_b gauge\nkco_b{connector=\"a\\\"b\\\\c\\nd\"} 1.5\n# EOF\n"
    );
}

fn run(outcome: Outcome, previous: Vec<Sample>) -> Metrics {
    let mut m = Metrics::default();
    run_metrics(
        &mut m,
        RunInfo {
            cluster: "a",
            command: "diff",
            outcome,
            ended_unix: 2000.0,
            duration_seconds: 0.25,
            previous_success: previous,
        },
    );
    m
}

#[test]
fn a_failed_run_repeats_the_success_it_reads_back_and_never_claims_its_own() {
    let ok = render(&run(Outcome::Succeeded, vec![]));
    assert!(
        ok.contains("kco_last_success_timestamp_seconds{cluster=\"a\",command=\"diff\"} 2000\n")
    );
    assert!(ok.contains("kco_run_failed{cluster=\"a\",command=\"diff\"} 0\n"));
    // A later failure: the old file's success, read back, is what the new text says.
    let mut earlier = read_success(&ok.replace(" 2000\n", " 1000\n"));
    assert_eq!(earlier.len(), 1);
    assert_eq!(earlier[0].value, 1000.0);
    // Another command's success (a shared file) is not this one's.
    earlier.push(Sample {
        labels: vec![("cluster", "a".into()), ("command", "snapshot".into())],
        value: 1500.0,
    });
    let failed = render(&run(
        Outcome::Failed {
            kind: "client".into(),
        },
        earlier,
    ));
    assert!(
        failed
            .contains("kco_last_success_timestamp_seconds{cluster=\"a\",command=\"diff\"} 1000\n"),
        "{failed}"
    );
    assert!(!failed.contains("1500"), "{failed}");
    assert!(failed.contains("kco_run_failed{cluster=\"a\",command=\"diff\"} 1\n"));
    assert!(failed.contains("kco_run_error{cluster=\"a\",command=\"diff\",kind=\"client\"} 1\n"));
    // Nothing to read back: no success at all.
    let first = render(&run(
        Outcome::Failed {
            kind: "client".into(),
        },
        read_success("garbage\nkco_last_success_timestamp_seconds_x 5\n"),
    ));
    assert!(
        !first.contains("kco_last_success_timestamp_seconds"),
        "{first}"
    );
}

#[test]
fn read_back_takes_escaped_labels_and_passes_over_what_it_cannot_read() {
    let s = read_success(
        "kco_last_success_timestamp_seconds{cluster=\"x\\\"y\",command=\"log\",} 12.5\n\
         kco_last_success_timestamp_seconds{cluster=\"broken 3\n\
         kco_last_success_timestamp_seconds 7\n",
    );
    assert_eq!(s.len(), 2);
    assert_eq!(
        s[0].labels,
        vec![
            ("cluster", "x\"y".to_string()),
            ("command", "log".to_string())
        ]
    );
    assert_eq!(s[0].value, 12.5);
    assert_eq!(s[1].value, 7.0);
}

#[test]
fn sink_lag_sums_partitions_and_adds_partition_series_only_when_named() {
    let lag = SinkLag {
        connector: "s".into(),
        group: "connect-s".into(),
        partitions: [(("t".to_string(), 0), 5), (("t".to_string(), 1), 7)]
            .into_iter()
            .collect(),
    };
    let m = sink_lag_metrics(
        "a",
        "diff",
        std::slice::from_ref(&lag),
        &PartitionSeries::default(),
    );
    assert_eq!(
        value(&m, "kco_sink_lag_records", &[("connector", "s")]),
        Some(12.0)
    );
    assert!(m.samples("kco_sink_partition_lag_records").is_empty());
    let m = sink_lag_metrics(
        "a",
        "diff",
        &[lag],
        &PartitionSeries {
            connectors: vec!["s".into()],
        },
    );
    assert_eq!(
        value(
            &m,
            "kco_sink_partition_lag_records",
            &[
                ("command", "diff"),
                ("group", "connect-s"),
                ("topic", "t"),
                ("partition", "1")
            ]
        ),
        Some(7.0)
    );
}

#[test]
fn a_sinks_lag_is_its_topics_ends_less_the_offsets_the_diff_saw_live() {
    let (r, files) = drifted_report();
    let at = crate::engine::sink_lag::sink_positions(&r, &files);
    // back: partition 0 live at 40 (the file says 100), 1 unchanged at 5; gone: missing.
    assert_eq!(at.keys().collect::<Vec<_>>(), ["back", "same"]);
    assert_eq!(at["back"].at.values().copied().collect::<Vec<_>>(), [40, 5]);
    let ends = [(("t".to_string(), 0), 50), (("t".to_string(), 1), 5)]
        .into_iter()
        .collect();
    let lags = crate::engine::sink_lag::lags(&at, &ends);
    let m = sink_lag_metrics("a", "diff", &lags, &PartitionSeries::default());
    assert_eq!(
        value(&m, "kco_sink_lag_records", &[("connector", "back")]),
        Some(10.0)
    );
    assert_eq!(
        value(&m, "kco_sink_lag_records", &[("connector", "same")]),
        Some(43.0)
    );
}

/// A sink of 1,000 moved partitions: one series each, only when named (docs/metrics.md
/// quotes the bytes this prints: `cargo test --lib per_partition -- --nocapture`).
#[test]
fn per_partition_series_are_one_per_partition_of_the_connectors_named() {
    let entries = |o: i64| json!((0..1000).map(|p| sink(p, o)).collect::<Vec<_>>());
    let fake = FakeConnect::builder()
        .sink("wide-sink", "KSink", State::Running, entries(2))
        .in_process();
    let files = vec![file("wide-sink", entries(1))];
    let r = diff_live(&fake.client(), testkit::live_input(&files, "prod")).unwrap();
    let plain = render(&diff_metrics(&r, &files, &PartitionSeries::default()));
    let named = PartitionSeries {
        connectors: vec!["wide-sink".into()],
    };
    let wide = render(&diff_metrics(&r, &files, &named));
    let lines = wide
        .lines()
        .filter(|l| l.starts_with("kco_partition_offset_distance{"))
        .count();
    assert_eq!(lines, 1000);
    let lags = [SinkLag {
        connector: "wide-sink".into(),
        group: "connect-wide-sink".into(),
        partitions: (0..1000).map(|p| (("t".to_string(), p), 5)).collect(),
    }];
    let lag_plain = render(&sink_lag_metrics(
        "prod",
        "diff",
        &lags,
        &PartitionSeries::default(),
    ));
    let lag_wide = render(&sink_lag_metrics("prod", "diff", &lags, &named));
    eprintln!(
        "per 1,000 partitions: kco_partition_offset_distance {} bytes, kco_sink_partition_lag_records {} bytes (without: {} and {} bytes in all)",
        wide.len() - plain.len(),
        lag_wide.len() - lag_plain.len(),
        plain.len(),
        lag_plain.len()
    );
}

/// A sink in sync with its file whose only task FAILED: the diff says so (and fails on it
/// with `--fail-on failed`), and the metrics of diff, ls and snapshot each count its failed
/// task under their own `command`.
#[test]
fn a_failed_task_is_a_verdict_and_a_gauge_of_every_command() {
    let fake = FakeConnect::builder()
        .sink("s", "KSink", State::Running, json!([sink(0, 7)]))
        .in_process();
    fake.fail_tasks(
        "s",
        Some("org.x.ConnectException: disk full\n\tat a.b(C.java:1)"),
    );
    let files = vec![file("s", json!([sink(0, 7)]))];
    let client = fake.client();
    let mut r = diff_live(&client, testkit::live_input(&files, "a")).unwrap();
    assert_eq!(testkit::statuses(&r), [("s", Status::InSync)]);
    assert_eq!((r.summary.failed, r.exit_code), (1, 0));
    assert_eq!(
        r.connectors[0].health.describe(),
        "task 0 FAILED: org.x.ConnectException: disk full"
    );
    r.fail_on_failed();
    assert_eq!(r.exit_code, 2);
    let failed = |m: &Metrics, command: &str| {
        value(
            m,
            "kco_connector_tasks_failed",
            &[("command", command), ("connector", "s")],
        )
    };
    let diff = diff_metrics(&r, &files, &PartitionSeries::default());
    assert_eq!(failed(&diff, "diff"), Some(1.0));
    let ls = crate::engine::ls::ls(
        &client,
        &files,
        "a",
        (1, Default::default()),
        std::path::Path::new("/w"),
    )
    .unwrap();
    assert_eq!(ls.connectors[0].health.verdict(), Some("FAILED"));
    assert_eq!(failed(&ls_metrics(&ls), "ls"), Some(1.0));
    let snap = snapshot_report("a", ls.connectors[0].health.clone());
    assert_eq!(failed(&snapshot_metrics(&snap), "snapshot"), Some(1.0));
    // Running again: 0, so that the alert clears.
    fake.fail_tasks("s", None);
    let r = diff_live(&client, testkit::live_input(&files, "a")).unwrap();
    let diff = diff_metrics(&r, &files, &PartitionSeries::default());
    assert_eq!(failed(&diff, "diff"), Some(0.0));
}

fn snapshot_report(
    cluster: &str,
    health: crate::engine::health::Health,
) -> crate::engine::snapshot::SnapshotReport {
    use crate::engine::snapshot::{ConnectorSnapshot, SnapshotOutcome, SnapshotReport};
    SnapshotReport {
        cluster: cluster.into(),
        url: "http://w".into(),
        connect_version: "4.1.0".into(),
        kafka_cluster_id: None,
        dir: "/w/snapshots/a".into(),
        connectors: vec![ConnectorSnapshot {
            name: "s".into(),
            connector_type: Some(ConnectorType::Sink),
            outcome: SnapshotOutcome::Unchanged,
            path: "/w/snapshots/a/s.yaml".into(),
            partitions: Some(1),
            redacted: Vec::new(),
            message: None,
            health,
        }],
        stale: Vec::new(),
        schema: None,
        commit: None,
    }
}

/// node-exporter refuses a series two files of its directory both hold: every command's
/// file (diff, ls, ls --orphaned, snapshot, with the sinks' lag) of two clusters never
/// writes the same name and labels twice.
#[test]
fn every_command_s_metrics_of_two_clusters_hold_no_series_twice() {
    let (r, files) = drifted_report();
    let lag = |cluster: &str, command: &str| {
        let lags = [SinkLag {
            connector: "back".into(),
            group: "connect-back".into(),
            partitions: [(("t".to_string(), 0), 5)].into_iter().collect(),
        }];
        let every = PartitionSeries {
            connectors: vec!["back".into()],
        };
        sink_lag_metrics(cluster, command, &lags, &every)
    };
    let fake = FakeConnect::builder()
        .sink("back", "KSink", State::Running, json!([sink(0, 40)]))
        .in_process();
    let mut seen = std::collections::BTreeSet::new();
    for cluster in ["a", "b"] {
        let mut r = r.clone();
        r.cluster = Some(cluster.into());
        let ls = crate::engine::ls::ls(
            &fake.client(),
            &files,
            cluster,
            (1, Default::default()),
            std::path::Path::new("/w"),
        )
        .unwrap();
        let orphans = crate::engine::orphaned::Orphans {
            topic: "connect-offsets".into(),
            sources: Vec::new(),
            sinks: Vec::new(),
            unread_records: 0,
            unchecked: Vec::new(),
            live_elsewhere: Default::default(),
        };
        let every = PartitionSeries {
            connectors: vec!["back".into()],
        };
        let mut diff = diff_metrics(&r, &files, &every);
        diff.merge(lag(cluster, "diff"));
        let mut ls_m = ls_metrics(&ls);
        ls_m.merge(lag(cluster, "ls"));
        let by_command = [
            ("diff", diff),
            ("ls", ls_m),
            ("ls --orphaned", orphaned_metrics(cluster, &orphans)),
            (
                "snapshot",
                snapshot_metrics(&snapshot_report(cluster, Default::default())),
            ),
        ];
        for (command, mut m) in by_command {
            run_metrics(
                &mut m,
                RunInfo {
                    cluster,
                    command,
                    outcome: Outcome::Succeeded,
                    ended_unix: 2000.0,
                    duration_seconds: 1.0,
                    previous_success: Vec::new(),
                },
            );
            for line in render(&m).lines().filter(|l| !l.starts_with('#')) {
                let series = line.rsplit_once(' ').unwrap().0.to_string();
                assert!(seen.insert(series.clone()), "written twice: {series}");
            }
        }
    }
    assert!(seen.len() > 40, "{seen:?}");
}
