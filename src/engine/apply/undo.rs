//! What a backup needs beyond offsets to undo an apply: the connectors it created. The backup
//! directory holds `created.json` (`{"created": [names]}`) beside the offsets files; applying
//! the directory (or `kco undo DIR`) deletes those connectors, after the plan and the
//! confirmation, and puts the offsets of the others back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::Want;
use crate::error::{Error, Result};
use crate::fsutil::write_atomic;

/// The file name of the list of created connectors in a backup directory.
pub const MANIFEST: &str = "created.json";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    created: Vec<String>,
}

/// Writes `<dir>/created.json` (atomically); nothing when `names` is empty.
pub fn write(dir: &Path, names: &[String]) -> Result<Option<PathBuf>> {
    if names.is_empty() {
        return Ok(None);
    }
    let path = dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(&Manifest {
        created: names.to_vec(),
    })
    .expect("a manifest serializes");
    write_atomic(&path, text.as_bytes()).map_err(|source| Error::Write {
        path: path.clone(),
        source,
    })?;
    Ok(Some(path))
}

/// A [`Want::Delete`] for each connector a backup directory among `paths` says was created.
pub fn delete_wants(paths: &[PathBuf]) -> Result<Vec<Want>> {
    let mut wants = Vec::new();
    for dir in paths.iter().filter(|p| p.is_dir()) {
        let path = dir.join(MANIFEST);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::Read { path, source }),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            Error::Other(format!(
                "{}:{}: not a list of created connectors: {e}",
                path.display(),
                e.line()
            ))
        })?;
        wants.extend(m.created.into_iter().map(|name| Want::Delete { name }));
    }
    Ok(wants)
}
