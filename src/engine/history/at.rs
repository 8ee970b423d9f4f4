//! Files from git history as inputs: `show --at` (one connector's offsets at a revision or a
//! time), `apply --at` (every file as it was then) and `apply --changed-since` (only the files
//! whose offsets changed since a revision), each saying which commit a file came from.

use std::path::{Path, PathBuf};

use git2::Oid;
use serde::Serialize;

use super::walk::last_changes;
use super::when::{resolve_at, rfc3339};
use crate::engine::diff::{diff_base, BaseInput, Status};
use crate::engine::revision::{Repo, Revision};
use crate::engine::store::LoadedFile;
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;

/// A commit, as the plan and `show` name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitRef {
    pub commit: String,
    /// Committer date, RFC 3339 UTC.
    pub date: String,
    pub summary: String,
}

impl CommitRef {
    pub fn of(repo: &Repo, id: Oid) -> Result<CommitRef> {
        let c = repo
            .git()
            .find_commit(id)
            .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
        Ok(CommitRef {
            commit: id.to_string(),
            date: rfc3339(c.time().seconds()),
            summary: String::from_utf8_lossy(c.summary_bytes().unwrap_or_default()).into_owned(),
        })
    }
}

/// Where the files of an `apply --at` or `apply --changed-since` came from.
#[derive(Debug, Clone, Serialize)]
pub struct FilesSource {
    /// `at` or `changed_since`.
    pub mode: &'static str,
    /// The revision or time as given.
    pub rev: String,
    /// The commit it names.
    pub revision: CommitRef,
    pub files: Vec<SourceFile>,
    /// `changed_since`: connectors whose files did not change (left alone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unchanged: Vec<String>,
    /// `changed_since`: connectors whose files were removed (not applied: the cluster keeps
    /// their offsets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

/// One file taken, with the commit that last changed it (`at`: at or before the revision;
/// `changed_since`: after the revision; `null`: changed in the working tree, not committed).
#[derive(Debug, Clone, Serialize)]
pub struct SourceFile {
    pub connector: String,
    /// Repository-relative.
    pub file: String,
    pub changed_by: Option<CommitRef>,
}

fn first(paths: &[PathBuf]) -> Result<&PathBuf> {
    paths
        .first()
        .ok_or_else(|| Error::Usage("no path to read".into()))
}

/// For each repository-relative path, the newest commit from `head` (down to `stop`) that
/// changed it.
fn changed_by(
    repo: &Repo,
    head: Oid,
    stop: Option<Oid>,
    paths: &[String],
) -> Result<Vec<Option<CommitRef>>> {
    last_changes(repo, head, stop, "", paths)?
        .into_iter()
        .map(|id| id.map(|id| CommitRef::of(repo, id)).transpose())
        .collect()
}

/// Every snapshot file under `paths` as it was at `at` (a revision or a time), checked; each
/// file's `path` is `COMMIT:path` with the commit's first 12 digits. Nothing in the working
/// tree is read or changed.
pub fn files_at(paths: &[PathBuf], at: &str) -> Result<(Vec<LoadedFile>, FilesSource)> {
    let rev = resolve_at(first(paths)?, at)?;
    let short = rev.commit[..12].to_string();
    let labelled = Revision { rev: short, ..rev };
    let (files, problems) = labelled.load(paths)?;
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    if files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::Usage(format!(
            "no snapshot files (*.yaml) under {} at `{at}` (commit {})",
            shown.join(", "),
            labelled.rev
        )));
    }
    let repo_paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let by = changed_by(&labelled.repo, labelled.oid(), None, &repo_paths)?;
    let source = FilesSource {
        mode: "at",
        rev: at.to_string(),
        revision: CommitRef::of(&labelled.repo, labelled.oid())?,
        files: files
            .iter()
            .zip(by)
            .map(|((p, f), by)| SourceFile {
                connector: f.file.metadata.name.clone(),
                file: p.clone(),
                changed_by: by,
            })
            .collect(),
        unchanged: Vec::new(),
        removed: Vec::new(),
    };
    Ok((files.into_iter().map(|(_, f)| f).collect(), source))
}

/// The working-tree files under `paths` whose offsets (or type or class) differ from `rev`'s,
/// as `diff --base` compares them; removed files are reported, not returned.
pub fn changed_since(paths: &[PathBuf], rev: &str) -> Result<(Vec<PathBuf>, FilesSource)> {
    let report = diff_base(BaseInput {
        rev,
        paths,
        cluster: None,
    })?;
    let base = Revision::resolve(first(paths)?, rev)?;
    let mut source = FilesSource {
        mode: "changed_since",
        rev: rev.to_string(),
        revision: CommitRef::of(&base.repo, base.oid())?,
        files: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
    };
    let mut taken = Vec::new();
    for c in report.connectors {
        match (c.status, c.file) {
            (Status::Unchanged, _) => source.unchanged.push(c.name),
            (Status::Removed, _) => source.removed.push(c.name),
            (_, Some(file)) => {
                taken.push(base.repo.toplevel.join(&file));
                source.files.push(SourceFile {
                    connector: c.name,
                    file,
                    changed_by: None,
                });
            }
            (_, None) => {}
        }
    }
    let repo_paths: Vec<String> = source.files.iter().map(|f| f.file.clone()).collect();
    let head = base.repo.resolve("HEAD")?;
    let by = changed_by(&base.repo, head, Some(base.oid()), &repo_paths)?;
    for (f, by) in source.files.iter_mut().zip(by) {
        f.changed_by = by;
    }
    Ok((taken, source))
}

/// One connector's file at a revision or time (`at`), or in the working tree (`None`).
pub struct Shown {
    pub file: OffsetsFile,
    /// Repository-relative at a revision; as given in the working tree.
    pub path: String,
    pub at: Option<(String, CommitRef)>,
}

/// `name`'s file: `path` (its usual place) or, when the file moved, the one under `dir` whose
/// metadata names it.
pub fn show(path: &Path, dir: &Path, name: &str, at: Option<&str>) -> Result<Shown> {
    let Some(at) = at else {
        let (file, _) = OffsetsFile::load(path).map_err(|p| Error::Files(vec![p]))?;
        return Ok(Shown {
            file,
            path: path.display().to_string(),
            at: None,
        });
    };
    let rev = resolve_at(path, at)?;
    let commit = CommitRef::of(&rev.repo, rev.oid())?;
    let (mut files, problems) = rev.load(&[path.to_path_buf()])?;
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    if files.is_empty() {
        (files, _) = rev.load(&[dir.to_path_buf()])?;
        files.retain(|(_, f)| f.file.metadata.name == name);
    }
    match files.into_iter().next() {
        Some((p, f)) => Ok(Shown {
            file: f.file,
            path: p,
            at: Some((at.to_string(), commit)),
        }),
        None => Err(Error::Usage(format!(
            "connector `{name}` has no snapshot file at `{at}` (commit {}) under {}",
            &commit.commit[..12],
            rev.repo_path(dir).unwrap_or_default()
        ))),
    }
}
