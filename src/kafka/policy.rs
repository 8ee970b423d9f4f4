//! MirrorMaker 2's view of a mirror: the source cluster's alias, its replication policy, and
//! the names it gives topics and its checkpoints topic on the target cluster
//! (`ReplicationPolicy`, `DefaultReplicationPolicy`, `IdentityReplicationPolicy` in Apache
//! Kafka's `connect/mirror-client`).

/// How MM2 names a source topic on the target cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicationPolicy {
    /// `<alias><separator><topic>` (`east.orders`); a topic that came from the target itself
    /// (`<target alias>.orders`) gets its original name back.
    Default { separator: String },
    /// The same name on both clusters.
    Identity,
}

/// One mirror relation of a target cluster: its Kafka mirrors the Kafka of kco cluster
/// `source_cluster` under MM2 alias `alias` (`mirrors:` in kco.yaml).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorRelation {
    /// The kco cluster whose files are translated (the key under `mirrors:`).
    pub source_cluster: String,
    /// MM2's `source.cluster.alias`.
    pub alias: String,
    /// MM2's `target.cluster.alias`, for topics that came from the target (failback).
    pub target_alias: Option<String>,
    pub policy: ReplicationPolicy,
    /// Where MM2's checkpoint connector writes on the target (default
    /// `<alias>.checkpoints.internal`).
    pub checkpoints_topic: String,
}

impl MirrorRelation {
    /// The default checkpoints topic of an alias (`ReplicationPolicy.checkpointsTopic`).
    pub fn default_checkpoints_topic(alias: &str) -> String {
        format!("{alias}.checkpoints.internal")
    }

    /// The name the target cluster gives source topic `topic`, as MM2's checkpoint task
    /// renames it (`MirrorCheckpointTask.renameTopicPartition`).
    pub fn target_topic(&self, topic: &str) -> String {
        match &self.policy {
            ReplicationPolicy::Identity => topic.to_string(),
            ReplicationPolicy::Default { separator } => {
                if let Some(target) = &self.target_alias {
                    let prefix = format!("{target}{separator}");
                    if let Some(original) = topic.strip_prefix(&prefix) {
                        if !original.is_empty() {
                            return original.to_string();
                        }
                    }
                }
                format!("{}{separator}{topic}", self.alias)
            }
        }
    }

    /// Whether `topic` on the source came from the target itself (`<target alias><sep>T`
    /// under the default policy): MirrorMaker 2 never mirrors it home, so this relation has
    /// no checkpoint for it; its position on the target is found through the mirror the
    /// other way (failback).
    pub fn came_back(&self, topic: &str) -> bool {
        match (&self.policy, &self.target_alias) {
            (ReplicationPolicy::Default { separator }, Some(target)) => topic
                .strip_prefix(&format!("{target}{separator}"))
                .is_some_and(|t| !t.is_empty()),
            _ => false,
        }
    }

    /// Where the mirror the other way (from this relation's target to its source alias)
    /// writes its offset syncs, on this relation's target (MM2's default
    /// `offset-syncs.topic.location=source`): `mm2-offset-syncs.<alias>.internal`.
    pub fn back_syncs_topic(&self) -> String {
        format!("mm2-offset-syncs.{}.internal", self.alias)
    }

    pub fn policy_name(&self) -> &'static str {
        match self.policy {
            ReplicationPolicy::Default { .. } => "default",
            ReplicationPolicy::Identity => "identity",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation(policy: ReplicationPolicy, target: Option<&str>) -> MirrorRelation {
        MirrorRelation {
            source_cluster: "east".into(),
            alias: "east".into(),
            target_alias: target.map(str::to_string),
            policy,
            checkpoints_topic: MirrorRelation::default_checkpoints_topic("east"),
        }
    }

    #[test]
    fn the_default_policy_prefixes_the_alias_and_undoes_the_targets_own_prefix() {
        let dot = ReplicationPolicy::Default {
            separator: ".".into(),
        };
        let r = relation(dot.clone(), Some("west"));
        assert_eq!(r.target_topic("orders"), "east.orders");
        // Failback: a topic that came from west itself gets its own name back.
        assert_eq!(r.target_topic("west.orders"), "orders");
        assert_eq!(r.target_topic("westorders"), "east.westorders");
        assert!(r.came_back("west.orders") && !r.came_back("orders") && !r.came_back("west."));
        let r = relation(dot, None);
        assert_eq!(r.target_topic("west.orders"), "east.west.orders");
        let r = relation(
            ReplicationPolicy::Default {
                separator: "_".into(),
            },
            None,
        );
        assert_eq!(r.target_topic("orders"), "east_orders");
        assert_eq!(r.checkpoints_topic, "east.checkpoints.internal");
    }

    #[test]
    fn the_identity_policy_keeps_names() {
        let r = relation(ReplicationPolicy::Identity, Some("west"));
        assert_eq!(r.target_topic("orders"), "orders");
        assert_eq!(r.target_topic("west.orders"), "west.orders");
    }
}
