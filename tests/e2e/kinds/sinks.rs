//! Sinks beyond the plain FileStreamSink: one whose consumer group is overridden
//! (`consumer.override.group.id`, allowed by the workers'
//! `connector.client.config.override.policy=All`), and one over 100 partitions.

use serde_json::{json, Value};

use super::{apply_converged, diff_that_differs, on_a, snapshot_of};
use crate::harness::{
    file_sink_config, file_source_config, numbered, sink_offset, temp_dir, testbed, unique_name,
    write_lines, Connect,
};
use crate::kco_steps::set_offsets;

fn read_lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Waits until `path` holds `n` lines, then 3 s more so that extra lines would show.
fn settled_lines(path: &std::path::Path, n: usize) -> Vec<String> {
    crate::harness::wait_for(
        &format!("{n} lines in {}", path.display()),
        crate::harness::WAIT,
        || {
            let got = read_lines(path);
            (got.len() >= n)
                .then_some(())
                .ok_or(format!("{} lines", got.len()))
        },
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    read_lines(path)
}

#[test]
fn sink_with_overridden_group_id_rewinds() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = on_a(&tb);
    let work = temp_dir();
    let input = work.path().join("in.txt");
    let lines = numbered("grp", 0..10);
    write_lines(&input, &lines);
    let topic = unique_name("kco-e2e-grp");
    let _src = a.create(
        &unique_name("kco-e2e-grp-src"),
        file_source_config(&input, &topic),
    );
    let out = work.path().join("sink.out");
    let name = unique_name("kco-e2e-grp-sink");
    let mut config = file_sink_config(&out, &topic);
    config["consumer.override.group.id"] = json!(unique_name("kco-e2e-custom-group"));
    let _sink = a.create(&name, config);
    // Connect reads (and alters) the overridden group's offsets: with the default group
    // `connect-{name}` nothing would ever show here.
    a.wait_offsets(&name, "kafka_offset 10", |o| {
        sink_offset(o, &topic) == Some(10)
    });
    assert_eq!(settled_lines(&out, 10), lines);

    let file = snapshot_of(&env, &name);
    set_offsets(
        &file,
        vec![
            json!({"partition": {"kafka_topic": topic, "kafka_partition": 0},
                    "offset": {"kafka_offset": 3}}),
        ],
    );
    diff_that_differs(&env, &name);
    apply_converged(&env, &file);
    let seen = settled_lines(&out, 17);
    assert_eq!(seen.len(), 17, "records 3.. once more: {seen:?}");
    assert_eq!(&seen[10..], &lines[3..]);
    a.wait_offsets(&name, "kafka_offset 10 again", |o| {
        sink_offset(o, &topic) == Some(10)
    });
}

const PARTITIONS: i64 = 100;

fn total_consumed(offsets: &[Value]) -> i64 {
    offsets
        .iter()
        .filter_map(|o| o["offset"]["kafka_offset"].as_i64())
        .sum()
}

#[test]
fn sink_over_100_partitions_rewinds_every_partition() {
    let Some(tb) = testbed() else { return };
    let a: Connect = tb.a();
    let env = on_a(&tb);
    let work = temp_dir();
    let input = work.path().join("in.txt");
    let lines = numbered("wide", 0..300);
    write_lines(&input, &lines);
    let topic = unique_name("kco-e2e-wide");
    let mut source = file_source_config(&input, &topic);
    // The source creates its topic (KIP-158) with 100 partitions.
    source["topic.creation.default.partitions"] = json!(PARTITIONS.to_string());
    source["topic.creation.default.replication.factor"] = json!("1");
    let src = unique_name("kco-e2e-wide-src");
    let _src = a.create(&src, source);
    // The sink starts once the source has created the topic: a consumer subscribing first
    // would have the broker auto-create it with one partition.
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    a.wait_offsets(&src, "the whole file sent", |o| {
        crate::harness::source_position(o, &input) == Some(len)
    });
    let out = work.path().join("sink.out");
    let name = unique_name("kco-e2e-wide-sink");
    let _sink = a.create(&name, file_sink_config(&out, &topic));
    a.wait_offsets(&name, "300 records consumed", |o| total_consumed(o) == 300);
    assert_eq!(settled_lines(&out, 300).len(), 300);

    let file = snapshot_of(&env, &name);
    // Every one of the 100 partitions back to 0, also those the sink never committed.
    let all: Vec<Value> = (0..PARTITIONS)
        .map(|p| {
            json!({"partition": {"kafka_topic": topic, "kafka_partition": p},
                   "offset": {"kafka_offset": 0}})
        })
        .collect();
    set_offsets(&file, all);
    diff_that_differs(&env, &name);
    apply_converged(&env, &file);
    // Connect refuses offsets of partitions the topic lacks: all 100 exist and are listed.
    assert_eq!(a.offsets(&name).len(), PARTITIONS as usize);
    let seen = settled_lines(&out, 600);
    assert_eq!(seen.len(), 600, "every record once more");
    let mut again = seen[300..].to_vec();
    again.sort();
    let mut expected = lines.clone();
    expected.sort();
    assert_eq!(again, expected);
    let offsets = a.wait_offsets(&name, "300 records consumed again", |o| {
        total_consumed(o) == 300
    });
    assert!(offsets.len() <= PARTITIONS as usize, "{offsets:?}");
    let listed = a.offsets(&name);
    assert!(
        listed
            .iter()
            .all(|o| o["partition"]["kafka_partition"].as_i64().unwrap() < PARTITIONS),
        "{listed:?}"
    );
}
