//! The records of Connect's config and status topics, as the workers write them: the key a
//! string, the value JSON from the workers' internal converter (schemas off; the
//! `{"schema", "payload"}` envelope of a worker configured with schemas on is opened too), a
//! null value (or a JSON `null`) a deletion. Read from Apache Kafka's
//! `KafkaConfigBackingStore` and `KafkaStatusBackingStore` (connect/runtime, 2.x to 3.9).
//!
//! The config topic (`config.storage.topic`, one partition, in the order written):
//! - `connector-<name>`: `{"properties": {...}}`, the connector's config; null: the
//!   connector was deleted (the worker writes null to `target-state-<name>` right after;
//!   the same from 2.x to 3.9);
//! - `target-state-<name>`: `{"state": "STARTED"|"PAUSED"}`; from 3.5 also `"state.v2"`,
//!   which wins where set (a STOPPED connector is written `"state": "PAUSED", "state.v2":
//!   "STOPPED"`, so that an older worker pauses it); null: gone with its connector. A
//!   connector with none is STARTED; a target state may come before its connector's config
//!   (created with an initial state);
//! - `task-<name>-<n>`: `{"properties": {...}}`, task `n`'s config, in force at the next
//!   `commit-<name>`: `{"tasks": N}`, the connector's number of tasks (kept; the tasks kco
//!   shows are those of the status topic, as Connect's `GET .../status` shows them);
//! - `session-key`, `restart-connector-<name>`, `tasks-fencing-<name>`,
//!   `logger-cluster-<namespace>`: not read.
//!
//! The status topic (`status.storage.topic`; the records of one key share a partition):
//! - `status-connector-<name>`, `status-task-<name>-<n>`: `{"state", "trace", "worker_id",
//!   "generation"}`; null: deleted with the connector (or the task);
//! - `status-topic-<topic>:connector-<name>`: not read.
//!
//! The last record of each key wins, as Connect's own reader (`KafkaStatusBackingStore`)
//! has it, so a listing from the topics shows what `GET .../status` shows. The generation is
//! only the writer's guard: a worker writes a task's UNASSIGNED only over a status of its own or
//! of an older generation.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::client::{ConnectorStatus, TaskStatus};
use crate::model::{ConnectorState, ConnectorType, TargetState};

/// A connector as the config topic says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorConfig {
    pub config: BTreeMap<String, String>,
    /// The state it is asked to be in (Connect's STARTED is [`TargetState::Running`]).
    pub target: TargetState,
    /// Its number of tasks, from its last `commit-<name>` (`None`: none read).
    pub tasks: Option<u32>,
}

/// The connectors of the config topic, by name (deleted ones left out).
pub type ConfigTopic = BTreeMap<String, ConnectorConfig>;

/// The config topic, read record by record.
#[derive(Debug, Default)]
pub struct ConfigFold {
    configs: BTreeMap<String, BTreeMap<String, String>>,
    targets: BTreeMap<String, TargetState>,
    tasks: BTreeMap<String, u32>,
}

impl ConfigFold {
    /// One record, in the topic's order.
    pub fn record(&mut self, key: Option<&[u8]>, value: Option<&[u8]>) {
        let Some(key) = key.and_then(|k| std::str::from_utf8(k).ok()) else {
            return;
        };
        let Some(value) = decode(value) else { return };
        if let Some(name) = key.strip_prefix("target-state-") {
            match value {
                None => {
                    self.targets.remove(name);
                }
                Some(v) => {
                    if let Some(state) = target_state(&v) {
                        self.targets.insert(name.to_string(), state);
                    }
                }
            }
        } else if let Some(name) = key.strip_prefix("connector-") {
            match value {
                None => {
                    self.configs.remove(name);
                    self.targets.remove(name);
                    self.tasks.remove(name);
                }
                Some(v) => {
                    if let Some(config) = properties(&v) {
                        self.configs.insert(name.to_string(), config);
                    }
                }
            }
        } else if let Some(name) = key.strip_prefix("commit-") {
            // A commit of a connector deleted since (its config compacted away) is ignored,
            // as Connect ignores it.
            let count = value.as_ref().and_then(|v| v.get("tasks")?.as_u64());
            if let (Some(n), true) = (count, self.configs.contains_key(name)) {
                self.tasks
                    .insert(name.to_string(), n.try_into().unwrap_or(u32::MAX));
            }
        }
        // `task-<name>-<n>` (a task's config), `session-key`, `restart-connector-`,
        // `tasks-fencing-`, `logger-cluster-`: nothing kco shows.
    }

    pub fn finish(mut self) -> ConfigTopic {
        let mut out = ConfigTopic::new();
        for (name, config) in std::mem::take(&mut self.configs) {
            let target = self
                .targets
                .get(&name)
                .copied()
                .unwrap_or(TargetState::Running);
            let tasks = self.tasks.get(&name).copied();
            out.insert(
                name,
                ConnectorConfig {
                    config,
                    target,
                    tasks,
                },
            );
        }
        out
    }
}

/// `{"state.v2": ...}` where set, else `{"state": ...}`: STARTED, PAUSED or STOPPED.
fn target_state(v: &Value) -> Option<TargetState> {
    let word = |k: &str| v.get(k).and_then(Value::as_str);
    match word("state.v2").or_else(|| word("state"))? {
        "STARTED" => Some(TargetState::Running),
        "PAUSED" => Some(TargetState::Paused),
        "STOPPED" => Some(TargetState::Stopped),
        _ => None,
    }
}

/// `{"properties": {...}}`: the config, its null values left out.
fn properties(v: &Value) -> Option<BTreeMap<String, String>> {
    let map = v.get("properties")?.as_object()?;
    Some(
        map.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect(),
    )
}

/// A value: `Some(None)` a deletion (a null value or a JSON `null`), `Some(Some(v))` the
/// JSON (out of its envelope), `None` a value that is not JSON (skipped).
fn decode(value: Option<&[u8]>) -> Option<Option<Value>> {
    let Some(bytes) = value else {
        return Some(None);
    };
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let v = match v {
        Value::Object(mut m) if m.len() == 2 && m.contains_key("schema") => m.remove("payload")?,
        v => v,
    };
    Some(match v {
        Value::Null => None,
        v => Some(v),
    })
}

/// One status record: a connector's or a task's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRecord {
    pub state: String,
    pub trace: Option<String>,
    pub worker_id: Option<String>,
    pub generation: i64,
}

impl StatusRecord {
    fn parse(v: &Value) -> Option<Self> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(StatusRecord {
            state: text("state")?,
            trace: text("trace"),
            worker_id: text("worker_id"),
            generation: v.get("generation").and_then(Value::as_i64).unwrap_or(0),
        })
    }
}

/// The status topic: each connector's and each task's last state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusTopic {
    pub connectors: BTreeMap<String, StatusRecord>,
    /// By connector, then task id.
    pub tasks: BTreeMap<String, BTreeMap<u32, StatusRecord>>,
}

impl StatusTopic {
    /// One record, in its partition's order.
    pub fn record(&mut self, key: Option<&[u8]>, value: Option<&[u8]>) {
        let Some(key) = key.and_then(|k| std::str::from_utf8(k).ok()) else {
            return;
        };
        let Some(value) = decode(value) else { return };
        let status = value.as_ref().map(StatusRecord::parse);
        if let Some(name) = key.strip_prefix("status-connector-") {
            match status {
                None => {
                    self.connectors.remove(name);
                }
                Some(Some(s)) => {
                    self.connectors.insert(name.to_string(), s);
                }
                Some(None) => {}
            }
        } else if let Some(task) = key.strip_prefix("status-task-") {
            let Some((name, id)) = task
                .rsplit_once('-')
                .and_then(|(n, id)| Some((n, id.parse::<u32>().ok()?)))
            else {
                return;
            };
            match status {
                None => {
                    if let Some(tasks) = self.tasks.get_mut(name) {
                        tasks.remove(&id);
                        if tasks.is_empty() {
                            self.tasks.remove(name);
                        }
                    }
                }
                Some(Some(s)) => {
                    self.tasks
                        .entry(name.to_string())
                        .or_default()
                        .insert(id, s);
                }
                Some(None) => {}
            }
        }
    }

    /// Connector `name`'s status as `GET /connectors/NAME/status` shows it, of type `kind`;
    /// `None` when the topic holds none.
    pub fn status_of(&self, name: &str, kind: ConnectorType) -> Option<ConnectorStatus> {
        let c = self.connectors.get(name)?;
        let tasks = self
            .tasks
            .get(name)
            .map(|tasks| {
                tasks
                    .iter()
                    .map(|(id, t)| TaskStatus {
                        id: (*id).into(),
                        state: t.state.clone(),
                        worker_id: t.worker_id.clone(),
                        trace: t.trace.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(ConnectorStatus {
            name: name.to_string(),
            state: ConnectorState::parse(&c.state),
            raw_state: c.state.clone(),
            tasks,
            connector_type: Some(kind),
            trace: c.trace.clone(),
            worker_id: c.worker_id.clone(),
        })
    }
}
