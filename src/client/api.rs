//! The typed API over a [`Transport`]: one method per endpoint kco uses, each building its
//! [`Request`] and decoding the answer. Adding an endpoint touches this file only.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::layers::{Counter, Counting};
use super::transport::{Method, Request, Transport};
use super::{
    AlterAck, Backend, Capabilities, ClientError, ConfigDef, ConnectorListing, ConnectorStatus,
    OffsetsRead, Result, ServerInfo,
};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// One Kafka Connect cluster, as its REST API shows it.
#[derive(Clone)]
pub struct Connect {
    transport: Arc<dyn Transport>,
    /// What `GET /` answered when the cluster was first contacted, so that the command's own
    /// probe costs no second round trip.
    first_info: Option<ServerInfo>,
    /// The listing asked for at first contact, beside `GET /`: the command's first
    /// [`list_connectors`](Self::list_connectors) takes it instead of asking again.
    listing_ahead: Arc<Mutex<Option<Ahead>>>,
}

type Ahead = std::thread::JoinHandle<Result<BTreeMap<String, ConnectorListing>>>;

impl Connect {
    /// What Kafka Connect can do: none of Confluent Cloud's service-side steps; `GET /` and
    /// plugin config definitions answer.
    pub const CAPABILITIES: Capabilities = Capabilities {
        observed_offsets: false,
        version_endpoint: true,
        config_definitions: true,
        offsets_through_kafka: false,
        read_only: None,
    };

    pub fn new(transport: impl Transport + 'static) -> Self {
        Connect {
            transport: Arc::new(transport),
            first_info: None,
            listing_ahead: Arc::default(),
        }
    }

    /// The service behind this client: Kafka Connect.
    pub fn backend(&self) -> &Backend {
        &Backend::Connect
    }

    /// What Kafka Connect can do.
    pub fn capabilities(&self) -> Capabilities {
        Self::CAPABILITIES
    }

    /// This client, with what `GET /` answered at first contact:
    /// [`server_info`](Self::server_info) returns that instead of asking again (the version
    /// of a cluster does not change within one command).
    pub fn with_first_info(self, info: ServerInfo) -> Self {
        Connect {
            first_info: Some(info),
            ..self
        }
    }

    /// This client, its listing asked for now through `lister` (on a thread of its own,
    /// beside the first contact's `GET /`), for a command that lists the cluster first: the
    /// round trips of `GET /` and the listing overlap. `lister` tries once (no retries): a
    /// listing that fails is asked again, through this client, when the command lists.
    pub fn with_listing_ahead(self, lister: Connect) -> Self {
        let handle = std::thread::spawn(move || lister.list_connectors());
        Connect {
            listing_ahead: Arc::new(Mutex::new(Some(handle))),
            ..self
        }
    }

    /// The same cluster through a layer that counts the mutating requests sent.
    pub fn counting(&self) -> (Connect, Counter) {
        let counter = Counter::default();
        let layer = Counting::new(self.transport.clone(), counter.clone());
        let client = Connect {
            transport: Arc::new(layer),
            first_info: self.first_info.clone(),
            listing_ahead: self.listing_ahead.clone(),
        };
        (client, counter)
    }

    /// The URL requests currently go to (for messages).
    pub fn endpoint(&self) -> String {
        self.transport.endpoint()
    }

    pub(super) fn send(&self, req: Request) -> Result<Value> {
        self.transport.send(&req).map(|b| b.value())
    }

    /// Sends `req` and decodes the answer straight into `T`.
    pub(super) fn read<T: DeserializeOwned>(&self, req: Request) -> Result<T> {
        let body = self.transport.send(&req)?;
        body.json().map_err(|e| self.bad(&req, e.to_string()))
    }

    pub(super) fn bad(&self, req: &Request, detail: impl Into<String>) -> ClientError {
        ClientError::decode(req, &format!("{}{}", self.endpoint(), req.path), detail)
    }

    /// `GET /`, asked once per command: what it answered at first contact is kept.
    pub fn server_info(&self) -> Result<ServerInfo> {
        match &self.first_info {
            Some(info) => Ok(info.clone()),
            None => self.read(Request::new(Method::Get, "/")),
        }
    }

    /// `GET /connectors?expand=status&expand=info`: every connector, its type, class, config
    /// and state, in one call.
    pub fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        // Taken once; one that failed (tried once, with no retry) is asked again here.
        let ahead = self.listing_ahead.lock().ok().and_then(|mut a| a.take());
        if let Some(Ok(Ok(listed))) = ahead.map(|h| h.join()) {
            return Ok(listed);
        }
        self.list_with("/connectors?expand=status&expand=info")
    }

    /// The listing asked with `query` (a service that mirrors Connect's endpoints spells its
    /// expansion its own way).
    pub(super) fn list_with(&self, query: &str) -> Result<BTreeMap<String, ConnectorListing>> {
        let req = Request::new(Method::Get, query);
        let v = self.transport.send(&req)?.value();
        let map = v
            .as_object()
            .ok_or_else(|| self.bad(&req, "expected an object of connectors"))?;
        map.iter()
            .map(|(name, item)| {
                ConnectorListing::from_json(name, item)
                    .map(|l| (name.clone(), l))
                    .ok_or_else(|| self.bad(&req, format!("cannot read connector `{name}`")))
            })
            .collect()
    }

    /// `GET /connectors`: every connector's name, from the cluster's configs (the expanded
    /// listing leaves out a connector whose status cannot be read yet).
    pub fn connector_names(&self) -> Result<Vec<String>> {
        self.read(Request::new(Method::Get, "/connectors"))
    }

    /// `GET /connectors/{name}/status`.
    pub fn status(&self, name: &str) -> Result<ConnectorStatus> {
        let req = on(Method::Get, name, "/status");
        let v = self.transport.send(&req)?.value();
        ConnectorStatus::from_json(&v).ok_or_else(|| self.bad(&req, "cannot read status"))
    }

    /// `GET /connectors/{name}/offsets`.
    pub fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.offsets_read(name).map(|r| r.entries)
    }

    /// `GET /connectors/{name}/offsets`, with when the service observed them (Confluent
    /// Cloud's `metadata.observed_at`; `None` from Kafka Connect, which reads them live).
    pub fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        let req = on(Method::Get, name, "/offsets");
        // Decoded straight from the text into the model's types: no `Value` of 100,000
        // partitions is built first. Unknown fields (`name`, `id`) are ignored.
        #[derive(serde::Deserialize)]
        struct Answer {
            offsets: Vec<PatchEntry>,
            #[serde(default)]
            metadata: Option<Metadata>,
        }
        #[derive(serde::Deserialize)]
        struct Metadata {
            #[serde(default)]
            observed_at: Option<String>,
        }
        let answer = self.read::<Answer>(req.clone())?;
        let observed_at = match answer.metadata.and_then(|m| m.observed_at) {
            Some(t) => Some(
                super::async_alter::parse_time(&t)
                    .ok_or_else(|| self.bad(&req, format!("observed_at `{t}` is not a time")))?,
            ),
            None => None,
        };
        // A partition whose removal the worker has not consumed yet is listed with a `null`
        // offset for a moment: it has no offset.
        let with_offsets = answer.offsets.into_iter().filter_map(|e| {
            e.offset.map(|offset| OffsetEntry {
                partition: e.partition,
                offset,
            })
        });
        Ok(OffsetsRead {
            entries: with_offsets.collect(),
            observed_at,
        })
    }

    /// `PATCH /connectors/{name}/offsets`.
    pub fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<AlterAck> {
        #[derive(serde::Serialize)]
        struct Patch<'a> {
            offsets: &'a [PatchEntry],
        }
        let req = on(Method::Patch, name, "/offsets").body(Patch { offsets: entries });
        self.send(req).map(|v| ack(&v))
    }

    /// `DELETE /connectors/{name}/offsets`.
    pub fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        self.send(on(Method::Delete, name, "/offsets"))
            .map(|v| ack(&v))
    }

    /// `PUT /connectors/{name}/stop`.
    pub fn stop(&self, name: &str) -> Result<()> {
        self.send(on(Method::Put, name, "/stop")).map(drop)
    }

    /// `PUT /connectors/{name}/pause`.
    pub fn pause(&self, name: &str) -> Result<()> {
        self.send(on(Method::Put, name, "/pause")).map(drop)
    }

    /// `PUT /connectors/{name}/resume`.
    pub fn resume(&self, name: &str) -> Result<()> {
        self.send(on(Method::Put, name, "/resume")).map(drop)
    }

    /// `POST /connectors`, with `initial_state` when given (Connect 3.7+).
    pub fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        let mut body = json!({ "name": name, "config": config });
        if let Some(s) = initial_state {
            body["initial_state"] = json!(s.to_string());
        }
        let req = Request::new(Method::Post, "/connectors")
            .body(body)
            .about(name);
        self.send(req).map(drop)
    }

    /// `GET /connectors/{name}`: its name and config, all that `POST /connectors` takes to
    /// create it again.
    pub fn definition(&self, name: &str) -> Result<Value> {
        let req = on(Method::Get, name, "");
        let info: Value = self.read(req.clone())?;
        match info.get("config") {
            Some(config) if config.is_object() => Ok(json!({ "name": name, "config": config })),
            _ => Err(self.bad(&req, "no `config` object in the answer")),
        }
    }

    /// `POST /connectors` with a [`definition`](Connect::definition): created again, RUNNING.
    pub fn create_from(&self, definition: &Value) -> Result<()> {
        let name = definition["name"].as_str().unwrap_or_default().to_string();
        let req = Request::new(Method::Post, "/connectors")
            .body(json!({ "name": name, "config": definition["config"] }))
            .about(&name);
        self.send(req).map(drop)
    }

    /// `DELETE /connectors/{name}`.
    pub fn delete(&self, name: &str) -> Result<()> {
        self.send(on(Method::Delete, name, "")).map(drop)
    }

    /// `GET /connector-plugins/{class}/config`.
    pub fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        let path = format!("/connector-plugins/{}/config", encode(class));
        self.read(Request::new(Method::Get, path))
    }
}

/// A request about one connector: `/connectors/{name}{rest}`.
pub(super) fn on(method: Method, name: &str, rest: &str) -> Request {
    Request::new(method, format!("{}{rest}", connector_path(name))).about(name)
}

/// `/connectors/{name}`, the name percent-encoded as one path segment.
pub fn connector_path(name: &str) -> String {
    format!("/connectors/{}", encode(name))
}

fn encode(segment: &str) -> String {
    percent_encoding::utf8_percent_encode(segment, SEGMENT).to_string()
}

/// What must be escaped in a path segment: everything but RFC 3986's unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn ack(v: &Value) -> AlterAck {
    let message = v.get("message").and_then(Value::as_str).unwrap_or_default();
    AlterAck {
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_asked_ahead_is_the_first_listing_and_is_not_asked_again() {
        let fake = crate::fake::FakeConnect::builder()
            .source("c", "K", crate::fake::State::Running, json!([]))
            .in_process();
        let listings = || {
            let requests = fake.requests();
            let listing = |r: &&crate::fake::RecordedRequest| r.path.starts_with("/connectors?");
            requests.iter().filter(listing).count()
        };
        let lister = Connect::new(fake.transport());
        let client = Connect::new(fake.transport()).with_listing_ahead(lister);
        // Sent before anything asks for it.
        let start = std::time::Instant::now();
        while listings() == 0 && start.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(listings(), 1);
        let listed = client.list_connectors().unwrap();
        assert!(listed.contains_key("c"), "{listed:?}");
        assert_eq!(listings(), 1, "the first listing is the one asked ahead");
        // Later listings are asked again (the cluster changes).
        client.list_connectors().unwrap();
        assert_eq!(listings(), 2);
    }

    #[test]
    fn a_listing_asked_ahead_that_failed_is_asked_again() {
        let fake = crate::fake::FakeConnect::builder()
            .source("c", "K", crate::fake::State::Running, json!([]))
            .in_process();
        let first = crate::fake::Fault::on("GET", "/connectors?*").nth(1);
        fake.fault(first.status(500));
        let lister = Connect::new(fake.transport());
        let client = Connect::new(fake.transport()).with_listing_ahead(lister);
        let listed = client.list_connectors().unwrap();
        assert!(listed.contains_key("c"), "{listed:?}");
        assert_eq!(
            fake.count("GET", "/connectors?expand=status&expand=info"),
            2
        );
    }

    #[test]
    fn connector_names_are_one_percent_encoded_path_segment() {
        assert_eq!(connector_path("a b/c+d%"), "/connectors/a%20b%2Fc%2Bd%25");
        assert_eq!(connector_path("mm2.east-1_x~"), "/connectors/mm2.east-1_x~");
    }
}
