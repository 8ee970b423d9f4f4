//! The fake cluster's state: connectors, their target and observed states, offsets, and the
//! plugins it serves (`GET /connector-plugins`, and a class's config definitions).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

pub use super::kinds::{Kind, OffsetEntry, State};

/// A connector to put in the fake cluster (see `FakeConnectBuilder::connector`).
#[derive(Clone, Debug)]
pub struct ConnectorSpec {
    /// Connector name (also the `name` config entry).
    pub name: String,
    /// Source or sink.
    pub kind: Kind,
    /// Initial state, already reached (no transition lag).
    pub state: State,
    /// Full config; `connector.class`, `name` and `tasks.max` are filled in.
    pub config: BTreeMap<String, String>,
    /// Initial offsets, in `GET .../offsets` order.
    pub offsets: Vec<OffsetEntry>,
    /// Answer PATCH/DELETE offsets with the "framework-managed ... externally" messages.
    pub externally_managed_offsets: bool,
}

impl ConnectorSpec {
    /// A running source connector with one task and no offsets.
    pub fn source(name: &str, class: &str) -> ConnectorSpec {
        ConnectorSpec::new(name, class, Kind::Source)
    }

    /// A running sink connector with one task and no offsets.
    pub fn sink(name: &str, class: &str) -> ConnectorSpec {
        ConnectorSpec::new(name, class, Kind::Sink)
    }

    /// A connector whose plugin the worker lacks (type `unknown`).
    pub fn plugin_missing(name: &str, class: &str) -> ConnectorSpec {
        ConnectorSpec::new(name, class, Kind::Unknown)
    }

    fn new(name: &str, class: &str, kind: Kind) -> ConnectorSpec {
        let mut config = BTreeMap::new();
        config.insert("connector.class".to_string(), class.to_string());
        config.insert("name".to_string(), name.to_string());
        config.insert("tasks.max".to_string(), "1".to_string());
        ConnectorSpec {
            name: name.to_string(),
            kind,
            state: State::Running,
            config,
            offsets: Vec::new(),
            externally_managed_offsets: false,
        }
    }

    /// Target state at start (already reached: no transition lag).
    pub fn state(mut self, state: State) -> ConnectorSpec {
        self.state = state;
        self
    }

    /// Set one config entry.
    pub fn config(mut self, key: &str, value: &str) -> ConnectorSpec {
        self.config.insert(key.to_string(), value.to_string());
        self
    }

    /// Set several config entries.
    pub fn configs<'a>(mut self, entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        for (k, v) in entries {
            self.config.insert(k.to_string(), v.to_string());
        }
        self
    }

    /// Number of tasks when running or paused (sets `tasks.max`).
    pub fn tasks(self, n: u32) -> ConnectorSpec {
        self.config("tasks.max", &n.to_string())
    }

    /// Initial offsets, as `[{"partition": {..}, "offset": {..}}, ..]` or the full
    /// `{"offsets": [..]}` body. Panics on another shape.
    pub fn offsets(mut self, offsets: Value) -> ConnectorSpec {
        self.offsets = offset_entries(&offsets);
        self
    }

    /// PATCH/DELETE offsets answer with the "framework-managed offsets ... if this connector
    /// manages offsets externally" messages instead of the plain success messages.
    pub fn externally_managed_offsets(mut self) -> ConnectorSpec {
        self.externally_managed_offsets = true;
        self
    }
}

/// Converts `[{"partition","offset"}]` or `{"offsets": [..]}` to entries. Panics otherwise:
/// this is for values written in tests.
pub(crate) fn offset_entries(offsets: &Value) -> Vec<OffsetEntry> {
    let list = match offsets {
        Value::Object(map) if map.contains_key("offsets") => &map["offsets"],
        other => other,
    };
    let Value::Array(items) = list else {
        panic!("fake Connect: offsets must be a JSON array of {{partition, offset}}, got {list}");
    };
    items
        .iter()
        .map(|item| match (item.get("partition"), item.get("offset")) {
            (Some(p), Some(o)) => (p.clone(), o.clone()),
            _ => panic!("fake Connect: offset entry needs partition and offset: {item}"),
        })
        .collect()
}

/// Renders entries as the `offsets` array of `GET .../offsets`.
pub(crate) fn offsets_json(entries: &[OffsetEntry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|(p, o)| json!({ "partition": p, "offset": o }))
            .collect(),
    )
}

/// `{"offsets": [..]}` as `GET .../offsets` answers it, written straight from the entries.
pub(crate) fn offsets_text(entries: &[OffsetEntry]) -> String {
    let mut out = String::with_capacity(16 + entries.len() * 96);
    out.push_str("{\"offsets\":");
    write_offsets_array(entries, &mut out);
    out.push('}');
    out
}

/// The `[{"partition":..,"offset":..}, ..]` array, written straight from the entries.
pub(crate) fn write_offsets_array(entries: &[OffsetEntry], out: &mut String) {
    out.push('[');
    for (i, (p, o)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"partition\":");
        out.push_str(&p.to_string());
        out.push_str(",\"offset\":");
        out.push_str(&o.to_string());
        out.push('}');
    }
    out.push(']');
}

/// A connector in the cluster.
#[derive(Clone, Debug)]
pub(crate) struct Connector {
    pub name: String,
    pub kind: Kind,
    pub config: BTreeMap<String, String>,
    /// Target state, changed at once by stop/pause/resume.
    pub target: State,
    /// State that status reads currently show.
    pub shown: State,
    /// Status reads left before `shown` catches up with `target`.
    pub lag: u32,
    pub externally_managed_offsets: bool,
    /// When set, its tasks show FAILED with this trace whenever the connector runs (as a
    /// worker shows a task that threw, e.g. on offsets it cannot use).
    pub task_trace: Option<String>,
}

impl Connector {
    pub fn from_spec(spec: &ConnectorSpec) -> Connector {
        Connector {
            name: spec.name.clone(),
            kind: spec.kind,
            config: spec.config.clone(),
            target: spec.state,
            shown: spec.state,
            lag: 0,
            externally_managed_offsets: spec.externally_managed_offsets,
            task_trace: None,
        }
    }

    pub fn tasks(&self) -> u32 {
        self.config
            .get("tasks.max")
            .and_then(|t| t.parse().ok())
            .unwrap_or(1)
    }

    /// Change the target state. Status reads show the old state `lag_reads` more times.
    pub fn set_target(&mut self, state: State, lag_reads: u32) {
        if state == self.target {
            return;
        }
        self.target = state;
        self.lag = if state == self.shown { 0 } else { lag_reads };
        if self.lag == 0 {
            self.shown = state;
        }
    }

    /// Force a state at once (test setup), skipping the transition.
    pub fn force_state(&mut self, state: State) {
        self.target = state;
        self.shown = state;
        self.lag = 0;
    }

    /// One status read: counts down the transition lag and returns the state shown.
    pub fn observe(&mut self) -> State {
        if self.lag > 0 {
            self.lag -= 1;
        } else {
            self.shown = self.target;
        }
        self.shown
    }

    /// Stopped in the sense of the offsets API: target STOPPED and no tasks left.
    pub fn fully_stopped(&self) -> bool {
        self.target == State::Stopped && self.shown == State::Stopped
    }

    /// `GET /connectors/{n}/status` body for the given shown state.
    pub fn status_json(&self, shown: State, worker_id: &str) -> Value {
        let tasks: Vec<Value> = match (shown, &self.task_trace) {
            (State::Stopped, _) => Vec::new(),
            (State::Running, Some(trace)) => (0..self.tasks())
                .map(|id| json!({ "id": id, "state": "FAILED", "worker_id": worker_id, "trace": trace }))
                .collect(),
            _ => (0..self.tasks())
                .map(|id| json!({ "id": id, "state": shown.as_str(), "worker_id": worker_id }))
                .collect(),
        };
        json!({
            "name": self.name,
            "connector": { "state": shown.as_str(), "worker_id": worker_id },
            "tasks": tasks,
            "type": self.kind.as_str(),
        })
    }

    /// `GET /connectors/{n}` body (task list as currently shown).
    pub fn info_json(&self) -> Value {
        let tasks: Vec<Value> = match self.shown {
            State::Stopped => Vec::new(),
            _ => (0..self.tasks())
                .map(|task| json!({ "connector": self.name, "task": task }))
                .collect(),
        };
        json!({
            "name": self.name,
            "config": self.config_json(),
            "tasks": tasks,
            "type": self.kind.as_str(),
        })
    }

    pub fn config_json(&self) -> Value {
        Value::Object(
            self.config
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect::<Map<String, Value>>(),
        )
    }
}

/// Everything the fake serves. Lives behind `Arc<Mutex<..>>`, shared with the test.
#[derive(Debug)]
pub(crate) struct Cluster {
    pub version: String,
    pub commit: String,
    pub kafka_cluster_id: String,
    pub worker_id: String,
    pub connectors: BTreeMap<String, Connector>,
    /// Offsets by connector name; they outlive the connector (as in real Connect).
    pub offsets: BTreeMap<String, Vec<OffsetEntry>>,
    pub plugins: Vec<PluginSpec>,
    pub transition_reads: u32,
    pub resume_ignored: bool,
    /// Stops sent but still waiting in the herder's request queue (as during a rebalance),
    /// oldest first. Connect handles a stop in that queue, but writes pause and resume
    /// straight to the config topic: a queued stop lands after a later resume. The next
    /// stop request is handled after them (the queue is first in, first out).
    pub queued_stops: Vec<String>,
    /// Confluent Cloud mode: the service's own state (`None`: a Kafka Connect worker).
    pub cloud: Option<super::cloud_state::CloudMode>,
}

impl Cluster {
    /// Apache Kafka (major, minor) of the configured version. Confluent Platform numbers with
    /// a `-ccs` suffix map to AK (7.x -> 3.x, 8.x -> 4.x).
    pub fn ak_version(&self) -> (u32, u32) {
        let mut parts = self
            .version
            .split(|c: char| !c.is_ascii_digit())
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let major = parts.next().unwrap_or(0);
        let minor = parts.next().unwrap_or(0);
        if self.version.contains("-ccs") && major >= 7 {
            (major - 4, minor)
        } else {
            (major, minor)
        }
    }

    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        self.ak_version() >= (major, minor)
    }

    /// Source or sink for a class: a registered plugin decides, else a class name containing
    /// `Sink` is a sink and anything else a source.
    pub fn kind_of(&self, class: &str) -> Kind {
        match self.plugins.iter().find(|p| p.answers_to(class)) {
            Some(plugin) => plugin.kind,
            None if class.contains("Sink") => Kind::Sink,
            None => Kind::Source,
        }
    }

    /// Hand every queued stop to its connector, oldest first.
    pub fn land_queued_stops(&mut self) {
        let lag = self.transition_reads;
        for name in std::mem::take(&mut self.queued_stops) {
            if let Some(c) = self.connectors.get_mut(&name) {
                c.set_target(State::Stopped, lag);
            }
        }
    }

    pub fn add(&mut self, spec: &ConnectorSpec) {
        self.connectors
            .insert(spec.name.clone(), Connector::from_spec(spec));
        if !spec.offsets.is_empty() || !self.offsets.contains_key(&spec.name) {
            self.offsets.insert(spec.name.clone(), spec.offsets.clone());
        }
    }
}

// Plugins.

/// A connector plugin, served by `GET /connector-plugins` and `.../{class}/config`.
#[derive(Clone, Debug)]
pub struct PluginSpec {
    /// Fully qualified class name; the simple name also finds it.
    pub class: String,
    /// Source or sink.
    pub kind: Kind,
    /// Version listed by `GET /connector-plugins`.
    pub version: String,
    /// Extra config keys beyond the common ones: (name, type such as `"STRING"`, `"PASSWORD"`).
    pub keys: Vec<(String, String)>,
}

impl PluginSpec {
    /// A source plugin (version `"1.0.0"`) with only the common config keys.
    pub fn source(class: &str) -> PluginSpec {
        PluginSpec::new(class, Kind::Source)
    }

    /// A sink plugin (version `"1.0.0"`) with only the common config keys.
    pub fn sink(class: &str) -> PluginSpec {
        PluginSpec::new(class, Kind::Sink)
    }

    fn new(class: &str, kind: Kind) -> PluginSpec {
        PluginSpec {
            class: class.to_string(),
            kind,
            version: "1.0.0".to_string(),
            keys: Vec::new(),
        }
    }

    /// Add a config key of the given Connect type (`"STRING"`, `"INT"`, `"PASSWORD"`, ...).
    pub fn key(mut self, name: &str, type_: &str) -> PluginSpec {
        self.keys.push((name.to_string(), type_.to_string()));
        self
    }

    /// Add a config key of type `PASSWORD` (a secret).
    pub fn password(self, name: &str) -> PluginSpec {
        self.key(name, "PASSWORD")
    }

    /// Whether `name` is this plugin's full class name or its simple name / alias.
    pub(crate) fn answers_to(&self, name: &str) -> bool {
        self.class == name || self.class.rsplit('.').next() == Some(name)
    }

    /// The config definitions of `GET /connector-plugins/{class}/config`.
    pub(crate) fn config_defs(&self) -> Value {
        let mut keys: Vec<(String, String)> = [
            ("name", "STRING"),
            ("connector.class", "STRING"),
            ("tasks.max", "INT"),
            ("key.converter", "CLASS"),
            ("value.converter", "CLASS"),
        ]
        .iter()
        .map(|(k, t)| (k.to_string(), t.to_string()))
        .collect();
        if self.kind == Kind::Sink {
            keys.push(("topics".into(), "LIST".into()));
        }
        keys.extend(self.keys.iter().cloned());
        let defs = keys.iter().enumerate().map(|(i, (name, type_))| {
            json!({
                "name": name,
                "type": type_,
                "required": name == "name" || name == "connector.class",
                "default_value": if name == "tasks.max" { json!("1") } else { Value::Null },
                "importance": "HIGH",
                "documentation": format!("The {name} setting."),
                "group": "Common",
                "width": "MEDIUM",
                "display_name": name,
                "dependents": [],
                "order": i + 1,
            })
        });
        Value::Array(defs.collect())
    }
}

/// Registered plugins, plus one per class used by a connector but not registered.
fn plugins(cluster: &Cluster) -> Vec<PluginSpec> {
    let mut all = cluster.plugins.clone();
    for connector in cluster.connectors.values() {
        let class = connector.config.get("connector.class").cloned();
        if let Some(class) = class {
            if !all.iter().any(|p| p.answers_to(&class)) {
                match connector.kind {
                    Kind::Source => all.push(PluginSpec::source(&class)),
                    Kind::Sink => all.push(PluginSpec::sink(&class)),
                    Kind::Unknown => {}
                }
            }
        }
    }
    all
}

pub(crate) fn plugin(cluster: &Cluster, class: &str) -> Option<PluginSpec> {
    plugins(cluster).into_iter().find(|p| p.answers_to(class))
}

pub(crate) fn plugin_list(cluster: &Cluster) -> Value {
    let list = plugins(cluster)
        .into_iter()
        .map(|p| json!({ "class": p.class, "type": p.kind.as_str(), "version": p.version }));
    Value::Array(list.collect())
}
