//! The journal of an operation travels with the shared lock (`remote_lock`): on the same git
//! remote, beside the lock ref, so that an operation killed on one runner is finished by
//! whoever takes the cluster's lock next, on any runner.

use super::remote_lock::{
    cannot_run, fetch, has_object, list_refs, run, run_with_input, stdout, succeeded, Remote,
};
use crate::error::Result;

/// Where the journals travel on the remote, beside the locks: `refs/kco/journals/C` holds the
/// journal of the operation on cluster `C` that has not finished (a commit whose tree has
/// `journal.json`), so that whoever takes the lock next, on any runner, finishes it first. A
/// force-unlock removes the lock, never the journal.
pub const JOURNAL_PREFIX: &str = "refs/kco/journals/";

/// The ref of `cluster`'s journal.
pub fn journal_ref(cluster: &str) -> String {
    format!("{JOURNAL_PREFIX}{cluster}")
}

/// Pushes `text`, the journal of the operation on `cluster` this runner holds the lock of, to
/// the journal ref (replacing what it held: only the lock's holder writes it).
pub fn push_journal(remote: &Remote, cluster: &str, text: &str) -> Result<()> {
    let blob = run_with_input(remote, cluster, &["hash-object", "-w", "--stdin"], text)?;
    let entry = format!("100644 blob {}\tjournal.json\n", stdout(&blob));
    let tree = run_with_input(remote, cluster, &["mktree"], &entry)?;
    let message = format!("kco journal of cluster {cluster}");
    let commit = run(
        remote,
        cluster,
        &["commit-tree", &stdout(&tree), "-m", &message],
    )?;
    let spec = format!("+{}:{}", stdout(&commit), journal_ref(cluster));
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
    let name = journal_ref(cluster);
    let Some((oid, _)) = list_refs(remote, cluster, &name)?.into_iter().next() else {
        return Ok(None);
    };
    if !has_object(remote, &oid) {
        let out = fetch(remote, &name).map_err(|e| cannot_run(remote, cluster, e))?;
        succeeded(remote, cluster, &["fetch"], out)?;
    }
    let out = run(
        remote,
        cluster,
        &["cat-file", "blob", &format!("{oid}:journal.json")],
    )?;
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}
