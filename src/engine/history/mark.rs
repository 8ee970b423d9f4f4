//! The mark the shared remote keeps of what was applied to a cluster
//! (`engine::operation::applied_mark` reads and writes it under the cluster's lock): the
//! commit up to which every change to the cluster's files has been applied, and how a
//! checkout stands against it. `apply --unapplied` starts from it when it is newer than the
//! checkout's own records, and applies nothing when the checkout is not ahead of it.

use git2::Oid;
use serde::Serialize;

use crate::engine::revision::Repo;

/// A mark read from the remote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppliedMark {
    /// The commit up to which every change has been applied (`Kco-Commit:`).
    pub commit: String,
    /// Who applied it: the lock's holder, as the lock records it.
    pub by: String,
    /// When (RFC 3339 UTC).
    pub at: String,
    /// The mark's own commit (what a run compares under the lock).
    #[serde(skip)]
    pub mark: String,
}

/// How a checkout stands against a mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The checkout's HEAD is the commit applied up to, or behind it: nothing in it is newer.
    Covered,
    /// The commit applied up to is on HEAD's history: the changes after it are not applied.
    Behind(Oid),
    /// The two histories do not meet in that order (a rewritten branch): the mark says
    /// nothing of this checkout.
    Unrelated,
}

/// How the checkout of `repo` at `head` stands against the commit a mark names.
pub fn standing(repo: &Repo, head: Oid, mark: &AppliedMark) -> Standing {
    let Ok(applied) = Oid::from_str(&mark.commit) else {
        return Standing::Unrelated;
    };
    let git = repo.git();
    if applied == head || git.graph_descendant_of(applied, head).unwrap_or(false) {
        return Standing::Covered;
    }
    if git.graph_descendant_of(head, applied).unwrap_or(false) {
        return Standing::Behind(applied);
    }
    Standing::Unrelated
}

/// Whether the checkout of the repository holding `dir`, at commit `head`, has nothing newer
/// than what `mark` says was applied.
pub fn covers(dir: &std::path::Path, head: &str, mark: &AppliedMark) -> crate::error::Result<bool> {
    let repo = Repo::discover(dir)?;
    let head = Oid::from_str(head)
        .map_err(|e| crate::error::Error::Other(format!("not a commit id `{head}`: {e}")))?;
    Ok(standing(&repo, head, mark) == Standing::Covered)
}

/// The commit a run of the changes up to HEAD marks as applied up to: HEAD, or, where HEAD's
/// newest first-parent commits brought observations only (`skipped`: the snapshot the
/// apply-on-merge recipe commits right before it applies), the newest commit before them. So
/// the mark names a commit the branch keeps when that snapshot is rebased on push.
pub fn applied_up_to(dir: &std::path::Path, skipped: &[&str]) -> crate::error::Result<String> {
    let repo = Repo::discover(dir)?;
    let mut at = repo.resolve("HEAD")?;
    while skipped.contains(&at.to_string().as_str()) {
        let Some(parent) = repo
            .git()
            .find_commit(at)
            .ok()
            .and_then(|c| c.parent_id(0).ok())
        else {
            break;
        };
        at = parent;
    }
    Ok(at.to_string())
}
