//! What the shared remote says was applied: beside the lock (`remote_lock`), the ref
//! `refs/kco/applied/C` marks the commit up to which every change to cluster `C`'s files has
//! been applied. An apply of the changes not yet applied (`apply --unapplied`, or the first
//! `--changed-since`) moves it under the cluster's lock, once the cluster converged, before it
//! lets the lock go; the next apply reads it under the same lock, before it plans. So a run
//! whose checkout is behind what another runner applied (a CI job re-run on its original
//! checkout, a second runner that waited for the lock) applies nothing twice, however long
//! the other runner took to push its record commit to the branch.
//!
//! The ref points at a commit on the empty tree whose parent is the commit applied up to (so
//! that fetching the mark brings that commit's history, and whether a checkout is behind it
//! can be told here) and whose message names the cluster, the commit and who applied it.

use super::holder::Holder;
use super::remote_git::{cannot_run, fetch, has_object, list_refs, push, run, succeeded, Remote};
use super::state_dir::StateDir;
use crate::engine::history::mark::AppliedMark;
use crate::engine::history::trailer;
use crate::error::{Error, Result};

/// Where the marks live on the remote.
pub const APPLIED_PREFIX: &str = "refs/kco/applied/";

/// The ref of `cluster`'s mark.
pub fn applied_ref(cluster: &str) -> String {
    format!("{APPLIED_PREFIX}{cluster}")
}

/// `cluster`'s mark on `remote`, fetched (with the history of the commit it names).
pub fn read(remote: &Remote, cluster: &str) -> Result<Option<AppliedMark>> {
    let name = applied_ref(cluster);
    let Some((oid, _)) = list_refs(remote, cluster, &name)?.into_iter().next() else {
        return Ok(None);
    };
    if !has_object(remote, &oid) {
        let out = fetch(remote, &name).map_err(|e| cannot_run(remote, cluster, e))?;
        succeeded(remote, cluster, &["fetch"], out)?;
    }
    let out = run(remote, cluster, &["cat-file", "commit", &oid])?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (headers, message) = text.split_once("\n\n").unwrap_or((&text, ""));
    let field = |key: &str| {
        message
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
            .map(|v| v.trim().to_string())
    };
    let parent = headers
        .lines()
        .find_map(|l| l.strip_prefix("parent "))
        .map(str::to_string);
    let Some(commit) = field(trailer::COMMIT).or(parent) else {
        return Ok(None);
    };
    Ok(Some(AppliedMark {
        commit,
        by: field("Kco-Applied-By").unwrap_or_else(|| "an unknown runner".into()),
        at: field("Kco-Applied-At").unwrap_or_default(),
        mark: oid,
    }))
}

/// Moves `cluster`'s mark to `commit`, applied by `holder` at `at`, replacing the mark
/// `seen` (`None`: there was none) and nothing else: a mark that moved meanwhile is left as
/// it is (`Ok(false)`). Run under the cluster's lock.
pub fn write(
    remote: &Remote,
    cluster: &str,
    commit: &str,
    holder: &Holder,
    at: &str,
    seen: Option<&str>,
) -> Result<bool> {
    let tree = run(remote, cluster, &["mktree"])?;
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_string();
    let message = format!(
        "kco: changes to cluster `{cluster}` applied up to {short}\n\n{apply}: {cluster}\n{kco_commit}: {commit}\nKco-Applied-By: {holder}\nKco-Applied-At: {at}\n",
        short = &commit[..commit.len().min(12)],
        apply = trailer::APPLY,
        kco_commit = trailer::COMMIT,
    );
    let out = run(
        remote,
        cluster,
        &["commit-tree", &tree, "-p", commit, "-m", &message],
    )?;
    let oid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let name = applied_ref(cluster);
    match push(remote, &name, seen.unwrap_or(""), &oid)? {
        Ok(()) => Ok(true),
        Err(why) => match list_refs(remote, cluster, &name)?.into_iter().next() {
            Some((now, _)) if Some(now.as_str()) != seen => Ok(false),
            _ => Err(Error::LockRemote {
                cluster: cluster.to_string(),
                remote: remote.name.clone(),
                detail: format!("git push {name}: {why}"),
            }),
        },
    }
}

/// `cluster`'s mark on the remote the project's locks are shared through (`None`: no mark, or
/// the locks are this machine's only). Reads only: no lock is taken (a dry run's look).
pub fn read_shared(state: &StateDir, cluster: &str) -> Result<Option<AppliedMark>> {
    match state.lock_store(cluster)? {
        super::remote_lock::Store::Remote(remote) => read(&remote, cluster),
        super::remote_lock::Store::Local(_) => Ok(None),
    }
}
