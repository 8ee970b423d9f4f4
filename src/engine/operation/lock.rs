//! One operation at a time per cluster: every operation that changes a cluster (apply, reset,
//! undo, recover) holds its lock while it runs, in two places:
//!
//! - on the git remote every runner pushes to, when there is one (`remote_lock`): two
//!   runners (two clones) applying to one cluster at once are kept apart there;
//! - in `<state dir>/locks/<cluster>.lock` (the holder's pid, host and start time), which
//!   also keeps this checkout's journal to one kco at a time. The file is created
//!   atomically (written aside, then hard-linked into place, which fails when it exists).
//!
//! A lock whose holder is a process of this host that no longer exists is stale and taken
//! over; any other holder makes the second process stop before sending anything. Both locks
//! record one lock id, which `kco lock force-unlock` takes.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::holder::is_stale;
pub use super::holder::Holder;
use super::remote_lock::{self, LocalOnly, RemoteLock, Store};
use super::state_dir::StateDir;
use crate::error::{Error, Result};

/// The lock of a cluster while an operation holds it: the local one, and the remote one
/// when the project has a git remote; dropping it releases both.
#[derive(Debug)]
pub struct ClusterLock {
    // Held for its `Drop`, which releases it: the remote lock first, then the local one.
    _remote: Option<RemoteLock>,
    local: LocalLock,
    local_only: Option<LocalOnly>,
}

impl ClusterLock {
    /// Takes the lock of `cluster`: the local one first (another kco of this checkout fails
    /// there without a request to the remote), then the remote one where the state directory
    /// says there is one. Fails naming the holder.
    pub fn acquire(state: &StateDir, cluster: &str, now: &str) -> Result<ClusterLock> {
        let me = Holder::me(now);
        let local = LocalLock::acquire(state, cluster, &me)?;
        match state.lock_store(cluster)? {
            Store::Remote(remote) => Ok(ClusterLock {
                _remote: Some(RemoteLock::acquire(&remote, cluster, &me)?),
                local,
                local_only: None,
            }),
            Store::Local(why) => Ok(ClusterLock {
                _remote: None,
                local,
                local_only: Some(why),
            }),
        }
    }

    pub fn holder(&self) -> &Holder {
        &self.local.holder
    }

    /// Why the lock is kept on this machine only (`None`: it is on a git remote too).
    pub fn local_only(&self) -> Option<LocalOnly> {
        self.local_only
    }

    /// The git remote the lock is shared on, where the journal travels with it.
    pub fn remote(&self) -> Option<&remote_lock::Remote> {
        self._remote.as_ref().map(RemoteLock::remote)
    }
}

/// `<state dir>/locks/<cluster>.lock`, held; dropping it removes it.
#[derive(Debug)]
struct LocalLock {
    path: PathBuf,
    holder: Holder,
}

/// Who holds the local lock of `cluster` now, if it is held by a process that is alive (or
/// that kco cannot see: one on another host).
pub fn live_holder(state: &StateDir, cluster: &str) -> Option<Holder> {
    read_holder(&state.lock_path(cluster)).filter(|h| !is_stale(h))
}

/// This checkout's local lock of `cluster` when it is left behind, removed: its holder is on
/// another host (the CI machine's name changed, the checkout was moved or restored from a
/// cache), the project shares its locks through a git remote, and that remote holds no lock
/// of `cluster` with the same id (a local lock is only ever taken with its remote one, and a
/// process on another host cannot be working in this checkout). Its holder, for the notice;
/// `None`: there was none, or it may be in use.
pub fn drop_left_behind(state: &StateDir, cluster: &str) -> Result<Option<Holder>> {
    let Some(h) = read_holder(&state.lock_path(cluster)) else {
        return Ok(None);
    };
    if is_stale(&h) || h.host == super::holder::host_name() {
        return Ok(None);
    }
    let Store::Remote(remote) = state.lock_store(cluster)? else {
        return Ok(None);
    };
    if remote_lock::read(&remote, cluster)?.is_some_and(|r| r.holder.id == h.id) {
        return Ok(None);
    }
    remove_local(state, cluster, &h.id)?;
    Ok(Some(h))
}

/// Who holds the local lock of `cluster`, stale or not.
pub fn local_holder(state: &StateDir, cluster: &str) -> Option<Holder> {
    read_holder(&state.lock_path(cluster))
}

/// Removes the local lock of `cluster` if it still records lock id `id`.
pub fn remove_local(state: &StateDir, cluster: &str, id: &str) -> Result<bool> {
    let path = state.lock_path(cluster);
    match read_holder(&path) {
        Some(h) if h.id == id => {
            std::fs::remove_file(&path).map_err(|source| Error::Write { path, source })?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

impl LocalLock {
    fn acquire(state: &StateDir, cluster: &str, holder: &Holder) -> Result<LocalLock> {
        let path = state.lock_path(cluster);
        let write_err = |source| Error::Write {
            path: path.clone(),
            source,
        };
        let locked = |h: &Holder| Error::Locked {
            cluster: cluster.to_string(),
            lock: path.display().to_string(),
            holder: h.to_string(),
            id: h.id.clone(),
        };
        let dir = path.parent().expect("a lock path has a parent");
        state.create().map_err(|source| Error::Write {
            path: state.root().to_path_buf(),
            source,
        })?;
        std::fs::create_dir_all(dir).map_err(write_err)?;
        for _ in 0..2 {
            let mut tmp = tempfile::Builder::new()
                .prefix(".kco-lock-")
                .tempfile_in(dir)
                .map_err(write_err)?;
            let text = serde_json::to_string(holder).expect("a holder serializes");
            tmp.write_all(text.as_bytes()).map_err(write_err)?;
            tmp.as_file().sync_all().map_err(write_err)?;
            match tmp.persist_noclobber(&path) {
                Ok(_) => {
                    return Ok(LocalLock {
                        path: path.clone(),
                        holder: holder.clone(),
                    })
                }
                Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                    match read_holder(&path) {
                        Some(h) if !is_stale(&h) => return Err(locked(&h)),
                        // Stale (or unreadable, which a crash cannot leave: the file is
                        // linked complete): taken over.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(write_err(e.error)),
            }
        }
        Err(match read_holder(&path) {
            Some(h) => locked(&h),
            None => Error::Locked {
                cluster: cluster.to_string(),
                lock: path.display().to_string(),
                holder: "another process".into(),
                id: String::new(),
            },
        })
    }
}

impl Drop for LocalLock {
    fn drop(&mut self) {
        if read_holder(&self.path).as_ref() == Some(&self.holder) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn read_holder(path: &Path) -> Option<Holder> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Every lock of the project, remote and local, for `kco lock status`.
#[derive(Debug, Clone, Serialize)]
pub struct LockStatus {
    /// Where the shared locks are kept: a git remote's name, or `None` (this machine only).
    pub remote: Option<String>,
    /// Why there is no shared lock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_only: Option<LocalOnly>,
    pub locks: Vec<HeldLock>,
    /// The shared remote's marks of what was applied (`applied_mark`), of each cluster named
    /// (none is read when no cluster is named).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub applied: Vec<ClusterMark>,
}

/// A cluster's mark of what was applied, on the shared remote.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterMark {
    pub cluster: String,
    #[serde(flatten)]
    pub mark: crate::engine::history::mark::AppliedMark,
}

/// One lock that is held.
#[derive(Debug, Clone, Serialize)]
pub struct HeldLock {
    pub cluster: String,
    /// `remote` or `local`.
    pub kind: &'static str,
    /// The ref on the remote, or the local file.
    #[serde(rename = "where")]
    pub at: String,
    /// The holder's process is gone (this host only can tell).
    pub stale: bool,
    #[serde(flatten)]
    pub holder: Holder,
    /// The remote ref's commit (remote locks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// The locks held on `cluster` (every cluster: `None`), remote and local.
pub fn status(state: &StateDir, clusters: &[String]) -> Result<LockStatus> {
    let probe = clusters.first().map(String::as_str).unwrap_or("*");
    let store = state.lock_store(probe)?;
    let mut locks = Vec::new();
    let mut applied = Vec::new();
    let (remote, local_only) = match &store {
        Store::Remote(r) => {
            for h in remote_lock::list(r)? {
                if clusters.is_empty() || clusters.contains(&h.cluster) {
                    locks.push(HeldLock {
                        kind: "remote",
                        at: format!(
                            "{} on git remote `{}`",
                            remote_lock::lock_ref(&h.cluster),
                            r.name
                        ),
                        stale: is_stale(&h.holder),
                        commit: Some(h.oid.clone()),
                        cluster: h.cluster,
                        holder: h.holder,
                    });
                }
            }
            for cluster in clusters {
                if let Some(mark) = super::applied_mark::read(r, cluster)? {
                    applied.push(ClusterMark {
                        cluster: cluster.clone(),
                        mark,
                    });
                }
            }
            (Some(r.name.clone()), None)
        }
        Store::Local(why) => (None, Some(*why)),
    };
    for cluster in local_clusters(state, clusters) {
        let path = state.lock_path(&cluster);
        if let Some(h) = read_holder(&path) {
            locks.push(HeldLock {
                kind: "local",
                at: path.display().to_string(),
                stale: is_stale(&h),
                commit: None,
                cluster,
                holder: h,
            });
        }
    }
    Ok(LockStatus {
        applied,
        remote,
        local_only,
        locks,
    })
}

/// The clusters asked for, or those with a local lock file.
fn local_clusters(state: &StateDir, clusters: &[String]) -> Vec<String> {
    if !clusters.is_empty() {
        return clusters.to_vec();
    }
    let dir = state.lock_path("x");
    let dir = dir.parent().expect("a lock path has a parent");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".lock")
                .map(str::to_string)
        })
        .collect();
    found.sort();
    found
}

/// What `kco lock force-unlock ID` removed.
#[derive(Debug, Clone, Serialize)]
pub struct Unlocked {
    pub id: String,
    pub removed: Vec<HeldLock>,
}

/// The locks with lock id `id` (of `clusters`, or any), before they are removed: what
/// `force-unlock` will remove.
pub fn find_id(state: &StateDir, clusters: &[String], id: &str) -> Result<Vec<HeldLock>> {
    let found: Vec<HeldLock> = status(state, clusters)?
        .locks
        .into_iter()
        .filter(|l| !id.is_empty() && l.holder.id == id)
        .collect();
    Ok(found)
}

/// Removes the locks `find_id` found, each only if it still is the same lock (a lease on the
/// remote ref's commit; the same id in the local file).
pub fn force_unlock(state: &StateDir, id: &str, locks: Vec<HeldLock>) -> Result<Unlocked> {
    let mut removed = Vec::new();
    for l in locks {
        let gone = match (&l.commit, state.lock_store(&l.cluster)?) {
            (Some(oid), Store::Remote(r)) => remote_lock::delete(&r, &l.cluster, oid)?,
            (Some(_), Store::Local(_)) => false,
            (None, _) => remove_local(state, &l.cluster, id)?,
        };
        if gone {
            removed.push(l);
        }
    }
    Ok(Unlocked {
        id: id.to_string(),
        removed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(dir: &Path, cluster: &str) -> PathBuf {
        StateDir::at(dir).lock_path(cluster)
    }

    #[test]
    fn a_second_holder_is_refused_by_name_and_a_dead_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let first = ClusterLock::acquire(&StateDir::at(dir.path()), "a", "t0").unwrap();
        let e = ClusterLock::acquire(&StateDir::at(dir.path()), "a", "t1").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        assert!(text.contains("cluster `a`"), "{text}");
        // Another cluster is independent.
        let other = ClusterLock::acquire(&StateDir::at(dir.path()), "b", "t1").unwrap();
        drop(first);
        assert!(!path(dir.path(), "a").exists());
        let again = ClusterLock::acquire(&StateDir::at(dir.path()), "a", "t2").unwrap();
        drop(again);
        drop(other);
        // A holder on this host whose pid is gone: stale.
        let dead = Holder {
            pid: u32::MAX - 1,
            ..Holder::me("t")
        };
        std::fs::write(path(dir.path(), "a"), serde_json::to_string(&dead).unwrap()).unwrap();
        let taken = ClusterLock::acquire(&StateDir::at(dir.path()), "a", "t3").unwrap();
        assert_eq!(taken.holder().since, "t3");
        // A holder on another host is never assumed dead.
        drop(taken);
        let remote = Holder {
            pid: u32::MAX - 1,
            host: "elsewhere".into(),
            ..Holder::me("t")
        };
        std::fs::write(
            path(dir.path(), "a"),
            serde_json::to_string(&remote).unwrap(),
        )
        .unwrap();
        let e = ClusterLock::acquire(&StateDir::at(dir.path()), "a", "t4").unwrap_err();
        assert!(e.to_string().contains("on elsewhere"), "{e}");
    }
}
