//! A stand-in for Amazon MSK Connect's control plane: the API's routes kco uses, with its
//! shapes, status codes and error bodies (`{"message"}`, the type in `x-amzn-ErrorType`),
//! every request's SigV4 signature checked exactly (`sigv4.rs`) against test credentials, and
//! each connector it is asked to create run on a Kafka Connect worker behind it (the
//! in-process [`super::FakeConnect`] in unit tests, a real worker on the test bed). The
//! worker's REST API is never shown: answers name connectors by ARN and say nothing of it.
//!
//! What it serves, and how it differs from AWS (docs/msk-connect.md "The control-plane
//! contract kco uses"):
//! - `ListConnectors` (`connectorNamePrefix`, `maxResults`, `nextToken`), `DescribeConnector`,
//!   `CreateConnector`, `DeleteConnector` (`currentVersion`), `CreateWorkerConfiguration`,
//!   `DescribeWorkerConfiguration`, `ListWorkerConfigurations`.
//! - States: CREATING until the worker shows the connector RUNNING, then RUNNING; FAILED when
//!   the worker shows it (or, while CREATING, a task) FAILED, with the trace's first line as
//!   the state description; DELETING until the worker no longer has it, then gone (404).
//!   Each create gets a new id (in the ARN) and a new `currentVersion`.
//! - A connector whose worker configuration does not pin `offset.storage.topic` to the
//!   worker's own offsets topic keeps its offsets in that topic all the same (one worker
//!   cannot have two): on MSK they would go to `__amazon_msk_connect_offsets_<name>_<id>`.
//!   The stand-in says so in its notes ([`MskStandIn::notes`]) and cannot emulate it.
//! - Faults: [`MskStandIn::throttle`] answers the next requests 429.

mod sigv4;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{json, Map, Value};

use super::http::{HttpRequest, HttpServer, Reply};
use crate::client::msk_connect::{parse_properties, SERVICE};
use crate::client::{Connect, HttpOptions, HttpTransport};

pub use sigv4::{Refusal, TestKey, Verifier};

/// How to run the stand-in.
#[derive(Clone)]
pub struct MskStandInConfig {
    pub region: String,
    pub account: String,
    /// Access key id -> secret (and session token) that may sign requests.
    pub keys: BTreeMap<String, TestKey>,
    /// The Kafka Connect worker that runs the connectors.
    pub worker_url: String,
    /// The worker's `offset.storage.topic`, to tell which worker configurations match it.
    pub worker_offsets_topic: Option<String>,
    /// Connectors a `ListConnectors` page holds when `maxResults` is not given.
    pub page_size: usize,
    /// Where to listen: `127.0.0.1:0` for any free port.
    pub bind: String,
}

impl MskStandInConfig {
    pub fn new(worker_url: impl Into<String>) -> Self {
        MskStandInConfig {
            region: "us-east-1".into(),
            account: "123456789012".into(),
            keys: BTreeMap::new(),
            worker_url: worker_url.into(),
            worker_offsets_topic: None,
            page_size: 10,
            bind: "127.0.0.1:0".into(),
        }
    }

    /// Accepts requests signed with `key_id` and `secret`.
    pub fn key(mut self, key_id: &str, secret: &str) -> Self {
        let key = TestKey {
            secret: secret.into(),
            session_token: None,
        };
        self.keys.insert(key_id.into(), key);
        self
    }
}

/// One request as the stand-in answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub method: String,
    pub target: String,
    pub status: u16,
}

struct Managed {
    arn: String,
    name: String,
    id: String,
    version: String,
    created: String,
    state: &'static str,
    state_description: Option<Value>,
    /// The members of the `CreateConnector` request that describe it.
    described: Map<String, Value>,
}

struct WorkerConfig {
    arn: String,
    name: String,
    description: Option<String>,
    created: String,
    content: String,
}

#[derive(Default)]
struct Store {
    connectors: Vec<Managed>,
    worker_configs: Vec<WorkerConfig>,
    created: u64,
}

struct Shared {
    config: MskStandInConfig,
    verifier: Verifier,
    worker: Connect,
    store: Mutex<Store>,
    throttled: AtomicUsize,
    log: Mutex<Vec<Logged>>,
    notes: Mutex<Vec<String>>,
    /// Receives each note as it is made (the binary prints them).
    sink: Option<NoteSink>,
}

/// The running stand-in; stops when dropped.
pub struct MskStandIn {
    server: HttpServer,
    shared: Arc<Shared>,
}

type Answer = (u16, Value, Option<&'static str>);

/// Receives each note the stand-in makes.
pub type NoteSink = Box<dyn Fn(&str) + Send + Sync>;

fn error(status: u16, error_type: &'static str, message: impl Into<String>) -> Answer {
    (
        status,
        json!({ "message": message.into() }),
        Some(error_type),
    )
}

fn ok(body: Value) -> Answer {
    (200, body, None)
}

/// The members of a `CreateConnector` request that `DescribeConnector` shows.
const DESCRIBED: &[&str] = &[
    "capacity",
    "connectorConfiguration",
    "connectorDescription",
    "connectorName",
    "kafkaCluster",
    "kafkaClusterClientAuthentication",
    "kafkaClusterEncryptionInTransit",
    "kafkaConnectVersion",
    "logDelivery",
    "networkType",
    "plugins",
    "serviceExecutionRoleArn",
    "workerConfiguration",
];

/// The members `CreateConnector` requires (the model's `required`).
const REQUIRED: &[&str] = &[
    "capacity",
    "connectorConfiguration",
    "connectorName",
    "kafkaCluster",
    "kafkaClusterClientAuthentication",
    "kafkaClusterEncryptionInTransit",
    "kafkaConnectVersion",
    "plugins",
    "serviceExecutionRoleArn",
];

impl MskStandIn {
    pub fn start(config: MskStandInConfig) -> std::io::Result<MskStandIn> {
        Self::start_with_sink(config, None)
    }

    /// Starts it, each note also given to `sink` as it is made.
    pub fn start_with_sink(
        config: MskStandInConfig,
        sink: Option<NoteSink>,
    ) -> std::io::Result<MskStandIn> {
        let transport = HttpTransport::new(HttpOptions {
            urls: vec![config.worker_url.clone()],
            auth: None,
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(30),
            tls: Default::default(),
        })
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        let verifier = Verifier {
            region: config.region.clone(),
            service: SERVICE.into(),
            keys: config.keys.clone(),
            max_skew: Duration::from_secs(300),
        };
        let shared = Arc::new(Shared {
            verifier,
            worker: Connect::new(transport),
            store: Mutex::default(),
            throttled: AtomicUsize::new(0),
            log: Mutex::default(),
            notes: Mutex::default(),
            sink,
            config,
        });
        let handler_shared = shared.clone();
        let server = HttpServer::start_on(
            &shared.config.bind,
            Arc::new(move |req| handle(&handler_shared, req)),
        )?;
        Ok(MskStandIn { server, shared })
    }

    /// The stand-in's base URL: the endpoint to give the client.
    pub fn url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// The region signatures must be scoped to.
    pub fn region(&self) -> &str {
        &self.shared.config.region
    }

    /// Answers the next `n` requests (once their signature is checked) with 429
    /// `TooManyRequestsException`.
    pub fn throttle(&self, n: usize) {
        self.shared.throttled.store(n, Ordering::SeqCst);
    }

    /// Every request answered so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.shared.log.lock().expect("log lock").clone()
    }

    /// What the stand-in could not do as MSK Connect would (a connector's offsets kept in the
    /// worker's topic instead of one of its own).
    pub fn notes(&self) -> Vec<String> {
        self.shared.notes.lock().expect("notes lock").clone()
    }

    /// Stores a worker configuration, as `CreateWorkerConfiguration` would; returns its ARN.
    pub fn add_worker_configuration(&self, name: &str, properties: &str) -> String {
        use base64::Engine;
        let content = base64::engine::general_purpose::STANDARD.encode(properties);
        let body = json!({ "name": name, "propertiesFileContent": content });
        let (status, answer, _) = create_worker_configuration(&self.shared, &body);
        assert_eq!(status, 200, "worker configuration {name}: {answer}");
        answer["workerConfigurationArn"]
            .as_str()
            .expect("an ARN")
            .to_string()
    }
}

fn handle(shared: &Shared, req: HttpRequest) -> Reply {
    let (status, body, error_type) = answer(shared, &req);
    shared.log.lock().expect("log lock").push(Logged {
        method: req.method.clone(),
        target: req.target.clone(),
        status,
    });
    let mut headers = vec![(
        "x-amzn-RequestId".to_string(),
        format!("{:08x}-standin", shared.log.lock().map_or(0, |l| l.len())),
    )];
    if let Some(t) = error_type {
        headers.push(("x-amzn-ErrorType".to_string(), t.to_string()));
    }
    Reply::Respond {
        status,
        body: Some(body.to_string()),
        headers,
    }
}

fn answer(shared: &Shared, req: &HttpRequest) -> Answer {
    let signed = sigv4::Signed {
        method: &req.method,
        target: &req.target,
        headers: &req.headers,
        body: &req.body,
    };
    if let Err(r) = shared.verifier.verify(&signed, SystemTime::now()) {
        return error(r.status, r.error_type, r.message);
    }
    let throttled = shared
        .throttled
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    if throttled.is_ok() {
        return error(429, "TooManyRequestsException", "Rate exceeded");
    }
    let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
    let query: BTreeMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let body = || -> Result<Value, Answer> {
        serde_json::from_slice(&req.body).map_err(|e| {
            error(
                400,
                "BadRequestException",
                format!("Invalid request body: {e}"),
            )
        })
    };
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (req.method.as_str(), segs.as_slice()) {
        ("GET", ["v1", "connectors"]) => list_connectors(shared, &query),
        ("POST", ["v1", "connectors"]) => match body() {
            Ok(b) => create_connector(shared, &b),
            Err(e) => e,
        },
        ("GET", ["v1", "connectors", arn]) => describe_connector(shared, arn),
        ("DELETE", ["v1", "connectors", arn]) => {
            delete_connector(shared, arn, query.get("currentVersion"))
        }
        ("GET", ["v1", "worker-configurations"]) => list_worker_configurations(shared),
        ("POST", ["v1", "worker-configurations"]) => match body() {
            Ok(b) => create_worker_configuration(shared, &b),
            Err(e) => e,
        },
        ("GET", ["v1", "worker-configurations", arn]) => describe_worker_configuration(shared, arn),
        _ => error(
            404,
            "UnknownOperationException",
            "The MSK Connect stand-in does not serve this operation",
        ),
    }
}

fn now_iso() -> String {
    crate::clock::rfc3339(SystemTime::now())
}

/// A short, stable, different-each-time token of `len` upper-case letters and digits.
fn token(seed: &str, n: u64, len: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{seed}/{n}").as_bytes());
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    digest
        .iter()
        .take(len)
        .map(|b| alphabet[usize::from(*b) % alphabet.len()] as char)
        .collect()
}

/// A UUID-shaped id.
fn uuid_like(seed: &str, n: u64) -> String {
    use sha2::{Digest, Sha256};
    let h = hex::encode(Sha256::digest(format!("{seed}#{n}").as_bytes()));
    format!(
        "{}-{}-4{}-8{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

/// Reads the worker's view of `m` and moves its state on: CREATING -> RUNNING or FAILED,
/// RUNNING -> FAILED, DELETING -> gone (returns false).
fn refresh(shared: &Shared, m: &mut Managed) -> bool {
    match m.state {
        "CREATING" | "RUNNING" => {
            let Ok(status) = shared.worker.status(&m.name) else {
                return true;
            };
            let failed_task = status.tasks.iter().find(|t| t.state == "FAILED");
            let trace = if status.raw_state == "FAILED" {
                Some(status.trace.clone().unwrap_or_default())
            } else if m.state == "CREATING" {
                failed_task.map(|t| t.trace.clone().unwrap_or_default())
            } else {
                None
            };
            if let Some(trace) = trace {
                m.state = "FAILED";
                let first = trace.lines().next().unwrap_or("").to_string();
                m.state_description = Some(json!({
                    "code": "CONNECTOR_FAILED",
                    "message": format!("The connector failed on its worker: {first}"),
                }));
            } else if status.raw_state == "RUNNING" {
                m.state = "RUNNING";
            }
            true
        }
        "DELETING" => !matches!(shared.worker.status(&m.name), Err(e) if e.is_not_found()),
        _ => true,
    }
}

fn refresh_all(shared: &Shared, store: &mut Store) {
    store.connectors.retain_mut(|m| refresh(shared, m));
}

fn description(m: &Managed, full: bool) -> Value {
    let mut out = Map::new();
    for (k, v) in &m.described {
        if full || (k != "connectorConfiguration") {
            out.insert(k.clone(), v.clone());
        }
    }
    out.insert("connectorArn".into(), json!(m.arn));
    out.insert("connectorState".into(), json!(m.state));
    out.insert("currentVersion".into(), json!(m.version));
    out.insert("creationTime".into(), json!(m.created));
    if full {
        if let Some(d) = &m.state_description {
            out.insert("stateDescription".into(), d.clone());
        }
    }
    Value::Object(out)
}

fn not_found(arn: &str) -> Answer {
    error(
        404,
        "NotFoundException",
        format!("The resource {arn} was not found."),
    )
}

fn list_connectors(shared: &Shared, query: &BTreeMap<String, String>) -> Answer {
    let mut store = shared.store.lock().expect("store lock");
    refresh_all(shared, &mut store);
    let prefix = query.get("connectorNamePrefix").map_or("", String::as_str);
    let size = match query.get("maxResults").map(|m| m.parse::<usize>()) {
        None => shared.config.page_size,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        Some(_) => {
            return error(
                400,
                "BadRequestException",
                "maxResults must be between 1 and 100",
            )
        }
    };
    let start = match query.get("nextToken") {
        None => 0,
        Some(t) => match decode_token(t) {
            Some(n) => n,
            None => return error(400, "BadRequestException", "The nextToken is not valid."),
        },
    };
    let matching: Vec<&Managed> = store
        .connectors
        .iter()
        .filter(|m| m.name.starts_with(prefix))
        .collect();
    let page: Vec<Value> = matching
        .iter()
        .skip(start)
        .take(size)
        .map(|m| description(m, false))
        .collect();
    let mut body = json!({ "connectors": page });
    if start + size < matching.len() {
        body["nextToken"] = json!(encode_token(start + size));
    }
    ok(body)
}

fn encode_token(n: usize) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("standin:{n}"))
}

fn decode_token(t: &str) -> Option<usize> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD.decode(t).ok()?;
    String::from_utf8(raw)
        .ok()?
        .strip_prefix("standin:")?
        .parse()
        .ok()
}

/// The connector `arn` names, its state read from the worker first: `Err` a 404 when there
/// is none (or it is gone now).
fn found<'a>(shared: &Shared, store: &'a mut Store, arn: &str) -> Result<&'a mut Managed, Answer> {
    let Some(i) = store.connectors.iter().position(|m| m.arn == arn) else {
        return Err(not_found(arn));
    };
    if !refresh(shared, &mut store.connectors[i]) {
        store.connectors.remove(i);
        return Err(not_found(arn));
    }
    Ok(&mut store.connectors[i])
}

fn describe_connector(shared: &Shared, arn: &str) -> Answer {
    let mut store = shared.store.lock().expect("store lock");
    match found(shared, &mut store, arn) {
        Ok(m) => ok(description(m, true)),
        Err(e) => e,
    }
}

fn create_connector(shared: &Shared, body: &Value) -> Answer {
    let Some(request) = body.as_object() else {
        return error(
            400,
            "BadRequestException",
            "The request body must be an object",
        );
    };
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|k| request.get(*k).is_none_or(Value::is_null))
        .collect();
    if !missing.is_empty() {
        return error(
            400,
            "BadRequestException",
            format!("Missing required members: {}", missing.join(", ")),
        );
    }
    let Some(name) = request["connectorName"].as_str().map(str::to_string) else {
        return error(400, "BadRequestException", "connectorName must be a string");
    };
    let config: Option<BTreeMap<String, String>> =
        serde_json::from_value(request["connectorConfiguration"].clone()).ok();
    let Some(config) = config else {
        return error(
            400,
            "BadRequestException",
            "connectorConfiguration must map strings to strings",
        );
    };
    let mut store = shared.store.lock().expect("store lock");
    refresh_all(shared, &mut store);
    if store.connectors.iter().any(|m| m.name == name) {
        return error(
            409,
            "ConflictException",
            format!("A connector with the name {name} already exists."),
        );
    }
    // The worker configuration, and whether its offsets topic is the worker's.
    let pinned = match request.get("workerConfiguration") {
        None | Some(Value::Null) => None,
        Some(wc) => {
            let arn = wc["workerConfigurationArn"].as_str().unwrap_or("");
            let Some(found) = store.worker_configs.iter().find(|w| w.arn == arn) else {
                return not_found(arn);
            };
            if wc["revision"].as_i64() != Some(1) {
                return error(
                    400,
                    "BadRequestException",
                    format!(
                        "Worker configuration {arn} has no revision {}",
                        wc["revision"]
                    ),
                );
            }
            properties_of(&found.content).remove("offset.storage.topic")
        }
    };
    store.created += 1;
    let n = store.created;
    let id = format!("{}-{}", uuid_like(&name, n), n % 10);
    let arn = format!(
        "arn:aws:kafkaconnect:{}:{}:connector/{name}/{id}",
        shared.config.region, shared.config.account
    );
    if let Err(e) = shared.worker.create(&name, &config, None) {
        let message = e
            .message()
            .unwrap_or("the connector could not be created")
            .to_string();
        return error(400, "BadRequestException", message);
    }
    if shared.config.worker_offsets_topic.is_some() && pinned != shared.config.worker_offsets_topic
    {
        let note = format!(
            "connector {name}: its worker configuration does not pin offset.storage.topic to \
             the worker's {}: on MSK Connect its offsets would go to \
             __amazon_msk_connect_offsets_{name}_{id}; here they go to the worker's topic",
            shared.config.worker_offsets_topic.as_deref().unwrap_or("")
        );
        if let Some(sink) = &shared.sink {
            sink(&note);
        }
        shared.notes.lock().expect("notes lock").push(note);
    }
    let described: Map<String, Value> = request
        .iter()
        .filter(|(k, _)| DESCRIBED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    store.connectors.push(Managed {
        arn: arn.clone(),
        version: token(&arn, n, 13),
        name: name.clone(),
        id,
        created: now_iso(),
        state: "CREATING",
        state_description: None,
        described,
    });
    ok(json!({ "connectorArn": arn, "connectorName": name, "connectorState": "CREATING" }))
}

fn delete_connector(shared: &Shared, arn: &str, version: Option<&String>) -> Answer {
    let mut store = shared.store.lock().expect("store lock");
    let m = match found(shared, &mut store, arn) {
        Ok(m) => m,
        Err(e) => return e,
    };
    if let Some(v) = version {
        if *v != m.version {
            return error(
                400,
                "BadRequestException",
                format!("The currentVersion {v} does not match the connector's current version."),
            );
        }
    }
    if m.state != "DELETING" {
        match shared.worker.delete(&m.name) {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                let message = e.message().unwrap_or("the connector could not be deleted");
                return error(500, "InternalServerErrorException", message.to_string());
            }
        }
        m.state = "DELETING";
        m.state_description = None;
    }
    ok(json!({ "connectorArn": m.arn, "connectorState": "DELETING" }))
}

fn properties_of(content: &str) -> BTreeMap<String, String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(content)
        .unwrap_or_default();
    parse_properties(&String::from_utf8_lossy(&bytes))
}

fn worker_configuration_summary(w: &WorkerConfig, with_content: bool) -> Value {
    let mut revision = json!({ "creationTime": w.created, "revision": 1 });
    if let Some(d) = &w.description {
        revision["description"] = json!(d);
    }
    if with_content {
        revision["propertiesFileContent"] = json!(w.content);
    }
    let mut out = json!({
        "creationTime": w.created,
        "latestRevision": revision,
        "name": w.name,
        "workerConfigurationArn": w.arn,
        "workerConfigurationState": "ACTIVE",
    });
    if let Some(d) = &w.description {
        out["description"] = json!(d);
    }
    out
}

fn create_worker_configuration(shared: &Shared, body: &Value) -> Answer {
    let (Some(name), Some(content)) = (
        body["name"].as_str(),
        body["propertiesFileContent"].as_str(),
    ) else {
        return error(
            400,
            "BadRequestException",
            "Missing required members: name, propertiesFileContent",
        );
    };
    use base64::Engine;
    if base64::engine::general_purpose::STANDARD
        .decode(content)
        .is_err()
    {
        return error(
            400,
            "BadRequestException",
            "propertiesFileContent must be base64",
        );
    }
    let mut store = shared.store.lock().expect("store lock");
    if store.worker_configs.iter().any(|w| w.name == name) {
        return error(
            409,
            "ConflictException",
            format!("A worker configuration with the name {name} already exists."),
        );
    }
    store.created += 1;
    let id = format!("{}-{}", uuid_like(name, store.created), store.created % 10);
    let w = WorkerConfig {
        arn: format!(
            "arn:aws:kafkaconnect:{}:{}:worker-configuration/{name}/{id}",
            shared.config.region, shared.config.account
        ),
        name: name.to_string(),
        description: body["description"].as_str().map(str::to_string),
        created: now_iso(),
        content: content.to_string(),
    };
    let answer = worker_configuration_summary(&w, false);
    store.worker_configs.push(w);
    ok(answer)
}

fn describe_worker_configuration(shared: &Shared, arn: &str) -> Answer {
    let store = shared.store.lock().expect("store lock");
    match store.worker_configs.iter().find(|w| w.arn == arn) {
        Some(w) => ok(worker_configuration_summary(w, true)),
        None => not_found(arn),
    }
}

fn list_worker_configurations(shared: &Shared) -> Answer {
    let store = shared.store.lock().expect("store lock");
    let all: Vec<Value> = store
        .worker_configs
        .iter()
        .map(|w| worker_configuration_summary(w, false))
        .collect();
    ok(json!({ "workerConfigurations": all }))
}
