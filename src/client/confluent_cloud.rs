//! Confluent Cloud's fully managed connectors of one Kafka cluster
//! (`/connect/v1/environments/{env}/clusters/{lkc}`). Its connector endpoints mirror Kafka
//! Connect's, so most calls are [`Connect`]'s own over the service's base path. What differs
//! is here: there is no `GET /` (the version is the service's name, the Kafka cluster the one
//! its address names); the listing is asked `?expand=id,info,status`; offsets change through
//! asynchronous requests (`POST .../offsets/request`, whose status is read until it is over);
//! a connector is created at its position in one request; and there is no STOPPED state, no
//! synchronous PATCH or DELETE of offsets and no plugin config definitions: those calls fail
//! here, naming what the service lacks, and nothing is sent.

use std::collections::BTreeMap;

use serde_json::json;

use super::api::on;
use super::layers::Counter;
use super::transport::{Method, Request};
use super::{
    AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities, ChangeKind, CloudIds,
    ConfigDef, Connect, ConnectorListing, ConnectorStatus, OffsetsRead, Op, Result, ServerInfo,
    Service,
};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// One Confluent Cloud cluster's connectors, through a REST client whose transport points at
/// the service's [`base_path`](Backend::base_path).
#[derive(Clone)]
pub struct ConfluentCloud {
    rest: Connect,
    backend: Backend,
}

impl ConfluentCloud {
    /// What Confluent Cloud can do.
    pub const CAPABILITIES: Capabilities = Capabilities {
        observed_offsets: true,
        version_endpoint: false,
        config_definitions: false,
        offsets_through_kafka: false,
        read_only: None,
    };

    pub fn new(rest: Connect, ids: CloudIds) -> Self {
        ConfluentCloud {
            rest,
            backend: Backend::ConfluentCloud(ids),
        }
    }

    fn ids(&self) -> &CloudIds {
        match &self.backend {
            Backend::ConfluentCloud(ids) => ids,
            Backend::Connect | Backend::ConnectTopics | Backend::MskConnect(_) => {
                unreachable!("a ConfluentCloud holds its ids")
            }
        }
    }
}

impl Service for ConfluentCloud {
    fn backend(&self) -> &Backend {
        &self.backend
    }
    fn capabilities(&self) -> Capabilities {
        Self::CAPABILITIES
    }
    fn steps(&self, change: ChangeKind) -> &'static [Op] {
        super::steps::requested_alters(change)
    }
    fn endpoint(&self) -> String {
        self.rest.endpoint()
    }
    fn counting(&self) -> (Box<dyn Service>, Counter) {
        let (rest, counter) = self.rest.counting();
        let counted = ConfluentCloud {
            rest,
            backend: self.backend.clone(),
        };
        (Box::new(counted), counter)
    }
    /// No `GET /` to ask: the version is the service's name and the Kafka cluster the one its
    /// address names; nothing is sent.
    fn server_info(&self) -> Result<ServerInfo> {
        Ok(ServerInfo {
            version: self.backend.service().to_string(),
            commit: None,
            kafka_cluster_id: Some(self.ids().kafka_cluster.clone()),
        })
    }
    /// `GET /connectors?expand=id,info,status`.
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        self.rest.list_with("/connectors?expand=id,info,status")
    }
    fn connector_names(&self) -> Result<Vec<String>> {
        self.rest.connector_names()
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        self.rest.status(name)
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.rest.offsets(name)
    }
    /// The offsets with `metadata.observed_at`, when the service last observed them.
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        self.rest.offsets_read(name)
    }
    /// `POST /connectors/{name}/offsets/request`: `entries` may be empty for a DELETE of every
    /// partition. Not idempotent: a request that timed out is found by its status.
    fn request_alter(
        &self,
        name: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> Result<AlterRequest> {
        #[derive(serde::Serialize)]
        struct Body<'a> {
            #[serde(rename = "type")]
            kind: AlterKind,
            #[serde(skip_serializing_if = "Option::is_none")]
            offsets: Option<&'a [PatchEntry]>,
        }
        let offsets = (kind == AlterKind::Patch || !entries.is_empty()).then_some(entries);
        let mut req = on(Method::Post, name, "/offsets/request").body(Body { kind, offsets });
        req.idempotent = false;
        self.rest.read(req)
    }
    /// `GET /connectors/{name}/offsets/request/status`: the connector's last alter request.
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        self.rest
            .read(on(Method::Get, name, "/offsets/request/status"))
    }
    fn patch_offsets(&self, name: &str, _: &[PatchEntry]) -> Result<AlterAck> {
        let req = on(Method::Patch, name, "/offsets");
        self.rest.lacks(
            "Confluent Cloud",
            req,
            "offsets change by request (POST .../offsets/request)",
        )
    }
    fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        let req = on(Method::Delete, name, "/offsets");
        self.rest.lacks(
            "Confluent Cloud",
            req,
            "offsets change by request (POST .../offsets/request)",
        )
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.rest.lacks(
            "Confluent Cloud",
            on(Method::Put, name, "/stop"),
            "no STOPPED state",
        )
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.rest.pause(name)
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.rest.resume(name)
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        self.rest.create(name, config, initial_state)
    }
    /// `POST /connectors` with the offsets to start from: created at its position in one
    /// request.
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()> {
        let body = json!({ "name": name, "config": config, "offsets": offsets });
        let req = Request::new(Method::Post, "/connectors")
            .body(body)
            .about(name);
        self.rest.send(req).map(drop)
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.rest.delete(name)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        let req = Request::new(Method::Get, format!("/connector-plugins/{class}/config"));
        self.rest
            .lacks("Confluent Cloud", req, "no plugin config definitions")
    }
}
