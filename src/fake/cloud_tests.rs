//! The fake's Confluent Cloud mode: its own rules, through the client of src/client
//! (`offsets_read`, `request_alter`, `alter_status`, `create_at`, `list_connectors`), and
//! over HTTP where the wire itself is the point (headers, paths outside the base path).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::{FakeConnect, FakeConnectBuilder, Fault, State, PENDING_REQUEST, STALE_AGE};
use crate::client::{AlterKind, Backend, Phase, Service};
use crate::model::{ConnectorState, PatchEntry};

const ENV: &str = "env-abc123";
const LKC: &str = "lkc-xyz789";
const BASE: &str = "/connect/v1/environments/env-abc123/clusters/lkc-xyz789";

fn cloud() -> FakeConnectBuilder {
    FakeConnect::builder().confluent_cloud(ENV, LKC)
}

fn sink_offsets(offset: i64) -> Value {
    json!([{ "partition": { "kafka_topic": "orders", "kafka_partition": 0 },
             "offset": { "kafka_offset": offset } }])
}

fn with_sink(builder: FakeConnectBuilder) -> FakeConnect {
    builder
        .sink("s3", "S3SinkConnector", State::Running, sink_offsets(10))
        .in_process()
}

fn entries(v: Value) -> Vec<PatchEntry> {
    serde_json::from_value(v).expect("patch entries")
}

fn kafka_offset(client: &dyn Service, name: &str) -> i64 {
    let read = client.offsets_read(name).expect("offsets read");
    let entry = &read.entries[0];
    serde_json::to_value(&entry.offset).unwrap()["kafka_offset"]
        .as_i64()
        .unwrap()
}

fn shown(client: &dyn Service, name: &str) -> ConnectorState {
    client
        .status(name)
        .expect("status")
        .state
        .expect("a known state")
}

#[test]
fn the_client_speaks_the_services_dialect_under_the_base_path() {
    let fake = with_sink(cloud());
    let client = fake.client();
    assert_eq!(
        client.backend(),
        &Backend::ConfluentCloud(crate::client::CloudIds {
            environment: ENV.into(),
            kafka_cluster: LKC.into(),
        })
    );
    let listing = client.list_connectors().expect("listing");
    assert_eq!(listing["s3"].class.as_deref(), Some("S3SinkConnector"));
    assert_eq!(
        listing["s3"].status.as_ref().and_then(|s| s.state),
        Some(ConnectorState::Running)
    );
    let read = client.offsets_read("s3").expect("read");
    assert_eq!(read.entries.len(), 1);
    let observed = read.observed_at.expect("observed_at");
    let age = SystemTime::now()
        .duration_since(observed)
        .unwrap_or_default();
    assert!(
        age < Duration::from_secs(5),
        "observed now, was {age:?} ago"
    );
    let paths: Vec<String> = fake.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            format!("{BASE}/connectors?expand=id,info,status"),
            format!("{BASE}/connectors/s3/offsets"),
        ]
    );
}

#[test]
fn an_alter_request_moves_through_its_phases_on_status_reads_while_the_connector_shows_paused() {
    let fake = with_sink(cloud());
    let client = fake.client();
    let ack = client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(42)))
        .expect("202");
    assert_eq!(
        ack.id.as_deref(),
        Some(super::cloud_connector_id("s3").as_str())
    );
    assert_eq!(ack.kind.as_deref(), Some("PATCH"));
    assert!(ack.requested_at.is_some());
    assert_eq!(shown(&client, "s3"), ConnectorState::Paused);

    let first = client.alter_status("s3").expect("status");
    assert_eq!(first.phase, Phase::Pending);
    assert_eq!(first.applied_at, None);
    assert_eq!(kafka_offset(&client, "s3"), 10, "nothing changed yet");
    let second = client.alter_status("s3").expect("status");
    assert_eq!(second.phase, Phase::PendingValidation);
    assert_eq!(shown(&client, "s3"), ConnectorState::Paused);

    let third = client.alter_status("s3").expect("status");
    assert_eq!(third.phase, Phase::Applied);
    let applied_at = third.applied_at.expect("applied_at");
    assert_eq!(third.previous_offsets, Some(entries(sink_offsets(10))));
    assert_eq!(kafka_offset(&client, "s3"), 42);
    assert_eq!(shown(&client, "s3"), ConnectorState::Running, "state back");
    assert!(fake.observed_at("s3").unwrap() > applied_at);

    // The status keeps answering the last request, applied.
    assert_eq!(client.alter_status("s3").unwrap().phase, Phase::Applied);
    assert_eq!(fake.alter_requests("s3"), 1);
}

#[test]
fn every_request_of_a_connector_carries_the_connectors_id() {
    let fake = with_sink(cloud().alter_phase_reads(0));
    let client = fake.client();
    let first = client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(1)))
        .unwrap();
    assert_eq!(client.alter_status("s3").unwrap().phase, Phase::Applied);
    let second = client.request_alter("s3", AlterKind::Delete, &[]).unwrap();
    assert_eq!(
        first.id, second.id,
        "the id names the connector, not the request"
    );
    assert_eq!(first.id, Some(super::cloud_connector_id("s3")));
    let status = client.alter_status("s3").unwrap();
    assert_eq!(status.request.id, first.id);
    assert_eq!(status.request.kind.as_deref(), Some("DELETE"));
}

#[test]
fn phases_last_as_many_reads_as_configured() {
    let fake = with_sink(cloud().alter_phase_reads(2));
    let client = fake.client();
    client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(5)))
        .unwrap();
    let phases: Vec<Phase> = (0..5)
        .map(|_| client.alter_status("s3").unwrap().phase)
        .collect();
    use Phase::*;
    assert_eq!(
        phases,
        [
            Pending,
            Pending,
            PendingValidation,
            PendingValidation,
            Applied
        ]
    );

    let instant = with_sink(cloud().alter_phase_reads(0));
    let client = instant.client();
    client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(5)))
        .unwrap();
    assert_eq!(client.alter_status("s3").unwrap().phase, Applied);
}

#[test]
fn one_request_at_a_time_per_connector() {
    let fake = cloud()
        .source("pg", "PgSource", State::Paused, json!([]))
        .sink("s3", "S3SinkConnector", State::Running, sink_offsets(10))
        .in_process();
    let client = fake.client();
    let patch = entries(sink_offsets(1));
    client
        .request_alter("s3", AlterKind::Patch, &patch)
        .unwrap();
    let refused = client
        .request_alter("s3", AlterKind::Patch, &patch)
        .expect_err("a second request while one is pending");
    assert_eq!(refused.status(), Some(409));
    assert_eq!(refused.message(), Some(PENDING_REQUEST));
    // Another connector is not held up.
    client.request_alter("pg", AlterKind::Delete, &[]).unwrap();
    fake.finish_alter("s3");
    assert_eq!(fake.alter_phase("s3").as_deref(), Some("APPLIED"));
    client
        .request_alter("s3", AlterKind::Patch, &patch)
        .expect("accepted once the last one is over");
    assert_eq!(fake.alter_requests("s3"), 2);
    // The paused source comes back paused.
    fake.finish_alter("pg");
    assert_eq!(shown(&client, "pg"), ConnectorState::Paused);
}

#[test]
fn a_failed_request_changes_nothing_and_the_state_comes_back() {
    let fake = with_sink(cloud().alter_fails("s3", "Offsets are out of range"));
    let client = fake.client();
    client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(99)))
        .unwrap();
    let reads: Vec<_> = (0..3).map(|_| client.alter_status("s3").unwrap()).collect();
    let status = &reads[2];
    assert_eq!(status.phase, Phase::Failed);
    assert_eq!(status.message, "Offsets are out of range");
    assert_eq!(status.applied_at, None);
    assert_eq!(status.previous_offsets, None);
    assert_eq!(kafka_offset(&client, "s3"), 10);
    assert_eq!(shown(&client, "s3"), ConnectorState::Running);
}

#[test]
fn a_stuck_request_stays_pending_and_an_unknown_phase_is_shown_as_spelled() {
    let fake = cloud()
        .sink("a", "S3SinkConnector", State::Running, sink_offsets(1))
        .sink("b", "S3SinkConnector", State::Running, sink_offsets(1))
        .alter_stuck("a")
        .unknown_phase("b", "REVIEWING")
        .in_process();
    let client = fake.client();
    for name in ["a", "b"] {
        client
            .request_alter(name, AlterKind::Patch, &entries(sink_offsets(7)))
            .unwrap();
    }
    for _ in 0..10 {
        assert_eq!(client.alter_status("a").unwrap().phase, Phase::Pending);
    }
    fake.finish_alter("a");
    assert_eq!(client.alter_status("a").unwrap().phase, Phase::Pending);
    assert_eq!(shown(&client, "a"), ConnectorState::Paused);
    assert_eq!(kafka_offset(&client, "a"), 1);

    let phases: Vec<Phase> = (0..3)
        .map(|_| client.alter_status("b").unwrap().phase)
        .collect();
    assert_eq!(
        phases,
        [
            Phase::Pending,
            Phase::Other("REVIEWING".into()),
            Phase::Applied
        ]
    );
    assert_eq!(kafka_offset(&client, "b"), 7);
}

#[test]
fn stale_reads_answer_an_old_observation_of_the_offsets_before_the_change() {
    let fake = with_sink(cloud().alter_phase_reads(0));
    let client = fake.client();
    client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(42)))
        .unwrap();
    let applied_at = client.alter_status("s3").unwrap().applied_at.unwrap();
    fake.stale_for("s3", 2);
    for _ in 0..2 {
        let read = client.offsets_read("s3").unwrap();
        assert_eq!(read.entries, client_entries(sink_offsets(10)));
        let age = SystemTime::now()
            .duration_since(read.observed_at.unwrap())
            .unwrap();
        assert!(age > Duration::from_secs(120), "{age:?}");
        assert!(read.observed_at.unwrap() < applied_at);
    }
    let fresh = client.offsets_read("s3").unwrap();
    assert_eq!(fresh.entries, client_entries(sink_offsets(42)));
    assert!(fresh.observed_at.unwrap() > applied_at);

    fake.stale_for("s3", 5);
    fake.observe("s3");
    assert!(client.offsets_read("s3").unwrap().observed_at.unwrap() > applied_at);
}

fn client_entries(v: Value) -> Vec<crate::model::OffsetEntry> {
    serde_json::from_value(v).unwrap()
}

#[test]
fn stale_observations_apply_to_every_connectors_first_reads() {
    let fake = with_sink(cloud().stale_observations(1));
    let client = fake.client();
    let first = client.offsets_read("s3").unwrap().observed_at.unwrap();
    let second = client.offsets_read("s3").unwrap().observed_at.unwrap();
    assert!(second.duration_since(first).unwrap() >= STALE_AGE - Duration::from_secs(1));
}

#[test]
fn delete_requests_reset_all_or_the_given_partitions_and_sinks_must_name_theirs() {
    let two = json!([
        { "partition": { "kafka_topic": "t", "kafka_partition": 0 }, "offset": { "kafka_offset": 1 } },
        { "partition": { "kafka_topic": "t", "kafka_partition": 1 }, "offset": { "kafka_offset": 2 } },
    ]);
    let fake = cloud()
        .alter_phase_reads(0)
        .sink("s", "S3SinkConnector", State::Running, two.clone())
        .source(
            "pg",
            "PgSource",
            State::Running,
            json!([
            { "partition": { "server": "pg" }, "offset": { "lsn": 5 } }]),
        )
        .in_process();
    let client = fake.client();
    let bad = entries(json!([{ "partition": { "kafka_topic": "t" }, "offset": null }]));
    let refused = client
        .request_alter("s", AlterKind::Delete, &bad)
        .expect_err("a sink partition without kafka_partition");
    assert_eq!(refused.status(), Some(400));
    assert!(refused.message().unwrap().contains("kafka_partition"));
    let bad_patch =
        entries(json!([{ "partition": { "topic": "t" }, "offset": { "kafka_offset": 1 } }]));
    let refused = client.request_alter("s", AlterKind::Patch, &bad_patch);
    assert_eq!(refused.unwrap_err().status(), Some(400));
    assert_eq!(fake.alter_requests("s"), 0);

    let one = entries(
        json!([{ "partition": { "kafka_topic": "t", "kafka_partition": 1 }, "offset": null }]),
    );
    client.request_alter("s", AlterKind::Delete, &one).unwrap();
    assert_eq!(client.alter_status("s").unwrap().phase, Phase::Applied);
    assert_eq!(fake.offsets("s"), json!([two[0]]));

    client.request_alter("pg", AlterKind::Delete, &[]).unwrap();
    let status = client.alter_status("pg").unwrap();
    assert_eq!(status.phase, Phase::Applied);
    assert!(status.message.contains("reset"), "{}", status.message);
    assert_eq!(fake.offsets("pg"), json!([]));
    let bodies: Vec<Value> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .filter_map(|r| r.body)
        .collect();
    assert_eq!(bodies.last(), Some(&json!({ "type": "DELETE" })));
}

#[test]
fn create_at_starts_the_connector_at_its_position() {
    let fake = cloud().in_process();
    let client = fake.client();
    let config = [
        ("connector.class".to_string(), "S3SinkConnector".to_string()),
        ("topics".to_string(), "orders".to_string()),
    ]
    .into_iter()
    .collect();
    let bad = entries(
        json!([{ "partition": { "kafka_topic": "orders" }, "offset": { "kafka_offset": 1 } }]),
    );
    let refused = client
        .create_at("new", &config, &bad)
        .expect_err("invalid offsets");
    assert_eq!(refused.status(), Some(400));
    assert!(fake.connector_names().is_empty(), "nothing created");

    client
        .create_at("new", &config, &entries(sink_offsets(77)))
        .expect("created");
    assert_eq!(kafka_offset(&client, "new"), 77);
    assert_eq!(shown(&client, "new"), ConnectorState::Running);
    let refused = client.create("other", &config, Some(crate::model::TargetState::Stopped));
    assert_eq!(refused.unwrap_err().status(), Some(400), "no initial_state");
}

#[test]
fn what_connect_has_and_the_service_has_not_is_absent() {
    let fake = with_sink(cloud());
    // Connect's own calls, sent to the service: it has none of them.
    let raw = crate::client::Connect::new(fake.transport());
    assert_eq!(raw.server_info().unwrap_err().status(), Some(404));
    assert_eq!(raw.stop("s3").unwrap_err().status(), Some(404));
    let moved = entries(sink_offsets(1));
    assert_eq!(
        raw.patch_offsets("s3", &moved).unwrap_err().status(),
        Some(405)
    );
    assert_eq!(raw.reset_offsets("s3").unwrap_err().status(), Some(405));
    let plugin = raw.plugin_config("S3SinkConnector");
    assert_eq!(plugin.unwrap_err().status(), Some(404));
    // The service's client does not send them: each is refused, naming what it lacks.
    let client = fake.client();
    let sent = fake.requests().len();
    let refused = [
        client.stop("s3").unwrap_err(),
        client.patch_offsets("s3", &moved).unwrap_err(),
        client.reset_offsets("s3").unwrap_err(),
        client.plugin_config("S3SinkConnector").unwrap_err(),
    ];
    for e in &refused {
        assert!(e.had_no_effect() && e.status().is_none(), "{e}");
        assert!(
            e.to_string().contains("Confluent Cloud has no such call"),
            "{e}"
        );
    }
    assert!(refused[0].to_string().contains("no STOPPED state"));
    assert_eq!(fake.requests().len(), sent, "nothing sent");
    assert_eq!(kafka_offset(&client, "s3"), 10);
    assert_eq!(fake.state("s3"), Some(State::Running));
    // What it has: pause and resume.
    client.pause("s3").unwrap();
    assert_eq!(fake.state("s3"), Some(State::Paused));
    client.resume("s3").unwrap();
    assert_eq!(fake.state("s3"), Some(State::Running));
}

#[test]
fn a_pause_during_a_request_is_the_state_that_comes_back() {
    let fake = with_sink(cloud());
    let client = fake.client();
    client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(3)))
        .unwrap();
    client.pause("s3").unwrap();
    fake.finish_alter("s3");
    assert_eq!(fake.state("s3"), Some(State::Paused));
}

#[test]
fn the_api_key_is_checked_and_a_refusal_names_nothing_secret() {
    let fake = with_sink(cloud().api_key("KEY", "SECRET"));
    assert_eq!(fake.client().list_connectors().unwrap().len(), 1);
    let wrong = fake.client_as("KEY", "WRONG");
    let err = wrong.offsets_read("s3").expect_err("wrong secret");
    assert_eq!(err.status(), Some(401));
    let said = format!("{err} {err:?}");
    assert!(
        !said.contains("SECRET") && !said.contains("WRONG"),
        "{said}"
    );
    assert_eq!(fake.requests()[1].status, Some(401));
}

#[test]
fn a_rate_limited_answer_tells_the_client_when_to_come_back_and_a_pending_request_is_named() {
    let fake = cloud()
        .sink("s3", "S3SinkConnector", State::Running, sink_offsets(10))
        .fault(Fault::on("GET", "*/offsets").nth(1).rate_limited(2))
        .in_process();
    let client = fake.client();
    let limited = client.offsets_read("s3").expect_err("429");
    assert_eq!(limited.status(), Some(429));
    assert_eq!(limited.retry_after(), Some(Duration::from_secs(2)));
    assert!(limited.is_retryable());
    assert_eq!(kafka_offset(&client, "s3"), 10);

    client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(1)))
        .unwrap();
    let pending = client
        .request_alter("s3", AlterKind::Patch, &entries(sink_offsets(1)))
        .unwrap_err();
    assert_eq!(
        pending.problem(),
        Some(crate::client::Problem::RequestPending)
    );
    assert!(!pending.is_retryable());
}

/// One request over HTTP/1.1; returns the whole answer (head and body).
fn raw(fake: &FakeConnect, method: &str, path: &str, auth: Option<&str>) -> String {
    let mut stream = TcpStream::connect(fake.addr()).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
    if let Some(auth) = auth {
        head.push_str(&format!("Authorization: {auth}\r\n"));
    }
    head.push_str("Content-Length: 0\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

fn body_of(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

#[test]
fn over_http_errors_take_the_services_shape_and_a_429_says_when_to_retry() {
    let fake = cloud()
        .sink("s3", "S3SinkConnector", State::Running, sink_offsets(10))
        .fault(Fault::on("GET", "*/offsets").nth(1).rate_limited(3))
        .start();
    let wrong = raw(
        &fake,
        "GET",
        "/connect/v1/environments/env-other/clusters/lkc-xyz789/connectors",
        None,
    );
    assert!(wrong.starts_with("HTTP/1.1 404"), "{wrong}");
    assert_eq!(body_of(&wrong)["error"]["code"], 404);
    assert!(body_of(&wrong)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("env-other"));
    assert!(raw(&fake, "GET", "/", None).starts_with("HTTP/1.1 404"));
    assert!(raw(&fake, "GET", "/connectors", None).starts_with("HTTP/1.1 404"));
    let missing = raw(
        &fake,
        "GET",
        &format!("{BASE}/connectors/nope/status"),
        None,
    );
    assert_eq!(
        body_of(&missing),
        json!({ "error": { "code": 404, "message": "Connector nope not found" } })
    );

    let limited = raw(&fake, "GET", &format!("{BASE}/connectors/s3/offsets"), None);
    assert!(limited.starts_with("HTTP/1.1 429"), "{limited}");
    assert!(limited.contains("\r\nRetry-After: 3\r\n"), "{limited}");
    assert_eq!(body_of(&limited)["error"]["code"], 429);
    let read = raw(&fake, "GET", &format!("{BASE}/connectors/s3/offsets"), None);
    let body = body_of(&read);
    assert_eq!(body["name"], "s3");
    assert!(body["id"].as_str().unwrap().starts_with("lcc-"));
    let observed = body["metadata"]["observed_at"].as_str().unwrap();
    assert!(
        observed.contains(' ') && observed.ends_with("+00:00"),
        "{observed}"
    );
    let listing = body_of(&raw(
        &fake,
        "GET",
        &format!("{BASE}/connectors?expand=id,info,status"),
        None,
    ));
    assert_eq!(listing["s3"]["id"]["id"], body["id"]);
    assert_eq!(listing["s3"]["status"]["connector"]["state"], "RUNNING");
}

#[test]
fn over_http_the_api_key_is_required() {
    let fake = cloud().api_key("KEY", "SECRET").start();
    let path = format!("{BASE}/connectors");
    let refused = raw(&fake, "GET", &path, None);
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(!refused.contains("SECRET"));
    let basic = super::cloud_auth("KEY", "SECRET");
    assert!(raw(&fake, "GET", &path, Some(&basic)).starts_with("HTTP/1.1 200"));
    let wrong = super::cloud_auth("KEY", "NOPE");
    assert!(raw(&fake, "GET", &path, Some(&wrong)).starts_with("HTTP/1.1 401"));
}

#[test]
fn status_timestamps_use_the_compact_spelling() {
    let fake = cloud()
        .clock_at("2024-02-20T15:14:19Z")
        .alter_phase_reads(0)
        .sink("s3", "S3SinkConnector", State::Running, sink_offsets(10))
        .start();
    let post = {
        let mut stream = TcpStream::connect(fake.addr()).unwrap();
        let body = r#"{"type":"PATCH","offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":1}}]}"#;
        let head = format!(
            "POST {BASE}/connectors/s3/offsets/request HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    assert!(post.starts_with("HTTP/1.1 202"), "{post}");
    assert_eq!(body_of(&post)["requested_at"], "2024-02-20 15:14:19+00:00");
    let status = body_of(&raw(
        &fake,
        "GET",
        &format!("{BASE}/connectors/s3/offsets/request/status"),
        None,
    ));
    assert_eq!(status["status"]["phase"], "APPLIED");
    assert_eq!(status["applied_at"], "2024-02-20T15:14:19+0000");
    assert_eq!(
        status["request"]["requested_at"],
        "2024-02-20 15:14:19+00:00"
    );
    let read = body_of(&raw(
        &fake,
        "GET",
        &format!("{BASE}/connectors/s3/offsets"),
        None,
    ));
    assert_eq!(read["metadata"]["observed_at"], "2024-02-20 15:14:20+00:00");
}

#[test]
fn cloud_settings_without_the_mode_are_refused() {
    let result =
        std::panic::catch_unwind(|| FakeConnect::builder().alter_phase_reads(2).in_process());
    assert!(result.is_err());
}
