//! The MSK Connect API's data (version 2021-09-14), as botocore's `kafkaconnect` model names it
//! (`botocore/data/kafkaconnect/2021-09-14/service-2.json`). Every structure keeps the members
//! it does not name in `other`, so a connector described and created again loses nothing the
//! service sent, even members added to the API after this was written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Members this code does not name, kept as they came.
pub type Other = Map<String, Value>;

/// `ConnectorState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConnectorState {
    Running,
    Creating,
    Updating,
    Deleting,
    Failed,
    /// A state the model did not have when this was written.
    #[serde(other)]
    Unknown,
}

impl ConnectorState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorState::Running => "RUNNING",
            ConnectorState::Creating => "CREATING",
            ConnectorState::Updating => "UPDATING",
            ConnectorState::Deleting => "DELETING",
            ConnectorState::Failed => "FAILED",
            ConnectorState::Unknown => "UNKNOWN",
        }
    }
}

impl std::fmt::Display for ConnectorState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `Capacity` / `CapacityDescription`: exactly one of the two is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capacity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_scaling: Option<AutoScaling>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_capacity: Option<ProvisionedCapacity>,
    #[serde(flatten)]
    pub other: Other,
}

/// `AutoScaling` / `AutoScalingDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoScaling {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_worker_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcu_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_worker_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_in_policy: Option<ScalePolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_out_policy: Option<ScalePolicy>,
    #[serde(flatten)]
    pub other: Other,
}

/// `ScaleInPolicy` / `ScaleOutPolicy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalePolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_utilization_percentage: Option<u32>,
    #[serde(flatten)]
    pub other: Other,
}

/// `ProvisionedCapacity` / `ProvisionedCapacityDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionedCapacity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcu_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_count: Option<u32>,
    #[serde(flatten)]
    pub other: Other,
}

/// `KafkaCluster` / `KafkaClusterDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KafkaCluster {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apache_kafka_cluster: Option<ApacheKafkaCluster>,
    #[serde(flatten)]
    pub other: Other,
}

/// `ApacheKafkaCluster` / `ApacheKafkaClusterDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApacheKafkaCluster {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_servers: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vpc: Option<Vpc>,
    #[serde(flatten)]
    pub other: Other,
}

/// `Vpc` / `VpcDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vpc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_groups: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnets: Option<Vec<String>>,
    #[serde(flatten)]
    pub other: Other,
}

/// `KafkaClusterClientAuthentication`: `NONE` or `IAM`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientAuthentication {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication_type: Option<String>,
    #[serde(flatten)]
    pub other: Other,
}

/// `KafkaClusterEncryptionInTransit`: `PLAINTEXT` or `TLS`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionInTransit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption_type: Option<String>,
    #[serde(flatten)]
    pub other: Other,
}

/// `Plugin` / `PluginDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plugin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_plugin: Option<CustomPlugin>,
    #[serde(flatten)]
    pub other: Other,
}

/// `CustomPlugin` / `CustomPluginDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomPlugin {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_plugin_arn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    #[serde(flatten)]
    pub other: Other,
}

/// `WorkerConfiguration` / `WorkerConfigurationDescription`: which revision of which worker
/// configuration a connector runs with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerConfigurationRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_configuration_arn: Option<String>,
    #[serde(flatten)]
    pub other: Other,
}

/// `LogDelivery` / `LogDeliveryDescription`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDelivery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_log_delivery: Option<WorkerLogDelivery>,
    #[serde(flatten)]
    pub other: Other,
}

/// `WorkerLogDelivery`: CloudWatch Logs, Kinesis Data Firehose, S3.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerLogDelivery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_watch_logs: Option<LogDestination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firehose: Option<LogDestination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3: Option<LogDestination>,
    #[serde(flatten)]
    pub other: Other,
}

/// One log destination: `enabled`, and where (`logGroup`; `deliveryStream`; `bucket`,
/// `prefix`), kept in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDestination {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(flatten)]
    pub other: Other,
}

/// `StateDescription`: why a connector is in its state (a FAILED one's reason).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateDescription {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl std::fmt::Display for StateDescription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.code, &self.message) {
            (Some(c), Some(m)) => write!(f, "{c}: {m}"),
            (Some(s), None) | (None, Some(s)) => f.write_str(s),
            (None, None) => f.write_str("no state description"),
        }
    }
}

/// `CreateConnectorRequest`: everything a connector is made of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateConnector {
    pub connector_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_description: Option<String>,
    pub capacity: Capacity,
    pub connector_configuration: BTreeMap<String, String>,
    pub kafka_cluster: KafkaCluster,
    pub kafka_cluster_client_authentication: ClientAuthentication,
    pub kafka_cluster_encryption_in_transit: EncryptionInTransit,
    pub kafka_connect_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_delivery: Option<LogDelivery>,
    /// `IPV4` (the default) or `DUAL` (botocore's model since 2025).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_type: Option<String>,
    pub plugins: Vec<Plugin>,
    pub service_execution_role_arn: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_configuration: Option<WorkerConfigurationRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    #[serde(flatten)]
    pub other: Other,
}

/// `CreateConnectorResponse`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedConnector {
    pub connector_arn: String,
    #[serde(default)]
    pub connector_name: Option<String>,
    #[serde(default)]
    pub connector_state: Option<ConnectorState>,
}

/// `DescribeConnectorResponse` (and `ConnectorSummary`, its subset without
/// `connectorConfiguration` and `stateDescription`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorDescription {
    pub connector_arn: String,
    pub connector_name: String,
    pub connector_state: ConnectorState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_description: Option<StateDescription>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_description: Option<String>,
    #[serde(default)]
    pub capacity: Capacity,
    /// Absent from a `ConnectorSummary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_configuration: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub kafka_cluster: KafkaCluster,
    #[serde(default)]
    pub kafka_cluster_client_authentication: ClientAuthentication,
    #[serde(default)]
    pub kafka_cluster_encryption_in_transit: EncryptionInTransit,
    #[serde(default)]
    pub kafka_connect_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_delivery: Option<LogDelivery>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_type: Option<String>,
    #[serde(default)]
    pub plugins: Vec<Plugin>,
    #[serde(default)]
    pub service_execution_role_arn: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_configuration: Option<WorkerConfigurationRef>,
    #[serde(flatten)]
    pub other: Other,
}

impl ConnectorDescription {
    /// The `CreateConnector` request that makes this connector again, with every member the
    /// service described (unknown ones too) except those that only describe a connector
    /// (its ARN, state, version and creation time). `None` for a summary, which has no
    /// `connectorConfiguration`: describe the connector first.
    pub fn to_create(&self) -> Option<CreateConnector> {
        Some(CreateConnector {
            connector_name: self.connector_name.clone(),
            connector_description: self.connector_description.clone(),
            capacity: self.capacity.clone(),
            connector_configuration: self.connector_configuration.clone()?,
            kafka_cluster: self.kafka_cluster.clone(),
            kafka_cluster_client_authentication: self.kafka_cluster_client_authentication.clone(),
            kafka_cluster_encryption_in_transit: self.kafka_cluster_encryption_in_transit.clone(),
            kafka_connect_version: self.kafka_connect_version.clone(),
            log_delivery: self.log_delivery.clone(),
            network_type: self.network_type.clone(),
            plugins: self.plugins.clone(),
            service_execution_role_arn: self.service_execution_role_arn.clone(),
            worker_configuration: self.worker_configuration.clone(),
            tags: None,
            other: self.other.clone(),
        })
    }

    /// The worker configuration's ARN, when the connector has one (without one, MSK's
    /// default worker configuration keeps offsets in a topic of the connector's own).
    pub fn worker_configuration_arn(&self) -> Option<&str> {
        self.worker_configuration
            .as_ref()?
            .worker_configuration_arn
            .as_deref()
    }
}

/// `ListConnectorsResponse`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListConnectorsPage {
    #[serde(default)]
    pub connectors: Vec<ConnectorDescription>,
    #[serde(default)]
    pub next_token: Option<String>,
}

/// `DeleteConnectorResponse`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeletedConnector {
    #[serde(default)]
    pub connector_state: Option<ConnectorState>,
}

/// `DescribeWorkerConfigurationResponse` (and `CreateWorkerConfigurationResponse`, whose
/// revision has no properties).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerConfiguration {
    pub worker_configuration_arn: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_configuration_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<WorkerConfigurationRevision>,
    #[serde(flatten)]
    pub other: Other,
}

/// `WorkerConfigurationRevisionDescription`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerConfigurationRevision {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<String>,
    /// Base64 of the `connect-distributed.properties` text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties_file_content: Option<String>,
    #[serde(flatten)]
    pub other: Other,
}

impl WorkerConfiguration {
    /// The latest revision's properties, decoded from base64 and read as a Java properties
    /// file; empty when the answer carries none. An error says what is wrong with it.
    pub fn properties(&self) -> Result<BTreeMap<String, String>, String> {
        let Some(content) = self
            .latest_revision
            .as_ref()
            .and_then(|r| r.properties_file_content.as_deref())
        else {
            return Ok(BTreeMap::new());
        };
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(content.trim())
            .map_err(|e| format!("propertiesFileContent is not base64: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| "propertiesFileContent is not UTF-8 text".to_string())?;
        Ok(parse_properties(&text))
    }

    /// The `offset.storage.topic` the worker configuration pins, if any: where a source
    /// connector created with it keeps its offsets.
    pub fn offset_storage_topic(&self) -> Result<Option<String>, String> {
        Ok(self.properties()?.remove("offset.storage.topic"))
    }
}

/// A Java properties text, as MSK Connect's workers read their worker configuration: one
/// `key=value` (or `key: value`, or `key value`) a line, `#` and `!` comments, a trailing
/// backslash continuing the line.
pub fn parse_properties(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    for raw in text.lines() {
        let line = raw.trim_start();
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        if let Some(cont) = line.strip_suffix('\\') {
            logical.push_str(cont);
            continue;
        }
        logical.push_str(line);
        let entry = std::mem::take(&mut logical);
        let split = entry
            .find(['=', ':'])
            .or_else(|| entry.find(char::is_whitespace));
        let (key, value) = match split {
            Some(i) => (&entry[..i], &entry[i + 1..]),
            None => (entry.as_str(), ""),
        };
        out.insert(key.trim().to_string(), value.trim().to_string());
    }
    out
}

/// The base64 `propertiesFileContent` of a properties map, one `key=value` a line.
pub fn properties_file_content(properties: &BTreeMap<String, String>) -> String {
    use base64::Engine;
    let text: String = properties
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    base64::engine::general_purpose::STANDARD.encode(text)
}
