//! Translation against checkpoints held in memory, in the order MM2 would have written them.

use std::cell::Cell;
use std::collections::BTreeMap;

use super::checkpoint::encode;
use super::*;
use crate::kafka::policy::ReplicationPolicy;
use crate::model::file::{Metadata, OffsetsFile};

const NOW: i64 = 1_800_000_000_000;

/// A record in memory: timestamp, key, value.
type Stored = (i64, Vec<u8>, Vec<u8>);

/// Checkpoints topics in memory.
struct Memory {
    topics: BTreeMap<String, Vec<Stored>>,
    scans: Cell<usize>,
}

impl Memory {
    fn new(topic: &str, cps: &[(&str, &str, i32, i64, i64)]) -> Self {
        let records = cps
            .iter()
            .enumerate()
            .map(|(i, (g, t, p, up, down))| {
                let (k, v) = encode(g, t, *p, *up, *down);
                (NOW - 60_000 + i as i64 * 1000, k, v)
            })
            .collect();
        Memory {
            topics: BTreeMap::from([(topic.to_string(), records)]),
            scans: Cell::new(0),
        }
    }
}

impl Memory {
    /// With offset syncs topic `topic` too: `(source topic, partition, upstream, downstream)`.
    fn with_syncs(mut self, topic: &str, syncs: &[(&str, i32, i64, i64)]) -> Self {
        let records = syncs
            .iter()
            .enumerate()
            .map(|(i, (t, p, up, down))| {
                let (k, v) = super::checkpoint::encode_sync(t, *p, *up, *down);
                (NOW - 30_000 + i as i64 * 1000, k, v)
            })
            .collect();
        self.topics.insert(topic.to_string(), records);
        self
    }
}

impl CheckpointSource for Memory {
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> Result<ScanEnd, KafkaError> {
        self.scans.set(self.scans.get() + 1);
        let Some(records) = self.topics.get(topic) else {
            return Err(KafkaError::UnknownTopic {
                topic: topic.into(),
                bootstrap: "west:9092".into(),
            });
        };
        for (i, (ts, k, v)) in records.iter().enumerate() {
            visit(RawRecord {
                offset: i as i64,
                timestamp_ms: *ts,
                key: Some(k),
                value: Some(v),
            });
        }
        Ok(ScanEnd {
            start: 0,
            end: records.len() as i64,
            records: records.len() as u64,
        })
    }
}

fn sink_file(name: &str, kafka: Option<&str>, offsets: &[(&str, i64, i64)]) -> OffsetsFile {
    let offsets = offsets
        .iter()
        .map(|(t, p, o)| OffsetEntry::sink(t, *p, *o))
        .collect();
    let metadata = Metadata {
        kafka_cluster_id: kafka.map(str::to_string),
        ..Metadata::new(name, "east", ConnectorType::Sink)
    };
    OffsetsFile::new(metadata, offsets, None)
}

fn west(with_mirror: bool) -> Target {
    let mut relations = BTreeMap::new();
    if with_mirror {
        relations.insert(
            "east".to_string(),
            MirrorRelation {
                source_cluster: "east".into(),
                alias: "east".into(),
                target_alias: Some("west".into()),
                policy: ReplicationPolicy::Default {
                    separator: ".".into(),
                },
                checkpoints_topic: "east.checkpoints.internal".into(),
            },
        );
    }
    Target {
        cluster: "west".into(),
        kafka_cluster_id: Some("K-WEST".into()),
        relations,
        kafka: None,
    }
}

fn run(
    file: &OffsetsFile,
    target: &Target,
    mode: Option<TranslateMode>,
    mem: &Memory,
) -> Option<Result<Translation, String>> {
    translate(&[("orders-sink", file)], target, mode, Some(mem), NOW)
        .unwrap()
        .remove("orders-sink")
}

fn offsets_of(t: &Translation) -> Vec<(String, i64, i64)> {
    t.offsets
        .iter()
        .map(|e| {
            (
                e.partition["kafka_topic"].as_str().unwrap().to_string(),
                e.partition["kafka_partition"].as_i64().unwrap(),
                e.offset["kafka_offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

const G: &str = "connect-orders-sink";

#[test]
fn takes_the_latest_checkpoint_at_or_below_the_files_offset() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[
            (G, "east.orders", 0, 400, 399),
            (G, "east.orders", 0, 600, 580),
            (G, "east.orders", 0, 900, 880),
            // Another group and another partition are not taken.
            ("connect-other", "east.orders", 0, 650, 640),
            (G, "east.orders", 1, 100, 90),
        ],
    );
    let file = sink_file(
        "orders-sink",
        Some("K-EAST"),
        &[("orders", 0, 650), ("orders", 1, 100)],
    );
    let t = run(&file, &west(true), None, &mem).unwrap().unwrap();
    assert_eq!(
        offsets_of(&t),
        vec![
            ("east.orders".into(), 0, 580),
            ("east.orders".into(), 1, 90)
        ]
    );
    assert_eq!(t.mode, TranslateMode::File);
    assert_eq!(t.group, G);
    let p = &t.partitions[0];
    // From 580 on the mirrored topic up to 650: 70 records, not the 50 after the
    // checkpoint's upstream 600.
    assert_eq!((p.file_offset, p.dr_offset, p.redelivers), (650, 580, 70));
    let cp = p.checkpoint.unwrap();
    assert_eq!(cp.upstream, 600);
    assert_eq!(cp.seconds_since_written, 59);
    assert_eq!(t.renames["orders"], "east.orders");
    assert_eq!(mem.scans.get(), 1);
}

#[test]
fn latest_takes_mm2s_last_checkpoint_even_past_the_file() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[
            (G, "east.orders", 0, 600, 580),
            (G, "east.orders", 0, 900, 880),
        ],
    );
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let t = run(&file, &west(true), Some(TranslateMode::Latest), &mem)
        .unwrap()
        .unwrap();
    assert_eq!(offsets_of(&t), vec![("east.orders".into(), 0, 880)]);
    // The sink starts at 880: the 230 records after the file's 650 are skipped.
    assert_eq!(t.partitions[0].redelivers, -230);
}

#[test]
fn a_rewound_group_uses_the_latest_record_not_the_highest_upstream() {
    // The group went to 900, was rewound to 100, then reached 300.
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[
            (G, "east.orders", 0, 500, 480),
            (G, "east.orders", 0, 100, 95),
            (G, "east.orders", 0, 300, 290),
        ],
    );
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 600)]);
    let t = run(&file, &west(true), None, &mem).unwrap().unwrap();
    assert_eq!(offsets_of(&t), vec![("east.orders".into(), 0, 290)]);
}

#[test]
fn none_renames_topics_and_keeps_numbers_without_reading_kafka() {
    let mem = Memory::new("east.checkpoints.internal", &[]);
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let t = run(&file, &west(true), Some(TranslateMode::None), &mem)
        .unwrap()
        .unwrap();
    assert_eq!(offsets_of(&t), vec![("east.orders".into(), 0, 650)]);
    // Without a relation, `none` keeps the names too: the old behaviour, said explicitly.
    let t = run(&file, &west(false), Some(TranslateMode::None), &mem)
        .unwrap()
        .unwrap();
    assert_eq!(offsets_of(&t), vec![("orders".into(), 0, 650)]);
    assert_eq!(mem.scans.get(), 0);
}

#[test]
fn another_kafka_cluster_without_a_mirror_is_refused_naming_both_ids() {
    let mem = Memory::new("east.checkpoints.internal", &[]);
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let err = run(&file, &west(false), None, &mem).unwrap().unwrap_err();
    assert!(err.contains("K-EAST") && err.contains("K-WEST"), "{err}");
    assert!(err.contains("--translate none"), "{err}");
    let err = run(&file, &west(false), Some(TranslateMode::Latest), &mem)
        .unwrap()
        .unwrap_err();
    assert!(err.contains("has no mirror of `east`"), "{err}");
}

#[test]
fn the_same_kafka_cluster_and_source_connectors_need_nothing() {
    let mem = Memory::new("east.checkpoints.internal", &[]);
    let file = sink_file("orders-sink", Some("K-WEST"), &[("orders", 0, 650)]);
    assert!(run(&file, &west(true), None, &mem).is_none());
    let mut source = sink_file("orders-src", Some("K-EAST"), &[]);
    source.metadata.connector_type = ConnectorType::Source;
    assert_eq!(decide(&source, &west(false), None), Need::Nothing);
    assert_eq!(mem.scans.get(), 0);
}

#[test]
fn a_group_mm2_does_not_checkpoint_names_groups_exclude() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[("connect-other", "east.orders", 0, 600, 580)],
    );
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let err = run(&file, &west(true), None, &mem).unwrap().unwrap_err();
    assert!(err.contains("groups.exclude"), "{err}");
    assert!(err.contains("emit.checkpoints.enabled"), "{err}");
    assert!(
        err.contains("holds checkpoints of other groups, none of this one"),
        "{err}"
    );
}

/// A checkpoint connector that has just (re)started (the mirror back of a failback) has
/// written no checkpoint yet: said first, with when to run again, before the settings to check.
#[test]
fn a_checkpoints_topic_with_no_checkpoint_yet_says_to_wait_before_naming_groups_exclude() {
    let mem = Memory::new("east.checkpoints.internal", &[]);
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let err = run(&file, &west(true), None, &mem).unwrap().unwrap_err();
    let wait = err
        .find("holds no checkpoint of any group yet")
        .unwrap_or_else(|| panic!("{err}"));
    assert!(err.contains("run this again in a minute"), "{err}");
    assert!(
        err.find("groups.exclude").is_some_and(|g| g > wait),
        "{err}"
    );
}

#[test]
fn a_file_older_than_every_checkpoint_is_an_error_never_a_skip() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[(G, "east.orders", 0, 900, 880)],
    );
    let mut file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let err = run(&file, &west(true), None, &mem).unwrap().unwrap_err();
    assert!(err.contains("at or below the file's offset 650"), "{err}");
    assert!(err.contains("oldest kept is at 900"), "{err}");
    // With its age, when it records when it was captured (issue 31).
    let captured =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis((NOW - 3 * 86_400_000) as u64);
    file.metadata.captured_at = Some(humantime::format_rfc3339_seconds(captured).to_string());
    let err = run(&file, &west(true), None, &mem).unwrap().unwrap_err();
    assert!(
        err.contains("the file, captured 3days ago, is older than MirrorMaker 2's checkpoints"),
        "{err}"
    );
}

#[test]
fn a_topic_mm2_does_not_mirror_and_a_missing_checkpoints_topic_are_named() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[(G, "east.payments", 0, 10, 10)],
    );
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 650)]);
    let err = run(&file, &west(true), None, &mem).unwrap().unwrap_err();
    assert!(err.contains("`east.orders` partition 0"), "{err}");
    assert!(err.contains("mirrors no topic `orders`"), "{err}");
    let mem = Memory::new("west.checkpoints.internal", &[]);
    let err = run(&file, &west(true), None, &mem).unwrap().unwrap_err();
    assert!(
        err.contains("`east.checkpoints.internal` does not exist"),
        "{err}"
    );
    assert!(err.contains("source.cluster.alias=east"), "{err}");
}

#[test]
fn consumer_override_group_id_is_the_group_checkpointed() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[("orders-group", "east.orders", 0, 600, 600)],
    );
    let mut file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 600)]);
    file.config = Some(BTreeMap::from([(
        "consumer.override.group.id".to_string(),
        "orders-group".to_string(),
    )]));
    let t = run(&file, &west(true), None, &mem).unwrap().unwrap();
    assert_eq!(offsets_of(&t), vec![("east.orders".into(), 0, 600)]);
    assert_eq!(t.partitions[0].redelivers, 0);
}

/// After a failover, producers write to the DR cluster's own `orders`: the restored sink
/// reads it and the mirrored `east.orders`; a regex is widened the same way (issue 23).
#[test]
fn a_created_sink_reads_the_mirrored_topics_and_the_dr_clusters_own() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[(G, "east.orders", 0, 600, 600)],
    );
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 600)]);
    let target = west(true);
    let t = run(&file, &target, None, &mem).unwrap().unwrap();
    let mut config = BTreeMap::from([("topics".to_string(), "orders, payments".to_string())]);
    let changes = rename_config(&mut config, &t);
    assert_eq!(
        config["topics"],
        "east.orders,orders,east.payments,payments"
    );
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].key, "topics");
    assert_eq!(changes[0].before, "orders, payments");
    assert!(changes[0].why.contains("own"), "{:?}", changes[0]);
    // Failback: a topic west got from east (`west.orders` seen from east) is its original.
    let relation = t.relation.clone().unwrap();
    assert_eq!(
        dr_topics("west.orders", "orders", Some(&relation)),
        ["orders"]
    );

    let mut config = BTreeMap::from([("topics.regex".to_string(), "orders|pay.*".to_string())]);
    let changes = rename_config(&mut config, &t);
    // Java's regex: an optional `east.` (the dot escaped), then the file's regex.
    assert_eq!(config["topics.regex"], r"(?:east\.)?(?:orders|pay.*)");
    assert_eq!(changes[0].key, "topics.regex");
}

/// The DR cluster's own topics a created sink reads: missing, or with another partition
/// count than the mirrored copy (the primary's), the plan says what to create (issue 30).
#[test]
fn the_dr_clusters_own_topics_are_checked_against_the_mirrored_copies() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[(G, "east.orders", 0, 600, 600)],
    );
    let file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 600)]);
    let t = run(&file, &west(true), None, &mem).unwrap().unwrap();
    let own = own_topics("orders, payments", &t);
    assert_eq!(
        own,
        [
            ("orders".to_string(), "east.orders".to_string()),
            ("payments".to_string(), "east.payments".to_string())
        ]
    );
    let kafka = BTreeMap::from([
        ("east.orders".to_string(), 3),
        ("east.payments".to_string(), 2),
        ("payments".to_string(), 1),
    ]);
    // Two sinks read each (issue 31): one warning per topic, naming both, with the
    // bootstrap servers the command needs.
    let readers: BTreeMap<(String, String), Vec<String>> = own
        .iter()
        .map(|pair| {
            (
                pair.clone(),
                vec!["a-sink".to_string(), "b-sink".to_string()],
            )
        })
        .collect();
    let options = KafkaOptions {
        bootstrap: vec!["west-1:9092".into(), "west-2:9092".into()],
        sasl: None,
        tls: None,
        timeout: std::time::Duration::from_secs(15),
    };
    let w = own_topic_warnings(&readers, &kafka, "west", &options);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("topic `orders` does not exist on the Kafka of cluster `west` (read by each of `a-sink`, `b-sink`)")
            && w[0].ends_with("create it first with the 3 partitions of `east.orders` (the primary's): kafka-topics.sh --bootstrap-server west-1:9092,west-2:9092 --create --topic orders --partitions 3"),
        "{}",
        w[0]
    );
    assert!(
        w[1].starts_with("topic `payments` on the Kafka of cluster `west` has 1 partition, `east.payments` (the primary's) 2"),
        "{}",
        w[1]
    );
    let ready = BTreeMap::from([
        ("east.orders".to_string(), 3),
        ("orders".to_string(), 3),
        ("east.payments".to_string(), 2),
        ("payments".to_string(), 2),
    ]);
    assert!(own_topic_warnings(&readers, &ready, "west", &options).is_empty());
    // A topic that came back home (failback) has no own copy to check.
    let relation = t.relation.clone().unwrap();
    assert_eq!(
        dr_topics("west.orders", "orders", Some(&relation)),
        ["orders"]
    );
}

/// Failback (issue 30): west's file of a sink that read `east.orders` (mirrored from east)
/// and west's own `orders`, applied to east. West's own topic crosses through the mirror
/// back's checkpoints (`west.checkpoints.internal` on east: `orders` -> `west.orders`);
/// `east.orders` came from east and is never mirrored home: it crosses through the offset
/// syncs the mirror from east wrote on east (`mm2-offset-syncs.west.internal`), downstream to
/// upstream at the highest sync at or below the file's position: exact pairs, no record
/// after it skipped (a checkpoint's downstream offset is only a lower bound).
#[test]
fn a_failback_translates_the_mirrored_topic_back_through_the_offset_syncs() {
    let reverse = MirrorRelation {
        source_cluster: "west".into(),
        alias: "west".into(),
        target_alias: Some("east".into()),
        policy: ReplicationPolicy::Default {
            separator: ".".into(),
        },
        checkpoints_topic: "west.checkpoints.internal".into(),
    };
    let east = Target {
        cluster: "east".into(),
        kafka_cluster_id: Some("K-EAST".into()),
        relations: BTreeMap::from([("west".to_string(), reverse)]),
        kafka: None,
    };
    let mem = Memory::new("west.checkpoints.internal", &[(G, "west.orders", 0, 10, 8)]).with_syncs(
        "mm2-offset-syncs.west.internal",
        &[
            ("orders", 0, 0, 0),
            ("orders", 0, 600, 590),
            ("orders", 0, 700, 695),
            ("payments", 0, 640, 640),
        ],
    );
    let file_of = |entries: Vec<OffsetEntry>| {
        let metadata = Metadata {
            kafka_cluster_id: Some("K-WEST".into()),
            ..Metadata::new("orders-sink", "west", ConnectorType::Sink)
        };
        OffsetsFile::new(metadata, entries, None)
    };
    let file = file_of(vec![
        OffsetEntry::sink("east.orders", 0, 650),
        OffsetEntry::sink("orders", 0, 12),
    ]);
    let t = translate(&[("orders-sink", &file)], &east, None, Some(&mem), NOW)
        .unwrap()
        .remove("orders-sink")
        .unwrap()
        .unwrap();
    // 650 on west's east.orders: the sync at 590 (not 695, past the file) -> east's 600.
    assert_eq!(
        offsets_of(&t),
        vec![("orders".into(), 0, 600), ("west.orders".into(), 0, 8)]
    );
    let back = &t.partitions[0];
    assert_eq!(back.crossing(), "east.orders/0 650 -> orders/0 600");
    assert_eq!(back.redelivers, 60, "650 - 590 records read again");
    assert_eq!(
        back.offset_syncs.as_deref(),
        Some("mm2-offset-syncs.west.internal")
    );
    assert_eq!(t.partitions[1].crossing(), "orders/0 12 -> west.orders/0 8");
    assert_eq!(t.partitions[1].offset_syncs, None);
    // The restored sink reads east's own `orders` and west's, mirrored.
    let mut config = BTreeMap::from([("topics".to_string(), "east.orders,orders".to_string())]);
    rename_config(&mut config, &t);
    assert_eq!(config["topics"], "orders,west.orders");

    // Below the first sync of the partition, or a partition never synced: plan errors.
    let mem = Memory::new("west.checkpoints.internal", &[])
        .with_syncs("mm2-offset-syncs.west.internal", &[("orders", 0, 600, 590)]);
    let e = translate(
        &[(
            "orders-sink",
            &file_of(vec![OffsetEntry::sink("east.orders", 0, 100)]),
        )],
        &east,
        None,
        Some(&mem),
        NOW,
    )
    .unwrap()
    .remove("orders-sink")
    .unwrap()
    .unwrap_err();
    assert!(
        e.contains("no offset sync of `orders` partition 0 at or below the file's offset 100 of `east.orders` in `mm2-offset-syncs.west.internal`"),
        "{e}"
    );
    let e = translate(
        &[(
            "orders-sink",
            &file_of(vec![OffsetEntry::sink("east.orders", 1, 100)]),
        )],
        &east,
        None,
        Some(&mem),
        NOW,
    )
    .unwrap()
    .remove("orders-sink")
    .unwrap()
    .unwrap_err();
    assert!(
        e.contains("holds no offset sync of `orders` partition 1"),
        "{e}"
    );
    // No offset syncs topic on east: said, naming it and MM2's setting.
    let none = Memory::new("west.checkpoints.internal", &[]);
    let e = translate(&[("orders-sink", &file)], &east, None, Some(&none), NOW)
        .unwrap()
        .remove("orders-sink")
        .unwrap()
        .unwrap_err();
    assert!(
        e.contains("`mm2-offset-syncs.west.internal` on its Kafka")
            && e.contains("offset-syncs.topic.location=source"),
        "{e}"
    );
}

/// Issue 30: the mirror's liveness is the copy of the source's heartbeats
/// (`east.heartbeats`, their own timestamps), before the DR side's `heartbeats` (the flow's
/// heartbeat connector on this cluster writes them with the source down); a DR-side
/// heartbeat of another flow is not this mirror's; with none, the hint says which
/// connector to run where.
#[test]
fn the_mirrors_liveness_is_the_copy_of_the_sources_heartbeats() {
    let relation = west(true).relations.remove("east").unwrap();
    let beat = |source: &str, target: &str, at: i64| {
        let (k, v) = heartbeat::encode(source, target, at);
        (NOW, k, v)
    };
    let memory = |topics: Vec<(&str, Vec<Stored>)>| Memory {
        topics: topics
            .into_iter()
            .map(|(t, r)| (t.to_string(), r))
            .collect(),
        scans: Cell::new(0),
    };
    // The source's copy is 90 s old, the DR side's own heartbeat fresh: the copy counts.
    let both = memory(vec![
        (
            "east.heartbeats",
            vec![
                beat("west", "east", NOW - 120_000),
                beat("west", "east", NOW - 90_000),
            ],
        ),
        ("heartbeats", vec![beat("east", "west", NOW - 1_000)]),
    ]);
    let h = heartbeat::read(&relation, &both, NOW).unwrap();
    assert_eq!(
        (
            h.topic.as_deref(),
            h.mirrored,
            h.seconds_since_last_heartbeat
        ),
        (Some("east.heartbeats"), true, Some(90)),
        "{h:?}"
    );
    // Only the DR side's: shown, not mirrored; another flow's heartbeat is not this one's.
    let local = memory(vec![(
        "heartbeats",
        vec![
            beat("east", "west", NOW - 3_000),
            beat("north", "west", NOW - 1_000),
        ],
    )]);
    let h = heartbeat::read(&relation, &local, NOW).unwrap();
    assert_eq!(
        (
            h.topic.as_deref(),
            h.mirrored,
            h.seconds_since_last_heartbeat
        ),
        (Some("heartbeats"), false, Some(3)),
        "{h:?}"
    );
    // None: the hint names the connector that makes the copy, on the source's Kafka.
    let h = heartbeat::read(&relation, &memory(vec![]), NOW).unwrap();
    let problem = h.problem.unwrap();
    assert!(
        h.topic.is_none()
            && problem.contains("`east.heartbeats` or `heartbeats`")
            && problem.contains("on a Connect worker of `east`'s own Kafka")
            && problem.contains("copies its heartbeats here as `east.heartbeats`"),
        "{problem}"
    );
}

/// Re-delivery counted where the sink reads (issue 31, 4): file 445, checkpoint 416 -> 406
/// (MM2 puts the downstream offset one past its last offset sync, at 405): a sink started at
/// 406 delivers 39 records again, not the 29 after the checkpoint's upstream offset, and
/// `--max-behind 30` rings for them. A downstream offset above the upstream one (the mirrored
/// topic numbered otherwise) keeps the upstream distance.
#[test]
fn redelivers_counts_from_the_downstream_offset_the_sink_starts_at() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[
            (G, "east.orders", 0, 416, 406),
            (G, "east.orders", 1, 416, 9006),
        ],
    );
    let file = sink_file(
        "orders-sink",
        Some("K-EAST"),
        &[("orders", 0, 445), ("orders", 1, 445)],
    );
    let t = run(&file, &west(true), None, &mem).unwrap().unwrap();
    let counts: Vec<(i64, i64)> = t
        .partitions
        .iter()
        .map(|p| (p.dr_offset, p.redelivers))
        .collect();
    assert_eq!(counts, vec![(406, 39), (9006, 29)]);
    let alarm = crate::engine::diff::Alarm {
        max_behind: Some(30),
        ..Default::default()
    };
    let why = alarm.rings(&t, None);
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].starts_with("orders/0 445 -> east.orders/0 406: 39 records behind the file, over the 30 allowed (--max-behind)"),
        "{why:?}"
    );
}

/// A stale file (issue 31, d): captured 11 minutes ago at 445, while the group has since
/// committed up to 2154 (MM2's latest checkpoint): the translation keeps that checkpoint,
/// and says the file's age and how far behind it is, where it said only "0 records behind".
#[test]
fn a_file_the_group_has_moved_past_says_its_age_and_how_far_behind_it_is() {
    let mem = Memory::new(
        "east.checkpoints.internal",
        &[
            (G, "east.orders", 0, 445, 445),
            (G, "east.orders", 0, 2154, 2154),
        ],
    );
    let mut file = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 445)]);
    let captured = std::time::UNIX_EPOCH + std::time::Duration::from_millis((NOW - 660_000) as u64);
    file.metadata.captured_at = Some(humantime::format_rfc3339_seconds(captured).to_string());
    let t = run(&file, &west(true), None, &mem).unwrap().unwrap();
    let p = &t.partitions[0];
    assert_eq!((p.dr_offset, p.redelivers, p.behind_live()), (445, 0, 1709));
    assert_eq!(t.file_age_seconds, Some(660));
    assert_eq!(
        t.stale_note().unwrap(),
        "the file was captured 11m ago, and the group has committed past it since: orders/0 by 1709 records (MM2's latest checkpoint of the group, upstream 2154 -> downstream 2154, written 59s ago); a failover from the file delivers those records again too (take a newer snapshot, or --translate latest for the primary's last committed position)"
    );
    // At the group's position, or with --translate latest: nothing to say.
    let fresh = sink_file("orders-sink", Some("K-EAST"), &[("orders", 0, 2154)]);
    let t = run(&fresh, &west(true), None, &mem).unwrap().unwrap();
    assert_eq!(t.stale_note(), None);
    let t = run(&file, &west(true), Some(TranslateMode::Latest), &mem)
        .unwrap()
        .unwrap();
    assert_eq!(t.stale_note(), None);
}
