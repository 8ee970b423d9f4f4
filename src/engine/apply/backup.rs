//! The pre-apply backup: the live offsets of every connector about to change, written as
//! valid kco/v1 files before the first change. Applying the directory (with `--prune`) undoes
//! the apply.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::plan::{Action, ApplyPlan};
use crate::engine::store;
use crate::error::{Error, Result};
use crate::fsutil::write_atomic;
use crate::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use crate::model::ConnectorType;

/// Where the backup went.
#[derive(Debug, Clone, Serialize)]
pub struct BackupReport {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
    /// Connectors the apply creates (listed in `created.json`: undoing deletes them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
}

impl BackupReport {
    /// Whether there is anything to undo from.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.created.is_empty()
    }
}

/// `.kco/backups/<UTC time>/<cluster>/` under `base`, for a time like `20240131T120000Z`;
/// a suffix keeps two backups in the same second apart.
pub fn default_dir(base: &Path, cluster: &str, now: std::time::SystemTime) -> PathBuf {
    let stamp: String = humantime::format_rfc3339_seconds(now)
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    let root = base.join(".kco").join("backups");
    let mut dir = root.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{stamp}-{n}"));
        n += 1;
    }
    // `file_path` puts files in `<dir>/<cluster>/`.
    let sample = store::file_path(&dir, cluster, "x");
    sample
        .parent()
        .expect("a file path has a parent")
        .to_path_buf()
}

/// Writes one file per connector that the plan changes and that exists now, and the list of
/// the connectors it creates (`created.json`). Files are named like snapshots: `<dir>/<connector>.yaml`.
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
            },
            c.live_offsets.clone(),
            None,
        );
        let name = store::file_path(Path::new(""), "x", &c.name);
        let path = dir.join(name.file_name().expect("a file path has a name"));
        write_atomic(&path, file.render(DEFAULT_SCHEMA_REF).as_bytes()).map_err(|source| {
            Error::Write {
                path: path.clone(),
                source,
            }
        })?;
        files.push(path);
    }
    let created: Vec<String> = plan
        .connectors
        .iter()
        .filter(|c| matches!(c.action, Action::Create { .. }))
        .map(|c| c.name.clone())
        .collect();
    super::undo::write(dir, &created)?;
    Ok(BackupReport {
        dir: dir.to_path_buf(),
        files,
        created,
    })
}
