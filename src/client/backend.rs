//! Which service answers a cluster's requests, and what it can do.
//!
//! kco talks to two kinds of service through the same [`Transport`](super::Transport):
//! a Kafka Connect worker's REST API (KIP-875), and Confluent Cloud's managed connectors
//! (`/connect/v1/environments/{env}/clusters/{lkc}`, whose connector endpoints mirror
//! Connect's). A third has no REST API at all: a Connect cluster read from its internal
//! topics on Kafka (AWS MSK Connect; `kafka::connect_topics`). Each is its own implementation
//! of [`Service`](super::Service) ([`Connect`](super::Connect),
//! [`ConfluentCloud`](super::ConfluentCloud), `ConnectTopics`); a `Backend` says which one a
//! cluster of kco.yaml is, and where it lives (how kco reaches it, and what its refusals mean there: `crate::services`). The engine
//! never asks which service it is, only what it can do ([`Capabilities`]), so that the
//! operation, the plan and the renderers have no branch per service.

/// The service behind a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Backend {
    /// A Kafka Connect worker (Apache Kafka 3.6 or later).
    #[default]
    Connect,
    /// Confluent Cloud's fully managed connectors of one Kafka cluster.
    ConfluentCloud(CloudIds),
    /// A Kafka Connect cluster without a REST API (AWS MSK Connect), read from its workers'
    /// internal topics on its Kafka: kco.yaml gives it no `urls`, but `kafka:` and
    /// `connectTopics: {offsets, configs, status}`. kco only reads it.
    ConnectTopics,
    /// Amazon MSK Connect: its connectors through its control plane (SigV4), their offsets
    /// through the Kafka they use (`kafka:` and the pinned `connectTopics.offsets`).
    MskConnect(MskSite),
}

/// Where an MSK Connect cluster's connectors live, and whose credentials reach them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MskSite {
    /// `region:` of `mskConnect:`, else the environment's or the profile's.
    pub region: Option<String>,
    /// `profile:`: this profile of the shared files alone, else AWS's default chain.
    pub profile: Option<String>,
    /// `endpoint:`: another URL than the region's (a VPC endpoint, a stand-in).
    pub endpoint: Option<String>,
}

/// Where a Confluent Cloud cluster's connectors live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudIds {
    /// `env-...`
    pub environment: String,
    /// `lkc-...`
    pub kafka_cluster: String,
}

/// What a service can do, as the engine needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Offsets are observed periodically, not read live: each read says when
    /// ([`OffsetsRead::observed_at`](super::OffsetsRead)).
    pub observed_offsets: bool,
    /// `GET /` answers with the worker's version (the version check and the Kafka cluster id).
    pub version_endpoint: bool,
    /// `GET /connector-plugins/{class}/config` answers, which says which config keys are
    /// secrets (PASSWORD): `snapshot --with-config` can replace them by placeholders.
    pub config_definitions: bool,
    /// Offsets are read from Kafka itself (the workers' offsets topic, the sinks' consumer
    /// groups), not through the REST API: a worker without the offsets endpoints (before
    /// 3.5) is read all the same (`kafka::through`).
    pub offsets_through_kafka: bool,
    /// The service only reads: kco cannot stop, resume, create or delete its connectors, nor
    /// alter their offsets, through it (a Connect cluster read from its internal topics).
    /// `Some`: what to use instead; a change is refused before anything is planned or sent.
    pub read_only: Option<&'static str>,
}

impl Capabilities {
    /// kco can stop, create and delete the connectors through the service (every service but
    /// a cluster read from its internal topics, whose own console, CLI or API does that).
    pub fn changes_connectors(&self) -> bool {
        self.read_only.is_none()
    }
}

/// What to use instead of kco to change the connectors of a cluster read from its internal
/// topics.
pub const CONNECT_TOPICS_INSTEAD: &str = "change its connectors with the service's own console, CLI or API (AWS MSK Connect: its console or `aws kafkaconnect`); kco reads this cluster from its workers' internal topics because kco.yaml gives it no `urls` (docs/through-kafka.md)";

impl Backend {
    /// What a Connect cluster read from its internal topics can do (`kafka::connect_topics`):
    /// read, with no `GET /` (no version: the probe asks nothing) and no plugin config
    /// definitions; nothing else through it.
    pub const CONNECT_TOPICS: Capabilities = Capabilities {
        observed_offsets: false,
        version_endpoint: false,
        config_definitions: false,
        offsets_through_kafka: false,
        read_only: Some(CONNECT_TOPICS_INSTEAD),
    };

    /// What this service can do (each implementation's own).
    pub fn capabilities(&self) -> Capabilities {
        match self {
            Backend::Connect => super::Connect::CAPABILITIES,
            Backend::ConfluentCloud(_) => super::ConfluentCloud::CAPABILITIES,
            Backend::ConnectTopics => Self::CONNECT_TOPICS,
            Backend::MskConnect(_) => Self::MSK_CONNECT,
        }
    }

    /// What MSK Connect can do: no `GET /`, no plugin config definitions; kco deletes a
    /// connector and creates it again around a write of its offsets through Kafka.
    pub const MSK_CONNECT: Capabilities = Capabilities {
        observed_offsets: false,
        version_endpoint: false,
        config_definitions: false,
        offsets_through_kafka: true,
        read_only: None,
    };

    /// The service's name, for messages: `Kafka Connect`, `Confluent Cloud`, `Kafka Connect
    /// internal topics`.
    pub fn service(&self) -> &'static str {
        match self {
            Backend::Connect => "Kafka Connect",
            Backend::ConfluentCloud(_) => "Confluent Cloud",
            Backend::ConnectTopics => "Kafka Connect internal topics",
            Backend::MskConnect(_) => "Amazon MSK Connect",
        }
    }

    /// Whether the service is reached through Kafka alone, with no HTTP endpoint (a Connect
    /// cluster read from its internal topics): its client is made from `kafka:` and the
    /// topics, not from `urls`.
    pub fn over_kafka(&self) -> bool {
        matches!(self, Backend::ConnectTopics)
    }

    /// Whether a URL names the cluster (a Kafka Connect worker belongs to one Connect
    /// cluster), rather than only where the service's API answers (Confluent Cloud: the
    /// environment and cluster ids name the connectors, whatever endpoint serves them).
    pub fn addressed_by_url(&self) -> bool {
        matches!(self, Backend::Connect)
    }

    /// The path under the service's URL at which `/connectors` is found: empty for Connect,
    /// `/connect/v1/environments/{env}/clusters/{lkc}` for Confluent Cloud.
    pub fn base_path(&self) -> String {
        match self {
            Backend::Connect | Backend::ConnectTopics | Backend::MskConnect(_) => String::new(),
            Backend::ConfluentCloud(ids) => format!(
                "/connect/v1/environments/{}/clusters/{}",
                ids.environment, ids.kafka_cluster
            ),
        }
    }

    /// The id of the Kafka cluster whose connectors the service holds, when its address names
    /// it (Confluent Cloud's `lkc-...`, which is also the id Kafka itself reports); `None` for
    /// Connect, which says it in `GET /`, and for a cluster read from its topics, whose Kafka
    /// says it.
    pub fn kafka_cluster_id(&self) -> Option<&str> {
        match self {
            Backend::Connect | Backend::ConnectTopics | Backend::MskConnect(_) => None,
            Backend::ConfluentCloud(ids) => Some(&ids.kafka_cluster),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confluent_cloud_connectors_live_under_environment_and_cluster() {
        let b = Backend::ConfluentCloud(CloudIds {
            environment: "env-abc123".into(),
            kafka_cluster: "lkc-xyz789".into(),
        });
        assert_eq!(
            b.base_path(),
            "/connect/v1/environments/env-abc123/clusters/lkc-xyz789"
        );
        assert!(!b.capabilities().version_endpoint);
        assert_eq!(Backend::Connect.base_path(), "");
    }
}
