//! The journal of an operation travels with the shared lock (`remote_lock`): on the same git
//! remote, beside the lock ref, so that an operation killed on one runner is finished by
//! whoever takes the cluster's lock next, on any runner. Whoever finishes (or discards) a
//! journal there records it beside them (`refs/kco/finished/C`), so that the runner that
//! was killed, coming back with its own copy of that journal, knows it was finished elsewhere
//! and by whom, rather than finishing it a second time.

use serde::{Deserialize, Serialize};

use super::holder::Holder;
use super::journal::Journal;
use super::remote_git::{
    cannot_run, fetch, has_object, list_refs, run, run_with_input, stdout, succeeded, Remote,
};
use super::state_dir::StateDir;
use crate::error::{Error, Result};

/// Where the journals travel on the remote, beside the locks: `refs/kco/journals/C` holds the
/// journal of the operation on cluster `C` that has not finished (a commit whose tree has
/// `journal.json`), so that whoever takes the lock next, on any runner, finishes it first. A
/// force-unlock removes the lock, never the journal.
pub const JOURNAL_PREFIX: &str = "refs/kco/journals/";

/// The ref of `cluster`'s journal.
pub fn journal_ref(cluster: &str) -> String {
    format!("{JOURNAL_PREFIX}{cluster}")
}

/// Takes over `text`, the journal another runner left on the shared remote (`remote_lock`),
/// as this checkout's journal of `cluster`, so that it is finished here; checked first.
pub fn adopt(state: &StateDir, cluster: &str, text: &str) -> Result<Journal> {
    let journal: Journal = serde_json::from_str(text).map_err(|e| {
        Error::Other(format!(
            "{}: not a kco journal ({e}); `kco recover --discard` forgets it",
            journal_ref(cluster)
        ))
    })?;
    let path = state.journal_path(cluster);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    crate::fsutil::write_private(&path, text.as_bytes())
        .map_err(|source| Error::Write { path, source })?;
    Ok(journal)
}

/// `cluster`'s journal ref as a message names it: `refs/kco/journals/C on git remote `origin``.
pub fn shown(remote: &Remote, cluster: &str) -> String {
    format!("{} on git remote `{}`", journal_ref(cluster), remote.name)
}

/// Where the record of the journals finished on the remote lives: `refs/kco/finished/C`, a
/// commit whose tree has `finished.json`, the newest [`KEPT`] first.
pub const FINISHED_PREFIX: &str = "refs/kco/finished/";

/// How many finished operations the record keeps.
pub const KEPT: usize = 32;

/// The ref of `cluster`'s record of finished journals.
pub fn finished_ref(cluster: &str) -> String {
    format!("{FINISHED_PREFIX}{cluster}")
}

/// An operation whose journal was on the remote, and the runner that finished it there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finished {
    /// The operation, as its journal names it (its process, host and start).
    pub pid: u32,
    pub host: String,
    pub started_at: String,
    /// Who finished it: the holder of the lock it was finished under.
    pub by: Holder,
    /// When.
    pub at: String,
    /// Forgotten (`kco recover --discard`) rather than put back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub discarded: bool,
}

impl Finished {
    /// Whether this is the record of the operation `journal` is the journal of.
    pub fn is_of(&self, journal: &Journal) -> bool {
        self.pid == journal.pid
            && self.host == journal.host
            && self.started_at == journal.started_at
    }
}

/// Records that the operation `journal` records was finished (or, `discarded`, forgotten) by
/// `by` at `at`. Only the lock's holder writes it.
pub fn record_finished(
    remote: &Remote,
    cluster: &str,
    journal: &Journal,
    by: &Holder,
    at: &str,
    discarded: bool,
) -> Result<()> {
    let mut list = read_finished(remote, cluster)?;
    list.retain(|f| !f.is_of(journal));
    list.insert(
        0,
        Finished {
            pid: journal.pid,
            host: journal.host.clone(),
            started_at: journal.started_at.clone(),
            by: by.clone(),
            at: at.to_string(),
            discarded,
        },
    );
    list.truncate(KEPT);
    let text = serde_json::to_string_pretty(&list).expect("a record serializes");
    let message = format!("kco: journals finished on cluster {cluster}");
    push_file(
        remote,
        cluster,
        &finished_ref(cluster),
        "finished.json",
        &text,
        &message,
    )
}

/// The journals recorded as finished on the remote, newest first (none when the record
/// cannot be understood: a journal is then never taken for finished).
pub fn read_finished(remote: &Remote, cluster: &str) -> Result<Vec<Finished>> {
    let text = read_file(remote, cluster, &finished_ref(cluster), "finished.json")?;
    Ok(text
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default())
}

/// Who finished the operation `journal` records on the remote, if anyone did.
pub fn finished_elsewhere(
    remote: &Remote,
    cluster: &str,
    journal: &Journal,
) -> Result<Option<Finished>> {
    Ok(read_finished(remote, cluster)?
        .into_iter()
        .find(|f| f.is_of(journal)))
}

/// Pushes `text`, the journal of the operation on `cluster` this runner holds the lock of, to
/// the journal ref (replacing what it held: only the lock's holder writes it).
pub fn push_journal(remote: &Remote, cluster: &str, text: &str) -> Result<()> {
    let message = format!("kco journal of cluster {cluster}");
    push_file(
        remote,
        cluster,
        &journal_ref(cluster),
        "journal.json",
        text,
        &message,
    )
}

/// Pushes a commit whose tree is `file` holding `text` to `name` (replacing what it held).
fn push_file(
    remote: &Remote,
    cluster: &str,
    name: &str,
    file: &str,
    text: &str,
    message: &str,
) -> Result<()> {
    let blob = run_with_input(remote, cluster, &["hash-object", "-w", "--stdin"], text)?;
    let entry = format!("100644 blob {}\t{file}\n", stdout(&blob));
    let tree = run_with_input(remote, cluster, &["mktree"], &entry)?;
    let commit = run(
        remote,
        cluster,
        &["commit-tree", &stdout(&tree), "-m", message],
    )?;
    let spec = format!("+{}:{name}", stdout(&commit));
    run(
        remote,
        cluster,
        &[
            "push",
            "--quiet",
            "--no-verify",
            "--recurse-submodules=no",
            "--no-follow-tags",
            &remote.name,
            &spec,
        ],
    )?;
    Ok(())
}

/// Removes `cluster`'s journal ref, if there is one.
pub fn delete_journal(remote: &Remote, cluster: &str) -> Result<()> {
    let name = journal_ref(cluster);
    if list_refs(remote, cluster, &name)?.is_empty() {
        return Ok(());
    }
    let spec = format!(":{name}");
    run(
        remote,
        cluster,
        &["push", "--quiet", "--no-verify", &remote.name, &spec],
    )?;
    Ok(())
}

/// The journal `cluster`'s journal ref holds, if there is one.
pub fn read_journal(remote: &Remote, cluster: &str) -> Result<Option<String>> {
    read_file(remote, cluster, &journal_ref(cluster), "journal.json")
}

/// `file` in the commit ref `name` points at, if there is one.
fn read_file(remote: &Remote, cluster: &str, name: &str, file: &str) -> Result<Option<String>> {
    let Some((oid, _)) = list_refs(remote, cluster, name)?.into_iter().next() else {
        return Ok(None);
    };
    if !has_object(remote, &oid) {
        let out = fetch(remote, name).map_err(|e| cannot_run(remote, cluster, e))?;
        succeeded(remote, cluster, &["fetch"], out)?;
    }
    let out = run(
        remote,
        cluster,
        &["cat-file", "blob", &format!("{oid}:{file}")],
    )?;
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}
