//! The workloads: a fleet of small connectors and one very wide sink, served by the fake with
//! a fixed latency on every request; and `kco` run as a process against them.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fake_connect::{ConnectorSpec, FakeConnect, FakeConnectBuilder, Fault, State};

const SINK: &str = "io.confluent.connect.s3.S3SinkConnector";
const SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
/// Partitions of each fleet connector.
pub const FLEET_PARTITIONS: usize = 4;
/// Partitions per topic of the wide sink.
const TOPIC_WIDTH: usize = 100;
pub const WIDE_SINK: &str = "wide-sink";

/// How the fake behaves.
#[derive(Clone, Copy, Debug)]
pub struct Server {
    /// Fixed delay before every answer.
    pub latency: Duration,
    /// Status reads that still show the old state after stop/resume.
    pub transition_reads: u32,
}

/// Name of fleet connector `i`.
pub fn fleet_name(i: usize) -> String {
    format!("conn-{i:05}")
}

/// Offsets of fleet connector `i` (even: sink, odd: source), moved by `shift`.
pub fn fleet_offsets(i: usize, shift: i64) -> Value {
    let entries: Vec<Value> = (0..FLEET_PARTITIONS)
        .map(|p| {
            let base = (1000 * (p + 1) + i) as i64 + shift;
            if i.is_multiple_of(2) {
                json!({
                    "partition": {"kafka_topic": format!("topic-{i:05}"), "kafka_partition": p},
                    "offset": {"kafka_offset": base},
                })
            } else {
                json!({
                    "partition": {"filename": format!("/data/in-{i:05}-{p}.txt")},
                    "offset": {"position": base},
                })
            }
        })
        .collect();
    Value::Array(entries)
}

/// Offsets of the wide sink: `partitions` over topics of 100 partitions, moved by `shift`.
pub fn wide_offsets(partitions: usize, shift: i64) -> Value {
    let entries: Vec<Value> = (0..partitions)
        .map(|n| {
            json!({
                "partition": {
                    "kafka_topic": format!("events-{:04}", n / TOPIC_WIDTH),
                    "kafka_partition": n % TOPIC_WIDTH,
                },
                "offset": {"kafka_offset": 1_000_000 + n as i64 + shift},
            })
        })
        .collect();
    Value::Array(entries)
}

/// The Confluent Cloud environment, Kafka cluster and API key of [`cloud_fleet`].
pub const CLOUD_ENVIRONMENT: &str = "env-bench1";
pub const CLOUD_CLUSTER: &str = "lkc-bench1";
pub const CLOUD_KEY: &str = "BENCHKEY";
pub const CLOUD_SECRET: &str = "bench-secret";

fn start(server: Server, specs: Vec<ConnectorSpec>) -> FakeConnect {
    start_with(FakeConnect::builder(), server, specs)
}

fn start_with(
    builder: FakeConnectBuilder,
    server: Server,
    specs: Vec<ConnectorSpec>,
) -> FakeConnect {
    let mut builder = builder
        .transition_reads(server.transition_reads)
        .fault(Fault::on("*", "*").delay(server.latency));
    for spec in specs {
        builder = builder.connector(spec);
    }
    builder.start()
}

/// A fake with `n` running connectors of a few partitions each.
pub fn fleet(server: Server, n: usize) -> FakeConnect {
    start(server, fleet_specs(n))
}

/// The same fleet as Confluent Cloud's managed connectors (the fake in that mode, its API
/// key checked), at [`CLOUD_ENVIRONMENT`] / [`CLOUD_CLUSTER`].
pub fn cloud_fleet(server: Server, n: usize) -> FakeConnect {
    let builder = FakeConnect::builder()
        .confluent_cloud(CLOUD_ENVIRONMENT, CLOUD_CLUSTER)
        .api_key(CLOUD_KEY, CLOUD_SECRET);
    start_with(builder, server, fleet_specs(n))
}

fn fleet_specs(n: usize) -> Vec<ConnectorSpec> {
    (0..n)
        .map(|i| {
            let spec = if i % 2 == 0 {
                ConnectorSpec::sink(&fleet_name(i), SINK).config("topics", &format!("topic-{i:05}"))
            } else {
                ConnectorSpec::source(&fleet_name(i), SOURCE)
            };
            spec.state(State::Running).offsets(fleet_offsets(i, 0))
        })
        .collect()
}

/// A fake with one running sink of `partitions` partitions.
pub fn wide(server: Server, partitions: usize) -> FakeConnect {
    let spec = ConnectorSpec::sink(WIDE_SINK, SINK)
        .tasks(8)
        .offsets(wide_offsets(partitions, 0));
    start(server, vec![spec])
}

/// Moves every partition of every fleet connector.
pub fn move_fleet(fake: &FakeConnect, n: usize, shift: i64) {
    for i in 0..n {
        fake.set_offsets(&fleet_name(i), fleet_offsets(i, shift));
    }
}

/// Panics unless the live offsets of `name` are exactly `want` (in any order).
pub fn assert_offsets(fake: &FakeConnect, name: &str, want: &Value) {
    let index = |v: &Value| -> HashMap<String, String> {
        v.as_array()
            .expect("offsets array")
            .iter()
            .map(|e| (e["partition"].to_string(), e["offset"].to_string()))
            .collect()
    };
    let live = fake.offsets(name);
    assert!(
        index(&live) == index(want),
        "offsets of {name} are not the ones restored"
    );
}

/// What one run cost.
#[derive(Clone, Copy, Debug)]
pub struct Measure {
    pub time: Duration,
    pub requests: usize,
}

/// Runs `f` with the fake's request log cleared, and counts the requests it sent.
pub fn measure(fake: &FakeConnect, f: impl FnOnce()) -> Measure {
    fake.clear_requests();
    let start = Instant::now();
    f();
    let time = start.elapsed();
    Measure {
        time,
        requests: fake.count("*", "*"),
    }
}

/// Runs the release `kco` binary in `cwd` against `fake`; panics unless it exits with `code`.
pub fn kco(cwd: &Path, fake: &FakeConnect, args: &[&str], code: i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kco"))
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("KCO_URL")
        .env_remove("KCO_CLUSTER")
        .env_remove("KCO_CONFIG")
        .args(["--url", &fake.url(), "--cluster", "bench", "-q"])
        .args(args)
        .output()
        .expect("run kco");
    if out.status.code() != Some(code) {
        panic!(
            "kco {} exited with {:?} (wanted {code}):\n{}",
            args.join(" "),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
