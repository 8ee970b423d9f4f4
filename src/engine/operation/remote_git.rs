//! git run against the shared remote, as the lock (`remote_lock`), the journal that travels
//! with it (`remote_journal`) and the mark of what was applied (`applied_mark`) run it: never
//! asking on the terminal, with kco's own identity for the commits they make, and any
//! credentials in a URL git names left out of kco's messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::error::{Error, Result};

/// Where the lock refs live on the remote (`remote_lock::REF_PREFIX`).
pub(super) const LOCK_REFS: &str = "refs/kco/locks/";

/// A git remote that holds the locks: the work tree git runs in and the remote's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub repo: PathBuf,
    pub name: String,
}

/// `git ls-remote REMOTE PATTERN`: (oid, ref) pairs.
pub(super) fn list_refs(
    remote: &Remote,
    cluster: &str,
    pattern: &str,
) -> Result<Vec<(String, String)>> {
    let out = run(
        remote,
        cluster,
        &["ls-remote", "--refs", &remote.name, pattern],
    )?;
    Ok(stdout(&out)
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(o, r)| (o.to_string(), r.to_string()))
        .collect())
}

/// `git fetch` of the one ref `name` from the remote, its objects only (no tags, no
/// FETCH_HEAD, no submodules).
pub(super) fn fetch(remote: &Remote, name: &str) -> std::io::Result<Output> {
    git(
        &remote.repo,
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            &remote.name,
            name,
        ],
    )
}

pub(super) fn has_object(remote: &Remote, oid: &str) -> bool {
    git(
        &remote.repo,
        &["cat-file", "-e", &format!("{oid}^{{commit}}")],
    )
    .is_ok_and(|o| o.status.success())
}

/// `git push --force-with-lease=REF:EXPECT REMOTE SRC:REF` (an empty `expect`: the ref must
/// not exist; an empty `src`: delete it). `Ok(Err(why))`: git refused (the lease, or the
/// remote's check of the old value); `Err`: git could not be run.
pub(super) fn push(
    remote: &Remote,
    name: &str,
    expect: &str,
    src: &str,
) -> Result<std::result::Result<(), String>> {
    let lease = format!("--force-with-lease={name}:{expect}");
    let spec = format!("{src}:{name}");
    let out = git(
        &remote.repo,
        &[
            "push",
            "--porcelain",
            "--quiet",
            "--no-verify",
            "--recurse-submodules=no",
            "--no-follow-tags",
            &lease,
            &remote.name,
            &spec,
        ],
    )
    .map_err(|e| remote_error(name, &remote.name, format!("cannot run git: {e}")))?;
    if out.status.success() {
        Ok(Ok(()))
    } else {
        let why = format!(
            "{} {}",
            redacted(&String::from_utf8_lossy(&out.stdout)),
            stderr(&out)
        );
        Ok(Err(why.trim().to_string()))
    }
}

/// git in `repo`, as kco runs it: never asking on the terminal, in the C locale, with an
/// identity of its own for the lock commits.
fn command(repo: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", "kco")
        .env("GIT_AUTHOR_EMAIL", "kco@localhost")
        .env("GIT_COMMITTER_NAME", "kco")
        .env("GIT_COMMITTER_EMAIL", "kco@localhost");
    cmd
}

/// [`command`], run with nothing on its standard input.
pub(super) fn git(repo: &Path, args: &[&str]) -> std::io::Result<Output> {
    command(repo, args).stdin(Stdio::null()).output()
}

/// [`git`], which must succeed.
pub(super) fn run(remote: &Remote, cluster: &str, args: &[&str]) -> Result<Output> {
    let out = git(&remote.repo, args).map_err(|e| cannot_run(remote, cluster, e))?;
    succeeded(remote, cluster, args, out)
}

/// [`run`], with `input` on git's standard input.
pub(super) fn run_with_input(
    remote: &Remote,
    cluster: &str,
    args: &[&str],
    input: &str,
) -> Result<Output> {
    use std::io::Write as _;
    let cannot = |e| cannot_run(remote, cluster, e);
    let mut child = command(&remote.repo, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .map_err(cannot)?;
    let out = child.wait_with_output().map_err(cannot)?;
    succeeded(remote, cluster, args, out)
}

pub(super) fn cannot_run(remote: &Remote, cluster: &str, e: std::io::Error) -> Error {
    remote_error(cluster, &remote.name, format!("cannot run git: {e}"))
}

/// `out`, when git succeeded; else its message as the error.
pub(super) fn succeeded(
    remote: &Remote,
    cluster: &str,
    args: &[&str],
    out: Output,
) -> Result<Output> {
    if out.status.success() {
        Ok(out)
    } else {
        Err(remote_error(
            cluster,
            &remote.name,
            format!("git {}: {}", args[0], stderr(&out)),
        ))
    }
}

pub(super) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// git's message, with any credentials in a URL it names left out.
pub(super) fn stderr(o: &Output) -> String {
    redacted(&String::from_utf8_lossy(&o.stderr))
}

/// `text` on one line, any credentials in a URL it names left out.
pub(super) fn redacted(text: &str) -> String {
    text.split_whitespace()
        .map(|w| {
            if w.contains("://") {
                crate::client::redact_url(w)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn remote_error(cluster: &str, remote: &str, detail: String) -> Error {
    Error::LockRemote {
        cluster: cluster.trim_start_matches(LOCK_REFS).to_string(),
        remote: remote.to_string(),
        detail,
    }
}
