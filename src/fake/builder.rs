//! Configuration of a fake cluster before it starts.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::cloud_state::CloudMode;
use super::faults::{Fault, Faults};
use super::http::HttpServer;
use super::state::{Cluster, ConnectorSpec, PluginSpec, State};
use super::{lock, serve, FakeConnect, Inner};

/// Configures a fake cluster before it starts. Get one from [`FakeConnect::builder`].
pub struct FakeConnectBuilder {
    cluster: Cluster,
    specs: Vec<ConnectorSpec>,
    faults: Vec<Fault>,
    /// Confluent Cloud mode's settings; switched on by [`FakeConnectBuilder::confluent_cloud`].
    cloud: CloudMode,
    cloud_on: bool,
    /// The first Confluent Cloud setting given, to refuse it without the mode.
    cloud_setting: Option<&'static str>,
}

impl FakeConnectBuilder {
    pub(crate) fn new() -> FakeConnectBuilder {
        FakeConnectBuilder {
            cluster: Cluster {
                version: "4.1.0".into(),
                commit: "c0ffee0000000000".into(),
                kafka_cluster_id: "fake-kafka-cluster".into(),
                worker_id: String::new(),
                connectors: BTreeMap::new(),
                offsets: BTreeMap::new(),
                plugins: Vec::new(),
                transition_reads: 1,
                resume_ignored: false,
                queued_stops: Vec::new(),
                cloud: None,
            },
            specs: Vec::new(),
            faults: Vec::new(),
            cloud: CloudMode::new("", ""),
            cloud_on: false,
            cloud_setting: None,
        }
    }

    /// Worker version reported by `GET /` (default `"4.1.0"`). It also gates features as a
    /// real worker would: below 3.5 the offsets and stop endpoints are 404, on 3.5 PATCH and
    /// DELETE offsets are 405, below 3.7 `initial_state` is refused. Confluent numbers with a
    /// `-ccs` suffix are understood (`"7.6.0-ccs"` is AK 3.6).
    pub fn version(mut self, version: &str) -> Self {
        self.cluster.version = version.to_string();
        self
    }

    /// `commit` reported by `GET /`.
    pub fn commit(mut self, commit: &str) -> Self {
        self.cluster.commit = commit.to_string();
        self
    }

    /// `kafka_cluster_id` reported by `GET /` (default `"fake-kafka-cluster"`).
    pub fn kafka_cluster_id(mut self, id: &str) -> Self {
        self.cluster.kafka_cluster_id = id.to_string();
        self
    }

    /// Add a source connector (one task) in `state` with `offsets` given as
    /// `[{"partition": {..}, "offset": {..}}]` (or `{"offsets": [..]}`; `json!([])` for none).
    pub fn source(self, name: &str, class: &str, state: State, offsets: Value) -> Self {
        self.connector(
            ConnectorSpec::source(name, class)
                .state(state)
                .offsets(offsets),
        )
    }

    /// Add a sink connector (one task); see [`FakeConnectBuilder::source`].
    pub fn sink(self, name: &str, class: &str, state: State, offsets: Value) -> Self {
        self.connector(
            ConnectorSpec::sink(name, class)
                .state(state)
                .offsets(offsets),
        )
    }

    /// Add a connector with full control over its config, tasks and offsets.
    pub fn connector(mut self, spec: ConnectorSpec) -> Self {
        self.specs.push(spec);
        self
    }

    /// Register a connector plugin (its config definitions, e.g. which keys are PASSWORD).
    /// Connector classes that are not registered are served with the common keys only.
    pub fn plugin(mut self, plugin: PluginSpec) -> Self {
        self.cluster.plugins.push(plugin);
        self
    }

    /// How many status reads after stop/pause/resume still show the old state (default 1;
    /// 0 makes transitions immediate).
    pub fn transition_reads(mut self, reads: u32) -> Self {
        self.cluster.transition_reads = reads;
        self
    }

    /// `PUT /resume` answers 202 but has no effect: the connector never runs again.
    pub fn resume_ignored(mut self) -> Self {
        self.cluster.resume_ignored = true;
        self
    }

    /// Install a fault rule from the start (see [`FakeConnect::fault`]).
    pub fn fault(mut self, fault: Fault) -> Self {
        self.faults.push(fault);
        self
    }

    // ----- Confluent Cloud mode -----

    /// Play Confluent Cloud's managed connectors of Kafka cluster `kafka_cluster` in
    /// `environment` instead of a Kafka Connect worker: routes under
    /// `/connect/v1/environments/{env}/clusters/{lkc}`, the service's answers and error shape,
    /// observed offsets and asynchronous alter requests (see the `cloud` module). The
    /// connectors, faults and expectations are given as for Connect. [`FakeConnect::url`] is
    /// the service's endpoint, without the base path.
    pub fn confluent_cloud(mut self, environment: &str, kafka_cluster: &str) -> Self {
        let ids = CloudMode::new(environment, kafka_cluster).ids;
        self.cloud.ids = ids;
        self.cloud_on = true;
        self
    }

    /// Every request must carry this Cloud API key and secret as HTTP Basic credentials
    /// (401 otherwise). The in-process client sends them.
    pub fn api_key(mut self, key: &str, secret: &str) -> Self {
        self.cloud.authorization = Some(super::cloud_auth(key, secret));
        self.cloud_setting("api_key")
    }

    /// Status reads each phase of an alter request lasts before the next (default 1:
    /// PENDING, PENDING_VALIDATION, then APPLIED on the third read; 0 applies it at the first).
    pub fn alter_phase_reads(mut self, reads: u32) -> Self {
        self.cloud.phase_reads = reads;
        self.cloud_setting("alter_phase_reads")
    }

    /// The first `reads` offsets reads of every connector answer an observation older than
    /// [`super::STALE_AGE`] (of the offsets before its last change).
    pub fn stale_observations(mut self, reads: u32) -> Self {
        self.cloud.stale_reads = reads;
        self.cloud_setting("stale_observations")
    }

    /// `name`'s alter requests end FAILED with `message`; nothing changes.
    pub fn alter_fails(mut self, name: &str, message: &str) -> Self {
        let faults = self.cloud.faults.entry(name.to_string()).or_default();
        faults.fails = Some(message.to_string());
        self.cloud_setting("alter_fails")
    }

    /// `name`'s alter requests stay PENDING (the connector PAUSED meanwhile).
    pub fn alter_stuck(mut self, name: &str) -> Self {
        self.cloud.faults.entry(name.to_string()).or_default().stuck = true;
        self.cloud_setting("alter_stuck")
    }

    /// `name`'s alter requests show `phase` (one the contract does not list) where
    /// PENDING_VALIDATION would be.
    pub fn unknown_phase(mut self, name: &str, phase: &str) -> Self {
        let faults = self.cloud.faults.entry(name.to_string()).or_default();
        faults.unknown_phase = Some(phase.to_string());
        self.cloud_setting("unknown_phase")
    }

    /// The service's clock starts at `rfc3339` (e.g. the `KCO_NOW` a CLI test gives kco) and
    /// runs on from there. Panics if it is not an RFC 3339 time.
    pub fn clock_at(mut self, rfc3339: &str) -> Self {
        let at = humantime::parse_rfc3339(rfc3339)
            .unwrap_or_else(|e| panic!("fake Connect: clock_at(`{rfc3339}`): {e}"));
        self.cloud.clock = Some((at, std::time::Instant::now()));
        self.cloud_setting("clock_at")
    }

    fn cloud_setting(mut self, name: &'static str) -> Self {
        self.cloud_setting.get_or_insert(name);
        self
    }

    /// Bind `127.0.0.1:0` and serve on background threads.
    pub fn start(self) -> FakeConnect {
        let mut fake = self.in_process();
        let handler_inner = fake.inner.clone();
        let server = HttpServer::start(Arc::new(move |request| serve(&handler_inner, request)))
            .expect("fake Connect: bind 127.0.0.1:0");
        lock(&fake.inner.cluster).worker_id = server.addr().to_string();
        fake.server = Some(server);
        fake
    }

    /// The cluster without a server, for [`FakeConnect::client`].
    pub fn in_process(self) -> FakeConnect {
        let mut cluster = self.cluster;
        cluster.worker_id = "in-process:8083".into();
        match (self.cloud_on, self.cloud_setting) {
            (true, _) => cluster.cloud = Some(self.cloud),
            (false, Some(setting)) => {
                panic!("fake Connect: {setting} needs .confluent_cloud(environment, cluster)")
            }
            (false, None) => {}
        }
        for spec in &self.specs {
            cluster.add(spec);
        }
        let mut faults = Faults::default();
        for fault in self.faults {
            faults.add(fault);
        }
        let inner = Arc::new(Inner {
            down: Default::default(),
            cluster: Mutex::new(cluster),
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(faults),
            expectations: Mutex::new(Vec::new()),
        });
        FakeConnect {
            server: None,
            inner,
        }
    }
}
