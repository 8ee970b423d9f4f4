//! Tests of the offsets deleted connectors left: found, reset and put back.

use super::*;
use serde_json::json;

use super::memory::{MemoryKafka, Rec};

fn rec(p: i32, key: Value, value: Option<Value>, at: i64) -> Rec {
    (p, Some(key.to_string()), value.map(|v| v.to_string()), at)
}

#[test]
fn the_last_offset_of_each_partition_of_a_name_no_connector_has_is_left_over() {
    let file = |f: &str| json!({"filename": f});
    let topic = MemoryKafka::new(
        vec![
            rec(
                3,
                json!(["gone", file("/a")]),
                Some(json!({"position": 10})),
                100,
            ),
            rec(
                3,
                json!(["gone", file("/a")]),
                Some(json!({"position": 42})),
                200,
            ),
            rec(
                7,
                json!(["gone", file("/b")]),
                Some(json!({"position": 5})),
                150,
            ),
            // A live connector's offsets are its own.
            rec(
                1,
                json!(["live", file("/c")]),
                Some(json!({"position": 9})),
                300,
            ),
            // Every partition deleted: nothing left.
            rec(
                2,
                json!(["reset", file("/d")]),
                Some(json!({"position": 1})),
                50,
            ),
            rec(2, json!(["reset", file("/d")]), None, 60),
            // A partition deleted, another kept.
            rec(
                4,
                json!(["half", {"table": "t1"}]),
                Some(json!({"id": 1})),
                70,
            ),
            rec(4, json!(["half", {"table": "t1"}]), Some(Value::Null), 80),
            rec(
                5,
                json!(["half", {"table": "t2"}]),
                Some(json!({"id": 2})),
                75,
            ),
            // Not Connect's: left out and counted.
            (0, Some("not json".into()), Some("{}".into()), 1),
            (0, None, Some("{}".into()), 1),
            rec(0, json!(["x"]), Some(json!({})), 1),
            rec(0, json!(["x", "not a map"]), Some(json!({})), 1),
            rec(0, json!(["x", {}]), Some(json!(3)), 1),
        ],
        false,
    );
    let live = BTreeSet::from(["live".to_string()]);
    let found = find(&topic, "connect-offsets", &live).unwrap();
    assert_eq!(found.unread_records, 5);
    let names: Vec<_> = found.sources.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["gone", "half"]);
    let gone = &found.sources[0];
    assert_eq!(gone.last_commit_ms, 200);
    assert_eq!(
        gone.partitions,
        [
            OrphanPartition {
                partition: file("/a"),
                offset: json!({"position": 42})
            },
            OrphanPartition {
                partition: file("/b"),
                offset: json!({"position": 5})
            },
        ]
    );
    let half = &found.sources[1];
    assert_eq!(half.last_commit_ms, 80, "the deletion is the last commit");
    assert_eq!(
        half.partitions,
        [OrphanPartition {
            partition: json!({"table": "t2"}),
            offset: json!({"id": 2})
        }]
    );
}

#[test]
fn a_reset_deletes_every_key_a_name_left_in_its_own_partition_and_its_undo_writes_them_back() {
    let file = |f: &str| json!({"filename": f});
    let topic = MemoryKafka::new(
        vec![
            rec(
                3,
                json!(["gone", file("/a")]),
                Some(json!({"position": 42})),
                100,
            ),
            rec(
                7,
                json!(["gone", file("/b")]),
                Some(json!({"position": 5})),
                150,
            ),
            // The same partition in other bytes (a tool's): a key of its own to the worker.
            (
                3,
                Some(r#"["gone", {"filename": "/a"}]"#.into()),
                Some(r#"{"position": 40}"#.into()),
                120,
            ),
            rec(
                1,
                json!(["other", file("/c")]),
                Some(json!({"position": 9})),
                300,
            ),
            rec(
                1,
                json!(["live", file("/d")]),
                Some(json!({"position": 1})),
                300,
            ),
        ],
        false,
    );
    let live = BTreeSet::from(["live".to_string()]);
    let before = find(&topic, "connect-offsets", &live).unwrap();
    let plan = plan_reset("a", &before, &["gone".to_string()]);
    assert_eq!(plan.names, ["gone"]);
    assert_eq!(plan.writes.len(), 3, "every key, each bytes as written");
    assert!(plan
        .writes
        .iter()
        .all(|w| w.to.is_none() && w.from.is_some()));
    let mut partitions: Vec<i32> = plan.writes.iter().map(|w| w.record.partition).collect();
    partitions.sort();
    assert_eq!(
        partitions,
        [3, 3, 7],
        "each key to the partition its records are in"
    );
    let kept = plan.backup_records();
    assert!(kept.iter().all(|r| r.value.is_some()));

    write(&topic, &plan, 500).unwrap();
    assert_eq!(verify(&topic, &plan).unwrap(), []);
    let after = find(&topic, "connect-offsets", &live).unwrap();
    let names: Vec<_> = after.sources.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        ["other"],
        "the name reset has nothing left; others keep theirs"
    );

    // The undo: the backed-up values back, the same keys and partitions.
    let undo = plan_restore(&topic, "a", "connect-offsets", &kept, &[]).unwrap();
    assert_eq!(undo.writes.len(), 3);
    assert!(undo
        .writes
        .iter()
        .all(|w| w.from.is_none() && w.to.is_some()));
    write(&topic, &undo, 600).unwrap();
    assert_eq!(verify(&topic, &undo).unwrap(), []);
    let back = find(&topic, "connect-offsets", &live).unwrap();
    let gone = back.sources.iter().find(|o| o.name == "gone").unwrap();
    let was = before.sources.iter().find(|o| o.name == "gone").unwrap();
    assert_eq!(
        gone.records, was.records,
        "every key as it was, bytes and all"
    );
    // Nothing left to write a second time.
    let again = plan_restore(&topic, "a", "connect-offsets", &kept, &[]).unwrap();
    assert_eq!(again.writes, []);
}

#[test]
fn a_write_that_does_not_read_back_is_reported() {
    let topic = MemoryKafka::new(
        vec![rec(0, json!(["gone", {"f": 1}]), Some(json!({"p": 1})), 1)],
        true,
    );
    let found = find(&topic, "connect-offsets", &BTreeSet::new()).unwrap();
    let plan = plan_reset("a", &found, &["gone".to_string()]);
    write(&topic, &plan, 2).unwrap();
    let lost = verify(&topic, &plan).unwrap();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].name, "gone");
}

#[test]
fn a_backup_record_that_is_not_a_connect_offset_is_an_error_naming_it() {
    let topic = MemoryKafka::new(Vec::new(), false);
    let bad = TopicRecord {
        partition: 0,
        key: "not json".into(),
        value: Some("{}".into()),
    };
    let e = plan_restore(&topic, "a", "connect-offsets", &[bad], &[]).unwrap_err();
    assert!(e.contains("not json"), "{e}");
}

/// A sink's group is left over when its name (`connect-<name>`) is no connector's, no
/// connector consumes with it, it has no members and it has committed offsets; Connect
/// workers' own group and other consumers' groups are not.
#[test]
fn a_deleted_sinks_group_with_offsets_and_no_members_is_left_over() {
    let kafka = MemoryKafka::new(Vec::new(), false)
        .with_group(
            "connect-gone",
            "consumer",
            0,
            &[("orders", 1, 40), ("orders", 0, 12)],
        )
        .with_group("connect-committed-only", "", 0, &[("t", 0, 3)])
        .with_group("connect-live", "consumer", 1, &[("t", 0, 5)])
        .with_group("connect-stopped-live", "consumer", 0, &[("t", 0, 5)])
        .with_group("connect-used-by-override", "consumer", 0, &[("t", 0, 5)])
        .with_group("connect-busy", "consumer", 2, &[("t", 0, 5)])
        .with_group("connect-drained", "consumer", 0, &[])
        .with_group("connect-cluster", "connect", 3, &[])
        .with_group("app", "consumer", 0, &[("t", 0, 5)]);
    let live = BTreeSet::from(["live".to_string(), "stopped-live".to_string()]);
    let in_use = BTreeSet::from(["connect-used-by-override".to_string()]);
    let found = find_sinks(&kafka, &live, &in_use).unwrap();
    let names: Vec<(&str, &str)> = found
        .iter()
        .map(|o| (o.name.as_str(), o.group.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("committed-only", "connect-committed-only"),
            ("gone", "connect-gone")
        ]
    );
    assert_eq!(
        found[1].partitions,
        [
            OrphanPartition {
                partition: json!({"kafka_topic": "orders", "kafka_partition": 0}),
                offset: json!({"kafka_offset": 12})
            },
            OrphanPartition {
                partition: json!({"kafka_topic": "orders", "kafka_partition": 1}),
                offset: json!({"kafka_offset": 40})
            },
        ]
    );
    let plan = plan_reset(
        "a",
        &Orphans {
            topic: "connect-offsets".into(),
            sources: Vec::new(),
            sinks: found,
            unread_records: 0,
            unchecked: Vec::new(),
            live_elsewhere: BTreeMap::new(),
        },
        &["gone".to_string()],
    );
    assert_eq!(plan.groups(), ["connect-gone"]);
    assert_eq!(
        plan.group_writes
            .iter()
            .map(|w| (w.partition, w.from, w.to))
            .collect::<Vec<_>>(),
        [(0, Some(12), None), (1, Some(40), None)]
    );
}

/// A group that a live connector consumes with (its override), or that a connector of
/// another Connect cluster on the same Kafka uses, is not left over, whatever its name;
/// a neighbour that is down is named.
#[test]
fn a_group_a_connector_here_or_on_another_cluster_uses_is_not_left_over() {
    let kafka = MemoryKafka::new(Vec::new(), false)
        .with_group("connect-overridden", "consumer", 0, &[("t", 0, 1)])
        .with_group("connect-on-b", "consumer", 0, &[("t", 0, 2)])
        .with_group("connect-gone", "consumer", 0, &[("t", 0, 3)]);
    let live = BTreeMap::from([(
        "renamed".to_string(),
        crate::client::ConnectorListing {
            name: "renamed".into(),
            connector_type: None,
            class: None,
            config: BTreeMap::from([(
                "consumer.override.group.id".to_string(),
                "connect-overridden".to_string(),
            )]),
            status: None,
        },
    )]);
    let own = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k1")
        .in_process();
    let b = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k1")
        .sink("on-b", "S", crate::fake::State::Stopped, json!([]))
        .in_process();
    let down = crate::fake::FakeConnect::builder().in_process();
    down.down();
    let neighbour = |cluster: &str, fake: &crate::fake::FakeConnect| Neighbour {
        cluster: cluster.into(),
        client: Box::new(fake.client()),
        offsets_topic: None,
    };
    let others = [neighbour("b", &b), neighbour("d", &down)];
    let found = find_all(
        &kafka,
        "connect-offsets",
        &live,
        &own.client(),
        &others,
        &BTreeMap::new(),
    )
    .unwrap();
    let names: Vec<&str> = found.sinks.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["gone"]);
    assert!(found.sources.is_empty());
    let unchecked: Vec<&str> = found.unchecked.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(unchecked, ["d"]);
}

/// A deleted sink whose config gave it a group of its own (`consumer.override.group.id`)
/// left its offsets there: its snapshot file names the group, and only through it is the
/// group found; a group with members, or that a live connector uses, is not.
#[test]
fn a_deleted_sinks_group_named_by_its_file_is_left_over() {
    let kafka = MemoryKafka::new(Vec::new(), false)
        .with_group("orders-group", "consumer", 0, &[("t", 0, 5)])
        .with_group("busy-group", "consumer", 1, &[("t", 0, 6)])
        .with_group("live-group", "consumer", 0, &[("t", 0, 7)]);
    let file = |name: &str, group: &str| {
        let mut config = BTreeMap::new();
        config.insert("consumer.override.group.id".to_string(), group.to_string());
        crate::model::file::OffsetsFile::new(
            crate::model::file::Metadata::new(name, "a", crate::model::ConnectorType::Sink),
            vec![],
            Some(config),
        )
    };
    let files = [
        file("orders", "orders-group"),
        file("busy", "busy-group"),
        file("replaced", "live-group"),
    ];
    let named = groups_named_by(files.iter());
    assert_eq!(named.len(), 3);
    let live = BTreeMap::from([(
        "now".to_string(),
        crate::client::ConnectorListing {
            name: "now".into(),
            connector_type: None,
            class: None,
            config: BTreeMap::from([(
                "consumer.override.group.id".to_string(),
                "live-group".to_string(),
            )]),
            status: None,
        },
    )]);
    let own = crate::fake::FakeConnect::builder().in_process();
    let without = find_all(
        &kafka,
        "connect-offsets",
        &live,
        &own.client(),
        &[],
        &BTreeMap::new(),
    )
    .unwrap();
    assert!(
        without.sinks.is_empty(),
        "not a connect-* group: unseen without the files"
    );
    let found = find_all(&kafka, "connect-offsets", &live, &own.client(), &[], &named).unwrap();
    let got: Vec<(&str, &str)> = found
        .sinks
        .iter()
        .map(|o| (o.name.as_str(), o.group.as_str()))
        .collect();
    assert_eq!(got, [("orders", "orders-group")]);
    let plan = plan_reset("a", &found, &["orders".to_string()]);
    assert_eq!(plan.group_writes.len(), 1);
    assert_eq!(plan.group_writes[0].group, "orders-group");
}

/// A source of another Connect cluster on the same Kafka whose worker may keep its offsets in
/// this topic (its own `offsets.storage.topic` set to it, the same workers' topic, or a
/// workers' topic kco.yaml does not name) has its name there: never a leftover. One whose
/// offsets are known to go elsewhere, or on another Kafka, does not.
#[test]
fn a_name_a_source_of_another_cluster_may_write_in_the_topic_is_not_left_over() {
    let file = |f: &str| json!({"filename": f});
    let names = [
        "own-topic",
        "same-topic",
        "unknown-topic",
        "other-topic",
        "other-kafka",
        "gone",
    ];
    let kafka = MemoryKafka::new(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| rec(0, json!([n, file(n)]), Some(json!({"position": i})), 10))
            .collect(),
        false,
    );
    let own = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k1")
        .in_process();
    let source = |name: &str| crate::fake::ConnectorSpec::source(name, "FileStreamSource");
    let b = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k1")
        .connector(source("own-topic").config("offsets.storage.topic", "connect-offsets"))
        .connector(source("other-topic"))
        .in_process();
    let c = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k1")
        .connector(source("same-topic"))
        .in_process();
    let d = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k1")
        .connector(source("unknown-topic"))
        .in_process();
    let e = crate::fake::FakeConnect::builder()
        .kafka_cluster_id("k2")
        .connector(source("other-kafka"))
        .in_process();
    let neighbour =
        |cluster: &str, fake: &crate::fake::FakeConnect, topic: Option<&str>| Neighbour {
            cluster: cluster.into(),
            client: Box::new(fake.client()),
            offsets_topic: topic.map(str::to_string),
        };
    let others = [
        neighbour("b", &b, Some("connect-offsets-b")),
        neighbour("c", &c, Some("connect-offsets")),
        neighbour("d", &d, None),
        neighbour("e", &e, None),
    ];
    let found = find_all(
        &kafka,
        "connect-offsets",
        &BTreeMap::new(),
        &own.client(),
        &others,
        &BTreeMap::new(),
    )
    .unwrap();
    let left: Vec<&str> = found.sources.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(left, ["gone", "other-kafka", "other-topic"]);
    let elsewhere: Vec<(&str, &str)> = found
        .live_elsewhere
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        elsewhere,
        [
            ("own-topic", "b"),
            ("same-topic", "c"),
            ("unknown-topic", "d")
        ]
    );
    // What a reset of them plans: nothing of the names live elsewhere.
    let plan = plan_reset("a", &found, &["gone".to_string()]);
    assert!(plan.writes.iter().all(|w| w.name == "gone"));
}

/// A topic given as the offsets topic that holds mostly other records (a data topic) is
/// refused, not read as one with no offsets.
#[test]
fn a_data_topic_given_as_the_offsets_topic_is_refused() {
    let kafka = MemoryKafka::new(
        vec![
            (0, None, Some("line 1".into()), 1),
            (0, Some("k".into()), Some("line 2".into()), 2),
            rec(0, json!(["src", {"f": 1}]), Some(json!({"position": 1})), 3),
        ],
        false,
    );
    let err = find(&kafka, "connect-offsets", &BTreeSet::new()).unwrap_err();
    assert!(matches!(err, KafkaError::NotItsRole { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("1 of its 3 records are source offsets"),
        "{err}"
    );
}
