//! Reading the checkpoints topics once each, keeping for every partition asked for the
//! checkpoint that translates it, and saying why when there is none.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::checkpoint::{decode_key, decode_value};
use super::{
    sink_group, sink_partition, CheckpointSource, PartitionTranslation, Target, TranslateMode,
    Translation,
};
use crate::kafka::policy::MirrorRelation;
use crate::kafka::{KafkaError, RawRecord};
use crate::model::file::OffsetsFile;
use crate::model::OffsetEntry;

/// A checkpoint kept for a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Found {
    /// The group's offset on the source when MM2 wrote it.
    pub upstream: i64,
    /// The same position on the target.
    pub downstream: i64,
    /// Milliseconds since the Unix epoch when MM2 wrote it (the record's timestamp).
    pub written_ms: i64,
    /// Seconds between then and the translation (MM2 writes a checkpoint only when the
    /// group commits a new offset: this is not how old MM2's view is).
    pub seconds_since_written: i64,
}

#[derive(Debug, Default)]
struct Slot {
    file_offset: i64,
    at_or_below: Option<Found>,
    latest: Option<Found>,
    oldest_upstream: Option<i64>,
}

#[derive(Debug, Default)]
struct GroupSlots {
    seen: bool,
    /// target topic -> (seen, partition -> slot)
    topics: HashMap<String, (bool, HashMap<i64, Slot>)>,
}

/// What one checkpoints topic holds for the partitions asked for.
#[derive(Debug, Default)]
pub(super) struct TopicScan {
    groups: HashMap<String, GroupSlots>,
    pub(super) records: u64,
    pub(super) undecodable: u64,
}

/// The partitions asked for, by checkpoints topic.
#[derive(Debug, Default)]
pub(super) struct Wanted {
    topics: BTreeMap<String, TopicScan>,
}

impl Wanted {
    pub(super) fn add(
        &mut self,
        checkpoints_topic: &str,
        group: &str,
        topic: &str,
        partition: i64,
        file_offset: i64,
    ) {
        let slots = &mut self
            .topics
            .entry(checkpoints_topic.to_string())
            .or_default()
            .groups
            .entry(group.to_string())
            .or_default()
            .topics
            .entry(topic.to_string())
            .or_default()
            .1;
        // Two files of the same group holding the same partition: the lower position (never
        // past either).
        slots
            .entry(partition)
            .and_modify(|s| s.file_offset = s.file_offset.min(file_offset))
            .or_insert(Slot {
                file_offset,
                ..Slot::default()
            });
    }

    /// Reads each checkpoints topic once.
    pub(super) fn scan_all(
        mut self,
        source: &dyn CheckpointSource,
        now_ms: i64,
    ) -> BTreeMap<String, Result<TopicScan, KafkaError>> {
        let mut out = BTreeMap::new();
        for (topic, mut scan) in std::mem::take(&mut self.topics) {
            let result = source
                .scan(&topic, &mut |r| scan.visit(r, now_ms))
                .map(|_| scan);
            out.insert(topic, result);
        }
        out
    }
}

impl TopicScan {
    fn visit(&mut self, r: RawRecord<'_>, now_ms: i64) {
        self.records += 1;
        let (Some(k), Some(v)) = (r.key, r.value) else {
            // A tombstone, or no key: not a checkpoint.
            return;
        };
        let Ok(key) = decode_key(k) else {
            self.undecodable += 1;
            return;
        };
        let Some(group) = self.groups.get_mut(key.group) else {
            return;
        };
        group.seen = true;
        let Some((topic_seen, partitions)) = group.topics.get_mut(key.topic) else {
            return;
        };
        *topic_seen = true;
        let Some(slot) = partitions.get_mut(&i64::from(key.partition)) else {
            return;
        };
        let Ok(value) = decode_value(v) else {
            self.undecodable += 1;
            return;
        };
        let found = Found {
            upstream: value.upstream,
            downstream: value.downstream,
            written_ms: r.timestamp_ms,
            seconds_since_written: ((now_ms - r.timestamp_ms) / 1000).max(0),
        };
        slot.latest = Some(found);
        slot.oldest_upstream = Some(
            slot.oldest_upstream
                .map_or(value.upstream, |o| o.min(value.upstream)),
        );
        if value.upstream <= slot.file_offset {
            slot.at_or_below = Some(found);
        }
    }

    fn slot(&self, group: &str, topic: &str, partition: i64) -> Lookup<'_> {
        let Some(g) = self.groups.get(group) else {
            return Lookup::NoGroup;
        };
        if !g.seen {
            return Lookup::NoGroup;
        }
        match g.topics.get(topic) {
            Some((true, parts)) => match parts.get(&partition) {
                Some(s) if s.latest.is_some() => Lookup::Slot(s),
                _ => Lookup::NoPartition,
            },
            _ => Lookup::NoPartition,
        }
    }
}

enum Lookup<'a> {
    NoGroup,
    NoPartition,
    Slot(&'a Slot),
}

/// Why a checkpoints topic could not be read.
pub(super) fn topic_error(e: &KafkaError, relation: &MirrorRelation, target: &Target) -> String {
    match e {
        KafkaError::UnknownTopic { topic, bootstrap } => format!(
            "MirrorMaker 2's checkpoints topic `{topic}` does not exist on cluster `{}`'s Kafka ({bootstrap}): run a MirrorCheckpointConnector with `source.cluster.alias={}` and `emit.checkpoints.enabled=true` (the default) against it, or fix the alias under `mirrors` in kco.yaml",
            target.cluster, relation.alias
        ),
        other => format!("cannot read MirrorMaker 2's checkpoints: {other}"),
    }
}

/// Failback: the partitions asked for of topics that came from the target, by offset syncs
/// topic, keyed by the target's name of the topic and the partition.
#[derive(Debug, Default)]
pub(super) struct WantedSyncs {
    topics: BTreeMap<String, SyncScan>,
}

/// What one offset syncs topic holds for the partitions asked for: per partition, the file's
/// offset (downstream of that mirror) and the sync with the highest downstream offset at or
/// below it.
#[derive(Debug, Default)]
pub(super) struct SyncScan {
    slots: HashMap<(String, i32), (i64, Option<Found>, bool)>,
}

impl WantedSyncs {
    pub(super) fn add(&mut self, syncs_topic: &str, topic: &str, partition: i64, file_offset: i64) {
        let Ok(partition) = i32::try_from(partition) else {
            return;
        };
        self.topics
            .entry(syncs_topic.to_string())
            .or_default()
            .slots
            .entry((topic.to_string(), partition))
            .and_modify(|s| s.0 = s.0.min(file_offset))
            .or_insert((file_offset, None, false));
    }

    pub(super) fn scan_all(
        self,
        source: &dyn CheckpointSource,
        now_ms: i64,
    ) -> BTreeMap<String, Result<SyncScan, KafkaError>> {
        let mut out = BTreeMap::new();
        for (topic, mut scan) in self.topics {
            let result = source
                .scan(&topic, &mut |r| scan.visit(r, now_ms))
                .map(|_| scan);
            out.insert(topic, result);
        }
        out
    }
}

impl SyncScan {
    fn visit(&mut self, r: RawRecord<'_>, now_ms: i64) {
        let (Some(k), Some(v)) = (r.key, r.value) else {
            return;
        };
        let Ok(sync) = super::checkpoint::decode_sync(k, v) else {
            return;
        };
        let Some(slot) = self
            .slots
            .get_mut(&(sync.topic.to_string(), sync.partition))
        else {
            return;
        };
        slot.2 = true;
        // The record at `upstream` is at `downstream`: a sink that read up to the file's
        // offset downstream read every record before `upstream` on the source.
        if sync.downstream <= slot.0 && slot.1.is_none_or(|b| b.downstream <= sync.downstream) {
            slot.1 = Some(Found {
                upstream: sync.upstream,
                downstream: sync.downstream,
                written_ms: r.timestamp_ms,
                seconds_since_written: ((now_ms - r.timestamp_ms) / 1000).max(0),
            });
        }
    }
}

/// Why the offset syncs of the mirror from the target could not be read (failback).
pub(super) fn syncs_topic_error(
    e: &KafkaError,
    relation: &MirrorRelation,
    target: &Target,
) -> String {
    match e {
        KafkaError::UnknownTopic { topic, bootstrap } => format!(
            "a topic that came from cluster `{}` (MirrorMaker 2 never mirrors a topic home) is found through the offset syncs of the mirror from it to `{}`, `{topic}` on its Kafka ({bootstrap}), which does not exist: MM2 writes it there by default (`offset-syncs.topic.location=source`) while that mirror runs",
            target.cluster, relation.alias
        ),
        other => format!("cannot read MirrorMaker 2's offset syncs: {other}"),
    }
}

/// The translation of one file from what its checkpoints topic holds; `back` (failback): the
/// mirror from the target to the file's cluster and what its checkpoints topic holds, for the
/// partitions of topics that came from the target.
pub(super) fn through_checkpoints(
    (file, age): (&OffsetsFile, Option<i64>),
    relation: &MirrorRelation,
    mode: TranslateMode,
    scan: &TopicScan,
    back: Option<&SyncScan>,
) -> Result<Translation, String> {
    let group = sink_group(file);
    let mut t = Translation {
        mode,
        alias: Some(relation.alias.clone()),
        policy: relation.policy_name(),
        checkpoints_topic: Some(relation.checkpoints_topic.clone()),
        group: group.clone(),
        partitions: Vec::new(),
        renames: BTreeMap::new(),
        offsets: Vec::new(),
        relation: Some(relation.clone()),
        file_age_seconds: age,
    };
    let mut problems = Vec::new();
    for e in &file.offsets {
        let Some((topic, partition, offset)) = sink_partition(e) else {
            problems.push(format!(
                "a partition without `kafka_topic`, `kafka_partition` and `kafka_offset` cannot be translated: {}",
                crate::model::canonical_fields(&e.partition)
            ));
            continue;
        };
        let dr_topic = relation.target_topic(topic);
        t.renames.insert(topic.to_string(), dr_topic.clone());
        if let Some(syncs) = back.filter(|_| relation.came_back(topic)) {
            let slot = i32::try_from(partition)
                .ok()
                .and_then(|p| syncs.slots.get(&(dr_topic.clone(), p)));
            match slot {
                Some((_, Some(found), _)) => {
                    t.offsets
                        .push(OffsetEntry::sink(&dr_topic, partition, found.upstream));
                    t.partitions.push(PartitionTranslation {
                        topic: topic.to_string(),
                        partition,
                        file_offset: offset,
                        dr_topic,
                        dr_offset: found.upstream,
                        checkpoint: Some(*found),
                        seconds_since_last_checkpoint: None,
                        redelivers: offset - found.downstream,
                        offset_syncs: Some(relation.back_syncs_topic()),
                        latest_checkpoint: None,
                    });
                }
                Some((_, None, true)) => problems.push(format!(
                    "no offset sync of `{dr_topic}` partition {partition} at or below the file's offset {offset} of `{topic}` in `{}`: the sink read less of the mirrored topic than MirrorMaker 2 has synced; take a newer file",
                    relation.back_syncs_topic()
                )),
                _ => problems.push(format!(
                    "`{topic}` came from this cluster, and `{}` holds no offset sync of `{dr_topic}` partition {partition}: the mirror from this cluster to `{}` did not copy it",
                    relation.back_syncs_topic(),
                    relation.alias
                )),
            }
            continue;
        }
        let where_ = format!("`{dr_topic}` partition {partition}");
        let found = match scan.slot(&group, &dr_topic, partition) {
            Lookup::NoGroup => {
                // MM2 writes a group's checkpoint only once the group commits an offset it can
                // translate: a checkpoint connector that has just (re)started has written none
                // yet, whatever its settings.
                let why = match scan.records {
                    0 => format!(
                        "`{}` holds no checkpoint of any group yet: if MirrorMaker 2's checkpoint connector has just started (a mirror back brought up for a failback), it writes the group's first checkpoint once the group commits an offset it has mirrored (every `emit.checkpoints.interval.seconds`): run this again in a minute. If it stays empty,",
                        relation.checkpoints_topic
                    ),
                    _ => format!(
                        "`{}` holds checkpoints of other groups, none of this one: the group may not have committed an offset since the checkpoint connector (re)started (run this again once it has); else",
                        relation.checkpoints_topic
                    ),
                };
                problems.push(format!(
                    "consumer group `{group}` has no checkpoint at all in `{}`: {why} MirrorMaker 2 checkpoints only the groups that match its `groups` and not its `groups.exclude` (whose default, `console-consumer-.*, connect-.*, __.*`, leaves out every sink connector's `connect-<name>` group): set `groups.exclude` on the MirrorCheckpointConnector without that group, and check `emit.checkpoints.enabled=true` and the source alias `{}`",
                    relation.checkpoints_topic, relation.alias
                ));
                break;
            }
            Lookup::NoPartition => {
                problems.push(format!(
                    "group `{group}` has no checkpoint for {where_}: MirrorMaker 2 mirrors no topic `{topic}` from `{}` (`topics`, `topics.exclude` of the MirrorSourceConnector), or has no offset sync for it yet (the group must have committed an offset that MM2 has replicated)",
                    relation.alias
                ));
                continue;
            }
            Lookup::Slot(s) => match mode {
                TranslateMode::Latest => s.latest,
                _ => match s.at_or_below {
                    Some(f) => Some(f),
                    None => {
                        problems.push(format!(
                            "no checkpoint of group `{group}` for {where_} at or below the file's offset {offset}: the oldest kept is at {} (compaction keeps only the latest per partition); the file{} is older than MirrorMaker 2's checkpoints: take a newer file, or `--translate latest` for MM2's latest position",
                            s.oldest_upstream.unwrap_or_default(),
                            age.map(|a| format!(
                                ", captured {} ago,",
                                humantime::format_duration(std::time::Duration::from_secs(a.max(0) as u64))
                            ))
                            .unwrap_or_default()
                        ));
                        continue;
                    }
                },
            },
        };
        let latest = match scan.slot(&group, &dr_topic, partition) {
            Lookup::Slot(s) => s.latest,
            _ => None,
        };
        let last = latest.map(|l| l.seconds_since_written);
        let Some(found) = found else { continue };
        t.offsets
            .push(OffsetEntry::sink(&dr_topic, partition, found.downstream));
        t.partitions.push(PartitionTranslation {
            topic: topic.to_string(),
            partition,
            file_offset: offset,
            dr_topic,
            dr_offset: found.downstream,
            checkpoint: Some(found),
            seconds_since_last_checkpoint: last,
            redelivers: redelivers(offset, &found),
            offset_syncs: None,
            latest_checkpoint: latest
                .filter(|l| mode == TranslateMode::File && l.upstream > offset),
        });
    }
    if problems.is_empty() {
        Ok(t)
    } else {
        let more = problems.len().saturating_sub(3);
        let mut m = problems.into_iter().take(3).collect::<Vec<_>>().join("; ");
        if more > 0 {
            m.push_str(&format!(
                "; and {} more",
                crate::text::count(more, "partition")
            ));
        }
        Err(m)
    }
}

/// How many records a sink started at the checkpoint's downstream offset delivers before it
/// reaches the file's position `offset`, counted where it reads them: on the mirrored topic.
/// MirrorMaker 2 (3.5 and later) puts a checkpoint's downstream offset one past its last
/// offset sync at or below the group's offset, not at the group's offset: the records from
/// there to the checkpoint's upstream offset are delivered again too (`offset - upstream`
/// left them out: 29 where 39 came again). The mirrored topic keeps the source's offsets
/// when MM2 mirrored it from its start (records copied one for one), so the distance is
/// `offset - downstream`; a downstream offset above the upstream one says the numbering
/// differs, and `offset - upstream` is what is known (never fewer are delivered again).
/// Negative: records after the file's position that are skipped (`--translate latest`).
pub(super) fn redelivers(offset: i64, found: &Found) -> i64 {
    offset - found.downstream.min(found.upstream)
}
