//! The Kafka Connect REST client.
//!
//! [`Connect`] is the seam: the HTTP client implements it, [`retry::Retrying`] wraps any
//! implementation with backoff, and tests may wrap it again to inject faults. Everything the
//! commands know about a cluster goes through it.

mod error;
mod http;
pub mod retry;
pub mod trace;
mod types;
mod version;

use std::collections::BTreeMap;

pub use error::ClientError;
pub use http::{redact_url, HttpConnect, HttpOptions, TlsOptions};
pub use types::{ConfigDef, ConnectorListing, ConnectorStatus, ServerInfo, TaskStatus};
pub use version::ConnectVersion;

use crate::model::{OffsetEntry, PatchEntry, TargetState};

pub type Result<T> = std::result::Result<T, ClientError>;

/// One Kafka Connect cluster, as its REST API shows it.
pub trait Connect: Send + Sync {
    /// The URL requests currently go to (for messages).
    fn endpoint(&self) -> String;
    /// `GET /`.
    fn server_info(&self) -> Result<ServerInfo>;
    /// `GET /connectors?expand=status&expand=info`: every connector, its type, class, config
    /// and state, in one call.
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>>;
    /// `GET /connectors/{name}/status`.
    fn status(&self, name: &str) -> Result<ConnectorStatus>;
    /// `GET /connectors/{name}/config`.
    fn config(&self, name: &str) -> Result<BTreeMap<String, String>>;
    /// `GET /connectors/{name}/offsets`.
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>>;
    /// `PATCH /connectors/{name}/offsets`; returns Connect's message.
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<String>;
    /// `DELETE /connectors/{name}/offsets`; returns Connect's message.
    fn reset_offsets(&self, name: &str) -> Result<String>;
    /// `PUT /connectors/{name}/stop`.
    fn stop(&self, name: &str) -> Result<()>;
    /// `PUT /connectors/{name}/pause`.
    fn pause(&self, name: &str) -> Result<()>;
    /// `PUT /connectors/{name}/resume`.
    fn resume(&self, name: &str) -> Result<()>;
    /// `POST /connectors`, with `initial_state` when given (Connect 3.7+).
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()>;
    /// `DELETE /connectors/{name}`.
    fn delete(&self, name: &str) -> Result<()>;
    /// `GET /connector-plugins/{class}/config`.
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>>;
}
