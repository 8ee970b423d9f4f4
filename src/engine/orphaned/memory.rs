//! One Kafka in memory for the engine's unit tests: the offsets topic's records and the
//! consumer groups, each write kept (or, `lose`, acknowledged and dropped).

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::{Committed, GroupListing, GroupState, OffsetsTopic, Written};
use crate::kafka::{KafkaError, OutRecord, RawRecord};

/// A record: (partition, key, value, timestamp).
pub type Rec = (i32, Option<String>, Option<String>, i64);

/// A group: its type, members and offsets by (topic, partition).
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub protocol_type: String,
    pub members: usize,
    pub offsets: BTreeMap<(String, i32), i64>,
}

/// How many partitions the offsets topic in memory has (Connect's default, 25).
pub const PARTITIONS: i32 = 25;

pub struct MemoryKafka {
    pub records: RefCell<Vec<Rec>>,
    pub groups: RefCell<BTreeMap<String, Group>>,
    pub lose: bool,
}

impl MemoryKafka {
    pub fn new(records: Vec<Rec>, lose: bool) -> Self {
        MemoryKafka {
            records: records.into(),
            groups: Default::default(),
            lose,
        }
    }

    /// Adds `group` of `protocol_type` with `members` and `offsets` (topic, partition, offset).
    pub fn with_group(
        self,
        group: &str,
        protocol_type: &str,
        members: usize,
        offsets: &[(&str, i32, i64)],
    ) -> Self {
        let offsets = offsets
            .iter()
            .map(|(t, p, o)| ((t.to_string(), *p), *o))
            .collect();
        self.groups.borrow_mut().insert(
            group.to_string(),
            Group {
                protocol_type: protocol_type.to_string(),
                members,
                offsets,
            },
        );
        self
    }

    /// `group`'s offsets now.
    pub fn offsets(&self, group: &str) -> BTreeMap<(String, i32), i64> {
        self.groups
            .borrow()
            .get(group)
            .map(|g| g.offsets.clone())
            .unwrap_or_default()
    }
}

impl OffsetsTopic for MemoryKafka {
    fn partitions(&self, topic: &str) -> Result<i32, KafkaError> {
        assert_eq!(topic, "connect-offsets");
        Ok(PARTITIONS)
    }

    fn write(&self, topic: &str, records: &[OutRecord], at: i64) -> Result<Written, KafkaError> {
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
        Ok(Written::Transaction {
            id: "in-memory".into(),
        })
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

    fn groups(&self) -> Result<Vec<GroupListing>, KafkaError> {
        Ok(self
            .groups
            .borrow()
            .iter()
            .map(|(id, g)| GroupListing {
                id: id.clone(),
                protocol_type: g.protocol_type.clone(),
            })
            .collect())
    }

    fn group(&self, group: &str) -> Result<GroupState, KafkaError> {
        let g = self.groups.borrow().get(group).cloned().unwrap_or_default();
        Ok(GroupState {
            state: if g.members > 0 { "Stable" } else { "Empty" }.into(),
            members: g.members,
            offsets: g
                .offsets
                .iter()
                .map(|((topic, partition), offset)| Committed {
                    topic: topic.clone(),
                    partition: *partition,
                    offset: *offset,
                })
                .collect(),
        })
    }

    fn commit(&self, group: &str, offsets: &[Committed]) -> Result<(), KafkaError> {
        let mut groups = self.groups.borrow_mut();
        let g = groups.entry(group.to_string()).or_default();
        assert_eq!(
            g.members, 0,
            "Kafka refuses a commit from outside a group with members"
        );
        if !self.lose {
            for c in offsets {
                g.offsets.insert((c.topic.clone(), c.partition), c.offset);
            }
        }
        Ok(())
    }

    fn delete_offsets(&self, group: &str, partitions: &[(String, i32)]) -> Result<(), KafkaError> {
        let mut groups = self.groups.borrow_mut();
        let g = groups.entry(group.to_string()).or_default();
        if !self.lose {
            for p in partitions {
                g.offsets.remove(p);
            }
        }
        Ok(())
    }
}
