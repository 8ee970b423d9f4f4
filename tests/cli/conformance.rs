//! The conformance suite (`support::conformance`) against the one fake, in each mode it plays:
//! Kafka Connect, and Confluent Cloud's managed connectors. tests/e2e runs the same suite
//! against the real worker, which is what holds the fake's Connect mode to Connect.

use std::collections::BTreeMap;
use std::time::Duration;

use kco::fake::{ConnectorSpec, FakeConnect, FakeConnectBuilder, State};
use kco::model::PatchEntry;
use serde_json::json;

use crate::support::conformance::{run, Subject};

const CLASS: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";

fn position(file: &str, at: i64) -> serde_json::Value {
    json!({"partition": {"filename": file}, "offset": {"position": at}})
}

fn source_config(name: &str) -> BTreeMap<String, String> {
    [
        ("connector.class", CLASS),
        ("tasks.max", "1"),
        ("file", &*format!("/tmp/{name}.txt")),
        ("topic", "conformance"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The suite on `builder`'s fake, with a RUNNING FileStream source `src` at 120 of `a.txt`.
fn conforms(builder: FakeConnectBuilder) {
    let spec = ConnectorSpec::source("src", CLASS)
        .state(State::Running)
        .offsets(json!([position("a.txt", 120)]));
    let fake = builder.connector(spec).in_process();
    let service = fake.client();
    let rewound: Vec<PatchEntry> = serde_json::from_value(json!([position("a.txt", 0)])).unwrap();
    run(&Subject {
        service: &*service,
        connector: "src",
        rewound,
        config: &source_config,
        patience: Duration::from_secs(10),
    });
}

#[test]
fn the_fake_in_kafka_connect_mode_conforms() {
    conforms(FakeConnect::builder());
}

#[test]
fn the_fake_in_confluent_cloud_mode_conforms() {
    conforms(FakeConnect::builder().confluent_cloud("env-abc123", "lkc-xyz789"));
}
