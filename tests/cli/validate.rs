//! `kco validate`: every kind of problem names file:line; JSON output; exit codes.

use std::path::Path;

use serde_json::Value;

use crate::snapshot::snapshot;
use crate::support::fakes::two_connectors;
use crate::support::run::Kco;

/// Snapshot the fake into `dir`, then return the two files' texts.
fn fresh(dir: &Path) -> (String, String) {
    let fake = two_connectors();
    assert_eq!(snapshot(&fake, dir, &[]).code, 0);
    let read =
        |n: &str| std::fs::read_to_string(dir.join(format!("snapshots/a/{n}.yaml"))).unwrap();
    (read("file-src"), read("orders-sink"))
}

#[test]
fn valid_files_pass_with_a_count() {
    let dir = tempfile::tempdir().unwrap();
    fresh(dir.path());
    let r = Kco::new(dir.path()).arg("validate").run();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("2 files valid"), "{}", r.stderr);
}

#[test]
fn each_kind_of_problem_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (src, sink) = fresh(dir.path());
    // ((file name, what its problem says), the file edited, [text replaced, by what])
    let edits = [
        (
            ("syntax", ""),
            &src,
            ["kind: ConnectorOffsets", "kind: [ConnectorOffsets"],
        ),
        (
            ("unknown-field", "unknown field `extra`"),
            &src,
            ["checksum:", "extra: 1\nchecksum:"],
        ),
        (
            ("api-version", "unsupported apiVersion"),
            &src,
            ["apiVersion: kco/v1", "apiVersion: kco/v2"],
        ),
        (
            ("kind", "`kind` must be"),
            &src,
            ["kind: ConnectorOffsets", "kind: Other"],
        ),
        (
            ("checksum", "checksum mismatch"),
            &sink,
            ["kafka_offset: 5", "kafka_offset: 6"],
        ),
        (
            ("duplicate", "duplicate partition"),
            &sink,
            ["kafka_partition: 10", "kafka_partition: 2"],
        ),
        (
            ("sink-shape", "kafka_offset"),
            &sink,
            ["kafka_offset: 5", "kafka_offset: -5"],
        ),
        (
            ("nested", "must be a string, number, boolean or null"),
            &src,
            ["position: 9007199254740993", "position: {a: 1}"],
        ),
        (
            ("secret", "looks secret"),
            &src,
            ["checksum:", "config:\n  db.password: hunter2\nchecksum:"],
        ),
    ];
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    for ((name, _), file, [from, to]) in &edits {
        std::fs::write(bad.join(format!("{name}.yaml")), file.replace(from, to)).unwrap();
    }
    let r = Kco::new(dir.path()).args(["validate", "bad"]).run();
    assert_eq!(r.code, 1, "{}", r.stdout);
    for ((name, message), _, _) in &edits {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!("bad/{name}.yaml:")))
            .unwrap_or_else(|| panic!("{name} not reported:\n{}", r.stdout));
        let after = line.split(&format!("bad/{name}.yaml:")).nth(1).unwrap();
        let n: usize = after
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("no line: {line}"));
        assert!(n >= 1, "{line}");
        assert!(line.contains(message), "{name}: {line}");
    }
    assert!(!r.stdout.contains("hunter2"), "{}", r.stdout);
    assert!(r.stderr.contains("kco fmt"), "{}", r.stderr);

    let j = Kco::new(dir.path())
        .args(["validate", "bad", "-o", "json"])
        .run();
    assert_eq!(j.code, 1);
    let report: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(report["files"], edits.len());
    assert_eq!(report["valid"], 0);
    let p = &report["problems"][0];
    assert!(
        p["path"].is_string() && p["line"].is_u64() && p["message"].is_string(),
        "{p}"
    );
}

#[test]
fn a_missing_snapshots_dir_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path()).arg("validate").run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("snapshots") && r.stdout.contains("no such file"),
        "{}",
        r.stdout
    );
}
