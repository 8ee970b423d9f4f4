//! `kco apply` and `kco reset` on a cluster whose offsets kco reads through Kafka
//! (`kafka::through`: a worker without the offsets endpoints): the files' offsets are written
//! where the workers keep them, only where nothing can race the write.
//!
//! - A **source** connector's offsets are records of the workers' offsets topic, written as the
//!   worker writes them (its internal JSON converter, schemas off): the key
//!   `["<connector>", {partition}]`, the value the offset, a null value a deletion. A key the
//!   topic already holds is written with its exact bytes to the partition its records are in;
//!   a new key is written compactly, its fields sorted, to the partition Kafka's default
//!   partitioner gives it ([`murmur2`] of the key's bytes), as the worker's producer does.
//! - A **sink** connector's offsets are its consumer group's committed offsets
//!   (`connect-<name>`, or its `consumer.override.group.id`), committed from outside the group,
//!   which Kafka accepts only while the group has no members.
//!
//! Only a connector that does not exist (deleted, or not created yet: delete, apply, create)
//! or that Connect has stopped (STOPPED, 3.5) is written: a running or paused one holds its
//! position in memory and writes over it. Such a connector is refused with what to do, and
//! nothing is written. For a connector that does not exist, the file's offsets replace what
//! its name left (the leftovers are deleted), never merge with them; a stopped one keeps its
//! partitions the file lacks unless `--prune`. A change from git history (its set and removed
//! partitions) is applied as a delta, and a forward change of a sink's partition that the
//! group has already passed leaves it where it is.
//!
//! [`plan`] reads only; the guarded operation (`engine::operation::Operation::run_topic`)
//! backs up, writes and reads every offset back.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::client::ConnectorListing;
use crate::engine::apply::Want;
use crate::engine::fail_on::Refuse;
use crate::engine::orphaned::{
    Committed, GroupWrite, OffsetsTopic, Purpose, TopicPlan, TopicRecord, TopicWrite,
};
use crate::error::ResetRoute;
use crate::kafka::groups::consumer_group;
use crate::kafka::through::own_offsets_topic;
use crate::kafka::KafkaError;
use crate::model::{
    canonical_fields, canonical_json, ConnectorState, ConnectorType, Fields, OffsetEntry,
};

/// What the plan is made from, beside the wants.
pub struct Input<'a> {
    pub cluster: &'a str,
    /// The workers' offsets topic.
    pub topic: &'a str,
    /// The cluster's connectors, as listed for this plan.
    pub live: &'a BTreeMap<String, ConnectorListing>,
    /// `--prune`: a stopped connector's partitions that the file lacks are deleted too.
    pub prune: bool,
    /// How the cluster's connectors are deleted and created: through Connect's REST API, or
    /// for a cluster read from its internal topics (AWS MSK Connect) by the service's own
    /// console, CLI or API. Says what the refusals advise.
    pub route: ResetRoute,
    /// A dry run: a connector refused for its state (running, paused, failed) or its group's
    /// members is planned all the same, for the plan to show what would be written beside
    /// why it is not ([`PlanError::Refused`] then carries the plan).
    pub plan_refused: bool,
    /// The service deletes a connector and creates it again around the write (its steps hold
    /// [`Op::DeleteKeeping`](crate::client::Op)): one that runs is planned as once deleted,
    /// not refused, and its group's members (its own tasks) are no refusal either.
    pub recreates: bool,
}

/// How to delete connector `name` of `cluster` so that its offsets can be written, keeping
/// them, and what to run then: an apply of its file, or for a reset the cluster kind's way to
/// delete a deleted name's offsets ([`ResetRoute::steps`]).
fn delete_advice(name: &str, cluster: &str, route: ResetRoute, reset: bool) -> String {
    match (route, reset) {
        (_, true) => route.steps(name, cluster),
        (ResetRoute::ServiceTools, false) => "delete it with the service's own console, CLI or API (its offsets stay; AWS MSK Connect: `aws kafkaconnect delete-connector`), apply, then create it again there".to_string(),
        (_, false) => format!(
            "delete it (its offsets stay: `DELETE /connectors/{name}`), apply, then create it again"
        ),
    }
}

/// The prefixes of the offsets topics AWS MSK Connect creates for one connector deployment,
/// named with the connector's name and id (its guide shows both spellings).
const MSK_PER_CONNECTOR: [&str; 2] = ["__amazon_msk_connect_offsets_", "__msk_connect_offsets_"];

/// Where `topic`, the offsets topic kco writes for cluster `cluster`, is one AWS MSK Connect
/// created for one connector deployment (`__amazon_msk_connect_offsets_<name>_<id>`): a
/// connector created again gets a new id, hence a new topic, and never reads what was
/// written here. The warning, with how to pin the topic; `None` for any other name.
pub fn per_connector_topic(cluster: &str, topic: &str) -> Option<String> {
    MSK_PER_CONNECTOR.iter().find(|p| topic.starts_with(**p))?;
    Some(format!(
        "cluster `{cluster}`: offsets topic `{topic}` is one AWS MSK Connect created for one connector deployment, named with its connector id: a connector created again gets a new id and a new offsets topic, and does not read the offsets written here. For offsets that survive a re-create, set `offset.storage.topic` in the MSK worker configuration the connector is created with (a compacted topic, the same worker configuration and the same connector name each time) and name that topic in kco.yaml's `connectTopics.offsets` (docs/through-kafka.md#pinning-the-offsets-topic)"
    ))
}

/// A connector that cannot be written through Kafka now, and why (with what to do).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    #[serde(rename = "connector")]
    pub name: String,
    pub message: String,
}

/// Why there is no plan.
#[derive(Debug)]
pub enum PlanError {
    /// Reading the offsets topic or a group failed.
    Kafka(KafkaError),
    /// Connectors that cannot be written now: nothing is. With [`Input::plan_refused`], the
    /// plan of every connector that could be planned, the refused ones among them, to show.
    Refused {
        refusals: Vec<Refusal>,
        plan: Option<Box<TopicPlan>>,
    },
}

impl From<KafkaError> for PlanError {
    fn from(e: KafkaError) -> Self {
        PlanError::Kafka(e)
    }
}

/// The writes that put each want's offsets in the offsets topic and the sinks' groups, from
/// what they hold now. Refuses (nothing planned, unless [`Input::plan_refused`]) any connector
/// that runs, is paused or failed, whose group has members, or whose offsets are not a sink's
/// where its file says sink.
pub fn plan(
    store: &dyn OffsetsTopic,
    input: &Input<'_>,
    wants: &[Want],
) -> Result<TopicPlan, PlanError> {
    let mut refused = Vec::new();
    let mut stopped = BTreeSet::new();
    // Planned though refused for their state (a dry run): as they would be once deleted.
    let mut as_deleted = BTreeSet::new();
    let mut recreated = BTreeSet::new();
    let mut targets = Vec::new();
    for want in wants {
        let name = want.target();
        let live = input.live.get(name);
        match live.map(|l| l.state()) {
            None => {}
            Some(Some(ConnectorState::Stopped)) => {
                stopped.insert(name.to_string());
            }
            Some(_) if input.recreates => {
                as_deleted.insert(name);
                recreated.insert(name.to_string());
            }
            Some(state) => {
                let state = state.map_or("in an unknown state".to_string(), |s| s.to_string());
                // A task FAILED is named: restarted (by hand, or by a rebalance), it takes
                // up its position again.
                let health =
                    crate::engine::health::Health::of(live.and_then(|l| l.status.as_ref()));
                let (troubles, tasks) = match health.is_healthy() {
                    true => (String::new(), "its tasks hold their position"),
                    false => (
                        format!(" ({})", health.describe()),
                        "its tasks, running or restarted, hold their position",
                    ),
                };
                let reset = matches!(want, Want::Reset { .. });
                refused.push(Refusal {
                    name: name.to_string(),
                    message: format!(
                        "`{name}` is {state}{troubles} on cluster `{}`: {tasks} and would write over offsets written through Kafka; {}",
                        input.cluster,
                        delete_advice(name, input.cluster, input.route, reset)
                    ),
                });
                if !input.plan_refused {
                    continue;
                }
                as_deleted.insert(name);
            }
        }
        match want {
            Want::File { file, .. } => {
                let kind = file.file.metadata.connector_type;
                if let Some(t) = live.and_then(|l| l.connector_type).filter(|t| *t != kind) {
                    refused.push(Refusal {
                        name: name.to_string(),
                        message: format!(
                            "{} holds {kind} offsets but `{name}` on `{}` is a {t} connector",
                            file.path.display(),
                            input.cluster
                        ),
                    });
                    continue;
                }
            }
            Want::Reset { .. } => {}
            Want::Delete { .. } => {
                refused.push(Refusal {
                    name: name.to_string(),
                    message: format!(
                        "deleting `{name}` is {}: kco writes offsets through Kafka on cluster `{}`, and creates or deletes no connector there",
                        match input.route {
                            ResetRoute::ServiceTools => {
                                "the service's to do (its own console, CLI or API)".to_string()
                            }
                            _ => format!("Connect's to do (`DELETE /connectors/{name}`)"),
                        },
                        input.cluster
                    ),
                });
                continue;
            }
        }
        let config = live
            .map(|l| &l.config)
            .or_else(|| want.file().and_then(|(_, f)| f.file.config.as_ref()));
        if let Some(own) = config.and_then(|c| own_offsets_topic(c, input.topic)) {
            refused.push(Refusal {
                name: name.to_string(),
                message: format!(
                    "`{name}` keeps its offsets in a topic of its own (`offsets.storage.topic={own}`, KIP-618), which kco reads but does not write: kco writes the workers' offsets topic `{}` only",
                    input.topic
                ),
            });
            continue;
        }
        targets.push((want, live));
    }
    if !refused.is_empty() && !input.plan_refused {
        return Err(PlanError::Refused {
            refusals: refused,
            plan: None,
        });
    }
    let names: BTreeSet<&str> = targets.iter().map(|(w, _)| w.target()).collect();
    let keys = KeysNow::read(store, input.topic, &names)?;
    let mut writes = Vec::new();
    let mut group_writes = Vec::new();
    for (want, live) in targets {
        let name = want.target();
        // What is wanted, and which partitions the name's others are.
        let (kind, wanted, scope) = match want {
            Want::File { file, change, .. } => {
                let kind = Some(file.file.metadata.connector_type);
                match change {
                    Some(ch) => {
                        let removed = ch.removed.iter().map(canonical_fields).collect();
                        (kind, ch.set.clone(), Others::Delete(removed))
                    }
                    None if live.is_none() || input.prune || as_deleted.contains(name) => {
                        (kind, file.file.offsets.clone(), Others::DeleteAll)
                    }
                    None => (kind, file.file.offsets.clone(), Others::Keep),
                }
            }
            // Reset: every offset the name has goes; a connector that does not exist may
            // have left a source's and a sink's.
            _ => (
                live.and_then(|l| l.connector_type),
                Vec::new(),
                Others::DeleteAll,
            ),
        };
        if kind != Some(ConnectorType::Sink) {
            writes.extend(keys.writes(name, &wanted, &scope));
        }
        if kind != Some(ConnectorType::Source) {
            let config = live
                .map(|l| l.config.clone())
                .or_else(|| want.file().and_then(|(_, f)| f.file.config.clone()))
                .unwrap_or_default();
            let group = consumer_group(name, &config);
            let change_from = match want {
                Want::File {
                    change: Some(ch), ..
                } => Some(&ch.from),
                _ => None,
            };
            let sink = sink_writes(store, name, &group, &wanted, &scope, change_from)?;
            let writes = match sink {
                Ok(w) => w,
                Err(SinkRefused::NotASinks(message)) => {
                    refused.push(Refusal {
                        name: name.to_string(),
                        message,
                    });
                    Vec::new()
                }
                // Its own tasks, gone once it is deleted (the run waits for that).
                Err(SinkRefused::Members { writes, .. }) if recreated.contains(name) => writes,
                Err(SinkRefused::Members { message, writes }) => {
                    // A running sink is its group's member: refused once, for its state.
                    if !refused.iter().any(|r| r.name == name) {
                        refused.push(Refusal {
                            name: name.to_string(),
                            message,
                        });
                    }
                    writes
                }
            };
            group_writes.extend(writes);
        }
    }
    let mut plan = TopicPlan::new(input.cluster, input.topic, writes, group_writes);
    plan.purpose = Purpose::Apply;
    plan.stopped = stopped;
    plan.recreated = recreated;
    if !refused.is_empty() {
        return Err(PlanError::Refused {
            refusals: refused,
            plan: input.plan_refused.then(|| Box::new(plan)),
        });
    }
    Ok(plan)
}

/// Why a sink's offsets cannot be written to its group now.
enum SinkRefused {
    /// The file's offsets are not a sink's.
    NotASinks(String),
    /// Its group has members: the writes it would take, for a dry run to show.
    Members {
        message: String,
        writes: Vec<GroupWrite>,
    },
}

/// What becomes of the partitions a name has that the want does not set.
enum Others {
    /// Left as they are (a stopped connector, without `--prune`).
    Keep,
    /// Deleted: the want's offsets replace the name's.
    DeleteAll,
    /// Those of these canonical partitions are deleted (a change's removed partitions).
    Delete(BTreeSet<String>),
}

impl Others {
    fn deletes(&self, canonical: &str) -> bool {
        match self {
            Others::Keep => false,
            Others::DeleteAll => true,
            Others::Delete(removed) => removed.contains(canonical),
        }
    }
}

/// One key of the offsets topic as it stands.
struct KeyNow {
    partition: i32,
    key: String,
    /// The value's bytes; `None`: deleted.
    value: Option<String>,
    source_partition: Value,
    offset: Option<Value>,
}

/// The keys the wanted names have in the offsets topic (the last record of each), and the
/// topic's partition count (where a new key goes).
struct KeysNow {
    /// By (name, canonical partition).
    keys: BTreeMap<(String, String), KeyNow>,
    partitions: i32,
}

impl KeysNow {
    fn read(
        store: &dyn OffsetsTopic,
        topic: &str,
        names: &BTreeSet<&str>,
    ) -> Result<KeysNow, KafkaError> {
        let partitions = store.partitions(topic)?;
        let mut keys = BTreeMap::new();
        store.scan(topic, &mut |p, r| {
            let Some((name, partition, offset)) =
                crate::kafka::connect_offsets::decode(r.key, r.value)
            else {
                return;
            };
            if !names.contains(name.as_str()) {
                return;
            }
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let now = KeyNow {
                partition: p,
                key: r.key.map(text).unwrap_or_default(),
                value: offset.as_ref().and(r.value.map(text)),
                source_partition: partition.clone(),
                offset,
            };
            keys.insert((name, canonical_json(&partition)), now);
        })?;
        Ok(KeysNow { keys, partitions })
    }

    /// The writes that give `name` the `wanted` offsets, and delete those `others` says.
    fn writes(&self, name: &str, wanted: &[OffsetEntry], others: &Others) -> Vec<TopicWrite> {
        let mut out = Vec::new();
        let mut set = BTreeSet::new();
        for e in wanted {
            let canonical = canonical_fields(&e.partition);
            let to = serde_json::to_value(&e.offset).expect("an offset is JSON");
            set.insert(canonical.clone());
            let now = self.keys.get(&(name.to_string(), canonical));
            if now.and_then(|k| k.offset.as_ref()) == Some(&to) {
                continue;
            }
            let source_partition = serde_json::to_value(&e.partition).expect("JSON");
            let (partition, key) = match now {
                Some(k) => (k.partition, k.key.clone()),
                None => {
                    let key = serde_json::to_string(&serde_json::json!([name, source_partition]))
                        .expect("JSON");
                    (partition_of(key.as_bytes(), self.partitions), key)
                }
            };
            out.push(TopicWrite {
                name: name.to_string(),
                source_partition,
                from: now.and_then(|k| k.offset.clone()),
                record: TopicRecord {
                    partition,
                    key,
                    value: Some(serde_json::to_string(&to).expect("JSON")),
                },
                to: Some(to),
                had: now.and_then(|k| k.value.clone()),
            });
        }
        for ((n, canonical), k) in &self.keys {
            if n != name || set.contains(canonical) || k.value.is_none() {
                continue;
            }
            if !others.deletes(canonical) {
                continue;
            }
            out.push(TopicWrite {
                name: name.to_string(),
                source_partition: k.source_partition.clone(),
                from: k.offset.clone(),
                to: None,
                record: TopicRecord {
                    partition: k.partition,
                    key: k.key.clone(),
                    value: None,
                },
                had: k.value.clone(),
            });
        }
        out
    }
}

/// The group writes that give sink `name` (consuming with `group`) the `wanted` offsets, or
/// why it cannot be written (its group has members; an offset that is not a sink's).
fn sink_writes(
    store: &dyn OffsetsTopic,
    name: &str,
    group: &str,
    wanted: &[OffsetEntry],
    others: &Others,
    change_from: Option<&BTreeMap<String, crate::model::Fields>>,
) -> Result<Result<Vec<GroupWrite>, SinkRefused>, KafkaError> {
    let mut set = Vec::new();
    for e in wanted {
        let topic = e.partition.get("kafka_topic").and_then(Value::as_str);
        let partition = e.partition.get("kafka_partition").and_then(Value::as_i64);
        let offset = e.offset.get("kafka_offset").and_then(Value::as_i64);
        match (topic, partition, offset) {
            (Some(t), Some(p), Some(o)) if o >= 0 && i32::try_from(p).is_ok() => {
                let from = change_from
                    .and_then(|f| f.get(&canonical_fields(&e.partition)))
                    .and_then(|f| f.get("kafka_offset"))
                    .and_then(Value::as_i64);
                set.push((t.to_string(), p as i32, o, from));
            }
            _ => {
                return Ok(Err(SinkRefused::NotASinks(format!(
                    "`{name}`: {} -> {} is not a sink's offset (`kafka_topic`, `kafka_partition`; `kafka_offset`, a count of records)",
                    canonical_fields(&e.partition),
                    canonical_fields(&e.offset)
                ))))
            }
        }
    }
    let state = store.group(group)?;
    let busy = (state.members > 0).then(|| format!(
        "consumer group `{group}` of `{name}` has {} now: Kafka takes offsets committed from outside a group only while it has none (hint: stop or delete what consumes with it, then apply again)",
        crate::text::count(state.members, "member")
    ));
    let now: BTreeMap<(String, i32), i64> = state
        .offsets
        .iter()
        .map(|c: &Committed| ((c.topic.clone(), c.partition), c.offset))
        .collect();
    let write = |topic: &str, partition: i32, from: Option<i64>, to: Option<i64>| GroupWrite {
        name: name.to_string(),
        group: group.to_string(),
        topic: topic.to_string(),
        partition,
        from,
        to,
    };
    let mut out = Vec::new();
    let mut wanted_keys = BTreeSet::new();
    for (topic, partition, offset, change_from) in set {
        wanted_keys.insert((topic.clone(), partition));
        let had = now.get(&(topic.clone(), partition)).copied();
        if had == Some(offset) {
            continue;
        }
        // A forward change (skip ahead) moves a partition only forward: one the group has
        // passed stays where it is.
        let forward = change_from.is_some_and(|f| f < offset);
        if forward && had.is_some_and(|h| h > offset) {
            continue;
        }
        out.push(write(&topic, partition, had, Some(offset)));
    }
    for ((topic, partition), offset) in &now {
        if wanted_keys.contains(&(topic.clone(), *partition)) {
            continue;
        }
        let canonical = canonical_json(
            &serde_json::json!({"kafka_topic": topic, "kafka_partition": partition}),
        );
        if others.deletes(&canonical) {
            out.push(write(topic, *partition, Some(*offset), None));
        }
    }
    Ok(match busy {
        Some(message) => Err(SinkRefused::Members {
            message,
            writes: out,
        }),
        None => Ok(out),
    })
}

/// Every offset of `plan` whose change one of `refuse` forbids (`apply --fail-on`), assessed
/// as an apply through Connect assesses its plan: the offset as it is against the one
/// written, moving as the connector's class orders its offsets.
pub fn refusals(plan: &TopicPlan, refuse: &[Refuse]) -> Vec<crate::engine::fail_on::Refusal> {
    if refuse.is_empty() {
        return Vec::new();
    }
    let fields = |v: &Value| serde_json::from_value::<Fields>(v.clone()).ok();
    let mut found = Vec::new();
    let mut judge = |name: &str, kind, partition: Option<Fields>, from: Option<Fields>, to| {
        let Some(partition) = partition else { return };
        let movement = match (&from, &to) {
            (Some(f), Some(t)) => crate::compare::movement(&partition, f, t),
            _ => None,
        };
        let risk = crate::engine::risk::assess(kind, from.as_ref(), to.as_ref(), movement.as_ref());
        if let Some(risk) = risk.filter(|r| refuse.iter().any(|f| f.covers(r.code))) {
            found.push(crate::engine::fail_on::Refusal {
                connector: name.to_string(),
                partition,
                risk,
            });
        }
    };
    for w in &plan.writes {
        judge(
            &w.name,
            ConnectorType::Source,
            fields(&w.source_partition),
            w.from.as_ref().and_then(fields),
            w.to.as_ref().and_then(fields),
        );
    }
    let offset = |o: Option<i64>| o.and_then(|o| fields(&serde_json::json!({"kafka_offset": o})));
    for w in &plan.group_writes {
        let partition = serde_json::json!({"kafka_topic": w.topic, "kafka_partition": w.partition});
        judge(
            &w.name,
            ConnectorType::Sink,
            fields(&partition),
            offset(w.from),
            offset(w.to),
        );
    }
    found
}

/// The partition Kafka's default partitioner gives a record of key `key` in a topic of
/// `partitions` partitions: `toPositive(murmur2(key)) % partitions`, as the worker's producer
/// chooses it for the offsets topic.
pub fn partition_of(key: &[u8], partitions: i32) -> i32 {
    ((murmur2(key) & 0x7fff_ffff) % partitions.max(1) as u32) as i32
}

/// Kafka's murmur2 hash (`org.apache.kafka.common.utils.Utils.murmur2`), seed 0x9747b28c.
pub fn murmur2(data: &[u8]) -> u32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h = SEED ^ data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if rest.len() >= 3 {
        h ^= u32::from(rest[2]) << 16;
    }
    if rest.len() >= 2 {
        h ^= u32::from(rest[1]) << 8;
    }
    if !rest.is_empty() {
        h ^= u32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

#[cfg(test)]
mod tests;
