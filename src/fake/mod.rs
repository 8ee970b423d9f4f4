//! The one fake of the Kafka Connect REST API (KIP-875 offsets included): Connect's rules,
//! written once, for the engine's unit tests (in process, through [`FakeConnect::client`]),
//! the CLI tests and the benchmarks (over HTTP, at [`FakeConnect::url`]).
//!
//! It serves the endpoints kco uses with the shapes, status codes and error bodies of a real
//! worker (docs/connect-behaviour.md), records every request, checks expectations when
//! dropped, and misbehaves on demand (409/500 bodies, delays, "applied but timed out",
//! dropped connections, a worker that is down). Every fault rule must fire at least once:
//! one that never did fails the test when the fake is dropped, so a mistyped route cannot
//! stay green.
//!
//! Built into the library for its own unit tests, and for other targets with the `fake`
//! feature (the crate's dev-dependency on itself turns it on for tests and benches).
//!
//! ```ignore
//! use serde_json::json;
//! use kco::fake::{ConnectorSpec, Fault, FakeConnect, State};
//!
//! let fake = FakeConnect::builder()
//!     .version("4.1.0")
//!     .source("pg", "io.debezium.connector.postgresql.PostgresConnector", State::Running,
//!         json!([{ "partition": { "server": "pg" }, "offset": { "lsn": 42 } }]))
//!     .connector(ConnectorSpec::sink("s3", "io.confluent.connect.s3.S3SinkConnector")
//!         .state(State::Stopped).tasks(2).config("topics", "orders"))
//!     .start();
//! fake.fault(Fault::on("PATCH", "/connectors/pg/offsets").nth(1).conflict());
//! fake.expect("PUT", "/connectors/pg/stop");
//!
//! // run `kco apply --url {fake.url()} ...` here
//!
//! assert_eq!(fake.offsets("pg"), json!([{ "partition": { "server": "pg" }, "offset": { "lsn": 7 } }]));
//! assert_eq!(fake.state("pg"), Some(State::Running));
//! // expectations are verified when `fake` is dropped (or call `fake.verify()`)
//! ```
//!
//! State transitions: `stop`, `pause` and `resume` change the target state at once, but the
//! next [`FakeConnectBuilder::transition_reads`] status reads (default 1; a read is
//! `GET /connectors/{n}/status` or `GET /connectors?expand=status`) still show the old
//! connector and task states, so clients must poll. Offsets can be altered only once a read
//! has shown the connector STOPPED with no tasks (or when it was created or set STOPPED).
//!
//! Confluent Cloud mode: [`FakeConnectBuilder::confluent_cloud`] makes the same fake play
//! Confluent Cloud's managed connectors (the `cloud` module says what it serves): observed
//! offsets, asynchronous alter requests moving through their phases on status reads, and the
//! faults of that service as builder calls ([`FakeConnectBuilder::alter_fails`],
//! [`FakeConnectBuilder::alter_stuck`], [`FakeConnectBuilder::unknown_phase`],
//! [`FakeConnectBuilder::stale_observations`], `Fault::on("GET", "*").nth(1).rate_limited(1)`).
//!
//! ```ignore
//! let fake = FakeConnect::builder()
//!     .confluent_cloud("env-abc123", "lkc-xyz789")
//!     .api_key("KEY", "SECRET")
//!     .sink("s3", "S3SinkConnector", State::Running, json!([]))
//!     .alter_fails("s3", "Offsets are out of range")
//!     .start();
//! // kco.yaml: `confluentCloud: {environment: env-abc123, kafkaCluster: lkc-xyz789,
//! //   apiKey: KEY, apiSecret: ..., endpoint: {fake.url()}}`
//! ```
// Later CLI tests use more of this API than the self-test does.
#![allow(dead_code, unused_imports)]

mod builder;
mod cloud;
mod cloud_state;
#[cfg(test)]
mod cloud_tests;
mod faults;
mod http;
mod in_process;
mod kinds;
pub mod msk_connect;
mod offsets;
mod record;
mod routes;
mod state;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

use serde_json::Value;

pub use builder::FakeConnectBuilder;
pub use cloud::{connector_id as cloud_connector_id, PENDING_REQUEST, STALE_AGE};
pub use faults::{
    error_body, Fault, FaultAction, Occurrence, Route, LEADER_REFUSED, LEADER_RESET,
    LEADER_STARTING, REQUEST_TIMED_OUT, SAFELY_RETRIED, STALE_CONFIG,
};
pub use record::RecordedRequest;
pub use state::PluginSpec;
pub use state::{ConnectorSpec, Kind, OffsetEntry, State};

use faults::Faults;
use http::{HttpRequest, HttpServer, Reply};
use record::{Expectation, Times};
use state::{offset_entries, offsets_json, Cluster};

struct Inner {
    /// Whether the worker is down: connections are refused (in process and over HTTP).
    down: std::sync::atomic::AtomicBool,
    cluster: Mutex<Cluster>,
    log: Mutex<Vec<RecordedRequest>>,
    faults: Mutex<Faults>,
    expectations: Mutex<Vec<Expectation>>,
}

/// Locks, ignoring poisoning (a panicking test thread must not hide the real failure).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the request, applies the first firing fault, and serves it.
fn serve(inner: &Inner, request: HttpRequest) -> Reply {
    let body_text = String::from_utf8_lossy(&request.body).into_owned();
    let parsed: Option<Value> = serde_json::from_str(&body_text).ok();
    // Routes reuse the parsed body only when it is the body as sent (valid UTF-8).
    let exact = std::str::from_utf8(&request.body).is_ok();
    let index = {
        let mut log = lock(&inner.log);
        log.push(RecordedRequest {
            method: request.method.clone(),
            path: request.target.clone(),
            body: parsed.clone(),
            body_text,
            authorization: request.authorization.clone(),
            status: None,
        });
        log.len() - 1
    };
    let fault = lock(&inner.faults).fire(&request.method, &request.target);
    if let Some(delay) = fault.as_ref().and_then(|f| f.delay) {
        thread::sleep(delay);
    }
    let cloud = lock(&inner.cluster).cloud.is_some();
    let apply = |parsed: Option<Value>| {
        let mut cluster = lock(&inner.cluster);
        let (status, body) = if cloud {
            cloud::handle(
                &mut cluster,
                &request.method,
                &request.target,
                &request.body,
                parsed,
                request.authorization.as_deref(),
            )
        } else {
            routes::handle(
                &mut cluster,
                &request.method,
                &request.target,
                &request.body,
                parsed,
            )
        };
        Reply::Respond {
            status,
            body: body.map(routes::Body::into_text),
            headers: Vec::new(),
        }
    };
    // A fault's error body, in the service's shape in Confluent Cloud mode.
    let error_text = |body: Value| match cloud {
        true => cloud::translate_error(body).to_string(),
        false => body.to_string(),
    };
    let headers: Vec<(String, String)> = fault
        .as_ref()
        .and_then(|f| f.retry_after)
        .map(|s| vec![("Retry-After".to_string(), s.to_string())])
        .unwrap_or_default();
    let reply = match fault.map_or(FaultAction::Proceed, |f| f.action) {
        FaultAction::Proceed => apply(parsed.filter(|_| exact)),
        FaultAction::Respond { status, body } => Reply::Respond {
            status,
            body: Some(error_text(body)),
            headers,
        },
        FaultAction::ApplyThenRespond { status, body } => {
            apply(parsed.filter(|_| exact));
            Reply::Respond {
                status,
                body: Some(error_text(body)),
                headers,
            }
        }
        FaultAction::DropConnection => Reply::Drop,
        FaultAction::ApplyThenDrop => {
            apply(parsed.filter(|_| exact));
            Reply::Drop
        }
    };
    if let Reply::Respond { status, .. } = &reply {
        if let Some(entry) = lock(&inner.log).get_mut(index) {
            entry.status = Some(*status);
        }
    }
    reply
}

/// A running fake Connect worker. Stops serving when dropped, and then fails the test if an
/// expectation was not met (unless the test is already panicking).
pub struct FakeConnect {
    /// `None` for a fake used in process only.
    server: Option<HttpServer>,
    inner: Arc<Inner>,
}

impl FakeConnect {
    /// An empty cluster (version 4.1.0, no connectors), already serving.
    pub fn start() -> FakeConnect {
        FakeConnect::builder().start()
    }

    /// Configure a cluster; finish with [`FakeConnectBuilder::start`].
    pub fn builder() -> FakeConnectBuilder {
        FakeConnectBuilder::new()
    }

    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr())
    }

    /// The bound address. Panics for a fake built with [`FakeConnectBuilder::in_process`].
    pub fn addr(&self) -> SocketAddr {
        let server = self.server.as_ref();
        server.expect("fake Connect: in process only").addr()
    }

    /// A client of this fake that calls it in process, without HTTP: the same rules, faults,
    /// recording and expectations. In Confluent Cloud mode it is that service's client
    /// ([`service_for`](crate::client::service_for)) and sends the API key set with
    /// [`FakeConnectBuilder::api_key`].
    pub fn client(&self) -> Box<dyn crate::client::Service> {
        let client = crate::client::Connect::new(self.transport());
        crate::client::service_for(client, &self.backend())
    }

    /// In Confluent Cloud mode, a client that sends these credentials instead of the right
    /// ones (for tests of a wrong key or secret).
    pub fn client_as(&self, key: &str, secret: &str) -> Box<dyn crate::client::Service> {
        let auth = cloud_auth(key, secret);
        let transport = in_process::InProcess::new(self.inner.clone(), Some(auth));
        crate::client::service_for(crate::client::Connect::new(transport), &self.backend())
    }

    /// The in-process transport under [`FakeConnect::client`], for tests of the layers that
    /// wrap a transport.
    pub fn transport(&self) -> impl crate::client::Transport + 'static {
        let auth = self
            .cluster()
            .cloud
            .as_ref()
            .and_then(|c| c.authorization.clone());
        in_process::InProcess::new(self.inner.clone(), auth)
    }

    /// The service this fake plays: Kafka Connect, or Confluent Cloud with its ids.
    pub fn backend(&self) -> crate::client::Backend {
        match &self.cluster().cloud {
            Some(cloud) => crate::client::Backend::ConfluentCloud(cloud.ids.clone()),
            None => crate::client::Backend::Connect,
        }
    }

    fn cluster(&self) -> MutexGuard<'_, Cluster> {
        lock(&self.inner.cluster)
    }

    // ----- cluster state -----

    /// Names of the existing connectors, sorted.
    pub fn connector_names(&self) -> Vec<String> {
        self.cluster().connectors.keys().cloned().collect()
    }

    /// Target state of a connector (`None` if it does not exist).
    pub fn state(&self, name: &str) -> Option<State> {
        self.cluster().connectors.get(name).map(|c| c.target)
    }

    /// The state status reads currently show (lags behind [`FakeConnect::state`] right after a
    /// transition). Does not count as a status read.
    pub fn shown_state(&self, name: &str) -> Option<State> {
        self.cluster().connectors.get(name).map(|c| c.shown)
    }

    /// Set a connector's state at once, with no transition lag. Panics if it does not exist.
    pub fn set_state(&self, name: &str, state: State) {
        let mut cluster = self.cluster();
        let connector = cluster.connectors.get_mut(name);
        connector
            .unwrap_or_else(|| panic!("fake Connect: no connector {name}"))
            .force_state(state);
    }

    /// From now on, whenever `name` runs, its tasks show FAILED with `trace` (`None`: they
    /// run again). Panics if it does not exist.
    pub fn fail_tasks(&self, name: &str, trace: Option<&str>) {
        let mut cluster = self.cluster();
        let connector = cluster.connectors.get_mut(name);
        connector
            .unwrap_or_else(|| panic!("fake Connect: no connector {name}"))
            .task_trace = trace.map(str::to_string);
    }

    /// Stored offsets of `name` as the `offsets` array of `GET .../offsets`, in stored order
    /// (`[]` if none). Also works for a deleted connector, whose offsets remain.
    pub fn offsets(&self, name: &str) -> Value {
        offsets_json(self.cluster().offsets.get(name).map_or(&[], Vec::as_slice))
    }

    /// The stored offset of one partition, if any.
    pub fn offset(&self, name: &str, partition: &Value) -> Option<Value> {
        let cluster = self.cluster();
        let stored = cluster.offsets.get(name)?;
        stored
            .iter()
            .find(|(p, _)| p == partition)
            .map(|(_, o)| o.clone())
    }

    /// Replace the stored offsets of `name` (`[{"partition","offset"}]` or `{"offsets":[..]}`).
    /// Works whether or not the connector exists; no validation.
    pub fn set_offsets(&self, name: &str, offsets: Value) {
        let entries = offset_entries(&offsets);
        self.cluster().offsets.insert(name.to_string(), entries);
    }

    /// A connector's config (`None` if it does not exist).
    pub fn config(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.cluster()
            .connectors
            .get(name)
            .map(|c| c.config.clone())
    }

    /// Add (or replace) a connector while the server runs. Its offsets replace stored ones
    /// only when the spec has some.
    pub fn add_connector(&self, spec: ConnectorSpec) {
        self.cluster().add(&spec);
    }

    /// Remove a connector as `DELETE /connectors/{n}` does (its offsets remain). Returns
    /// whether it existed.
    pub fn remove_connector(&self, name: &str) -> bool {
        self.cluster().connectors.remove(name).is_some()
    }

    /// Change the number of lagging status reads for later transitions.
    pub fn set_transition_reads(&self, reads: u32) {
        self.cluster().transition_reads = reads;
    }

    /// When true, `PUT /resume` answers 202 but has no effect.
    pub fn set_resume_ignored(&self, ignored: bool) {
        self.cluster().resume_ignored = ignored;
    }

    /// A stop that reached the worker but waits in its herder's queue (as during a
    /// rebalance): status does not show it, a resume does not cancel it, and it lands at
    /// the next stop request or at [`FakeConnect::land_queued_stops`].
    pub fn queue_stop(&self, name: &str) {
        self.cluster().queued_stops.push(name.to_string());
    }

    /// The herder's queue drains: every queued stop lands.
    pub fn land_queued_stops(&self) {
        self.cluster().land_queued_stops();
    }

    // ----- Confluent Cloud mode -----

    fn cloud(&self) -> MappedCloud<'_> {
        let guard = self.cluster();
        assert!(
            guard.cloud.is_some(),
            "fake Connect: not in Confluent Cloud mode (builder().confluent_cloud(..))"
        );
        MappedCloud(guard)
    }

    /// How many alter requests (`POST .../offsets/request`) the service accepted for `name`.
    pub fn alter_requests(&self, name: &str) -> usize {
        let cloud = self.cloud();
        cloud.get().connectors.get(name).map_or(0, |c| c.accepted)
    }

    /// The phase of `name`'s last alter request (`None`: none yet), without a status read.
    pub fn alter_phase(&self, name: &str) -> Option<String> {
        let cloud = self.cloud();
        let state = cloud.get().connectors.get(name)?;
        state.request.as_ref().map(|r| r.phase.clone())
    }

    /// Carry `name`'s last alter request as far as it goes now, as if its status had been
    /// read enough times (a stuck request stays PENDING).
    pub fn finish_alter(&self, name: &str) {
        let mut cloud = self.cloud();
        cloud::advance(&mut cloud.0, name, true);
    }

    /// The next `reads` offsets reads of `name` answer an observation older than
    /// [`STALE_AGE`]: the offsets as they were before the last change.
    pub fn stale_for(&self, name: &str, reads: u32) {
        self.cloud().get_mut().connector(name).stale_reads = reads;
    }

    /// The service observes `name`'s offsets now: its stale reads are over.
    pub fn observe(&self, name: &str) {
        self.stale_for(name, 0);
    }

    /// When the last offsets read of `name` said its offsets were observed.
    pub fn observed_at(&self, name: &str) -> Option<std::time::SystemTime> {
        let cloud = self.cloud();
        cloud.get().connectors.get(name)?.observed_at
    }

    /// From now on `name`'s alter requests end FAILED with `message`, changing nothing.
    pub fn alter_fails(&self, name: &str, message: &str) {
        self.alter_faults(name, |f| f.fails = Some(message.to_string()));
    }

    /// From now on `name`'s alter requests stay PENDING.
    pub fn alter_stuck(&self, name: &str) {
        self.alter_faults(name, |f| f.stuck = true);
    }

    /// From now on `name`'s alter requests show `phase` where `PENDING_VALIDATION` would be.
    pub fn unknown_phase(&self, name: &str, phase: &str) {
        self.alter_faults(name, |f| f.unknown_phase = Some(phase.to_string()));
    }

    /// `name`'s alter requests behave again.
    pub fn clear_alter_faults(&self, name: &str) {
        self.cloud().get_mut().faults.remove(name);
    }

    fn alter_faults(&self, name: &str, f: impl FnOnce(&mut cloud_state::AlterFaults)) {
        let mut cloud = self.cloud();
        f(cloud.get_mut().faults.entry(name.to_string()).or_default());
    }

    // ----- faults and availability -----

    /// Add a fault rule. Rules are tried in the order added; the first whose route matches
    /// and whose occurrence holds fires. Every rule counts the requests its route matches.
    pub fn fault(&self, fault: Fault) {
        lock(&self.inner.faults).add(fault);
    }

    /// Remove all fault rules.
    pub fn clear_faults(&self) {
        lock(&self.inner.faults).clear();
    }

    /// Take the worker down: the port stops listening (connections are refused) and open
    /// connections are closed. State and log are kept.
    pub fn down(&self) {
        self.inner
            .down
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(server) = &self.server {
            server.go_down();
        }
    }

    /// Bring the worker back on the same URL.
    pub fn up(&self) {
        self.inner
            .down
            .store(false, std::sync::atomic::Ordering::SeqCst);
        if let Some(server) = &self.server {
            server.go_up();
        }
    }

    /// Whether the worker is listening.
    pub fn is_up(&self) -> bool {
        !self.inner.down.load(std::sync::atomic::Ordering::SeqCst)
    }

    // ----- recording and expectations -----

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.inner.log).clone()
    }

    /// The requests that were not GETs.
    pub fn mutating_requests(&self) -> Vec<RecordedRequest> {
        let log = lock(&self.inner.log);
        log.iter().filter(|r| r.is_mutating()).cloned().collect()
    }

    /// How many requests matched `method` and `path` (`*` wildcards allowed, see [`Route`]).
    pub fn count(&self, method: &str, path: &str) -> usize {
        let log = lock(&self.inner.log);
        log.iter().filter(|r| r.matches(method, path)).count()
    }

    /// Forget the requests recorded so far (expectations then only see later ones).
    pub fn clear_requests(&self) {
        lock(&self.inner.log).clear();
    }

    /// Panic, listing them, if any non-GET request was received.
    pub fn assert_no_mutations(&self) {
        let mutating = self.mutating_requests();
        if !mutating.is_empty() {
            panic!(
                "fake Connect: expected no mutating requests, got:\n{}",
                record::describe(&mutating)
            );
        }
    }

    /// Expect at least one request matching `method` and `path` (wildcards as in [`Route`]).
    pub fn expect(&self, method: &str, path: &str) {
        self.add_expectation(method, path, Times::AtLeastOnce);
    }

    /// Expect exactly `times` requests matching `method` and `path` (0 forbids them).
    pub fn expect_times(&self, method: &str, path: &str, times: usize) {
        self.add_expectation(method, path, Times::Exactly(times));
    }

    fn add_expectation(&self, method: &str, path: &str, times: Times) {
        let route = Route::new(method, path);
        lock(&self.inner.expectations).push(Expectation { route, times });
    }

    /// Panic if an expectation is not met or a fault rule never fired, listing them and the
    /// request log. Also runs when the fake is dropped.
    pub fn verify(&self) {
        let log = self.requests();
        let mut failures: Vec<String> = lock(&self.inner.expectations)
            .iter()
            .filter_map(|e| e.check(&log))
            .collect();
        failures.extend(lock(&self.inner.faults).never_fired());
        if !failures.is_empty() {
            panic!(
                "fake Connect: unmet expectations:\n  {}\nrequests received:\n{}",
                failures.join("\n  "),
                record::describe(&log)
            );
        }
    }
}

/// The cluster, known to be in Confluent Cloud mode.
struct MappedCloud<'a>(MutexGuard<'a, Cluster>);

impl MappedCloud<'_> {
    fn get(&self) -> &cloud_state::CloudMode {
        self.0.cloud.as_ref().expect("checked")
    }
    fn get_mut(&mut self) -> &mut cloud_state::CloudMode {
        self.0.cloud.as_mut().expect("checked")
    }
}

/// The `Authorization` header of a Cloud API key.
fn cloud_auth(key: &str, secret: &str) -> String {
    crate::client::Auth::Basic {
        username: key.to_string(),
        password: crate::client::Secret::new(secret),
    }
    .header_value()
}

impl Drop for FakeConnect {
    fn drop(&mut self) {
        if let Some(server) = &self.server {
            server.go_down();
        }
        if !thread::panicking() {
            self.verify();
        }
    }
}
