//! Sink snapshot files for the tests that kill, interrupt or undo an apply: one partition of
//! topic `t`, recorded RUNNING on cluster `a`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use kco::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{ConnectorState, ConnectorType};

pub const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// Partition 0 of topic `t` at `offset`, as Connect lists it.
pub fn sink_offsets(offset: i64) -> Value {
    json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": offset}}])
}

/// Writes `<dir>/<name>.yaml` (creating `dir`), with `config` when given.
pub fn write_sink_file(
    dir: &Path,
    name: &str,
    offset: i64,
    config: Option<BTreeMap<String, String>>,
) {
    let file = OffsetsFile::new(
        Metadata {
            name: name.into(),
            cluster: "a".into(),
            kafka_cluster_id: None,
            connect_version: None,
            connector_class: Some(SINK.into()),
            connector_type: ConnectorType::Sink,
            state: Some(ConnectorState::Running),
            captured_at: None,
        },
        serde_json::from_value(sink_offsets(offset)).unwrap(),
        config,
    );
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(path, file.render(DEFAULT_SCHEMA_REF)).unwrap();
}
