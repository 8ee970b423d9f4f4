//! An in-memory Connect cluster for the engine's tests, with synchronous state changes and
//! fault injection: a call can fail (before or after taking effect), or be accepted and
//! ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use crate::client::{
    ClientError, ConfigDef, Connect, ConnectorListing, ConnectorStatus, Result, ServerInfo,
    TaskStatus,
};
use crate::model::{
    canonical_json, ConnectorState, ConnectorType, OffsetEntry, PatchEntry, TargetState,
};

#[derive(Debug, Clone)]
pub struct Conn {
    pub kind: ConnectorType,
    pub state: ConnectorState,
    pub offsets: Vec<OffsetEntry>,
    pub config: BTreeMap<String, String>,
}

/// One injected failure: the next `call` fails with `error`; with `after_effect` the call
/// takes effect first (a timeout after the work was done).
pub struct Fault {
    pub call: &'static str,
    pub error: ClientError,
    pub after_effect: bool,
}

#[derive(Default)]
struct State {
    version: String,
    connectors: BTreeMap<String, Conn>,
    calls: Vec<String>,
    faults: Vec<Fault>,
    ignored: BTreeSet<&'static str>,
}

pub struct Memory {
    state: Mutex<State>,
}

pub fn http(status: u16, message: &str) -> ClientError {
    ClientError::Http {
        method: "X".into(),
        url: "mem://c".into(),
        status,
        message: message.into(),
    }
}

pub fn timeout() -> ClientError {
    ClientError::Transport {
        method: "PATCH".into(),
        url: "mem://c/offsets".into(),
        reason: "operation timed out".into(),
        maybe_sent: true,
        timeout: true,
    }
}

impl Memory {
    pub fn new(version: &str) -> Self {
        Memory {
            state: Mutex::new(State {
                version: version.into(),
                ..State::default()
            }),
        }
    }

    pub fn add(
        &self,
        name: &str,
        kind: ConnectorType,
        state: ConnectorState,
        offsets: Vec<OffsetEntry>,
    ) {
        self.lock().connectors.insert(
            name.into(),
            Conn {
                kind,
                state,
                offsets,
                config: BTreeMap::from([("connector.class".into(), "K".into())]),
            },
        );
    }

    pub fn fault(&self, call: &'static str, error: ClientError, after_effect: bool) {
        self.lock().faults.push(Fault {
            call,
            error,
            after_effect,
        });
    }

    /// `call` is accepted (2xx) and has no effect from now on.
    pub fn ignore(&self, call: &'static str) {
        self.lock().ignored.insert(call);
    }

    pub fn get(&self, name: &str) -> Option<Conn> {
        self.lock().connectors.get(name).cloned()
    }

    /// Every call so far, as `verb name`.
    pub fn calls(&self) -> Vec<String> {
        self.lock().calls.clone()
    }

    /// Mutating calls so far.
    pub fn mutating(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|c| {
                !c.starts_with("status")
                    && !c.starts_with("offsets")
                    && !c.starts_with("list")
                    && !c.starts_with("info")
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("memory lock")
    }

    /// Records the call, applies `effect` unless ignored, and returns an injected fault.
    fn call<T>(
        &self,
        verb: &'static str,
        name: &str,
        effect: impl FnOnce(&mut State) -> Result<T>,
        ignored: T,
    ) -> Result<T> {
        let mut s = self.lock();
        s.calls.push(format!("{verb} {name}"));
        let fault = s
            .faults
            .iter()
            .position(|f| f.call == verb)
            .map(|i| s.faults.remove(i));
        if let Some(f) = &fault {
            if !f.after_effect {
                return Err(fault.expect("checked").error);
            }
        }
        let out = if s.ignored.contains(verb) {
            Ok(ignored)
        } else {
            effect(&mut s)
        };
        match fault {
            Some(f) => Err(f.error),
            None => out,
        }
    }
}

fn not_found(name: &str) -> ClientError {
    http(404, &format!("Connector {name} not found"))
}

fn conn<'a>(s: &'a mut State, name: &str) -> Result<&'a mut Conn> {
    s.connectors.get_mut(name).ok_or_else(|| not_found(name))
}

fn status_of(name: &str, c: &Conn) -> ConnectorStatus {
    let tasks = match c.state {
        ConnectorState::Stopped => vec![],
        st => vec![TaskStatus {
            id: 0,
            state: st.to_string(),
            worker_id: None,
            trace: None,
        }],
    };
    ConnectorStatus {
        name: name.into(),
        state: Some(c.state),
        raw_state: c.state.to_string(),
        tasks,
        connector_type: Some(c.kind),
        trace: None,
    }
}

fn set_state(s: &mut State, name: &str, state: ConnectorState) -> Result<()> {
    conn(s, name)?.state = state;
    Ok(())
}

impl Connect for Memory {
    fn endpoint(&self) -> String {
        "mem://c".into()
    }
    fn server_info(&self) -> Result<ServerInfo> {
        let version = self.lock().version.clone();
        self.call("info", "", |_| Ok(()), ())?;
        Ok(ServerInfo {
            version,
            commit: None,
            kafka_cluster_id: Some("k1".into()),
        })
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        self.call(
            "list",
            "",
            |s| {
                Ok(s.connectors
                    .iter()
                    .map(|(n, c)| {
                        let l = ConnectorListing {
                            name: n.clone(),
                            connector_type: Some(c.kind),
                            class: c.config.get("connector.class").cloned(),
                            config: c.config.clone(),
                            status: Some(status_of(n, c)),
                        };
                        (n.clone(), l)
                    })
                    .collect())
            },
            BTreeMap::new(),
        )
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        let dummy = ConnectorStatus {
            name: name.into(),
            state: None,
            raw_state: "?".into(),
            tasks: vec![],
            connector_type: None,
            trace: None,
        };
        self.call(
            "status",
            name,
            |s| Ok(status_of(name, conn(s, name)?)),
            dummy,
        )
    }
    fn config(&self, name: &str) -> Result<BTreeMap<String, String>> {
        self.call(
            "config",
            name,
            |s| Ok(conn(s, name)?.config.clone()),
            BTreeMap::new(),
        )
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.call(
            "offsets",
            name,
            |s| Ok(conn(s, name)?.offsets.clone()),
            vec![],
        )
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<String> {
        self.call(
            "patch",
            name,
            |s| {
                let c = conn(s, name)?;
                if c.state != ConnectorState::Stopped {
                    return Err(http(400, "Connectors must be in the STOPPED state"));
                }
                let key = |p: &crate::model::Fields| {
                    canonical_json(&serde_json::Value::Object(p.clone()))
                };
                for e in entries {
                    c.offsets.retain(|o| key(&o.partition) != key(&e.partition));
                    if let Some(off) = &e.offset {
                        c.offsets.push(OffsetEntry {
                            partition: e.partition.clone(),
                            offset: off.clone(),
                        });
                    }
                }
                Ok("The offsets for this connector have been altered successfully".into())
            },
            "ignored".into(),
        )
    }
    fn reset_offsets(&self, name: &str) -> Result<String> {
        self.call(
            "reset",
            name,
            |s| {
                let c = conn(s, name)?;
                if c.state != ConnectorState::Stopped {
                    return Err(http(400, "Connectors must be in the STOPPED state"));
                }
                c.offsets.clear();
                Ok("The offsets for this connector have been reset successfully".into())
            },
            "ignored".into(),
        )
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.call(
            "stop",
            name,
            |s| set_state(s, name, ConnectorState::Stopped),
            (),
        )
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.call(
            "pause",
            name,
            |s| set_state(s, name, ConnectorState::Paused),
            (),
        )
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.call(
            "resume",
            name,
            |s| set_state(s, name, ConnectorState::Running),
            (),
        )
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        self.call(
            "create",
            name,
            |s| {
                if s.connectors.contains_key(name) {
                    return Err(http(409, &format!("Connector {name} already exists")));
                }
                let state = match initial_state.unwrap_or(TargetState::Running) {
                    TargetState::Running => ConnectorState::Running,
                    TargetState::Paused => ConnectorState::Paused,
                    TargetState::Stopped => ConnectorState::Stopped,
                };
                s.connectors.insert(
                    name.into(),
                    Conn {
                        kind: ConnectorType::Source,
                        state,
                        offsets: vec![],
                        config: config.clone(),
                    },
                );
                Ok(())
            },
            (),
        )
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.call(
            "delete",
            name,
            |s| {
                s.connectors.remove(name);
                Ok(())
            },
            (),
        )
    }
    fn plugin_config(&self, _class: &str) -> Result<Vec<ConfigDef>> {
        Ok(vec![])
    }
}
