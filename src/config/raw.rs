//! `kco.yaml` as written: the serde shapes, unknown keys rejected.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) snapshots_dir: Option<String>,
    #[serde(default)]
    pub(super) default_cluster: Option<String>,
    #[serde(default)]
    #[serde(deserialize_with = "crate::model::strict::unique_map")]
    pub(super) clusters: BTreeMap<String, RawCluster>,
    /// Offset shapes added to (or replacing) the built-in table, in its format.
    #[serde(default)]
    pub(super) shapes: Vec<crate::shapes::Shape>,
    /// A shapes table file (`apiVersion: kco/v1`, `kind: OffsetShapes`), relative to kco.yaml.
    #[serde(default)]
    pub(super) shapes_file: Option<String>,
    /// Where the cluster locks are kept: `local`, or `remote: NAME` (a git remote).
    #[serde(default)]
    pub(super) lock: Option<RawLock>,
}

/// `lock: local` or `lock: {remote: NAME}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RawLock {
    Local,
    Remote(String),
}

const EXPECTED: &str = "lock: expected `local` or `remote: NAME` (a git remote)";

impl RawLock {
    /// The message is this value's refusal.
    pub(super) fn refused(message: &str) -> bool {
        message.contains(EXPECTED)
    }
}

impl<'de> Deserialize<'de> for RawLock {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Word(String),
            Map(RemoteOnly),
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RemoteOnly {
            remote: String,
        }
        match Either::deserialize(d).map_err(|_| serde::de::Error::custom(EXPECTED))? {
            Either::Word(w) if w == "local" => Ok(RawLock::Local),
            Either::Map(m) if !m.remote.trim().is_empty() => Ok(RawLock::Remote(m.remote)),
            _ => Err(serde::de::Error::custom(EXPECTED)),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawCluster {
    #[serde(default)]
    pub(super) url: Option<String>,
    #[serde(default)]
    pub(super) urls: Vec<String>,
    #[serde(default)]
    pub(super) auth: Option<RawAuth>,
    #[serde(default)]
    pub(super) tls: Option<RawTls>,
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) timeout_seconds: Option<u64>,
    /// The cluster's Kafka, for MirrorMaker 2's checkpoints (`config/kafka.rs`).
    #[serde(default)]
    pub(super) kafka: Option<RawKafka>,
    #[serde(default)]
    #[serde(deserialize_with = "crate::model::strict::unique_map")]
    pub(super) mirrors: BTreeMap<String, RawMirror>,
    /// The Connect cluster's internal topics on its Kafka (`config/kafka.rs`).
    #[serde(default)]
    pub(super) connect_topics: Option<RawConnectTopics>,
    /// A Confluent Cloud cluster's managed connectors, in place of `urls` (`config/cloud.rs`).
    #[serde(default)]
    pub(super) confluent_cloud: Option<RawCloud>,
    /// An Amazon MSK Connect cluster's connectors, in place of `urls` (`config/msk.rs`).
    #[serde(default)]
    pub(super) msk_connect: Option<RawMsk>,
}

/// A cluster's `mskConnect:`: the region, the credentials' profile, another endpoint.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawMsk {
    #[serde(default)]
    pub(super) region: Option<String>,
    #[serde(default)]
    pub(super) profile: Option<String>,
    #[serde(default)]
    pub(super) endpoint: Option<String>,
}

/// A cluster's `confluentCloud:`: which environment and Kafka cluster, and the Cloud API key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawCloud {
    pub(super) environment: String,
    pub(super) kafka_cluster: String,
    pub(super) api_key: String,
    pub(super) api_secret: String,
    #[serde(default)]
    pub(super) endpoint: Option<String>,
    /// The bound on an observation's age for the reading commands (`--max-observed-age`).
    #[serde(default)]
    pub(super) max_observed_age_seconds: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawAuth {
    #[serde(default)]
    pub(super) basic: Option<RawBasic>,
    #[serde(default)]
    pub(super) bearer: Option<RawBearer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBasic {
    pub(super) username: String,
    pub(super) password: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBearer {
    pub(super) token: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawTls {
    #[serde(default)]
    pub(super) ca_file: Option<String>,
    #[serde(default)]
    pub(super) cert_file: Option<String>,
    #[serde(default)]
    pub(super) key_file: Option<String>,
    #[serde(default)]
    pub(super) insecure_skip_verify: bool,
}

/// A cluster's `connectTopics:`: the workers' `offset.storage.topic`, and their
/// `config.storage.topic` and `status.storage.topic` (a cluster without a REST API is read
/// from all three: `config/connect_topics.rs`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConnectTopics {
    pub(super) offsets: String,
    #[serde(default)]
    pub(super) configs: Option<String>,
    #[serde(default)]
    pub(super) status: Option<String>,
    /// kco deletes each connector a write through Kafka changes and creates it again after
    /// (a worker without the stop endpoint: before Connect 3.5).
    #[serde(default)]
    pub(super) recreate: bool,
}

/// A cluster's `kafka:`: how kco reads its Kafka (config/kafka.rs resolves it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawKafka {
    pub(super) bootstrap: String,
    #[serde(default)]
    pub(super) sasl: Option<RawSasl>,
    #[serde(default)]
    pub(super) tls: Option<RawTls>,
    #[serde(default)]
    pub(super) timeout_seconds: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawSasl {
    pub(super) mechanism: String,
    /// PLAIN and SCRAM.
    #[serde(default)]
    pub(super) username: Option<String>,
    #[serde(default)]
    pub(super) password: Option<String>,
    /// AWS_MSK_IAM: the cluster's region (else the environment's, else the profile's) and
    /// the profile of the shared AWS files to take credentials from (else the default chain).
    #[serde(default)]
    pub(super) region: Option<String>,
    #[serde(default)]
    pub(super) profile: Option<String>,
    /// OAUTHBEARER: the OAuth 2 / OIDC token endpoint, the client, the optional scope.
    #[serde(default)]
    pub(super) token_endpoint: Option<String>,
    #[serde(default)]
    pub(super) client_id: Option<String>,
    #[serde(default)]
    pub(super) client_secret: Option<String>,
    #[serde(default)]
    pub(super) scope: Option<String>,
}

/// One entry of a cluster's `mirrors:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawMirror {
    pub(super) alias: String,
    #[serde(default)]
    pub(super) policy: Option<String>,
    #[serde(default)]
    pub(super) separator: Option<String>,
    #[serde(default)]
    pub(super) target_alias: Option<String>,
    #[serde(default)]
    pub(super) checkpoints_topic: Option<String>,
    /// The readiness alarm's thresholds for this mirror (`diff` against the DR cluster).
    #[serde(default)]
    pub(super) max_checkpoint_age_seconds: Option<u64>,
    #[serde(default)]
    pub(super) max_behind: Option<u64>,
    #[serde(default)]
    pub(super) max_mirror_silence_seconds: Option<u64>,
}
