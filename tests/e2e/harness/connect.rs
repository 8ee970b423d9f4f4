//! One Connect worker: the REST calls the tests need, bounded waits, and a guard that
//! deletes a connector when the test ends.

use reqwest::Method;
use serde_json::{json, Value};

use super::*;

/// A Connect worker's REST API, with the calls the tests need.
#[derive(Clone, Debug)]
pub struct Connect {
    pub base: String,
}

impl Connect {
    pub fn new(base: &str) -> Self {
        Connect {
            base: base.trim_end_matches('/').to_string(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn connector_url(&self, name: &str, tail: &str) -> String {
        self.url(&format!("/connectors/{name}{tail}"))
    }

    /// `GET /`: version, commit, kafka_cluster_id.
    pub fn info(&self) -> Value {
        get(&self.url("/")).expect(200, "GET /")
    }

    /// `POST /connectors`; the returned guard deletes the connector when dropped.
    pub fn create(&self, name: &str, config: Value) -> ConnectorGuard {
        self.create_with(json!({ "name": name, "config": config }))
    }

    /// `POST /connectors` with `initial_state` (Connect 3.7+, KIP-980).
    ///
    /// Before 3.7 a STOPPED connector is made in three steps that never let it touch real
    /// data: it is created with its input pointed elsewhere (a FileStream source at a file
    /// that does not exist, a sink at an unused topic), stopped, and then given its real
    /// config, which leaves it STOPPED.
    pub fn create_in_state(&self, name: &str, config: Value, state: &str) -> ConnectorGuard {
        if self.supports_initial_state() {
            return self
                .create_with(json!({ "name": name, "config": config, "initial_state": state }));
        }
        assert_eq!(
            state, "STOPPED",
            "only STOPPED is emulated before Connect 3.7"
        );
        let mut decoy = config.clone();
        if decoy.get("topics").is_some() {
            decoy["topics"] = json!(unique_name("kco-e2e-decoy"));
        } else if decoy.get("file").is_some() {
            decoy["file"] = json!(format!("/nonexistent/{}", unique_name("kco-e2e-decoy")));
        }
        let guard = self.create(name, decoy);
        self.stop(name);
        let reply = put(&self.connector_url(name, "/config"), Some(&config));
        assert_eq!(reply.status, 200, "PUT config of {name}: {}", reply.body);
        self.wait_stopped(name);
        guard
    }

    /// The worker's Kafka version from `GET /` (cached per worker).
    pub fn version(&self) -> (u32, u32, u32) {
        type Seen = Vec<(String, (u32, u32, u32))>;
        static SEEN: std::sync::Mutex<Seen> = std::sync::Mutex::new(Vec::new());
        let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, v)) = seen.iter().find(|(b, _)| *b == self.base) {
            return *v;
        }
        let raw = self.info()["version"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let v = parse_version(&raw).unwrap_or_else(|| panic!("{}: version {raw}", self.base));
        seen.push((self.base.clone(), v));
        v
    }

    /// Whether connectors can be created STOPPED (`initial_state`, KIP-980, Connect 3.7+).
    pub fn supports_initial_state(&self) -> bool {
        self.version() >= (3, 7, 0)
    }

    /// Takes over the cleanup of a connector that something else (kco) creates here.
    pub fn adopt(&self, name: &str) -> ConnectorGuard {
        ConnectorGuard {
            connect: self.clone(),
            name: name.to_string(),
        }
    }

    /// Whether the worker answers `GET /` now (one try, short timeout).
    pub fn answers(&self) -> bool {
        probe_root(&self.base).is_ok()
    }

    fn create_with(&self, request: Value) -> ConnectorGuard {
        let name = request["name"].as_str().expect("name").to_string();
        let reply = post(&self.url("/connectors"), &request);
        assert_eq!(reply.status, 201, "create connector {name}: {}", reply.body);
        ConnectorGuard {
            connect: self.clone(),
            name,
        }
    }

    /// `GET /connectors/{name}/status`, or `None` on 404.
    pub fn status(&self, name: &str) -> Option<Value> {
        let reply = get(&self.connector_url(name, "/status"));
        match reply.status {
            200 => Some(reply.body),
            404 => None,
            _ => panic!("GET status of {name}: {} {}", reply.status, reply.body),
        }
    }

    /// The connector's state (`RUNNING`, `PAUSED`, `STOPPED`...) from its status.
    ///
    /// A state Connect shows only while the connector moves between workers (`UNASSIGNED`
    /// during a rebalance that another test's create or delete set off on the shared group,
    /// `RESTARTING`) says nothing of the state it was left in: it is read again until it has
    /// passed (within [`WAIT`]), so that an assertion on the result never flakes on one.
    pub fn state(&self, name: &str) -> String {
        wait_for(&format!("{name} out of a rebalance"), WAIT, || {
            let st = self
                .status(name)
                .unwrap_or_else(|| panic!("{name}: no such connector"));
            match st["connector"]["state"].as_str().unwrap_or("?") {
                "UNASSIGNED" | "RESTARTING" => Err(st.to_string()),
                state => Ok(state.to_string()),
            }
        })
    }

    /// `GET /connectors/{name}/config`.
    pub fn config(&self, name: &str) -> Value {
        get(&self.connector_url(name, "/config")).expect(200, "GET config")
    }

    /// `GET /connectors/{name}/offsets`: the `offsets` list, as the worker sees it now.
    ///
    /// Source offsets come from the worker's copy of the offsets topic, which may trail a
    /// PATCH or DELETE by a moment (a removed partition can still be listed, with
    /// `"offset": null`). After a write, use [`Connect::wait_offsets`].
    pub fn offsets(&self, name: &str) -> Vec<Value> {
        let body = get(&self.connector_url(name, "/offsets")).expect(200, "GET offsets");
        body["offsets"].as_array().cloned().unwrap_or_default()
    }

    /// `PATCH /connectors/{name}/offsets` with `{"offsets": offsets}` (transient errors
    /// retried; the reply is returned whatever it is).
    pub fn patch_offsets(&self, name: &str, offsets: Value) -> Reply {
        patch(
            &self.connector_url(name, "/offsets"),
            &json!({ "offsets": offsets }),
        )
    }

    /// `DELETE /connectors/{name}/offsets`.
    pub fn reset_offsets(&self, name: &str) -> Reply {
        delete(&self.connector_url(name, "/offsets"))
    }

    /// `PUT /connectors/{name}/stop` (asserts 204), then waits until STOPPED with no tasks.
    pub fn stop(&self, name: &str) {
        let reply = put(&self.connector_url(name, "/stop"), None);
        assert_eq!(reply.status, 204, "stop {name}: {}", reply.body);
        self.wait_stopped(name);
    }

    /// `PUT /connectors/{name}/pause` (asserts 202), then waits until the connector and
    /// every task are PAUSED.
    pub fn pause(&self, name: &str) {
        let reply = put(&self.connector_url(name, "/pause"), None);
        assert_eq!(reply.status, 202, "pause {name}: {}", reply.body);
        wait_for(&format!("{name} and its tasks PAUSED"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            let tasks = st["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            if st["connector"]["state"] == "PAUSED" && tasks.iter().all(|t| t["state"] == "PAUSED")
            {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        });
    }

    /// `PUT /connectors/{name}/resume` (asserts 202), then waits until RUNNING.
    pub fn resume(&self, name: &str) {
        let reply = put(&self.connector_url(name, "/resume"), None);
        assert_eq!(reply.status, 202, "resume {name}: {}", reply.body);
        self.wait_running(name);
    }

    /// Waits until the connector and at least one task are RUNNING and no task is in
    /// another state. Panics at once when a task FAILED, with its trace.
    pub fn wait_running(&self, name: &str) -> Value {
        wait_for(&format!("{name} RUNNING"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            if let Some(failed) = st["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["state"] == "FAILED")
            {
                panic!("{name}: a task FAILED: {}", failed["trace"]);
            }
            let tasks = st["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let running = st["connector"]["state"] == "RUNNING"
                && !tasks.is_empty()
                && tasks.iter().all(|t| t["state"] == "RUNNING");
            if running {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        })
    }

    /// Waits until the connector is STOPPED and has no tasks (what PATCH requires).
    ///
    /// Normally `/status` then lists no tasks. A connector deleted while its task was
    /// being (re)started and created again under the same name can keep a stale
    /// `UNASSIGNED` task status from its previous life until it runs again; that counts
    /// as stopped when `GET /connectors/{name}/tasks` is empty too.
    pub fn wait_stopped(&self, name: &str) -> Value {
        wait_for(&format!("{name} STOPPED with no tasks"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            let tasks = st["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let no_tasks = tasks.is_empty()
                || (tasks.iter().all(|t| t["state"] == "UNASSIGNED")
                    && self.task_configs(name).is_empty());
            if st["connector"]["state"] == "STOPPED" && no_tasks {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        })
    }

    /// `GET /connectors/{name}/tasks`: the task configurations (empty when stopped).
    pub fn task_configs(&self, name: &str) -> Vec<Value> {
        let body = get(&self.connector_url(name, "/tasks")).expect(200, "GET tasks");
        body.as_array().cloned().unwrap_or_default()
    }

    /// Waits until the connector (not necessarily its tasks) reports `state`.
    pub fn wait_state(&self, name: &str, state: &str) -> Value {
        wait_for(&format!("{name} {state}"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            if st["connector"]["state"] == state {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        })
    }

    /// Waits until `GET offsets` satisfies `pred`; returns that offsets list.
    pub fn wait_offsets(
        &self,
        name: &str,
        what: &str,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        wait_for(&format!("offsets of {name}: {what}"), WAIT, || {
            let offsets = self.offsets(name);
            if pred(&offsets) {
                Ok(offsets)
            } else {
                Err(Value::Array(offsets).to_string())
            }
        })
    }

    /// Whether this worker knows the connector (`GET /connectors/{name}` is 200).
    pub fn has_connector(&self, name: &str) -> bool {
        get(&self.connector_url(name, "")).status == 200
    }

    /// Waits until this worker no longer knows the connector (deleted): neither its config
    /// nor its status (the status store hears of a deletion a moment after the config).
    pub fn wait_gone(&self, name: &str) {
        wait_for(&format!("{name} deleted"), WAIT, || {
            if self.has_connector(name) {
                Err("still listed".to_string())
            } else if let Some(st) = self.status(name) {
                Err(format!("deleted, its status still {st}"))
            } else {
                Ok(())
            }
        });
    }
}

/// Deletes its connector when dropped, also when the test panics. Offsets survive the
/// delete (Connect keeps them), which is harmless because names are unique.
#[derive(Debug)]
pub struct ConnectorGuard {
    pub connect: Connect,
    pub name: String,
}

impl ConnectorGuard {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ConnectorGuard {
    fn drop(&mut self) {
        let url = self.connect.connector_url(&self.name, "");
        // Never panic here: a panic while unwinding aborts the whole test binary.
        let result = std::panic::catch_unwind(|| send(Method::DELETE, &url, None));
        match result {
            Ok(r) if r.status == 204 || r.status == 404 => {}
            Ok(r) => eprintln!("cleanup: DELETE {url}: {} {}", r.status, r.body),
            Err(_) => eprintln!("cleanup: DELETE {url} failed"),
        }
    }
}
