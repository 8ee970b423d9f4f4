//! The service over config and status records in memory: what Connect wrote, as kco lists it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::*;
use crate::model::ConnectorState;

/// Topics in memory: each a list of (key, value) records, one partition; every read counted.
#[derive(Default)]
struct Memory {
    topics: BTreeMap<String, Vec<(String, Option<String>)>>,
    reads: Mutex<Vec<String>>,
}

impl Memory {
    fn with(mut self, topic: &str, records: &[(&str, Option<Value>)]) -> Self {
        self.topics.insert(
            topic.to_string(),
            records
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_ref().map(Value::to_string)))
                .collect(),
        );
        self
    }
    fn reads(&self) -> Vec<String> {
        self.reads.lock().unwrap().clone()
    }
}

impl TopicSource for Memory {
    fn bootstrap(&self) -> String {
        "b-1.msk:9096".into()
    }
    fn describe(&self) -> std::result::Result<ClusterMetadata, KafkaError> {
        self.reads.lock().unwrap().push("metadata".into());
        Ok(ClusterMetadata {
            cluster_id: Some("kafka-id".into()),
            topics: self.topics.keys().cloned().collect(),
        })
    }
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> std::result::Result<(), KafkaError> {
        self.reads.lock().unwrap().push(topic.to_string());
        let records = self.topics.get(topic).ok_or(KafkaError::UnknownTopic {
            topic: topic.into(),
            bootstrap: self.bootstrap(),
        })?;
        for (offset, (k, v)) in records.iter().enumerate() {
            visit(RawRecord {
                offset: offset as i64,
                timestamp_ms: 0,
                key: Some(k.as_bytes()),
                value: v.as_deref().map(str::as_bytes),
            });
        }
        Ok(())
    }
}

fn topics() -> InternalTopics {
    InternalTopics {
        offsets: "offsets".into(),
        configs: "configs".into(),
        status: "status".into(),
    }
}

fn props(class: &str, more: Value) -> Value {
    let mut p = json!({"connector.class": class, "tasks.max": "1"});
    p.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    json!({ "properties": p })
}

const SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// What a worker wrote for: `src` (a running source), `sink` (a sink, paused), `gone`
/// (deleted), `stopped` (stopped by a 3.5+ worker), `early` (created with an initial state,
/// its target state before its config), with the records kco does not read between them.
fn config_records() -> Vec<(&'static str, Option<Value>)> {
    vec![
        (
            "session-key",
            Some(json!({"key": "x", "algorithm": "HmacSHA256", "creation-timestamp": 1})),
        ),
        (
            "connector-src",
            Some(props(SOURCE, json!({"file": "/in", "topic": "t"}))),
        ),
        ("task-src-0", Some(json!({"properties": {"file": "/in"}}))),
        ("commit-src", Some(json!({"tasks": 1}))),
        (
            "connector-sink",
            Some(props(SINK, json!({"file": "/out", "topics": "t"}))),
        ),
        ("target-state-sink", Some(json!({"state": "PAUSED"}))),
        ("connector-gone", Some(props(SOURCE, json!({})))),
        ("target-state-gone", Some(json!({"state": "PAUSED"}))),
        ("connector-gone", None),
        ("target-state-gone", None),
        ("connector-stopped", Some(props(SOURCE, json!({})))),
        (
            "target-state-stopped",
            Some(json!({"state": "PAUSED", "state.v2": "STOPPED"})),
        ),
        (
            "target-state-early",
            Some(json!({"state": "PAUSED", "state.v2": "STOPPED"})),
        ),
        // A worker with schemas on writes an envelope.
        (
            "connector-early",
            Some(
                json!({"schema": {"type": "struct"}, "payload": props(SINK, json!({"topics.regex": "t.*"}))}),
            ),
        ),
        (
            "restart-connector-src",
            Some(json!({"include-tasks": false, "only-failed": false})),
        ),
        ("tasks-fencing-src", Some(json!({"task-count": 1}))),
        ("commit-gone", Some(json!({"tasks": 3}))),
    ]
}

fn status(state: &str, generation: i64) -> Option<Value> {
    Some(json!({"state": state, "trace": null, "worker_id": "w1:8083", "generation": generation}))
}

/// The states of those: the sink's task FAILED, with its trace; the source's task moved by a
/// rebalance (RUNNING, UNASSIGNED, RUNNING again); the deleted connector's statuses deleted.
fn status_records() -> Vec<(&'static str, Option<Value>)> {
    vec![
        ("status-connector-src", status("RUNNING", 2)),
        ("status-task-src-0", status("RUNNING", 2)),
        ("status-task-src-0", status("UNASSIGNED", 3)),
        ("status-task-src-0", status("RUNNING", 4)),
        ("status-connector-sink", status("PAUSED", 3)),
        (
            "status-task-sink-0",
            Some(
                json!({"state": "FAILED", "trace": "org.apache.kafka.connect.errors.ConnectException: boom", "worker_id": "w2:8083", "generation": 3}),
            ),
        ),
        ("status-connector-gone", status("RUNNING", 1)),
        ("status-task-gone-0", status("RUNNING", 1)),
        ("status-connector-gone", None),
        ("status-task-gone-0", None),
        (
            "status-topic-t:connector-src",
            Some(
                json!({"topic": {"name": "t", "connector": "src", "task": 0, "discoverTimestamp": 1}}),
            ),
        ),
        ("status-connector-stopped", status("STOPPED", 3)),
    ]
}

fn service(memory: Memory) -> (ConnectTopics, Arc<Memory>) {
    let memory = Arc::new(memory);
    let source: Arc<dyn TopicSource> = memory.clone();
    let s = ConnectTopics::with_shapes(source, topics(), Shapes::builtin());
    (s, memory)
}

fn cluster() -> (ConnectTopics, Arc<Memory>) {
    service(
        Memory::default()
            .with("configs", &config_records())
            .with("status", &status_records())
            .with("offsets", &[]),
    )
}

#[test]
fn the_connectors_are_those_of_the_config_topic_with_their_states_from_the_status_topic() {
    let (s, _) = cluster();
    let listing = s.list_connectors().unwrap();
    assert_eq!(
        listing.keys().collect::<Vec<_>>(),
        ["early", "sink", "src", "stopped"],
        "the deleted connector is left out"
    );
    let src = &listing["src"];
    assert_eq!(src.connector_type, Some(ConnectorType::Source));
    assert_eq!(src.class.as_deref(), Some(SOURCE));
    assert_eq!(src.config["file"], "/in");
    let st = src.status.as_ref().unwrap();
    assert_eq!(st.state, Some(ConnectorState::Running));
    assert_eq!(st.worker_id.as_deref(), Some("w1:8083"));
    assert_eq!(st.tasks.len(), 1);
    assert_eq!(st.tasks[0].state, "RUNNING", "the last record wins");

    let sink = &listing["sink"];
    assert_eq!(sink.connector_type, Some(ConnectorType::Sink));
    let st = sink.status.as_ref().unwrap();
    assert_eq!(st.state, Some(ConnectorState::Paused));
    assert_eq!(st.tasks[0].state, "FAILED");
    assert_eq!(st.tasks[0].worker_id.as_deref(), Some("w2:8083"));
    assert!(st.tasks[0].trace.as_deref().unwrap().contains("boom"));
    assert_eq!(st.describe(), "PAUSED (tasks: 1 FAILED)");

    assert!(listing["stopped"]
        .status
        .as_ref()
        .unwrap()
        .is_fully_stopped());
    let early = &listing["early"];
    assert_eq!(
        early.connector_type,
        Some(ConnectorType::Sink),
        "topics.regex"
    );
    assert_eq!(early.status, None, "no status written yet");
    assert_eq!(
        s.connector_names().unwrap(),
        ["early", "sink", "src", "stopped"]
    );
}

#[test]
fn target_states_task_counts_and_deletions_are_read_as_connect_writes_them() {
    let mut fold = records::ConfigFold::default();
    for (k, v) in config_records() {
        let v = v.map(|v| v.to_string());
        fold.record(Some(k.as_bytes()), v.as_deref().map(str::as_bytes));
    }
    let read = fold.finish();
    let target = |n: &str| read[n].target;
    assert_eq!(target("src"), TargetState::Running, "none written: STARTED");
    assert_eq!(target("sink"), TargetState::Paused);
    assert_eq!(target("stopped"), TargetState::Stopped, "state.v2 wins");
    assert_eq!(
        target("early"),
        TargetState::Stopped,
        "written before its config"
    );
    assert_eq!(read["src"].tasks, Some(1));
    assert_eq!(read["sink"].tasks, None);
    assert!(
        !read.contains_key("gone"),
        "a commit after the deletion does not bring it back"
    );
    // A JSON `null` deletes as a null value does; a value that is not JSON is skipped.
    let mut fold = records::ConfigFold::default();
    fold.record(
        Some(b"connector-a"),
        Some(props(SOURCE, json!({})).to_string().as_bytes()),
    );
    fold.record(Some(b"connector-a"), Some(b"not json"));
    fold.record(
        Some(b"connector-b"),
        Some(props(SOURCE, json!({})).to_string().as_bytes()),
    );
    fold.record(Some(b"connector-b"), Some(b"null"));
    assert_eq!(fold.finish().keys().collect::<Vec<_>>(), ["a"]);
}

#[test]
fn a_connectors_type_comes_from_the_shapes_table_else_from_its_topics() {
    let t = |config: Value| {
        let config: BTreeMap<String, String> = serde_json::from_value(config).unwrap();
        connector_type(&config, Shapes::builtin())
    };
    let mirror = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
    assert_eq!(
        t(json!({"connector.class": mirror, "topics": "orders.*"})),
        ConnectorType::Source,
        "MirrorMaker 2's source takes `topics` too"
    );
    assert_eq!(
        t(json!({"connector.class": "x.Y", "topics": "a,b"})),
        ConnectorType::Sink
    );
    assert_eq!(
        t(json!({"connector.class": "x.Y", "topics.regex": "a.*"})),
        ConnectorType::Sink
    );
    assert_eq!(
        t(json!({"connector.class": "x.Y", "topics": " "})),
        ConnectorType::Source
    );
    assert_eq!(t(json!({"connector.class": "x.Y"})), ConnectorType::Source);
}

#[test]
fn each_topic_is_read_once_per_command() {
    let (s, memory) = cluster();
    s.check().unwrap();
    let info = s.server_info().unwrap();
    assert_eq!(info.kafka_cluster_id.as_deref(), Some("kafka-id"));
    assert_eq!(info.version, "Kafka Connect internal topics");
    s.list_connectors().unwrap();
    s.list_connectors().unwrap();
    s.status("src").unwrap();
    s.status("sink").unwrap();
    s.connector_names().unwrap();
    let (counted, counter) = s.counting();
    counted.list_connectors().unwrap();
    assert_eq!(memory.reads(), ["metadata", "configs", "status"]);
    assert_eq!(counter.get(), 0);
}

#[test]
fn a_transient_state_is_read_again_and_an_unknown_connector_is_the_workers_404() {
    let mut statuses = status_records();
    statuses.push(("status-connector-src", status("UNASSIGNED", 4)));
    let (s, memory) = service(
        Memory::default()
            .with("configs", &config_records())
            .with("status", &statuses),
    );
    let listed = s.list_connectors().unwrap();
    assert_eq!(listed["src"].state(), Some(ConnectorState::Unassigned));
    assert_eq!(s.status("src").unwrap().raw_state, "UNASSIGNED");
    assert_eq!(memory.reads(), ["configs", "status", "status"]);
    s.status("sink").unwrap();
    assert_eq!(memory.reads().len(), 3, "a settled state is not read again");

    let e = s.status("nope").unwrap_err();
    assert!(e.is_unknown_connector(), "{e}");
    assert!(
        e.to_string()
            .contains("kafka://b-1.msk:9096 (topic `configs`)"),
        "{e}"
    );
    let e = s.status("early").unwrap_err();
    assert_eq!(e.status(), Some(404), "no status yet: {e}");
}

#[test]
fn every_change_is_refused_naming_what_to_do_and_nothing_is_read_or_sent() {
    let (s, memory) = cluster();
    let refusals = [
        s.stop("src").unwrap_err(),
        s.pause("src").unwrap_err(),
        s.resume("src").unwrap_err(),
        s.delete("src").unwrap_err(),
        s.create("n", &BTreeMap::new(), None).unwrap_err(),
        s.create_at("n", &BTreeMap::new(), &[]).unwrap_err(),
        s.patch_offsets("src", &[]).unwrap_err(),
        s.reset_offsets("src").unwrap_err(),
        s.request_alter("src", AlterKind::Patch, &[]).unwrap_err(),
    ];
    for e in refusals {
        assert!(
            matches!(e.kind, crate::client::ErrorKind::Unsupported { .. }) && e.had_no_effect(),
            "{e}"
        );
        let text = e.to_string();
        assert!(
            text.contains("kafka://b-1.msk:9096/connectors")
                && text.contains("without a REST API")
                && text.ends_with("nothing was sent"),
            "{text}"
        );
        assert!(
            e.hint.as_deref().unwrap().contains("AWS MSK Connect"),
            "{e:?}"
        );
    }
    assert!(memory.reads().is_empty(), "{:?}", memory.reads());
    let caps = s.capabilities();
    assert!(
        caps.read_only.is_some() && !caps.version_endpoint,
        "{caps:?}"
    );
}

#[test]
fn a_missing_topic_is_named_with_the_bootstrap_address() {
    let (s, _) = service(Memory::default().with("configs", &[]).with("offsets", &[]));
    let e = s.check().unwrap_err();
    assert_eq!(
        e.to_string(),
        "topic `status` does not exist on the Kafka cluster at b-1.msk:9096"
    );
}

/// A task's status is its key's last record whatever its generation, as Connect's reader
/// takes it: an UNASSIGNED written by a worker that had not yet seen the newer RUNNING is what
/// `GET .../status` shows too.
#[test]
fn a_tasks_status_is_its_last_record_whatever_its_generation() {
    let mut topic = StatusTopic::default();
    for (key, value) in [
        ("status-connector-src", status("RUNNING", 3)),
        ("status-task-src-0", status("RUNNING", 3)),
        ("status-task-src-0", status("UNASSIGNED", 2)),
    ] {
        let value = value.map(|v| serde_json::to_vec(&v).unwrap());
        topic.record(Some(key.as_bytes()), value.as_deref());
    }
    let st = topic.status_of("src", ConnectorType::Source).unwrap();
    assert_eq!(st.tasks.len(), 1);
    assert_eq!(st.tasks[0].state, "UNASSIGNED");
}

/// The config and status topics given the other way round: the listing is refused, naming
/// what the topic holds and the keys to swap, instead of a cluster with no connector.
#[test]
fn topics_given_in_each_others_roles_are_refused_not_listed_empty() {
    let memory = Memory::default()
        .with("configs", &status_records())
        .with("status", &config_records());
    let service = ConnectTopics::new(Arc::new(memory), topics());
    let err = service.list_connectors().unwrap_err();
    let said = err.to_string();
    assert!(
        said.contains("given as the workers' config topic (`config.storage.topic`), but holds the status topic's records"),
        "{said}"
    );
    let hint = err.hint.as_deref().unwrap();
    assert!(
        hint.contains("`connectTopics.configs` and `connectTopics.status` swapped?"),
        "{hint}"
    );
    // Empty topics are a new cluster's: no connector, no error.
    let empty = Memory::default().with("configs", &[]).with("status", &[]);
    let service = ConnectTopics::new(Arc::new(empty), topics());
    assert!(service.list_connectors().unwrap().is_empty());
}
