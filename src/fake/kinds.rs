//! The fake's words for a connector: its target state, its kind, and one stored offset.
//! Shared by the cluster's state and the Confluent Cloud mode's (no imports of either).

use serde_json::Value;

/// A connector's target state (what `stop`, `pause`, `resume` and `initial_state` set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// `RUNNING`: tasks running.
    Running,
    /// `PAUSED`: tasks exist but are paused; offsets cannot be altered.
    Paused,
    /// `STOPPED`: no tasks; offsets can be altered.
    Stopped,
}

impl State {
    /// The upper-case name Connect uses (`"RUNNING"`, `"PAUSED"`, `"STOPPED"`).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Running => "RUNNING",
            State::Paused => "PAUSED",
            State::Stopped => "STOPPED",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<State> {
        match s {
            "RUNNING" => Some(State::Running),
            "PAUSED" => Some(State::Paused),
            "STOPPED" => Some(State::Stopped),
            _ => None,
        }
    }
}

/// Source or sink; decides the `type` field and how offsets are validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Free-form partition/offset maps with primitive values.
    Source,
    /// `{kafka_topic, kafka_partition}` -> `{kafka_offset}`.
    Sink,
    /// The worker lacks the connector's plugin: Connect reports the type `unknown`.
    Unknown,
}

impl Kind {
    /// `"source"` or `"sink"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Sink => "sink",
            Kind::Unknown => "unknown",
        }
    }
}

/// One stored offset: a partition map and its offset map.
pub type OffsetEntry = (Value, Value);
