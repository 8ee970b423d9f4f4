//! Engine tests for `snapshot`, against an in-memory Connect.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};

use super::*;
use crate::client::{ClientError, ConfigDef, ConnectorStatus, ServerInfo};
use crate::model::{PatchEntry, TargetState};

/// A cluster held in memory: connectors with their listing entry and offsets.
struct Mem {
    version: String,
    connectors: BTreeMap<String, (Value, Vec<OffsetEntry>)>,
    password_keys: BTreeMap<String, Vec<String>>,
    broken_offsets: BTreeSet<String>,
    calls: Mutex<Vec<String>>,
}

fn http_err(method: &str, path: &str, status: u16, message: &str) -> ClientError {
    ClientError::Http {
        method: method.into(),
        url: format!("http://mem{path}"),
        status,
        message: message.into(),
    }
}

impl Mem {
    fn new() -> Self {
        Mem {
            version: "4.1.0".into(),
            connectors: BTreeMap::new(),
            password_keys: BTreeMap::new(),
            broken_offsets: BTreeSet::new(),
            calls: Mutex::new(Vec::new()),
        }
    }

    fn add(&mut self, name: &str, kind: &str, class: &str, config: Value, offsets: Value) {
        let mut cfg = config.as_object().cloned().unwrap_or_default();
        cfg.insert("connector.class".into(), json!(class));
        cfg.insert("name".into(), json!(name));
        let listing = json!({
            "status": {"name": name, "connector": {"state": "RUNNING", "worker_id": "w"},
                       "tasks": [], "type": kind},
            "info": {"name": name, "config": cfg, "tasks": [], "type": kind},
        });
        let offsets = serde_json::from_value(offsets).unwrap();
        self.connectors.insert(name.into(), (listing, offsets));
    }

    fn set_offsets(&mut self, name: &str, offsets: Value) {
        self.connectors.get_mut(name).unwrap().1 = serde_json::from_value(offsets).unwrap();
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    fn record(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
}

impl Connect for Mem {
    fn endpoint(&self) -> String {
        "http://mem".into()
    }
    fn server_info(&self) -> crate::client::Result<ServerInfo> {
        self.record("GET /".into());
        Ok(ServerInfo {
            version: self.version.clone(),
            commit: None,
            kafka_cluster_id: Some("kc-1".into()),
        })
    }
    fn list_connectors(&self) -> crate::client::Result<BTreeMap<String, ConnectorListing>> {
        self.record("GET /connectors".into());
        Ok(self
            .connectors
            .iter()
            .map(|(n, (v, _))| (n.clone(), ConnectorListing::from_json(n, v).unwrap()))
            .collect())
    }
    fn status(&self, _: &str) -> crate::client::Result<ConnectorStatus> {
        unimplemented!()
    }
    fn config(&self, _: &str) -> crate::client::Result<BTreeMap<String, String>> {
        unimplemented!()
    }
    fn offsets(&self, name: &str) -> crate::client::Result<Vec<OffsetEntry>> {
        let path = format!("/connectors/{name}/offsets");
        self.record(format!("GET {path}"));
        if self.broken_offsets.contains(name) {
            return Err(http_err("GET", &path, 500, "boom"));
        }
        self.connectors
            .get(name)
            .map(|c| c.1.clone())
            .ok_or_else(|| http_err("GET", &path, 404, "not found"))
    }
    fn patch_offsets(&self, _: &str, _: &[PatchEntry]) -> crate::client::Result<String> {
        unimplemented!()
    }
    fn reset_offsets(&self, _: &str) -> crate::client::Result<String> {
        unimplemented!()
    }
    fn stop(&self, _: &str) -> crate::client::Result<()> {
        unimplemented!()
    }
    fn pause(&self, _: &str) -> crate::client::Result<()> {
        unimplemented!()
    }
    fn resume(&self, _: &str) -> crate::client::Result<()> {
        unimplemented!()
    }
    fn create(
        &self,
        _: &str,
        _: &BTreeMap<String, String>,
        _: Option<TargetState>,
    ) -> crate::client::Result<()> {
        unimplemented!()
    }
    fn delete(&self, _: &str) -> crate::client::Result<()> {
        unimplemented!()
    }
    fn plugin_config(&self, class: &str) -> crate::client::Result<Vec<ConfigDef>> {
        self.record(format!("GET /connector-plugins/{class}/config"));
        Ok(self
            .password_keys
            .get(class)
            .into_iter()
            .flatten()
            .map(|k| ConfigDef {
                name: k.clone(),
                kind: "PASSWORD".into(),
            })
            .chain([ConfigDef {
                name: "topic".into(),
                kind: "STRING".into(),
            }])
            .collect())
    }
}

const SRC: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

fn sink_offsets(n: i64) -> Value {
    json!([
        {"partition": {"kafka_topic": "t", "kafka_partition": 10}, "offset": {"kafka_offset": n}},
        {"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": 7}},
    ])
}

fn source_offsets(pos: i64) -> Value {
    json!([{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": pos}}])
}

fn cluster() -> Mem {
    let mut m = Mem::new();
    m.add(
        "orders-sink",
        "sink",
        SINK,
        json!({"topics": "t"}),
        sink_offsets(5),
    );
    m.add(
        "file-src",
        "source",
        SRC,
        json!({"file": "/tmp/in.txt"}),
        source_offsets(42),
    );
    m
}

fn at(t: &'static str) -> impl Fn() -> String {
    move || t.to_string()
}

fn run(m: &Mem, dir: &Path, opts: &SnapshotOptions) -> SnapshotReport {
    snapshot(m, "a", dir, opts, &at("2026-01-01T00:00:00Z")).unwrap()
}

fn outcomes(r: &SnapshotReport) -> Vec<(String, SnapshotOutcome)> {
    r.connectors
        .iter()
        .map(|c| (c.name.clone(), c.outcome))
        .collect()
}

#[test]
fn writes_one_sealed_file_per_connector_with_the_live_offsets() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(
        outcomes(&r),
        vec![
            ("file-src".into(), SnapshotOutcome::Created),
            ("orders-sink".into(), SnapshotOutcome::Created)
        ]
    );
    let path = dir.path().join("a/orders-sink.yaml");
    let (file, text) = OffsetsFile::load(&path).unwrap();
    assert!(file.check(&path, &text).is_empty());
    assert!(text.starts_with("# yaml-language-server: $schema="));
    let mut want: Vec<OffsetEntry> = serde_json::from_value(sink_offsets(5)).unwrap();
    sort_entries(&mut want);
    assert_eq!(file.offsets, want);
    assert_eq!(file.metadata.kafka_cluster_id.as_deref(), Some("kc-1"));
    assert_eq!(file.metadata.connect_version.as_deref(), Some("4.1.0"));
    assert_eq!(file.metadata.connector_class.as_deref(), Some(SINK));
    assert_eq!(
        file.metadata.state,
        Some(crate::model::ConnectorState::Running)
    );
    assert_eq!(file.config, None);
    // One listing call, one offsets read per connector, nothing else.
    let mut calls = m.calls();
    calls.sort();
    assert_eq!(
        calls,
        vec![
            "GET /",
            "GET /connectors",
            "GET /connectors/file-src/offsets",
            "GET /connectors/orders-sink/offsets"
        ]
    );
}

#[test]
fn second_run_without_progress_leaves_files_byte_identical() {
    let mut m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let src = dir.path().join("a/file-src.yaml");
    let before = (std::fs::read(&sink).unwrap(), std::fs::read(&src).unwrap());
    let r = snapshot(
        &m,
        "a",
        dir.path(),
        &SnapshotOptions::default(),
        &at("2027-02-02T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(r.count(SnapshotOutcome::Unchanged), 2);
    assert_eq!(std::fs::read(&sink).unwrap(), before.0);
    assert_eq!(std::fs::read(&src).unwrap(), before.1);

    m.set_offsets("file-src", source_offsets(43));
    let r = snapshot(
        &m,
        "a",
        dir.path(),
        &SnapshotOptions::default(),
        &at("2027-02-02T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(
        outcomes(&r),
        vec![
            ("file-src".into(), SnapshotOutcome::Updated),
            ("orders-sink".into(), SnapshotOutcome::Unchanged)
        ]
    );
    let text = std::fs::read_to_string(&src).unwrap();
    assert!(
        text.contains("position: 43") && text.contains("2027-02-02"),
        "{text}"
    );
    assert_eq!(std::fs::read(&sink).unwrap(), before.0);
}

#[test]
fn hand_reordered_file_with_same_offsets_is_rewritten_canonically_keeping_schema_ref() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let text = std::fs::read_to_string(&sink).unwrap();
    let edited = text
        .replacen(
            "../../schemas/connector-offsets-v1.json",
            "https://example.test/s.json",
            1,
        )
        .replace("cluster: a\n", "cluster: 'a'\n");
    std::fs::write(&sink, &edited).unwrap();
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    let c = r
        .connectors
        .iter()
        .find(|c| c.name == "orders-sink")
        .unwrap();
    assert_eq!(c.outcome, SnapshotOutcome::Updated);
    let now = std::fs::read_to_string(&sink).unwrap();
    assert!(now.starts_with("# yaml-language-server: $schema=https://example.test/s.json\n"));
    assert!(now.contains("cluster: a\n"));
}

#[test]
fn filters_by_glob_and_type_and_rejects_unknown_exact_names() {
    let mut m = cluster();
    m.add("orders-src", "source", SRC, json!({}), source_offsets(1));
    let dir = tempfile::tempdir().unwrap();
    let opts = SnapshotOptions {
        selector: Selector::new(&["orders-*".into()], Some(ConnectorType::Source)).unwrap(),
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &opts);
    assert_eq!(
        outcomes(&r),
        vec![("orders-src".into(), SnapshotOutcome::Created)]
    );
    assert!(!dir.path().join("a/orders-sink.yaml").exists());

    let opts = SnapshotOptions {
        selector: Selector::new(&["file-src".into(), "nope".into(), "gone".into()], None).unwrap(),
        ..SnapshotOptions::default()
    };
    let e = snapshot(&m, "a", dir.path(), &opts, &at("t"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`nope`") && e.contains("`gone`") && e.contains("http://mem"),
        "{e}"
    );
    assert!(
        !dir.path().join("a/file-src.yaml").exists(),
        "nothing written on bad input"
    );
}

#[test]
fn unknown_type_is_skipped_and_a_failed_read_keeps_the_old_file() {
    let mut m = cluster();
    m.add(
        "ghost",
        "unknown",
        "com.example.Missing",
        json!({}),
        json!([]),
    );
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let before = std::fs::read(&sink).unwrap();
    m.broken_offsets.insert("orders-sink".into());
    m.set_offsets("file-src", source_offsets(99));
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(
        outcomes(&r),
        vec![
            ("file-src".into(), SnapshotOutcome::Updated),
            ("ghost".into(), SnapshotOutcome::Skipped),
            ("orders-sink".into(), SnapshotOutcome::Failed)
        ]
    );
    let failed = r.failed();
    assert!(failed[0].message.as_deref().unwrap().contains("boom"));
    assert_eq!(std::fs::read(&sink).unwrap(), before);
    assert!(!dir.path().join("a/ghost.yaml").exists());
}

#[test]
fn stale_files_are_reported_and_pruned_only_with_prune() {
    let mut m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    m.connectors.remove("file-src");
    let src = dir.path().join("a/file-src.yaml");
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(r.stale.len(), 1);
    assert_eq!(
        (r.stale[0].name.as_str(), r.stale[0].pruned),
        ("file-src", false)
    );
    assert!(src.exists());
    // A selection that does not cover the stale connector leaves it alone.
    let only_sinks = SnapshotOptions {
        selector: Selector::new(&[], Some(ConnectorType::Sink)).unwrap(),
        prune: true,
        ..SnapshotOptions::default()
    };
    assert!(run(&m, dir.path(), &only_sinks).stale.is_empty());
    assert!(src.exists());
    let prune = SnapshotOptions {
        prune: true,
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &prune);
    assert!(r.stale[0].pruned);
    assert!(!src.exists());
    assert!(dir.path().join("a/orders-sink.yaml").exists());
}

#[test]
fn with_config_redacts_declared_and_named_secrets_and_keeps_provider_refs() {
    let mut m = Mem::new();
    m.add(
        "jdbc",
        "sink",
        "com.example.Jdbc",
        json!({"connection.pw": "hunter2", "db.secret.thing": "s3cr3t",
               "ssl.key.password": "${file:/etc/kafka/secrets.properties:ssl}", "topics": "t"}),
        sink_offsets(1),
    );
    m.password_keys
        .insert("com.example.Jdbc".into(), vec!["connection.pw".into()]);
    let dir = tempfile::tempdir().unwrap();
    let opts = SnapshotOptions {
        with_config: true,
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &opts);
    assert_eq!(
        r.connectors[0].redacted,
        vec!["connection.pw", "db.secret.thing"]
    );
    let text = std::fs::read_to_string(dir.path().join("a/jdbc.yaml")).unwrap();
    assert!(
        !text.contains("hunter2") && !text.contains("s3cr3t"),
        "{text}"
    );
    assert!(text.contains("KCO_SECRET_JDBC_CONNECTION_PW"), "{text}");
    assert!(
        text.contains("${file:/etc/kafka/secrets.properties:ssl}"),
        "{text}"
    );
    assert!(!format!("{r:?}").contains("hunter2"));
    // Plugin definitions are read once per class.
    let defs = m
        .calls()
        .iter()
        .filter(|c| c.contains("connector-plugins"))
        .count();
    assert_eq!(defs, 1);
    // A later snapshot without --with-config keeps the captured config.
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(r.connectors[0].outcome, SnapshotOutcome::Unchanged);
    let again = std::fs::read_to_string(dir.path().join("a/jdbc.yaml")).unwrap();
    assert_eq!(again, text);
}

#[test]
fn old_connect_is_a_clear_error_and_writes_nothing() {
    let mut m = cluster();
    m.version = "3.4.1".into();
    let dir = tempfile::tempdir().unwrap();
    let e = snapshot(&m, "a", dir.path(), &SnapshotOptions::default(), &at("t")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("3.4.1") && msg.contains("3.5"), "{msg}");
    assert!(!dir.path().join("a").exists());
}
