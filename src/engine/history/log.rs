//! `kco log` as data: for each connector, the commits of the current branch that changed its
//! file (newest first), each compared with the commit before by the diff engine (direction and
//! distance per partition), labelled as applying it would be (REPROCESSING for a move backwards, OFFSET RESET for a removed partition); and with `stalled`, which connectors did
//! not move forward over the last N commits that changed snapshot files.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::rc::Rc;

use git2::{Commit, Oid};
use serde::Serialize;

use crate::engine::risk::RiskCode;

use super::trailer::{self, CommitKind};

use super::walk::{walk, Change, Files, Next};
use super::when::{rfc3339, short_id};
use crate::compare::Direction;
use crate::engine::diff::{classify, PartitionKind, PartitionReport, Sides, Status};
use crate::engine::revision::Repo;
use crate::engine::select::{self, Selector};
use crate::engine::store;
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;
use crate::model::ConnectorType;

/// What to show.
pub struct LogInput<'a> {
    /// The directory whose files are followed (a cluster's, or the whole snapshots directory).
    pub scope: &'a Path,
    /// Connector names or globs; none: every connector.
    pub patterns: &'a [String],
    /// Only commits at or after this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Only commits at or before this time.
    pub until: Option<i64>,
    /// At most this many commits per connector.
    pub max_count: Option<usize>,
    /// Flag connectors that did not move forward over this many commits.
    pub stalled: Option<usize>,
}

/// The whole log, as `--output json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct LogReport {
    /// The directory followed, relative to the repository.
    pub scope: String,
    /// The commit the history starts from (`HEAD`).
    pub head: String,
    /// `--stalled N`, when given.
    pub stalled_over: Option<usize>,
    pub connectors: Vec<ConnectorLog>,
}

/// One connector's history.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectorLog {
    pub name: String,
    pub cluster: String,
    #[serde(rename = "type")]
    pub connector_type: ConnectorType,
    /// Its file in the newest commit that has it.
    pub file: String,
    /// With `--stalled`: whether it did not move forward over the last N commits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<bool>,
    /// Newest first.
    pub commits: Vec<LogEntry>,
}

/// One commit that changed a connector's file, against the commit before it.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub commit: String,
    /// What the commit is, by its trailers: `snapshot` (an observation of the cluster),
    /// `apply` or `undo` (the record of what that operation did to it), `change` (someone's
    /// change: a pull request, a merge, a hand edit).
    pub kind: CommitKind,
    /// Its `Kco-*` trailers (`Kco-Apply: prod`, `Kco-Commit: SHA`, ...), in order.
    pub trailers: Vec<Trailer>,
    /// Author date, RFC 3339 UTC.
    pub date: String,
    pub author: String,
    /// The first line of the commit message.
    pub summary: String,
    /// `changed`, `added`, `removed`, `unchanged` (only metadata changed), `type_changed`,
    /// `class_changed`: as `diff --base` says it of the commit against its parent.
    pub status: Status,
    pub file: Option<String>,
    pub notes: Vec<String>,
    pub partitions: Vec<LogPartition>,
}

/// A `Key: value` trailer of a commit message.
#[derive(Debug, Clone, Serialize)]
pub struct Trailer {
    pub key: String,
    pub value: String,
}

/// A partition the commit changed.
#[derive(Debug, Clone, Serialize)]
pub struct LogPartition {
    #[serde(flatten)]
    pub change: PartitionReport,
    /// What applying this commit does to the partition, in the risk labels every command
    /// uses: `reprocessing` (moved backwards), `offset_reset` (removed), or `null` (a move
    /// forwards is normal progress).
    pub label: Option<RiskCode>,
}

impl LogEntry {
    /// Whether any partition moved forward or appeared: the connector advanced.
    pub fn advanced(&self) -> bool {
        self.partitions.iter().any(|p| match &p.change.offsets {
            Sides::Base { kind, .. } => {
                *kind == PartitionKind::OnlyWanted || p.change.direction == Some(Direction::Forward)
            }
            Sides::Live { .. } => false,
        })
    }
}

/// A connector's name from its file's name (kco percent-encodes unsafe characters).
pub fn name_of_path(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file
        .strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file);
    percent_encoding::percent_decode_str(stem)
        .decode_utf8_lossy()
        .into_owned()
}

/// Files parsed once per blob: a commit's new side is the next (older) commit's old side.
struct Blobs<'r> {
    repo: &'r Repo,
    parsed: HashMap<Oid, Rc<OffsetsFile>>,
}

impl Blobs<'_> {
    fn get(&mut self, commit: &Commit<'_>, path: &str, id: Oid) -> Result<Rc<OffsetsFile>> {
        if let Some(f) = self.parsed.get(&id) {
            return Ok(f.clone());
        }
        let label = format!("{}:{path}", short_id(&commit.id().to_string()));
        let text = self.repo.blob_text(id, &label)?;
        let label = Path::new(&label);
        let file = OffsetsFile::parse(label, &text).map_err(|p| Error::Files(vec![p]))?;
        let f = Rc::new(file);
        self.parsed.insert(id, f.clone());
        Ok(f)
    }
}

type Key = (String, String);
type Side = Option<(String, OffsetsFile)>;
/// A connector's versions by commit (newest first): the commit, and the file's path and text.
type Versions = [Version];
/// One version of a connector's file: the commit, and the file's path and contents.
type Version = (String, (String, OffsetsFile));

/// Reads the history of every selected connector under `input.scope`.
pub fn log(input: LogInput<'_>) -> Result<LogReport> {
    let repo = Repo::discover(input.scope)?;
    let scope = repo.repo_path(input.scope)?;
    let head = repo.resolve("HEAD")?;
    let selector = Selector::new(input.patterns, None)?;
    let keep = |p: &str| selector.matches(&name_of_path(p), None);
    let mut blobs = Blobs {
        repo: &repo,
        parsed: HashMap::new(),
    };
    let mut logs: BTreeMap<Key, ConnectorLog> = BTreeMap::new();
    // Each connector's versions as the walk met them (newest first): what an observation is
    // compared with again when a change no snapshot saw on the cluster lies between.
    let mut versions: BTreeMap<Key, Vec<Version>> = BTreeMap::new();
    let mut window = 0usize;
    // Plain names: only their files (`<name>.yaml` in any cluster directory) are compared.
    let plain = |n: &&str| {
        n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    let names = selector.exact_names();
    let pathspec: Vec<String> = if selector.only_names() && names.iter().all(plain) {
        names
            .iter()
            .flat_map(|n| [format!("{n}.yaml"), format!("*/{n}.yaml")])
            .collect()
    } else {
        Vec::new()
    };
    let files = Files {
        pathspec: &pathspec,
        keep: &keep,
    };
    walk(&repo, head, None, &scope, files, &mut |commit, changes| {
        let time = commit.time().seconds();
        if input.until.is_some_and(|u| time > u) {
            return Ok(Next::Continue);
        }
        if input.since.is_some_and(|s| time < s) {
            return Ok(Next::Stop);
        }
        window += 1;
        let mut sides: BTreeMap<Key, (Side, Side)> = BTreeMap::new();
        for Change { old, new } in changes {
            if let Some((p, id)) = old {
                let f = blobs.get(
                    &commit.parent(0).expect("a changed file had a parent"),
                    &p,
                    id,
                )?;
                sides.entry(key(&f)).or_default().0 = Some((p, (*f).clone()));
            }
            if let Some((p, id)) = new {
                let f = blobs.get(commit, &p, id)?;
                sides.entry(key(&f)).or_default().1 = Some((p, (*f).clone()));
            }
        }
        for (k, (old, new)) in sides {
            if !selector.matches(&k.1, None) {
                continue;
            }
            let entry = entry(commit, &k.1, old.as_ref(), new.as_ref());
            if let Some(new) = &new {
                versions
                    .entry(k.clone())
                    .or_default()
                    .push((commit.id().to_string(), new.clone()));
            }
            let log = logs.entry(k.clone()).or_insert_with(|| ConnectorLog {
                name: k.1.clone(),
                cluster: k.0.clone(),
                connector_type: new
                    .as_ref()
                    .or(old.as_ref())
                    .expect("a side")
                    .1
                    .metadata
                    .connector_type,
                file: entry.file.clone().unwrap_or_default(),
                stalled: None,
                commits: Vec::new(),
            });
            if input.max_count.is_none_or(|m| log.commits.len() < m) {
                log.commits.push(entry);
            }
        }
        Ok(match input.stalled {
            Some(n) if window >= n => Next::Stop,
            _ => Next::Continue,
        })
    })?;
    if let Some(n) = input.stalled {
        flag_stalled(
            &repo,
            head,
            &scope,
            &selector,
            &mut blobs,
            &mut logs,
            window >= n,
        )?;
    }
    for (k, log) in logs.iter_mut() {
        let versions = versions.get(k).map(Vec::as_slice).unwrap_or_default();
        compare_snapshots_with_snapshots(&k.1, &mut log.commits, versions);
        note_unobserved_records(&mut log.commits);
    }
    let unmatched = selector.unmatched(logs.keys().map(|k| k.1.as_str()));
    if !unmatched.is_empty() {
        // The names that exist: those of the files there now, and those of the history.
        let files = store::find_files(&[input.scope.to_path_buf()]).unwrap_or_default();
        let mut existing: Vec<String> = files
            .iter()
            .map(|f| name_of_path(&f.to_string_lossy()))
            .collect();
        existing.extend(logs.keys().map(|k| k.1.clone()));
        let existing: Vec<&str> = existing.iter().map(String::as_str).collect();
        let place = format!(
            "changed by a commit under {}",
            if scope.is_empty() {
                "the repository"
            } else {
                &scope
            }
        );
        return Err(select::no_match(unmatched, &existing, &place));
    }
    Ok(LogReport {
        scope,
        head: head.to_string(),
        stalled_over: input.stalled,
        connectors: logs.into_values().collect(),
    })
}

/// A snapshot shows what the cluster did since kco last saw it: one whose file before it is
/// someone's change (a merge never applied, a hand edit) is compared again with the newest
/// older version that is an observation (a snapshot, an apply or undo record), never with
/// positions the cluster may not have had; it says so. `versions`: the connector's versions
/// by commit, newest first.
fn compare_snapshots_with_snapshots(name: &str, commits: &mut [LogEntry], versions: &Versions) {
    let file_of = |id: &str| versions.iter().find(|(c, _)| c == id).map(|(_, f)| f);
    for i in 0..commits.len().saturating_sub(1) {
        if commits[i].kind != CommitKind::Snapshot || commits[i + 1].kind != CommitKind::Change {
            continue;
        }
        let changes: Vec<String> = commits[i + 1..]
            .iter()
            .take_while(|e| e.kind == CommitKind::Change)
            .map(|e| short_id(&e.commit).to_string())
            .collect();
        let observed = commits[i + 1..]
            .iter()
            .find(|e| e.kind != CommitKind::Change)
            .map(|e| e.commit.clone());
        let new = file_of(&commits[i].commit);
        let old = observed
            .as_deref()
            .and_then(|id| file_of(id).map(|f| (id, f)));
        let (Some(new), Some((old_id, old))) = (new, old) else {
            commits[i].notes.push(format!(
                "compared with the file of {} (a change the cluster may never have had): no older snapshot in the history shown to compare with",
                changes.join(", ")
            ));
            continue;
        };
        let diff = classify(name, Some(old), Some(new), short_id(old_id));
        let e = &mut commits[i];
        e.status = diff.status;
        e.partitions = partitions(diff.partitions, true, true);
        e.notes = diff.notes;
        e.notes.push(format!(
            "compared with the last snapshot, {}: the changes since ({}) are files someone wrote, not positions kco saw on the cluster",
            short_id(old_id),
            changes.join(", ")
        ));
    }
}

/// A record (apply, undo) shows what the operation did to the cluster only when the file
/// before it held the cluster's offsets (an observation or another record). After someone's
/// change it compares with that change's file: say so, and how to record the real movement.
fn note_unobserved_records(commits: &mut [LogEntry]) {
    for i in 0..commits.len().saturating_sub(1) {
        let (before, prior) = (
            commits[i + 1].kind,
            short_id(&commits[i + 1].commit).to_string(),
        );
        let e = &mut commits[i];
        if matches!(e.kind, CommitKind::Apply | CommitKind::Undo)
            && before == CommitKind::Change
            && e.status == Status::Changed
        {
            e.notes.push(format!(
                "compared with the file of {} (a change), not with the cluster before the {}: snapshot with --commit before the operation to record its real movement",
                prior,
                if e.kind == CommitKind::Apply { "apply" } else { "undo" }
            ));
        }
    }
}

/// What a commit's version of one file is: an apply or undo record as its trailer says (its
/// files are what the cluster had after the operation); else told by the file, never by the
/// trailer (`history::version`): an observation kco rewrote from live, or a change.
fn entry_kind(
    by_trailer: CommitKind,
    old: Option<&(String, OffsetsFile)>,
    new: Option<&(String, OffsetsFile)>,
) -> CommitKind {
    if matches!(by_trailer, CommitKind::Apply | CommitKind::Undo) {
        return by_trailer;
    }
    match new {
        Some((_, n)) => match super::version::version(old.map(|(_, o)| o), n) {
            super::version::Version::Observation => CommitKind::Snapshot,
            super::version::Version::Unchanged | super::version::Version::Change => {
                CommitKind::Change
            }
        },
        // A file removed: nobody's observation.
        None => by_trailer,
    }
}

fn key(f: &OffsetsFile) -> Key {
    (f.metadata.cluster.clone(), f.metadata.name.clone())
}

fn entry(
    commit: &Commit<'_>,
    name: &str,
    old: Option<&(String, OffsetsFile)>,
    new: Option<&(String, OffsetsFile)>,
) -> LogEntry {
    let parent = commit
        .parent_id(0)
        .map(|p| short_id(&p.to_string()).to_string())
        .unwrap_or_default();
    let diff = classify(name, old, new, &parent);
    let partitions = partitions(diff.partitions, old.is_some(), new.is_some());
    let author = commit.author();
    let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
    let trailers = trailer::trailers(&message)
        .into_iter()
        .filter(|(k, _)| k.len() > 4 && k[..4].eq_ignore_ascii_case("kco-"))
        .map(|(k, v)| Trailer {
            key: k.to_string(),
            value: v.to_string(),
        })
        .collect();
    LogEntry {
        commit: commit.id().to_string(),
        kind: entry_kind(trailer::kind(&message), old, new),
        trailers,
        date: rfc3339(author.when().seconds()),
        author: String::from_utf8_lossy(author.name_bytes()).into_owned(),
        summary: String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned(),
        status: diff.status,
        file: diff.file,
        notes: diff.notes,
        partitions,
    }
}

/// A commit's partitions, each labelled as applying it would be (`has_old`, `has_new`: whether
/// the file was there before and after).
fn partitions(parts: Vec<PartitionReport>, has_old: bool, has_new: bool) -> Vec<LogPartition> {
    parts
        .into_iter()
        .map(|mut p| {
            p.risk = None;
            let label = match &p.offsets {
                // A file added or removed changes nothing on the cluster.
                _ if !has_old || !has_new => None,
                Sides::Base {
                    kind: PartitionKind::OnlyActual,
                    ..
                } => Some(RiskCode::OffsetReset),
                _ if p.direction == Some(Direction::Backward) => Some(RiskCode::Reprocessing),
                _ => None,
            };
            LogPartition { change: p, label }
        })
        .collect()
}

/// Marks each connector present at `head` stalled when the window was full and none of its
/// commits in it moved a partition forward (a connector added in the window is not stalled).
fn flag_stalled(
    repo: &Repo,
    head: Oid,
    scope: &str,
    selector: &Selector,
    blobs: &mut Blobs<'_>,
    logs: &mut BTreeMap<Key, ConnectorLog>,
    full: bool,
) -> Result<()> {
    let commit = repo
        .git()
        .find_commit(head)
        .map_err(|e| Error::Other(format!("cannot read HEAD: {}", e.message())))?;
    let tree = commit
        .tree()
        .map_err(|e| Error::Other(format!("cannot read HEAD: {}", e.message())))?;
    for path in repo.list(head, "HEAD", scope)? {
        if !selector.matches(&name_of_path(&path), None) {
            continue;
        }
        let id = tree
            .get_path(Path::new(&path))
            .map(|e| e.id())
            .map_err(|e| Error::Other(format!("cannot read {path} at HEAD: {}", e.message())))?;
        let f = blobs.get(&commit, &path, id)?;
        let k = key(&f);
        if !selector.matches(&k.1, None) {
            continue;
        }
        let log = logs.entry(k.clone()).or_insert_with(|| ConnectorLog {
            name: k.1.clone(),
            cluster: k.0.clone(),
            connector_type: f.metadata.connector_type,
            file: path.clone(),
            stalled: None,
            commits: Vec::new(),
        });
        let added = log.commits.iter().any(|e| e.status == Status::Added);
        log.stalled = Some(full && !added && !log.commits.iter().any(LogEntry::advanced));
    }
    Ok(())
}
