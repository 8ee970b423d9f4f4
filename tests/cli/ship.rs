//! What shipping kco relies on outside one person's shell: a checkout another user owns (a CI
//! workspace, a volume mounted into the image) and the GitHub Action at the repository's root.

use kco::model::ConnectorType::Sink;

use crate::history::{orders, Repo};
use crate::support::json::parse_json;
use crate::support::run::Kco;

/// A uid that owns nothing on the machine.
const OTHER_UID: u32 = 4321;

/// Gives `dir` and everything under it to `uid`.
#[cfg(unix)]
fn chown_all(dir: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    if dir.is_dir() && !dir.is_symlink() {
        for entry in std::fs::read_dir(dir).unwrap() {
            chown_all(&entry.unwrap().path(), uid);
        }
    }
}

/// Whether this process may give files away (root).
#[cfg(unix)]
fn may_chown() -> bool {
    let probe = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(probe.path(), Some(OTHER_UID), None).is_ok()
}

/// git distrusts a repository another user owns; kco says so, names the owner and both fixes
/// (never "not in a git repository"), and honours `safe.directory` in the global git config.
#[cfg(unix)]
#[test]
fn a_repository_another_user_owns_names_the_owner_and_both_fixes() {
    if !may_chown() {
        eprintln!("skipped: giving a repository to another uid needs root");
        return;
    }
    let r = Repo::new();
    r.write("snapshots/a/orders.yaml", "orders", Sink, orders(&[(0, 1)]));
    r.commit("2026-11-27T02:00:00Z", "nightly 1");
    chown_all(r.path(), OTHER_UID);
    let top = r.path().canonicalize().unwrap();

    let run = Kco::new(r.path()).args(["log"]).run();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        !run.stderr.contains("not in a git repository"),
        "{}",
        run.stderr
    );
    for part in [
        format!("the git repository {}", top.display()),
        format!("another user (uid {OTHER_UID}) owns"),
        format!("run kco as the owner of {}", top.display()),
        format!("git config --global --add safe.directory {}", top.display()),
    ] {
        assert!(run.stderr.contains(&part), "{part:?} in {}", run.stderr);
    }
    let json = Kco::new(r.path()).args(["log", "-o", "json"]).run();
    assert_eq!(parse_json(&json.stdout)["error"]["kind"], "not_trusted");

    // Marked safe the way git does, in the global config of the user running kco.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        format!("[safe]\n\tdirectory = {}\n", top.display()),
    )
    .unwrap();
    let run = Kco::new(r.path())
        .env("HOME", home.path())
        .args(["log"])
        .run();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.contains("nightly 1"), "{}", run.stdout);
}

/// `--version` names the version, the commit and its date, and the target, as ripgrep and
/// cargo do; `-V` stays the version alone (the man pages print it).
#[test]
fn version_names_the_commit_its_date_and_the_target() {
    let run = Kco::new(".").arg("--version").run();
    assert_eq!(run.code, 0, "{}", run.all());
    let line = run.stdout.trim_end();
    let rest = line
        .strip_prefix(&format!("kco {} (commit ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, rest) = rest.split_once(' ').unwrap();
    let (date, target) = rest.split_once(", ").unwrap();
    // Built from this checkout: its commit and the commit's date, from git.
    if std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".git")
        .exists()
    {
        assert!(
            commit.len() == 9 && commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{line}"
        );
        let digits = date.replace('-', "");
        assert!(date.len() == 10 && digits.len() == 8, "{line}");
        assert!(digits.chars().all(|c| c.is_ascii_digit()), "{line}");
    }
    let target = target.strip_suffix(')').unwrap();
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "{line}"
    );
    let short = Kco::new(".").arg("-V").run();
    assert_eq!(
        short.stdout.trim_end(),
        format!("kco {}", env!("CARGO_PKG_VERSION"))
    );
}
