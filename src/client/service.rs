//! The seam the engine talks through: what it asks of a service that holds connectors and
//! their offsets. [`Connect`] (Kafka Connect's REST API, and Confluent Cloud's, which mirrors
//! it) is one implementation; the engine never names it, only this trait and what the
//! service can do ([`Capabilities`]).

use std::collections::BTreeMap;

use super::layers::Counter;
use super::{
    AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities, ConfigDef, Connect,
    ConnectorListing, ConnectorStatus, OffsetsRead, Result, ServerInfo,
};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// A service's connectors, their states and offsets: read, changed, created, deleted.
pub trait Service: Send + Sync {
    /// Which service this is (for messages and its dialect), and what it can do.
    fn backend(&self) -> &Backend;
    fn capabilities(&self) -> Capabilities;
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
    /// An asynchronous alter ([`Capabilities::async_alter`]).
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
    /// Created at its position in one request ([`Capabilities::create_with_offsets`]).
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()>;
    fn delete(&self, name: &str) -> Result<()>;
    /// Which config keys of a plugin are secrets ([`Capabilities::config_definitions`]).
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>>;
}

impl Service for Connect {
    fn backend(&self) -> &Backend {
        Connect::backend(self)
    }
    fn capabilities(&self) -> Capabilities {
        Connect::capabilities(self)
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
        Connect::request_alter(self, name, kind, entries)
    }
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        Connect::alter_status(self, name)
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
        Connect::create_at(self, name, config, offsets)
    }
    fn delete(&self, name: &str) -> Result<()> {
        Connect::delete(self, name)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        Connect::plugin_config(self, class)
    }
}
