//! Running the test bed script and reading other programs' output (kco itself runs through
//! `crate::support::env::TestEnv`).

use std::path::PathBuf;
use std::process::{Command, Output};

/// A process's stdout, then its stderr, as text.
pub fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A process's exit code (-1 when killed by a signal), stdout and stderr.
pub fn output_parts(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts a process succeeded, showing its stdout and stderr otherwise; returns stdout.
pub fn assert_success(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The repository root (where `scripts/` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The test bed's state directory: `KCO_TESTBED_DIR`, else `<repo>/.testbed` (as for
/// `scripts/local-connect.sh`).
pub fn testbed_dir() -> PathBuf {
    std::env::var("KCO_TESTBED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo_root().join(".testbed"))
}

/// The directory of a service of the test bed (`secure`, `gateway`, `dr`): `var` when set,
/// else that directory in [`testbed_dir`].
pub fn service_dir(var: &str, sub: &str) -> PathBuf {
    std::env::var(var)
        .map(PathBuf::from)
        .unwrap_or_else(|_| testbed_dir().join(sub))
}

/// A URL from `var`, else `default`; without a trailing `/`.
pub fn env_url(var: &str, default: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .trim_end_matches('/')
        .to_string()
}

/// Runs `scripts/local-connect.sh <args>` (e.g. `["restart-worker", "a2"]`), asserting
/// success. The script honours `KCO_TESTBED_DIR` and the port variables it inherits.
pub fn local_connect(args: &[&str]) -> String {
    let out = Command::new(repo_root().join("scripts/local-connect.sh"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run scripts/local-connect.sh {args:?}: {e}"));
    assert_success(
        &out,
        &format!("scripts/local-connect.sh {}", args.join(" ")),
    )
}

/// `major.minor.patch` of a Connect `version` such as "4.3.1", "3.7.0-SNAPSHOT" or
/// "7.6.0-ccs".
pub fn parse_version(version: &str) -> Option<(u32, u32, u32)> {
    let core = version.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// Whether a `-v` trace `t` made only the first contact's requests, each once: `GET /`, and
/// the listing a snapshot, diff or ls asks for beside it (its line missing when the command
/// ended first).
pub fn first_contact_only(t: &str) -> bool {
    let mut sent: Vec<&str> = t
        .lines()
        .filter(|l| {
            ["GET ", "PUT ", "POST ", "PATCH ", "DELETE "]
                .iter()
                .any(|m| l.starts_with(m))
        })
        .map(|l| l.split(": ").next().unwrap_or(l))
        .collect();
    sent.sort_unstable();
    let listing = "GET /connectors?expand=status&expand=info";
    sent == ["GET /"] || sent == ["GET /", listing]
}
