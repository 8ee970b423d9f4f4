//! Each judging command's report as metrics. One series per connector at most for each
//! family (bounded cardinality); per-partition series only for the connectors
//! [`PartitionSeries`] names.

use std::collections::BTreeMap;
use std::time::UNIX_EPOCH;

use super::{Def, Metrics, PartitionSeries};
use crate::compare::Direction;
use crate::engine::diff::{DiffReport, Mode, Status};
use crate::engine::health::Health;
use crate::engine::history::log::LogReport;
use crate::engine::ls::LsReport;
use crate::engine::orphaned::Orphans;
use crate::engine::sink_lag::SinkLag;
use crate::engine::snapshot::{SnapshotOutcome, SnapshotReport};
use crate::engine::LoadedFile;
use crate::model::{ConnectorType, Fields};

pub const CONNECTORS: Def = Def {
    name: "kco_connectors",
    help: "Connectors (and files without a connector) by the diff status of their file, as the command (diff, ls) found them",
};
pub const STATUS: Def = Def {
    name: "kco_connector_status",
    help: "A connector's diff status as the command (diff, ls) found it (value 1; the status label: in_sync, advanced, drifted, missing, untracked, ...)",
};
pub const CONNECTOR_FAILED: Def = Def {
    name: "kco_connector_failed",
    help: "1 when the connector itself is FAILED on the cluster, as the command (diff, snapshot, ls) read its status, else 0",
};
pub const TASKS_FAILED: Def = Def {
    name: "kco_connector_tasks_failed",
    help:
        "The connector's tasks in state FAILED, as the command (diff, snapshot, ls) read its status",
};
pub const TASKS_UNASSIGNED: Def = Def {
    name: "kco_connector_tasks_unassigned",
    help: "The connector's tasks still UNASSIGNED after the command (diff, snapshot, ls) waited 15 s for a rebalance to settle",
};
pub const PARTITIONS_CHANGED: Def = Def {
    name: "kco_connector_partitions_changed",
    help: "Partitions whose live offset differs from the file",
};
pub const DISTANCE: Def = Def {
    name: "kco_connector_offset_distance",
    help: "How far the live offsets moved from the file, summed over the partitions that moved in that direction, in the unit the unit label names (records for a sink; bytes, or the offset field's name, for a source)",
};
pub const PARTITION_DISTANCE: Def = Def {
    name: "kco_partition_offset_distance",
    help: "How far one partition's live offset moved from the file, in the unit the unit label names (only for the connectors --metrics-partitions names)",
};
pub const CAPTURED: Def = Def {
    name: "kco_snapshot_captured_timestamp_seconds",
    help: "When the connector's file was captured (its capturedAt, Unix time)",
};
pub const COMMITTED: Def = Def {
    name: "kco_snapshot_committed_timestamp_seconds",
    help:
        "When the last commit that changed the connector's file was made (author date, Unix time)",
};
pub const STALLED: Def = Def {
    name: "kco_connector_stalled",
    help: "1 when the connector did not move forward over the last N commits (log --stalled N), else 0",
};
pub const SNAPSHOT_OUTCOMES: Def = Def {
    name: "kco_snapshot_connectors",
    help: "Connectors of the snapshot by outcome: created, updated, unchanged, skipped, failed",
};
pub const SNAPSHOT_FAILED: Def = Def {
    name: "kco_connector_snapshot_failed",
    help: "1 when the connector's offsets could not be read by the snapshot (its file was left as it was), else 0",
};
pub const PARTITIONS: Def = Def {
    name: "kco_connector_partitions",
    help: "Partitions with a committed offset on the cluster (ls)",
};
pub const SNAPSHOT_PARTITIONS: Def = Def {
    name: "kco_snapshot_partitions",
    help: "Partitions the snapshot captured in the connector's file",
};
pub const TASKS: Def = Def {
    name: "kco_connector_tasks",
    help: "The connector's tasks",
};
pub const TASKS_RUNNING: Def = Def {
    name: "kco_connector_tasks_running",
    help: "The connector's tasks in state RUNNING",
};
pub const DR_READY: Def = Def {
    name: "kco_dr_ready",
    help: "1 when a sink of another Kafka cluster could take over on this DR cluster now (dr_ready), else 0",
};
pub const DR_TRANSLATABLE: Def = Def {
    name: "kco_dr_translatable",
    help: "1 when every partition of the sink's file translates through MirrorMaker 2's checkpoints, else 0",
};
pub const DR_CHECKPOINT_AGE: Def = Def {
    name: "kco_dr_checkpoint_age_seconds",
    help: "The age of the oldest checkpoint used to translate the sink's partitions",
};
pub const DR_BEHIND: Def = Def {
    name: "kco_dr_behind_records",
    help: "Records before the file's positions that the DR cluster would deliver again, summed over the sink's partitions",
};
pub const DR_HEARTBEAT_AGE: Def = Def {
    name: "kco_dr_heartbeat_age_seconds",
    help: "The age of the last MirrorMaker 2 heartbeat read for the mirror",
};
pub const SINK_LAG: Def = Def {
    name: "kco_sink_lag_records",
    help: "Records between the sink's committed offsets and the ends of its topics' partitions, as the command (diff, ls) read them",
};
pub const SINK_PARTITION_LAG: Def = Def {
    name: "kco_sink_partition_lag_records",
    help: "Records between the sink's committed offset and the partition's end, as the command (diff, ls) read them (only for the connectors --metrics-partitions names)",
};
pub const ORPHANED: Def = Def {
    name: "kco_orphaned_partitions",
    help: "Partitions with offsets left behind by a deleted connector (in the offsets topic or a sink's consumer group)",
};

fn type_name(t: Option<ConnectorType>) -> String {
    t.map(|t| t.to_string()).unwrap_or_default()
}

fn connector_labels(
    cluster: &str,
    connector: &str,
    t: Option<ConnectorType>,
) -> Vec<(&'static str, String)> {
    vec![
        ("cluster", cluster.to_string()),
        ("connector", connector.to_string()),
        ("type", type_name(t)),
    ]
}

/// `cluster`, `command`, `connector`, `type`: a family more than one command writes.
fn command_labels(
    cluster: &str,
    command: &str,
    connector: &str,
    t: Option<ConnectorType>,
) -> Vec<(&'static str, String)> {
    vec![
        ("cluster", cluster.to_string()),
        ("command", command.to_string()),
        ("connector", connector.to_string()),
        ("type", type_name(t)),
    ]
}

/// A connector's health (`engine::health`) as the command read it.
fn health_metrics(
    m: &mut Metrics,
    labels: impl Fn() -> Vec<(&'static str, String)>,
    health: &Health,
) {
    m.add(
        CONNECTOR_FAILED,
        labels(),
        f64::from(u8::from(health.connector_failed())),
    );
    m.add(TASKS_FAILED, labels(), health.tasks_in("FAILED") as f64);
    m.add(
        TASKS_UNASSIGNED,
        labels(),
        health.tasks_in("UNASSIGNED") as f64,
    );
}

/// The connectors of each status (every status of a live diff, zeros included).
fn status_counts<'a>(
    m: &mut Metrics,
    cluster: &str,
    command: &str,
    statuses: impl Iterator<Item = (&'a str, usize)>,
) {
    for (status, n) in statuses {
        m.add(
            CONNECTORS,
            vec![
                ("cluster", cluster.to_string()),
                ("command", command.to_string()),
                ("status", status.to_string()),
            ],
            n as f64,
        );
    }
}

/// A partition as a label value: `topic/partition` for a sink's, else its fields as JSON.
pub fn partition_label(p: &Fields) -> String {
    match (
        p.get("kafka_topic").and_then(|v| v.as_str()),
        p.get("kafka_partition").and_then(|v| v.as_i64()),
    ) {
        (Some(t), Some(n)) => format!("{t}/{n}"),
        _ => serde_json::to_string(p).unwrap_or_default(),
    }
}

fn unix(rfc3339: &str) -> Option<f64> {
    let t = crate::client::parse_time(rfc3339)?;
    Some(t.duration_since(UNIX_EPOCH).ok()?.as_secs_f64())
}

/// A live diff's metrics: each connector's status, how far it moved, when its file was
/// captured (`files`: the files compared), and, against a DR cluster, each mirrored sink's
/// readiness. A `--base` review has none (it judges a change, not a cluster).
pub fn diff_metrics(
    report: &DiffReport,
    files: &[LoadedFile],
    per_partition: &PartitionSeries,
) -> Metrics {
    let mut m = Metrics::default();
    if report.mode != Mode::Live {
        return m;
    }
    let cluster = report.cluster.as_deref().unwrap_or_default();
    let statuses = report.summary.statuses.iter().map(|(s, n)| (*s, *n));
    status_counts(&mut m, cluster, "diff", statuses);
    let captured: BTreeMap<&str, &str> = files
        .iter()
        .filter_map(|f| {
            Some((
                f.file.metadata.name.as_str(),
                f.file.metadata.captured_at.as_deref()?,
            ))
        })
        .collect();
    for c in &report.connectors {
        let labels = || connector_labels(cluster, &c.name, c.connector_type);
        let by_diff = || command_labels(cluster, "diff", &c.name, c.connector_type);
        let mut l = by_diff();
        l.push(("status", c.status.as_str().to_string()));
        m.add(STATUS, l, 1.0);
        if c.state.is_some() {
            health_metrics(&mut m, by_diff, &c.health);
        }
        if let Some(t) = captured.get(c.name.as_str()).and_then(|s| unix(s)) {
            m.add(CAPTURED, labels(), t);
        }
        if let Some(tr) = &c.translation {
            dr_connector(&mut m, cluster, &c.name, c.status, tr);
            continue;
        }
        match c.status {
            // A source against a DR cluster: not part of DR readiness.
            Status::Skipped => continue,
            Status::NoTranslation => {
                m.add(DR_TRANSLATABLE, labels(), 0.0);
                m.add(DR_READY, labels(), 0.0);
                continue;
            }
            _ => {}
        }
        m.add(PARTITIONS_CHANGED, labels(), c.partitions.len() as f64);
        // Summed by direction and unit: a sink's records; a source's bytes, or its offset
        // field's own unit, never added to another unit.
        let mut sums: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        if c.connector_type == Some(ConnectorType::Sink) {
            sums.insert("records".into(), (0, 0));
        }
        let wants = per_partition.wants(&c.name);
        for p in &c.partitions {
            let (Some(d), Some(unit)) = (p.distance, p.unit.as_ref()) else {
                continue;
            };
            let sum = sums.entry(unit.as_str().to_string()).or_default();
            match p.direction {
                Some(Direction::Forward) => sum.0 += d,
                Some(Direction::Backward) => sum.1 += d,
                None => continue,
            }
            if wants {
                let mut l = labels();
                l.push(("partition", partition_label(&p.partition)));
                l.push(("direction", direction(p.direction)));
                l.push(("unit", unit.as_str().to_string()));
                m.add(PARTITION_DISTANCE, l, d as f64);
            }
        }
        for (unit, (fwd, back)) in sums {
            for (dir, v) in [("forward", fwd), ("backward", back)] {
                let mut l = labels();
                l.push(("direction", dir.to_string()));
                l.push(("unit", unit.clone()));
                m.add(DISTANCE, l, v as f64);
            }
        }
    }
    for h in &report.mirrors {
        if let Some(age) = h.seconds_since_last_heartbeat {
            m.add(
                DR_HEARTBEAT_AGE,
                vec![
                    ("cluster", cluster.to_string()),
                    ("mirror", h.alias.clone()),
                ],
                age as f64,
            );
        }
    }
    m
}

fn direction(d: Option<Direction>) -> String {
    match d {
        Some(Direction::Forward) => "forward",
        Some(Direction::Backward) => "backward",
        None => "",
    }
    .to_string()
}

/// A mirrored sink's readiness on a DR cluster.
fn dr_connector(
    m: &mut Metrics,
    cluster: &str,
    name: &str,
    status: Status,
    tr: &crate::engine::mirror::Translation,
) {
    let labels = || connector_labels(cluster, name, Some(ConnectorType::Sink));
    let translatable = status != Status::NoTranslation;
    m.add(DR_TRANSLATABLE, labels(), f64::from(u8::from(translatable)));
    m.add(
        DR_READY,
        labels(),
        f64::from(u8::from(status == Status::DrReady)),
    );
    let ages = tr
        .partitions
        .iter()
        .filter_map(|p| p.seconds_since_last_checkpoint);
    if let Some(age) = ages.max() {
        m.add(DR_CHECKPOINT_AGE, labels(), age as f64);
    }
    let behind: i64 = tr.partitions.iter().map(|p| p.redelivers.max(0)).sum();
    m.add(DR_BEHIND, labels(), behind as f64);
}

/// A snapshot's metrics: outcomes, each connector's partitions and whether it failed.
pub fn snapshot_metrics(report: &SnapshotReport) -> Metrics {
    let mut m = Metrics::default();
    let cluster = report.cluster.as_str();
    for (name, outcome) in [
        ("created", SnapshotOutcome::Created),
        ("updated", SnapshotOutcome::Updated),
        ("unchanged", SnapshotOutcome::Unchanged),
        ("skipped", SnapshotOutcome::Skipped),
        ("failed", SnapshotOutcome::Failed),
    ] {
        m.add(
            SNAPSHOT_OUTCOMES,
            vec![
                ("cluster", cluster.to_string()),
                ("outcome", name.to_string()),
            ],
            report.count(outcome) as f64,
        );
    }
    for c in &report.connectors {
        let labels = || connector_labels(cluster, &c.name, c.connector_type);
        let failed = c.outcome == SnapshotOutcome::Failed;
        m.add(SNAPSHOT_FAILED, labels(), f64::from(u8::from(failed)));
        if let Some(n) = c.partitions {
            m.add(SNAPSHOT_PARTITIONS, labels(), n as f64);
        }
        let by_snapshot = || command_labels(cluster, "snapshot", &c.name, c.connector_type);
        health_metrics(&mut m, by_snapshot, &c.health);
    }
    m
}

/// `ls`'s metrics: each connector's status, tasks and live partitions.
pub fn ls_metrics(report: &LsReport) -> Metrics {
    let mut m = Metrics::default();
    let cluster = report.cluster.as_str();
    let mut counts: BTreeMap<&str, usize> = Status::all(Mode::Live)
        .iter()
        .map(|s| (s.as_str(), 0))
        .collect();
    for c in &report.connectors {
        *counts.entry(c.status.as_str()).or_default() += 1;
        let labels = || connector_labels(cluster, &c.name, c.connector_type);
        let by_ls = || command_labels(cluster, "ls", &c.name, c.connector_type);
        let mut l = by_ls();
        l.push(("status", c.status.as_str().to_string()));
        m.add(STATUS, l, 1.0);
        if c.state.is_some() {
            health_metrics(&mut m, by_ls, &c.health);
        }
        m.add(PARTITIONS, labels(), c.partitions as f64);
        m.add(TASKS, labels(), c.tasks as f64);
        m.add(TASKS_RUNNING, labels(), c.tasks_running as f64);
    }
    status_counts(&mut m, cluster, "ls", counts.into_iter());
    m
}

/// `log`'s metrics: when each connector's file last changed in a commit, and with
/// `--stalled N` whether it is stalled.
pub fn log_metrics(report: &LogReport) -> Metrics {
    let mut m = Metrics::default();
    for c in &report.connectors {
        let labels = || connector_labels(&c.cluster, &c.name, Some(c.connector_type));
        if let Some(t) = c.commits.first().and_then(|e| unix(&e.date)) {
            m.add(COMMITTED, labels(), t);
        }
        if let Some(s) = c.stalled {
            m.add(STALLED, labels(), f64::from(u8::from(s)));
        }
    }
    m
}

/// `ls --orphaned`'s metrics: the partitions each deleted connector's name left behind.
pub fn orphaned_metrics(cluster: &str, found: &Orphans) -> Metrics {
    let mut m = Metrics::default();
    for o in &found.sources {
        m.add(
            ORPHANED,
            connector_labels(cluster, &o.name, Some(ConnectorType::Source)),
            o.partitions.len() as f64,
        );
    }
    for o in &found.sinks {
        m.add(
            ORPHANED,
            connector_labels(cluster, &o.name, Some(ConnectorType::Sink)),
            o.partitions.len() as f64,
        );
    }
    m
}

/// The sinks' lag as metrics, as `command` (diff, ls) read it: with the sink's consumer
/// `group`, and per partition its `topic` and `partition` number, as lag exporters label
/// theirs (kafka-lag-exporter's `kafka_consumergroup_group_lag`, kminion's).
pub fn sink_lag_metrics(
    cluster: &str,
    command: &str,
    lags: &[SinkLag],
    per_partition: &PartitionSeries,
) -> Metrics {
    let mut m = Metrics::default();
    for s in lags {
        let labels = || {
            let mut l = command_labels(cluster, command, &s.connector, Some(ConnectorType::Sink));
            l.push(("group", s.group.clone()));
            l
        };
        m.add(SINK_LAG, labels(), s.total() as f64);
        if per_partition.wants(&s.connector) {
            for ((topic, p), lag) in &s.partitions {
                let mut l = labels();
                l.push(("topic", topic.clone()));
                l.push(("partition", p.to_string()));
                m.add(SINK_PARTITION_LAG, l, (*lag).max(0) as f64);
            }
        }
    }
    m
}
