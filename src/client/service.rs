//! The seam the engine talks through: what it asks of a service that holds connectors and
//! their offsets. [`Connect`] (Kafka Connect's REST API) and
//! [`ConfluentCloud`](super::ConfluentCloud) are its implementations; the engine never names
//! them, only this trait and what the service can do ([`Capabilities`]).

use std::collections::BTreeMap;

use super::api::on;
use super::layers::Counter;
use super::transport::{Method, Request};
use super::{
    AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities, ChangeKind, ClientError,
    ConfigDef, ConfluentCloud, Connect, ConnectorListing, ConnectorStatus, OffsetsRead, Op, Result,
    ServerInfo,
};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// A service's connectors, their states and offsets: read, changed, created, deleted.
pub trait Service: Send + Sync {
    /// Which service this is (for messages and its dialect), and what it can do.
    fn backend(&self) -> &Backend;
    fn capabilities(&self) -> Capabilities;
    /// The steps this service makes `change` of one connector with, in order ([`Op`]):
    /// none for a change it cannot make.
    fn steps(&self, change: ChangeKind) -> &'static [Op];
    /// Where it is, for messages (credentials left out).
    fn endpoint(&self) -> String;
    /// The same service, counting the requests that change something.
    fn counting(&self) -> (Box<dyn Service>, Counter);
    /// The service's version and the Kafka cluster it works on.
    fn server_info(&self) -> Result<ServerInfo>;
    /// Every connector with its config and state.
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>>;
    fn connector_names(&self) -> Result<Vec<String>>;
    fn status(&self, name: &str) -> Result<ConnectorStatus>;
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>>;
    /// The offsets, and when the service observed them (a service with
    /// [`Capabilities::observed_offsets`]).
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead>;
    /// An asynchronous alter (a service whose steps hold [`Op::RequestAlter`]).
    fn request_alter(
        &self,
        name: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> Result<AlterRequest>;
    fn alter_status(&self, name: &str) -> Result<AlterStatus>;
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<AlterAck>;
    fn reset_offsets(&self, name: &str) -> Result<AlterAck>;
    fn stop(&self, name: &str) -> Result<()>;
    fn pause(&self, name: &str) -> Result<()>;
    fn resume(&self, name: &str) -> Result<()>;
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()>;
    /// Created at its position in one request ([`Op::CreateAt`]).
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()>;
    fn delete(&self, name: &str) -> Result<()>;
    /// Which config keys of a plugin are secrets ([`Capabilities::config_definitions`]).
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>>;
    /// The connector's definition: everything the service's create call takes to create it
    /// again as it is ([`Op::Describe`]), kept in the journal before it is deleted.
    fn definition(&self, name: &str) -> Result<serde_json::Value> {
        let req = on(Method::Get, name, "");
        let url = format!("{}{}", self.endpoint(), req.path);
        Err(ClientError::unsupported(
            &req,
            &url,
            self.backend().service(),
            "reading a connector's definition to create it again",
        ))
    }
    /// Creates a connector again from its [`definition`](Service::definition)
    /// ([`Op::CreateFrom`]); the caller waits until it runs.
    fn create_from(&self, definition: &serde_json::Value) -> Result<()> {
        let name = definition["name"].as_str().unwrap_or_default();
        let req = Request::new(Method::Post, "/connectors").about(name);
        let url = format!("{}{}", self.endpoint(), req.path);
        Err(ClientError::unsupported(
            &req,
            &url,
            self.backend().service(),
            "creating a connector again from its definition",
        ))
    }
}

/// A boxed service is the service it holds (the CLI and the fake hand out `Box<dyn Service>`).
impl<S: Service + ?Sized> Service for Box<S> {
    fn backend(&self) -> &Backend {
        (**self).backend()
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
    fn steps(&self, change: ChangeKind) -> &'static [Op] {
        (**self).steps(change)
    }
    fn endpoint(&self) -> String {
        (**self).endpoint()
    }
    fn counting(&self) -> (Box<dyn Service>, Counter) {
        (**self).counting()
    }
    fn server_info(&self) -> Result<ServerInfo> {
        (**self).server_info()
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        (**self).list_connectors()
    }
    fn connector_names(&self) -> Result<Vec<String>> {
        (**self).connector_names()
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        (**self).status(name)
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        (**self).offsets(name)
    }
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        (**self).offsets_read(name)
    }
    fn request_alter(
        &self,
        name: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> Result<AlterRequest> {
        (**self).request_alter(name, kind, entries)
    }
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        (**self).alter_status(name)
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<AlterAck> {
        (**self).patch_offsets(name, entries)
    }
    fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        (**self).reset_offsets(name)
    }
    fn stop(&self, name: &str) -> Result<()> {
        (**self).stop(name)
    }
    fn pause(&self, name: &str) -> Result<()> {
        (**self).pause(name)
    }
    fn resume(&self, name: &str) -> Result<()> {
        (**self).resume(name)
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        (**self).create(name, config, initial_state)
    }
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()> {
        (**self).create_at(name, config, offsets)
    }
    fn delete(&self, name: &str) -> Result<()> {
        (**self).delete(name)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        (**self).plugin_config(class)
    }
    fn definition(&self, name: &str) -> Result<serde_json::Value> {
        (**self).definition(name)
    }
    fn create_from(&self, definition: &serde_json::Value) -> Result<()> {
        (**self).create_from(definition)
    }
}

/// The service behind `backend`, over `rest` (a client whose transport points at the
/// backend's [`base_path`](Backend::base_path)).
pub fn service_for(rest: Connect, backend: &Backend) -> Box<dyn Service> {
    match backend {
        // A cluster read from its topics has no REST API: its service is not made over one
        // (`cli::context` makes it from kco.yaml's `kafka:`).
        Backend::Connect | Backend::ConnectTopics | Backend::MskConnect(_) => Box::new(rest),
        Backend::ConfluentCloud(ids) => Box::new(ConfluentCloud::new(rest, ids.clone())),
    }
}

impl Connect {
    /// A call `service` does not have, at this client's endpoint: an error naming it, nothing
    /// sent.
    pub(super) fn lacks<T>(&self, service: &'static str, req: Request, what: &str) -> Result<T> {
        let url = format!("{}{}", self.endpoint(), req.path);
        Err(ClientError::unsupported(&req, &url, service, what))
    }
}

impl Service for Connect {
    fn backend(&self) -> &Backend {
        Connect::backend(self)
    }
    fn capabilities(&self) -> Capabilities {
        Connect::capabilities(self)
    }
    fn steps(&self, change: ChangeKind) -> &'static [Op] {
        super::steps::kafka_connect(change)
    }
    fn endpoint(&self) -> String {
        Connect::endpoint(self)
    }
    fn counting(&self) -> (Box<dyn Service>, Counter) {
        let (c, counter) = Connect::counting(self);
        (Box::new(c), counter)
    }
    fn server_info(&self) -> Result<ServerInfo> {
        Connect::server_info(self)
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        Connect::list_connectors(self)
    }
    fn connector_names(&self) -> Result<Vec<String>> {
        Connect::connector_names(self)
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        Connect::status(self, name)
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        Connect::offsets(self, name)
    }
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        Connect::offsets_read(self, name)
    }
    fn request_alter(
        &self,
        name: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> Result<AlterRequest> {
        let _ = (kind, entries);
        let req = on(Method::Post, name, "/offsets/request");
        self.lacks(
            "Kafka Connect",
            req,
            "offsets are altered by PATCH and DELETE, answered once done",
        )
    }
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        let req = on(Method::Get, name, "/offsets/request/status");
        self.lacks(
            "Kafka Connect",
            req,
            "offsets are altered by PATCH and DELETE, answered once done",
        )
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<AlterAck> {
        Connect::patch_offsets(self, name, entries)
    }
    fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        Connect::reset_offsets(self, name)
    }
    fn stop(&self, name: &str) -> Result<()> {
        Connect::stop(self, name)
    }
    fn pause(&self, name: &str) -> Result<()> {
        Connect::pause(self, name)
    }
    fn resume(&self, name: &str) -> Result<()> {
        Connect::resume(self, name)
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        Connect::create(self, name, config, initial_state)
    }
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()> {
        let _ = (config, offsets);
        let req = Request::new(Method::Post, "/connectors").about(name);
        self.lacks(
            "Kafka Connect",
            req,
            "a connector is created, then its offsets altered",
        )
    }
    fn delete(&self, name: &str) -> Result<()> {
        Connect::delete(self, name)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        Connect::plugin_config(self, class)
    }
    fn definition(&self, name: &str) -> Result<serde_json::Value> {
        Connect::definition(self, name)
    }
    fn create_from(&self, definition: &serde_json::Value) -> Result<()> {
        Connect::create_from(self, definition)
    }
}
