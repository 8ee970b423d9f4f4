//! The Connect REST endpoints, served from a `Cluster`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::faults::error_body;
use super::offsets;
use super::state::{offsets_text, Cluster, ConnectorSpec, Kind, State};
use super::state::{plugin, plugin_list};

/// A response: status and optional JSON body.
pub(crate) type Response = (u16, Option<Body>);

/// A response body: a JSON value, or JSON text already written (large offset lists are
/// written straight from the stored entries, without copying them into a value first).
pub(crate) enum Body {
    Json(Value),
    Text(String),
}

impl Body {
    pub fn into_text(self) -> String {
        match self {
            Body::Json(value) => value.to_string(),
            Body::Text(text) => text,
        }
    }
}

const STOPPED_REQUIRED: &str = "Connectors must be in the STOPPED state before their offsets can \
     be modified. This can be done for the specified connector by issuing a 'PUT' request to the \
     '/connectors/{name}/stop' endpoint";
const ALTERED: &str = "The offsets for this connector have been altered successfully";
const RESET: &str = "The offsets for this connector have been reset successfully";
pub(crate) const ALTERED_EXTERNAL: &str =
    "The Connect framework-managed offsets for this connector have \
     been altered successfully. However, if this connector manages offsets externally, they will \
     need to be manually altered in the system that the connector uses.";
pub(crate) const RESET_EXTERNAL: &str =
    "The Connect framework-managed offsets for this connector have been \
     reset successfully. However, if this connector manages offsets externally, they will need \
     to be manually reset in the system that the connector uses.";

fn error(status: u16, message: impl AsRef<str>) -> Response {
    (
        status,
        Some(Body::Json(error_body(status, message.as_ref()))),
    )
}

fn not_found(name: &str) -> Response {
    error(404, format!("Connector {name} not found"))
}

fn no_such_path() -> Response {
    error(404, "HTTP 404 Not Found")
}

fn bad_method() -> Response {
    error(405, "HTTP 405 Method Not Allowed")
}

fn ok(body: Value) -> Response {
    (200, Some(Body::Json(body)))
}

/// Serves one request against the cluster.
/// `parsed` is the body already read as JSON, when it is valid JSON.
pub(crate) fn handle(
    cluster: &mut Cluster,
    method: &str,
    target: &str,
    body: &[u8],
    parsed: Option<Value>,
) -> Response {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let body = match parse_body(method, body, parsed) {
        Ok(body) => body,
        Err(response) => return response,
    };
    match (method, segs.as_slice()) {
        ("GET", []) => ok(json!({
            "version": cluster.version,
            "commit": cluster.commit,
            "kafka_cluster_id": cluster.kafka_cluster_id,
        })),
        ("GET", ["connectors"]) => list(cluster, query),
        ("POST", ["connectors"]) => create(cluster, &body),
        ("GET", ["connectors", name]) => with(cluster, name, |c, _| ok(c.info_json())),
        ("DELETE", ["connectors", name]) => match cluster.connectors.remove(*name) {
            Some(_) => (204, None),
            None => not_found(name),
        },
        ("GET", ["connectors", name, "config"]) => with(cluster, name, |c, _| ok(c.config_json())),
        ("PUT", ["connectors", name, "config"]) => put_config(cluster, name, &body),
        ("GET", ["connectors", name, "status"]) => with(cluster, name, |c, worker| {
            let shown = c.observe();
            ok(c.status_json(shown, worker))
        }),
        ("GET", ["connectors", name, "tasks"]) => {
            with(cluster, name, |c, _| {
                let config = c.config_json();
                let tasks: Vec<Value> = (0..c.tasks())
                .filter(|_| c.shown != State::Stopped)
                .map(|task| json!({ "id": { "connector": c.name, "task": task }, "config": config }))
                .collect();
                ok(Value::Array(tasks))
            })
        }
        ("PUT", ["connectors", _, "stop"]) if !cluster.at_least(3, 5) => no_such_path(),
        ("PUT", ["connectors", name, verb @ ("stop" | "pause" | "resume")]) => {
            if *verb == "stop" {
                cluster.land_queued_stops();
            }
            let lag = cluster.transition_reads;
            let resume_ignored = cluster.resume_ignored;
            with(cluster, name, |c, _| match *verb {
                "stop" => {
                    c.set_target(State::Stopped, lag);
                    (204, None)
                }
                "pause" => {
                    c.set_target(State::Paused, lag);
                    (202, None)
                }
                _ => {
                    if !resume_ignored {
                        c.set_target(State::Running, lag);
                    }
                    (202, None)
                }
            })
        }
        ("POST", ["connectors", name, "restart"]) => with(cluster, name, |_, _| (204, None)),
        (_, ["connectors", _, "offsets"]) if !cluster.at_least(3, 5) => no_such_path(),
        ("PATCH" | "DELETE", ["connectors", _, "offsets"]) if !cluster.at_least(3, 6) => {
            bad_method()
        }
        ("GET", ["connectors", name, "offsets"]) => {
            if !cluster.connectors.contains_key(*name) {
                return not_found(name);
            }
            let stored = cluster.offsets.get(*name).map(Vec::as_slice).unwrap_or(&[]);
            (200, Some(Body::Text(offsets_text(stored))))
        }
        ("PATCH", ["connectors", name, "offsets"]) => patch_offsets(cluster, name, &body),
        ("DELETE", ["connectors", name, "offsets"]) => reset_offsets(cluster, name),
        ("GET", ["connector-plugins"]) => ok(plugin_list(cluster)),
        ("GET", ["connector-plugins", class, "config"]) => match plugin(cluster, class) {
            Some(plugin) => ok(plugin.config_defs()),
            None => error(404, format!("Unknown plugin {class}.")),
        },
        (_, segs) if known_path(segs) => bad_method(),
        _ => no_such_path(),
    }
}

fn known_path(segs: &[&str]) -> bool {
    matches!(
        segs,
        [] | ["connectors"]
            | ["connectors", _]
            | [
                "connectors",
                _,
                "config" | "status" | "tasks" | "offsets" | "restart"
            ]
            | ["connectors", _, "stop" | "pause" | "resume"]
            | ["connector-plugins"]
            | ["connector-plugins", _, "config"]
    )
}

/// JSON body of a POST/PUT/PATCH; `Null` when empty. Malformed JSON is a 500, as in Connect.
pub(crate) fn parse_body(
    method: &str,
    body: &[u8],
    parsed: Option<Value>,
) -> Result<Value, Response> {
    if method == "GET" || body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    if let Some(value) = parsed {
        return Ok(value);
    }
    serde_json::from_slice(body).map_err(|e| error(500, format!("Cannot parse request body: {e}")))
}

/// Runs `f` on the named connector, or answers 404.
fn with(
    cluster: &mut Cluster,
    name: &str,
    f: impl FnOnce(&mut super::state::Connector, &str) -> Response,
) -> Response {
    let worker = cluster.worker_id.clone();
    match cluster.connectors.get_mut(name) {
        Some(connector) => f(connector, &worker),
        None => not_found(name),
    }
}

fn list(cluster: &mut Cluster, query: &str) -> Response {
    let expand: Vec<&str> = query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("expand="))
        .collect();
    if expand.is_empty() {
        return ok(json!(cluster.connectors.keys().collect::<Vec<_>>()));
    }
    let worker = cluster.worker_id.clone();
    let mut out = Map::new();
    for (name, connector) in &mut cluster.connectors {
        let mut entry = Map::new();
        if expand.contains(&"status") {
            let shown = connector.observe();
            entry.insert("status".into(), connector.status_json(shown, &worker));
        }
        if expand.contains(&"info") {
            entry.insert("info".into(), connector.info_json());
        }
        out.insert(name.clone(), Value::Object(entry));
    }
    ok(Value::Object(out))
}

/// Config map from a JSON object; primitives are coerced to strings as Jackson does.
pub(crate) fn config_map(value: &Value) -> Result<BTreeMap<String, String>, Response> {
    let Value::Object(map) = value else {
        return Err(error(
            500,
            format!("Cannot deserialize config from {value}"),
        ));
    };
    map.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
            _ => Err(error(
                500,
                format!("Cannot deserialize config value of {k}: {v}"),
            )),
        })
        .collect()
}

/// Builds a spec from a config map, checking `connector.class` and the `name` entry.
pub(crate) fn spec_from(
    cluster: &Cluster,
    name: &str,
    mut config: BTreeMap<String, String>,
) -> Result<ConnectorSpec, Response> {
    if let Some(configured) = config.get("name") {
        if configured != name {
            return Err(error(
                400,
                format!(
                    "Connector name configuration ({configured}) doesn't match connector name \
                     in the URL ({name})"
                ),
            ));
        }
    }
    let Some(class) = config.get("connector.class").cloned() else {
        return Err(error(
            400,
            "Connector configuration is invalid and contains the following 1 error(s):\n\
             Missing required configuration \"connector.class\" which has no default value.\n\
             You can also find the above list of errors at the endpoint \
             `/connector-plugins/{connectorType}/config/validate`",
        ));
    };
    config.insert("name".into(), name.into());
    let mut spec = match cluster.kind_of(&class) {
        Kind::Source => ConnectorSpec::source(name, &class),
        Kind::Sink => ConnectorSpec::sink(name, &class),
        Kind::Unknown => ConnectorSpec::plugin_missing(name, &class),
    };
    spec.config = config;
    Ok(spec)
}

fn create(cluster: &mut Cluster, body: &Value) -> Response {
    if let Value::Object(map) = body {
        if map.contains_key("initial_state") && !cluster.at_least(3, 7) {
            return error(
                500,
                "Unrecognized field \"initial_state\" (class \
                 org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest), not \
                 marked as ignorable (2 known properties: \"config\", \"name\"])",
            );
        }
    }
    let Some(name) = body.get("name").and_then(Value::as_str) else {
        return error(400, "Connector name must be specified");
    };
    if name.contains('/') {
        return error(400, "connector name should not contain '/'");
    }
    let state = match body.get("initial_state") {
        None | Some(Value::Null) => State::Running,
        Some(s) => match s.as_str().and_then(State::parse) {
            Some(state) => state,
            None => return error(400, format!("Invalid initial state {s}")),
        },
    };
    let config = match config_map(body.get("config").unwrap_or(&Value::Null)) {
        Ok(config) => config,
        Err(response) => return response,
    };
    if cluster.connectors.contains_key(name) {
        return error(409, format!("Connector {name} already exists"));
    }
    let spec = match spec_from(cluster, name, config) {
        Ok(spec) => spec.state(state),
        Err(response) => return response,
    };
    cluster.add(&spec);
    let connector = &cluster.connectors[name];
    let mut info = connector.info_json();
    info["tasks"] = json!([]);
    (201, Some(Body::Json(info)))
}

fn put_config(cluster: &mut Cluster, name: &str, body: &Value) -> Response {
    let spec = match config_map(body).and_then(|config| spec_from(cluster, name, config)) {
        Ok(spec) => spec,
        Err(response) => return response,
    };
    match cluster.connectors.get_mut(name) {
        Some(connector) => {
            connector.kind = spec.kind;
            connector.config = spec.config;
            ok(connector.info_json())
        }
        None => {
            cluster.add(&spec);
            let mut info = cluster.connectors[name].info_json();
            info["tasks"] = json!([]);
            (201, Some(Body::Json(info)))
        }
    }
}

fn patch_offsets(cluster: &mut Cluster, name: &str, body: &Value) -> Response {
    // The REST resource refuses a missing or empty list before looking up the connector.
    let listed = body.get("offsets").and_then(Value::as_array);
    if listed.is_some_and(|list| list.is_empty()) || body.get("offsets").is_none() {
        return error(
            400,
            "Partitions / offsets need to be provided for an alter offsets request",
        );
    }
    let Some(connector) = cluster.connectors.get(name) else {
        return not_found(name);
    };
    if !connector.fully_stopped() {
        return error(400, STOPPED_REQUIRED.replace("{name}", name));
    }
    let updates = match offsets::parse_patch(connector.kind, body) {
        Ok(updates) => updates,
        Err((status, message)) => return error(status, message),
    };
    let message = if connector.externally_managed_offsets {
        ALTERED_EXTERNAL
    } else {
        ALTERED
    };
    offsets::merge(
        cluster.offsets.entry(name.to_string()).or_default(),
        updates,
    );
    ok(json!({ "message": message }))
}

fn reset_offsets(cluster: &mut Cluster, name: &str) -> Response {
    let Some(connector) = cluster.connectors.get(name) else {
        return not_found(name);
    };
    if !connector.fully_stopped() {
        return error(400, STOPPED_REQUIRED.replace("{name}", name));
    }
    let message = if connector.externally_managed_offsets {
        RESET_EXTERNAL
    } else {
        RESET
    };
    cluster.offsets.remove(name);
    ok(json!({ "message": message }))
}

/// Decodes `%XX` escapes; invalid escapes are kept literally, bytes that are not UTF-8 become
/// U+FFFD.
pub(crate) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn escapes_are_decoded_and_broken_ones_kept() {
        assert_eq!(percent_decode("a%2Fb%20c"), "a/b c");
        assert_eq!(percent_decode("caf%C3%A9"), "café");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%FF"), "\u{FFFD}");
        assert_eq!(percent_decode("a+b"), "a+b", "not form decoding");
    }
}
