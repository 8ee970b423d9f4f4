//! What the REST API returns, decoded into kco's model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{ConnectorState, ConnectorType};

/// `GET /`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub version: String,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub kafka_cluster_id: Option<String>,
}

/// One task's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    pub id: i64,
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// `GET /connectors/{name}/status`, decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectorStatus {
    pub name: String,
    /// `None` when Connect reports a state kco does not know.
    pub state: Option<ConnectorState>,
    pub raw_state: String,
    pub tasks: Vec<TaskStatus>,
    pub connector_type: Option<ConnectorType>,
    pub trace: Option<String>,
    /// The worker that runs the connector (`host:port`), as its Connect group's status
    /// topic says: the same from every worker of the group.
    #[serde(skip)]
    pub worker_id: Option<String>,
}

impl ConnectorStatus {
    /// `RUNNING (tasks: 2 RUNNING, 1 FAILED)`, or `STOPPED (no tasks)`.
    pub fn describe(&self) -> String {
        if self.tasks.is_empty() {
            return format!("{} (no tasks)", self.raw_state);
        }
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for t in &self.tasks {
            match counts.iter_mut().find(|(st, _)| *st == t.state) {
                Some((_, n)) => *n += 1,
                None => counts.push((&t.state, 1)),
            }
        }
        let parts: Vec<String> = counts.iter().map(|(st, n)| format!("{n} {st}")).collect();
        format!("{} (tasks: {})", self.raw_state, parts.join(", "))
    }

    /// Stopped, with every task gone: the state in which offsets may be altered.
    pub fn is_fully_stopped(&self) -> bool {
        self.state == Some(ConnectorState::Stopped) && self.tasks.is_empty()
    }

    /// The connector and every task in `state` (a stopped connector has no tasks).
    pub fn settled_in(&self, state: ConnectorState) -> bool {
        if state == ConnectorState::Stopped {
            return self.is_fully_stopped();
        }
        let name = state.to_string();
        self.state == Some(state) && self.tasks.iter().all(|t| t.state == name)
    }

    /// Decodes the JSON body of `/status`.
    pub fn from_json(v: &serde_json::Value) -> Option<Self> {
        #[derive(Deserialize)]
        struct Raw {
            name: String,
            connector: RawConn,
            #[serde(default)]
            tasks: Vec<TaskStatus>,
            #[serde(default, rename = "type")]
            kind: Option<String>,
        }
        #[derive(Deserialize)]
        struct RawConn {
            state: String,
            #[serde(default)]
            trace: Option<String>,
            #[serde(default)]
            worker_id: Option<String>,
        }
        let raw: Raw = serde_json::from_value(v.clone()).ok()?;
        Some(ConnectorStatus {
            name: raw.name,
            state: ConnectorState::parse(&raw.connector.state),
            raw_state: raw.connector.state,
            tasks: raw.tasks,
            connector_type: raw.kind.as_deref().and_then(parse_type),
            trace: raw.connector.trace,
            worker_id: raw.connector.worker_id,
        })
    }
}

/// A connector as `GET /connectors?expand=status&expand=info` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectorListing {
    pub name: String,
    /// `None` when Connect reports `unknown` (the plugin is missing on the worker).
    pub connector_type: Option<ConnectorType>,
    pub class: Option<String>,
    pub config: BTreeMap<String, String>,
    pub status: Option<ConnectorStatus>,
}

impl ConnectorListing {
    pub fn state(&self) -> Option<ConnectorState> {
        self.status.as_ref().and_then(|s| s.state)
    }

    /// Decodes one value of the expanded listing.
    pub fn from_json(name: &str, v: &serde_json::Value) -> Option<Self> {
        let info = v.get("info");
        let config: BTreeMap<String, String> = info
            .and_then(|i| i.get("config"))
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default();
        let status = v.get("status").and_then(ConnectorStatus::from_json);
        let kind = info
            .and_then(|i| i.get("type"))
            .and_then(|t| t.as_str())
            .and_then(parse_type)
            .or_else(|| status.as_ref().and_then(|s| s.connector_type));
        Some(ConnectorListing {
            name: name.to_string(),
            connector_type: kind,
            class: config.get("connector.class").cloned(),
            config,
            status,
        })
    }
}

/// Connect's answer to a PATCH or DELETE of offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterAck {
    pub message: String,
}

/// Words of the answer Connect gives when a connector also keeps offsets of its own, which
/// Connect cannot alter (`alterOffsets` returned false).
const EXTERNALLY_MANAGED: &[&str] = &["externally", "manually altered", "manually reset"];

impl AlterAck {
    /// The connector manages offsets outside Connect too: they were not changed there.
    pub fn externally_managed(&self) -> bool {
        EXTERNALLY_MANAGED
            .iter()
            .any(|phrase| self.message.contains(phrase))
    }
}

/// One entry of `GET /connector-plugins/{class}/config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigDef {
    pub name: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

pub(crate) fn parse_type(s: &str) -> Option<ConnectorType> {
    match s {
        "source" => Some(ConnectorType::Source),
        "sink" => Some(ConnectorType::Sink),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_expanded_listing() {
        let v = json!({
            "status": {"name":"c","connector":{"state":"STOPPED","worker_id":"w"},"tasks":[],"type":"sink"},
            "info": {"name":"c","config":{"connector.class":"K","topics":"t"},"tasks":[],"type":"sink"}
        });
        let l = ConnectorListing::from_json("c", &v).unwrap();
        assert_eq!(l.connector_type, Some(ConnectorType::Sink));
        assert_eq!(l.class.as_deref(), Some("K"));
        assert_eq!(l.state(), Some(ConnectorState::Stopped));
        assert!(l.status.unwrap().is_fully_stopped());
    }

    #[test]
    fn an_ack_says_whether_the_connector_keeps_offsets_of_its_own() {
        let plain = "The offsets for this connector have been altered successfully";
        let ack = |m: &str| AlterAck { message: m.into() };
        assert!(!ack(plain).externally_managed());
        let external = "The Connect framework-managed offsets for this connector have been \
            reset successfully. However, if this connector manages offsets externally, they will \
            need to be manually reset in the system that the connector uses.";
        assert!(ack(external).externally_managed());
    }

    #[test]
    fn stopped_with_tasks_is_not_fully_stopped() {
        let v = json!({"name":"c","connector":{"state":"STOPPED"},"tasks":[{"id":0,"state":"RUNNING"}]});
        let s = ConnectorStatus::from_json(&v).unwrap();
        assert!(!s.is_fully_stopped());
        let v =
            json!({"name":"c","connector":{"state":"RUNNING"},"tasks":[{"id":0,"state":"PAUSED"}]});
        assert!(!ConnectorStatus::from_json(&v)
            .unwrap()
            .settled_in(ConnectorState::Running));
    }
}
