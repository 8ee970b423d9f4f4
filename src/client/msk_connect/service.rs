//! MSK Connect as a [`Service`]: its connectors, their configurations and states through the
//! control plane; no stop, no pause, no offsets route. Its offsets are read and written
//! through the Kafka its connectors use (`kafka::through::ThroughKafka` wraps this service
//! with the pinned offsets topic), and a change deletes the connector, keeping its
//! definition (the `CreateConnector` request that makes it again), and creates it again
//! ([`steps::recreated_around_a_kafka_write`](crate::client::steps)).
//!
//! States, as kco's: RUNNING and FAILED as they are; CREATING and UPDATING as UNASSIGNED
//! (on its way, not settled); a connector being deleted (DELETING) is left out of the
//! listing (it runs no more), and its status says DELETING until the service lists it no
//! more: gone, and its name free for a create.

use std::collections::BTreeMap;

use super::{ConnectorDescription, ConnectorState as MskState, CreateConnector, MskConnect};
use crate::client::api::on;
use crate::client::layers::Counter;
use crate::client::transport::{Method, Request};
use crate::client::{
    AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities, ChangeKind, ClientError,
    ConfigDef, ConnectorListing, ConnectorStatus, OffsetsRead, Op, Result, ServerInfo, Service,
};
use crate::model::{ConnectorState, ConnectorType, OffsetEntry, PatchEntry, TargetState};

/// An MSK Connect region's connectors, as a service.
pub struct MskService {
    api: MskConnect,
    backend: Backend,
    /// The offsets topic kco writes (`connectTopics.offsets`): a source's worker
    /// configuration must pin it for the source created again to read what kco wrote.
    topic: String,
}

impl MskService {
    pub fn new(api: MskConnect, backend: Backend, topic: String) -> Self {
        MskService {
            api,
            backend,
            topic,
        }
    }

    /// Refuses a source whose worker configuration does not pin the offsets topic kco
    /// writes: created again, it would read its offsets elsewhere (MSK's default topic of
    /// its deployment), never what kco wrote.
    fn check_pinned(&self, c: &ConnectorDescription) -> Result<()> {
        let config = c.connector_configuration.clone().unwrap_or_default();
        if type_of(&config) != ConnectorType::Source {
            return Ok(());
        }
        let pinned = self.api.offset_storage_topic(c)?;
        if pinned.as_deref() == Some(self.topic.as_str()) {
            return Ok(());
        }
        let name = &c.connector_name;
        let has = match (&pinned, c.worker_configuration_arn()) {
            (Some(t), Some(arn)) => format!("its worker configuration {arn} pins `offset.storage.topic={t}`"),
            (None, Some(arn)) => format!("its worker configuration {arn} pins no `offset.storage.topic` (its offsets are in MSK's `__amazon_msk_connect_offsets_{name}_<id>`, which a connector created again does not read)"),
            _ => format!("it has no worker configuration (its offsets are in MSK's `__amazon_msk_connect_offsets_{name}_<id>`, which a connector created again does not read)"),
        };
        let req = on(Method::Get, name, "");
        let url = format!("{}/v1/connectors/{}", self.api.endpoint(), c.connector_arn);
        Err(ClientError::refused_here(
            &req,
            &url,
            format!(
                "`{name}` cannot take offsets written to `{}`: {has}; nothing was changed. Create a worker configuration with `offset.storage.topic={}` (a compacted topic) and create the connector with it, under the same name (docs/msk-connect.md)",
                self.topic, self.topic
            ),
        ))
    }

    /// An error for a call the service does not have, nothing sent.
    fn lacks<T>(&self, req: Request, what: &str) -> Result<T> {
        let url = format!("{}{}", self.api.endpoint(), req.path);
        let what = format!("{what} (MSK Connect has no stop, no pause and no offsets route: kco deletes the connector and creates it again around a write of its offsets through Kafka)");
        Err(ClientError::unsupported(
            &req,
            &url,
            self.backend.service(),
            &what,
        ))
    }

    /// The connector named `name`, described in full (one being deleted: as listed);
    /// Connect's 404 once the service lists it no more.
    fn described(&self, name: &str) -> Result<ConnectorDescription> {
        match self.api.find_connector(name)? {
            Some(c) if c.connector_state == MskState::Deleting => Ok(c),
            Some(c) => self.api.describe_connector(&c.connector_arn),
            None => {
                let req = on(Method::Get, name, "");
                let url = format!(
                    "{}/v1/connectors?connectorNamePrefix={name}",
                    self.api.endpoint()
                );
                Err(ClientError::http(
                    &req,
                    &url,
                    404,
                    format!("Connector {name} not found"),
                ))
            }
        }
    }
}

/// kco's state of an MSK Connect state.
fn state_of(s: MskState) -> (Option<ConnectorState>, &'static str) {
    let state = match s {
        MskState::Running => Some(ConnectorState::Running),
        MskState::Failed => Some(ConnectorState::Failed),
        MskState::Creating | MskState::Updating => Some(ConnectorState::Unassigned),
        MskState::Deleting | MskState::Unknown => None,
    };
    (state, s.as_str())
}

/// A sink reads topics (`topics` or `topics.regex`); anything else is a source.
fn type_of(config: &BTreeMap<String, String>) -> ConnectorType {
    match config.contains_key("topics") || config.contains_key("topics.regex") {
        true => ConnectorType::Sink,
        false => ConnectorType::Source,
    }
}

fn status_of(c: &ConnectorDescription) -> ConnectorStatus {
    let (state, raw) = state_of(c.connector_state);
    ConnectorStatus {
        name: c.connector_name.clone(),
        state,
        raw_state: raw.to_string(),
        tasks: Vec::new(),
        connector_type: c.connector_configuration.as_ref().map(type_of),
        trace: c.state_description.as_ref().map(ToString::to_string),
        worker_id: None,
    }
}

impl Service for MskService {
    fn backend(&self) -> &Backend {
        &self.backend
    }
    fn capabilities(&self) -> Capabilities {
        Backend::MSK_CONNECT
    }
    fn steps(&self, change: ChangeKind) -> &'static [Op] {
        crate::client::steps::recreated_around_a_kafka_write(change)
    }
    fn endpoint(&self) -> String {
        self.api.endpoint()
    }
    fn counting(&self) -> (Box<dyn Service>, Counter) {
        let (api, counter) = self.api.counting();
        let service = MskService::new(api, self.backend.clone(), self.topic.clone());
        (Box::new(service), counter)
    }
    fn server_info(&self) -> Result<ServerInfo> {
        Ok(ServerInfo {
            version: self.backend.service().to_string(),
            commit: None,
            kafka_cluster_id: None,
        })
    }
    /// Every connector but those being deleted, each described (a summary has no
    /// configuration); one deleted between the list and its description is left out.
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        let mut out = BTreeMap::new();
        for summary in self.api.list_connectors(None)? {
            if summary.connector_state == MskState::Deleting {
                continue;
            }
            // Deleted since the list (by anyone): not one of the connectors any more.
            let c = match self.api.describe_connector(&summary.connector_arn) {
                Err(e) if e.is_not_found() => continue,
                other => other?,
            };
            let config = c.connector_configuration.clone().unwrap_or_default();
            let listing = ConnectorListing {
                name: c.connector_name.clone(),
                connector_type: Some(type_of(&config)),
                class: config.get("connector.class").cloned(),
                status: Some(status_of(&c)),
                config,
            };
            out.insert(c.connector_name.clone(), listing);
        }
        Ok(out)
    }
    fn connector_names(&self) -> Result<Vec<String>> {
        Ok(self.list_connectors()?.into_keys().collect())
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        Ok(status_of(&self.described(name)?))
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.lacks(on(Method::Get, name, "/offsets"), "reading offsets")
    }
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        self.lacks(on(Method::Get, name, "/offsets"), "reading offsets")
    }
    fn request_alter(&self, name: &str, _: AlterKind, _: &[PatchEntry]) -> Result<AlterRequest> {
        self.lacks(
            on(Method::Post, name, "/offsets/request"),
            "altering offsets",
        )
    }
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        self.lacks(
            on(Method::Get, name, "/offsets/request/status"),
            "altering offsets",
        )
    }
    fn patch_offsets(&self, name: &str, _: &[PatchEntry]) -> Result<AlterAck> {
        self.lacks(on(Method::Patch, name, "/offsets"), "altering offsets")
    }
    fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        self.lacks(on(Method::Delete, name, "/offsets"), "resetting offsets")
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.lacks(on(Method::Put, name, "/stop"), "stopping a connector")
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.lacks(on(Method::Put, name, "/pause"), "pausing a connector")
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.lacks(on(Method::Put, name, "/resume"), "resuming a connector")
    }
    fn create(
        &self,
        name: &str,
        _: &BTreeMap<String, String>,
        _: Option<TargetState>,
    ) -> Result<()> {
        let req = Request::new(Method::Post, "/v1/connectors").about(name);
        self.lacks(req, "creating a connector from a file's config alone (its capacity, plugins, worker configuration and role are the service's: create it with `aws kafkaconnect create-connector`)")
    }
    fn create_at(&self, name: &str, _: &BTreeMap<String, String>, _: &[PatchEntry]) -> Result<()> {
        let req = Request::new(Method::Post, "/v1/connectors").about(name);
        self.lacks(req, "creating a connector at its offsets")
    }
    /// `DeleteConnector` of its current version (nothing sent for one being deleted).
    fn delete(&self, name: &str) -> Result<()> {
        let c = self.described(name)?;
        if c.connector_state == MskState::Deleting {
            return Ok(());
        }
        self.api
            .delete_connector(&c.connector_arn, c.current_version.as_deref())
            .map(drop)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        let req = Request::new(Method::Get, format!("/connector-plugins/{class}/config"));
        self.lacks(req, "reading a plugin's config definitions")
    }
    /// The `CreateConnector` request that makes it again, every member described kept; a
    /// source whose worker configuration does not pin the offsets topic is refused.
    fn definition(&self, name: &str) -> Result<serde_json::Value> {
        let c = self.described(name)?;
        self.check_pinned(&c)?;
        let create = c.to_create().ok_or_else(|| {
            let req = on(Method::Get, name, "");
            ClientError::decode(
                &req,
                &self.api.endpoint(),
                "DescribeConnector answered no connectorConfiguration",
            )
        })?;
        serde_json::to_value(&create).map_err(|e| {
            let req = on(Method::Get, name, "");
            ClientError::decode(&req, &self.api.endpoint(), e.to_string())
        })
    }
    /// `CreateConnector` with a [`definition`](Service::definition).
    fn create_from(&self, definition: &serde_json::Value) -> Result<()> {
        let create: CreateConnector = serde_json::from_value(definition.clone()).map_err(|e| {
            let name = definition["connectorName"].as_str().unwrap_or_default();
            let req = Request::new(Method::Post, "/v1/connectors").about(name);
            ClientError::decode(
                &req,
                &self.api.endpoint(),
                format!("not a connector's definition: {e}"),
            )
        })?;
        self.api.create_connector(&create).map(drop)
    }
}
