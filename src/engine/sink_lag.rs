//! How far each sink is behind its topics: records between the offsets it committed (as the
//! live diff saw them) and the ends of its topics' partitions (read from Kafka by the caller:
//! `kafka::end_offsets`). `diff --lag`, `ls --lag` and the metrics show it.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::diff::{DiffReport, PartitionKind, Sides, Status};
use crate::engine::LoadedFile;
use crate::model::{ConnectorType, Fields};

/// Each sink's committed offsets, by sink name.
pub type Positions = BTreeMap<String, SinkAt>;

/// One sink's consumer group and its committed offsets, by topic and partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkAt {
    /// `consumer.override.group.id` in its file's config, else Connect's `connect-<name>`.
    pub group: String,
    pub at: BTreeMap<(String, i32), i64>,
}

/// One sink's lag behind its topics: per partition, records between its committed offset
/// and the partition's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkLag {
    pub connector: String,
    /// Its consumer group (as lag exporters label their series).
    pub group: String,
    /// (topic, partition) -> records behind.
    pub partitions: BTreeMap<(String, i32), i64>,
}

impl SinkLag {
    /// Records behind over all its partitions.
    pub fn total(&self) -> i64 {
        self.partitions.values().map(|v| (*v).max(0)).sum()
    }
}

/// A sink partition's topic and number.
fn sink_partition(p: &Fields) -> Option<(String, i32)> {
    let topic = p.get("kafka_topic")?.as_str()?;
    let n = p.get("kafka_partition")?.as_i64()?;
    Some((topic.to_string(), i32::try_from(n).ok()?))
}

fn kafka_offset(o: &Fields) -> Option<i64> {
    o.get("kafka_offset")?.as_i64()
}

/// Each sink's committed offsets on the cluster, from a live diff: the file's offsets where
/// the diff found them unchanged, the live ones where they differ. A sink without a file
/// (untracked) or without a connector (missing) has none that kco saw.
pub fn sink_positions(report: &DiffReport, files: &[LoadedFile]) -> Positions {
    let by_name: BTreeMap<&str, &LoadedFile> = files
        .iter()
        .map(|f| (f.file.metadata.name.as_str(), f))
        .collect();
    let mut out = BTreeMap::new();
    for c in &report.connectors {
        if c.connector_type != Some(ConnectorType::Sink)
            || matches!(c.status, Status::Missing | Status::Untracked)
            || c.translation.is_some()
        {
            continue;
        }
        let Some(f) = by_name.get(c.name.as_str()) else {
            continue;
        };
        let mut at: BTreeMap<(String, i32), i64> = f
            .file
            .offsets
            .iter()
            .filter_map(|e| Some((sink_partition(&e.partition)?, kafka_offset(&e.offset)?)))
            .collect();
        for p in &c.partitions {
            let Some(key) = sink_partition(&p.partition) else {
                continue;
            };
            if let Sides::Live { live_offset, .. } = &p.offsets {
                match live_offset.as_ref().and_then(kafka_offset) {
                    Some(o) => {
                        at.insert(key, o);
                    }
                    None if p.kind() == PartitionKind::OnlyActual => {
                        at.remove(&key);
                    }
                    None => {}
                }
            }
        }
        let group = crate::engine::mirror::sink_group(&f.file);
        out.insert(c.name.clone(), SinkAt { group, at });
    }
    out
}

/// The partitions whose ends are needed.
pub fn partitions_of(positions: &Positions) -> BTreeSet<(String, i32)> {
    positions
        .values()
        .flat_map(|m| m.at.keys().cloned())
        .collect()
}

/// Each sink's lag: a partition's end less its committed offset (a partition whose end is
/// unknown, its topic gone, is left out).
pub fn lags(positions: &Positions, ends: &BTreeMap<(String, i32), i64>) -> Vec<SinkLag> {
    positions
        .iter()
        .map(|(name, s)| SinkLag {
            connector: name.clone(),
            group: s.group.clone(),
            partitions: s
                .at
                .iter()
                .filter_map(|(k, o)| Some((k.clone(), ends.get(k)? - o)))
                .collect(),
        })
        .collect()
}
