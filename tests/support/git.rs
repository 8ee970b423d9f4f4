//! git for scratch repositories: a cleared environment (no `GIT_DIR` of a hook that runs the
//! tests), the system's and the user's git config left out (no hooks, signing or default
//! branch of the developer's), a fixed identity, and fixed dates when a
//! test needs stable commit ids.

use std::path::Path;
use std::process::Command;

/// A git identity, as the environment of a kco run that commits (or checks it can) gives it.
pub const IDENTITY: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@example.com"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@example.com"),
];

/// `git <args>` in `dir`, which must succeed; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    run(dir, None, args)
}

/// [`git`] with author and committer date `date` (stable commit ids).
pub fn git_at(dir: &Path, date: &str, args: &[&str]) -> String {
    run(dir, Some(date), args)
}

/// `git <args>` in `dir`, which may fail: whether it succeeded, and its stdout then stderr.
pub fn git_may_fail(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = command(dir, None, args).output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), all)
}

fn run(dir: &Path, date: Option<&str>, args: &[&str]) -> String {
    let out = command(dir, date, args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn command(dir: &Path, date: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=Night Job",
            "-c",
            "user.email=n@example.com",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args);
    if let Some(date) = date {
        cmd.env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date);
    }
    cmd
}
