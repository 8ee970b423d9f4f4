//! MirrorMaker 2's MirrorSourceConnector, replicating within the test bed's one broker
//! (source and target alias both on it, one topic): offsets are
//! `{cluster, topic, partition}` -> `{offset}`, the offset of the last record copied.

use serde_json::{json, Value};

use super::{apply_converged, diff_that_differs, on_a, snapshot_of};
use crate::harness::{
    file_source_config, numbered, temp_dir, testbed, unique_name, write_lines, TopicReader,
};
use crate::kco_steps::set_offsets;

const MIRROR_SOURCE: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
const BYTES: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

fn mirror_offset(offsets: &[Value], topic: &str) -> Option<i64> {
    offsets
        .iter()
        .find(|o| o["partition"]["topic"] == topic && o["partition"]["partition"] == 0)
        .and_then(|o| o["offset"]["offset"].as_i64())
}

#[test]
fn mirror_source_rewind_replicates_exactly_the_records_after_it() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = on_a(&tb);
    let work = temp_dir();
    let input = work.path().join("in.txt");
    let lines = numbered("mm", 0..10);
    write_lines(&input, &lines);
    let topic = unique_name("kco-e2e-mm");
    let upstream = TopicReader::start(&a, &topic, work.path());
    let _src = a.create(
        &unique_name("kco-e2e-mm-src"),
        file_source_config(&input, &topic),
    );
    assert_eq!(upstream.wait_lines(10), lines);

    let mirrored = format!("src.{topic}");
    let downstream = TopicReader::start(&a, &mirrored, work.path());
    let name = unique_name("kco-e2e-mm2");
    let kafka = tb.kafka();
    let _mm2 = a.create(
        &name,
        json!({
            "connector.class": MIRROR_SOURCE,
            "tasks.max": "1",
            "source.cluster.alias": "src",
            "target.cluster.alias": "tgt",
            "source.cluster.bootstrap.servers": kafka,
            "target.cluster.bootstrap.servers": kafka,
            "topics": topic,
            "key.converter": BYTES,
            "value.converter": BYTES,
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "sync.topic.acls.enabled": "false",
            "sync.topic.configs.enabled": "false",
            "refresh.topics.interval.seconds": "1",
        }),
    );
    assert_eq!(downstream.wait_lines(10), lines, "the copy in {mirrored}");
    let offsets = a.wait_offsets(&name, "offset 9 (the last record copied)", |o| {
        mirror_offset(o, &topic) == Some(9)
    });
    // MM2 copies every heartbeats topic it finds on the source, whatever `topics` says: the
    // DR bed's mirror back keeps `west.heartbeats` on this broker when a test runs a
    // heartbeat connector on west. Those partitions are not this test's.
    let offsets: Vec<Value> = offsets
        .into_iter()
        .filter(|o| {
            !o["partition"]["topic"]
                .as_str()
                .is_some_and(|t| t == "heartbeats" || t.ends_with(".heartbeats"))
        })
        .collect();
    assert_eq!(
        offsets,
        vec![
            json!({"partition": {"cluster": "src", "topic": topic, "partition": 0},
                    "offset": {"offset": 9}})
        ]
    );

    let file = snapshot_of(&env, &name);
    // Rewind: record 3 counts as copied, so 4..9 are copied again.
    set_offsets(
        &file,
        vec![
            json!({"partition": {"cluster": "src", "topic": topic, "partition": 0},
                    "offset": {"offset": 3}}),
        ],
    );
    diff_that_differs(&env, &name);
    apply_converged(&env, &file);
    a.wait_running(&name);
    let seen = downstream.wait_lines_settled(16);
    assert_eq!(seen.len(), 16, "records 4..9 once more: {seen:?}");
    assert_eq!(&seen[..10], &lines[..]);
    assert_eq!(&seen[10..], &lines[4..]);
    a.wait_offsets(&name, "offset 9 again", |o| {
        mirror_offset(o, &topic) == Some(9)
    });
}
