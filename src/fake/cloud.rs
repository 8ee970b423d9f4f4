//! The fake's Confluent Cloud mode: the same cluster (connectors, offsets, request log, fault
//! rules and expectations) served as Confluent Cloud's managed connectors
//! (the service's published contract, as docs/confluent-cloud.md describes it).
//!
//! - Every route lives under `/connect/v1/environments/{env}/clusters/{lkc}`; another
//!   environment or cluster, and every path outside it (`GET /` included), is a 404.
//! - Errors are `{"error": {"code", "message"}}`, fault rules' bodies included.
//! - With an API key set, every request needs its HTTP Basic credentials (401 otherwise,
//!   naming nothing secret).
//! - Served: the listing (`?expand=id,info,status`), status, config (read and write), pause,
//!   resume, create (with `offsets`: the connector starts there), delete, the offsets read
//!   (`metadata.observed_at`), `POST .../offsets/request` and `GET .../offsets/request/status`.
//!   What Connect has and the service has not answers 404 (`/stop`, `/tasks`, `/restart`,
//!   `GET /connectors/{n}`, the plugins) or 405 (`PATCH`/`DELETE .../offsets`).
//! - An alter request is accepted at once (202) and moves on one status read at a time:
//!   `PENDING` for [`CloudMode::phase_reads`] reads, then `PENDING_VALIDATION` (or a phase
//!   set with `unknown_phase`) as many, then `APPLIED` (or `FAILED`). Meanwhile the
//!   connector shows PAUSED and a second request is refused (409). Once applied the offsets
//!   change, the state the connector had comes back, and the status carries
//!   `previous_offsets` and `applied_at`.
//! - Offsets are observed: a read answers them with the time they were observed, now by
//!   default; a connector's stale reads answer an observation older than
//!   [`STALE_AGE`], of the offsets before the last change.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use super::cloud_state::AlterRecord;
use super::offsets;
use super::routes::{self, Body, Response};
use super::state::{offsets_json, write_offsets_array, Cluster, OffsetEntry, State};

/// How old a stale observation is: older than the 120 s the service's CLI accepts.
pub const STALE_AGE: Duration = Duration::from_secs(300);

/// What the service says when a connector already has an alter request in flight.
pub const PENDING_REQUEST: &str = "An offsets request is already pending for this connector: \
     wait for it to be applied or to fail before sending another";

/// The connector id the service shows for a name: `lcc-` and six characters, stable.
pub fn connector_id(name: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let id: String = (0..6)
        .map(|i| digits[((hash >> (i * 6)) % 36) as usize] as char)
        .collect();
    format!("lcc-{id}")
}

/// `t` to the whole second.
fn whole_seconds(t: SystemTime) -> SystemTime {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// `2024-02-20 15:14:19+00:00`: the spelling of `observed_at` and `requested_at`.
pub fn spaced_time(t: SystemTime) -> String {
    let text = crate::clock::rfc3339(t);
    let text = text.replacen('T', " ", 1);
    format!("{}+00:00", text.trim_end_matches('Z'))
}

/// `2024-02-20T15:14:20+0000`: the spelling of `applied_at`.
pub fn compact_time(t: SystemTime) -> String {
    let text = crate::clock::rfc3339(t);
    format!("{}+0000", text.trim_end_matches('Z'))
}

/// The service's error body.
pub fn error_body(status: u16, message: &str) -> Value {
    json!({ "error": { "code": status, "message": message } })
}

fn error(status: u16, message: impl AsRef<str>) -> Response {
    (
        status,
        Some(Body::Json(error_body(status, message.as_ref()))),
    )
}

fn not_found(name: &str) -> Response {
    error(404, format!("Connector {name} not found"))
}

/// Rewrites Connect's `{"error_code","message"}` in the service's shape; other bodies pass.
pub(crate) fn translate_error(body: Value) -> Value {
    match (body.get("error_code"), body.get("message")) {
        (Some(code), Some(Value::String(message))) => {
            let code = code.as_u64().unwrap_or(500);
            json!({ "error": { "code": code, "message": message } })
        }
        _ => body,
    }
}

/// What the service shows for a secret value: the value masked.
pub const MASKED: &str = "****************";

/// Masks the values of `config` whose keys look secret, as the service answers a managed
/// connector's config (its secrets never leave it).
fn mask_secrets(config: &mut Value) {
    if let Some(map) = config.as_object_mut() {
        for (key, value) in map.iter_mut() {
            if crate::model::secrets::looks_secret(key) && value.is_string() {
                *value = json!(MASKED);
            }
        }
    }
}

/// A config answer (`GET .../config`) with its secrets masked.
fn masked_config(response: Response) -> Response {
    match response {
        (200, Some(Body::Json(mut config))) => {
            mask_secrets(&mut config);
            (200, Some(Body::Json(config)))
        }
        other => other,
    }
}

fn translate(response: Response) -> Response {
    match response {
        (status, Some(Body::Json(body))) if status >= 400 => {
            (status, Some(Body::Json(translate_error(body))))
        }
        other => other,
    }
}

/// Serves one request in Confluent Cloud mode.
pub(crate) fn handle(
    cluster: &mut Cluster,
    method: &str,
    target: &str,
    raw: &[u8],
    parsed: Option<Value>,
    authorization: Option<&str>,
) -> Response {
    let Some(cloud) = cluster.cloud.as_ref() else {
        return error(500, "fake: not in Confluent Cloud mode");
    };
    if let Some(expected) = &cloud.authorization {
        if authorization != Some(expected.as_str()) {
            return error(401, "Unauthorized");
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(routes::percent_decode)
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let rest = match segs.as_slice() {
        ["connect", "v1", "environments", env, "clusters", lkc, rest @ ..] => {
            if *env != cloud.ids.environment || *lkc != cloud.ids.kafka_cluster {
                return error(
                    404,
                    format!("Kafka cluster {lkc} not found in environment {env}"),
                );
            }
            rest
        }
        _ => return error(404, "Not Found"),
    };
    let body = match routes::parse_body(method, raw, parsed) {
        Ok(body) => body,
        Err(response) => return translate(response),
    };
    let connect_target = |rest: &[&str]| {
        let path: String = rest.iter().map(|s| format!("/{}", encode(s))).collect();
        match query {
            "" => path,
            q => format!("{path}?{q}"),
        }
    };
    match (method, rest) {
        ("GET", ["connectors"]) if !query.is_empty() => list(cluster, query),
        ("GET", ["connectors", _, "config"]) => masked_config(translate(routes::handle(
            cluster,
            method,
            &connect_target(rest),
            raw,
            Some(body),
        ))),
        ("GET", ["connectors"])
        | ("GET", ["connectors", _, "status"])
        | ("PUT", ["connectors", _, "config"])
        | ("DELETE", ["connectors", _]) => {
            let target = connect_target(rest);
            if let ("DELETE", ["connectors", name]) = (method, rest) {
                if let Some(cloud) = cluster.cloud.as_mut() {
                    if let Some(c) = cloud.connectors.get_mut(*name) {
                        c.request = None;
                    }
                }
            }
            translate(routes::handle(cluster, method, &target, raw, Some(body)))
        }
        ("POST", ["connectors"]) => create(cluster, &body),
        ("PUT", ["connectors", name, verb @ ("pause" | "resume")]) => {
            pause_or_resume(cluster, name, verb, &connect_target(rest))
        }
        ("GET", ["connectors", name, "offsets"]) => read_offsets(cluster, name),
        ("POST", ["connectors", name, "offsets", "request"]) => request(cluster, name, &body),
        ("GET", ["connectors", name, "offsets", "request", "status"]) => {
            request_status(cluster, name)
        }
        ("PATCH" | "DELETE", ["connectors", _, "offsets"]) => {
            error(405, "HTTP 405 Method Not Allowed")
        }
        (_, rest) if known_path(rest) => error(405, "HTTP 405 Method Not Allowed"),
        _ => error(404, "Not Found"),
    }
}

fn known_path(rest: &[&str]) -> bool {
    matches!(
        rest,
        ["connectors"]
            | ["connectors", _]
            | [
                "connectors",
                _,
                "status" | "config" | "pause" | "resume" | "offsets"
            ]
            | ["connectors", _, "offsets", "request"]
            | ["connectors", _, "offsets", "request", "status"]
    )
}

/// A decoded path segment, encoded again for the Connect routes.
fn encode(segment: &str) -> String {
    crate::client::connector_path(segment)["/connectors/".len()..].to_string()
}

fn list(cluster: &mut Cluster, query: &str) -> Response {
    // `expand=id,info,status` (the comma possibly escaped), or the parameter repeated.
    let expand: Vec<String> = query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("expand="))
        .flat_map(|v| {
            let v = routes::percent_decode(v);
            v.split(',')
                .map(|e| e.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let worker = cluster.worker_id.clone();
    let mut out = Map::new();
    for (name, connector) in &mut cluster.connectors {
        let mut entry = Map::new();
        if expand.iter().any(|e| e == "id") {
            entry.insert(
                "id".into(),
                json!({ "id": connector_id(name), "id_type": "ID" }),
            );
        }
        if expand.iter().any(|e| e == "info") {
            let mut info = connector.info_json();
            if let Some(config) = info.get_mut("config") {
                mask_secrets(config);
            }
            entry.insert("info".into(), info);
        }
        if expand.iter().any(|e| e == "status") {
            let shown = connector.observe();
            entry.insert("status".into(), connector.status_json(shown, &worker));
        }
        out.insert(name.clone(), Value::Object(entry));
    }
    (200, Some(Body::Json(Value::Object(out))))
}

fn create(cluster: &mut Cluster, body: &Value) -> Response {
    if body.get("initial_state").is_some() {
        return error(400, "Unrecognized field \"initial_state\"");
    }
    let Some(name) = body.get("name").and_then(Value::as_str) else {
        return error(400, "Connector name must be specified");
    };
    let config = match routes::config_map(body.get("config").unwrap_or(&Value::Null)) {
        Ok(config) => config,
        Err(response) => return translate(response),
    };
    if cluster.connectors.contains_key(name) {
        return error(409, format!("Connector {name} already exists"));
    }
    let spec = match routes::spec_from(cluster, name, config) {
        Ok(spec) => spec,
        Err(response) => return translate(response),
    };
    let offsets = match body.get("offsets") {
        None | Some(Value::Null) => None,
        Some(list) => {
            let wrapped = json!({ "offsets": list });
            match offsets::parse_patch(spec.kind, &wrapped) {
                Ok(entries) => Some(entries),
                Err((status, message)) => return error(status, message),
            }
        }
    };
    cluster.add(&spec.state(State::Running));
    if let Some(entries) = offsets {
        let start: Vec<OffsetEntry> = entries.into_iter().filter(|(_, o)| !o.is_null()).collect();
        cluster.offsets.insert(name.to_string(), start);
    }
    let mut info = cluster.connectors[name].info_json();
    info["tasks"] = json!([]);
    (201, Some(Body::Json(info)))
}

fn pause_or_resume(cluster: &mut Cluster, name: &str, verb: &str, target: &str) -> Response {
    let wanted = if verb == "pause" {
        State::Paused
    } else {
        State::Running
    };
    if cluster.connectors.contains_key(name) {
        if let Some(cloud) = cluster.cloud.as_mut() {
            let pending = cloud
                .connectors
                .get_mut(name)
                .and_then(|c| c.request.as_mut())
                .filter(|r| !r.is_final());
            if let Some(request) = pending {
                // The service puts the connector in this state once the change is done.
                request.restore = wanted;
                return (202, None);
            }
        }
    }
    translate(routes::handle(cluster, "PUT", target, b"", None))
}

fn read_offsets(cluster: &mut Cluster, name: &str) -> Response {
    if !cluster.connectors.contains_key(name) {
        return not_found(name);
    }
    let current = cluster.offsets.get(name).cloned().unwrap_or_default();
    let Some(cloud) = cluster.cloud.as_mut() else {
        return not_found(name);
    };
    let now = cloud.now();
    let state = cloud.connector(name);
    let (entries, observed_at) = if state.stale_reads > 0 {
        state.stale_reads -= 1;
        let old = state.before_change.clone().unwrap_or(current);
        (old, whole_seconds(now - STALE_AGE))
    } else {
        let mut at = whole_seconds(now);
        if let Some(applied) = state.applied_at {
            // Observed after the change, never within its second.
            at = at.max(applied + Duration::from_secs(1));
        }
        (current, at)
    };
    state.observed_at = Some(observed_at);
    let mut out = String::with_capacity(96 + entries.len() * 96);
    out.push_str("{\"name\":");
    out.push_str(&Value::String(name.to_string()).to_string());
    out.push_str(",\"id\":\"");
    out.push_str(&connector_id(name));
    out.push_str("\",\"offsets\":");
    write_offsets_array(&entries, &mut out);
    out.push_str(",\"metadata\":{\"observed_at\":\"");
    out.push_str(&spaced_time(observed_at));
    out.push_str("\"}}");
    (200, Some(Body::Text(out)))
}

fn request(cluster: &mut Cluster, name: &str, body: &Value) -> Response {
    let Some(connector) = cluster.connectors.get(name) else {
        return not_found(name);
    };
    let kind = connector.kind;
    let restore = connector.target;
    let type_ = body.get("type").and_then(Value::as_str).unwrap_or("");
    let updates = match type_ {
        "PATCH" => match offsets::parse_patch(kind, body) {
            Ok(updates) => updates,
            Err((status, message)) => return error(status, message),
        },
        "DELETE" => match body.get("offsets") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) if list.is_empty() => Vec::new(),
            Some(Value::Array(list)) => {
                // Only the partitions count: each is reset to a new connector's state.
                let partitions: Vec<Value> = list
                    .iter()
                    .map(|e| json!({ "partition": e.get("partition").cloned().unwrap_or(Value::Null), "offset": null }))
                    .collect();
                match offsets::parse_patch(kind, &json!({ "offsets": partitions })) {
                    Ok(updates) => updates,
                    Err((status, message)) => return error(status, message),
                }
            }
            Some(other) => return error(400, format!("Cannot deserialize offsets from {other}")),
        },
        other => {
            return error(
                400,
                format!("The request type must be PATCH or DELETE, got `{other}`"),
            )
        }
    };
    let Some(cloud) = cluster.cloud.as_mut() else {
        return not_found(name);
    };
    let now = cloud.now();
    let state = cloud.connector(name);
    if state.request.as_ref().is_some_and(|r| !r.is_final()) {
        return error(409, PENDING_REQUEST);
    }
    state.accepted += 1;
    let record = AlterRecord {
        kind: type_.to_string(),
        updates,
        requested_at: whole_seconds(now),
        status_reads: 0,
        phase: "PENDING".into(),
        message: "The request to alter the offsets is pending.".into(),
        previous_offsets: None,
        applied_at: None,
        restore,
    };
    let answer = request_json(name, &record);
    state.request = Some(record);
    if let Some(connector) = cluster.connectors.get_mut(name) {
        // The service stops the connector for the change; it shows PAUSED meanwhile.
        connector.force_state(State::Paused);
    }
    (202, Some(Body::Json(answer)))
}

/// A request as the 202 and the status show it. Its `id` is the connector's (Confluent's
/// model: "The ID of the connector"), the same for every request of that connector: a
/// request is told from another by its type, offsets and `requested_at`, not by its id.
fn request_json(name: &str, record: &AlterRecord) -> Value {
    json!({
        "id": connector_id(name),
        "name": name,
        "type": record.kind,
        "offsets": offsets_json(&record.updates),
        "requested_at": spaced_time(record.requested_at),
    })
}

fn request_status(cluster: &mut Cluster, name: &str) -> Response {
    if !cluster.connectors.contains_key(name) {
        return not_found(name);
    }
    advance(cluster, name, false);
    let Some(cloud) = cluster.cloud.as_mut() else {
        return not_found(name);
    };
    let Some(record) = cloud.connector(name).request.as_ref() else {
        return error(
            404,
            format!("No offsets request found for connector {name}"),
        );
    };
    let body = json!({
        "request": request_json(name, record),
        "status": { "phase": record.phase, "message": record.message },
        "previous_offsets": record.previous_offsets.as_deref().map(offsets_json),
        "applied_at": record.applied_at.map(compact_time),
    });
    (200, Some(Body::Json(body)))
}

/// One status read of `name`'s last request moves it on a phase when due; `to_end` moves it
/// as far as it goes (a stuck request stays PENDING).
pub(crate) fn advance(cluster: &mut Cluster, name: &str, to_end: bool) {
    let Some(cloud) = cluster.cloud.as_mut() else {
        return;
    };
    let phase_reads = cloud.phase_reads;
    let faults = cloud.faults.get(name).cloned().unwrap_or_default();
    let now = whole_seconds(cloud.now());
    let Some(record) = cloud.connector(name).request.as_mut() else {
        return;
    };
    if record.is_final() {
        return;
    }
    record.status_reads = if to_end {
        u32::MAX
    } else {
        record.status_reads.saturating_add(1)
    };
    let reads = record.status_reads;
    if faults.stuck || reads <= phase_reads {
        record.phase = "PENDING".into();
        record.message = "The request to alter the offsets is pending.".into();
        return;
    }
    if reads <= phase_reads.saturating_mul(2) {
        record.phase = faults
            .unknown_phase
            .clone()
            .unwrap_or_else(|| "PENDING_VALIDATION".into());
        record.message = "The requested offsets are being validated.".into();
        return;
    }
    let restore = record.restore;
    if let Some(message) = faults.fails {
        record.phase = "FAILED".into();
        record.message = message;
    } else {
        let before = cluster.offsets.get(name).cloned().unwrap_or_default();
        let mut after = before.clone();
        if record.kind == "DELETE" && record.updates.is_empty() {
            after.clear();
        } else {
            offsets::merge(&mut after, record.updates.clone());
        }
        record.phase = "APPLIED".into();
        record.message = if record.kind == "DELETE" {
            routes::RESET_EXTERNAL.into()
        } else {
            routes::ALTERED_EXTERNAL.into()
        };
        record.previous_offsets = Some(before.clone());
        record.applied_at = Some(now);
        let state = cloud.connector(name);
        state.before_change = Some(before);
        state.applied_at = Some(now);
        cluster.offsets.insert(name.to_string(), after);
    }
    if let Some(connector) = cluster.connectors.get_mut(name) {
        connector.force_state(restore);
    }
}
