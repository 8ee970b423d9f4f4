//! Offsets that outlive their connector: the source offsets left in a Connect cluster's
//! offsets topic (`offset.storage.topic`) under names that no connector of the cluster has,
//! and the committed offsets left in a sink's consumer group (`connect-<name>`) that no
//! connector of the cluster consumes with. Delete a connector and create one of the same name
//! later, and it resumes from them; the REST API cannot even read them, since the connector
//! is gone.
//!
//! A sink's group counts only while it has no members (nothing consumes with it, Connect or
//! another client) and is not the group of a connector of the cluster (its
//! `consumer.override.group.id`). Its reset deletes the group's committed offsets; its undo
//! commits them back, as a client outside the group does, which Kafka accepts only while the
//! group has no members.
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

use crate::engine::neighbours::{groups_used_by, Neighbour};
pub use crate::kafka::groups::{Committed, GroupListing, GroupState};
use crate::kafka::{KafkaError, KafkaOptions, OutRecord, RawRecord};

/// Where the offsets topic is read from and written to, and the sinks' consumer groups:
/// Kafka, or records in memory (tests).
pub trait OffsetsTopic {
    /// Every consumer group of the Kafka cluster.
    fn groups(&self) -> Result<Vec<GroupListing>, KafkaError>;
    /// A group's state, members and committed offsets.
    fn group(&self, group: &str) -> Result<GroupState, KafkaError>;
    /// Commits `offsets` for `group` (a group with no members).
    fn commit(&self, group: &str, offsets: &[Committed]) -> Result<(), KafkaError>;
    /// Deletes `group`'s committed offsets of `partitions` (topic, partition).
    fn delete_offsets(&self, group: &str, partitions: &[(String, i32)]) -> Result<(), KafkaError>;
    /// Every record of `topic`, each with its partition.
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(i32, RawRecord<'_>),
    ) -> Result<(), KafkaError>;
    /// How many partitions `topic` has (where a new key goes).
    fn partitions(&self, topic: &str) -> Result<i32, KafkaError>;
    /// Appends `records` to `topic`, each to its partition, stamped `timestamp_ms`: in one
    /// transaction where one can start, else as they come.
    fn write(
        &self,
        topic: &str,
        records: &[OutRecord],
        timestamp_ms: i64,
    ) -> Result<Written, KafkaError>;
}

impl OffsetsTopic for KafkaOptions {
    fn groups(&self) -> Result<Vec<GroupListing>, KafkaError> {
        crate::kafka::groups::list_groups(self)
    }

    fn group(&self, group: &str) -> Result<GroupState, KafkaError> {
        crate::kafka::groups::describe(self, group)
    }

    fn commit(&self, group: &str, offsets: &[Committed]) -> Result<(), KafkaError> {
        crate::kafka::groups::commit(self, group, offsets)
    }

    fn delete_offsets(&self, group: &str, partitions: &[(String, i32)]) -> Result<(), KafkaError> {
        crate::kafka::groups::delete_offsets(self, group, partitions)
    }

    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(i32, RawRecord<'_>),
    ) -> Result<(), KafkaError> {
        crate::kafka::scan_topic(self, topic, visit).map(|_| ())
    }

    fn partitions(&self, topic: &str) -> Result<i32, KafkaError> {
        match crate::kafka::topic_partitions(self)?.get(topic) {
            Some(n) => Ok(*n as i32),
            None => Err(KafkaError::UnknownTopic {
                topic: topic.to_string(),
                bootstrap: self.bootstrap_display(),
            }),
        }
    }

    fn write(
        &self,
        topic: &str,
        records: &[OutRecord],
        timestamp_ms: i64,
    ) -> Result<Written, KafkaError> {
        // One id per offsets topic: the next run's transaction fences off one a run cut short
        // left open (the cluster's lock keeps two runs on one topic apart).
        let id = format!("kco-offsets-{topic}");
        match crate::kafka::txn::produce(self, topic, records, timestamp_ms, &id) {
            Ok(()) => Ok(Written::Transaction { id }),
            Err(crate::kafka::txn::TxnError::Failed(e)) => Err(e),
            Err(crate::kafka::txn::TxnError::NotStarted(why)) => {
                crate::kafka::produce(self, topic, records, timestamp_ms)?;
                Ok(Written::Plain {
                    why: why.to_string(),
                })
            }
        }
    }
}

/// How the records of a plan were written to the offsets topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Written {
    /// In one transaction of this transactional id: all visible at once, or none.
    Transaction { id: String },
    /// One by one, without a transaction, because none could start (`why`): a reader sees
    /// them all the same, `read_committed` or not; a run cut short leaves some written.
    Plain { why: String },
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

/// A sink connector name's committed offsets left in its consumer group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SinkOrphan {
    pub name: String,
    pub group: String,
    /// Its partitions and offsets in Connect's shape for a sink (`kafka_topic`,
    /// `kafka_partition`; `kafka_offset`), by topic and partition.
    pub partitions: Vec<OrphanPartition>,
    /// The same, as Kafka has them: what a reset deletes.
    #[serde(skip)]
    pub committed: Vec<Committed>,
}

/// What the topic and the groups held that no connector of the cluster has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Orphans {
    pub topic: String,
    /// Source offsets left in the offsets topic.
    pub sources: Vec<Orphan>,
    /// Sinks' committed offsets left in their consumer groups.
    pub sinks: Vec<SinkOrphan>,
    /// Records that were not a Connect source offset (left out).
    #[serde(rename = "unreadRecords")]
    pub unread_records: u64,
    /// Other clusters of kco.yaml that could not be looked at for the groups their
    /// connectors use, and why: a sink's group listed may be one of theirs.
    #[serde(skip)]
    pub unchecked: Vec<(String, String)>,
    /// Names left out because a source of another Connect cluster of kco.yaml, on the same
    /// Kafka cluster, has them and may keep its offsets in this topic: each with that
    /// cluster.
    #[serde(rename = "liveElsewhere", skip_serializing_if = "BTreeMap::is_empty")]
    pub live_elsewhere: BTreeMap<String, String>,
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
    let mut tally = crate::kafka::topic_role::Tally::default();
    source.scan(topic, &mut |p, r| {
        tally.add(r.key);
        let Some((name, partition, offset)) = decode(&r) else {
            unread += 1;
            return;
        };
        if live.contains(&name) {
            return;
        }
        let bytes = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        let value = offset.as_ref().and(bytes(r.value));
        raw.insert((p, bytes(r.key).unwrap_or_default()), (name.clone(), value));
        let key = (name, partition.to_string());
        last.insert(key, (partition, offset, r.timestamp_ms));
    })?;
    tally
        .check(crate::kafka::topic_role::Role::Offsets)
        .map_err(|holds| KafkaError::NotItsRole {
            topic: topic.to_string(),
            holds,
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
        sources: by_name.into_values().collect(),
        sinks: Vec::new(),
        unread_records: unread,
        unchecked: Vec::new(),
        live_elsewhere: BTreeMap::new(),
    })
}

/// Everything the cluster's deleted connectors left behind: the source offsets in `topic`
/// under names that no connector of `live` (the cluster's, as `own` listed them with their
/// configs) has, and the sinks' groups that none of them, nor a connector of another Connect
/// cluster of kco.yaml on the same Kafka (`others`), consumes with. A connector's group is its
/// `consumer.override.group.id`, or `connect-<name>`. A neighbour that cannot be looked at
/// is named in [`Orphans::unchecked`].
pub fn find_all(
    store: &dyn OffsetsTopic,
    topic: &str,
    live: &BTreeMap<String, crate::client::ConnectorListing>,
    own: &dyn crate::client::Service,
    others: &[Neighbour],
    named: &BTreeMap<String, String>,
) -> Result<Orphans, KafkaError> {
    let names: BTreeSet<String> = live.keys().cloned().collect();
    let elsewhere = groups_used_by(own, others);
    let mut in_use: BTreeSet<String> = live
        .iter()
        .map(|(name, l)| crate::kafka::groups::consumer_group(name, &l.config))
        .collect();
    in_use.extend(elsewhere.groups.keys().cloned());
    // A name a source of another Connect cluster has, whose worker may keep its offsets in
    // this topic, is that source's: never a leftover.
    let elsewhere_sources = elsewhere.sources_in(topic);
    let mut taken = names.clone();
    taken.extend(elsewhere_sources.keys().cloned());
    let mut found = find(store, topic, &taken)?;
    found.live_elsewhere = elsewhere_sources;
    found.sinks = find_sinks(store, &names, &in_use)?;
    found
        .sinks
        .extend(find_named(store, &names, &in_use, named)?);
    found
        .sinks
        .sort_by(|a, b| (&a.name, &a.group).cmp(&(&b.name, &b.group)));
    found.unchecked = elsewhere.unchecked;
    Ok(found)
}

/// The sinks' groups (`connect-<name>`) with committed offsets whose name no connector of
/// the cluster has (`live`), that no connector consumes with (`in_use`: each connector's
/// group) and that have no members.
pub fn find_sinks(
    store: &dyn OffsetsTopic,
    live: &BTreeSet<String>,
    in_use: &BTreeSet<String>,
) -> Result<Vec<SinkOrphan>, KafkaError> {
    let mut found = Vec::new();
    for g in store.groups()? {
        let Some(name) = g.id.strip_prefix("connect-") else {
            continue;
        };
        // Connect workers' own group is of type `connect`; a sink's is `consumer`, or empty
        // for a group that only ever had offsets committed for it.
        if !matches!(g.protocol_type.as_str(), "consumer" | "")
            || live.contains(name)
            || in_use.contains(&g.id)
        {
            continue;
        }
        let state = store.group(&g.id)?;
        if state.members > 0 || state.offsets.is_empty() {
            continue;
        }
        found.push(SinkOrphan {
            name: name.to_string(),
            group: g.id.clone(),
            partitions: state.offsets.iter().map(sink_partition).collect(),
            committed: state.offsets,
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The groups that snapshot files name for their sinks (`consumer.override.group.id` in a
/// file's config; `named`: connector name to group) that no connector of the cluster has
/// (`live`), that no connector consumes with (`in_use`) and that have committed offsets and no
/// members. A `connect-<name>` group is [`find_sinks`]'s.
pub fn find_named(
    store: &dyn OffsetsTopic,
    live: &BTreeSet<String>,
    in_use: &BTreeSet<String>,
    named: &BTreeMap<String, String>,
) -> Result<Vec<SinkOrphan>, KafkaError> {
    let mut found = Vec::new();
    for (name, group) in named {
        if live.contains(name) || in_use.contains(group) || group.starts_with("connect-") {
            continue;
        }
        let state = store.group(group)?;
        if state.members > 0 || state.offsets.is_empty() {
            continue;
        }
        found.push(SinkOrphan {
            name: name.clone(),
            group: group.clone(),
            partitions: state.offsets.iter().map(sink_partition).collect(),
            committed: state.offsets,
        });
    }
    Ok(found)
}

/// The sinks' groups that snapshot files name: each sink file's connector name and the
/// group its config's `consumer.override.group.id` gives it (files without one name none).
pub fn groups_named_by<'a>(
    files: impl IntoIterator<Item = &'a crate::model::file::OffsetsFile>,
) -> BTreeMap<String, String> {
    files
        .into_iter()
        .filter(|f| f.metadata.connector_type == crate::model::ConnectorType::Sink)
        .filter_map(|f| {
            let group = f.config.as_ref()?.get("consumer.override.group.id")?;
            Some((f.metadata.name.clone(), group.trim().to_string()))
        })
        .filter(|(_, g)| !g.is_empty())
        .collect()
}

/// A committed offset in Connect's shape for a sink.
fn sink_partition(c: &Committed) -> OrphanPartition {
    OrphanPartition {
        partition: serde_json::json!({"kafka_topic": c.topic, "kafka_partition": c.partition}),
        offset: serde_json::json!({"kafka_offset": c.offset}),
    }
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

/// One committed offset of a sink's group to change: kept in a backup as it was, and
/// written back by an undo.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupRecord {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// `None`: no committed offset (deleted).
    pub offset: Option<i64>,
}

/// One committed offset's change in a sink's group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupWrite {
    /// The connector name of the group (`connect-<name>`).
    pub name: String,
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// The offset it has (`None`: none).
    pub from: Option<i64>,
    /// The offset wanted (`None`: deleted).
    pub to: Option<i64>,
}

impl GroupWrite {
    fn record(&self, offset: Option<i64>) -> GroupRecord {
        GroupRecord {
            group: self.group.clone(),
            topic: self.topic.clone(),
            partition: self.partition,
            offset,
        }
    }
}

/// What a plan of writes to the offsets topic and the sinks' groups is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The offsets deleted connectors left (`kco reset --orphaned`), or their undo: no
    /// connector of the cluster may have one of the names.
    #[default]
    Leftovers,
    /// A connector's offsets on a cluster read through Kafka (`kco apply`, `kco reset`;
    /// `engine::through_kafka`): its connector does not exist, or is stopped.
    Apply,
}

/// What a reset of leftovers, or its undo, or an apply through Kafka writes to the offsets
/// topic and the sinks' groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicPlan {
    pub cluster: String,
    pub topic: String,
    /// The connector names whose keys or groups change, sorted.
    pub names: Vec<String>,
    pub writes: Vec<TopicWrite>,
    #[serde(rename = "groupWrites", skip_serializing_if = "Vec::is_empty")]
    pub group_writes: Vec<GroupWrite>,
    pub purpose: Purpose,
    /// Names whose connector exists and was STOPPED when planned (an apply): written only
    /// while it still is.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub stopped: BTreeSet<String>,
    /// Names whose connector exists and that the service deletes and creates again around
    /// the write (its steps: [`Op::DeleteKeeping`](crate::client::Op), then
    /// [`Op::CreateFrom`](crate::client::Op)), planned as once deleted.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub recreated: BTreeSet<String>,
}

impl TopicPlan {
    pub(crate) fn new(
        cluster: &str,
        topic: &str,
        writes: Vec<TopicWrite>,
        group_writes: Vec<GroupWrite>,
    ) -> Self {
        let names: BTreeSet<String> = writes
            .iter()
            .map(|w| w.name.clone())
            .chain(group_writes.iter().map(|w| w.name.clone()))
            .collect();
        TopicPlan {
            cluster: cluster.to_string(),
            topic: topic.to_string(),
            names: names.into_iter().collect(),
            writes,
            group_writes,
            purpose: Purpose::Leftovers,
            stopped: BTreeSet::new(),
            recreated: BTreeSet::new(),
        }
    }

    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.group_writes.is_empty()
    }

    /// The groups the plan changes, sorted.
    pub fn groups(&self) -> Vec<String> {
        let groups: BTreeSet<String> = self.group_writes.iter().map(|w| w.group.clone()).collect();
        groups.into_iter().collect()
    }

    /// What the backup keeps of the groups: each offset as it is now.
    pub fn backup_groups(&self) -> Vec<GroupRecord> {
        self.group_writes.iter().map(|w| w.record(w.from)).collect()
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
    for o in found.sources.iter().filter(|o| names.contains(&o.name)) {
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
    let mut group_writes = Vec::new();
    for o in found.sinks.iter().filter(|o| names.contains(&o.name)) {
        for c in &o.committed {
            group_writes.push(GroupWrite {
                name: o.name.clone(),
                group: o.group.clone(),
                topic: c.topic.clone(),
                partition: c.partition,
                from: Some(c.offset),
                to: None,
            });
        }
    }
    TopicPlan::new(cluster, &found.topic, writes, group_writes)
}

/// The writes that make each key of `records` (a backup's) hold its value again, and each
/// offset of `groups` (the backup's sinks' groups) be what it was, from what the topic and
/// the groups hold now; what already does is left alone. A record that is not a Connect
/// source offset is an error naming it.
pub fn plan_restore(
    source: &dyn OffsetsTopic,
    cluster: &str,
    topic: &str,
    records: &[TopicRecord],
    groups: &[GroupRecord],
) -> Result<TopicPlan, String> {
    let mut writes = Vec::new();
    if !records.is_empty() {
        let keys: BTreeSet<(i32, String)> = records
            .iter()
            .map(|r| (r.partition, r.key.clone()))
            .collect();
        let now = last_values(source, topic, &keys).map_err(|e| e.to_string())?;
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
    }
    let now = group_offsets(source, groups.iter().map(|g| g.group.as_str()))
        .map_err(|e| e.to_string())?;
    let mut group_writes = Vec::new();
    for g in groups {
        let had = now
            .get(&(g.group.clone(), g.topic.clone(), g.partition))
            .copied();
        if had == g.offset {
            continue;
        }
        group_writes.push(GroupWrite {
            name: g
                .group
                .strip_prefix("connect-")
                .unwrap_or(&g.group)
                .to_string(),
            group: g.group.clone(),
            topic: g.topic.clone(),
            partition: g.partition,
            from: had,
            to: g.offset,
        });
    }
    Ok(TopicPlan::new(cluster, topic, writes, group_writes))
}

/// The committed offsets of each of `groups`, by (group, topic, partition).
fn group_offsets<'a>(
    source: &dyn OffsetsTopic,
    groups: impl Iterator<Item = &'a str>,
) -> Result<BTreeMap<(String, String, i32), i64>, KafkaError> {
    let groups: BTreeSet<&str> = groups.collect();
    let mut now = BTreeMap::new();
    for g in groups {
        for c in source.group(g)?.offsets {
            now.insert((g.to_string(), c.topic, c.partition), c.offset);
        }
    }
    Ok(now)
}

/// The plan's groups that have members now (a consumer of the group would race the write,
/// and Kafka refuses a commit from outside a group that has members), with how many.
pub fn groups_in_use(
    source: &dyn OffsetsTopic,
    plan: &TopicPlan,
) -> Result<Vec<(String, usize)>, KafkaError> {
    let mut busy = Vec::new();
    for g in plan.groups() {
        let members = source.group(&g)?.members;
        if members > 0 {
            busy.push((g, members));
        }
    }
    Ok(busy)
}

/// Writes the plan's values, stamped `timestamp_ms`: the offsets topic's keys, then each
/// group's offsets (deleted, or committed).
pub fn write(
    source: &dyn OffsetsTopic,
    plan: &TopicPlan,
    timestamp_ms: i64,
) -> Result<Option<Written>, KafkaError> {
    let mut written = None;
    if !plan.writes.is_empty() {
        let records: Vec<OutRecord> = plan
            .writes
            .iter()
            .map(|w| OutRecord {
                partition: w.record.partition,
                key: w.record.key.clone().into_bytes(),
                value: w.record.value.clone().map(String::into_bytes),
            })
            .collect();
        written = Some(source.write(&plan.topic, &records, timestamp_ms)?);
    }
    for g in plan.groups() {
        let of_group = plan.group_writes.iter().filter(|w| w.group == g);
        let (set, deleted): (Vec<&GroupWrite>, Vec<&GroupWrite>) =
            of_group.partition(|w| w.to.is_some());
        let deleted: Vec<(String, i32)> = deleted
            .iter()
            .map(|w| (w.topic.clone(), w.partition))
            .collect();
        source.delete_offsets(&g, &deleted)?;
        let set: Vec<Committed> = set
            .iter()
            .filter_map(|w| {
                w.to.map(|offset| Committed {
                    topic: w.topic.clone(),
                    partition: w.partition,
                    offset,
                })
            })
            .collect();
        source.commit(&g, &set)?;
    }
    Ok(written)
}

/// The plan's writes whose key, read back, does not hold the value written (another client
/// wrote it since, or the write was lost).
pub fn verify(source: &dyn OffsetsTopic, plan: &TopicPlan) -> Result<Vec<TopicWrite>, KafkaError> {
    if plan.writes.is_empty() {
        return Ok(Vec::new());
    }
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

/// The plan's group writes whose offset, read back, is not the one written.
pub fn verify_groups(
    source: &dyn OffsetsTopic,
    plan: &TopicPlan,
) -> Result<Vec<GroupWrite>, KafkaError> {
    let now = group_offsets(source, plan.group_writes.iter().map(|w| w.group.as_str()))?;
    Ok(plan
        .group_writes
        .iter()
        .filter(|w| {
            now.get(&(w.group.clone(), w.topic.clone(), w.partition))
                .copied()
                != w.to
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
    crate::kafka::connect_offsets::decode(r.key, r.value)
}

pub mod of_name;

/// One Kafka in memory for the engine's unit tests.
#[cfg(test)]
pub(crate) mod memory;

#[cfg(test)]
mod tests;
