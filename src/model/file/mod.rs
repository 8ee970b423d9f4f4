//! The versioned snapshot file: `apiVersion: kco/v1`, `kind: ConnectorOffsets`.
//!
//! One file per connector. The offsets are kept in canonical order and sealed with a checksum
//! over their canonical JSON, so that a hand edit is either re-sealed on purpose (`kco fmt`) or
//! caught (`kco validate`).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::file_lines::entry_line;
pub use super::problem::{FileProblem, ProblemKind};

use super::file_lines::{config_key_line, find_key_line, offsets_item_lines, strip_location};
use super::{
    canonical_fields, checksum, in_canonical_order, sort_entries, ConnectorState, ConnectorType,
    OffsetEntry,
};

pub const API_VERSION: &str = "kco/v1";
pub const KIND: &str = "ConnectorOffsets";
/// The first line of every file, before the schema reference.
pub const SCHEMA_COMMENT: &str = "# yaml-language-server: $schema=";
/// The file name of the JSON Schema that kco writes at the top of a snapshots directory.
pub const SCHEMA_FILE: &str = "connector-offsets-v1.json";
/// Where the first-line `$schema` comment points by default: from `<dir>/<cluster>/x.yaml`,
/// the [`SCHEMA_FILE`] kco writes at `<dir>/` (docs/file-format.md).
pub const DEFAULT_SCHEMA_REF: &str = "../connector-offsets-v1.json";
/// The reference kco wrote before it wrote the schema file itself; files that hold it keep it.
pub const REPO_SCHEMA_REF: &str = "../../schemas/connector-offsets-v1.json";

/// The JSON Schema of the format, as `kco schema` prints it and [`SCHEMA_FILE`] holds it.
pub fn schema_json() -> String {
    let mut s = serde_json::to_string_pretty(&schemars::schema_for!(OffsetsFile))
        .expect("schema serializes");
    s.push('\n');
    s
}

/// A connector's offsets file, format v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "kco ConnectorOffsets v1")]
pub struct OffsetsFile {
    /// Always `kco/v1`.
    #[schemars(extend("const" = "kco/v1"))]
    pub api_version: String,
    /// Always `ConnectorOffsets`.
    #[schemars(extend("const" = "ConnectorOffsets"))]
    pub kind: String,
    pub metadata: Metadata,
    /// Every partition with its committed offset, in canonical order.
    pub offsets: Vec<OffsetEntry>,
    /// The connector's configuration (with `snapshot --with-config`); secrets are placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, String>>,
    /// `sha256:<hex>` over the canonical JSON of `offsets`.
    #[schemars(regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pub checksum: String,
}

/// Where and when the offsets were captured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    /// The connector's name.
    pub name: String,
    /// The cluster name it was captured from (a name from kco.yaml).
    pub cluster: String,
    /// The Kafka cluster id from `GET /` (sink offsets belong to one Kafka cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kafka_cluster_id: Option<String>,
    /// The worker version from `GET /`, as reported (e.g. `4.1.0`, `7.6.1-ccs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_version: Option<String>,
    /// The connector's `connector.class`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_class: Option<String>,
    /// `source` or `sink`.
    #[serde(rename = "type")]
    pub connector_type: ConnectorType,
    /// The connector's state when the offsets were captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ConnectorState>,
    /// RFC 3339 UTC time of the capture; kept as is while the offsets do not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub captured_at: Option<String>,
    /// RFC 3339 UTC time at which the service observed the offsets, for a service that
    /// observes them periodically instead of reading them live (Confluent Cloud's
    /// `observed_at`); kept, like `capturedAt`, while the offsets do not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub observed_at: Option<String>,
    /// Where kco read the offsets when not through the service's REST API: `kafka` for a
    /// Connect cluster whose workers lack the offsets endpoints (before 3.5), read from the
    /// workers' offsets topic and the sinks' consumer groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets_from: Option<OffsetsFrom>,
}

/// Where the offsets of a file were read, other than the service's REST API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OffsetsFrom {
    /// Kafka itself: the workers' offsets topic (sources) and consumer groups (sinks).
    Kafka,
}

impl std::fmt::Display for OffsetsFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OffsetsFrom::Kafka => f.write_str("kafka"),
        }
    }
}

impl Metadata {
    /// Connector `name` of `connector_type` on `cluster`, nothing else known.
    pub fn new(name: &str, cluster: &str, connector_type: ConnectorType) -> Metadata {
        Metadata {
            name: name.into(),
            cluster: cluster.into(),
            kafka_cluster_id: None,
            connect_version: None,
            connector_class: None,
            connector_type,
            state: None,
            captured_at: None,
            observed_at: None,
            offsets_from: None,
        }
    }
}

impl OffsetsFile {
    /// A new, sealed file with offsets in canonical order.
    pub fn new(
        metadata: Metadata,
        mut offsets: Vec<OffsetEntry>,
        config: Option<BTreeMap<String, String>>,
    ) -> Self {
        sort_entries(&mut offsets);
        let checksum = checksum(&offsets);
        OffsetsFile {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
            metadata,
            offsets,
            config,
            checksum,
        }
    }

    /// Puts the offsets in canonical order and recomputes the checksum.
    pub fn seal(&mut self) {
        sort_entries(&mut self.offsets);
        self.checksum = checksum(&self.offsets);
    }

    /// Whether the stored checksum matches the offsets.
    pub fn is_sealed(&self) -> bool {
        self.checksum == checksum(&self.offsets)
    }

    /// The file's canonical text: the `$schema` comment, then the YAML document.
    pub fn render(&self, schema_ref: &str) -> String {
        format!("{SCHEMA_COMMENT}{schema_ref}\n{}", self.render_body())
    }

    /// The YAML document without the `$schema` comment, in canonical form (see
    /// [`super::yaml`]): fields in a fixed order, map keys sorted, scalars spelled so that
    /// YAML 1.1 and 1.2 readers agree.
    fn render_body(&self) -> String {
        use super::yaml::{string, write_fields};
        let mut out = String::new();
        let mut line = |indent: usize, key: &str, value: &str| {
            out.push_str(&format!("{:indent$}{key}: {value}\n", ""));
        };
        line(0, "apiVersion", &string(&self.api_version));
        line(0, "kind", &string(&self.kind));
        out.push_str("metadata:\n");
        let m = &self.metadata;
        let mut meta = |key: &str, v: Option<String>| {
            if let Some(v) = v {
                out.push_str(&format!("  {key}: {v}\n"));
            }
        };
        meta("name", Some(string(&m.name)));
        meta("cluster", Some(string(&m.cluster)));
        meta("kafkaClusterId", m.kafka_cluster_id.as_deref().map(string));
        meta("connectVersion", m.connect_version.as_deref().map(string));
        meta("connectorClass", m.connector_class.as_deref().map(string));
        meta("type", Some(m.connector_type.to_string()));
        meta("state", m.state.map(|s| s.to_string()));
        meta("capturedAt", m.captured_at.as_deref().map(string));
        meta("observedAt", m.observed_at.as_deref().map(string));
        meta("offsetsFrom", m.offsets_from.map(|o| o.to_string()));
        if self.offsets.is_empty() {
            out.push_str("offsets: []\n");
        } else {
            out.push_str("offsets:\n");
            for e in &self.offsets {
                write_fields(&mut out, 4, "- partition", &e.partition);
                write_fields(&mut out, 4, "  offset", &e.offset);
            }
        }
        if let Some(config) = &self.config {
            if config.is_empty() {
                out.push_str("config: {}\n");
            } else {
                out.push_str("config:\n");
                for (k, v) in config {
                    out.push_str(&format!("  {}: {}\n", string(k), string(v)));
                }
            }
        }
        out.push_str(&format!("checksum: {}\n", string(&self.checksum)));
        out
    }

    /// Parses a file's text. Syntax and shape errors carry the line.
    pub fn parse(path: &Path, text: &str) -> Result<Self, FileProblem> {
        let problem = |kind, line: Option<usize>, message: String| {
            FileProblem::new(kind, path, line, message)
        };
        if let Some(conflict) = conflict_markers(path, text) {
            return Err(conflict);
        }
        // A file in kco's own layout: its offsets read line by line, the rest by the YAML
        // parser. Anything else, or any problem, takes the general path below.
        if let Some((rest, entries)) = super::canonical_parse::split_offsets(text) {
            if let Ok(mut file) = serde_yaml::from_str::<OffsetsFile>(&rest) {
                if header_problem(text, Some(&file.api_version), Some(&file.kind)).is_none() {
                    file.offsets = entries;
                    return Ok(file);
                }
            }
        }
        // The whole file is parsed once. Only when that fails is the version read on its own,
        // so that a future format gets a clear message rather than a confusing field error.
        let e = match serde_yaml::from_str::<OffsetsFile>(text) {
            Ok(file) => {
                return match header_problem(text, Some(&file.api_version), Some(&file.kind)) {
                    None => Ok(file),
                    Some((line, message)) => Err(problem(ProblemKind::Version, line, message)),
                }
            }
            Err(e) => e,
        };
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Header {
            api_version: Option<Value>,
            kind: Option<Value>,
        }
        let header: Header = serde_yaml::from_str(text).map_err(|e| {
            FileProblem::syntax(
                path,
                text,
                &e,
                format!("not valid YAML: {}", strip_location(&e)),
            )
        })?;
        let api_version = header.api_version.as_ref().and_then(Value::as_str);
        let kind = header.kind.as_ref().and_then(Value::as_str);
        if let Some((line, message)) = header_problem(text, api_version, kind) {
            return Err(problem(ProblemKind::Version, line, message));
        }
        Err(problem(
            ProblemKind::Schema,
            e.location().map(|l| l.line()),
            strip_location(&e).to_string(),
        ))
    }

    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<(Self, String), FileProblem> {
        let bytes = std::fs::read(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                ProblemKind::NotFound
            } else {
                ProblemKind::Unreadable
            };
            FileProblem::new(kind, path, None, format!("cannot read: {e}"))
        })?;
        let text =
            String::from_utf8(bytes).map_err(|e| FileProblem::not_utf8(path, e.as_bytes(), &e))?;
        let file = Self::parse(path, &text)?;
        Ok((file, text))
    }

    /// Every semantic problem of a parsed file: shapes, duplicates, checksum. `text` is the
    /// file's text, used to point at lines.
    pub fn check(&self, path: &Path, text: &str) -> Vec<FileProblem> {
        // The checksum (the canonical JSON of every entry, hashed) is the larger half of the
        // work on a wide file: it runs beside the other checks (a small file is not worth a
        // thread).
        std::thread::scope(|scope| {
            let sealed =
                (self.offsets.len() >= PARALLEL_CHECK).then(|| scope.spawn(|| self.is_sealed()));
            let mut problems = self.check_entries(path, text);
            let sealed = match sealed {
                Some(thread) => thread.join().expect("the checksum does not panic"),
                None => self.is_sealed(),
            };
            if !sealed {
                problems.push(FileProblem::new(
                    ProblemKind::ChecksumMismatch,
                    path,
                    find_key_line(text, "checksum"),
                    format!(
                        "checksum mismatch: the offsets were edited (expected {})",
                        checksum(&self.offsets)
                    ),
                ));
            }
            problems
        })
    }

    /// Every check but the checksum's.
    fn check_entries(&self, path: &Path, text: &str) -> Vec<FileProblem> {
        let mut problems = Vec::new();
        let mut add = |kind, line: Option<usize>, message: String| {
            problems.push(FileProblem::new(kind, path, line, message))
        };
        if self.metadata.name.trim().is_empty() {
            add(
                ProblemKind::Invalid,
                find_key_line(text, "name"),
                "metadata.name is empty".into(),
            );
        }
        // Where each entry starts, found when a problem needs it.
        let item_lines = std::cell::OnceCell::new();
        let line_of = |i: usize| {
            item_lines
                .get_or_init(|| offsets_item_lines(text))
                .get(i)
                .copied()
        };
        let mut seen = HashSet::with_capacity(self.offsets.len());
        for (i, e) in self.offsets.iter().enumerate() {
            // A plain sink partition is keyed by topic and number, without building its JSON.
            let key = match super::sink_partition(&e.partition) {
                Some((topic, p)) if e.partition.len() == 2 => DuplicateKey::Sink(topic, p),
                _ => DuplicateKey::Other(canonical_fields(&e.partition)),
            };
            if !seen.insert(key) {
                add(
                    ProblemKind::DuplicatePartition,
                    line_of(i),
                    format!("duplicate partition {}", canonical_fields(&e.partition)),
                );
            }
            if e.partition.is_empty() {
                add(ProblemKind::Invalid, line_of(i), "empty partition".into());
            }
            match self.metadata.connector_type {
                ConnectorType::Sink => {
                    for (section, key, m) in sink_shape_problems(e) {
                        let line = value_line(text, i, section, key).or_else(|| line_of(i));
                        add(ProblemKind::Invalid, line, m);
                    }
                }
                ConnectorType::Source => {
                    for (what, map) in [("partition", &e.partition), ("offset", &e.offset)] {
                        for (k, v) in map {
                            if v.is_object() || v.is_array() {
                                add(
                                    ProblemKind::Invalid,
                                    value_line(text, i, what, k.to_string()).or_else(|| line_of(i)),
                                    format!("source {what} value `{k}` must be a string, number, boolean or null"),
                                );
                            }
                        }
                    }
                }
            }
        }
        if self.metadata.cluster.trim().is_empty() {
            add(
                ProblemKind::Invalid,
                find_key_line(text, "cluster"),
                "metadata.cluster is empty".into(),
            );
        }
        for (k, v) in self.config.iter().flatten() {
            if super::secrets::looks_secret(k)
                && !v.is_empty()
                && !super::secrets::is_provider_reference(v)
                && super::secrets::placeholder_var(v).is_none()
            {
                add(
                    ProblemKind::PlainSecret,
                    config_key_line(text, k),
                    format!(
                        "config `{k}` looks secret but holds a plain value: write `{}` (set at apply time) or a config-provider reference instead",
                        super::secrets::placeholder(&super::secrets::env_var_name(&self.metadata.name, k))
                    ),
                );
            }
        }
        problems
    }

    /// Whether the file's text is exactly its canonical rendering with some `$schema` comment.
    pub fn is_canonical_text(&self, text: &str) -> bool {
        let rest = match text.split_once('\n') {
            Some((first, rest)) if first.starts_with(SCHEMA_COMMENT) => rest,
            _ => return false,
        };
        in_canonical_order(&self.offsets) && rest == self.render_body()
    }
}

/// From this many entries, a file's checksum is checked on a thread of its own.
const PARALLEL_CHECK: usize = 10_000;

/// A partition's identity when looking for duplicates.
#[derive(PartialEq, Eq, Hash)]
enum DuplicateKey<'a> {
    Sink(&'a str, i64),
    Other(String),
}

/// git's conflict markers in `text`, as a problem naming their lines: a merge left
/// unresolved reads as such, not as a YAML error somewhere inside it.
fn conflict_markers(path: &Path, text: &str) -> Option<FileProblem> {
    if !(text.starts_with("<<<<<<<") || text.contains("\n<<<<<<<")) {
        return None;
    }
    let is_marker = |l: &str| {
        ["<<<<<<<", "|||||||", "=======", ">>>>>>>"]
            .iter()
            .any(|m| {
                l.strip_prefix(m)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
            })
    };
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| is_marker(l.trim_end_matches('\r')))
        .map(|(i, _)| i + 1)
        .collect();
    let first = *lines.first()?;
    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
    Some(FileProblem::new(
        ProblemKind::MergeConflict,
        path,
        Some(first),
        format!(
            "unresolved merge conflict: conflict markers on {} {}",
            if lines.len() == 1 { "line" } else { "lines" },
            shown.join(", ")
        ),
    ))
}

/// What is wrong with `apiVersion` and `kind`, if anything: the line to point at and the
/// message.
fn header_problem(
    text: &str,
    api_version: Option<&str>,
    kind: Option<&str>,
) -> Option<(Option<usize>, String)> {
    match api_version {
        Some(API_VERSION) => {}
        Some(other) => {
            return Some((
                find_key_line(text, "apiVersion"),
                format!("unsupported apiVersion `{other}` (this kco reads `{API_VERSION}`)"),
            ))
        }
        None => return Some((Some(1), format!("missing `apiVersion: {API_VERSION}`"))),
    }
    match kind {
        Some(KIND) => None,
        other => Some((
            find_key_line(text, "kind").or(Some(1)),
            match other {
                Some(k) => format!("`kind` must be `{KIND}`, found `{k}`"),
                None => format!("missing `kind: {KIND}`"),
            },
        )),
    }
}

/// What is wrong with a sink entry's shape: the section (`partition` or `offset`), the key
/// at fault, and the message.
fn sink_shape_problems(e: &OffsetEntry) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let mut add = |section, key: &str, m: String| out.push((section, key.to_string(), m));
    match e.partition.get("kafka_topic") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => add(
            "partition",
            "kafka_topic",
            "sink partition needs `kafka_topic`, a non-empty string".into(),
        ),
    }
    match e.partition.get("kafka_partition").and_then(Value::as_i64) {
        Some(p) if p >= 0 => {}
        _ => add(
            "partition",
            "kafka_partition",
            "sink partition needs `kafka_partition`, an integer >= 0".into(),
        ),
    }
    for k in e.partition.keys() {
        if k != "kafka_topic" && k != "kafka_partition" {
            add(
                "partition",
                k,
                format!("unexpected key `{k}` in a sink partition"),
            );
        }
    }
    match e.offset.get("kafka_offset").and_then(Value::as_i64) {
        Some(o) if o >= 0 => {}
        _ => add(
            "offset",
            "kafka_offset",
            "sink offset needs `kafka_offset`, an integer >= 0".into(),
        ),
    }
    for k in e.offset.keys() {
        if k != "kafka_offset" {
            add(
                "offset",
                k,
                format!("unexpected key `{k}` in a sink offset"),
            );
        }
    }
    out
}

/// The 1-based line of the value of `key` in `section` of offsets item `index`: the key's own
/// line when the value is on it, else the first line of the value below it (a block
/// sequence or map); the section's line when the key is missing.
fn value_line(text: &str, index: usize, section: &str, key: String) -> Option<usize> {
    let line = entry_line(text, index, section, Some(&key))?;
    let own = text.lines().nth(line - 1)?;
    let has_value = own.contains(&format!("{key}:")) && !own.trim_end().ends_with(':');
    if has_value || !own.contains(&format!("{key}:")) {
        return Some(line);
    }
    let below = text
        .lines()
        .enumerate()
        .skip(line)
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    Some(below.map_or(line, |(i, _)| i + 1))
}

#[cfg(test)]
mod tests;
