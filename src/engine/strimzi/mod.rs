//! Strimzi (0.44 and newer) offsets ConfigMaps, both ways, and the signs that a connector is
//! managed by the Strimzi operator.
//!
//! The `KafkaConnector` patch is written in the `kafka.strimzi.io` API version the operator
//! serves: `v1` (Strimzi 0.49 and newer; the only one from 1.0.0) by default, `v1beta2` for
//! 0.44 to 0.48 (served up to 0.51). docs/strimzi.md has the table and its sources.
//!
//! Strimzi's `listOffsets` writes the REST body, pretty-printed by Jackson, under the data key
//! `offsets.json` (a `KafkaConnector`), or under `<connector>.json` with `->` written as `--`
//! (a `KafkaMirrorMaker2`, one key per connector); the ConfigMap carries the resource's labels
//! (`strimzi.io/cluster`) and an owner reference to it. `alterOffsets.fromConfigMap` reads the
//! same key back.

use std::path::Path;

use serde_yaml::Value as Yaml;

use super::interchange::{import_body, jackson_body, ImportMeta};
use crate::client::ConnectorListing;
use crate::model::file::{FileProblem, OffsetsFile, ProblemKind};
use crate::model::yaml::string;
use crate::model::ConnectorType;

/// The data key of a `KafkaConnector`'s offsets.
pub const CONNECTOR_KEY: &str = "offsets.json";
/// Annotations kco puts on the ConfigMaps it writes, read back on import.
pub const CONNECTOR_ANNOTATION: &str = "kco/connector";
pub const CLUSTER_ANNOTATION: &str = "kco/cluster";
const MIRROR_TYPES: [&str; 3] = [
    "MirrorSourceConnector",
    "MirrorCheckpointConnector",
    "MirrorHeartbeatConnector",
];

/// Whether a connector name is one Strimzi's `KafkaMirrorMaker2` gives:
/// `<source>-><target>.Mirror{Source,Checkpoint,Heartbeat}Connector`.
pub fn is_mirror_name(name: &str) -> bool {
    name.contains("->")
        && MIRROR_TYPES
            .iter()
            .any(|t| name.strip_suffix(t).is_some_and(|r| r.ends_with('.')))
}

/// The ConfigMap data key Strimzi uses for a connector.
pub fn data_key(connector: &str) -> String {
    if connector.contains("->") {
        format!("{}.json", connector.replace("->", "--"))
    } else {
        CONNECTOR_KEY.to_string()
    }
}

/// A Kubernetes object name for a connector's offsets ConfigMap: lower case, other characters
/// as `-`, `-offsets` appended.
pub fn configmap_name(connector: &str) -> String {
    let base: String = connector
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let base = base.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let mut name = format!("{base}-offsets");
    name.truncate(253);
    name.trim_start_matches('-').to_string()
}

/// The `kafka.strimzi.io` API version of the resources kco writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Api {
    /// `kafka.strimzi.io/v1`: Strimzi 0.49 and newer (1.0.0 removed every other version).
    #[default]
    V1,
    /// `kafka.strimzi.io/v1beta2`: Strimzi 0.44 to 0.48 (also served, deprecated, up to 0.51).
    V1beta2,
}

impl Api {
    /// The `apiVersion` field's value.
    pub fn api_version(self) -> &'static str {
        match self {
            Api::V1 => "kafka.strimzi.io/v1",
            Api::V1beta2 => "kafka.strimzi.io/v1beta2",
        }
    }

    /// Which releases serve it, and the other choice (the export's comment).
    fn served(self) -> &'static str {
        match self {
            Api::V1 => "Strimzi 0.49 or newer serves v1;\n#    for 0.44 to 0.48, export with `--strimzi-api v1beta2`",
            Api::V1beta2 => "Strimzi 0.44 to 0.51 serve v1beta2;\n#    1.0.0 and newer serve only v1, the default",
        }
    }

    /// The `KafkaMirrorMaker2` fields that hold a mirror's connectors: `v1` has no
    /// `heartbeatConnector` (run the heartbeat connector as a `KafkaConnector`).
    fn mirror_fields(self) -> &'static str {
        match self {
            Api::V1 => "sourceConnector or checkpointConnector",
            Api::V1beta2 => "sourceConnector, checkpointConnector or heartbeatConnector",
        }
    }
}

/// Options of `export --format strimzi`.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    pub namespace: Option<String>,
    /// The ConfigMap's name (one file only); default [`configmap_name`].
    pub configmap_name: Option<String>,
    /// The API version of the `KafkaConnector` patch.
    pub api: Api,
}

/// The YAML documents for one snapshot: the ConfigMap and, for a `KafkaConnector`, the patch
/// that stops it and points `alterOffsets` at the ConfigMap; the steps around them as comments.
pub fn export(file: &OffsetsFile, opts: &ExportOptions) -> String {
    let m = &file.metadata;
    let cm = opts
        .configmap_name
        .clone()
        .unwrap_or_else(|| configmap_name(&m.name));
    let ns = opts.namespace.as_deref();
    let ns_flag = ns.map(|n| format!(" -n {n}")).unwrap_or_default();
    let ns_line = ns
        .map(|n| format!("  namespace: {}\n", string(n)))
        .unwrap_or_default();
    let mirror = m.name.contains("->");
    let mut out = format!(
        "# Offsets of connector `{}` (cluster `{}`), {}, {}\n",
        m.name,
        m.cluster,
        crate::text::count(file.offsets.len(), "partition"),
        file.checksum
    );
    if mirror {
        out.push_str(&format!(
            "# 1. Apply the ConfigMap. In the KafkaMirrorMaker2 resource ({}), on this mirror's connector\n\
             #    ({}), set `state: stopped`\n\
             #    and `alterOffsets: {{fromConfigMap: {{name: {cm}}}}}`.\n\
             # 2. When the connector reports STOPPED, trigger the alter (Strimzi 0.44 or newer):\n\
             #      kubectl annotate kafkamirrormaker2 MM2_NAME{ns_flag} strimzi.io/connector-offsets=alter \"strimzi.io/mirrormaker-connector={}\"\n\
             # 3. Strimzi removes the annotations once done; then set the connector's state back to running.\n",
            opts.api.api_version(),
            opts.api.mirror_fields(),
            m.name
        ));
    } else {
        out.push_str(&format!(
            "# 1. Apply both documents (Argo CD, Flux or kubectl). The second is a patch of the\n\
             #    KafkaConnector: merge it into its manifest or list it under `patches:` of a kustomization.\n\
             #    Its apiVersion, {}, must be your manifest's ({}).\n\
             # 2. When the connector reports STOPPED, trigger the alter (Strimzi 0.44 or newer):\n\
             #      kubectl annotate kafkaconnector {}{ns_flag} strimzi.io/connector-offsets=alter\n\
             # 3. Strimzi removes the annotation once done; then set `spec.state: running`.\n",
            opts.api.api_version(),
            opts.api.served(),
            m.name
        ));
    }
    out.push_str(&format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n{ns_line}  annotations:\n    {CONNECTOR_ANNOTATION}: {}\n    {CLUSTER_ANNOTATION}: {}\ndata:\n  {}: |-\n",
        string(&cm),
        string(&m.name),
        string(&m.cluster),
        string(&data_key(&m.name)),
    ));
    for line in jackson_body(&file.offsets).lines() {
        out.push_str(&format!("    {line}\n"));
    }
    if !mirror {
        out.push_str(&format!(
            "---\napiVersion: {}\nkind: KafkaConnector\nmetadata:\n  name: {}\n{ns_line}spec:\n  state: stopped\n  alterOffsets:\n    fromConfigMap:\n      name: {}\n",
            opts.api.api_version(),
            string(&m.name),
            string(&cm)
        ));
    }
    out
}

/// What `import --from strimzi` is asked for.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The connector (required for `offsets.json` unless the ConfigMap names it; selects one
    /// key of a `KafkaMirrorMaker2` ConfigMap).
    pub name: Option<String>,
    pub cluster: Option<String>,
    pub connector_type: Option<ConnectorType>,
}

/// Reads every ConfigMap in `text` (one or more YAML documents; others are skipped) and makes
/// a sealed file per connector found.
pub fn import(
    path: &Path,
    text: &str,
    opts: &ImportOptions,
) -> Result<Vec<OffsetsFile>, Vec<FileProblem>> {
    let problem = |kind, line, message: String| vec![FileProblem::new(kind, path, line, message)];
    let mut files = Vec::new();
    let mut maps = 0;
    for (start, doc) in documents(text) {
        let value: Yaml = serde_yaml::from_str(doc).map_err(|e| {
            problem(
                ProblemKind::Syntax,
                e.location().map(|l| l.line() + start),
                format!("not YAML: {e}"),
            )
        })?;
        if value.get("kind").and_then(Yaml::as_str) != Some("ConfigMap") {
            continue;
        }
        maps += 1;
        let meta = &value["metadata"];
        let annotation = |k: &str| meta["annotations"][k].as_str().map(str::to_string);
        let cluster = opts
            .cluster
            .clone()
            .or_else(|| annotation(CLUSTER_ANNOTATION))
            .or_else(|| {
                meta["labels"]["strimzi.io/cluster"]
                    .as_str()
                    .map(str::to_string)
            });
        let Some(cluster) = cluster else {
            return Err(problem(
                ProblemKind::Invalid,
                Some(start + 1),
                "the ConfigMap has no `strimzi.io/cluster` label: pass --cluster".into(),
            ));
        };
        let Some(data) = value["data"].as_mapping() else {
            return Err(problem(
                ProblemKind::Schema,
                Some(start + 1),
                "the ConfigMap has no `data` map".into(),
            ));
        };
        for (key, body) in data {
            let (Some(key), Some(body)) = (key.as_str(), body.as_str()) else {
                continue;
            };
            let name = if key == CONNECTOR_KEY {
                if opts.name.as_deref().is_some_and(is_mirror_name) {
                    continue;
                }
                let owner = meta["ownerReferences"]
                    .as_sequence()
                    .into_iter()
                    .flatten()
                    .find(|o| o["kind"].as_str() == Some("KafkaConnector"))
                    .and_then(|o| o["name"].as_str().map(str::to_string));
                match opts
                    .name
                    .clone()
                    .or_else(|| annotation(CONNECTOR_ANNOTATION))
                    .or(owner)
                {
                    Some(n) => n,
                    None => {
                        return Err(problem(
                            ProblemKind::Invalid,
                            key_line(doc, key).map(|l| l + start),
                            format!(
                                "`{key}` does not say which connector it belongs to: pass --name"
                            ),
                        ))
                    }
                }
            } else if let Some(stem) = key.strip_suffix(".json") {
                let name = stem.replacen("--", "->", 1);
                if stem.matches("--").count() != 1 || !is_mirror_name(&name) {
                    continue;
                }
                if opts.name.as_ref().is_some_and(|n| *n != name) {
                    continue;
                }
                name
            } else {
                continue;
            };
            let line_base = key_line(doc, key).unwrap_or(0) + start;
            let meta = ImportMeta {
                name,
                cluster: cluster.clone(),
                connector_type: opts.connector_type,
            };
            files.push(import_body(path, body, line_base, &meta)?);
        }
    }
    if files.is_empty() {
        let message = match (maps, &opts.name) {
            (0, _) => "no ConfigMap in the file".to_string(),
            (_, Some(n)) => format!("no offsets of connector `{n}` (key `{}`)", data_key(n)),
            _ => format!("no `{CONNECTOR_KEY}` or `<source>--<target>.Mirror*Connector.json` key"),
        };
        return Err(problem(ProblemKind::Invalid, None, message));
    }
    Ok(files)
}

/// The YAML documents of a stream, each with the number of lines before it.
fn documents(text: &str) -> Vec<(usize, &str)> {
    let mut docs = Vec::new();
    let (mut start, mut start_line) = (0usize, 0usize);
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_end() == "---" {
            docs.push((start_line, &text[start..offset]));
            start = offset + line.len();
            start_line = i + 1;
        }
        offset += line.len();
    }
    docs.push((start_line, &text[start..]));
    docs.into_iter()
        .filter(|(_, d)| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
        .collect()
}

/// The 1-based line of a data key in a document.
fn key_line(doc: &str, key: &str) -> Option<usize> {
    let quoted = format!("\"{key}\":");
    let plain = format!("{key}:");
    doc.lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(&plain) || t.starts_with(&quoted)
        })
        .map(|i| i + 1)
}

/// Why a connector looks managed by the Strimzi operator, if it does: a `KafkaMirrorMaker2`
/// name (`a->b.MirrorSourceConnector`), or tasks on workers named as Strimzi names its pods
/// (`<name>-connect-<n>.<name>-connect.<namespace>.svc`, or `-mirrormaker2`).
pub fn operator_sign(name: &str, live: &ConnectorListing) -> Option<String> {
    if is_mirror_name(name) {
        return Some("a KafkaMirrorMaker2 connector name".into());
    }
    let worker = live
        .status
        .iter()
        .flat_map(|s| &s.tasks)
        .filter_map(|t| t.worker_id.as_deref())
        .find(|w| is_strimzi_worker(w))?;
    Some(format!("worker {worker}"))
}

fn is_strimzi_worker(worker: &str) -> bool {
    let host = worker.split(':').next().unwrap_or(worker);
    let mut labels = host.split('.');
    let (Some(pod), Some(service)) = (labels.next(), labels.next()) else {
        return false;
    };
    (service.ends_with("-connect") || service.ends_with("-mirrormaker2"))
        && pod
            .strip_prefix(service)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The warning `apply` shows for a connector that looks operator-managed.
pub fn operator_warning(name: &str, live: &ConnectorListing) -> Option<String> {
    operator_sign(name, live).map(|why| {
        format!(
            "`{name}` looks managed by the Strimzi operator ({why}): it may resume the connector or undo this change; consider `kco export --format strimzi` and the operator's alterOffsets (docs/strimzi.md)"
        )
    })
}

#[cfg(test)]
mod tests;
