//! The lock every runner shares: in a project under git, the lock of cluster `C` is the ref
//! `refs/kco/locks/C` on the git remote every runner already pushes to (the current branch's
//! upstream remote, else `origin`; `lock:` in kco.yaml names another, or `local`).
//!
//! Taking it pushes a new commit (an empty tree; its message records the holder) to that ref
//! with `--force-with-lease=REF:` (an empty expected value: the ref must not exist). git
//! checks the lease against what the remote advertised, and the remote's receive-pack then
//! updates the ref in a transaction whose expected old value is "none": of two runners that
//! both saw no lock, the second's update fails on the server. Releasing deletes the ref with
//! a lease on our commit, so a lock someone else took meanwhile (after a force-unlock) is
//! left alone. kco runs the `git` command for this, so a runner's own credentials for the
//! remote (a token, an SSH key, a credential helper) are used as they are for its pushes.

use std::path::{Path, PathBuf};

use super::holder::{is_stale, Holder};
pub use super::remote_git::Remote;
use super::remote_git::{
    cannot_run, fetch, git, has_object, list_refs, push, remote_error, run, stderr, stdout,
};
use crate::config::LockSetting;
use crate::error::{Error, Result};

/// Where the lock refs live on the remote.
pub const REF_PREFIX: &str = super::remote_git::LOCK_REFS;

/// The ref of `cluster`'s lock.
pub fn lock_ref(cluster: &str) -> String {
    format!("{REF_PREFIX}{cluster}")
}

/// Why a lock is kept on this machine only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalOnly {
    /// `lock: local` in kco.yaml (or a state directory given to a test).
    Configured,
    /// The project is not in a git work tree (or git cannot be run).
    NoGit,
    /// The git repository has no remote to share a lock through.
    NoRemote,
}

impl LocalOnly {
    /// Why, in a few words, for the line that says so.
    pub fn why(self) -> &'static str {
        match self {
            LocalOnly::Configured => "`lock: local` in kco.yaml",
            LocalOnly::NoGit => "the project is not in a git repository",
            LocalOnly::NoRemote => "its git repository has no remote",
        }
    }
}

/// Where the locks of a project are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    Remote(Remote),
    Local(LocalOnly),
}

/// Where the locks of the project in `dir` are kept, by `setting`. A remote that kco.yaml
/// names but the repository does not have is an error (never a silent fallback).
pub fn resolve(setting: &LockSetting, dir: &Path, cluster: &str) -> Result<Store> {
    if *setting == LockSetting::Local {
        return Ok(Store::Local(LocalOnly::Configured));
    }
    let shown = git(dir, &["rev-parse", "--show-toplevel"]);
    let top = shown
        .as_ref()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(stdout(o)));
    let named = match setting {
        LockSetting::Remote(name) => Some(name.as_str()),
        _ => None,
    };
    if top.is_none() {
        // `git` could not say where the work tree is: never a silent fallback to a local lock
        // when the project is a repository with a remote to share it through.
        if let Some(remote) = shared_remote_without_git(dir) {
            let why = match &shown {
                Err(e) => format!("the `git` command cannot be run ({e})"),
                Ok(o) => format!("`git rev-parse` failed: {}", stderr(o)),
            };
            return Err(remote_error(
                cluster,
                &remote,
                format!(
                    "{} is a git repository with the remote `{remote}` to share the lock through, but {why}; kco takes the shared lock with `git` (so that the runner's own credentials for the remote are used): install git (and trust the checkout: `git config --global --add safe.directory DIR`), or set `lock: local` in kco.yaml to lock on this machine only",
                    dir.display()
                ),
            ));
        }
    }
    let Some(top) = top else {
        return match named {
            Some(name) => Err(remote_error(
                cluster,
                name,
                format!(
                    "kco.yaml says `lock: {{remote: {name}}}`, but {} is not in a git repository",
                    dir.display()
                ),
            )),
            None => Ok(Store::Local(LocalOnly::NoGit)),
        };
    };
    let remotes: Vec<String> = git(&top, &["remote"])
        .ok()
        .filter(|o| o.status.success())
        .map(|o| stdout(&o).lines().map(str::to_string).collect())
        .unwrap_or_default();
    let chosen = match named {
        Some(name) if remotes.iter().any(|r| r == name) => name.to_string(),
        Some(name) => {
            return Err(remote_error(
                cluster,
                name,
                format!(
                    "kco.yaml names it in `lock:`, but the repository has no such remote (its remotes: {})",
                    if remotes.is_empty() {
                        "none".to_string()
                    } else {
                        remotes.join(", ")
                    }
                ),
            ))
        }
        None => match upstream_remote(&top).filter(|u| remotes.contains(u)) {
            Some(u) => u,
            None if remotes.iter().any(|r| r == "origin") => "origin".into(),
            None => return Ok(Store::Local(LocalOnly::NoRemote)),
        },
    };
    Ok(Store::Remote(Remote {
        repo: top,
        name: chosen,
    }))
}

/// The remote a repository at or above `dir` has (`origin` first), read from its config file
/// when the `git` command could not be used (not installed, or refusing a checkout another
/// user owns); `None` when `dir` is in no repository or it has no remote.
fn shared_remote_without_git(dir: &Path) -> Option<String> {
    let dotgit = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.exists())?;
    let gitdir = if dotgit.is_file() {
        // A worktree or submodule: `gitdir: PATH`; its config is the common one's.
        let text = std::fs::read_to_string(&dotgit).ok()?;
        let path = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        let path = dotgit.parent()?.join(path);
        match std::fs::read_to_string(path.join("commondir")) {
            Ok(common) => path.join(common.trim()),
            Err(_) => path,
        }
    } else {
        dotgit
    };
    let config = std::fs::read_to_string(gitdir.join("config")).ok()?;
    let names: Vec<String> = config
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("[remote")?.trim_start();
            let name = rest.strip_prefix('"')?.split('"').next()?;
            Some(name.to_string())
        })
        .collect();
    names
        .iter()
        .find(|r| *r == "origin")
        .or(names.first())
        .cloned()
}

/// The remote of the current branch's upstream, if it has one.
fn upstream_remote(top: &Path) -> Option<String> {
    let branch = git(top, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok()?;
    if !branch.status.success() {
        return None;
    }
    let key = format!("branch.{}.remote", stdout(&branch));
    let remote = git(top, &["config", "--get", &key]).ok()?;
    Some(stdout(&remote)).filter(|r| remote.status.success() && !r.is_empty() && r != ".")
}

/// A lock as the remote holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub cluster: String,
    /// The commit the ref points at.
    pub oid: String,
    pub holder: Holder,
}

/// A lock held on the remote; dropping it releases it (if it is still ours).
#[derive(Debug)]
pub struct RemoteLock {
    remote: Remote,
    cluster: String,
    oid: String,
}

impl RemoteLock {
    /// Takes the lock of `cluster` on `remote` for `holder`, or fails naming who holds it.
    /// A holder on this host whose process is gone is stale, and its lock taken over (with a
    /// lease on its commit).
    pub fn acquire(remote: &Remote, cluster: &str, holder: &Holder) -> Result<RemoteLock> {
        let oid = commit(remote, cluster, holder)?;
        let name = lock_ref(cluster);
        let mut expect = String::new();
        let mut last = String::new();
        for _ in 0..3 {
            match push(remote, &name, &expect, &oid)? {
                Ok(()) => {
                    return Ok(RemoteLock {
                        remote: remote.clone(),
                        cluster: cluster.to_string(),
                        oid,
                    })
                }
                Err(why) => last = why,
            }
            // Refused: someone holds it (or held it, and let go since); or the remote cannot
            // be reached, and then git's word on the push is the one to show.
            let seen = read(remote, cluster)
                .map_err(|_| remote_error(cluster, &remote.name, format!("git push: {last}")))?;
            match seen {
                Some(h) if is_stale(&h.holder) => expect = h.oid,
                Some(h) => return Err(locked(remote, h)),
                None => expect.clear(),
            }
        }
        Err(remote_error(cluster, &remote.name, last))
    }

    /// The lock id this lock records.
    pub fn oid(&self) -> &str {
        &self.oid
    }

    /// The remote it is held on.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        let _ = delete(&self.remote, &self.cluster, &self.oid);
    }
}

/// The error of a lock that `h` holds.
pub fn locked(remote: &Remote, h: Held) -> Error {
    Error::Locked {
        lock: format!("{} on git remote `{}`", lock_ref(&h.cluster), remote.name),
        id: h.holder.id.clone(),
        holder: h.holder.to_string(),
        cluster: h.cluster,
    }
}

/// Who holds the lock of `cluster` on `remote`, if anyone.
pub fn read(remote: &Remote, cluster: &str) -> Result<Option<Held>> {
    let name = lock_ref(cluster);
    let listed = list_refs(remote, cluster, &name)?;
    match listed.into_iter().next() {
        None => Ok(None),
        Some((oid, _)) => held(remote, cluster, &name, &oid),
    }
}

/// Every lock on `remote`.
pub fn list(remote: &Remote) -> Result<Vec<Held>> {
    let pattern = format!("{REF_PREFIX}*");
    let mut all = Vec::new();
    for (oid, name) in list_refs(remote, "*", &pattern)? {
        let cluster = name.trim_start_matches(REF_PREFIX).to_string();
        if let Some(h) = held(remote, &cluster, &name, &oid)? {
            all.push(h);
        }
    }
    Ok(all)
}

/// Deletes the lock of `cluster` if the ref still points at `oid`: `false` when it did not
/// (gone already, or another lock since).
pub fn delete(remote: &Remote, cluster: &str, oid: &str) -> Result<bool> {
    Ok(push(remote, &lock_ref(cluster), oid, "")?.is_ok())
}

/// The holder recorded in the commit `oid` of ref `name` (fetched when it is not here yet);
/// `None` when the ref moved on meanwhile (released).
fn held(remote: &Remote, cluster: &str, name: &str, oid: &str) -> Result<Option<Held>> {
    if !has_object(remote, oid) {
        let out = fetch(remote, name).map_err(|e| cannot_run(remote, cluster, e))?;
        if !out.status.success() && !has_object(remote, oid) {
            // Released between the listing and the fetch, or not readable at all.
            let listed = list_refs(remote, cluster, name)?;
            if listed.is_empty() {
                return Ok(None);
            }
            return Err(remote_error(cluster, &remote.name, stderr(&out)));
        }
    }
    let text = run(remote, cluster, &["cat-file", "commit", oid]);
    let Ok(text) = text else {
        // The ref moved on: the commit fetched is another one.
        return Ok(None);
    };
    let message = stdout(&text);
    let message = message.split_once("\n\n").map(|(_, m)| m).unwrap_or("");
    Ok(Some(Held {
        cluster: cluster.to_string(),
        oid: oid.to_string(),
        holder: parse_record(message),
    }))
}

/// A commit on the empty tree whose message records `holder`; its id is the lock's commit.
fn commit(remote: &Remote, cluster: &str, holder: &Holder) -> Result<String> {
    let tree = run(remote, cluster, &["mktree"])?;
    let tree = stdout(&tree);
    let message = record(cluster, &remote_text(remote), holder);
    let out = run(remote, cluster, &["commit-tree", &tree, "-m", &message])?;
    Ok(stdout(&out))
}

/// The remote as a lock records it: its name and URL, credentials left out.
fn remote_text(remote: &Remote) -> String {
    let url = git(&remote.repo, &["remote", "get-url", &remote.name])
        .ok()
        .filter(|o| o.status.success())
        .map(|o| crate::client::redact_url(&stdout(&o)));
    match url {
        Some(u) => format!("{} ({u})", remote.name),
        None => remote.name.clone(),
    }
}

/// The commit message of a lock.
fn record(cluster: &str, repo: &str, h: &Holder) -> String {
    let mut lines = vec![
        format!("kco lock of cluster `{cluster}`"),
        String::new(),
        format!("id: {}", h.id),
        format!("cluster: {cluster}"),
        format!("repo: {repo}"),
        format!("host: {}", h.host),
        format!("pid: {}", h.pid),
    ];
    if let Some(u) = &h.user {
        lines.push(format!("user: {u}"));
    }
    if let Some(j) = &h.job {
        lines.push(format!("job: {j}"));
    }
    lines.push(format!("since: {}", h.since));
    lines.join("\n")
}

/// The holder a lock's commit message records (fields it lacks are left empty).
fn parse_record(message: &str) -> Holder {
    let field = |key: &str| {
        message
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
            .map(|v| v.trim().to_string())
    };
    Holder {
        pid: field("pid").and_then(|p| p.parse().ok()).unwrap_or(0),
        host: field("host").unwrap_or_else(|| "an unknown host".into()),
        since: field("since").unwrap_or_else(|| "an unknown time".into()),
        id: field("id").unwrap_or_default(),
        user: field("user"),
        job: field("job"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::remote_git::redacted;
    use super::*;
    use crate::engine::operation::lock::{self, ClusterLock};
    use crate::engine::operation::StateDir;
    use std::process::Command;

    /// `git ARGS` in `dir`, which must succeed.
    pub(crate) fn sh(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(["-c", "init.defaultBranch=main"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
        stdout(&out)
    }

    /// A bare repository and `n` clones of it.
    pub(crate) fn remote_and_clones(n: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
        let t = tempfile::tempdir().unwrap();
        sh(t.path(), &["init", "--quiet", "--bare", "remote.git"]);
        let clones = (0..n)
            .map(|i| {
                let name = format!("clone{i}");
                sh(t.path(), &["clone", "--quiet", "remote.git", &name]);
                t.path().join(name)
            })
            .collect();
        (t, clones)
    }

    fn origin(repo: &Path) -> Remote {
        match resolve(&LockSetting::Auto, repo, "a").unwrap() {
            Store::Remote(r) => r,
            other => panic!("{other:?}"),
        }
    }

    fn refs(bare: &Path) -> String {
        sh(bare, &["for-each-ref", "--format=%(refname)", REF_PREFIX])
    }

    #[test]
    fn a_second_clone_is_refused_naming_the_holder_until_the_first_lets_go() {
        let (t, c) = remote_and_clones(2);
        let bare = t.path().join("remote.git");
        let me = Holder::me("2026-12-01T02:00:00Z");
        let first = RemoteLock::acquire(&origin(&c[0]), "a", &me).unwrap();
        assert_eq!(refs(&bare), "refs/kco/locks/a");
        let e = RemoteLock::acquire(&origin(&c[1]), "a", &Holder::me("later")).unwrap_err();
        let text = e.to_string();
        for part in [
            "cluster `a` is locked by another kco",
            &format!("pid {}", std::process::id()),
            "since 2026-12-01T02:00:00Z",
            &format!("lock id {}", me.id),
            "refs/kco/locks/a on git remote `origin`",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        // Another cluster is another ref.
        let b = RemoteLock::acquire(&origin(&c[1]), "b", &Holder::me("t")).unwrap();
        let seen = read(&origin(&c[1]), "a").unwrap().unwrap();
        assert_eq!(
            (seen.holder.id.as_str(), seen.oid.as_str()),
            (me.id.as_str(), first.oid())
        );
        assert_eq!(seen.holder.job, me.job);
        drop(first);
        assert_eq!(refs(&bare), "refs/kco/locks/b");
        drop(b);
        assert_eq!(refs(&bare), "");
        let again = RemoteLock::acquire(&origin(&c[1]), "a", &Holder::me("t2")).unwrap();
        drop(again);
        assert_eq!(read(&origin(&c[0]), "a").unwrap(), None);
    }

    #[test]
    fn of_clones_racing_for_one_lock_exactly_one_wins_every_time() {
        let (t, c) = remote_and_clones(4);
        let bare = t.path().join("remote.git");
        for round in 0..12 {
            let barrier = std::sync::Barrier::new(c.len());
            let results: Vec<Result<RemoteLock>> = std::thread::scope(|s| {
                let handles: Vec<_> = c
                    .iter()
                    .map(|repo| {
                        let barrier = &barrier;
                        s.spawn(move || {
                            let remote = origin(repo);
                            let me = Holder::me("t");
                            barrier.wait();
                            RemoteLock::acquire(&remote, "a", &me)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let won = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(won, 1, "round {round}: {results:?}");
            for e in results.iter().filter_map(|r| r.as_ref().err()) {
                assert!(matches!(e, Error::Locked { .. }), "round {round}: {e}");
            }
            drop(results);
            assert_eq!(refs(&bare), "", "round {round}: released");
        }
    }

    #[test]
    fn a_lock_of_a_dead_process_of_this_host_is_taken_over_and_one_elsewhere_is_not() {
        let (_t, c) = remote_and_clones(1);
        let remote = origin(&c[0]);
        let dead = Holder {
            pid: u32::MAX - 1,
            ..Holder::me("t0")
        };
        std::mem::forget(RemoteLock::acquire(&remote, "a", &dead).unwrap());
        let mine = RemoteLock::acquire(&remote, "a", &Holder::me("t1")).unwrap();
        assert_eq!(read(&remote, "a").unwrap().unwrap().holder.since, "t1");
        drop(mine);
        let elsewhere = Holder {
            host: "runner-7".into(),
            ..dead
        };
        std::mem::forget(RemoteLock::acquire(&remote, "a", &elsewhere).unwrap());
        let e = RemoteLock::acquire(&remote, "a", &Holder::me("t2")).unwrap_err();
        assert!(e.to_string().contains("on runner-7"), "{e}");
    }

    #[test]
    fn the_remote_is_the_upstream_then_origin_and_without_one_the_lock_is_local_and_says_why() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve(&LockSetting::Auto, t.path(), "a").unwrap(),
            Store::Local(LocalOnly::NoGit)
        );
        let e = resolve(&LockSetting::Remote("origin".into()), t.path(), "a").unwrap_err();
        assert!(e.to_string().contains("not in a git repository"), "{e}");
        sh(t.path(), &["init", "--quiet", "repo"]);
        let repo = t.path().join("repo");
        assert_eq!(
            resolve(&LockSetting::Auto, &repo, "a").unwrap(),
            Store::Local(LocalOnly::NoRemote)
        );
        assert_eq!(
            resolve(&LockSetting::Local, &repo, "a").unwrap(),
            Store::Local(LocalOnly::Configured)
        );
        sh(
            &repo,
            &["remote", "add", "origin", "https://u:tok@example.com/x.git"],
        );
        sh(
            &repo,
            &["remote", "add", "team", "https://example.com/y.git"],
        );
        assert_eq!(origin(&repo).name, "origin");
        sh(&repo, &["config", "branch.main.remote", "team"]);
        assert_eq!(origin(&repo).name, "team");
        let e = resolve(&LockSetting::Remote("nope".into()), &repo, "a").unwrap_err();
        assert!(e.to_string().contains("its remotes: origin, team"), "{e}");
        // The record names the remote without its credentials.
        let text = remote_text(&Remote {
            repo: repo.clone(),
            name: "origin".into(),
        });
        assert_eq!(text, "origin (https://example.com/x.git)");
        assert_eq!(
            redacted("To https://x-access-token:s3cret@example.com/x.git\n! [rejected]"),
            "To https://example.com/x.git ! [rejected]"
        );
    }

    #[test]
    fn a_local_lock_left_by_another_host_whose_remote_lock_is_gone_is_dropped() {
        let (_t, c) = remote_and_clones(1);
        let state = StateDir::at(c[0].join(".kco")).with_lock(LockSetting::Auto, &c[0]);
        // A lock taken on a runner whose host name has changed since: both locks written.
        let elsewhere = Holder {
            host: "runner-old-name".into(),
            ..Holder::me("t0")
        };
        let write_local = |h: &Holder| {
            let path = state.lock_path("a");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, serde_json::to_string(h).unwrap()).unwrap();
        };
        write_local(&elsewhere);
        let remote = RemoteLock::acquire(&origin(&c[0]), "a", &elsewhere).unwrap();
        // While its remote lock is held, it may be in use: kept, and an operation refused.
        assert_eq!(lock::drop_left_behind(&state, "a").unwrap(), None);
        assert!(ClusterLock::acquire(&state, "a", "t1").is_err());
        // Its remote lock gone (released, force-unlocked): the local one is left behind.
        drop(remote);
        let dropped = lock::drop_left_behind(&state, "a").unwrap();
        assert_eq!(dropped.map(|h| h.id), Some(elsewhere.id.clone()));
        assert!(!state.lock_path("a").exists());
        let taken = ClusterLock::acquire(&state, "a", "t2").unwrap();
        // This host's own lock, alive, is never dropped.
        assert_eq!(lock::drop_left_behind(&state, "a").unwrap(), None);
        drop(taken);
    }

    #[test]
    fn status_lists_both_locks_and_force_unlock_removes_exactly_the_id_given() {
        let (t, c) = remote_and_clones(2);
        let bare = t.path().join("remote.git");
        let state =
            |repo: &Path| StateDir::at(repo.join(".kco")).with_lock(LockSetting::Auto, repo);
        let held = ClusterLock::acquire(&state(&c[0]), "a", "t0").unwrap();
        let id = held.holder().id.clone();
        assert_eq!(held.local_only(), None);
        std::mem::forget(held);
        // From the other clone: the remote lock only (its local lock is the first clone's).
        let s = lock::status(&state(&c[1]), &[]).unwrap();
        assert_eq!(s.remote.as_deref(), Some("origin"));
        let kinds: Vec<(&str, &str)> = s
            .locks
            .iter()
            .map(|l| (l.cluster.as_str(), l.kind))
            .collect();
        assert_eq!(kinds, [("a", "remote")]);
        let s = lock::status(&state(&c[0]), &["a".into()]).unwrap();
        let kinds: Vec<&str> = s.locks.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, ["remote", "local"]);
        assert!(s.locks.iter().all(|l| l.holder.id == id && !l.stale));
        // A wrong id finds nothing; the right one removes both.
        assert!(lock::find_id(&state(&c[0]), &[], "0000")
            .unwrap()
            .is_empty());
        let found = lock::find_id(&state(&c[0]), &[], &id).unwrap();
        let done = lock::force_unlock(&state(&c[0]), &id, found).unwrap();
        assert_eq!(done.removed.len(), 2);
        assert_eq!(refs(&bare), "");
        assert!(!state(&c[0]).lock_path("a").exists());
        let again = ClusterLock::acquire(&state(&c[1]), "a", "t1").unwrap();
        drop(again);
    }
}
