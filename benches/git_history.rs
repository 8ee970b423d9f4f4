//! Git history at scale: `kco log`, `kco log --stalled` and `kco apply --at --dry-run` on a
//! generated repository of N connectors and C nightly commits (default 1,000 and 1,000).
//!
//! ```text
//! cargo bench --bench git_history -- [--connectors N] [--commits C]
//! ```
//!
//! The repository is written with `git fast-import` (one pack, seconds): commit 0 adds every
//! connector's sealed file; each later commit is a nightly snapshot in which every connector
//! but one in ten (the stalled ones) advances, each file rewritten with the commit's time as
//! its `capturedAt` (an observation, as `kco snapshot` writes them); the last commit keeps
//! the `capturedAt` before it (a change, as a pull request's). The release binary then runs against it, and
//! `apply --at` plans against the in-process fake Connect over HTTP holding every connector.
//! Prints a Markdown table; nothing is asserted about times (docs/benchmarks.md).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kco::fake::{FakeConnect, State};
use kco::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{ConnectorState, ConnectorType, OffsetEntry};
use serde_json::json;

fn arg(flag: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

fn offsets(j: usize, position: usize) -> serde_json::Value {
    json!([{"partition": {"kafka_topic": format!("t{j}"), "kafka_partition": 0},
            "offset": {"kafka_offset": position}},
           {"partition": {"kafka_topic": format!("t{j}"), "kafka_partition": 1},
            "offset": {"kafka_offset": position / 2}}])
}

/// Connector `j`'s file at `position`, captured at `captured` (seconds since the epoch).
fn file(j: usize, position: usize, captured: usize) -> String {
    let entries: Vec<OffsetEntry> = serde_json::from_value(offsets(j, position)).unwrap();
    OffsetsFile::new(
        Metadata {
            name: format!("c{j:04}"),
            cluster: "prod".into(),
            kafka_cluster_id: None,
            connect_version: Some("4.1.0".into()),
            connector_class: Some("FileStreamSink".into()),
            connector_type: ConnectorType::Sink,
            state: Some(ConnectorState::Running),
            captured_at: Some(
                humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH + Duration::from_secs(captured as u64),
                )
                .to_string(),
            ),
            observed_at: None,
            offsets_from: None,
        },
        entries,
        None,
    )
    .render(DEFAULT_SCHEMA_REF)
}

/// The position of connector `j` after commit `i`: stalled connectors stop after commit 0.
fn position(j: usize, i: usize) -> usize {
    if j.is_multiple_of(10) {
        1000
    } else {
        1000 + i * 100
    }
}

/// The `capturedAt` of the files commit `i` writes. A nightly snapshot rewrites them from
/// live: their capturedAt moves, which makes each version an observation (history::version),
/// as `--at` reads them. The last commit keeps the night before's: a change (a pull request
/// moving every advancing connector), which `--changed-since HEAD~1` plans.
fn captured_at(start: usize, i: usize, commits: usize) -> usize {
    let night = if i > 0 && i == commits - 1 { i - 1 } else { i };
    start + night * 86_400
}

fn generate(dir: &Path, connectors: usize, commits: usize) {
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    let mut fi = Command::new("git")
        .current_dir(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = std::io::BufWriter::new(fi.stdin.take().unwrap());
    let start = 1_764_554_400; // 2025-12-01 02:00 UTC
    for i in 0..commits {
        let msg = format!("nightly {i}");
        let t = start + i * 86_400;
        write!(w, "commit refs/heads/main\nmark :{}\ncommitter Night <n@example.com> {t} +0000\ndata {}\n{msg}\n", i + 1, msg.len()).unwrap();
        if i > 0 {
            writeln!(w, "from :{i}").unwrap();
        }
        for j in 0..connectors {
            if i > 0 && position(j, i) == position(j, i - 1) {
                continue;
            }
            let text = file(j, position(j, i), captured_at(start, i, commits));
            write!(
                w,
                "M 100644 inline snapshots/prod/c{j:04}.yaml\ndata {}\n{text}\n",
                text.len()
            )
            .unwrap();
        }
    }
    drop(w);
    assert!(fi.wait().unwrap().success());
    git(&["reset", "-q", "--hard", "main"]);
}

/// One timed run of kco, which must exit with `code` (docs/cli.md's exit codes).
fn time(label: &str, dir: &Path, args: &[&str], code: i32) -> Duration {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_kco"))
        .current_dir(dir)
        .env_remove("KCO_URL")
        .args(args)
        .output()
        .unwrap();
    let d = t.elapsed();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

fn main() {
    let connectors = arg("--connectors", 1000);
    let commits = arg("--commits", 1000);
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    generate(dir.path(), connectors, commits);
    eprintln!(
        "generated {connectors} connectors x {commits} commits in {:.1?}",
        t.elapsed()
    );
    let mut fake = FakeConnect::builder();
    for j in 0..connectors {
        fake = fake.sink(
            &format!("c{j:04}"),
            "FileStreamSink",
            State::Running,
            offsets(j, position(j, commits - 1)),
        );
    }
    let fake = fake.start();
    let url = fake.url();
    let back = format!("HEAD~{}", commits / 2);
    // A connector that advances (not one in ten): c0501 at the default size.
    let one = format!("c{:04}", (connectors / 2 + 1).min(connectors - 1));
    // Every connector but one in ten advances: `--stalled` finds c0000 at least and exits 2,
    // as a nightly job's alert would have it.
    let runs: Vec<(String, Vec<&str>, i32)> = vec![
        (
            "log of one connector".into(),
            vec!["--cluster", "prod", "log", &one],
            0,
        ),
        (
            "log of one connector, JSON".into(),
            vec!["--cluster", "prod", "log", &one, "-o", "json"],
            0,
        ),
        (
            "log --stalled 7 of every connector (exit 2: stalled ones)".into(),
            vec!["--cluster", "prod", "log", "--stalled", "7"],
            2,
        ),
        (
            format!("apply --at {back} --dry-run, every connector"),
            apply_dry_run(&url, &["--at", &back]),
            0,
        ),
        (
            "apply --changed-since HEAD~1 --dry-run".into(),
            apply_dry_run(&url, &["--changed-since", "HEAD~1"]),
            0,
        ),
    ];
    println!("| {connectors} connectors, {commits} commits | wall time (best of 3) |\n|---|---|");
    for (label, args, code) in runs {
        let best = (0..3)
            .map(|_| time(&label, dir.path(), &args, code))
            .min()
            .unwrap();
        println!(
            "| `kco {}`: {label} | {:.2} s |",
            args.join(" ").replace(&url, "URL"),
            best.as_secs_f64()
        );
    }
}

/// `apply snapshots/prod <revision> --dry-run` of cluster `prod` at `url`.
fn apply_dry_run<'a>(url: &'a str, revision: &[&'a str]) -> Vec<&'a str> {
    let head = ["--url", url, "--cluster", "prod", "apply", "snapshots/prod"];
    [&head[..], revision, &["--dry-run"]].concat()
}
