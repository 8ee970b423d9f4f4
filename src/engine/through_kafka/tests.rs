//! Apply through Kafka against one Kafka in memory: what is written to the offsets topic and
//! the groups, and what is refused.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::client::ConnectorStatus;
use crate::engine::apply::tests::{src, want};
use crate::engine::orphaned::memory::{MemoryKafka, PARTITIONS};
use crate::model::file::{Metadata, OffsetsFile};

const TOPIC: &str = "connect-offsets";

/// Kafka's own test vectors (`UtilsTest.testMurmur2`).
#[test]
fn murmur2_is_kafkas() {
    let cases: [(&str, i32); 6] = [
        ("21", -973932308),
        ("foobar", -790332482),
        ("a-little-bit-long-string", -985981536),
        ("a-little-bit-longer-string", -1486304829),
        (
            "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
            -58897971,
        ),
        ("abc", 479470107),
    ];
    for (key, hash) in cases {
        assert_eq!(murmur2(key.as_bytes()) as i32, hash, "{key}");
    }
    // toPositive, then modulo: never negative.
    let p = partition_of(b"foobar", 25);
    assert_eq!(p, ((-790332482i32 & 0x7fff_ffff) % 25));
}

fn listing(name: &str, kind: ConnectorType, state: ConnectorState) -> ConnectorListing {
    ConnectorListing {
        name: name.into(),
        connector_type: Some(kind),
        class: None,
        config: BTreeMap::new(),
        status: Some(ConnectorStatus {
            name: name.into(),
            state: Some(state),
            raw_state: state.to_string(),
            tasks: Vec::new(),
            connector_type: Some(kind),
            trace: None,
            worker_id: None,
        }),
    }
}

fn input<'a>(live: &'a BTreeMap<String, ConnectorListing>, prune: bool) -> Input<'a> {
    Input {
        cluster: "l",
        topic: TOPIC,
        live,
        prune,
        route: ResetRoute::DeleteFirst,
        plan_refused: false,
        recreates: false,
    }
}

/// The cluster's one connector: source `gone`, in `state`.
fn gone_live(state: ConnectorState) -> BTreeMap<String, ConnectorListing> {
    BTreeMap::from([(
        "gone".to_string(),
        listing("gone", ConnectorType::Source, state),
    )])
}

/// `gone` left two keys, one of which its file sets again; the key's bytes are Connect's own
/// (a space after the comma), which kco keeps.
fn leftovers() -> MemoryKafka {
    MemoryKafka::new(
        vec![
            (
                3,
                Some(r#"["gone", {"filename":"/a"}]"#.into()),
                Some(r#"{"position":40}"#.into()),
                1,
            ),
            (
                7,
                Some(r#"["gone",{"filename":"/b"}]"#.into()),
                Some(r#"{"position":9}"#.into()),
                2,
            ),
            (
                1,
                Some(r#"["other",{"filename":"/a"}]"#.into()),
                Some(r#"{"position":5}"#.into()),
                2,
            ),
        ],
        false,
    )
}

#[test]
fn a_deleted_sources_file_replaces_what_it_left() {
    let kafka = leftovers();
    let live = BTreeMap::new();
    let wants = [want("gone", vec![src("/a", 12), src("/c", 3)])];
    let plan = plan(&kafka, &input(&live, false), &wants).unwrap();
    assert_eq!(plan.purpose, Purpose::Apply);
    assert_eq!(plan.names, ["gone"]);
    let by_file: BTreeMap<String, &TopicWrite> = plan
        .writes
        .iter()
        .map(|w| {
            (
                w.source_partition["filename"].as_str().unwrap().to_string(),
                w,
            )
        })
        .collect();
    assert_eq!(by_file.len(), 3, "{:#?}", plan.writes);
    // The key it had: its own bytes, its own partition.
    let a = by_file["/a"];
    assert_eq!(a.record.partition, 3);
    assert_eq!(a.record.key, r#"["gone", {"filename":"/a"}]"#);
    assert_eq!(a.record.value.as_deref(), Some(r#"{"position":12}"#));
    assert_eq!(a.from, Some(json!({"position": 40})));
    // What the file lacks is deleted: never merged.
    let b = by_file["/b"];
    assert_eq!((b.record.partition, b.record.value.as_deref()), (7, None));
    assert_eq!(b.had.as_deref(), Some(r#"{"position":9}"#));
    // A new key: compact, where the default partitioner puts it.
    let c = by_file["/c"];
    let key = r#"["gone",{"filename":"/c"}]"#;
    assert_eq!(c.record.key, key);
    assert_eq!(c.record.partition, partition_of(key.as_bytes(), PARTITIONS));
    assert_eq!(c.from, None);
    // Another name's key is left alone.
    assert!(plan.writes.iter().all(|w| w.name == "gone"));
}

#[test]
fn a_key_that_holds_the_offset_already_is_not_written() {
    let kafka = leftovers();
    let live = BTreeMap::new();
    let wants = [want("gone", vec![src("/a", 40), src("/b", 9)])];
    let plan = plan(&kafka, &input(&live, false), &wants).unwrap();
    assert!(plan.is_empty(), "{:#?}", plan.writes);
}

#[test]
fn a_running_or_paused_connector_is_refused_with_nothing_planned() {
    let kafka = leftovers();
    for state in [ConnectorState::Running, ConnectorState::Paused] {
        let live = gone_live(state);
        let wants = [want("gone", vec![src("/a", 12)])];
        let Err(PlanError::Refused { refusals: r, .. }) =
            plan(&kafka, &input(&live, false), &wants)
        else {
            panic!("{state} was not refused");
        };
        assert_eq!(r.len(), 1);
        assert!(
            r[0].message.contains(&format!("is {state}")),
            "{}",
            r[0].message
        );
        assert!(r[0].message.contains("delete it"), "{}", r[0].message);
    }
}

/// A RUNNING connector whose only task FAILED: the refusal names the task and its trace's
/// first line, not "its tasks hold their position" as if they ran.
#[test]
fn a_running_connector_whose_task_failed_is_refused_naming_the_task() {
    let kafka = leftovers();
    let mut live = gone_live(ConnectorState::Running);
    let status = live.get_mut("gone").unwrap().status.as_mut().unwrap();
    status.tasks = vec![crate::client::TaskStatus {
        id: 0,
        state: "FAILED".into(),
        worker_id: None,
        trace: Some("org.x.ConnectException: no file\n\tat a.b(C.java:1)".into()),
    }];
    let wants = [want("gone", vec![src("/a", 12)])];
    let Err(PlanError::Refused { refusals: r, .. }) = plan(&kafka, &input(&live, false), &wants)
    else {
        panic!("a running connector was not refused");
    };
    assert!(
        r[0].message.starts_with(
            "`gone` is RUNNING (task 0 FAILED: org.x.ConnectException: no file) on cluster `l`: its tasks, running or restarted, hold their position"
        ),
        "{}",
        r[0].message
    );
}

/// Where the cluster has no REST API (read from its topics), the advice names the service's
/// own tools, not Connect's `DELETE /connectors/NAME`.
#[test]
fn without_a_rest_api_the_refusal_advises_the_services_own_tools() {
    let kafka = leftovers();
    let live = gone_live(ConnectorState::Running);
    let wants = [want("gone", vec![src("/a", 12)])];
    for (rest_api, says, not) in [
        (true, "`DELETE /connectors/gone`", "console"),
        (
            false,
            "the service's own console, CLI or API",
            "DELETE /connectors",
        ),
    ] {
        let input = Input {
            route: match rest_api {
                true => ResetRoute::DeleteFirst,
                false => ResetRoute::ServiceTools,
            },
            ..input(&live, false)
        };
        let Err(PlanError::Refused { refusals: r, .. }) = plan(&kafka, &input, &wants) else {
            panic!("a running connector was not refused");
        };
        assert!(r[0].message.contains(says), "{}", r[0].message);
        assert!(!r[0].message.contains(not), "{}", r[0].message);
    }
}

#[test]
fn a_stopped_connector_keeps_what_the_file_lacks_unless_pruned() {
    let kafka = leftovers();
    let live = gone_live(ConnectorState::Stopped);
    let wants = [want("gone", vec![src("/a", 12)])];
    let kept = plan(&kafka, &input(&live, false), &wants).unwrap();
    assert_eq!(kept.writes.len(), 1);
    assert!(kept.stopped.contains("gone"));
    let pruned = plan(&kafka, &input(&live, true), &wants).unwrap();
    assert_eq!(pruned.writes.len(), 2);
    assert!(pruned.writes.iter().any(|w| w.to.is_none()));
}

fn sink_file(name: &str, offsets: &[(&str, i64, i64)]) -> Want {
    let entries = offsets
        .iter()
        .map(|(t, p, o)| {
            serde_json::from_value(json!({
                "partition": {"kafka_topic": t, "kafka_partition": p},
                "offset": {"kafka_offset": o}
            }))
            .unwrap()
        })
        .collect();
    let file = OffsetsFile::new(Metadata::new(name, "l", ConnectorType::Sink), entries, None);
    Want::File {
        target: name.into(),
        file: Box::new(crate::engine::testkit::loaded("s.yaml", file)),
        config: None,
        secret_vars: vec![],
        change: None,
    }
}

#[test]
fn a_deleted_sinks_group_gets_the_files_offsets_and_nothing_else() {
    let kafka = MemoryKafka::new(vec![], false).with_group(
        "connect-orders",
        "consumer",
        0,
        &[("t", 0, 9), ("t", 1, 7), ("u", 0, 3)],
    );
    let live = BTreeMap::new();
    let wants = [sink_file(
        "orders",
        &[("t", 0, 4), ("t", 1, 7), ("t", 2, 1)],
    )];
    let plan = plan(&kafka, &input(&live, false), &wants).unwrap();
    assert!(plan.writes.is_empty(), "a sink has no keys in the topic");
    let got: Vec<(&str, i32, Option<i64>, Option<i64>)> = plan
        .group_writes
        .iter()
        .map(|w| (w.topic.as_str(), w.partition, w.from, w.to))
        .collect();
    assert_eq!(
        got,
        [
            ("t", 0, Some(9), Some(4)),
            ("t", 2, None, Some(1)),
            ("u", 0, Some(3), None),
        ]
    );
    assert!(plan
        .group_writes
        .iter()
        .all(|w| w.group == "connect-orders"));
}

#[test]
fn a_sink_whose_group_has_members_is_refused() {
    let kafka =
        MemoryKafka::new(vec![], false).with_group("connect-orders", "consumer", 2, &[("t", 0, 9)]);
    let live = BTreeMap::new();
    let wants = [sink_file("orders", &[("t", 0, 4)])];
    let Err(PlanError::Refused { refusals: r, .. }) = plan(&kafka, &input(&live, false), &wants)
    else {
        panic!("not refused");
    };
    assert!(r[0].message.contains("has 2 members"), "{}", r[0].message);
}

#[test]
fn a_sink_file_whose_offsets_are_not_a_sinks_is_refused() {
    let kafka = MemoryKafka::new(vec![], false);
    let entries = vec![src("/a", 3)];
    let file = OffsetsFile::new(
        Metadata::new("orders", "l", ConnectorType::Sink),
        entries,
        None,
    );
    let wants = [Want::File {
        target: "orders".into(),
        file: Box::new(crate::engine::testkit::loaded("s.yaml", file)),
        config: None,
        secret_vars: vec![],
        change: None,
    }];
    let live = BTreeMap::new();
    let Err(PlanError::Refused { refusals: r, .. }) = plan(&kafka, &input(&live, false), &wants)
    else {
        panic!("not refused");
    };
    assert!(
        r[0].message.contains("not a sink's offset"),
        "{}",
        r[0].message
    );
}

#[test]
fn a_forward_change_leaves_a_partition_the_group_has_passed() {
    let kafka = MemoryKafka::new(vec![], false).with_group(
        "connect-orders",
        "consumer",
        0,
        &[("t", 0, 50), ("t", 1, 5)],
    );
    let mut w = sink_file("orders", &[("t", 0, 20), ("t", 1, 20)]);
    if let Want::File { change, .. } = &mut w {
        let part = |p: i64| {
            crate::model::canonical_json(&json!({"kafka_topic": "t", "kafka_partition": p}))
        };
        let at = |o: i64| serde_json::from_value(json!({"kafka_offset": o})).unwrap();
        *change = Some(crate::engine::apply::plan::Change {
            set: vec![
                serde_json::from_value(json!({"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 20}})).unwrap(),
                serde_json::from_value(json!({"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 20}})).unwrap(),
            ],
            removed: vec![],
            from: BTreeMap::from([(part(0), at(10)), (part(1), at(10))]),
        });
    }
    let live = BTreeMap::new();
    let plan = plan(&kafka, &input(&live, false), &[w]).unwrap();
    // Partition 0 is at 50, past the change's 20: left there. Partition 1 moves forward.
    let got: Vec<(i32, Option<i64>)> = plan
        .group_writes
        .iter()
        .map(|w| (w.partition, w.to))
        .collect();
    assert_eq!(got, [(1, Some(20))]);
}

#[test]
fn a_reset_of_a_deleted_name_deletes_its_keys_and_its_group() {
    let kafka = leftovers().with_group("connect-gone", "consumer", 0, &[("t", 0, 9)]);
    let live = BTreeMap::new();
    let wants = [Want::Reset {
        name: "gone".into(),
    }];
    let plan = plan(&kafka, &input(&live, false), &wants).unwrap();
    assert_eq!(plan.writes.len(), 2);
    assert!(plan.writes.iter().all(|w| w.to.is_none()));
    assert_eq!(plan.group_writes.len(), 1);
    assert_eq!(plan.group_writes[0].to, None);
}

#[test]
fn a_source_with_an_offsets_topic_of_its_own_is_refused() {
    let kafka = leftovers();
    let mut l = listing("gone", ConnectorType::Source, ConnectorState::Stopped);
    l.config
        .insert("offsets.storage.topic".into(), "gone-offsets".into());
    let live = BTreeMap::from([("gone".to_string(), l)]);
    let wants = [want("gone", vec![src("/a", 12)])];
    let Err(PlanError::Refused { refusals: r, .. }) = plan(&kafka, &input(&live, false), &wants)
    else {
        panic!("not refused");
    };
    assert!(
        r[0].message.contains("offsets.storage.topic=gone-offsets"),
        "{}",
        r[0].message
    );
    // Its own topic named as the workers' is the workers'.
    let mut l = listing("gone", ConnectorType::Source, ConnectorState::Stopped);
    l.config
        .insert("offsets.storage.topic".into(), TOPIC.into());
    let live = BTreeMap::from([("gone".to_string(), l)]);
    assert!(plan(&kafka, &input(&live, false), &wants).is_ok());
}

/// A dry run plans a running source all the same, as it would be written once deleted (what
/// its name left and the file lacks deleted), beside why it is refused now.
#[test]
fn a_dry_run_plans_a_refused_connector_as_once_deleted_with_why() {
    let kafka = leftovers();
    let live = gone_live(ConnectorState::Running);
    let wants = [want("gone", vec![src("/a", 12)])];
    let input = Input {
        plan_refused: true,
        ..input(&live, false)
    };
    let Err(PlanError::Refused {
        refusals,
        plan: Some(plan),
    }) = plan(&kafka, &input, &wants)
    else {
        panic!("a running connector was not refused with its plan");
    };
    assert_eq!(refusals.len(), 1);
    assert!(refusals[0].message.contains("is RUNNING"), "{refusals:?}");
    assert_eq!(plan.names, ["gone"]);
    let got: Vec<(String, Option<Value>)> = plan
        .writes
        .iter()
        .map(|w| (w.source_partition["filename"].to_string(), w.to.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("\"/a\"".to_string(), Some(json!({"position": 12}))),
            ("\"/b\"".to_string(), None),
        ]
    );
    // Without a dry run, nothing is read or planned.
    let Err(PlanError::Refused { plan: None, .. }) =
        super::plan(&kafka, &self::input(&live, false), &wants)
    else {
        panic!("refused without a plan");
    };
}

/// On a service that deletes and creates connectors around the write, a running source and a
/// running sink (its group's member: its own task) are no refusal: planned as once deleted,
/// each named among those created again.
#[test]
fn a_service_that_recreates_plans_running_connectors_as_once_deleted() {
    let kafka = leftovers().with_group("connect-orders", "consumer", 1, &[("t", 0, 9)]);
    let mut live = gone_live(ConnectorState::Running);
    live.insert(
        "orders".to_string(),
        listing("orders", ConnectorType::Sink, ConnectorState::Running),
    );
    let wants = [
        want("gone", vec![src("/a", 12)]),
        sink_file("orders", &[("t", 0, 3)]),
    ];
    let input = Input {
        recreates: true,
        ..input(&live, false)
    };
    let plan = plan(&kafka, &input, &wants).expect("planned, not refused");
    assert_eq!(
        plan.recreated,
        std::collections::BTreeSet::from(["gone".into(), "orders".into()])
    );
    let gone: Vec<(String, Option<Value>)> = plan
        .writes
        .iter()
        .map(|w| (w.source_partition["filename"].to_string(), w.to.clone()))
        .collect();
    assert_eq!(
        gone,
        [
            ("\"/a\"".to_string(), Some(json!({"position": 12}))),
            ("\"/b\"".to_string(), None),
        ],
        "as once deleted: what the file lacks goes"
    );
    assert_eq!(plan.group_writes.len(), 1);
    // Without it, both are refused.
    assert!(super::plan(&kafka, &self::input(&live, false), &wants).is_err());
}

/// A running sink of a dry run: refused once (its state; it is its group's member), its group
/// writes planned all the same.
#[test]
fn a_dry_run_plans_a_running_sinks_group_refused_once() {
    let kafka =
        MemoryKafka::new(vec![], false).with_group("connect-orders", "consumer", 1, &[("t", 0, 9)]);
    let live = BTreeMap::from([(
        "orders".to_string(),
        listing("orders", ConnectorType::Sink, ConnectorState::Running),
    )]);
    let wants = [sink_file("orders", &[("t", 0, 4)])];
    let input = Input {
        plan_refused: true,
        ..input(&live, false)
    };
    let Err(PlanError::Refused {
        refusals,
        plan: Some(plan),
    }) = plan(&kafka, &input, &wants)
    else {
        panic!("not refused with its plan");
    };
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].message.contains("is RUNNING"), "{refusals:?}");
    let got: Vec<(Option<i64>, Option<i64>)> =
        plan.group_writes.iter().map(|w| (w.from, w.to)).collect();
    assert_eq!(got, [(Some(9), Some(4))]);
}

/// The refusal of a reset of a running connector says the sequence that resets it on that
/// kind of cluster: `reset --orphaned` once deleted where kco sees the connectors through a
/// REST API, a file with `offsets: []` where it reads the cluster from its topics.
#[test]
fn a_reset_of_a_running_connector_says_the_sequence_of_its_cluster_kind() {
    let kafka = leftovers();
    let live = gone_live(ConnectorState::Running);
    let wants = [Want::Reset {
        name: "gone".into(),
    }];
    for (rest_api, says, not) in [
        (
            true,
            "then `kco reset --orphaned gone --cluster l` deletes them",
            "offsets: []",
        ),
        (
            false,
            "then `kco apply --cluster l` a file of `gone` with `offsets: []`",
            "--orphaned",
        ),
    ] {
        let input = Input {
            route: match rest_api {
                true => ResetRoute::DeleteFirst,
                false => ResetRoute::ServiceTools,
            },
            ..input(&live, false)
        };
        let Err(PlanError::Refused { refusals: r, .. }) = plan(&kafka, &input, &wants) else {
            panic!("a running connector was not refused");
        };
        assert!(r[0].message.contains(says), "{}", r[0].message);
        assert!(!r[0].message.contains(not), "{}", r[0].message);
        assert!(!r[0].message.contains(", apply,"), "{}", r[0].message);
    }
}

/// MSK Connect's own per-connector offsets topics (named with the connector id, either
/// spelling its guide shows) are warned of; a pinned topic of any other name is not.
#[test]
fn msk_connects_per_connector_offsets_topics_are_warned_of() {
    for topic in [
        "__amazon_msk_connect_offsets_orders-cdc_0a1b2c3d-4e5f-6789-abcd-ef0123456789-2",
        "__msk_connect_offsets_orders-cdc_0a1b2c3d-4e5f-6789-abcd-ef0123456789-2",
    ] {
        let w = per_connector_topic("orders-cdc", topic).expect(topic);
        assert!(
            w.contains(topic) && w.contains("new id") && w.contains("`offset.storage.topic`"),
            "{w}"
        );
    }
    for topic in [
        "orders-offsets",
        "connect-offsets",
        "__amazon_msk_connect_status_x_1",
    ] {
        assert_eq!(per_connector_topic("c", topic), None, "{topic}");
    }
}
