//! Snapshot files whose connector is gone: reported, and removed with `--prune`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{store, Selector};
use crate::client::ConnectorListing;
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;

/// A file whose connector no longer exists on the cluster.
#[derive(Debug, Clone, Serialize)]
pub struct StaleFile {
    pub name: String,
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub path: PathBuf,
    /// Whether `--prune` removed it.
    pub pruned: bool,
}

/// Files in the cluster's directory whose connector is gone (among the selected names);
/// removed when `prune`. Files that do not parse are left alone; files in `current` (known to
/// hold a listed connector) are not read again.
pub(super) fn stale_files(
    dir: &Path,
    cluster_name: &str,
    listing: &BTreeMap<String, ConnectorListing>,
    current: &BTreeSet<PathBuf>,
    selector: &Selector,
    prune: bool,
) -> Result<Vec<StaleFile>> {
    let cluster_dir = store::cluster_dir(dir, cluster_name);
    if !cluster_dir.is_dir() {
        return Ok(Vec::new());
    }
    let files =
        store::find_files(std::slice::from_ref(&cluster_dir)).map_err(|p| Error::Files(vec![p]))?;
    let mut out = Vec::new();
    for path in files {
        if current.contains(&path) {
            continue;
        }
        let Ok((file, _)) = OffsetsFile::load(&path) else {
            continue;
        };
        let name = &file.metadata.name;
        if file.metadata.cluster != cluster_name
            || listing.contains_key(name)
            || !selector.matches(name, Some(file.metadata.connector_type))
        {
            continue;
        }
        if prune {
            std::fs::remove_file(&path).map_err(|e| Error::Write {
                path: path.clone(),
                source: e,
            })?;
        }
        out.push(StaleFile {
            name: name.clone(),
            path,
            pruned: prune,
        });
    }
    Ok(out)
}
