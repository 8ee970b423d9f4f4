//! Proves the fake Connect worker's semantics with raw HTTP calls, so CLI tests can rely on it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::Method;
use serde_json::{json, Value};

use crate::fake_connect::{
    ConnectorSpec, FakeConnect, Fault, PluginSpec, State, REQUEST_TIMED_OUT, STALE_CONFIG,
};

pub(super) const PG: &str = "io.debezium.connector.postgresql.PostgresConnector";
pub(super) const S3: &str = "io.confluent.connect.s3.S3SinkConnector";
pub(super) const ALTERED: &str = "The offsets for this connector have been altered successfully";

pub(super) fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// One call; returns the status and the JSON body (`Null` when empty).
pub(super) fn send(
    client: &Client,
    fake: &FakeConnect,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client.request(method, format!("{}{path}", fake.url()));
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().expect("request to the fake");
    let status = response.status().as_u16();
    let text = response.text().unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, body)
}

pub(super) fn call(
    fake: &FakeConnect,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    send(&client(), fake, method, path, body.as_ref())
}

pub(super) fn err(code: u16, message: &str) -> (u16, Value) {
    (code, json!({ "error_code": code, "message": message }))
}

pub(super) fn stopped_required(name: &str) -> (u16, Value) {
    err(
        400,
        &format!(
            "Connectors must be in the STOPPED state before their offsets can be modified. This \
             can be done for the specified connector by issuing a 'PUT' request to the \
             '/connectors/{name}/stop' endpoint"
        ),
    )
}

pub(super) fn altered() -> (u16, Value) {
    (200, json!({ "message": ALTERED }))
}

pub(super) fn pg_offsets() -> Value {
    json!([
        { "partition": { "server": "a" }, "offset": { "lsn": 1 } },
        { "partition": { "server": "b" }, "offset": { "lsn": 2 } },
    ])
}

/// A fake with a running source `pg` (offsets a, b) and a stopped sink `s3` (topic t, p0 = 5).
pub(super) fn two_connectors() -> FakeConnect {
    FakeConnect::builder()
        .source("pg", PG, State::Running, pg_offsets())
        .sink(
            "s3",
            S3,
            State::Stopped,
            json!([{ "partition": { "kafka_topic": "t", "kafka_partition": 0 }, "offset": { "kafka_offset": 5 } }]),
        )
        .start()
}

pub(super) fn patch(fake: &FakeConnect, name: &str, offsets: Value) -> (u16, Value) {
    let path = format!("/connectors/{name}/offsets");
    call(fake, "PATCH", &path, Some(json!({ "offsets": offsets })))
}

mod endpoints;
mod faults;
mod offsets;
mod recording;
