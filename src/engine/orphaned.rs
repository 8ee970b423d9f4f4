//! Offsets that outlive their connector: the source offsets left in a Connect cluster's
//! offsets topic (`offset.storage.topic`) under names that no connector of the cluster has.
//! Delete a connector and create one of the same name later, and it resumes from them; the
//! REST API cannot even read them, since the connector is gone.
//!
//! Each record of the topic is one source partition's offset, as the worker writes it with
//! its internal JSON converter (schemas off): the key `["<connector>", {partition}]`, the
//! value the offset, a null value a deletion. The topic is compacted, and the records of one
//! key share a partition, so the last record of a key is its offset. Records of another shape
//! (a tool's, or a corrupt one) are counted and left out.
//!
//! `kco reset --orphaned` deletes what a name left: a null value for each of its keys,
//! written with the key's exact bytes to the partition its records are in, as the worker
//! writes a deletion; the worker reads the topic continuously, so a connector created under
//! the name later starts afresh. Its undo writes the backed-up values back the same way.
//! [`plan_reset`] and [`plan_restore`] plan those writes (reads only), [`write`] makes them,
//! and [`verify`] reads each key back; the guarded operation
//! (`engine::operation::Operation::run_topic`) backs up and runs them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kafka::{KafkaError, KafkaOptions, OutRecord, RawRecord};

/// Where the offsets topic is read from and written to: Kafka, or records in memory (tests).
pub trait OffsetsTopic {
    /// Every record of `topic`, each with its partition.
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(i32, RawRecord<'_>),
    ) -> Result<(), KafkaError>;
    /// Appends `records` to `topic`, each to its partition, stamped `timestamp_ms`.
    fn write(
        &self,
        topic: &str,
        records: &[OutRecord],
        timestamp_ms: i64,
    ) -> Result<(), KafkaError>;
}

impl OffsetsTopic for KafkaOptions {
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(i32, RawRecord<'_>),
    ) -> Result<(), KafkaError> {
        crate::kafka::scan_topic(self, topic, visit).map(|_| ())
    }

    fn write(
        &self,
        topic: &str,
        records: &[OutRecord],
        timestamp_ms: i64,
    ) -> Result<(), KafkaError> {
        crate::kafka::produce(self, topic, records, timestamp_ms)
    }
}

/// One key of the offsets topic, exactly as the worker wrote it: what a backup keeps and an
/// undo writes back.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicRecord {
    /// The topic's partition that the key's records are in.
    pub partition: i32,
    /// The key's bytes (Connect writes JSON text).
    pub key: String,
    /// The value's bytes; `None`: deleted (a null value).
    pub value: Option<String>,
}

/// One connector name's offsets left in the topic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Orphan {
    pub name: String,
    /// Its source partitions and their offsets, as the worker wrote them, in key order.
    pub partitions: Vec<OrphanPartition>,
    /// When the last of its offsets was written (milliseconds since the Unix epoch).
    #[serde(rename = "lastCommitMs")]
    pub last_commit_ms: i64,
    /// Its keys with a value, exactly as written (a key written twice in different bytes,
    /// by a tool, is two keys to the worker): what a reset deletes.
    #[serde(skip)]
    pub records: Vec<TopicRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrphanPartition {
    pub partition: Value,
    pub offset: Value,
}

/// What the topic held that no connector of the cluster has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Orphans {
    pub topic: String,
    pub orphans: Vec<Orphan>,
    /// Records that were not a Connect source offset (left out).
    #[serde(rename = "unreadRecords")]
    pub unread_records: u64,
}

/// The names with offsets in `topic` that are not among `live` (the cluster's connectors),
/// with what is left of each; a name whose every partition was deleted (null) has none.
pub fn find(
    source: &dyn OffsetsTopic,
    topic: &str,
    live: &BTreeSet<String>,
) -> Result<Orphans, KafkaError> {
    // (name, the partition's key as written) -> (the offset, or None for deleted; when).
    let mut last: BTreeMap<(String, String), (Value, Option<Value>, i64)> = BTreeMap::new();
    // (the topic's partition, the key's bytes) -> (name, the value's bytes).
    let mut raw: BTreeMap<(i32, String), (String, Option<String>)> = BTreeMap::new();
    let mut unread = 0u64;
    source.scan(topic, &mut |p, r| match decode(&r) {
        Some((name, partition, offset)) => {
            if live.contains(&name) {
                return;
            }
            let bytes = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
            let value = offset.as_ref().and(bytes(r.value));
            raw.insert((p, bytes(r.key).unwrap_or_default()), (name.clone(), value));
            let key = (name, partition.to_string());
            last.insert(key, (partition, offset, r.timestamp_ms));
        }
        None => unread += 1,
    })?;
    // A deletion is a commit too: the last one of a name counts it.
    let mut latest: BTreeMap<String, i64> = BTreeMap::new();
    for ((name, _), (_, _, at)) in &last {
        let l = latest.entry(name.clone()).or_insert(*at);
        *l = (*l).max(*at);
    }
    let mut by_name: BTreeMap<String, Orphan> = BTreeMap::new();
    for ((name, _), (partition, offset, _)) in last {
        let Some(offset) = offset else { continue };
        let last_commit_ms = latest[&name];
        by_name
            .entry(name.clone())
            .or_insert_with(|| Orphan {
                name,
                partitions: Vec::new(),
                last_commit_ms,
                records: Vec::new(),
            })
            .partitions
            .push(OrphanPartition { partition, offset });
    }
    for ((partition, key), (name, value)) in raw {
        if let (Some(o), Some(_)) = (by_name.get_mut(&name), &value) {
            o.records.push(TopicRecord {
                partition,
                key,
                value,
            });
        }
    }
    Ok(Orphans {
        topic: topic.to_string(),
        orphans: by_name.into_values().collect(),
        unread_records: unread,
    })
}

/// One key's change: from the value it has to the value wanted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicWrite {
    /// The connector name of the key.
    pub name: String,
    /// The source partition (the key's second element).
    #[serde(rename = "sourcePartition")]
    pub source_partition: Value,
    /// The offset it has (`None`: none).
    pub from: Option<Value>,
    /// The offset wanted (`None`: deleted).
    pub to: Option<Value>,
    /// The key as written, and the value wanted.
    #[serde(skip)]
    pub record: TopicRecord,
    /// The value it has, as written.
    #[serde(skip)]
    pub had: Option<String>,
}

/// What a reset of leftovers, or its undo, writes to the offsets topic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicPlan {
    pub cluster: String,
    pub topic: String,
    /// The connector names whose keys change, sorted.
    pub names: Vec<String>,
    pub writes: Vec<TopicWrite>,
}

impl TopicPlan {
    fn new(cluster: &str, topic: &str, writes: Vec<TopicWrite>) -> Self {
        let names: BTreeSet<String> = writes.iter().map(|w| w.name.clone()).collect();
        TopicPlan {
            cluster: cluster.to_string(),
            topic: topic.to_string(),
            names: names.into_iter().collect(),
            writes,
        }
    }

    /// What the backup keeps: each key as it is now (`None`: none), for an undo to write back.
    pub fn backup_records(&self) -> Vec<TopicRecord> {
        self.writes
            .iter()
            .map(|w| TopicRecord {
                value: w.had.clone(),
                ..w.record.clone()
            })
            .collect()
    }
}

/// The deletion of every offset `names` (among `found`'s) left: a null value for each key.
pub fn plan_reset(cluster: &str, found: &Orphans, names: &[String]) -> TopicPlan {
    let mut writes = Vec::new();
    for o in found.orphans.iter().filter(|o| names.contains(&o.name)) {
        for r in &o.records {
            let Some((_, partition, from)) = decode_text(&r.key, r.value.as_deref()) else {
                continue;
            };
            writes.push(TopicWrite {
                name: o.name.clone(),
                source_partition: partition,
                from,
                to: None,
                record: TopicRecord {
                    value: None,
                    ..r.clone()
                },
                had: r.value.clone(),
            });
        }
    }
    TopicPlan::new(cluster, &found.topic, writes)
}

/// The writes that make each key of `records` (a backup's) hold its value again, from what
/// the topic holds now; a key that already does is left alone. A record that is not a
/// Connect source offset is an error naming it.
pub fn plan_restore(
    source: &dyn OffsetsTopic,
    cluster: &str,
    topic: &str,
    records: &[TopicRecord],
) -> Result<TopicPlan, String> {
    let keys: BTreeSet<(i32, String)> = records
        .iter()
        .map(|r| (r.partition, r.key.clone()))
        .collect();
    let now = last_values(source, topic, &keys).map_err(|e| e.to_string())?;
    let mut writes = Vec::new();
    for r in records {
        let had = now.get(&(r.partition, r.key.clone())).cloned().flatten();
        if had == r.value {
            continue;
        }
        let (name, partition, to) = decode_text(&r.key, r.value.as_deref())
            .ok_or_else(|| format!("key {} is not a Connect source offset's", r.key))?;
        let from = decode_text(&r.key, had.as_deref()).and_then(|(_, _, o)| o);
        writes.push(TopicWrite {
            name,
            source_partition: partition,
            from,
            to,
            record: r.clone(),
            had,
        });
    }
    Ok(TopicPlan::new(cluster, topic, writes))
}

/// Writes the plan's values, stamped `timestamp_ms`.
pub fn write(
    source: &dyn OffsetsTopic,
    plan: &TopicPlan,
    timestamp_ms: i64,
) -> Result<(), KafkaError> {
    let records: Vec<OutRecord> = plan
        .writes
        .iter()
        .map(|w| OutRecord {
            partition: w.record.partition,
            key: w.record.key.clone().into_bytes(),
            value: w.record.value.clone().map(String::into_bytes),
        })
        .collect();
    source.write(&plan.topic, &records, timestamp_ms)
}

/// The plan's writes whose key, read back, does not hold the value written (another client
/// wrote it since, or the write was lost).
pub fn verify(source: &dyn OffsetsTopic, plan: &TopicPlan) -> Result<Vec<TopicWrite>, KafkaError> {
    let keys: BTreeSet<(i32, String)> = plan
        .writes
        .iter()
        .map(|w| (w.record.partition, w.record.key.clone()))
        .collect();
    let now = last_values(source, &plan.topic, &keys)?;
    Ok(plan
        .writes
        .iter()
        .filter(|w| {
            let key = (w.record.partition, w.record.key.clone());
            now.get(&key).cloned().flatten() != w.record.value
        })
        .cloned()
        .collect())
}

/// The last value of each of `keys` in `topic` (`None`: deleted; a key never written is
/// not in the map).
fn last_values(
    source: &dyn OffsetsTopic,
    topic: &str,
    keys: &BTreeSet<(i32, String)>,
) -> Result<BTreeMap<(i32, String), Option<String>>, KafkaError> {
    let mut now = BTreeMap::new();
    source.scan(topic, &mut |p, r| {
        let Some(key) = r.key.and_then(|k| std::str::from_utf8(k).ok()) else {
            return;
        };
        let key = (p, key.to_string());
        if keys.contains(&key) {
            // A JSON null is a deletion too, as the worker reads it.
            let value = r
                .value
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .filter(|v| v.trim() != "null");
            now.insert(key, value);
        }
    })?;
    Ok(now)
}

/// [`decode`] of a key and value kept as text.
fn decode_text(key: &str, value: Option<&str>) -> Option<(String, Value, Option<Value>)> {
    decode(&RawRecord {
        offset: 0,
        timestamp_ms: 0,
        key: Some(key.as_bytes()),
        value: value.map(str::as_bytes),
    })
}

/// A record's connector, source partition and offset (None: a deletion); None for a record
/// that is not a Connect source offset.
fn decode(r: &RawRecord<'_>) -> Option<(String, Value, Option<Value>)> {
    let key: Value = serde_json::from_slice(r.key?).ok()?;
    let [name, partition] = key.as_array()?.as_slice() else {
        return None;
    };
    let name = name.as_str()?.to_string();
    if !partition.is_object() {
        return None;
    }
    let offset = match r.value {
        None => None,
        Some(v) => match serde_json::from_slice::<Value>(v).ok()? {
            Value::Null => None,
            o @ Value::Object(_) => Some(o),
            _ => return None,
        },
    };
    Some((name, partition.clone(), offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A record in memory: (partition, key, value, timestamp).
    type Rec = (i32, Option<String>, Option<String>, i64);

    /// Records in memory.
    struct Topic(Vec<Rec>);

    impl OffsetsTopic for Topic {
        fn scan(
            &self,
            topic: &str,
            visit: &mut dyn FnMut(i32, RawRecord<'_>),
        ) -> Result<(), KafkaError> {
            Written::new(self.0.clone(), false).scan(topic, visit)
        }

        fn write(&self, _: &str, _: &[OutRecord], _: i64) -> Result<(), KafkaError> {
            unreachable!("a read-only topic")
        }
    }

    /// A topic that takes writes (or, `lose`, acknowledges and drops them).
    struct Written {
        records: std::cell::RefCell<Vec<Rec>>,
        lose: bool,
    }

    impl Written {
        fn new(records: Vec<Rec>, lose: bool) -> Self {
            Written {
                records: records.into(),
                lose,
            }
        }
    }

    impl OffsetsTopic for Written {
        fn write(&self, topic: &str, records: &[OutRecord], at: i64) -> Result<(), KafkaError> {
            assert_eq!(topic, "connect-offsets");
            if !self.lose {
                self.records.borrow_mut().extend(records.iter().map(|r| {
                    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                    (
                        r.partition,
                        Some(text(&r.key)),
                        r.value.as_deref().map(text),
                        at,
                    )
                }));
            }
            Ok(())
        }

        fn scan(
            &self,
            topic: &str,
            visit: &mut dyn FnMut(i32, RawRecord<'_>),
        ) -> Result<(), KafkaError> {
            assert_eq!(topic, "connect-offsets");
            for (i, (p, k, v, at)) in self.records.borrow().iter().enumerate() {
                visit(
                    *p,
                    RawRecord {
                        offset: i as i64,
                        timestamp_ms: *at,
                        key: k.as_deref().map(str::as_bytes),
                        value: v.as_deref().map(str::as_bytes),
                    },
                );
            }
            Ok(())
        }
    }

    fn rec(p: i32, key: Value, value: Option<Value>, at: i64) -> Rec {
        (p, Some(key.to_string()), value.map(|v| v.to_string()), at)
    }

    #[test]
    fn the_last_offset_of_each_partition_of_a_name_no_connector_has_is_left_over() {
        let file = |f: &str| json!({"filename": f});
        let topic = Topic(vec![
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
        ]);
        let live = BTreeSet::from(["live".to_string()]);
        let found = find(&topic, "connect-offsets", &live).unwrap();
        assert_eq!(found.unread_records, 5);
        let names: Vec<_> = found.orphans.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["gone", "half"]);
        let gone = &found.orphans[0];
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
        let half = &found.orphans[1];
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
        let topic = Written::new(
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
        let names: Vec<_> = after.orphans.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            ["other"],
            "the name reset has nothing left; others keep theirs"
        );

        // The undo: the backed-up values back, the same keys and partitions.
        let undo = plan_restore(&topic, "a", "connect-offsets", &kept).unwrap();
        assert_eq!(undo.writes.len(), 3);
        assert!(undo
            .writes
            .iter()
            .all(|w| w.from.is_none() && w.to.is_some()));
        write(&topic, &undo, 600).unwrap();
        assert_eq!(verify(&topic, &undo).unwrap(), []);
        let back = find(&topic, "connect-offsets", &live).unwrap();
        let gone = back.orphans.iter().find(|o| o.name == "gone").unwrap();
        let was = before.orphans.iter().find(|o| o.name == "gone").unwrap();
        assert_eq!(
            gone.records, was.records,
            "every key as it was, bytes and all"
        );
        // Nothing left to write a second time.
        let again = plan_restore(&topic, "a", "connect-offsets", &kept).unwrap();
        assert_eq!(again.writes, []);
    }

    #[test]
    fn a_write_that_does_not_read_back_is_reported() {
        let topic = Written::new(
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
        let topic = Written::new(Vec::new(), false);
        let bad = TopicRecord {
            partition: 0,
            key: "not json".into(),
            value: Some("{}".into()),
        };
        let e = plan_restore(&topic, "a", "connect-offsets", &[bad]).unwrap_err();
        assert!(e.contains("not json"), "{e}");
    }
}
