//! The backup an operation writes before its first change: the live offsets of every connector
//! about to change, as valid kco/v1 files, and a marker file (`kco-backup.json`) that makes the
//! directory a kco backup: the cluster it was taken from, when, and the connectors the
//! operation creates. `kco undo DIR` accepts only such a directory: it puts the offsets back
//! exactly (`--prune`) and deletes the created connectors.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::{Action, ApplyPlan, Want};
use crate::engine::orphaned::{GroupRecord, TopicRecord};
use crate::engine::store;
use crate::error::{Error, Result};
use crate::fsutil::write_private;
use crate::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use crate::model::ConnectorType;

/// The marker file's name in a backup directory.
pub const MARKER: &str = "kco-backup.json";
/// The list of created connectors that backups written before the marker held.
const LEGACY_CREATED: &str = "created.json";
/// The marker's format, in its `kind` field.
const MARKER_KIND: &str = "kco/backup-v1";

/// Where the backup went.
#[derive(Debug, Clone, Serialize)]
pub struct BackupReport {
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub dir: PathBuf,
    #[serde(serialize_with = "crate::shown_path::list")]
    pub files: Vec<PathBuf>,
    /// Connectors the operation creates (undoing deletes them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
}

impl BackupReport {
    /// Whether there is anything to undo from.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.created.is_empty()
    }
}

/// `kco-backup.json`: what makes a directory a kco backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    /// Always `kco/backup-v1`.
    pub kind: String,
    /// The cluster the offsets were read from (and that `kco undo` puts them back on).
    pub cluster: String,
    /// The worker URL (credentials never included).
    pub url: String,
    pub captured_at: String,
    /// Connectors the operation creates: undoing deletes them.
    #[serde(default)]
    pub created: Vec<String>,
    /// A backup of keys of this offsets topic (`kco reset --orphaned`, or its undo), kept in
    /// [`TOPIC_RECORDS`]: undoing writes them back through Kafka.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets_topic: Option<String>,
}

/// Writes one file per connector that the plan changes and that exists now, then the marker.
/// Files are named like snapshots: `<dir>/<connector>.yaml`.
pub fn write(plan: &ApplyPlan, dir: &Path, captured_at: &str) -> Result<BackupReport> {
    let mut files = Vec::new();
    for c in &plan.connectors {
        if !c.action.changes() || c.live_state.is_none() {
            continue;
        }
        let connector_type = c.connector_type.unwrap_or(ConnectorType::Source);
        let file = OffsetsFile::new(
            Metadata {
                name: c.name.clone(),
                cluster: plan.cluster.clone(),
                kafka_cluster_id: plan.kafka_cluster_id.clone(),
                connect_version: Some(plan.connect_version.clone()),
                connector_class: c.class.clone(),
                connector_type,
                state: c.live_state,
                captured_at: Some(captured_at.to_string()),
                observed_at: None,
                offsets_from: None,
            },
            c.live_offsets.clone(),
            None,
        );
        let name = store::file_path(Path::new(""), "x", &c.name);
        let path = dir.join(name.file_name().expect("a file path has a name"));
        write_file(&path, file.render(DEFAULT_SCHEMA_REF).as_bytes())?;
        files.push(path);
    }
    let created: Vec<String> = plan
        .connectors
        .iter()
        .filter(|c| matches!(c.action, Action::Create { .. }))
        .map(|c| c.name.clone())
        .collect();
    let marker = Marker {
        kind: MARKER_KIND.into(),
        cluster: plan.cluster.clone(),
        url: crate::client::redact_url(&plan.url),
        captured_at: captured_at.to_string(),
        created: created.clone(),
        offsets_topic: None,
    };
    let text = serde_json::to_string_pretty(&marker).expect("a marker serializes");
    write_file(&dir.join(MARKER), text.as_bytes())?;
    Ok(BackupReport {
        dir: dir.to_path_buf(),
        files,
        created,
    })
}

/// The file of a backup of offsets-topic keys: each key's value before the operation.
pub const TOPIC_RECORDS: &str = "offsets-topic.json";

/// The file of a backup of sinks' consumer-group offsets: each offset before the operation
/// (absent from a backup that changed no group).
pub const GROUP_RECORDS: &str = "consumer-groups.json";

/// Writes the backup of offsets-topic keys and sinks' group offsets: `records` (each key as
/// it was) in [`TOPIC_RECORDS`], `groups` (each offset as it was) in [`GROUP_RECORDS`], then
/// the marker naming `topic`.
pub fn write_topic(
    cluster: &str,
    url: &str,
    topic: &str,
    (records, groups): (&[TopicRecord], &[GroupRecord]),
    dir: &Path,
    captured_at: &str,
) -> Result<BackupReport> {
    let path = dir.join(TOPIC_RECORDS);
    let text = serde_json::to_string_pretty(records).expect("records serialize");
    write_file(&path, text.as_bytes())?;
    let mut files = vec![path];
    if !groups.is_empty() {
        let path = dir.join(GROUP_RECORDS);
        let text = serde_json::to_string_pretty(groups).expect("records serialize");
        write_file(&path, text.as_bytes())?;
        files.push(path);
    }
    let marker = Marker {
        kind: MARKER_KIND.into(),
        cluster: cluster.to_string(),
        url: crate::client::redact_url(url),
        captured_at: captured_at.to_string(),
        created: Vec::new(),
        offsets_topic: Some(topic.to_string()),
    };
    let text = serde_json::to_string_pretty(&marker).expect("a marker serializes");
    write_file(&dir.join(MARKER), text.as_bytes())?;
    Ok(BackupReport {
        dir: dir.to_path_buf(),
        files,
        created: Vec::new(),
    })
}

/// The offsets-topic keys and the sinks' group offsets a backup directory keeps
/// ([`write_topic`]).
pub fn read_topic(dir: &Path) -> Result<(Vec<TopicRecord>, Vec<GroupRecord>)> {
    let records = read_json(dir, TOPIC_RECORDS)?;
    let groups = match dir.join(GROUP_RECORDS).exists() {
        true => read_json(dir, GROUP_RECORDS)?,
        false => Vec::new(),
    };
    Ok((records, groups))
}

fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, file: &str) -> Result<T> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Read {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| Error::NotABackup {
        dir: dir.to_path_buf(),
        why: format!("{}:{}: {e}", path.display(), e.line()),
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    write_private(path, bytes).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The marker of the backup directory `dir`; an error when `dir` is not a kco backup.
pub fn read_marker(dir: &Path) -> Result<Marker> {
    let path = dir.join(MARKER);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NotABackup {
                dir: dir.to_path_buf(),
                why: format!("it has no {MARKER}"),
            })
        }
        Err(source) => return Err(Error::Read { path, source }),
    };
    let marker: Marker = serde_json::from_str(&text).map_err(|e| Error::NotABackup {
        dir: dir.to_path_buf(),
        why: format!("{}:{}: {e}", path.display(), e.line()),
    })?;
    if marker.kind != MARKER_KIND {
        return Err(Error::NotABackup {
            dir: dir.to_path_buf(),
            why: format!(
                "{}: kind `{}`, where kco writes `{MARKER_KIND}`",
                path.display(),
                marker.kind
            ),
        });
    }
    Ok(marker)
}

/// A [`Want::Delete`] for each connector a backup directory among `paths` says was created
/// (its marker, or the `created.json` of a backup written before markers).
pub fn delete_wants(paths: &[PathBuf]) -> Result<Vec<Want>> {
    let mut wants = Vec::new();
    for dir in paths.iter().filter(|p| p.is_dir()) {
        let created = if dir.join(MARKER).is_file() {
            read_marker(dir)?.created
        } else {
            legacy_created(dir)?
        };
        wants.extend(created.into_iter().map(|name| Want::Delete { name }));
    }
    Ok(wants)
}

fn legacy_created(dir: &Path) -> Result<Vec<String>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Legacy {
        created: Vec<String>,
    }
    let path = dir.join(LEGACY_CREATED);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::Read { path, source }),
    };
    let legacy: Legacy = serde_json::from_str(&text).map_err(|e| {
        Error::Other(format!(
            "{}:{}: not a list of created connectors: {e}",
            path.display(),
            e.line()
        ))
    })?;
    Ok(legacy.created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_a_marker_or_with_a_foreign_one_is_not_a_backup() {
        let t = tempfile::tempdir().unwrap();
        let e = read_marker(t.path()).unwrap_err();
        assert!(e.to_string().contains("not a kco backup"), "{e}");
        assert!(e.to_string().contains(MARKER), "{e}");
        std::fs::write(
            t.path().join(MARKER),
            r#"{"kind":"other","cluster":"a","url":"u","captured_at":"t"}"#,
        )
        .unwrap();
        let e = read_marker(t.path()).unwrap_err();
        assert!(e.to_string().contains("kind `other`"), "{e}");
        std::fs::write(
            t.path().join(MARKER),
            r#"{"kind":"kco/backup-v1","cluster":"a","url":"u","captured_at":"t","created":["x"]}"#,
        )
        .unwrap();
        let m = read_marker(t.path()).unwrap();
        assert_eq!((m.cluster.as_str(), m.created.len()), ("a", 1));
        let wants = delete_wants(&[t.path().to_path_buf()]).unwrap();
        assert_eq!(wants.len(), 1);
    }
}
