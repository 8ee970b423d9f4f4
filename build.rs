//! What `kco --version` says beyond the version: the commit, its date and the target, the way
//! ripgrep and cargo say it. Read from git when the sources are a checkout; from
//! `.cargo_vcs_info.json` (the commit `cargo package` recorded) in a crate downloaded without
//! `.git`; `KCO_BUILD_COMMIT` and `KCO_BUILD_DATE` override both (a build from a source
//! archive). What cannot be known is said as such, and the build never fails for it.

use std::path::Path;
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown target".into());
    println!("cargo:rerun-if-env-changed=KCO_BUILD_COMMIT");
    println!("cargo:rerun-if-env-changed=KCO_BUILD_DATE");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    if dir.join(".git").exists() {
        watch_git(dir);
    }

    // Only the sources' own checkout: a crate unpacked inside another repository (a home
    // directory kept in git) must not report that repository's commit.
    let checkout = dir.join(".git").exists();
    let from_git = |args: &[&str]| checkout.then(|| git(dir, args)).flatten();
    let commit = env("KCO_BUILD_COMMIT")
        .or_else(|| from_git(&["rev-parse", "--short=9", "HEAD"]))
        .or_else(|| vcs_info_commit(dir));
    let date = env("KCO_BUILD_DATE")
        .or_else(|| from_git(&["log", "-1", "--format=%cs", "HEAD"]))
        .or_else(|| env("SOURCE_DATE_EPOCH").and_then(|s| s.parse().ok().map(date_of)));
    let info = format!(
        "{} (commit {} {}, {target})",
        env!("CARGO_PKG_VERSION"),
        commit.as_deref().unwrap_or("unknown"),
        date.as_deref().unwrap_or("of unknown date"),
    );
    println!("cargo:rustc-env=KCO_LONG_VERSION={info}");
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

/// The output of a git command in `dir`, when git is there and answers.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}

/// Runs the build again when HEAD moves: the HEAD file and the branch it names.
fn watch_git(dir: &Path) {
    let Some(git_dir) = git(dir, &["rev-parse", "--absolute-git-dir"]) else {
        return;
    };
    println!("cargo:rerun-if-changed={git_dir}/HEAD");
    let common = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .unwrap_or_else(|| git_dir.clone());
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        let loose = Path::new(&common).join(&branch);
        if loose.exists() {
            println!("cargo:rerun-if-changed={}", loose.display());
        }
    }
    let packed = Path::new(&common).join("packed-refs");
    if packed.exists() {
        println!("cargo:rerun-if-changed={}", packed.display());
    }
}

/// The commit `cargo package` recorded (`{"git": {"sha1": "..."}}`), first 9 digits.
fn vcs_info_commit(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + 6..];
    let start = rest.find('"')? + 1;
    let sha: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (sha.len() >= 9).then(|| sha[..9].to_string())
}

/// `YYYY-MM-DD` of a Unix time (UTC), by the days-from-civil algorithm.
fn date_of(secs: i64) -> String {
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
