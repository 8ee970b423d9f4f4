//! The offsets API: STOPPED requirement, merge semantics, validation, reset.

use super::*;

#[test]
fn patch_is_refused_while_running_and_while_paused() {
    let fake = two_connectors();
    let update = json!([{ "partition": { "server": "a" }, "offset": { "lsn": 9 } }]);
    assert_eq!(patch(&fake, "pg", update.clone()), stopped_required("pg"));
    assert_eq!(
        call(&fake, "DELETE", "/connectors/pg/offsets", None),
        stopped_required("pg")
    );

    assert_eq!(
        call(&fake, "PUT", "/connectors/pg/pause", None),
        (202, Value::Null)
    );
    let (_, lagging) = call(&fake, "GET", "/connectors/pg/status", None);
    assert_eq!(lagging["connector"]["state"], "RUNNING");
    let (_, paused) = call(&fake, "GET", "/connectors/pg/status", None);
    assert_eq!(paused["connector"]["state"], "PAUSED");
    assert_eq!(
        paused["tasks"],
        json!([{ "id": 0, "state": "PAUSED", "worker_id": fake.addr().to_string() }])
    );
    assert_eq!(patch(&fake, "pg", update), stopped_required("pg"));
    assert_eq!(fake.offsets("pg"), pg_offsets());
}

#[test]
fn stop_takes_effect_only_after_status_polls() {
    let fake = two_connectors();
    let update = json!([{ "partition": { "server": "a" }, "offset": { "lsn": 9 } }]);
    assert_eq!(
        call(&fake, "PUT", "/connectors/pg/stop", None),
        (204, Value::Null)
    );
    assert_eq!(fake.state("pg"), Some(State::Stopped));
    assert_eq!(
        patch(&fake, "pg", update.clone()),
        stopped_required("pg"),
        "tasks still there"
    );

    let (_, first) = call(&fake, "GET", "/connectors/pg/status", None);
    assert_eq!(
        (
            first["connector"]["state"].as_str(),
            first["tasks"].as_array().unwrap().len()
        ),
        (Some("RUNNING"), 1)
    );
    let (_, second) = call(&fake, "GET", "/connectors/pg/status", None);
    assert_eq!(
        (second["connector"]["state"].as_str(), &second["tasks"]),
        (Some("STOPPED"), &json!([]))
    );

    assert_eq!(patch(&fake, "pg", update), altered());
    assert_eq!(
        fake.offset("pg", &json!({ "server": "a" })),
        Some(json!({ "lsn": 9 }))
    );

    // With three lagging reads, the third read still shows RUNNING.
    let slow = FakeConnect::builder()
        .transition_reads(3)
        .source("pg", PG, State::Running, json!([]))
        .start();
    call(&slow, "PUT", "/connectors/pg/stop", None);
    for _ in 0..3 {
        assert_eq!(
            call(&slow, "GET", "/connectors/pg/status", None).1["connector"]["state"],
            "RUNNING"
        );
    }
    assert_eq!(
        call(&slow, "GET", "/connectors?expand=status", None).1["pg"]["status"]["connector"]
            ["state"],
        "STOPPED"
    );

    // With none, stop is immediate.
    let fast = FakeConnect::builder()
        .transition_reads(0)
        .source("pg", PG, State::Running, json!([]))
        .start();
    call(&fast, "PUT", "/connectors/pg/stop", None);
    assert_eq!(
        patch(
            &fast,
            "pg",
            json!([{ "partition": { "f": 1 }, "offset": { "p": 2 } }])
        ),
        altered()
    );
}

#[test]
fn patch_merges_listed_partitions_and_null_removes() {
    let fake = two_connectors();
    fake.set_state("pg", State::Stopped);
    let result = patch(
        &fake,
        "pg",
        json!([
            { "partition": { "server": "a" }, "offset": null },
            { "partition": { "server": "b" }, "offset": { "lsn": 20, "ts": 1.5, "snap": true } },
            { "partition": { "server": "c" }, "offset": { "lsn": 3 } },
            { "partition": { "server": "c" }, "offset": { "lsn": 30 } },
            { "partition": { "server": "never" }, "offset": null },
        ]),
    );
    assert_eq!(result, altered());
    let expected = json!([
        { "partition": { "server": "b" }, "offset": { "lsn": 20, "ts": 1.5, "snap": true } },
        { "partition": { "server": "c" }, "offset": { "lsn": 30 } },
    ]);
    assert_eq!(fake.offsets("pg"), expected);
    assert_eq!(
        call(&fake, "GET", "/connectors/pg/offsets", None),
        (200, json!({ "offsets": expected }))
    );
}

#[test]
fn sink_offsets_are_validated_all_or_nothing_and_normalized() {
    let fake = two_connectors();
    let before = fake.offsets("s3");
    let good = json!({ "partition": { "kafka_topic": "t", "kafka_partition": 1 }, "offset": { "kafka_offset": 7 } });
    let cases = [
        (
            json!({ "kafka_partition": 0 }),
            json!({ "kafka_offset": 1 }),
            "must contain the keys",
        ),
        (
            json!({ "kafka_topic": 3, "kafka_partition": 0 }),
            json!({ "kafka_offset": 1 }),
            "Kafka topic names must be valid strings",
        ),
        (
            json!({ "kafka_topic": "t", "kafka_partition": "x" }),
            json!({ "kafka_offset": 1 }),
            "Failed to parse the following Kafka partition value in the provided offsets: 'x'",
        ),
        (
            json!({ "kafka_topic": "t", "kafka_partition": 0 }),
            json!({ "kafka_offset": 1.5 }),
            "Failed to parse the following Kafka offset value",
        ),
        (
            json!({ "kafka_topic": "t", "kafka_partition": 0 }),
            json!({ "offset": 1 }),
            "should either be null or contain the key 'kafka_offset'",
        ),
        (
            Value::Null,
            json!({ "kafka_offset": 1 }),
            "cannot be null or missing",
        ),
    ];
    for (partition, offset, message) in cases {
        let (status, body) = patch(
            &fake,
            "s3",
            json!([good.clone(), { "partition": partition, "offset": offset }]),
        );
        assert_eq!(status, 400, "{partition} {offset}");
        assert!(
            body["message"].as_str().unwrap().contains(message),
            "{body}"
        );
        assert_eq!(
            fake.offsets("s3"),
            before,
            "nothing applied on a refused PATCH"
        );
    }
    // Numbers as strings are accepted and stored as numbers; null removes.
    let strings = json!([
        { "partition": { "kafka_topic": "t", "kafka_partition": "1" }, "offset": { "kafka_offset": "42" } },
        { "partition": { "kafka_topic": "t", "kafka_partition": 0 }, "offset": null },
    ]);
    assert_eq!(patch(&fake, "s3", strings), altered());
    assert_eq!(
        fake.offsets("s3"),
        json!([{ "partition": { "kafka_topic": "t", "kafka_partition": 1 }, "offset": { "kafka_offset": 42 } }])
    );
}

#[test]
fn source_values_must_be_primitives() {
    let fake = two_connectors();
    fake.set_state("pg", State::Stopped);
    for offset in [
        json!({ "pos": { "nested": 1 } }),
        json!({ "pos": [1, 2] }),
        json!("flat"),
    ] {
        let (status, _) = patch(
            &fake,
            "pg",
            json!([{ "partition": { "server": "a" }, "offset": offset }]),
        );
        assert_eq!(status, 400, "{offset}");
    }
    let (status, _) = patch(
        &fake,
        "pg",
        json!([{ "partition": { "server": ["a"] }, "offset": null }]),
    );
    assert_eq!(status, 400);
    assert_eq!(fake.offsets("pg"), pg_offsets());
}

#[test]
fn patch_body_errors() {
    let fake = two_connectors();
    let missing = err(
        400,
        "Partitions / offsets need to be provided for an alter offsets request",
    );
    assert_eq!(
        call(&fake, "PATCH", "/connectors/s3/offsets", Some(json!({}))),
        missing
    );
    assert_eq!(patch(&fake, "s3", json!([])), missing);
    let response = client()
        .patch(format!("{}/connectors/s3/offsets", fake.url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 500);
}

#[test]
fn delete_offsets_requires_stop_and_clears_everything() {
    let fake = two_connectors();
    assert_eq!(
        call(&fake, "DELETE", "/connectors/pg/offsets", None),
        stopped_required("pg")
    );
    let reset = json!({ "message": "The offsets for this connector have been reset successfully" });
    assert_eq!(
        call(&fake, "DELETE", "/connectors/s3/offsets", None),
        (200, reset)
    );
    assert_eq!(
        call(&fake, "GET", "/connectors/s3/offsets", None),
        (200, json!({ "offsets": [] }))
    );
}

#[test]
fn externally_managed_connectors_answer_with_the_framework_message() {
    let fake = FakeConnect::builder()
        .connector(
            ConnectorSpec::source("x", PG)
                .state(State::Stopped)
                .externally_managed_offsets(),
        )
        .start();
    let (status, body) = patch(
        &fake,
        "x",
        json!([{ "partition": { "f": "a" }, "offset": { "p": 1 } }]),
    );
    assert_eq!(status, 200);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("The Connect framework-managed offsets"),
        "{body}"
    );
    let (status, body) = call(&fake, "DELETE", "/connectors/x/offsets", None);
    assert_eq!(status, 200);
    assert!(
        body["message"].as_str().unwrap().contains("manually reset"),
        "{body}"
    );
}
