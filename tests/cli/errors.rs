//! How kco ends: exit codes that do not depend on whether anyone read stdout, one reporter for
//! errors (text on stderr; a JSON document on stdout with `--output json`), and stderr colors
//! decided from stderr.

use std::path::Path;

use kco::model::ConnectorType;
use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{sink_offset, SnapshotFile};
use crate::support::run::Kco;

/// A running sink whose live offsets moved ahead of its file: `--fail-on any` makes that exit 2.
fn advanced_sink() -> (tempfile::TempDir, FakeConnect) {
    let t = tempfile::tempdir().unwrap();
    let offsets = sink_offset;
    SnapshotFile::captured("orders", ConnectorType::Sink, offsets(100))
        .write_in(&t.path().join("snapshots/a"));
    let fake = FakeConnect::builder()
        .version("4.1.0")
        .sink("orders", "FileStreamSink", State::Running, offsets(130))
        .start();
    (t, fake)
}

/// `kco diff --fail-on any` of the fake in `dir`, not run yet.
fn diff(dir: &Path, fake: &FakeConnect) -> Kco {
    Kco::new(dir).on(fake).args(["diff", "--fail-on", "any"])
}

#[test]
fn a_closed_stdout_does_not_change_the_exit_code() {
    let (t, fake) = advanced_sink();
    let r = diff(t.path(), &fake).run();
    assert_eq!(r.code, 2, "unpiped: {}{}", r.stdout, r.stderr);
    assert!(!r.stdout.is_empty());

    // The reader goes away before kco writes a byte (as `kco diff | head -0` would).
    let mut child = diff(t.path(), &fake).spawn();
    drop(child.stdout.take());
    let out = child.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "piped into a closed reader: {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("error:"),
        "{stderr}"
    );
}

fn json_doc(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("one JSON document: {e}\n{stdout}"))
}

#[test]
fn in_json_mode_an_error_is_the_one_document_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path())
        .args(["-o", "json", "--url", "http://127.0.0.1:9", "snapshot"])
        .run();
    assert_eq!(r.code, 1);
    let doc = json_doc(&r.stdout);
    let e = &doc["error"];
    assert_eq!(e["kind"], "client");
    assert_eq!(e["exit_code"], 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("cannot reach Kafka Connect"),
        "{doc}"
    );
    assert!(e["causes"].is_array());
    assert!(e["hint"].as_str().unwrap().contains("--url"), "{doc}");
    assert!(
        r.stderr.contains("error: cannot reach Kafka Connect"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_edited_file_is_a_files_error_with_the_fmt_hint() {
    let (t, _fake) = advanced_sink();
    let path = t.path().join("snapshots/a/orders.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("kafka_offset: 100", "kafka_offset: 99")).unwrap();
    let r = Kco::new(t.path())
        .args(["-o", "json", "apply", "snapshots/a", "--dry-run"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = json_doc(&r.stdout);
    assert_eq!(doc["error"]["kind"], "files");
    assert!(doc["error"]["hint"].as_str().unwrap().contains("kco fmt"));
    let r = Kco::new(t.path())
        .args(["apply", "snapshots/a", "--dry-run"])
        .run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.is_empty(),
        "text errors stay off stdout: {}",
        r.stdout
    );
    assert!(
        r.stderr.contains("hint: if the edit is intended"),
        "{}",
        r.stderr
    );
}

/// A usage error clap finds (an unknown flag, a misspelt one) is, with `-o json` or `yaml`
/// anywhere on the line, also the error document on stdout, as `--help` says of every error:
/// kind `usage`, clap's message, its tip as the hint, exit 1; clap's text stays on stderr, and
/// without `-o json` stdout stays empty.
#[test]
fn a_usage_error_is_a_document_on_stdout_under_output_json() {
    let dir = tempfile::tempdir().unwrap();
    for (args, message, hint) in [
        (
            &["ls", "--bogus", "-o", "json"][..],
            "unexpected argument '--bogus' found",
            "--help",
        ),
        (
            &["-ojson", "ls", "--paralel", "3"],
            "unexpected argument '--paralel' found",
            "a similar argument exists: '--parallel'",
        ),
        (
            &["--output=json", "snapshot", "--no-such-flag"],
            "unexpected argument '--no-such-flag' found",
            "use '-- --no-such-flag'",
        ),
    ] {
        let r = Kco::new(dir.path()).args(args).run();
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        let doc = json_doc(&r.stdout);
        let e = &doc["error"];
        assert_eq!(e["kind"], "usage", "{doc}");
        assert_eq!(e["message"], message, "{doc}");
        assert!(e["hint"].as_str().unwrap().contains(hint), "{doc}");
        assert_eq!(e["exit_code"], 1, "{doc}");
        assert!(
            r.stderr.starts_with(&format!("error: {message}")),
            "{}",
            r.stderr
        );
    }
    let r = Kco::new(dir.path())
        .args(["ls", "--bogus", "-o", "yaml"])
        .run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("error:\n  kind: usage\n"),
        "{}",
        r.stdout
    );
    let r = Kco::new(dir.path()).args(["ls", "--bogus"]).run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.is_empty(),
        "text usage errors stay off stdout: {}",
        r.stdout
    );
}

fn usage_error(cwd: &Path, color: &str, no_color: bool) -> String {
    let mut cmd = Kco::new(cwd);
    if !no_color {
        cmd = cmd.env_remove("NO_COLOR");
    }
    let r = cmd
        .env("TERM", "xterm")
        .args(["--color", color, "-o", "markdown", "validate"])
        .run();
    assert_eq!(r.code, 1);
    r.stderr
}

#[test]
fn stderr_colors_follow_stderr_and_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    const ESC: &str = "\u{1b}[";
    // An explicit flag wins, even over NO_COLOR and a stderr that is not a terminal.
    assert!(usage_error(dir.path(), "always", true).contains(ESC));
    assert!(!usage_error(dir.path(), "never", false).contains(ESC));
    // auto: stderr is a pipe here, so no colors.
    let auto = usage_error(dir.path(), "auto", false);
    assert!(!auto.contains(ESC), "{auto:?}");
    assert!(auto.starts_with("error: --output markdown"), "{auto:?}");
}
