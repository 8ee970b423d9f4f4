//! A change to snapshot files as a delta, partition by partition: what one commit brought
//! (`apply --commit`: its first parent to it; for a merge, everything the pull request
//! brought), or what the decisions since a revision brought (`apply --changed-since`: the
//! first-parent commits since it that are not records, then the working tree, later wins).
//! Applied, a delta sets the partitions it changed or added, removes those it removed, and
//! leaves every other partition where the cluster has it.
//!
//! A commit whose trailer marks it as a record (`trailer`: a nightly snapshot, an apply, an
//! undo) observed a cluster; it decided nothing, so it brings no change.

use std::collections::BTreeMap;
use std::path::PathBuf;

use git2::Oid;

use super::at::{first, CommitRef, FilesSource, RecordCommit, SourceFile};
use super::trailer::{self, CommitKind};
use crate::compare::{compare_each_in, PartitionKind};
use crate::engine::apply::plan::Change;
use crate::engine::revision::{Repo, Revision};
use crate::engine::store::{load_files, LoadedFile};
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;
use crate::model::{canonical_fields, Fields, OffsetEntry};

/// The files a change touched, each with what it changed, and where they came from.
#[derive(Debug)]
pub struct Delta {
    /// The newest version of each changed connector's file (the commit's, or the working
    /// tree's), with the change to apply.
    pub files: Vec<(LoadedFile, Change)>,
    pub source: FilesSource,
}

/// What `apply --commit` takes from a commit.
#[derive(Debug)]
pub enum CommitDelta {
    /// The commit is a record: nothing to apply.
    Record(RecordCommit),
    Delta(Delta),
}

/// (cluster, connector).
type Key = (String, String);

/// One connector's composed change: by canonical partition, the partition and its new offset
/// (`None`: removed).
#[derive(Debug, Default)]
struct Acc {
    partitions: BTreeMap<String, (Fields, Option<Fields>)>,
    /// The offset each partition had in the files before the first change composed.
    from: BTreeMap<String, Option<Fields>>,
    by: Option<CommitRef>,
}

fn key(f: &OffsetsFile) -> Key {
    (f.metadata.cluster.clone(), f.metadata.name.clone())
}

/// What `new` changed against `old`, partition by partition; a removed file changes nothing
/// (kco no longer manages the connector; the cluster keeps its offsets).
fn file_delta(
    old: Option<&OffsetsFile>,
    new: &OffsetsFile,
) -> Vec<(Fields, Option<Fields>, Option<Fields>)> {
    let empty = Vec::new();
    let old_offsets = old.map(|f| &f.offsets).unwrap_or(&empty);
    let m = &new.metadata;
    let shape = crate::shapes::registry().find(m.connector_type, m.connector_class.as_deref());
    compare_each_in(shape, &new.offsets, old_offsets)
        .filter_map(|d| match d.kind {
            PartitionKind::Unchanged => None,
            PartitionKind::Moved | PartitionKind::OnlyWanted => {
                Some((d.partition, d.wanted, d.actual))
            }
            PartitionKind::OnlyActual => Some((d.partition, None, d.actual)),
        })
        .collect()
}

/// The files of one side, by connector.
type SideFiles = BTreeMap<Key, (String, LoadedFile)>;

/// Every snapshot file under `paths` at `commit`, checked; labelled `COMMIT:path`.
fn at_commit(repo: &Repo, paths: &[PathBuf], commit: Oid) -> Result<SideFiles> {
    let id = commit.to_string();
    let rev = Revision {
        rev: id[..12].to_string(),
        commit: id,
        repo: Repo::discover(&repo.toplevel)?,
    };
    let (files, problems) = rev.load(paths)?;
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    Ok(files
        .into_iter()
        .map(|(p, f)| (key(&f.file), (p, f)))
        .collect())
}

/// The working tree's snapshot files under `paths`, checked.
fn in_working_tree(repo: &Repo, paths: &[PathBuf]) -> Result<SideFiles> {
    let existing: Vec<PathBuf> = paths.iter().filter(|p| p.exists()).cloned().collect();
    if existing.is_empty() {
        return Ok(SideFiles::new());
    }
    let (loaded, problems) = load_files(&existing);
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    let mut out = SideFiles::new();
    for f in loaded {
        let rel = repo.repo_path(&f.path)?;
        out.insert(key(&f.file), (rel, f));
    }
    Ok(out)
}

/// Adds the change from `old` to `new` to `acc` (later wins).
fn compose(acc: &mut BTreeMap<Key, Acc>, old: &SideFiles, new: &SideFiles, by: Option<&CommitRef>) {
    for (k, (_, f)) in new {
        let changes = file_delta(old.get(k).map(|(_, o)| &o.file), &f.file);
        if changes.is_empty() {
            continue;
        }
        let a = acc.entry(k.clone()).or_default();
        for (partition, offset, before) in changes {
            let k = canonical_fields(&partition);
            a.from.entry(k.clone()).or_insert(before);
            a.partitions.insert(k, (partition, offset));
        }
        a.by = by.cloned();
    }
}

/// The record a commit is, by its trailers, if it is one.
fn record(repo: &Repo, id: Oid) -> Result<Option<RecordCommit>> {
    let c = repo
        .git()
        .find_commit(id)
        .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
    let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
    let kind = trailer::kind(&message);
    let name = match kind {
        CommitKind::Snapshot => trailer::SNAPSHOT,
        CommitKind::Apply => trailer::APPLY,
        CommitKind::Undo => trailer::UNDO,
        CommitKind::Change => return Ok(None),
    };
    let value = trailer::value(&message, name).unwrap_or_default();
    Ok(Some(RecordCommit {
        commit: CommitRef::of(repo, id)?,
        kind,
        trailer: format!("{name}: {value}"),
    }))
}

/// The result: each changed connector's newest file (`newest`) with its change.
fn finish(
    acc: BTreeMap<Key, Acc>,
    newest: &SideFiles,
    source: &mut FilesSource,
) -> Vec<(LoadedFile, Change)> {
    let mut files = Vec::new();
    for (k, (_, f)) in newest {
        if !acc.contains_key(k) {
            source.unchanged.push(f.file.metadata.name.clone());
        }
    }
    for (k, a) in acc {
        let Some((path, f)) = newest.get(&k) else {
            source.removed.push(k.1);
            continue;
        };
        let mut change = Change::default();
        for (k, (partition, offset)) in a.partitions {
            match offset {
                Some(offset) => {
                    if let Some(Some(before)) = a.from.get(&k) {
                        change.from.insert(k, before.clone());
                    }
                    change.set.push(OffsetEntry { partition, offset })
                }
                None => change.removed.push(partition),
            }
        }
        source.files.push(SourceFile {
            connector: k.1,
            file: path.clone(),
            changed_by: a.by,
            partitions_set: Some(change.set.len()),
            partitions_removed: Some(change.removed.len()),
        });
        files.push((f.clone(), change));
    }
    files
}

/// What commit `rev` brought under `paths`: the change from its first parent to it (a root
/// commit: from nothing). A record commit brings nothing. The working tree is not read.
pub fn commit(paths: &[PathBuf], rev: &str) -> Result<CommitDelta> {
    let r = Revision::resolve(first(paths)?, rev)?;
    let id = r.oid();
    if let Some(rec) = record(&r.repo, id)? {
        return Ok(CommitDelta::Record(rec));
    }
    let commit = r
        .repo
        .git()
        .find_commit(id)
        .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
    let parent = commit.parent_id(0).ok();
    let new = at_commit(&r.repo, paths, id)?;
    let old = match parent {
        Some(p) => at_commit(&r.repo, paths, p)?,
        None => SideFiles::new(),
    };
    let this = CommitRef::of(&r.repo, id)?;
    let mut acc = BTreeMap::new();
    compose(&mut acc, &old, &new, Some(&this));
    let mut source = FilesSource {
        mode: "commit",
        rev: rev.to_string(),
        revision: this,
        files: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
        parent: parent.map(|p| CommitRef::of(&r.repo, p)).transpose()?,
        skipped: Vec::new(),
    };
    // A file the commit removed is no change to apply; say so.
    for (k, _) in old.iter().filter(|(k, _)| !new.contains_key(*k)) {
        source.removed.push(k.1.clone());
    }
    let files = finish(acc, &new, &mut source);
    Ok(CommitDelta::Delta(Delta { files, source }))
}

/// What was decided under `paths` since `rev`: the changes of the first-parent commits from
/// `rev` (excluded) to HEAD that are not records, then the working tree's uncommitted change,
/// composed in order (a later change of a partition wins).
pub fn changed_since(paths: &[PathBuf], rev: &str) -> Result<Delta> {
    let base = Revision::resolve(first(paths)?, rev)?;
    let repo = &base.repo;
    let head = repo.resolve("HEAD")?;
    let mut chain = Vec::new();
    let mut at = head;
    while at != base.oid() {
        chain.push(at);
        let c = repo
            .git()
            .find_commit(at)
            .map_err(|e| Error::Other(format!("cannot read commit {at}: {}", e.message())))?;
        at = c.parent_id(0).map_err(|_| {
            Error::Usage(format!(
                "`{rev}` (commit {}) is not on the first-parent history of HEAD: --changed-since takes the commits from it to HEAD; name an earlier commit of this branch (HEAD~1, the commit applied last)",
                &base.commit[..12]
            ))
        })?;
    }
    chain.reverse();
    let mut source = FilesSource {
        mode: "changed_since",
        rev: rev.to_string(),
        revision: CommitRef::of(repo, base.oid())?,
        files: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
        parent: None,
        skipped: Vec::new(),
    };
    let mut acc = BTreeMap::new();
    // The files of the last commit read: a commit's parent is usually the one before it, and
    // a record commit (most of a nightly history) is not read at all.
    let mut last: Option<(Oid, SideFiles)> = None;
    let files_of = |id: Oid, last: &mut Option<(Oid, SideFiles)>| -> Result<SideFiles> {
        match last.take() {
            Some((at, files)) if at == id => Ok(files),
            _ => at_commit(repo, paths, id),
        }
    };
    let mut parent = base.oid();
    for id in chain {
        match record(repo, id)? {
            Some(rec) => source.skipped.push(rec),
            None => {
                let old = files_of(parent, &mut last)?;
                let new = at_commit(repo, paths, id)?;
                compose(&mut acc, &old, &new, Some(&CommitRef::of(repo, id)?));
                last = Some((id, new));
            }
        }
        parent = id;
    }
    let head_files = files_of(head, &mut last)?;
    let work = in_working_tree(repo, paths)?;
    compose(&mut acc, &head_files, &work, None);
    let files = finish(acc, &work, &mut source);
    Ok(Delta { files, source })
}
