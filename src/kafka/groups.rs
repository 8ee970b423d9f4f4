//! Kafka's consumer-group APIs: the groups a cluster has, a group's
//! state and members, its committed offsets, and committing or deleting those of a group
//! with no members (a sink connector's, once the connector is gone); and the cluster's id
//! and topics (one metadata request).
//!
//! The messages are kafka-protocol's, typed and encoded by that crate, sent over one blocking
//! connection to one broker at a time (`conn.rs`).

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    offset_commit_request, offset_delete_request, offset_fetch_request, DescribeGroupsRequest,
    GroupId, ListGroupsRequest, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
    TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::conn::Conn;
use super::{KafkaError, KafkaOptions};

/// The connector config key that gives a sink another consumer group.
pub const GROUP_OVERRIDE: &str = "consumer.override.group.id";

/// The consumer group of sink `name` with `config` (as far as the REST API shows): Connect's
/// `connect-<name>` (`SinkUtils.consumerGroupId`), unless `consumer.override.group.id` sets
/// another.
pub fn consumer_group(name: &str, config: &BTreeMap<String, String>) -> String {
    match config.get(GROUP_OVERRIDE) {
        Some(g) if !g.trim().is_empty() => g.trim().to_string(),
        _ => format!("connect-{name}"),
    }
}

/// A group as a broker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub id: String,
    /// `consumer` for a consumer's (a sink's), `connect` for Connect workers' own group;
    /// empty for a group that only ever had offsets committed for it.
    pub protocol_type: String,
}

/// One partition's committed offset.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Committed {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// What a group is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupState {
    /// `Empty`, `Stable`, `Dead`..., as the coordinator says.
    pub state: String,
    pub members: usize,
    /// Its committed offsets, by topic and partition.
    pub offsets: Vec<Committed>,
}

/// Every consumer group of the cluster (each broker lists those it coordinates).
pub fn list_groups(opts: &KafkaOptions) -> Result<Vec<GroupListing>, KafkaError> {
    let mut boot = Conn::bootstrap(opts)?;
    let brokers = boot.brokers()?;
    let mut groups = Vec::new();
    for addr in brokers {
        let mut conn = if boot.addr == addr {
            None
        } else {
            Some(Conn::open(opts, &addr)?)
        };
        let conn = conn.as_mut().unwrap_or(&mut boot);
        let reply = conn.send(ListGroupsRequest::default())?;
        conn.check(reply.error_code, "listing its groups")?;
        groups.extend(reply.groups.into_iter().map(|g| GroupListing {
            id: g.group_id.0.as_str().to_string(),
            protocol_type: g.protocol_type.as_str().to_string(),
        }));
    }
    groups.sort_by(|a, b| a.id.cmp(&b.id));
    groups.dedup_by(|a, b| a.id == b.id);
    Ok(groups)
}

/// Kafka's error code for a group it does not know (`GROUP_ID_NOT_FOUND`).
const GROUP_ID_NOT_FOUND: i16 = 69;

/// The Kafka cluster as a bootstrap broker describes it: its id and its topics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterMetadata {
    /// The cluster id (`None` from a broker that does not say it: before Metadata v2).
    pub cluster_id: Option<String>,
    /// Every topic's name.
    pub topics: std::collections::BTreeSet<String>,
}

/// The cluster's id and topics, in one metadata request for every topic (which creates
/// none) to the first bootstrap broker that answers.
pub fn cluster_metadata(opts: &KafkaOptions) -> Result<ClusterMetadata, KafkaError> {
    let mut c = Conn::bootstrap(opts)?;
    let request = super::conn::all_topics(&c)?;
    let reply = c.send(request)?;
    Ok(ClusterMetadata {
        cluster_id: reply.cluster_id.map(|id| id.as_str().to_string()),
        topics: reply
            .topics
            .iter()
            .filter_map(|t| t.name.as_ref().map(|n| n.as_str().to_string()))
            .collect(),
    })
}

/// `group`'s state, members and committed offsets, from its coordinator.
pub fn describe(opts: &KafkaOptions, group: &str) -> Result<GroupState, KafkaError> {
    let mut c = Conn::coordinator(opts, group)?;
    let reply = c.send(DescribeGroupsRequest::default().with_groups(vec![group_id(group)]))?;
    let described = reply
        .groups
        .into_iter()
        .next()
        .ok_or_else(|| c.failed(format!("describing group `{group}`: no answer for it")))?;
    // A group Kafka has never heard of (a sink created a moment ago, whose consumer has
    // not joined yet) has no members; its committed offsets, if any, are asked all the same.
    let unknown = described.error_code == GROUP_ID_NOT_FOUND;
    if !unknown {
        c.check(described.error_code, &format!("describing group `{group}`"))?;
    }
    let offsets = c.committed(group)?;
    Ok(GroupState {
        state: match unknown {
            true => "Dead".to_string(),
            false => described.group_state.as_str().to_string(),
        },
        members: described.members.len(),
        offsets,
    })
}

/// Commits `offsets` for `group`, as a client outside the group does (no generation, no
/// member): the coordinator accepts it only while the group has no members.
pub fn commit(opts: &KafkaOptions, group: &str, offsets: &[Committed]) -> Result<(), KafkaError> {
    if offsets.is_empty() {
        return Ok(());
    }
    let mut c = Conn::coordinator(opts, group)?;
    let topics = by_topic(offsets.iter().map(|o| {
        let p = offset_commit_request::OffsetCommitRequestPartition::default()
            .with_partition_index(o.partition)
            .with_committed_offset(o.offset)
            .with_committed_leader_epoch(-1);
        (o.topic.as_str(), p)
    }))
    .map(|(t, partitions)| {
        offset_commit_request::OffsetCommitRequestTopic::default()
            .with_name(topic_name(t))
            .with_partitions(partitions)
    })
    .collect();
    let reply = c.send(
        OffsetCommitRequest::default()
            .with_group_id(group_id(group))
            .with_generation_id_or_member_epoch(-1)
            .with_retention_time_ms(-1)
            .with_topics(topics),
    )?;
    for t in reply.topics {
        for p in t.partitions {
            let what = format!(
                "committing {}-{} for group `{group}`",
                t.name.0.as_str(),
                p.partition_index
            );
            c.check(p.error_code, &what)?;
        }
    }
    Ok(())
}

/// Deletes `group`'s committed offsets of `partitions` (topic, partition); the coordinator
/// refuses while a member of the group consumes one of their topics.
pub fn delete_offsets(
    opts: &KafkaOptions,
    group: &str,
    partitions: &[(String, i32)],
) -> Result<(), KafkaError> {
    if partitions.is_empty() {
        return Ok(());
    }
    let mut c = Conn::coordinator(opts, group)?;
    let topics = by_topic(partitions.iter().map(|(t, p)| {
        let p =
            offset_delete_request::OffsetDeleteRequestPartition::default().with_partition_index(*p);
        (t.as_str(), p)
    }))
    .map(|(t, partitions)| {
        offset_delete_request::OffsetDeleteRequestTopic::default()
            .with_name(topic_name(t))
            .with_partitions(partitions)
    })
    .collect();
    let reply = c.send(
        OffsetDeleteRequest::default()
            .with_group_id(group_id(group))
            .with_topics(topics),
    )?;
    let what = format!("deleting the offsets of group `{group}`");
    c.check(reply.error_code, &what)?;
    for t in reply.topics {
        for p in t.partitions {
            c.check(p.error_code, &what)?;
        }
    }
    Ok(())
}

fn topic_name(t: &str) -> TopicName {
    TopicName(StrBytes::from_string(t.to_string()))
}

fn group_id(g: &str) -> GroupId {
    GroupId(StrBytes::from_string(g.to_string()))
}

/// `items` (topic, one partition's part of a request) gathered by topic, in topic order.
fn by_topic<'t, P>(
    items: impl Iterator<Item = (&'t str, P)>,
) -> impl Iterator<Item = (&'t str, Vec<P>)> {
    let mut topics: BTreeMap<&str, Vec<P>> = BTreeMap::new();
    for (t, p) in items {
        topics.entry(t).or_default().push(p);
    }
    topics.into_iter()
}

impl Conn<'_> {
    /// The committed offsets of `group`, every topic's.
    fn committed(&mut self, group: &str) -> Result<Vec<Committed>, KafkaError> {
        let v = self.version::<OffsetFetchRequest>()?;
        let id = group_id(group);
        let request = if v >= 8 {
            OffsetFetchRequest::default().with_groups(vec![
                offset_fetch_request::OffsetFetchRequestGroup::default()
                    .with_group_id(id)
                    .with_topics(None),
            ])
        } else {
            OffsetFetchRequest::default()
                .with_group_id(id)
                .with_topics(None)
        };
        let reply = self.send(request)?;
        let what = format!("reading the offsets of group `{group}`");
        let mut out = Vec::new();
        if v >= 8 {
            for g in reply.groups {
                self.check(g.error_code, &what)?;
                for t in g.topics {
                    for p in t.partitions {
                        self.check(p.error_code, &what)?;
                        if p.committed_offset >= 0 {
                            out.push(Committed {
                                topic: t.name.0.as_str().to_string(),
                                partition: p.partition_index,
                                offset: p.committed_offset,
                            });
                        }
                    }
                }
            }
        } else {
            self.check(reply.error_code, &what)?;
            for t in reply.topics {
                for p in t.partitions {
                    self.check(p.error_code, &what)?;
                    if p.committed_offset >= 0 {
                        out.push(Committed {
                            topic: t.name.0.as_str().to_string(),
                            partition: p.partition_index,
                            offset: p.committed_offset,
                        });
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }
}
