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
/// hold a listed connector) are not read again. A prune that would remove every file the
/// cluster had before the run (`created`: the files of `current` that the run wrote anew) is
/// refused, nothing removed, unless `allow_empty`: a cluster that lists none of the
/// connectors of its files is more often read from the wrong place (a wrong URL, a config
/// topic given for the status topic) than emptied.
pub(super) fn stale_files(
    dir: &Path,
    cluster_name: &str,
    listing: &BTreeMap<String, ConnectorListing>,
    (current, created): (&BTreeSet<PathBuf>, &BTreeSet<PathBuf>),
    selector: &Selector,
    prune: bool,
    allow_empty: bool,
) -> Result<Vec<StaleFile>> {
    let cluster_dir = store::cluster_dir(dir, cluster_name);
    if !cluster_dir.is_dir() {
        return Ok(Vec::new());
    }
    let files =
        store::find_files(std::slice::from_ref(&cluster_dir)).map_err(|p| Error::Files(vec![p]))?;
    let mut out = Vec::new();
    // The cluster's files from before the run that stay: current, or of a connector listed
    // or not selected.
    let mut staying = 0usize;
    for path in files {
        if current.contains(&path) {
            staying += usize::from(!created.contains(&path));
            continue;
        }
        let Ok((file, _)) = OffsetsFile::load(&path) else {
            continue;
        };
        let name = &file.metadata.name;
        if file.metadata.cluster != cluster_name {
            continue;
        }
        if listing.contains_key(name) || !selector.matches(name, Some(file.metadata.connector_type))
        {
            staying += 1;
            continue;
        }
        out.push(StaleFile {
            name: name.clone(),
            path,
            pruned: prune,
        });
    }
    if prune && !allow_empty && staying == 0 && !out.is_empty() {
        return Err(Error::WouldEmpty {
            cluster: cluster_name.to_string(),
            files: out.into_iter().map(|s| s.path).collect(),
        });
    }
    if prune {
        for s in &out {
            std::fs::remove_file(&s.path).map_err(|e| Error::Write {
                path: s.path.clone(),
                source: e,
            })?;
        }
    }
    Ok(out)
}
