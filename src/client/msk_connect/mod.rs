//! Amazon MSK Connect's control plane (API version 2021-09-14, REST-JSON, signed with SigV4 as
//! service `kafkaconnect`): the calls kco makes to change a managed connector's offsets the
//! way AWS documents it (describe the connector, delete it, wait until it is gone, write its
//! offsets through Kafka, create it again with the parameters described, wait until it runs).
//!
//! [`MskConnect`] is the client: one method a call, each answer typed (`types.rs`), each
//! failure a [`ClientError`] whose kind [`AwsError::of`] names. Requests go through the same
//! [`Transport`] seam as Connect's: signed HTTP (`signed.rs`), retried on throttling and on
//! an unavailable service, with a hint naming the access key id (never the secret) on a
//! refusal. docs/msk-connect.md says which routes and members this covers, and from where.

mod service;
mod signed;
mod types;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::de::DeserializeOwned;

use super::layers::{RetryPolicy, Retrying, ServiceHints};
use super::transport::{Method, Request, Transport};
use super::{BuildError, ClientError, Result};
use crate::wait::{self, Clock, Poll, SystemClock, WaitError, WaitPolicy};

/// AWS credentials, as the caller's provider chain resolves them.
pub use aws_credential_types::Credentials;
pub use service::MskService;
pub use signed::{ERROR_TYPE_HEADER, SERVICE};
pub use types::{
    parse_properties, properties_file_content, ApacheKafkaCluster, AutoScaling, Capacity,
    ClientAuthentication, ConnectorDescription, ConnectorState, CreateConnector, CreatedConnector,
    CustomPlugin, EncryptionInTransit, KafkaCluster, LogDelivery, LogDestination, Other, Plugin,
    ProvisionedCapacity, ScalePolicy, StateDescription, Vpc, WorkerConfiguration,
    WorkerConfigurationRef, WorkerConfigurationRevision, WorkerLogDelivery,
};

/// The public endpoint of the API in `region`.
pub fn endpoint_for(region: &str) -> String {
    format!("https://kafkaconnect.{region}.amazonaws.com")
}

/// How to reach the API.
#[derive(Debug, Clone)]
pub struct MskOptions {
    /// The AWS region the connectors live in (it is part of every signature).
    pub region: String,
    /// Static or temporary credentials (the caller resolves the provider chain).
    pub credentials: Credentials,
    /// Another base URL than [`endpoint_for`] the region (a VPC endpoint, a stand-in).
    pub endpoint: Option<String>,
    /// How long one request may take.
    pub timeout: Duration,
    /// How throttled (429) and unavailable (503) answers are retried.
    pub retry: RetryPolicy,
    /// Where the credentials came from, in a user's words, for a refusal's hint.
    pub credentials_from: Option<String>,
}

impl MskOptions {
    pub fn new(region: impl Into<String>, credentials: Credentials) -> Self {
        MskOptions {
            region: region.into(),
            credentials,
            endpoint: None,
            timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            credentials_from: None,
        }
    }
}

/// What an error answer of the API is, by its status and exception type (the model's
/// `errors` of each operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwsError {
    /// 400 `BadRequestException`: the request is wrong (a stale `currentVersion` too).
    BadRequest,
    /// 401 `UnauthorizedException`: the credentials could not be validated.
    Unauthorized,
    /// 403 `ForbiddenException` (and a signature or key refused): not allowed.
    Forbidden,
    /// 404 `NotFoundException`: no such connector or worker configuration.
    NotFound,
    /// 409 `ConflictException`: a connector of that name exists.
    Conflict,
    /// 429 `TooManyRequestsException`: throttled; retried with backoff.
    Throttled,
    /// 500 `InternalServerErrorException`.
    Internal,
    /// 503 `ServiceUnavailableException`: retried with backoff.
    Unavailable,
    /// No answer, or one that is not the API's.
    Other,
}

impl AwsError {
    pub fn of(e: &ClientError) -> AwsError {
        match e.status() {
            Some(400) => AwsError::BadRequest,
            Some(401) => AwsError::Unauthorized,
            Some(403) => AwsError::Forbidden,
            Some(404) => AwsError::NotFound,
            Some(409) => AwsError::Conflict,
            Some(429) => AwsError::Throttled,
            Some(500) => AwsError::Internal,
            Some(503) => AwsError::Unavailable,
            _ => AwsError::Other,
        }
    }
}

/// A wait that did not end as asked.
#[derive(Debug, thiserror::Error)]
pub enum MskWaitError {
    #[error(transparent)]
    Call(#[from] ClientError),
    /// The connector went FAILED.
    #[error("MSK Connect connector {name} is FAILED ({arn}): {reason}")]
    Failed {
        name: String,
        arn: String,
        reason: String,
    },
    #[error("MSK Connect connector {name} ({arn}): {what} {error}")]
    TimedOut {
        name: String,
        arn: String,
        what: &'static str,
        error: WaitError,
    },
}

/// The MSK Connect API of one account and region.
pub struct MskConnect {
    transport: std::sync::Arc<dyn Transport>,
    clock: std::sync::Arc<dyn Clock>,
}

impl MskConnect {
    pub fn new(opts: MskOptions) -> std::result::Result<Self, BuildError> {
        if opts.region.trim().is_empty() {
            return Err(BuildError("MSK Connect needs an AWS region".into()));
        }
        let endpoint = opts
            .endpoint
            .clone()
            .unwrap_or_else(|| endpoint_for(&opts.region));
        let key = opts.credentials.access_key_id().to_string();
        let signed = signed::Signed::new(&endpoint, &opts.region, opts.credentials, opts.timeout)?;
        let from = opts
            .credentials_from
            .as_deref()
            .map(|f| format!(" (credentials from {f})"))
            .unwrap_or_default();
        let refused = format!(
            "AWS refused the request signed with access key id {key}{from} in region {}: check \
             the credentials, their region, the clock, and that the identity may call \
             kafkaconnect:* on the connector",
            opts.region
        );
        let unreachable = format!("the MSK Connect endpoint {endpoint} does not answer");
        let hinted = ServiceHints::new(signed, refused, unreachable);
        Ok(MskConnect {
            transport: std::sync::Arc::new(Retrying::new(hinted, opts.retry)),
            clock: std::sync::Arc::new(SystemClock),
        })
    }

    /// The same client, waiting on `clock` (tests).
    pub fn with_clock(self, clock: impl Clock + 'static) -> Self {
        MskConnect {
            clock: std::sync::Arc::new(clock),
            ..self
        }
    }

    /// The same client, counting the requests that change something.
    pub fn counting(&self) -> (MskConnect, super::layers::Counter) {
        let counter = super::layers::Counter::default();
        let layer = super::layers::Counting::new(self.transport.clone(), counter.clone());
        let client = MskConnect {
            transport: std::sync::Arc::new(layer),
            clock: self.clock.clone(),
        };
        (client, counter)
    }

    /// The base URL requests go to.
    pub fn endpoint(&self) -> String {
        self.transport.endpoint()
    }

    fn read<T: DeserializeOwned>(&self, req: Request) -> Result<T> {
        let body = self.transport.send(&req)?;
        body.json().map_err(|e| {
            let url = format!("{}{}", self.endpoint(), req.path);
            ClientError::decode(&req, &url, format!("not the MSK Connect API's answer: {e}"))
        })
    }

    /// `ListConnectors`, every page (`nextToken`), only the names starting with `prefix`
    /// when one is given. Summaries carry no `connectorConfiguration`.
    pub fn list_connectors(&self, prefix: Option<&str>) -> Result<Vec<ConnectorDescription>> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            if let Some(p) = prefix {
                query.append_pair("connectorNamePrefix", p);
            }
            if let Some(t) = &token {
                query.append_pair("nextToken", t);
            }
            let query = query.finish().replace('+', "%20");
            let path = match query.is_empty() {
                true => "/v1/connectors".to_string(),
                false => format!("/v1/connectors?{query}"),
            };
            let page: types::ListConnectorsPage = self.read(Request::new(Method::Get, path))?;
            out.extend(page.connectors);
            match page.next_token.filter(|t| !t.is_empty()) {
                Some(next) => token = Some(next),
                None => return Ok(out),
            }
        }
    }

    /// The connector named `name` exactly (names are unique in an account and region), if
    /// any; one being deleted counts.
    pub fn find_connector(&self, name: &str) -> Result<Option<ConnectorDescription>> {
        let listed = self.list_connectors(Some(name))?;
        Ok(listed.into_iter().find(|c| c.connector_name == name))
    }

    /// `DescribeConnector`.
    pub fn describe_connector(&self, arn: &str) -> Result<ConnectorDescription> {
        let req = Request::new(Method::Get, format!("/v1/connectors/{}", segment(arn)));
        self.read(req)
    }

    /// `DescribeWorkerConfiguration`: its latest revision, properties included
    /// ([`WorkerConfiguration::properties`]).
    pub fn describe_worker_configuration(&self, arn: &str) -> Result<WorkerConfiguration> {
        let path = format!("/v1/worker-configurations/{}", segment(arn));
        self.read(Request::new(Method::Get, path))
    }

    /// The `offset.storage.topic` the connector's worker configuration pins (the revision it
    /// runs with is the latest: worker configurations have one revision each today), or
    /// `None` when it has no worker configuration or the configuration pins none: then MSK
    /// keeps its offsets in `__amazon_msk_connect_offsets_<name>_<id>`, which a connector
    /// created again does not read.
    pub fn offset_storage_topic(&self, connector: &ConnectorDescription) -> Result<Option<String>> {
        let Some(arn) = connector.worker_configuration_arn() else {
            return Ok(None);
        };
        let wc = self.describe_worker_configuration(arn)?;
        wc.offset_storage_topic().map_err(|detail| {
            let req = Request::new(
                Method::Get,
                format!("/v1/worker-configurations/{}", segment(arn)),
            );
            let url = format!("{}{}", self.endpoint(), req.path);
            ClientError::decode(&req, &url, detail)
        })
    }

    /// `CreateWorkerConfiguration` with `properties` (written as a properties file).
    pub fn create_worker_configuration(
        &self,
        name: &str,
        properties: &BTreeMap<String, String>,
    ) -> Result<WorkerConfiguration> {
        let body = serde_json::json!({
            "name": name,
            "propertiesFileContent": properties_file_content(properties),
        });
        let mut req = Request::new(Method::Post, "/v1/worker-configurations").body(body);
        req.idempotent = false;
        self.read(req)
    }

    /// `DeleteConnector`; with `current_version`, only that version of the connector (the
    /// service refuses a stale one). Returns the state it answered (DELETING).
    pub fn delete_connector(
        &self,
        arn: &str,
        current_version: Option<&str>,
    ) -> Result<Option<ConnectorState>> {
        let mut path = format!("/v1/connectors/{}", segment(arn));
        if let Some(v) = current_version {
            path.push_str(&format!("?currentVersion={}", segment(v)));
        }
        let req = Request::new(Method::Delete, path);
        let answer: types::DeletedConnector = self.read(req)?;
        Ok(answer.connector_state)
    }

    /// `CreateConnector`. Not sent again after a timeout (it may have taken effect: look for
    /// the connector by name instead).
    pub fn create_connector(&self, create: &CreateConnector) -> Result<CreatedConnector> {
        let mut req = Request::new(Method::Post, "/v1/connectors")
            .body(create)
            .about(&create.connector_name);
        req.idempotent = false;
        self.read(req)
    }

    /// Describes the connector until `DescribeConnector` answers 404 (it is gone), within
    /// `policy`.
    pub fn wait_gone(
        &self,
        arn: &str,
        name: &str,
        policy: &WaitPolicy,
    ) -> std::result::Result<(), MskWaitError> {
        let mut call_error = None;
        let waited = wait::until(self.clock.as_ref(), policy, || {
            match self.describe_connector(arn) {
                Err(e) if AwsError::of(&e) == AwsError::NotFound => Poll::Ready(()),
                Err(e) => {
                    call_error = Some(e);
                    Poll::Failed(String::new())
                }
                Ok(c) => Poll::Pending(c.connector_state.to_string()),
            }
        });
        match (waited, call_error) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(e)) => Err(e.into()),
            (Err(error), None) => Err(MskWaitError::TimedOut {
                name: name.to_string(),
                arn: arn.to_string(),
                what: "is not gone:",
                error,
            }),
        }
    }

    /// Describes the connector until it is RUNNING, within `policy`; FAILED is an error
    /// naming the connector and its state description.
    pub fn wait_running(
        &self,
        arn: &str,
        policy: &WaitPolicy,
    ) -> std::result::Result<ConnectorDescription, MskWaitError> {
        let mut failure = None;
        let mut last_name = arn.to_string();
        let waited = wait::until(self.clock.as_ref(), policy, || {
            match self.describe_connector(arn) {
                Err(e) => {
                    failure = Some(MskWaitError::Call(e));
                    Poll::Failed(String::new())
                }
                Ok(c) => {
                    last_name = c.connector_name.clone();
                    match c.connector_state {
                        ConnectorState::Running => Poll::Ready(c),
                        ConnectorState::Failed => {
                            failure = Some(MskWaitError::Failed {
                                reason: c
                                    .state_description
                                    .as_ref()
                                    .map(ToString::to_string)
                                    .unwrap_or_else(|| "no state description".into()),
                                name: c.connector_name,
                                arn: c.connector_arn,
                            });
                            Poll::Failed(String::new())
                        }
                        other => Poll::Pending(other.to_string()),
                    }
                }
            }
        });
        waited.map_err(|error| match failure {
            Some(f) => f,
            None => MskWaitError::TimedOut {
                name: last_name,
                arn: arn.to_string(),
                what: "is not RUNNING:",
                error,
            },
        })
    }
}

/// A path segment of the API: an ARN's `:` and `/` percent-encoded, as AWS's SDKs send it.
fn segment(value: &str) -> String {
    const LABEL: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(value, LABEL).to_string()
}

#[cfg(test)]
mod tests;
