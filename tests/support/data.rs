//! Test data, built the one way: offsets as Connect lists them, and snapshot files written
//! through kco's own model (`OffsetsFile`), sealed as `kco snapshot` would write them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use kco::model::file::{Metadata, OffsetsFile, REPO_SCHEMA_REF};
use kco::model::{ConnectorState, ConnectorType, OffsetEntry};

pub const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
pub const SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
/// A source class the offset shapes table does not know: its offsets are not checked, so they
/// can hold every kind of value ([`super::fakes::tricky_source_offsets`]).
pub const TRICKY_SOURCE: &str = "com.example.TrickySourceConnector";

/// One sink partition as Connect lists it: `partition` of `topic` at `offset`.
pub fn sink_entry(topic: &str, partition: i64, offset: i64) -> Value {
    json!({"partition": {"kafka_topic": topic, "kafka_partition": partition},
           "offset": {"kafka_offset": offset}})
}

/// A sink's offsets: `(partition, offset)` pairs of `topic`, in the order given.
pub fn sink_offsets(topic: &str, parts: &[(i64, i64)]) -> Value {
    parts
        .iter()
        .map(|&(p, o)| sink_entry(topic, p, o))
        .collect()
}

/// Partition 0 of topic `t` at `offset`: the one-partition sink of most tests.
pub fn sink_offset(offset: i64) -> Value {
    sink_offsets("t", &[(0, offset)])
}

/// A FileStreamSource's offsets: file `/data/in.txt` at `position`.
pub fn source_offsets(position: i64) -> Value {
    json!([{"partition": {"filename": "/data/in.txt"}, "offset": {"position": position}}])
}

/// A snapshot file being built: cluster `a`, recorded RUNNING, the other metadata empty
/// unless set.
pub struct SnapshotFile {
    meta: Metadata,
    offsets: Value,
    config: Option<BTreeMap<String, String>>,
}

impl SnapshotFile {
    pub fn new(name: &str, kind: ConnectorType, offsets: Value) -> SnapshotFile {
        SnapshotFile {
            meta: Metadata {
                name: name.into(),
                cluster: "a".into(),
                kafka_cluster_id: None,
                connect_version: None,
                connector_class: None,
                connector_type: kind,
                state: Some(ConnectorState::Running),
                captured_at: None,
                observed_at: None,
                offsets_from: None,
            },
            offsets,
            config: None,
        }
    }

    /// As `kco snapshot` records a connector of a Connect 4.1.0 worker that names its class
    /// `FileStreamSink` or `FileStreamSource`, captured at 2026-01-01T00:00:00Z.
    pub fn captured(name: &str, kind: ConnectorType, offsets: Value) -> SnapshotFile {
        let class = match kind {
            ConnectorType::Sink => "FileStreamSink",
            ConnectorType::Source => "FileStreamSource",
        };
        SnapshotFile::new(name, kind, offsets)
            .version("4.1.0")
            .class(class)
            .captured_at("2026-01-01T00:00:00Z")
    }

    pub fn sink(name: &str, offsets: Value) -> SnapshotFile {
        SnapshotFile::new(name, ConnectorType::Sink, offsets)
    }

    pub fn source(name: &str, offsets: Value) -> SnapshotFile {
        SnapshotFile::new(name, ConnectorType::Source, offsets)
    }

    pub fn cluster(mut self, cluster: &str) -> SnapshotFile {
        self.meta.cluster = cluster.into();
        self
    }

    pub fn class(mut self, class: &str) -> SnapshotFile {
        self.meta.connector_class = Some(class.into());
        self
    }

    pub fn version(mut self, version: &str) -> SnapshotFile {
        self.meta.connect_version = Some(version.into());
        self
    }

    pub fn state(mut self, state: Option<ConnectorState>) -> SnapshotFile {
        self.meta.state = state;
        self
    }

    pub fn captured_at(mut self, time: &str) -> SnapshotFile {
        self.meta.captured_at = Some(time.into());
        self
    }

    pub fn config(mut self, config: Option<BTreeMap<String, String>>) -> SnapshotFile {
        self.config = config;
        self
    }

    /// The file's text, sealed, with the `$schema` line kco wrote before it kept the schema
    /// beside the files (such files load and keep their line; docs/file-format.md), so that
    /// the commits of the history tests keep their ids.
    pub fn text(self) -> String {
        let entries: Vec<OffsetEntry> = serde_json::from_value(self.offsets).unwrap();
        OffsetsFile::new(self.meta, entries, self.config).render(REPO_SCHEMA_REF)
    }

    /// Writes the file at `path` (creating its directory); returns `path`.
    pub fn write(self, path: &Path) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, self.text()).unwrap();
        path.to_path_buf()
    }

    /// Writes `<dir>/<name>.yaml`; returns its path.
    pub fn write_in(self, dir: &Path) -> PathBuf {
        let path = dir.join(format!("{}.yaml", self.meta.name));
        self.write(&path)
    }
}

/// Someone's change to the snapshot file at `path`: its offsets replaced by `offsets` (a JSON
/// array of `{partition, offset}`), everything else kept (capturedAt too), re-sealed as
/// `kco fmt` would. In git history that is a change, where `kco snapshot` rewriting the file
/// from live is an observation.
pub fn hand_edit(path: &Path, offsets: Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut file = OffsetsFile::parse(path, &text).unwrap();
    file.offsets = serde_json::from_value::<Vec<OffsetEntry>>(offsets).unwrap();
    kco::model::sort_entries(&mut file.offsets);
    file.seal();
    let schema_ref = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(kco::model::file::SCHEMA_COMMENT))
        .unwrap_or(REPO_SCHEMA_REF)
        .to_string();
    std::fs::write(path, file.render(&schema_ref)).unwrap();
}
