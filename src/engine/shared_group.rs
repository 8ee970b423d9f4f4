//! A sink connector's offsets are its consumer group's: Connect names the group
//! `connect-<connector name>` (`SinkUtils.consumerGroupId`), unless the connector's config sets
//! `consumer.override.group.id` (a client override, which the worker's
//! `connector.client.config.override.policy` allows by default since Kafka 3.0), or the
//! worker's own config sets `consumer.group.id` for every sink (which the REST API does not
//! show). Two Connect clusters on one Kafka cluster with a sink of the same name therefore
//! share one group: changing the offsets of one changes the other's. This module finds such
//! sinks among the other clusters kco.yaml configures, and [`refuse_shared`] stands in front
//! of every change of one.

use std::collections::BTreeMap;

use crate::client::Service;
use crate::engine::apply::plan::{Action, ConnectorPlan};
use crate::engine::apply::ApplyPlan;
use crate::engine::membership::identity;
use crate::engine::neighbours::{look_at, Look};
use crate::error::{Error, Result};
use crate::model::ConnectorType;

use crate::engine::neighbours::Neighbour;
pub use crate::kafka::groups::{consumer_group, GROUP_OVERRIDE};

/// A sink about to change whose group a sink of another cluster uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// The sink on the cluster being changed.
    pub connector: String,
    pub group: String,
    pub other_cluster: String,
    pub other_connector: String,
}

/// What the look found.
#[derive(Debug, Default)]
pub struct SharedGroups {
    pub shared: Vec<Shared>,
    /// Clusters that could not be looked at, and why (not a failure: a warning).
    pub unchecked: Vec<(String, String)>,
}

/// Looks at `others` when `plan` changes a sink of cluster `cluster`: refuses a shared group
/// that `allow` does not name (`Error::SharedGroup`, nothing changed), and warns in the plan
/// of the sink for one it names. A neighbour that cannot be looked at is a warning of the
/// plan as a whole.
pub fn refuse_shared(
    plan: &mut ApplyPlan,
    own: &dyn Service,
    others: &[Neighbour],
    allow: &[String],
) -> Result<()> {
    let found = find(plan, own, others);
    for (cluster, why) in &found.unchecked {
        plan.warnings.push(format!(
            "cannot look for sinks sharing a consumer group on cluster `{cluster}`: {why}"
        ));
    }
    let (allowed, refused): (Vec<_>, Vec<_>) = found
        .shared
        .into_iter()
        .partition(|s| allow.contains(&s.connector));
    if !refused.is_empty() {
        let mut names: Vec<&str> = refused.iter().map(|s| s.connector.as_str()).collect();
        names.dedup();
        return Err(Error::SharedGroup {
            cluster: plan.cluster.clone(),
            shared: refused
                .iter()
                .map(|s| {
                    format!(
                        "`{}` on cluster `{}` and `{}` on cluster `{}`: consumer group `{}`",
                        s.connector, plan.cluster, s.other_connector, s.other_cluster, s.group
                    )
                })
                .collect(),
            allow: names
                .iter()
                .map(|n| format!("--allow-shared-group {n}"))
                .collect::<Vec<_>>()
                .join(" "),
            warnings: std::mem::take(&mut plan.warnings),
        });
    }
    for s in allowed {
        if let Some(c) = plan.connectors.iter_mut().find(|c| c.name == s.connector) {
            c.warnings.push(format!(
                "consumer group `{}` is also the group of sink `{}` on cluster `{}` (the same Kafka cluster): its offsets change too (--allow-shared-group)",
                s.group, s.other_connector, s.other_cluster
            ));
        }
    }
    Ok(())
}

/// The sinks `plan` changes (or creates) whose consumer group a sink of one of `others` uses, when that
/// cluster is on the same Kafka cluster (`kafka_cluster_id` of `GET /`) and is not the same
/// Connect cluster under another name (`membership::identity`: the same connectors on the
/// same workers). Nothing is read unless
/// the plan changes a sink: then one listing of `own`, and `GET /` and a listing of each
/// neighbour (at once).
pub fn find(plan: &ApplyPlan, own: &dyn Service, others: &[Neighbour]) -> SharedGroups {
    let changing: Vec<&ConnectorPlan> = plan
        .connectors
        .iter()
        .filter(|c| c.action.changes() && is_sink(c))
        .collect();
    if changing.is_empty() || others.is_empty() {
        return SharedGroups::default();
    }
    let own_listing = own.list_connectors().unwrap_or_default();
    let own_group = identity(&own_listing);
    let empty = BTreeMap::new();
    let groups: BTreeMap<String, &str> = changing
        .iter()
        .map(|c| {
            // A connector about to be created has the config of its file.
            let config = match (own_listing.get(&c.name), &c.config) {
                (Some(l), _) => &l.config,
                (None, Some(created)) => &created.0,
                (None, None) => &empty,
            };
            (consumer_group(&c.name, config), c.name.as_str())
        })
        .collect();
    let looks = super::parallel::map(others, others.len(), |n| look(plan, n));
    let mut found = SharedGroups::default();
    for (n, look) in others.iter().zip(looks) {
        match look {
            Look::Unchecked(why) => found.unchecked.push((n.cluster.clone(), why)),
            Look::OtherKafka => {}
            Look::Connectors(listing) => {
                if identity(&listing) == own_group {
                    continue; // the same Connect cluster under another name
                }
                for (other, l) in &listing {
                    if l.connector_type != Some(ConnectorType::Sink) {
                        continue;
                    }
                    let group = consumer_group(other, &l.config);
                    if let Some(mine) = groups.get(&group) {
                        found.shared.push(Shared {
                            connector: mine.to_string(),
                            group,
                            other_cluster: n.cluster.clone(),
                            other_connector: other.clone(),
                        });
                    }
                }
            }
        }
    }
    found
        .shared
        .sort_by(|a, b| (&a.connector, &a.other_cluster).cmp(&(&b.connector, &b.other_cluster)));
    found
}

/// A sink as Connect lists it, or one about to be created whose offsets are all sink
/// partitions (topic and partition).
fn is_sink(c: &ConnectorPlan) -> bool {
    match c.connector_type {
        Some(t) => t == ConnectorType::Sink,
        None => {
            matches!(c.action, Action::Create { .. })
                && !c.wanted.is_empty()
                && c.wanted
                    .iter()
                    .all(|e| crate::model::sink_partition(&e.partition).is_some())
        }
    }
}

fn look(plan: &ApplyPlan, n: &Neighbour) -> Look {
    look_at(plan.kafka_cluster_id.as_deref(), n)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::apply::plan::Want;
    use crate::engine::apply::tests::plan;
    use crate::engine::testkit;
    use crate::fake::{ConnectorSpec, FakeConnect, State};
    use crate::model::file::{Metadata, OffsetsFile};
    use crate::model::OffsetEntry;

    const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

    fn offsets(n: i64) -> serde_json::Value {
        json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": n}}])
    }

    /// A sink file of cluster a for connector `name` at offset `n`.
    fn want(name: &str, n: i64) -> Want {
        let entries: Vec<OffsetEntry> = serde_json::from_value(offsets(n)).unwrap();
        let file = OffsetsFile::new(Metadata::new(name, "a", ConnectorType::Sink), entries, None);
        Want::File {
            target: name.into(),
            file: Box::new(testkit::loaded(&format!("snapshots/a/{name}.yaml"), file)),
            config: None,
            secret_vars: vec![],
            change: None,
        }
    }

    #[test]
    fn the_group_is_connect_name_unless_the_config_overrides_it() {
        let mut config = BTreeMap::new();
        assert_eq!(consumer_group("orders", &config), "connect-orders");
        config.insert(GROUP_OVERRIDE.to_string(), "shared-orders".to_string());
        assert_eq!(consumer_group("orders", &config), "shared-orders");
    }

    fn neighbour(cluster: &str, fake: &FakeConnect) -> Neighbour {
        Neighbour {
            cluster: cluster.into(),
            client: Box::new(fake.client()),
            offsets_topic: None,
        }
    }

    #[test]
    fn a_changing_sink_whose_group_another_cluster_of_the_kafka_cluster_uses_is_found() {
        let a = FakeConnect::builder()
            .kafka_cluster_id("k1")
            .sink("orders", SINK, State::Running, offsets(10))
            .sink("other", SINK, State::Running, offsets(10))
            .in_process();
        let b = FakeConnect::builder()
            .kafka_cluster_id("k1")
            .sink("orders", SINK, State::Running, offsets(10))
            .connector(
                ConnectorSpec::sink("renamed", SINK)
                    .config(GROUP_OVERRIDE, "connect-other")
                    .offsets(offsets(1)),
            )
            .in_process();
        let elsewhere = FakeConnect::builder()
            .kafka_cluster_id("k2")
            .sink("orders", SINK, State::Running, offsets(10))
            .in_process();
        let down = FakeConnect::builder().kafka_cluster_id("k1").in_process();
        down.down();
        let client = a.client();
        let changing = plan(&a, &[want("orders", 5), want("other", 5)], false, false);
        let found = find(
            &changing,
            &client,
            &[
                neighbour("b", &b),
                neighbour("x", &elsewhere),
                neighbour("d", &down),
            ],
        );
        let pairs: Vec<(&str, &str, &str, &str)> = found
            .shared
            .iter()
            .map(|s| {
                (
                    s.connector.as_str(),
                    s.group.as_str(),
                    s.other_cluster.as_str(),
                    s.other_connector.as_str(),
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("orders", "connect-orders", "b", "orders"),
                ("other", "connect-other", "b", "renamed")
            ],
            "cluster x is on another Kafka cluster"
        );
        assert_eq!(found.unchecked.len(), 1, "{:?}", found.unchecked);
        assert_eq!(found.unchecked[0].0, "d");

        // A plan that changes no sink reads nothing of the others.
        let unchanged = plan(&a, &[want("orders", 10)], false, false);
        b.clear_requests();
        assert!(find(&unchanged, &client, &[neighbour("b", &b)])
            .shared
            .is_empty());
        assert!(b.requests().is_empty(), "{:?}", b.requests());
    }

    #[test]
    fn a_confluent_cloud_neighbour_is_known_by_its_kafka_cluster_without_get_root() {
        let a = FakeConnect::builder()
            .kafka_cluster_id("lkc-xyz789")
            .sink("orders", SINK, State::Running, offsets(10))
            .in_process();
        let cloud = |lkc: &str| {
            FakeConnect::builder()
                .confluent_cloud("env-abc123", lkc)
                .sink("orders", SINK, State::Running, offsets(10))
                .sink("managed-only", SINK, State::Running, offsets(1))
                .in_process()
        };
        let (same, other) = (cloud("lkc-xyz789"), cloud("lkc-other1"));
        let changing = plan(&a, &[want("orders", 5)], false, false);
        let found = find(
            &changing,
            &a.client(),
            &[neighbour("cc", &same), neighbour("cc2", &other)],
        );
        let pairs: Vec<(&str, &str)> = found
            .shared
            .iter()
            .map(|s| (s.other_cluster.as_str(), s.other_connector.as_str()))
            .collect();
        assert_eq!(pairs, [("cc", "orders")], "cc2 is another Kafka cluster");
        assert!(found.unchecked.is_empty(), "{:?}", found.unchecked);
        let paths =
            |f: &FakeConnect| -> Vec<String> { f.requests().into_iter().map(|r| r.path).collect() };
        assert_eq!(
            paths(&same),
            ["/connect/v1/environments/env-abc123/clusters/lkc-xyz789/connectors?expand=id,info,status"]
        );
        assert!(paths(&other).is_empty(), "{:?}", paths(&other));
    }
}
