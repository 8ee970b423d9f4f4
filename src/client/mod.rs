//! The services kco talks to, and how.
//!
//! What the engine asks of a service is [`Service`]; each service is one implementation:
//! Kafka Connect's REST API ([`Connect`], `api.rs`) and Confluent Cloud's managed connectors
//! ([`ConfluentCloud`], `confluent_cloud.rs`); [`service_for`] picks it for a [`Backend`].
//! Each says how it makes a connector's change as a list of steps ([`Op`], `steps.rs`) that
//! the engine's one executor runs.
//! Under them one seam: a [`Transport`] takes a [`Request`] (method, path, body, whether it is
//! idempotent) and returns the decoded answer or a typed [`ClientError`]. HTTP with failover
//! ([`HttpTransport`]) and the fake of Connect in tests are transports; retry, tracing and
//! counting are layers that wrap one ([`layers`]).

mod api;
mod async_alter;
mod auth;
mod backend;
mod confluent_cloud;
mod error;
mod http;
pub mod layers;
pub mod msk_connect;
mod service;
pub(crate) mod steps;
pub mod transport;
mod types;
mod version;

pub use api::{connector_path, Connect};
pub use async_alter::{parse_time, AlterKind, AlterRequest, AlterStatus, OffsetsRead, Phase};
pub use auth::{Auth, Secret};
pub use backend::{Backend, Capabilities, CloudIds, MskSite, CONNECT_TOPICS_INSTEAD};
pub use confluent_cloud::ConfluentCloud;
pub use error::{ClientError, ErrorKind, Problem, TlsProblem};
pub use http::{check_worker_url, redact_url, BuildError, HttpOptions, HttpTransport, TlsOptions};
pub use service::{service_for, Service};
pub use steps::{ChangeKind, Op};
pub use transport::{Method, Request, Transport};
pub use types::{AlterAck, ConfigDef, ConnectorListing, ConnectorStatus, ServerInfo, TaskStatus};
pub use version::ConnectVersion;

pub type Result<T> = std::result::Result<T, ClientError>;
