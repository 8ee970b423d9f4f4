//! Disaster recovery across Kafka clusters: a sink file captured on one Kafka cluster, applied
//! to a Connect cluster on another that MirrorMaker 2 keeps in sync. Each partition's topic is
//! renamed per the mirror's replication policy and its offset translated through MM2's
//! checkpoints on the target (`<alias>.checkpoints.internal`): the downstream offset of the
//! latest checkpoint of the connector's consumer group whose upstream offset is at most the
//! file's (never past the captured position), or with `--translate latest` MM2's latest
//! checkpoint, or with `--translate none` the numbers as they are.
//!
//! The plan (`apply::plan`) and the live diff call [`translate`]; nothing here prints.

pub mod checkpoint;
pub mod heartbeat;
mod lookup;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::kafka::policy::{MirrorRelation, ReplicationPolicy};
use crate::kafka::{KafkaError, KafkaOptions, RawRecord, ScanEnd};
use crate::model::file::OffsetsFile;
use crate::model::{ConnectorType, OffsetEntry};

pub use lookup::Found;

/// `--translate`: how a sink file's offsets cross to a mirrored Kafka cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TranslateMode {
    /// The latest checkpoint at or below the file's offset (the default with a mirror).
    File,
    /// MM2's latest checkpoint: the primary's last committed position (failover).
    Latest,
    /// Topics renamed, offsets kept (offset-preserving replication).
    None,
}

impl TranslateMode {
    pub fn as_str(self) -> &'static str {
        match self {
            TranslateMode::File => "file",
            TranslateMode::Latest => "latest",
            TranslateMode::None => "none",
        }
    }
}

/// The target side: which Kafka cluster its Connect cluster uses, and what it mirrors.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The kco cluster name.
    pub cluster: String,
    /// `kafka_cluster_id` of its Connect cluster (`GET /`).
    pub kafka_cluster_id: Option<String>,
    /// `mirrors:` of the cluster, by source kco cluster name.
    pub relations: BTreeMap<String, MirrorRelation>,
    /// `kafka:` of the cluster: where the checkpoints are read, and the offset syncs of the
    /// mirror from it for failback.
    pub kafka: Option<KafkaOptions>,
}

/// Where checkpoints are read from: Kafka, or records in memory (tests).
pub trait CheckpointSource {
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> Result<ScanEnd, KafkaError>;

    /// At most the last `last` records of partition 0 (a heartbeats topic).
    fn scan_tail(
        &self,
        topic: &str,
        last: i64,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> Result<ScanEnd, KafkaError> {
        let _ = last;
        self.scan(topic, visit)
    }
}

impl CheckpointSource for KafkaOptions {
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> Result<ScanEnd, KafkaError> {
        crate::kafka::scan_partition(self, topic, 0, None, visit)
    }

    fn scan_tail(
        &self,
        topic: &str,
        last: i64,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> Result<ScanEnd, KafkaError> {
        crate::kafka::scan_partition(self, topic, 0, Some(last), visit)
    }
}

/// What one sink file needs to cross to the target.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// Same Kafka cluster (or a source connector): the file's offsets as they are.
    Nothing,
    /// Refused, with the reason.
    Refuse(String),
    /// Rename topics, keep offsets (`--translate none`; no relation: names kept too).
    Rename(Option<MirrorRelation>),
    /// Through the checkpoints.
    Checkpoints(MirrorRelation, TranslateMode),
}

/// Whether a file was captured on another Kafka cluster than `target`'s: their Kafka cluster
/// ids differ, or (without both ids) the target mirrors the file's cluster.
pub fn crosses(file: &OffsetsFile, target: &Target) -> bool {
    let meta = &file.metadata;
    match (&meta.kafka_cluster_id, &target.kafka_cluster_id) {
        (Some(a), Some(b)) => a != b,
        _ => target.relations.contains_key(&meta.cluster) && meta.cluster != target.cluster,
    }
}

/// Why a source connector is left out of an apply to, or the readiness of, another Kafka
/// cluster.
pub const SOURCE_LEFT_OUT: &str = "a source connector: its positions belong to the primary's source systems (a database, files), not to the mirrored Kafka";

/// Whether and how a file crosses to `target`.
pub fn decide(file: &OffsetsFile, target: &Target, mode: Option<TranslateMode>) -> Need {
    let meta = &file.metadata;
    if meta.connector_type != ConnectorType::Sink || !crosses(file, target) {
        return Need::Nothing;
    }
    let relation = target.relations.get(&meta.cluster).cloned();
    let ids = format!(
        "the file was captured on Kafka cluster {} (cluster `{}`); cluster `{}` uses Kafka cluster {}",
        meta.kafka_cluster_id.as_deref().unwrap_or("(unknown)"),
        meta.cluster,
        target.cluster,
        target.kafka_cluster_id.as_deref().unwrap_or("(unknown)")
    );
    match (relation, mode) {
        (relation, Some(TranslateMode::None)) => Need::Rename(relation),
        (None, None) => Need::Refuse(format!(
            "{ids}, where the same offsets point at other records. Configure the mirror (`mirrors: {{{}: {{alias: <MM2 source alias>}}}}` under cluster `{}` in kco.yaml) to translate them through MirrorMaker 2's checkpoints, or pass `--translate none` if the topics are replicated offset for offset",
            meta.cluster, target.cluster
        )),
        (None, Some(m)) => Need::Refuse(format!(
            "{ids}, and cluster `{}` has no mirror of `{}` to translate through (`--translate {}` needs `mirrors: {{{}: {{alias: <MM2 source alias>}}}}` under cluster `{}` in kco.yaml)",
            target.cluster, meta.cluster, m.as_str(), meta.cluster, target.cluster
        )),
        (Some(r), m) => Need::Checkpoints(r, m.unwrap_or(TranslateMode::File)),
    }
}

/// The consumer group of a sink connector: `consumer.override.group.id` in its config, else
/// Connect's `connect-<name>`.
pub fn sink_group(file: &OffsetsFile) -> String {
    file.config
        .as_ref()
        .and_then(|c| c.get("consumer.override.group.id"))
        .filter(|g| !g.is_empty())
        .cloned()
        .unwrap_or_else(|| format!("connect-{}", file.metadata.name))
}

/// One partition's crossing, as the plan and the diff show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionTranslation {
    pub topic: String,
    pub partition: i64,
    /// The file's offset (the next record to read, upstream).
    pub file_offset: i64,
    /// The topic's name on the target.
    pub dr_topic: String,
    /// The offset to apply on the target.
    pub dr_offset: i64,
    /// The checkpoint used (`None` with `--translate none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Found>,
    /// Seconds since MM2 last wrote a checkpoint of the group for this partition (MM2 writes
    /// one only when the group commits a new offset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_since_last_checkpoint: Option<i64>,
    /// Records before the file's position that the target delivers again, counted on the
    /// mirrored topic from `dr_offset` (`lookup::redelivers`); negative: records after it
    /// that are skipped, as `--translate latest` does on purpose.
    pub redelivers: i64,
    /// Failback: the offset syncs topic `checkpoint` is a sync of (a topic that came from
    /// the target, found downstream to upstream); `None`: a checkpoint of the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_syncs: Option<String>,
    /// The group's latest checkpoint, when its upstream offset is past the file's
    /// (`--translate file`): the primary's sink has committed records the file does not
    /// know of, delivered again by a failover from the file too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_checkpoint: Option<Found>,
}

impl PartitionTranslation {
    /// Records the file is behind the group's latest checkpoint (0: none known).
    pub fn behind_live(&self) -> i64 {
        self.latest_checkpoint
            .map_or(0, |l| (l.upstream - self.file_offset).max(0))
    }

    /// `orders/0 600 -> east.orders/0 591`: the file's position and the one applied on the
    /// target, in kco's partition notation (docs/output.md).
    pub fn crossing(&self) -> String {
        format!(
            "{}/{} {} -> {}/{} {}",
            self.topic,
            self.partition,
            self.file_offset,
            self.dr_topic,
            self.partition,
            self.dr_offset
        )
    }
}

/// A sink file's crossing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Translation {
    pub mode: TranslateMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    pub policy: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints_topic: Option<String>,
    pub group: String,
    pub partitions: Vec<PartitionTranslation>,
    /// Source topic -> target topic, for a created connector's `topics`.
    #[serde(skip)]
    pub renames: BTreeMap<String, String>,
    /// The offsets to apply.
    #[serde(skip)]
    pub offsets: Vec<OffsetEntry>,
    /// The relation, for topics of a created sink's config that the file has no offset for.
    #[serde(skip)]
    pub relation: Option<MirrorRelation>,
    /// Seconds since the file was captured (its `capturedAt`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_age_seconds: Option<i64>,
}

impl Translation {
    /// What a file the group has moved past since it was captured is, in words: its age,
    /// and by how much each partition is behind MM2's latest checkpoint of the group
    /// (`None` when no partition is).
    pub fn stale_note(&self) -> Option<String> {
        let behind: Vec<String> = self
            .partitions
            .iter()
            .filter(|p| p.behind_live() > 0)
            .filter_map(|p| {
                let l = p.latest_checkpoint?;
                Some(format!(
                    "{}/{} by {} (MM2's latest checkpoint of the group, upstream {} -> downstream {}, written {} ago)",
                    p.topic,
                    p.partition,
                    crate::text::count(p.behind_live() as usize, "record"),
                    l.upstream,
                    l.downstream,
                    ago(l.seconds_since_written)
                ))
            })
            .collect();
        if behind.is_empty() {
            return None;
        }
        let age = self.file_age_seconds.map_or_else(
            || "at a time it does not record".to_string(),
            |s| format!("{} ago", ago(s)),
        );
        Some(format!(
            "the file was captured {age}, and the group has committed past it since: {}; a failover from the file delivers those records again too (take a newer snapshot, or --translate latest for the primary's last committed position)",
            behind.join(", ")
        ))
    }
}

fn ago(seconds: i64) -> String {
    humantime::format_duration(std::time::Duration::from_secs(seconds.max(0) as u64)).to_string()
}

/// Seconds between the file's `capturedAt` and `now_ms`.
fn file_age(file: &OffsetsFile, now_ms: i64) -> Option<i64> {
    let at = humantime::parse_rfc3339_weak(file.metadata.captured_at.as_deref()?).ok()?;
    let ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    Some(((now_ms - i64::try_from(ms).ok()?) / 1000).max(0))
}

/// A sink partition as the file holds it.
fn sink_partition(e: &OffsetEntry) -> Option<(&str, i64, i64)> {
    let topic = e.partition.get("kafka_topic")?.as_str()?;
    let partition = e.partition.get("kafka_partition")?.as_i64()?;
    let offset = e.offset.get("kafka_offset")?.as_i64()?;
    Some((topic, partition, offset))
}

/// Translates every file that needs it. The result has an entry for each key of `files` that
/// crosses: its translation, or why it cannot be translated (a plan error). Each checkpoints
/// topic is read once, streaming; memory grows with the partitions asked for, not the topic.
///
/// A Kafka that cannot be read (unreachable, refused credentials, a listener that does not
/// speak SASL) is an error of the whole call: kco cannot tell whether anything translates.
/// A checkpoints topic that does not exist is a gap of the files that need it.
pub fn translate(
    files: &[(&str, &OffsetsFile)],
    target: &Target,
    mode: Option<TranslateMode>,
    source: Option<&dyn CheckpointSource>,
    now_ms: i64,
) -> Result<BTreeMap<String, Result<Translation, String>>, KafkaError> {
    let mut out = BTreeMap::new();
    let mut wanted = lookup::Wanted::default();
    // Failback: topics that came from the target, found through the offset syncs the mirror
    // from the target wrote there.
    let mut wanted_syncs = lookup::WantedSyncs::default();
    let mut pending: Vec<(&str, &OffsetsFile, MirrorRelation, TranslateMode)> = Vec::new();
    for (name, file) in files {
        match decide(file, target, mode) {
            Need::Nothing => {}
            Need::Refuse(m) => {
                out.insert(name.to_string(), Err(m));
            }
            Need::Rename(relation) => {
                out.insert(name.to_string(), rename_only(file, relation.as_ref()));
            }
            Need::Checkpoints(relation, m) => {
                let group = sink_group(file);
                for e in &file.offsets {
                    if let Some((topic, partition, offset)) = sink_partition(e) {
                        if relation.came_back(topic) {
                            // MM2 never mirrors it home: the mirror from the target (which
                            // copied it to the file's cluster) synced its offsets there.
                            wanted_syncs.add(
                                &relation.back_syncs_topic(),
                                &relation.target_topic(topic),
                                partition,
                                offset,
                            );
                            continue;
                        }
                        wanted.add(
                            &relation.checkpoints_topic,
                            &group,
                            &relation.target_topic(topic),
                            partition,
                            offset,
                        );
                    }
                }
                pending.push((name, file, relation, m));
            }
        }
    }
    if pending.is_empty() {
        return Ok(out);
    }
    let mut syncs = match (source, &target.kafka) {
        (Some(s), _) => wanted_syncs.scan_all(s, now_ms),
        (None, Some(k)) => wanted_syncs.scan_all(k, now_ms),
        (None, None) => BTreeMap::new(),
    };
    let failed = syncs
        .iter()
        .find(|(_, r)| matches!(r, Err(KafkaError::Failed { .. })))
        .map(|(t, _)| t.clone());
    if let Some(Err(e)) = failed.and_then(|t| syncs.remove(&t)) {
        return Err(e);
    }
    let scans = match (source, &target.kafka) {
        (Some(s), _) => wanted.scan_all(s, now_ms),
        (None, Some(k)) => wanted.scan_all(k, now_ms),
        (None, None) => {
            for (name, file, ..) in pending {
                out.insert(
                    name.to_string(),
                    Err(format!(
                        "the file was captured on cluster `{}` (another Kafka cluster); translating its offsets reads MirrorMaker 2's checkpoints on cluster `{}`'s Kafka, which has no `kafka:` settings in kco.yaml (`kafka: {{bootstrap: host:port}}`)",
                        file.metadata.cluster, target.cluster
                    )),
                );
            }
            return Ok(out);
        }
    };
    let mut scans = scans;
    let failed = scans
        .iter()
        .find(|(_, r)| matches!(r, Err(KafkaError::Failed { .. })))
        .map(|(t, _)| t.clone());
    if let Some(Err(e)) = failed.and_then(|t| scans.remove(&t)) {
        return Err(e);
    }
    for (name, file, relation, m) in pending {
        let age = file_age(file, now_ms);
        let back = syncs.get(&relation.back_syncs_topic());
        let result = match (scans.get(&relation.checkpoints_topic), back) {
            (_, Some(Err(e))) => Err(lookup::syncs_topic_error(e, &relation, target)),
            (Some(Err(e)), _) => Err(lookup::topic_error(e, &relation, target)),
            (Some(Ok(found)), back) => lookup::through_checkpoints(
                (file, age),
                &relation,
                m,
                found,
                back.and_then(|b| b.as_ref().ok()),
            ),
            (None, Some(Ok(back))) => {
                let empty = lookup::TopicScan::default();
                lookup::through_checkpoints((file, age), &relation, m, &empty, Some(back))
            }
            (None, None) => Err("internal: checkpoints topic not scanned".into()),
        };
        out.insert(name.to_string(), result);
    }
    Ok(out)
}

fn rename_only(
    file: &OffsetsFile,
    relation: Option<&MirrorRelation>,
) -> Result<Translation, String> {
    let rename = |t: &str| relation.map_or_else(|| t.to_string(), |r| r.target_topic(t));
    let mut t = Translation {
        mode: TranslateMode::None,
        alias: relation.map(|r| r.alias.clone()),
        policy: relation.map_or("identity", MirrorRelation::policy_name),
        checkpoints_topic: None,
        group: sink_group(file),
        partitions: Vec::new(),
        renames: BTreeMap::new(),
        offsets: Vec::new(),
        relation: relation.cloned(),
        file_age_seconds: None,
    };
    for e in &file.offsets {
        let Some((topic, partition, offset)) = sink_partition(e) else {
            t.offsets.push(e.clone());
            continue;
        };
        let dr_topic = rename(topic);
        t.renames.insert(topic.to_string(), dr_topic.clone());
        t.offsets
            .push(OffsetEntry::sink(&dr_topic, partition, offset));
        t.partitions.push(PartitionTranslation {
            topic: topic.to_string(),
            partition,
            file_offset: offset,
            dr_topic,
            dr_offset: offset,
            checkpoint: None,
            seconds_since_last_checkpoint: None,
            redelivers: 0,
            offset_syncs: None,
            latest_checkpoint: None,
        });
    }
    Ok(t)
}

/// One config key kco changes when it creates a connector on the DR cluster (shown in the
/// plan: nothing is changed silently).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigChange {
    pub key: String,
    pub before: String,
    pub after: String,
    /// Why, in words.
    pub why: String,
}

/// The topics a created sink reads on the DR cluster for one topic `t` of its file: the
/// mirrored copy (`east.orders`) and, where that name differs, the DR cluster's own `t`,
/// where producers write after a failover. A topic the DR cluster itself sent (failback:
/// `west.orders` becomes `orders`) is only its original.
/// The name topic `s` of the file has on the DR cluster: the translation's, else the
/// relation's replication policy's.
fn dr_name(t: &Translation, s: &str) -> String {
    t.renames.get(s).cloned().unwrap_or_else(|| {
        t.relation
            .as_ref()
            .map_or_else(|| s.to_string(), |r| r.target_topic(s))
    })
}

/// For a sink created on the DR cluster from `topics` (its file's `topics`): each of the DR
/// cluster's own topics it also reads (where producers write after a failover) with the
/// mirrored copy of the primary's topic beside it, `(own, mirrored)`.
pub fn own_topics(topics: &str, t: &Translation) -> Vec<(String, String)> {
    topics
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let mirrored = dr_name(t, s);
            let both = dr_topics(s, &mirrored, t.relation.as_ref());
            (both.len() == 2).then(|| (s.to_string(), mirrored))
        })
        .collect()
}

/// What the DR cluster's Kafka (`partitions`: its topics and their partition counts) lacks
/// of the topics its created sinks read of its own (`own`: each such topic, with its
/// mirrored copy and the sinks that read it): a topic missing, which the sinks' consumers or
/// the producers would auto-create with the broker's default count, or one whose count is
/// not the mirrored copy's (the primary's). One warning per topic, naming every sink that
/// reads it; `cluster` names the DR cluster, `kafka` its Kafka (for the command that creates
/// a missing topic).
pub fn own_topic_warnings(
    own: &BTreeMap<(String, String), Vec<String>>,
    partitions: &BTreeMap<String, usize>,
    cluster: &str,
    kafka: &KafkaOptions,
) -> Vec<String> {
    let mut out = Vec::new();
    for ((topic, mirrored), sinks) in own {
        let Some(&want) = partitions.get(mirrored) else {
            continue;
        };
        let readers = sinks
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ");
        match partitions.get(topic) {
            None => out.push(format!(
                "topic `{topic}` does not exist on the Kafka of cluster `{cluster}` ({} {readers}): producers write there after a failover, and whoever first uses it auto-creates it with the broker's default partition count; create it first with the {} of `{mirrored}` (the primary's): kafka-topics.sh --bootstrap-server {} --create --topic {topic} --partitions {want}{}",
                if sinks.len() == 1 { "read by" } else { "read by each of" },
                crate::text::count(want, "partition"),
                kafka.bootstrap_display(),
                if kafka.sasl.is_some() || kafka.tls.is_some() {
                    " --command-config <a client properties file with its SASL and TLS settings>"
                } else {
                    ""
                }
            )),
            Some(&n) if n != want => out.push(format!(
                "topic `{topic}` on the Kafka of cluster `{cluster}` has {}, `{mirrored}` (the primary's) {want}: records keyed alike do not land in the partitions they did on the primary ({} {readers})",
                crate::text::count(n, "partition"),
                if sinks.len() == 1 { "read by" } else { "read by each of" },
            )),
            Some(_) => {}
        }
    }
    out
}

pub(crate) fn dr_topics(t: &str, renamed: &str, relation: Option<&MirrorRelation>) -> Vec<String> {
    let came_back = relation.is_some_and(|r| match (&r.policy, &r.target_alias) {
        (ReplicationPolicy::Default { separator }, Some(target)) => {
            t.strip_prefix(&format!("{target}{separator}")) == Some(renamed)
        }
        _ => false,
    });
    if renamed == t || came_back {
        vec![renamed.to_string()]
    } else {
        vec![renamed.to_string(), t.to_string()]
    }
}

/// A `topics.regex` for the DR cluster: under the default policy, the mirrored topics
/// (`<alias><separator>` before a match) and the DR cluster's own that match.
pub fn dr_regex(regex: &str, relation: &MirrorRelation) -> String {
    match &relation.policy {
        ReplicationPolicy::Identity => regex.to_string(),
        ReplicationPolicy::Default { separator } => format!(
            "(?:{}{})?(?:{regex})",
            regex_escape(&relation.alias),
            regex_escape(separator)
        ),
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A created sink's config with its topics renamed for the DR cluster: `topics` entry by
/// entry (each mirrored topic, and the DR cluster's own of the same name), `topics.regex`
/// widened the same way. Returns every key changed.
pub fn rename_config(config: &mut BTreeMap<String, String>, t: &Translation) -> Vec<ConfigChange> {
    let relation = t.relation.as_ref();
    let mut changes = Vec::new();
    if let Some(topics) = config.get("topics").cloned() {
        let mut renamed: Vec<String> = Vec::new();
        for s in topics.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            for d in dr_topics(s, &dr_name(t, s), relation) {
                if !renamed.contains(&d) {
                    renamed.push(d);
                }
            }
        }
        let after = renamed.join(",");
        if after != topics {
            changes.push(ConfigChange {
                key: "topics".into(),
                before: topics,
                after: after.clone(),
                why: "the mirrored topics, and the DR cluster's own of the same name, where producers write after a failover".into(),
            });
            config.insert("topics".into(), after);
        }
    }
    if let (Some(regex), Some(r)) = (config.get("topics.regex").cloned(), relation) {
        let after = dr_regex(&regex, r);
        if after != regex {
            changes.push(ConfigChange {
                key: "topics.regex".into(),
                before: regex,
                after: after.clone(),
                why: format!(
                    "also the topics mirrored from `{}` ({} policy)",
                    r.alias,
                    r.policy_name()
                ),
            });
            config.insert("topics.regex".into(), after);
        }
    }
    changes
}
