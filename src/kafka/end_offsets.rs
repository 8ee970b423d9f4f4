//! The end offsets of topic partitions (the offset the next record written gets): how far a
//! sink's committed offsets are behind its topics (`engine::metrics`' sink lag).

use std::collections::{BTreeMap, BTreeSet};

use super::conn::Conn;
use super::fetch::{offset_at, LATEST};
use super::{KafkaError, KafkaOptions};

/// Each partition's end offset (read_committed: its last stable offset), one connection per
/// leader; a partition Kafka does not have is left out (a topic deleted since the sink
/// committed to it).
pub fn end_offsets(
    opts: &KafkaOptions,
    partitions: &BTreeSet<(String, i32)>,
) -> Result<BTreeMap<(String, i32), i64>, KafkaError> {
    let mut ends = BTreeMap::new();
    let mut conns: BTreeMap<String, Conn> = BTreeMap::new();
    let mut leaders_of: BTreeMap<&str, BTreeMap<i32, String>> = BTreeMap::new();
    for (topic, partition) in partitions {
        let leaders = match leaders_of.entry(topic.as_str()) {
            std::collections::btree_map::Entry::Occupied(l) => l.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                match super::conn::leaders(opts, topic) {
                    Ok(l) => v.insert(l),
                    Err(KafkaError::UnknownTopic { .. }) => v.insert(BTreeMap::new()),
                    Err(e) => return Err(e),
                }
            }
        };
        let Some(leader) = leaders.get(partition) else {
            continue;
        };
        let c = match conns.entry(leader.clone()) {
            std::collections::btree_map::Entry::Occupied(c) => c.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(Conn::open(opts, leader)?),
        };
        let end = offset_at(c, topic, *partition, LATEST)?;
        ends.insert((topic.clone(), *partition), end);
    }
    Ok(ends)
}
