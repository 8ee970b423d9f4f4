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

/// Where a review reads what deleted connectors left.
pub enum Leftovers<'a> {
    /// Through this Kafka cluster.
    Kafka(Box<LeftoverReader<'a>>),
    /// Not at all, and why (no `kafka:` in kco.yaml, ...).
    Unread(String),
}

/// The Kafka cluster of a Connect cluster, read once for all the review's gone connectors.
pub struct LeftoverReader<'a> {
    kafka: Box<dyn OffsetsTopic + 'a>,
    /// The workers' offsets topic (`connectTopics.offsets`), when known.
    topic: Option<String>,
    /// The other Connect clusters of kco.yaml, resolved when a sink's group is first looked
    /// at: a group one of their connectors uses is not a leftover.
    others: Box<dyn Fn() -> Vec<Neighbour> + 'a>,
    sources: OnceCell<Result<super::Orphans, String>>,
    elsewhere: OnceCell<GroupsInUse>,
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
            let state = match r.kafka.group(&group) {
                Ok(s) => s,
                Err(e) => return nothing(format!("cannot read consumer group `{group}`: {e}")),
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

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::engine::diff::{classify, label_against_live, ConnectorDiff};
    use crate::engine::orphaned::memory::MemoryKafka;
    use crate::engine::risk::RiskCode;
    use crate::fake::FakeConnect;
    use crate::model::file::{Metadata, OffsetsFile};

    fn file(name: &str, kind: ConnectorType, offsets: Value) -> (String, OffsetsFile) {
        let entries: Vec<OffsetEntry> = serde_json::from_value(offsets).unwrap();
        let f = OffsetsFile::new(Metadata::new(name, "a", kind), entries, None);
        (format!("snapshots/a/{name}.yaml"), f)
    }

    fn sink(n: i64) -> Value {
        json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": n}}])
    }

    fn source(pos: i64) -> Value {
        json!([{"partition": {"filename": "/in.txt"}, "offset": {"position": pos}}])
    }

    /// The review of `name`'s change from `before` to `after` against a cluster that lacks
    /// it, its leftovers read through `leftovers`.
    fn review(
        name: &str,
        kind: ConnectorType,
        sides: (Value, Value),
        leftovers: &Leftovers<'_>,
    ) -> ConnectorDiff {
        review_with(name, kind, sides, leftovers, None)
    }

    /// [`review`], the files' config `config`.
    fn review_with(
        name: &str,
        kind: ConnectorType,
        (before, after): (Value, Value),
        leftovers: &Leftovers<'_>,
        config: Option<&std::collections::BTreeMap<String, String>>,
    ) -> ConnectorDiff {
        let fake = FakeConnect::builder().in_process();
        let (old, new) = (file(name, kind, before), file(name, kind, after));
        let mut c = classify(name, Some(&old), Some(&new), "main");
        let client = fake.client();
        let fresh = Default::default();
        label_against_live(&mut c, &*client, "a", None, &fresh, leftovers, config);
        c
    }

    fn risk(c: &ConnectorDiff) -> (RiskCode, String) {
        let r = c.partitions[0].risk.clone().expect("a risk");
        (r.code, r.message)
    }

    /// A deleted sink's group still holds 302: a change of its file from 300 to 280 rewinds
    /// what a sink created under its name would resume from by 22 records, not by the 20 the
    /// files differ by, and exactly (nothing moves the group of a deleted sink).
    #[test]
    fn a_deleted_sinks_change_is_labelled_against_its_groups_offsets() {
        let kafka = MemoryKafka::new(Vec::new(), false).with_group(
            "connect-gone",
            "consumer",
            0,
            &[("t", 0, 302)],
        );
        let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
        let c = review(
            "gone",
            ConnectorType::Sink,
            (sink(300), sink(280)),
            &leftovers,
        );
        assert_eq!(
            risk(&c),
            (
                RiskCode::Reprocessing,
                "22 records will be reprocessed (duplicates downstream)".into()
            )
        );
        assert_eq!(
            c.leftovers,
            Some(Gone::Group {
                group: "connect-gone".into(),
                partitions: 1
            })
        );
        let live = c.partitions[0].live.as_ref().unwrap().offset.clone();
        assert_eq!(
            serde_json::to_value(live).unwrap(),
            json!({"kafka_offset": 302})
        );
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(
            json["leftovers"],
            json!({"against": "group", "group": "connect-gone", "partitions": 1})
        );
    }

    /// A sink whose config sets `consumer.override.group.id` left its offsets in that group,
    /// not in `connect-<name>`.
    #[test]
    fn a_sinks_own_group_is_read_where_its_file_names_it() {
        let kafka = MemoryKafka::new(Vec::new(), false)
            .with_group("connect-gone", "consumer", 0, &[("t", 0, 1)])
            .with_group("legacy", "consumer", 0, &[("t", 0, 290)]);
        let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
        let config = std::collections::BTreeMap::from([(
            "consumer.override.group.id".to_string(),
            "legacy".to_string(),
        )]);
        let sides = (sink(300), sink(280));
        let c = review_with(
            "gone",
            ConnectorType::Sink,
            sides,
            &leftovers,
            Some(&config),
        );
        assert_eq!(
            c.leftovers,
            Some(Gone::Group {
                group: "legacy".into(),
                partitions: 1
            })
        );
        assert_eq!(
            risk(&c),
            (
                RiskCode::Reprocessing,
                "10 records will be reprocessed (duplicates downstream)".into()
            )
        );
    }

    /// A group someone consumes with, and one a connector of another cluster uses, are no
    /// leftovers: compared with nothing, and why.
    #[test]
    fn a_group_with_members_is_not_a_leftover() {
        let kafka = MemoryKafka::new(Vec::new(), false).with_group(
            "connect-gone",
            "consumer",
            1,
            &[("t", 0, 302)],
        );
        let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
        let c = review(
            "gone",
            ConnectorType::Sink,
            (sink(300), sink(280)),
            &leftovers,
        );
        assert_eq!(risk(&c).0, RiskCode::NewPartition);
        let Some(Gone::Nothing { why }) = &c.leftovers else {
            panic!("{:?}", c.leftovers)
        };
        assert!(why.contains("has 1 member"), "{why}");
    }

    /// The group of a sink of another Connect cluster on the same Kafka (stopped there: no
    /// members) is that sink's, not a leftover of the name: compared with nothing, and why.
    #[test]
    fn a_group_another_clusters_sink_uses_is_not_a_leftover() {
        let kafka = MemoryKafka::new(Vec::new(), false).with_group(
            "connect-gone",
            "consumer",
            0,
            &[("t", 0, 302)],
        );
        let b = FakeConnect::builder()
            .sink(
                "gone",
                "FileStreamSink",
                crate::fake::State::Stopped,
                sink(302),
            )
            .in_process();
        let others = move || {
            vec![Neighbour {
                cluster: "b".into(),
                client: b.client(),
            }]
        };
        let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(others));
        let c = review(
            "gone",
            ConnectorType::Sink,
            (sink(300), sink(280)),
            &leftovers,
        );
        let Some(Gone::Nothing { why }) = &c.leftovers else {
            panic!("{:?}", c.leftovers)
        };
        assert!(
            why.contains("is the group of `gone` on cluster `b`"),
            "{why}"
        );
    }

    /// A deleted source's position in the offsets topic: a change past it skips records.
    #[test]
    fn a_deleted_sources_change_is_labelled_against_the_offsets_topic() {
        let key = json!(["gone-src", {"filename": "/in.txt"}]).to_string();
        let records = vec![
            (
                3,
                Some(key.clone()),
                Some(json!({"position": 100}).to_string()),
                10,
            ),
            (3, Some(key), Some(json!({"position": 120}).to_string()), 20),
        ];
        let kafka = MemoryKafka::new(records, false);
        let topic = Some("connect-offsets".to_string());
        let leftovers = Leftovers::kafka(Box::new(kafka), topic, Box::new(Vec::new));
        let c = review(
            "gone-src",
            ConnectorType::Source,
            (source(100), source(150)),
            &leftovers,
        );
        assert_eq!(risk(&c).0, RiskCode::DataLoss, "{c:?}");
        assert_eq!(
            c.leftovers,
            Some(Gone::OffsetsTopic {
                topic: "connect-offsets".into(),
                partitions: 1
            })
        );
        // No offsets topic named: a source's leftovers are not read.
        let kafka = MemoryKafka::new(Vec::new(), false);
        let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
        let c = review(
            "gone-src",
            ConnectorType::Source,
            (source(100), source(150)),
            &leftovers,
        );
        assert!(
            matches!(&c.leftovers, Some(Gone::Nothing { why }) if why.contains("connectTopics.offsets")),
            "{:?}",
            c.leftovers
        );
    }

    /// Without a Kafka to read them through, the review says it compared with nothing.
    #[test]
    fn without_kafka_a_gone_connector_is_compared_with_nothing() {
        let leftovers = Leftovers::Unread("no `kafka:`".into());
        let c = review(
            "gone",
            ConnectorType::Sink,
            (sink(300), sink(280)),
            &leftovers,
        );
        assert_eq!(
            c.leftovers,
            Some(Gone::Nothing {
                why: "no `kafka:`".into()
            })
        );
        assert_eq!(risk(&c).0, RiskCode::NewPartition);
    }
}
