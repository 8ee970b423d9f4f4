//! A review of files whose connector the cluster lacks, labelled against what an earlier
//! connector of the name left (`engine::orphaned::of_name`), read from a Kafka in memory.

use serde_json::{json, Value};

use super::base_live::label as label_against_live;
use super::{classify, ConnectorDiff};
use crate::engine::neighbours::Neighbour;
use crate::engine::orphaned::memory::MemoryKafka;
use crate::engine::orphaned::of_name::{Gone, Leftovers};
use crate::engine::risk::RiskCode;
use crate::fake::FakeConnect;
use crate::model::file::{Metadata, OffsetsFile};
use crate::model::{ConnectorType, OffsetEntry};

fn file(name: &str, kind: ConnectorType, offsets: Value) -> (String, OffsetsFile) {
    let entries: Vec<OffsetEntry> = serde_json::from_value(offsets).unwrap();
    let f = OffsetsFile::new(Metadata::new(name, "a", kind), entries, None);
    (format!("snapshots/a/{name}.yaml"), f)
}

fn sink(n: i64) -> Value {
    json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": n}}])
}

fn source(pos: i64) -> Value {
    json!([{"partition": {"filename": "/in.txt"}, "offset": {"position": pos}}])
}

/// The review of `name`'s change from `before` to `after` against a cluster that lacks
/// it, its leftovers read through `leftovers`.
fn review(
    name: &str,
    kind: ConnectorType,
    sides: (Value, Value),
    leftovers: &Leftovers<'_>,
) -> ConnectorDiff {
    review_with(name, kind, sides, leftovers, None)
}

/// [`review`], the files' config `config`.
fn review_with(
    name: &str,
    kind: ConnectorType,
    (before, after): (Value, Value),
    leftovers: &Leftovers<'_>,
    config: Option<&std::collections::BTreeMap<String, String>>,
) -> ConnectorDiff {
    let fake = FakeConnect::builder().in_process();
    let (old, new) = (file(name, kind, before), file(name, kind, after));
    let mut c = classify(name, Some(&old), Some(&new), "main");
    let client = fake.client();
    let fresh = Default::default();
    label_against_live(&mut c, &*client, "a", None, &fresh, leftovers, config);
    c
}

fn risk(c: &ConnectorDiff) -> (RiskCode, String) {
    let r = c.partitions[0].risk.clone().expect("a risk");
    (r.code, r.message)
}

/// A deleted sink's group still holds 302: a change of its file from 300 to 280 rewinds
/// what a sink created under its name would resume from by 22 records, not by the 20 the
/// files differ by, and exactly (nothing moves the group of a deleted sink).
#[test]
fn a_deleted_sinks_change_is_labelled_against_its_groups_offsets() {
    let kafka = MemoryKafka::new(Vec::new(), false).with_group(
        "connect-gone",
        "consumer",
        0,
        &[("t", 0, 302)],
    );
    let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
    let c = review(
        "gone",
        ConnectorType::Sink,
        (sink(300), sink(280)),
        &leftovers,
    );
    assert_eq!(
        risk(&c),
        (
            RiskCode::Reprocessing,
            "22 records will be reprocessed (duplicates downstream)".into()
        )
    );
    assert_eq!(
        c.leftovers,
        Some(Gone::Group {
            group: "connect-gone".into(),
            partitions: 1
        })
    );
    let live = c.partitions[0].live.as_ref().unwrap().offset.clone();
    assert_eq!(
        serde_json::to_value(live).unwrap(),
        json!({"kafka_offset": 302})
    );
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(
        json["leftovers"],
        json!({"against": "group", "group": "connect-gone", "partitions": 1})
    );
}

/// A sink whose config sets `consumer.override.group.id` left its offsets in that group,
/// not in `connect-<name>`.
#[test]
fn a_sinks_own_group_is_read_where_its_file_names_it() {
    let kafka = MemoryKafka::new(Vec::new(), false)
        .with_group("connect-gone", "consumer", 0, &[("t", 0, 1)])
        .with_group("legacy", "consumer", 0, &[("t", 0, 290)]);
    let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
    let config = std::collections::BTreeMap::from([(
        "consumer.override.group.id".to_string(),
        "legacy".to_string(),
    )]);
    let sides = (sink(300), sink(280));
    let c = review_with(
        "gone",
        ConnectorType::Sink,
        sides,
        &leftovers,
        Some(&config),
    );
    assert_eq!(
        c.leftovers,
        Some(Gone::Group {
            group: "legacy".into(),
            partitions: 1
        })
    );
    assert_eq!(
        risk(&c),
        (
            RiskCode::Reprocessing,
            "10 records will be reprocessed (duplicates downstream)".into()
        )
    );
}

/// A group someone consumes with, and one a connector of another cluster uses, are no
/// leftovers: compared with nothing, and why.
#[test]
fn a_group_with_members_is_not_a_leftover() {
    let kafka = MemoryKafka::new(Vec::new(), false).with_group(
        "connect-gone",
        "consumer",
        1,
        &[("t", 0, 302)],
    );
    let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
    let c = review(
        "gone",
        ConnectorType::Sink,
        (sink(300), sink(280)),
        &leftovers,
    );
    assert_eq!(risk(&c).0, RiskCode::NewPartition);
    let Some(Gone::Nothing { why }) = &c.leftovers else {
        panic!("{:?}", c.leftovers)
    };
    assert!(why.contains("has 1 member"), "{why}");
}

/// The group of a sink of another Connect cluster on the same Kafka (stopped there: no
/// members) is that sink's, not a leftover of the name: compared with nothing, and why.
#[test]
fn a_group_another_clusters_sink_uses_is_not_a_leftover() {
    let kafka = MemoryKafka::new(Vec::new(), false).with_group(
        "connect-gone",
        "consumer",
        0,
        &[("t", 0, 302)],
    );
    let b = FakeConnect::builder()
        .sink(
            "gone",
            "FileStreamSink",
            crate::fake::State::Stopped,
            sink(302),
        )
        .in_process();
    let others = move || {
        vec![Neighbour {
            cluster: "b".into(),
            client: b.client(),
            offsets_topic: None,
        }]
    };
    let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(others));
    let c = review(
        "gone",
        ConnectorType::Sink,
        (sink(300), sink(280)),
        &leftovers,
    );
    let Some(Gone::Nothing { why }) = &c.leftovers else {
        panic!("{:?}", c.leftovers)
    };
    assert!(
        why.contains("is the group of `gone` on cluster `b`"),
        "{why}"
    );
}

/// A deleted source's position in the offsets topic: a change past it skips records.
#[test]
fn a_deleted_sources_change_is_labelled_against_the_offsets_topic() {
    let key = json!(["gone-src", {"filename": "/in.txt"}]).to_string();
    let records = vec![
        (
            3,
            Some(key.clone()),
            Some(json!({"position": 100}).to_string()),
            10,
        ),
        (3, Some(key), Some(json!({"position": 120}).to_string()), 20),
    ];
    let kafka = MemoryKafka::new(records, false);
    let topic = Some("connect-offsets".to_string());
    let leftovers = Leftovers::kafka(Box::new(kafka), topic, Box::new(Vec::new));
    let c = review(
        "gone-src",
        ConnectorType::Source,
        (source(100), source(150)),
        &leftovers,
    );
    assert_eq!(risk(&c).0, RiskCode::DataLoss, "{c:?}");
    assert_eq!(
        c.leftovers,
        Some(Gone::OffsetsTopic {
            topic: "connect-offsets".into(),
            partitions: 1
        })
    );
    // No offsets topic named: a source's leftovers are not read.
    let kafka = MemoryKafka::new(Vec::new(), false);
    let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
    let c = review(
        "gone-src",
        ConnectorType::Source,
        (source(100), source(150)),
        &leftovers,
    );
    assert!(
        matches!(&c.leftovers, Some(Gone::Nothing { why }) if why.contains("connectTopics.offsets")),
        "{:?}",
        c.leftovers
    );
}

/// Without a Kafka to read them through, the review says it compared with nothing.
#[test]
fn without_kafka_a_gone_connector_is_compared_with_nothing() {
    let leftovers = Leftovers::Unread("no `kafka:`".into());
    let c = review(
        "gone",
        ConnectorType::Sink,
        (sink(300), sink(280)),
        &leftovers,
    );
    assert_eq!(
        c.leftovers,
        Some(Gone::Nothing {
            why: "no `kafka:`".into()
        })
    );
    assert_eq!(risk(&c).0, RiskCode::NewPartition);
}
