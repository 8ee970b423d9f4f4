//! `import`: files made from another tool's offsets (see [`super::interchange`] and
//! [`super::strimzi`]) written into the snapshots directory, atomically.
//!
//! An existing file of the same connector and cluster keeps its metadata and config; only its
//! offsets are replaced (and re-sealed), so importing Strimzi's latest listing into a
//! repository updates the offsets without losing what `kco snapshot` captured.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::store;
use crate::error::{Error, Result};
use crate::model::file::{FileProblem, OffsetsFile, ProblemKind, DEFAULT_SCHEMA_REF};

/// What happened to one imported connector's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportOutcome {
    Created,
    Updated,
    /// The file already held exactly these offsets: not rewritten.
    Unchanged,
    /// Written to stdout (`--out -`).
    Printed,
}

/// One connector of an import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportedFile {
    pub name: String,
    pub cluster: String,
    #[serde(rename = "type")]
    pub connector_type: crate::model::ConnectorType,
    pub partitions: usize,
    /// `null` with `--out -`.
    #[serde(serialize_with = "crate::shown_path::option")]
    pub path: Option<PathBuf>,
    pub outcome: ImportOutcome,
    /// The file's text (what `--out -` prints); not serialized.
    #[serde(skip)]
    pub text: String,
}

/// Where imported files go.
pub enum Destination<'a> {
    /// `<dir>/<cluster>/<connector>.yaml`.
    Snapshots(&'a Path),
    /// One file, as given.
    File(&'a Path),
    /// Standard output.
    Stdout,
}

/// Writes every imported file; with [`Destination::File`] or [`Destination::Stdout`] there must
/// be exactly one. Nothing is written when any existing file is of the other connector type.
pub fn write(files: Vec<OffsetsFile>, dest: Destination<'_>) -> Result<Vec<ImportedFile>> {
    if !matches!(dest, Destination::Snapshots(_)) && files.len() != 1 {
        return Err(Error::Usage(format!(
            "the input holds {}; --out takes one (pass --name, or import into the snapshots directory)",
            crate::text::count(files.len(), "connector")
        )));
    }
    let mut planned = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        let path = match dest {
            Destination::Snapshots(dir) => Some(store::file_path(
                dir,
                &file.metadata.cluster,
                &file.metadata.name,
            )),
            Destination::File(p) => Some(p.to_path_buf()),
            Destination::Stdout => None,
        };
        match path.as_deref().filter(|p| p.exists()) {
            Some(p) => match merge(p, file) {
                Ok(planned_file) => planned.push(planned_file),
                Err(problem) => problems.push(problem),
            },
            None => planned.push(Planned {
                file,
                old: None,
                schema: DEFAULT_SCHEMA_REF.to_string(),
                path,
            }),
        }
    }
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    let mut out = Vec::new();
    let mut points_at_schema = false;
    for Planned {
        file,
        old,
        schema,
        path,
    } in planned
    {
        let text = file.render(&schema);
        let outcome = match (&path, &old) {
            (None, _) => ImportOutcome::Printed,
            (Some(_), Some(o)) if *o == text => ImportOutcome::Unchanged,
            (Some(p), old) => {
                points_at_schema |= schema == DEFAULT_SCHEMA_REF;
                crate::fsutil::write_atomic(p, text.as_bytes()).map_err(|source| Error::Write {
                    path: p.clone(),
                    source,
                })?;
                if old.is_some() {
                    ImportOutcome::Updated
                } else {
                    ImportOutcome::Created
                }
            }
        };
        out.push(ImportedFile {
            name: file.metadata.name.clone(),
            cluster: file.metadata.cluster.clone(),
            connector_type: file.metadata.connector_type,
            partitions: file.offsets.len(),
            path,
            outcome,
            text,
        });
    }
    if let (Destination::Snapshots(dir), true) = (dest, points_at_schema) {
        store::write_schema(dir)?;
    }
    Ok(out)
}

/// The new offsets in the existing file at `path`, its metadata and config kept; with that
/// file's text and `$schema` reference. A file of another connector or type is refused rather
/// than overwritten.
fn merge(path: &Path, new: OffsetsFile) -> std::result::Result<Planned, FileProblem> {
    let (mut old, text) = OffsetsFile::load(path)?;
    let (a, b) = (&old.metadata, &new.metadata);
    if a.name != b.name || a.cluster != b.cluster || a.connector_type != b.connector_type {
        return Err(FileProblem::new(
            ProblemKind::Invalid,
            path,
            None,
            format!(
                "already holds {} connector `{}` of cluster `{}`; the import is {} connector `{}` of `{}` (move the file or choose --out)",
                a.connector_type, a.name, a.cluster, b.connector_type, b.name, b.cluster
            ),
        ));
    }
    if old.offsets != new.offsets || !old.is_sealed() {
        // Not what was captured then: the capture's time and state no longer describe them.
        old.offsets = new.offsets;
        old.metadata.captured_at = None;
        old.metadata.state = None;
        old.seal();
    }
    let schema = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(crate::model::file::SCHEMA_COMMENT))
        .unwrap_or(DEFAULT_SCHEMA_REF)
        .to_string();
    Ok(Planned {
        file: old,
        old: Some(text),
        schema,
        path: Some(path.to_path_buf()),
    })
}

struct Planned {
    file: OffsetsFile,
    old: Option<String>,
    schema: String,
    path: Option<PathBuf>,
}

#[cfg(test)]
mod tests;
