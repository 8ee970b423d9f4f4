//! The other Connect clusters of kco.yaml, and what a look at them finds: whether each is on
//! the same Kafka cluster (the `kafka_cluster_id` of `GET /`), and its connectors. A sink's
//! consumer group is a Kafka cluster's, not a Connect cluster's: two Connect clusters on one
//! Kafka with a sink of the same name share one (`shared_group` refuses a change of it), and
//! a group that a deleted connector of one cluster left may be the group a connector of
//! another uses (`orphaned` leaves it out).

use std::collections::BTreeMap;

use crate::client::{ConnectorListing, Service};
use crate::kafka::groups::consumer_group;
use crate::model::ConnectorType;

/// Another cluster of kco.yaml, to look at.
pub struct Neighbour {
    pub cluster: String,
    pub client: Box<dyn Service>,
    /// Its workers' offsets topic (`offset.storage.topic`), when kco.yaml names it
    /// (`connectTopics.offsets`).
    pub offsets_topic: Option<String>,
}

/// What a look at one neighbour found.
pub(crate) enum Look {
    /// It could not be looked at, and why.
    Unchecked(String),
    /// It works on another Kafka cluster.
    OtherKafka,
    /// Its connectors, on the same Kafka cluster (or one it does not name).
    Connectors(BTreeMap<String, ConnectorListing>),
}

/// The connectors of `n`, unless it is on another Kafka cluster than `kafka_cluster_id`.
pub(crate) fn look_at(kafka_cluster_id: Option<&str>, n: &Neighbour) -> Look {
    let info = match n.client.server_info() {
        Ok(i) => i,
        Err(e) => return Look::Unchecked(e.to_string()),
    };
    if let (Some(a), Some(b)) = (kafka_cluster_id, info.kafka_cluster_id.as_deref()) {
        if a != b {
            return Look::OtherKafka;
        }
    }
    match n.client.list_connectors() {
        Ok(l) => Look::Connectors(l),
        Err(e) => Look::Unchecked(e.to_string()),
    }
}

/// The consumer groups that the connectors of `others` on the same Kafka cluster as `own`
/// use (a connector of another Connect cluster named like a deleted one of `own` consumes
/// with the group that the deleted one left), and the clusters that could not be looked at.
/// A neighbour whose Kafka cluster is not known counts as the same Kafka.
pub fn groups_used_by(own: &dyn Service, others: &[Neighbour]) -> GroupsInUse {
    if others.is_empty() {
        return GroupsInUse::default();
    }
    let kafka_cluster_id = own.server_info().ok().and_then(|i| i.kafka_cluster_id);
    let looks = super::parallel::map(others, others.len(), |n| {
        look_at(kafka_cluster_id.as_deref(), n)
    });
    let mut used = GroupsInUse::default();
    for (n, look) in others.iter().zip(looks) {
        match look {
            Look::Unchecked(why) => used.unchecked.push((n.cluster.clone(), why)),
            Look::OtherKafka => {}
            Look::Connectors(listing) => {
                for (name, l) in &listing {
                    used.groups
                        .entry(consumer_group(name, &l.config))
                        .or_insert_with(|| (n.cluster.clone(), name.clone()));
                    if l.connector_type != Some(ConnectorType::Sink) {
                        used.sources.push(SourceElsewhere {
                            cluster: n.cluster.clone(),
                            name: name.clone(),
                            own_topic: l.config.get(OWN_OFFSETS_TOPIC).cloned(),
                            workers_topic: n.offsets_topic.clone(),
                        });
                    }
                }
            }
        }
    }
    used
}

/// A source connector's own offsets topic, in its config (KIP-618): its worker keeps its
/// offsets there, and in the workers' offsets topic too.
const OWN_OFFSETS_TOPIC: &str = "offsets.storage.topic";

/// A source connector (or one of a type its worker does not know) of another Connect
/// cluster on the same Kafka cluster.
#[derive(Debug, Clone)]
pub struct SourceElsewhere {
    pub cluster: String,
    pub name: String,
    /// Its own offsets topic (`offsets.storage.topic` in its config), if it has one.
    own_topic: Option<String>,
    /// Its workers' offsets topic, when kco.yaml names it.
    workers_topic: Option<String>,
}

impl SourceElsewhere {
    /// Whether its worker may keep its offsets in `topic`: its own topic, its workers' topic,
    /// or a workers' topic kco.yaml does not name.
    fn may_write(&self, topic: &str) -> bool {
        self.own_topic.as_deref() == Some(topic)
            || self.workers_topic.as_deref().is_none_or(|t| t == topic)
    }
}

/// What [`groups_used_by`] found.
#[derive(Debug, Default)]
pub struct GroupsInUse {
    /// Each group, with a cluster and connector that use it.
    pub groups: BTreeMap<String, (String, String)>,
    /// Clusters that could not be looked at, and why.
    pub unchecked: Vec<(String, String)>,
    /// The source connectors of the clusters looked at.
    pub sources: Vec<SourceElsewhere>,
}

impl GroupsInUse {
    /// The names whose offsets in `topic` a live source of another Connect cluster may have
    /// written (a topic shared by Connect clusters, or a connector's own topic set to it):
    /// each name with the cluster of one such source.
    pub fn sources_in(&self, topic: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for s in self.sources.iter().filter(|s| s.may_write(topic)) {
            out.entry(s.name.clone())
                .or_insert_with(|| s.cluster.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fake::{ConnectorSpec, FakeConnect, State};
    use crate::kafka::groups::GROUP_OVERRIDE;

    const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

    fn offsets(n: i64) -> serde_json::Value {
        json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": n}}])
    }

    fn neighbour(cluster: &str, fake: &FakeConnect) -> Neighbour {
        Neighbour {
            cluster: cluster.into(),
            client: Box::new(fake.client()),
            offsets_topic: None,
        }
    }

    /// The groups that connectors of other clusters on the same Kafka use, each with one
    /// user; a cluster on another Kafka is not looked at further, one that is down is named.
    #[test]
    fn the_groups_other_clusters_of_the_kafka_cluster_use_are_found() {
        let a = FakeConnect::builder().kafka_cluster_id("k1").in_process();
        let b = FakeConnect::builder()
            .kafka_cluster_id("k1")
            .sink("orders", SINK, State::Stopped, offsets(10))
            .connector(
                ConnectorSpec::sink("renamed", SINK)
                    .config(GROUP_OVERRIDE, "legacy-group")
                    .offsets(offsets(1)),
            )
            .in_process();
        let elsewhere = FakeConnect::builder()
            .kafka_cluster_id("k2")
            .sink("payments", SINK, State::Running, offsets(10))
            .in_process();
        let down = FakeConnect::builder().kafka_cluster_id("k1").in_process();
        down.down();
        let used = groups_used_by(
            &a.client(),
            &[
                neighbour("b", &b),
                neighbour("x", &elsewhere),
                neighbour("d", &down),
            ],
        );
        assert_eq!(
            used.groups.into_iter().collect::<Vec<_>>(),
            [
                (
                    "connect-orders".to_string(),
                    ("b".to_string(), "orders".to_string())
                ),
                (
                    "legacy-group".to_string(),
                    ("b".to_string(), "renamed".to_string())
                ),
            ]
        );
        assert_eq!(
            used.unchecked
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>(),
            ["d"]
        );
        assert!(groups_used_by(&a.client(), &[]).groups.is_empty());
    }
}
