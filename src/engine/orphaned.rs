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

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::kafka::{KafkaError, KafkaOptions, RawRecord};

/// Where the offsets topic is read from: Kafka, or records in memory (tests).
pub trait OffsetsTopic {
    /// Every record of `topic`, each with its partition.
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(i32, RawRecord<'_>),
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
    let mut unread = 0u64;
    source.scan(topic, &mut |_, r| match decode(&r) {
        Some((name, partition, offset)) => {
            if live.contains(&name) {
                return;
            }
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
            })
            .partitions
            .push(OrphanPartition { partition, offset });
    }
    Ok(Orphans {
        topic: topic.to_string(),
        orphans: by_name.into_values().collect(),
        unread_records: unread,
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

    /// Records in memory: (partition, key, value, timestamp).
    struct Topic(Vec<(i32, Option<String>, Option<String>, i64)>);

    impl OffsetsTopic for Topic {
        fn scan(
            &self,
            topic: &str,
            visit: &mut dyn FnMut(i32, RawRecord<'_>),
        ) -> Result<(), KafkaError> {
            assert_eq!(topic, "connect-offsets");
            for (i, (p, k, v, at)) in self.0.iter().enumerate() {
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

    fn rec(
        p: i32,
        key: Value,
        value: Option<Value>,
        at: i64,
    ) -> (i32, Option<String>, Option<String>, i64) {
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
}
