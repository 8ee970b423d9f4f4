//! The Kafka Connect REST client.
//!
//! One seam: a [`Transport`] takes a [`Request`] (method, path, body, whether it is
//! idempotent) and returns the decoded answer or a typed [`ClientError`]. HTTP with failover
//! ([`HttpTransport`]) and the fake of Connect in tests are transports; retry, tracing and
//! counting are layers that wrap one ([`layers`]). The typed API, [`Connect`], sits on top.

mod api;
mod auth;
mod backend;
mod cloud;
mod error;
mod http;
pub mod layers;
mod service;
pub mod transport;
mod types;
mod version;

pub use api::{connector_path, Connect};
pub use auth::{Auth, Secret};
pub use backend::{Backend, Capabilities, CloudIds};
pub use cloud::{parse_time, AlterKind, AlterRequest, AlterStatus, OffsetsRead, Phase};
pub use error::{ClientError, ErrorKind, Problem, TlsProblem};
pub use http::{check_worker_url, redact_url, BuildError, HttpOptions, HttpTransport, TlsOptions};
pub use service::Service;
pub use transport::{Method, Request, Transport};
pub use types::{AlterAck, ConfigDef, ConnectorListing, ConnectorStatus, ServerInfo, TaskStatus};
pub use version::ConnectVersion;

pub type Result<T> = std::result::Result<T, ClientError>;
