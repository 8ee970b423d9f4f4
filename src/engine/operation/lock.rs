//! One operation at a time per cluster: every operation that changes a cluster (apply, reset,
//! undo, recover) holds `<state dir>/locks/<cluster>.lock` (the holder's pid, host and start
//! time) while it runs.
//! The file is created atomically (written aside, then hard-linked into place, which fails
//! when it exists). A lock whose holder is a process of this host that no longer exists is
//! stale and taken over; any other holder makes the second process stop before sending
//! anything.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal::host_name;
use super::state_dir::StateDir;
use crate::error::{Error, Result};

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub host: String,
    pub since: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {} (since {})",
            self.pid, self.host, self.since
        )
    }
}

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct ClusterLock {
    path: PathBuf,
    holder: Holder,
}

/// Who holds the lock of `cluster` now, if it is held by a process that is alive (or that
/// kco cannot see: one on another host).
pub fn live_holder(state: &StateDir, cluster: &str) -> Option<Holder> {
    read_holder(&state.lock_path(cluster)).filter(|h| !is_stale(h))
}

impl ClusterLock {
    /// Takes the lock of `cluster`, or fails naming its holder.
    pub fn acquire(state: &StateDir, cluster: &str, now: &str) -> Result<ClusterLock> {
        let path = state.lock_path(cluster);
        let holder = Holder {
            pid: std::process::id(),
            host: host_name(),
            since: now.to_string(),
        };
        let write_err = |source| Error::Write {
            path: path.clone(),
            source,
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
            let text = serde_json::to_string(&holder).expect("a holder serializes");
            tmp.write_all(text.as_bytes()).map_err(write_err)?;
            tmp.as_file().sync_all().map_err(write_err)?;
            match tmp.persist_noclobber(&path) {
                Ok(_) => {
                    return Ok(ClusterLock {
                        path: path.clone(),
                        holder,
                    })
                }
                Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                    let other = read_holder(&path);
                    match other {
                        Some(h) if !is_stale(&h) => {
                            return Err(Error::Locked {
                                cluster: cluster.to_string(),
                                path: path.clone(),
                                holder: h.to_string(),
                            })
                        }
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
        Err(Error::Locked {
            cluster: cluster.to_string(),
            path: path.clone(),
            holder: read_holder(&path)
                .map(|h| h.to_string())
                .unwrap_or_else(|| "another process".into()),
        })
    }

    pub fn holder(&self) -> &Holder {
        &self.holder
    }
}

impl Drop for ClusterLock {
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

/// A holder on this host whose process is gone.
fn is_stale(h: &Holder) -> bool {
    h.host == host_name() && Path::new("/proc/self").exists() && !pid_alive(h.pid)
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
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
            host: host_name(),
            since: "t".into(),
        };
        std::fs::write(path(dir.path(), "a"), serde_json::to_string(&dead).unwrap()).unwrap();
        let taken = ClusterLock::acquire(&StateDir::at(dir.path()), "a", "t3").unwrap();
        assert_eq!(taken.holder().since, "t3");
        // A holder on another host is never assumed dead.
        drop(taken);
        let remote = Holder {
            pid: u32::MAX - 1,
            host: "elsewhere".into(),
            since: "t".into(),
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
