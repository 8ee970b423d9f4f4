//! The test bed's sink offsets: raw REST calls against real Connect workers, no kco
//! (split from testbed.rs). What they pin down is in docs/connect-behaviour.md.

use serde_json::{json, Value};

use crate::harness::{
    file_sink_config, file_source_config, numbered, sink_offset, temp_dir, testbed, unique_name,
    write_lines,
};
use crate::testbed::{ALTERED, RESET};

/// The same sink reads its topic again from the start after a DELETE of its offsets
/// (the consumer group is removed; Connect's consumers default to `earliest`).
#[test]
fn sink_reset_rereads_topic() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let lines = numbered("reset", 0..3);
    write_lines(&input, &lines);
    let topic = unique_name("kco-e2e-reset");
    let source = unique_name("kco-e2e-reset-src");
    let _source = a.create(&source, file_source_config(&input, &topic));

    let out = dir.path().join("sink.out");
    let sink = unique_name("kco-e2e-reset-sink");
    let _sink = a.create(&sink, file_sink_config(&out, &topic));
    a.wait_offsets(&sink, "kafka_offset 3", |o| {
        sink_offset(o, &topic) == Some(3)
    });
    a.stop(&sink);
    let r = a.reset_offsets(&sink);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.message(), RESET);
    a.wait_offsets(
        &sink,
        "no committed offsets after DELETE",
        <[Value]>::is_empty,
    );
    a.resume(&sink);
    a.wait_offsets(&sink, "kafka_offset 3 again", |o| {
        sink_offset(o, &topic) == Some(3)
    });
    let text = std::fs::read_to_string(&out).unwrap();
    let seen: Vec<&str> = text.lines().collect();
    assert_eq!(seen.len(), 6, "the topic read twice: {seen:?}");
}

/// Sink offsets: the framework checks the shape (400); Kafka-side failures are 500;
/// numbers given as strings are accepted and stored as numbers; `offset: null` removes
/// the committed offset.
#[test]
fn sink_patch_validation_and_null() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("sv", 0..3));
    let topic = unique_name("kco-e2e-sv");
    let source = unique_name("kco-e2e-sv-src");
    let _source = a.create(&source, file_source_config(&input, &topic));
    let sink = unique_name("kco-e2e-sv-sink");
    let _sink = a.create(&sink, file_sink_config(&dir.path().join("out.txt"), &topic));
    a.wait_offsets(&sink, "kafka_offset 3", |o| {
        sink_offset(o, &topic) == Some(3)
    });
    a.stop(&sink);

    let bad_request: [(Value, &str); 3] = [
        (
            json!({ "partition": { "kafka_topic": topic, "kafka_partition": 0 },
                    "offset": { "kafka_offset": "x" } }),
            "Offset values for sink connectors need to be integers",
        ),
        (
            json!({ "partition": { "topic": topic, "kafka_partition": 0 },
                    "offset": { "kafka_offset": 1 } }),
            "must contain the keys 'kafka_topic' and 'kafka_partition'",
        ),
        (
            json!({ "partition": { "kafka_topic": topic, "kafka_partition": 0 },
                    "offset": { "offset": 1 } }),
            "should either be null or contain the key 'kafka_offset'",
        ),
    ];
    for (entry, expected) in bad_request {
        let r = a.patch_offsets(&sink, json!([entry]));
        assert_eq!(r.status, 400, "{entry}: {}", r.body);
        assert!(r.message().contains(expected), "{entry}: {}", r.body);
    }
    let negative = a.patch_offsets(
        &sink,
        json!([{ "partition": { "kafka_topic": topic, "kafka_partition": 0 },
                 "offset": { "kafka_offset": -1 } }]),
    );
    assert_eq!(negative.status, 500, "{}", negative.body);
    let no_partition = a.patch_offsets(
        &sink,
        json!([{ "partition": { "kafka_topic": topic, "kafka_partition": 7 },
                 "offset": { "kafka_offset": 1 } }]),
    );
    assert_eq!(no_partition.status, 500, "{}", no_partition.body);
    assert_eq!(
        sink_offset(&a.offsets(&sink), &topic),
        Some(3),
        "nothing changed"
    );

    let strings = a.patch_offsets(
        &sink,
        json!([{ "partition": { "kafka_topic": topic, "kafka_partition": "0" },
                 "offset": { "kafka_offset": "1" } }]),
    );
    assert_eq!(strings.status, 200, "{}", strings.body);
    assert_eq!(strings.message(), ALTERED);
    assert_eq!(
        sink_offset(&a.offsets(&sink), &topic),
        Some(1),
        "stored as a number"
    );

    let null = a.patch_offsets(
        &sink,
        json!([{ "partition": { "kafka_topic": topic, "kafka_partition": 0 }, "offset": null }]),
    );
    assert_eq!(null.status, 200, "{}", null.body);
    a.wait_offsets(&sink, "the committed offset gone", <[Value]>::is_empty);
}
