//! A change to snapshot files as a delta, partition by partition: what one commit brought
//! (`apply --commit`: its first parent to it; for a merge, everything the pull request
//! brought), or what the decisions since a revision brought (`apply --changed-since`: the
//! first-parent commits since it that are not records, then the working tree, later wins).
//! Applied, a delta sets the partitions it changed or added, removes those it removed, and
//! leaves every other partition where the cluster has it.
//!
//! Which versions of a file bring a change is told by the file (`super::version`): a file kco
//! rewrote from live (a new `capturedAt`) is an observation and brings nothing, whatever the
//! commit's trailers say; a commit that mixes both brings only its changes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use git2::Oid;

use super::at::{
    first, CommitRef, FilesSource, Instead, InvalidVersion, MarkSeen, MarkUse, RecordCommit,
    SourceFile,
};
use super::mark::{standing, AppliedMark, Standing};
use super::trailer::{self, CommitKind};
use super::version::{version, Version};
use crate::compare::{compare_each_in, PartitionKind};
use crate::engine::apply::plan::Change;
use crate::engine::revision::{Repo, Revision};
use crate::engine::store::{load_files, LoadedFile};
use crate::error::{Error, Result};
use crate::model::file::FileProblem;
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
    Delta(Box<Delta>),
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
    /// Every commit that brought a change to it, oldest first.
    all_by: Vec<CommitRef>,
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

/// `commit` as a revision whose files are labelled `COMMIT:path` (its first 12 digits).
fn revision(repo: &Repo, commit: Oid) -> Result<Revision> {
    let id = commit.to_string();
    Ok(Revision {
        rev: id[..12].to_string(),
        commit: id,
        repo: Repo::discover(&repo.toplevel)?,
    })
}

/// Every snapshot file under `paths` at `commit`, checked; labelled `COMMIT:path`.
fn at_commit(repo: &Repo, paths: &[PathBuf], commit: Oid) -> Result<SideFiles> {
    let (files, problems) = revision(repo, commit)?.load(paths)?;
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    Ok(files
        .into_iter()
        .map(|(p, f)| (key(&f.file), (p, f)))
        .collect())
}

/// The snapshot files under `paths` at a commit, read as a range reads them: the valid ones by
/// connector; by repository path, the first problem of each version kco cannot take; and of
/// those, the ones that parse (their offsets readable as written, a check such as the seal
/// failing).
struct AtCommit {
    valid: SideFiles,
    invalid: BTreeMap<String, String>,
    parsed: SideFiles,
}

/// `line 19: checksum mismatch ...`.
fn problem_words(p: &FileProblem) -> String {
    match p.line {
        Some(line) => format!("line {line}: {}", p.message),
        None => p.message.clone(),
    }
}

fn read_commit(repo: &Repo, paths: &[PathBuf], commit: Oid) -> Result<AtCommit> {
    let rev = revision(repo, commit)?;
    let prefix = format!("{}:", rev.rev);
    let (files, problems) = rev.load(paths)?;
    let mut invalid = BTreeMap::new();
    for p in &problems {
        let label = p.path.to_string_lossy();
        let path = label.strip_prefix(&prefix).unwrap_or(&label).to_string();
        invalid.entry(path).or_insert_with(|| problem_words(p));
    }
    let (mut valid, mut parsed) = (SideFiles::new(), SideFiles::new());
    for (path, f) in files {
        let side = match invalid.contains_key(&path) {
            true => &mut parsed,
            false => &mut valid,
        };
        side.insert(key(&f.file), (path, f));
    }
    Ok(AtCommit {
        valid,
        invalid,
        parsed,
    })
}

/// The entry of `files` read from repository path `path`.
fn by_path<'a>(files: &'a SideFiles, path: &str) -> Option<(&'a Key, &'a (String, LoadedFile))> {
    files.iter().find(|(_, (p, _))| p == path)
}

/// The files a range (or a commit's change) starts from, at `base`: a version that fails its
/// checks (a hand edit never re-sealed, which a skip record may name) is read as written; one
/// that does not parse gives way to the file's last valid version on the first-parent
/// history before `base`. Each is noted in `notes`.
fn at_base(
    repo: &Repo,
    paths: &[PathBuf],
    base: Oid,
    notes: &mut Vec<InvalidVersion>,
) -> Result<SideFiles> {
    let at = read_commit(repo, paths, base)?;
    if at.invalid.is_empty() {
        return Ok(at.valid);
    }
    let this = CommitRef::of(repo, base)?;
    let mut files = at.valid;
    for (path, problem) in &at.invalid {
        let instead = match by_path(&at.parsed, path) {
            Some((k, entry)) => {
                files.insert(k.clone(), entry.clone());
                Instead::Base
            }
            None => {
                if let Some((k, entry)) = earlier_valid(repo, paths, base, path)? {
                    files.insert(k, entry);
                }
                Instead::Earlier
            }
        };
        notes.push(InvalidVersion {
            commit: this.clone(),
            file: path.clone(),
            problem: problem.clone(),
            instead,
            superseded_by: None,
        });
    }
    Ok(files)
}

/// The newest valid version of the file at `path` on the first-parent history before `from`;
/// none when the file did not exist before its versions that cannot be taken.
fn earlier_valid(
    repo: &Repo,
    paths: &[PathBuf],
    from: Oid,
    path: &str,
) -> Result<Option<(Key, (String, LoadedFile))>> {
    let parent = |id: Oid| -> Result<Option<Oid>> {
        let c = repo
            .git()
            .find_commit(id)
            .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
        Ok(c.parent_id(0).ok())
    };
    let mut at = parent(from)?;
    while let Some(id) = at {
        let c = read_commit(repo, paths, id)?;
        if let Some((k, entry)) = by_path(&c.valid, path) {
            return Ok(Some((k.clone(), entry.clone())));
        }
        if !c.invalid.contains_key(path) {
            return Ok(None);
        }
        at = parent(id)?;
    }
    Ok(None)
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

/// Adds the change from `old` to `new` to `acc` (later wins); the connectors whose files
/// `new` observed (rewrote from live) are added to `observed`, and bring nothing. Returns
/// whether any file brought a change. `author`: the files as the change's author saw them
/// (a merge's merge base), which give each partition's direction (`Change::from`, what
/// `risk::passed` judges) in place of `old`'s.
fn compose(
    acc: &mut BTreeMap<Key, Acc>,
    old: &SideFiles,
    new: &SideFiles,
    by: Option<&CommitRef>,
    author: Option<&SideFiles>,
    observed: &mut Vec<String>,
) -> bool {
    let mut changed = false;
    for (k, (_, f)) in new {
        let before = old.get(k).map(|(_, o)| &o.file);
        match version(before, &f.file) {
            Version::Unchanged => continue,
            Version::Observation => {
                if !observed.contains(&k.1) {
                    observed.push(k.1.clone());
                }
                continue;
            }
            Version::Change => {}
        }
        let changes = file_delta(before, &f.file);
        if changes.is_empty() {
            continue;
        }
        changed = true;
        let seen: Option<BTreeMap<String, &Fields>> = author.map(|files| {
            files
                .get(k)
                .map(|(_, f)| &f.file.offsets[..])
                .unwrap_or_default()
                .iter()
                .map(|e| (canonical_fields(&e.partition), &e.offset))
                .collect()
        });
        let a = acc.entry(k.clone()).or_default();
        for (partition, offset, before) in changes {
            let k = canonical_fields(&partition);
            let before = match &seen {
                Some(seen) => seen.get(&k).map(|o| (*o).clone()),
                None => before,
            };
            a.from.entry(k.clone()).or_insert(before);
            a.partitions.insert(k, (partition, offset));
        }
        a.by = by.cloned();
        if let Some(by) = by {
            a.all_by.push(by.clone());
        }
    }
    changed
}

/// The record a commit says it is, by its trailers, if it says so (a label: the files tell
/// what it brings).
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
        if !acc.contains_key(k) && !source.observed.contains(&k.1) {
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
            changes: match a.all_by.len() {
                0 | 1 => Vec::new(),
                _ => a.all_by,
            },
            partitions_set: Some(change.set.len()),
            partitions_removed: Some(change.removed.len()),
            not_applied: Vec::new(),
        });
        files.push((f.clone(), change));
    }
    files
}

/// What commit `rev` brought under `paths`: the change from its first parent to it (a root
/// commit: from nothing), file by file; a file it observed brings nothing. A commit whose
/// trailer says it is a record and that brings no change is [`CommitDelta::Record`]. The
/// working tree is not read.
pub fn commit(paths: &[PathBuf], rev: &str) -> Result<CommitDelta> {
    let r = Revision::resolve(first(paths)?, rev)?;
    let id = r.oid();
    let commit = r
        .repo
        .git()
        .find_commit(id)
        .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
    let parent = commit.parent_id(0).ok();
    let new = at_commit(&r.repo, paths, id)?;
    let mut invalid = Vec::new();
    let old = match parent {
        Some(p) => at_base(&r.repo, paths, p, &mut invalid)?,
        None => SideFiles::new(),
    };
    let this = CommitRef::of(&r.repo, id)?;
    let mut acc = BTreeMap::new();
    let mut source = FilesSource {
        mode: "commit",
        rev: rev.to_string(),
        revision: this.clone(),
        files: Vec::new(),
        unchanged: Vec::new(),
        removed: Vec::new(),
        observed: Vec::new(),
        never_had: Vec::new(),
        parent: parent.map(|p| CommitRef::of(&r.repo, p)).transpose()?,
        skipped: Vec::new(),
        invalid,
        remote_mark: None,
    };
    let author = merge_base_files(&r.repo, paths, id)?;
    let changed = compose(
        &mut acc,
        &old,
        &new,
        Some(&this),
        author.as_ref(),
        &mut source.observed,
    );
    if !changed {
        if let Some(rec) = record(&r.repo, id)? {
            return Ok(CommitDelta::Record(rec));
        }
    }
    // A file the commit removed is no change to apply; say so.
    for (k, _) in old.iter().filter(|(k, _)| !new.contains_key(*k)) {
        source.removed.push(k.1.clone());
    }
    let files = finish(acc, &new, &mut source);
    Ok(CommitDelta::Delta(Box::new(Delta { files, source })))
}

/// The first-parent commits from `base` (excluded) to `head`, oldest first; a usage error
/// naming `rev` when `base` is not on that history.
fn first_parent_chain(
    repo: &Repo,
    base: Oid,
    head: Oid,
    rev: &str,
    flag: &str,
) -> Result<Vec<Oid>> {
    let mut chain = Vec::new();
    let mut at = head;
    while at != base {
        chain.push(at);
        let c = repo
            .git()
            .find_commit(at)
            .map_err(|e| Error::Other(format!("cannot read commit {at}: {}", e.message())))?;
        at = c.parent_id(0).map_err(|_| {
            Error::Usage(format!(
                "`{rev}` (commit {}) is not on the first-parent history of HEAD: {flag} takes the commits from it to HEAD; name an earlier commit of this branch (HEAD~1, the commit applied last)",
                &base.to_string()[..12]
            ))
        })?;
    }
    chain.reverse();
    Ok(chain)
}

/// What was decided under `paths` since `rev`: the changes of the first-parent commits from
/// `rev` (excluded) to HEAD, then the working tree's uncommitted change, composed in order (a
/// later change of a partition wins); the files those commits observed bring nothing.
pub fn changed_since(paths: &[PathBuf], rev: &str) -> Result<Delta> {
    let base = Revision::resolve(first(paths)?, rev)?;
    since(
        paths,
        &base.repo,
        base.oid(),
        rev,
        "changed_since",
        "--changed-since",
    )
}

/// Every change not yet applied to `cluster` under `paths`: the changes since the last one
/// applied, found on the first-parent history of HEAD from the newest record of `cluster`
/// (`Kco-Apply: CLUSTER`: from the commit its `Kco-Commit` names, when that is on the
/// history, else from the record itself; `Kco-Undo: CLUSTER`: from the record), or from the
/// shared remote's `mark` of what was applied when that is newer; then the working tree. So a
/// nightly landing after a merge never hides it, and a rerun after the record, or on a
/// checkout older than what another runner applied, applies nothing. No record of `cluster`
/// and no mark: a usage error saying where to start.
pub fn unapplied(paths: &[PathBuf], cluster: &str, mark: Option<&AppliedMark>) -> Result<Delta> {
    let repo = Repo::discover(first(paths)?)?;
    let head = repo.resolve("HEAD")?;
    let local = last_applied(&repo, head, cluster)?;
    let seen = mark.map(|m| (m, standing(&repo, head, m)));
    let (base, rev, used) = match (&seen, local) {
        (Some((m, Standing::Covered)), _) => (
            head,
            mark_words(m),
            Some(MarkUse::CoversHead),
        ),
        (Some((m, Standing::Behind(at))), local)
            if on_first_parents(&repo, head, *at)
                && local.as_ref().is_none_or(|(l, _)| {
                    repo.git().graph_descendant_of(*at, *l).unwrap_or(false)
                }) =>
        {
            (*at, mark_words(m), Some(MarkUse::Start))
        }
        (seen, Some((base, rev))) => {
            let used = seen.as_ref().map(|(_, s)| match s {
                Standing::Unrelated => MarkUse::Unrelated,
                _ => MarkUse::Older,
            });
            (base, rev, used)
        }
        (_, None) => {
            return Err(Error::Usage(format!(
                "no apply record of cluster `{cluster}` on the first-parent history of HEAD (a commit with the trailer `{}: {cluster}`), and no mark of what was applied on the shared git remote: kco cannot tell which changes the cluster already has; name where to start once with --changed-since REV (the last commit whose changes the cluster has), then record the apply (`kco snapshot --commit --record apply --trailer \"Kco-Commit: $(git rev-parse HEAD)\"`)",
                trailer::APPLY
            )))
        }
    };
    let mut delta = since(paths, &repo, base, &rev, "unapplied", "--unapplied")?;
    delta.source.remote_mark = match (mark, used) {
        (Some(m), Some(used)) => Some(MarkSeen {
            mark: m.clone(),
            used,
        }),
        _ => None,
    };
    Ok(delta)
}

/// How the plan names a start at the remote's mark.
fn mark_words(m: &AppliedMark) -> String {
    format!(
        "{}: {} on the shared remote",
        trailer::COMMIT,
        &m.commit[..m.commit.len().min(12)]
    )
}

/// The position of the newest apply (or undo) record of `cluster` on the first-parent history
/// of `head`, and how to name it.
fn last_applied(repo: &Repo, head: Oid, cluster: &str) -> Result<Option<(Oid, String)>> {
    let mut at = Some(head);
    while let Some(id) = at {
        let c = repo
            .git()
            .find_commit(id)
            .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
        let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
        let names = |key| trailer::value(&message, key).is_some_and(|v| v.trim() == cluster);
        if names(trailer::APPLY) {
            let applied = trailer::value(&message, trailer::COMMIT)
                .and_then(|v| git2::Oid::from_str(v.trim()).ok())
                .filter(|c| on_first_parents(repo, id, *c));
            return Ok(Some(match applied {
                Some(c) => (c, format!("{}: {}", trailer::COMMIT, &c.to_string()[..12])),
                None => (id, format!("{}: {cluster}", trailer::APPLY)),
            }));
        }
        if names(trailer::UNDO) {
            return Ok(Some((id, format!("{}: {cluster}", trailer::UNDO))));
        }
        at = c.parent_id(0).ok();
    }
    Ok(None)
}

/// Whether `target` is `from` or one of its first-parent ancestors.
fn on_first_parents(repo: &Repo, from: Oid, target: Oid) -> bool {
    let mut at = Some(from);
    while let Some(id) = at {
        if id == target {
            return true;
        }
        at = repo
            .git()
            .find_commit(id)
            .ok()
            .and_then(|c| c.parent_id(0).ok());
    }
    false
}

/// The changes since `base` (see [`changed_since`]), the source labelled `mode`.
fn since(
    paths: &[PathBuf],
    repo: &Repo,
    base: Oid,
    rev: &str,
    mode: &'static str,
    flag: &str,
) -> Result<Delta> {
    let head = repo.resolve("HEAD")?;
    let chain = first_parent_chain(repo, base, head, rev, flag)?;
    let mut source = FilesSource {
        mode,
        rev: rev.to_string(),
        revision: CommitRef::of(repo, base)?,
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
    let mut acc = BTreeMap::new();
    let mut observed = Vec::new();
    let mut old = at_base(repo, paths, base, &mut source.invalid)?;
    // By repository path, the versions that cannot be taken since the file's last valid one.
    let mut pending: BTreeMap<String, Vec<(CommitRef, String)>> = BTreeMap::new();
    for id in chain {
        let this = CommitRef::of(repo, id)?;
        let new = next_version(repo, paths, id, &this, &old, &mut pending, &mut source)?;
        let author = merge_base_files(repo, paths, id)?;
        let mut seen = Vec::new();
        let changed = compose(
            &mut acc,
            &old,
            &new,
            Some(&this),
            author.as_ref(),
            &mut seen,
        );
        if !changed {
            match record(repo, id)? {
                Some(rec) => source.skipped.push(rec),
                None if !seen.is_empty() => source.skipped.push(RecordCommit {
                    commit: CommitRef::of(repo, id)?,
                    kind: CommitKind::Snapshot,
                    trailer: String::new(),
                }),
                None => {}
            }
        }
        for n in seen {
            if !observed.contains(&n) {
                observed.push(n);
            }
        }
        old = new;
    }
    let work = in_working_tree(repo, paths)?;
    for (path, bad) in std::mem::take(&mut pending) {
        superseded(&mut source, &path, bad, None);
    }
    compose(&mut acc, &old, &work, None, None, &mut observed);
    // A connector a change touched is reported with it, not as observed.
    observed.retain(|n| !acc.keys().any(|k| &k.1 == n));
    source.observed = observed;
    let files = finish(acc, &work, &mut source);
    Ok(Delta { files, source })
}

/// For a merge commit, the files at the merge base of its first two parents: the side its
/// pull request started from, as its author saw the files. A change moves a partition only
/// in its own direction, and a merge's direction is the pull request's (merge base to
/// merge), not the target branch's last version to the merge: a conflict resolved by hand
/// after a nightly moved the branch on does not turn a forward change into a rewind.
fn merge_base_files(repo: &Repo, paths: &[PathBuf], id: Oid) -> Result<Option<SideFiles>> {
    let c = repo
        .git()
        .find_commit(id)
        .map_err(|e| Error::Other(format!("cannot read commit {id}: {}", e.message())))?;
    if c.parent_count() < 2 {
        return Ok(None);
    }
    let (Ok(a), Ok(b)) = (c.parent_id(0), c.parent_id(1)) else {
        return Ok(None);
    };
    let Ok(base) = repo.git().merge_base(a, b) else {
        return Ok(None);
    };
    at_base(repo, paths, base, &mut Vec::new()).map(Some)
}

/// The files of commit `id` (`this`) of a range, after `old`: a version that cannot be taken
/// leaves the file's last valid version standing (kept in `pending` until a later version
/// replaces it), so the next valid version brings the net change once; a version that
/// replaces pending ones notes them in `source`.
fn next_version(
    repo: &Repo,
    paths: &[PathBuf],
    id: Oid,
    this: &CommitRef,
    old: &SideFiles,
    pending: &mut BTreeMap<String, Vec<(CommitRef, String)>>,
    source: &mut FilesSource,
) -> Result<SideFiles> {
    let at = read_commit(repo, paths, id)?;
    let mut new = at.valid;
    let replaced: Vec<String> = pending
        .keys()
        .filter(|p| !at.invalid.contains_key(*p))
        .cloned()
        .collect();
    for path in replaced {
        if let Some(bad) = pending.remove(&path) {
            superseded(source, &path, bad, Some(this));
        }
    }
    for (path, problem) in at.invalid {
        if let Some((k, entry)) = by_path(old, &path) {
            new.insert(k.clone(), entry.clone());
        }
        pending
            .entry(path)
            .or_default()
            .push((this.clone(), problem));
    }
    Ok(new)
}

/// Notes the versions of `path` that cannot be taken, replaced by the version of `by` (the
/// working tree: `None`).
fn superseded(
    source: &mut FilesSource,
    path: &str,
    bad: Vec<(CommitRef, String)>,
    by: Option<&CommitRef>,
) {
    for (commit, problem) in bad {
        source.invalid.push(InvalidVersion {
            commit,
            file: path.to_string(),
            problem,
            instead: Instead::Superseded,
            superseded_by: by.cloned(),
        });
    }
}
