//! Who holds a cluster's lock, local or remote: this process, described (pid, host, user,
//! CI job, since when, a lock id), and whether a holder on this host is gone. Both the local
//! lock (`lock.rs`) and the remote one (`remote_lock.rs`) record a `Holder`; the journal
//! records the host.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub host: String,
    pub since: String,
    /// The lock id (`kco lock force-unlock` takes it); empty in a lock of an older kco.
    #[serde(default)]
    pub id: String,
    /// The user the process runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The CI job it runs in (`GITHUB_RUN_ID=123`), when the environment says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl Holder {
    /// This process, from `since`, with a new lock id.
    pub fn me(since: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            host: host_name(),
            since: since.to_string(),
            id: new_id(),
            user: ["USER", "USERNAME", "LOGNAME"]
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty())),
            job: ci_job(),
        }
    }
}

/// The CI job this process runs in, as its CI's variable names it.
fn ci_job() -> Option<String> {
    const VARS: &[&str] = &[
        "GITHUB_RUN_ID",
        "CI_JOB_ID",
        "BUILDKITE_JOB_ID",
        "CIRCLE_WORKFLOW_JOB_ID",
        "BUILD_TAG",
        "BUILD_ID",
    ];
    VARS.iter().find_map(|k| {
        std::env::var(k)
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| format!("{k}={v}"))
    })
}

/// A lock id: 16 hex digits, from the process, the time and the hasher's random keys.
fn new_id() -> String {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    std::process::id().hash(&mut h);
    crate::clock::real_now().hash(&mut h);
    host_name().hash(&mut h);
    format!("{:016x}", h.finish())
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} on {} (", self.pid, self.host)?;
        if let Some(u) = &self.user {
            write!(f, "user {u}, ")?;
        }
        if let Some(j) = &self.job {
            write!(f, "CI job {j}, ")?;
        }
        write!(f, "since {})", self.since)
    }
}

/// This machine's name, for journals and locks (`unknown` when it cannot be read).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// A holder on this host whose process is gone.
pub fn is_stale(h: &Holder) -> bool {
    h.host == host_name() && Path::new("/proc/self").exists() && !pid_alive(h.pid)
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}
