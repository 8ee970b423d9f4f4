//! What one connector name left, for a file whose connector the cluster lacks. Applying it
//! creates the connector (`apply --create`), which starts from what an earlier connector of
//! its name left: a sink's consumer group (`connect-<name>`, or the file's
//! `consumer.override.group.id`), a source's keys in the workers' offsets topic; the file's
//! offsets replace them (docs/orphaned.md). So the review (`diff --base`) and the apply's plan
//! label the change against those leftovers, read through Kafka as `kco ls --orphaned` reads
//! them, and where they cannot be read say that they compared with nothing
//! ([`Gone::Nothing`]), never a silent NEW PARTITION.

use std::cell::OnceCell;
use std::collections::BTreeSet;

use serde::Serialize;

use super::{OffsetsTopic, OrphanPartition};
use crate::engine::neighbours::{groups_used_by, GroupsInUse, Neighbour};
use crate::model::{ConnectorType, OffsetEntry};

/// Where a review or an apply's plan reads what deleted connectors left.
pub enum Leftovers<'a> {
    /// Through this Kafka cluster.
    Kafka(Box<LeftoverReader<'a>>),
    /// Not at all, and why (no `kafka:` in kco.yaml, ...).
    Unread(String),
}

/// The Kafka cluster of a Connect cluster, read once for all the gone connectors of a review
/// or a plan.
pub struct LeftoverReader<'a> {
    kafka: Box<dyn OffsetsTopic + 'a>,
    /// The workers' offsets topic (`connectTopics.offsets`), when known.
    topic: Option<String>,
    /// The other Connect clusters of kco.yaml, resolved when a sink's group is first looked
    /// at: a group one of their connectors uses is not a leftover.
    others: Box<dyn Fn() -> Vec<Neighbour> + 'a>,
    sources: OnceCell<Result<super::Orphans, String>>,
    elsewhere: OnceCell<GroupsInUse>,
    /// The first group read that failed: the others are not tried (a Kafka that does not
    /// answer would be waited for once per sink).
    failed: OnceCell<String>,
}

impl<'a> Leftovers<'a> {
    /// Read through `kafka`: the sinks' groups, and the sources' keys in `topic` (the
    /// workers' offsets topic) when known; `others` gives the other Connect clusters of
    /// kco.yaml, asked only once a sink's group is looked at.
    pub fn kafka(
        kafka: Box<dyn OffsetsTopic + 'a>,
        topic: Option<String>,
        others: Box<dyn Fn() -> Vec<Neighbour> + 'a>,
    ) -> Self {
        Leftovers::Kafka(Box::new(LeftoverReader {
            kafka,
            topic,
            others,
            sources: OnceCell::new(),
            elsewhere: OnceCell::new(),
            failed: OnceCell::new(),
        }))
    }
}

/// What a gone connector's change was labelled against (JSON: a connector's `leftovers`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "against", rename_all = "snake_case")]
pub enum Gone {
    /// The committed offsets of the sink's consumer group (none: a created sink starts
    /// where `auto.offset.reset` says).
    Group { group: String, partitions: usize },
    /// The source offsets its name left in the workers' offsets topic.
    OffsetsTopic { topic: String, partitions: usize },
    /// Nothing: kco could not read what an earlier connector of its name left, and why.
    Nothing { why: String },
}

/// What `name` (a connector of `kind` the cluster lacks, `config` its file's) left, as offset
/// entries, and where they were read (or why none could be: [`Gone::Nothing`]).
pub fn read(
    leftovers: &Leftovers<'_>,
    own: &dyn crate::client::Service,
    cluster: &str,
    name: &str,
    kind: ConnectorType,
    config: Option<&std::collections::BTreeMap<String, String>>,
) -> (Vec<OffsetEntry>, Gone) {
    let nothing = |why: String| (Vec::new(), Gone::Nothing { why });
    let r = match leftovers {
        Leftovers::Unread(why) => return nothing(why.clone()),
        Leftovers::Kafka(r) => r,
    };
    match kind {
        ConnectorType::Sink => {
            let group =
                crate::kafka::groups::consumer_group(name, config.unwrap_or(&Default::default()));
            let elsewhere = r
                .elsewhere
                .get_or_init(|| groups_used_by(own, &(r.others)()));
            if let Some((c, n)) = elsewhere.groups.get(&group) {
                return nothing(format!(
                    "its consumer group `{group}` is the group of `{n}` on cluster `{c}`, not a leftover of `{name}` (applying it is refused while the group is shared)"
                ));
            }
            if let Some(first) = r.failed.get() {
                return nothing(format!(
                    "consumer group `{group}` not read, as an earlier read failed: {first}"
                ));
            }
            let state = match r.kafka.group(&group) {
                Ok(s) => s,
                Err(e) => {
                    let why = format!("cannot read consumer group `{group}`: {e}");
                    let _ = r.failed.set(why.clone());
                    return nothing(why);
                }
            };
            if state.members > 0 {
                return nothing(format!(
                    "consumer group `{group}` has {} (someone consumes with it): its offsets move",
                    crate::text::count(state.members, "member")
                ));
            }
            let partitions = state.offsets.len();
            let entries = state
                .offsets
                .iter()
                .map(|c| OrphanPartition {
                    partition: serde_json::json!({"kafka_topic": c.topic, "kafka_partition": c.partition}),
                    offset: serde_json::json!({"kafka_offset": c.offset}),
                })
                .filter_map(entry)
                .collect();
            (entries, Gone::Group { group, partitions })
        }
        ConnectorType::Source => {
            let Some(topic) = &r.topic else {
                return nothing(format!(
                    "kco.yaml gives cluster `{cluster}` no `connectTopics.offsets` (the workers' `offset.storage.topic`) to read a source's leftovers from"
                ));
            };
            let elsewhere = r
                .elsewhere
                .get_or_init(|| groups_used_by(own, &(r.others)()));
            if let Some(c) = elsewhere.sources_in(topic).get(name) {
                return nothing(format!(
                    "its offsets in topic `{topic}` are those of `{name}` on cluster `{c}`, whose worker may keep them there: not a leftover of `{name}`"
                ));
            }
            let found = r.sources.get_or_init(|| {
                super::find(&*r.kafka, topic, &BTreeSet::new())
                    .map_err(|e| format!("cannot read topic `{topic}`: {e}"))
            });
            let found = match found {
                Ok(f) => f,
                Err(why) => return nothing(why.clone()),
            };
            let left = found.sources.iter().find(|o| o.name == name);
            let entries: Vec<OffsetEntry> = left
                .map(|o| o.partitions.iter().cloned().filter_map(entry).collect())
                .unwrap_or_default();
            let partitions = entries.len();
            (
                entries,
                Gone::OffsetsTopic {
                    topic: topic.clone(),
                    partitions,
                },
            )
        }
    }
}

/// A leftover as an offset entry (one whose partition or offset is not a flat map of
/// primitives, which no file can name, is left out).
fn entry(p: OrphanPartition) -> Option<OffsetEntry> {
    serde_json::from_value(serde_json::json!({"partition": p.partition, "offset": p.offset})).ok()
}
