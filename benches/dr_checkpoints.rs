//! The DR translation benchmark's data: a MirrorMaker 2 checkpoints topic of N records on a
//! Kafka broker (checkpoints of one group for P partitions, written the way MM2's checkpoint
//! task writes them), and a sink file of P partitions captured on the "primary" whose
//! translation reads that topic. `scripts/bench-dr.sh` runs it, then times `kco`.
//!
//! ```text
//! cargo bench --bench dr_checkpoints -- --bootstrap 127.0.0.1:9192 --topic T
//!     --records N --partitions P --file snapshots/bench-east/bench-sink.yaml
//! ```
//!
//! Writing to Kafka is the benchmark's, never kco's: kco only reads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rskafka::client::partition::{Compression, UnknownTopicHandling};
use rskafka::client::ClientBuilder;
use rskafka::record::Record;
use serde_json::json;

use kco::engine::mirror::checkpoint::encode;
use kco::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::ConnectorType;

/// The source topic of the sink; MM2's default policy names it `bench.bench-orders` on west.
pub const TOPIC: &str = "bench-orders";
pub const GROUP: &str = "connect-bench-sink";

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && arg(&args, "--bootstrap").is_none() {
        // `cargo bench` without arguments: nothing to do (this is data, not a measurement).
        return;
    }
    let bootstrap = arg(&args, "--bootstrap").expect("--bootstrap host:port");
    let topic = arg(&args, "--topic").expect("--topic");
    let records: i64 = arg(&args, "--records").map_or(1_000_000, |s| s.parse().unwrap());
    let partitions: i64 = arg(&args, "--partitions").map_or(1000, |s| s.parse().unwrap());
    let file = PathBuf::from(arg(&args, "--file").expect("--file"));
    let per_partition = records / partitions;

    // The file: each partition captured in the middle of its checkpoints, so that the
    // translation must read the whole topic to know the latest one at or below it.
    let offsets = (0..partitions)
        .map(|p| {
            serde_json::from_value(json!({
                "partition": {"kafka_topic": TOPIC, "kafka_partition": p},
                "offset": {"kafka_offset": per_partition / 2 * 100 + 50}
            }))
            .unwrap()
        })
        .collect();
    let f = OffsetsFile::new(
        Metadata {
            name: "bench-sink".into(),
            cluster: "bench-east".into(),
            kafka_cluster_id: Some("bench-primary-kafka".into()),
            connect_version: None,
            connector_class: Some("org.apache.kafka.connect.file.FileStreamSinkConnector".into()),
            connector_type: ConnectorType::Sink,
            state: None,
            captured_at: None,
            observed_at: None,
            offsets_from: None,
        },
        offsets,
        Some(BTreeMap::from([
            (
                "connector.class".into(),
                "org.apache.kafka.connect.file.FileStreamSinkConnector".into(),
            ),
            ("topics".into(), TOPIC.into()),
            ("file".into(), "/tmp/kco-bench-dr.out".into()),
        ])),
    );
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, f.render(DEFAULT_SCHEMA_REF)).unwrap();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = ClientBuilder::new(vec![bootstrap]).build().await.unwrap();
        let _ = client
            .controller_client()
            .unwrap()
            .create_topic(&topic, 1, 1, 30_000)
            .await;
        let part = client
            .partition_client(&topic, 0, UnknownTopicHandling::Retry)
            .await
            .unwrap();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let now = rskafka::chrono::DateTime::from_timestamp_millis(now_ms).unwrap();
        let dr_topic = format!("bench.{TOPIC}");
        let mut batch = Vec::with_capacity(10_000);
        // Round by round, every partition advances 100 records: MM2's order.
        for i in 0..records {
            let round = i / partitions;
            let p = (i % partitions) as i32;
            let upstream = round * 100;
            let (key, value) = encode(GROUP, &dr_topic, p, upstream, upstream - 3);
            batch.push(Record {
                key: Some(key),
                value: Some(value),
                headers: BTreeMap::new(),
                timestamp: now,
            });
            if batch.len() == 10_000 || i == records - 1 {
                part.produce(std::mem::take(&mut batch), Compression::NoCompression)
                    .await
                    .unwrap();
            }
        }
    });
    println!("{records} checkpoints in {topic}; file {}", file.display());
}
