//! Files from git history as inputs: `show --at` (one connector's offsets at a revision or a
//! time) and `apply --at` (every file as it was then), each saying which commit a file came
//! from; `apply --commit` and `--changed-since` take a change instead (`delta`).

use std::path::{Path, PathBuf};

use git2::Oid;
use serde::Serialize;

use super::had::History;
use super::walk::last_changes;
use super::when::{resolve_at, rfc3339, short_id};
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
    /// `changed_since`, `commit`: connectors whose files were removed (not applied: the
    /// cluster keeps their offsets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// `commit`, `changed_since`, `unapplied`: connectors whose files kco rewrote from live
    /// (observations: a new `capturedAt`), not applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub observed: Vec<String>,
    /// `commit`: its first parent, the side the change is taken from (none: a root commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<CommitRef>,
    /// `at`: connectors whose file at the revision holds no version the cluster had (only
    /// changes no apply record covers): not applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub never_had: Vec<String>,
    /// `changed_since`, `unapplied`: the commits in the range that brought observations only
    /// (a nightly snapshot, an apply or undo record, a plain commit of a snapshot): not
    /// applied. `trailer` is empty for a commit without a kco trailer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<RecordCommit>,
    /// `commit`, `changed_since`, `unapplied`: versions of a file in the range that kco
    /// cannot take (a checksum that does not match, YAML that does not parse), passed over:
    /// the next valid version of the same file brings the net change once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<InvalidVersion>,
    /// `unapplied`: the shared remote's mark of what was applied to the cluster
    /// (`super::mark`), when there is one, and what the run made of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_mark: Option<MarkSeen>,
}

/// The shared remote's mark, as `apply --unapplied` read it.
#[derive(Debug, Clone, Serialize)]
pub struct MarkSeen {
    #[serde(flatten)]
    pub mark: super::mark::AppliedMark,
    /// `covers_head`: this checkout has nothing newer than what the mark says was applied
    /// (nothing from history is applied); `start`: the changes after the commit it names
    /// are applied (it is newer than this checkout's own records); `older`: this checkout's
    /// own record is newer; `unrelated`: its commit is not on this checkout's history
    /// (ignored).
    #[serde(rename = "use")]
    pub used: MarkUse,
}

/// What `apply --unapplied` made of the remote's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkUse {
    CoversHead,
    Start,
    Older,
    Unrelated,
}

/// A version of a snapshot file that kco cannot take, passed over for a valid one.
#[derive(Debug, Clone, Serialize)]
pub struct InvalidVersion {
    /// The commit that wrote the version.
    pub commit: CommitRef,
    /// Repository-relative.
    pub file: String,
    /// The first problem found, with its line: `line 19: checksum mismatch ...`.
    pub problem: String,
    /// What stands in its place: `superseded` (a later valid version of the file: the
    /// change from the last valid version to it is applied once), `base` (the version the
    /// range starts from: its offsets are read as written, the seal not checked) or
    /// `earlier` (the version the range starts from does not parse: the file's last valid
    /// version before it stands).
    pub instead: Instead,
    /// `superseded`: the commit of the valid version (`null`: the working tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<CommitRef>,
}

/// What stands in place of an [`InvalidVersion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Instead {
    Superseded,
    Base,
    Earlier,
}

/// A commit whose trailer marks it as a record (`Kco-Snapshot`, `Kco-Apply`, `Kco-Undo`).
#[derive(Debug, Clone, Serialize)]
pub struct RecordCommit {
    #[serde(flatten)]
    pub commit: CommitRef,
    pub kind: super::trailer::CommitKind,
    /// The trailer, as written: `Kco-Snapshot: prod`.
    pub trailer: String,
}

/// One file taken, with the commit that last changed it (`at`: at or before the revision;
/// `changed_since`: after the revision; `null`: changed in the working tree, not committed).
#[derive(Debug, Clone, Serialize)]
pub struct SourceFile {
    pub connector: String,
    /// Repository-relative.
    pub file: String,
    pub changed_by: Option<CommitRef>,
    /// `changed_since`, `unapplied`: every commit whose change to the file is applied, oldest
    /// first, when more than one is (`changed_by` is the newest).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<CommitRef>,
    /// `changed_since`, `commit`: how many partitions the change sets (changed or added) and
    /// removes; every other partition is left where the cluster has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions_set: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions_removed: Option<usize>,
    /// `at`: the changes at or before the revision, newer than the version taken, that no
    /// apply record of the cluster covers: passed over, the cluster never had them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<CommitRef>,
}

pub(super) fn first(paths: &[PathBuf]) -> Result<&PathBuf> {
    paths
        .first()
        .ok_or_else(|| Error::Usage("no path to read".into()))
}

/// For each repository-relative path, the newest commit from `head` (down to `stop`) that
/// changed it.
pub(super) fn changed_by(
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

/// Every snapshot file under `paths` as the cluster had it at `at` (a revision or a time:
/// `super::had`), checked; each file's `path` is `COMMIT:path` with the first 12 digits of
/// the commit it was read at. Nothing in the working tree is read or changed.
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
    let mut history = History::of(&labelled.repo, labelled.oid())?;
    let mut source = FilesSource {
        mode: "at",
        rev: at.to_string(),
        revision: CommitRef::of(&labelled.repo, labelled.oid())?,
        files: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
        observed: Vec::new(),
        never_had: Vec::new(),
        parent: None,
        skipped: Vec::new(),
        invalid: Vec::new(),
        remote_mark: None,
    };
    let mut taken = Vec::new();
    for ((p, f), by) in files.into_iter().zip(by) {
        let had = history.had(&p)?;
        let not_applied = had
            .not_applied
            .iter()
            .map(|id| CommitRef::of(&labelled.repo, *id))
            .collect::<Result<Vec<_>>>()?;
        let (file, by) = match had.version {
            None => {
                source.never_had.push(f.file.metadata.name.clone());
                continue;
            }
            Some(_) if not_applied.is_empty() => (f, by),
            Some((older, id)) => (older, Some(CommitRef::of(&labelled.repo, id)?)),
        };
        source.files.push(SourceFile {
            connector: file.file.metadata.name.clone(),
            file: p,
            changed_by: by,
            changes: Vec::new(),
            partitions_set: None,
            partitions_removed: None,
            not_applied,
        });
        taken.push(file);
    }
    if taken.is_empty() {
        return Err(Error::Usage(format!(
            "no snapshot file under `{at}` (commit {}) holds a position the cluster had: {} {} only changes no apply record covers (kco takes observations and applied changes only)",
            labelled.rev,
            source.never_had.join(", "),
            if source.never_had.len() == 1 { "has" } else { "have" }
        )));
    }
    Ok((taken, source))
}

/// One connector's file at a revision or time (`at`), or in the working tree (`None`).
pub struct Shown {
    pub file: OffsetsFile,
    /// Repository-relative at a revision; as given in the working tree.
    pub path: String,
    pub at: Option<(String, CommitRef)>,
    /// At a revision: the commit that wrote the version shown, when it is not the last
    /// change of the file (changes passed over).
    pub version: Option<CommitRef>,
    /// At a revision: the changes passed over (no apply record covers them), newest first.
    pub not_applied: Vec<CommitRef>,
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
            version: None,
            not_applied: Vec::new(),
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
    let Some((p, f)) = files.into_iter().next() else {
        return Err(Error::Usage(format!(
            "connector `{name}` has no snapshot file at `{at}` (commit {}) under {}",
            &commit.commit[..12],
            rev.repo_path(dir).unwrap_or_default()
        )));
    };
    let had = History::of(&rev.repo, rev.oid())?.had(&p)?;
    let not_applied = had
        .not_applied
        .iter()
        .map(|id| CommitRef::of(&rev.repo, *id))
        .collect::<Result<Vec<_>>>()?;
    match had.version {
        Some(_) if not_applied.is_empty() => Ok(Shown {
            file: f.file,
            path: p,
            at: Some((at.to_string(), commit)),
            version: None,
            not_applied,
        }),
        Some((older, id)) => Ok(Shown {
            file: older.file,
            path: p,
            at: Some((at.to_string(), commit)),
            version: Some(CommitRef::of(&rev.repo, id)?),
            not_applied,
        }),
        None => Err(Error::Usage(format!(
            "connector `{name}` has no position cluster `{}` had at `{at}` (commit {}): {} holds only changes no apply record covers ({}); kco shows observations and applied changes only",
            f.file.metadata.cluster,
            &commit.commit[..12],
            p,
            not_applied
                .iter()
                .map(|c| short_id(&c.commit).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
