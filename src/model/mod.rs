//! The offsets model: what a connector's offsets are, in canonical order, and the versioned
//! file format that holds them.

mod canonical;
mod canonical_parse;
mod fields;
pub mod file;
mod file_lines;
mod problem;
pub use problem::syntax_position;
pub mod secrets;
pub mod strict;
pub mod yaml;

#[cfg(test)]
mod roundtrip_tests;

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use canonical::{
    canonical_fields, canonical_json, checksum, compare_partitions, in_canonical_order,
    sort_by_partition, sort_entries, PartitionKey,
};

pub use file_lines::{FileLines, HeaderLines};

/// A source partition or offset, or a sink's: a flat map of primitive values.
pub use fields::{Fields, Key};

/// One partition and its committed offset, as `GET /connectors/{name}/offsets` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffsetEntry {
    /// The partition: for a sink `kafka_topic` and `kafka_partition`; for a source whatever the
    /// connector defines.
    #[schemars(with = "PrimitiveMap")]
    #[serde(deserialize_with = "strict::fields")]
    pub partition: Fields,
    /// The offset: for a sink `kafka_offset`; for a source whatever the connector defines.
    #[schemars(with = "PrimitiveMap")]
    #[serde(deserialize_with = "strict::fields")]
    pub offset: Fields,
}

impl OffsetEntry {
    /// A sink's entry: `partition` of `topic` committed at `offset`.
    pub fn sink(topic: &str, partition: i64, offset: i64) -> OffsetEntry {
        let mut p = Fields::new();
        p.insert("kafka_topic", serde_json::Value::from(topic));
        p.insert("kafka_partition", serde_json::Value::from(partition));
        let mut o = Fields::new();
        o.insert("kafka_offset", serde_json::Value::from(offset));
        OffsetEntry {
            partition: p,
            offset: o,
        }
    }
}

/// One partition in a `PATCH /connectors/{name}/offsets` body; `offset: None` sends `null`,
/// which removes the partition's offset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatchEntry {
    pub partition: Fields,
    pub offset: Option<Fields>,
}

/// Schema-only stand-in for [`Fields`]: an object whose values are primitives.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct PrimitiveMap(std::collections::BTreeMap<String, Primitive>);

/// Schema-only: a JSON primitive.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Primitive {
    String(String),
    Integer(i64),
    Number(f64),
    Bool(bool),
    Null(()),
}

/// Whether a connector produces records into Kafka or consumes them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorType {
    Source,
    Sink,
}

impl fmt::Display for ConnectorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConnectorType::Source => "source",
            ConnectorType::Sink => "sink",
        })
    }
}

/// A connector's state as `/status` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ConnectorState {
    Running,
    Paused,
    Stopped,
    Failed,
    Unassigned,
    Restarting,
}

impl ConnectorState {
    /// Parses Connect's spelling; unknown states are `None`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "RUNNING" => Self::Running,
            "PAUSED" => Self::Paused,
            "STOPPED" => Self::Stopped,
            "FAILED" => Self::Failed,
            "UNASSIGNED" => Self::Unassigned,
            "RESTARTING" => Self::Restarting,
            _ => return None,
        })
    }

    /// A state Connect shows while the connector moves between workers (UNASSIGNED, during a
    /// rebalance) or restarts (RESTARTING). It does not say which state the connector is asked
    /// to be in: a STOPPED connector shows UNASSIGNED during a rebalance (seen on the test
    /// bed). What records or puts back a state reads it again first (`engine::settle`).
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Unassigned | Self::Restarting)
    }

    /// The state `apply` puts back after patching: paused and stopped stay so; everything else
    /// (running, failed, unassigned, restarting) is resumed, since its target state was running.
    /// A transient state is read again before it is taken for RUNNING (`engine::settle`).
    pub fn target(self) -> TargetState {
        match self {
            Self::Paused => TargetState::Paused,
            Self::Stopped => TargetState::Stopped,
            _ => TargetState::Running,
        }
    }
}

impl fmt::Display for ConnectorState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
            Self::Stopped => "STOPPED",
            Self::Failed => "FAILED",
            Self::Unassigned => "UNASSIGNED",
            Self::Restarting => "RESTARTING",
        })
    }
}

/// The state a connector is asked to be in (`initial_state` of KIP-980, and what `apply`
/// restores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum TargetState {
    Running,
    Paused,
    Stopped,
}

impl fmt::Display for TargetState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
            Self::Stopped => "STOPPED",
        })
    }
}

/// Sink partition accessors, for offsets in Connect's sink shape.
pub fn sink_partition(partition: &Fields) -> Option<(&str, i64)> {
    let topic = partition.get("kafka_topic")?.as_str()?;
    let p = partition.get("kafka_partition")?.as_i64()?;
    Some((topic, p))
}
