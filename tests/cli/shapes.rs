//! Offset shapes through the binary: `validate`, `fmt`, `diff --base` and `apply` refuse an
//! offset that does not fit its connector class's shape (apply with nothing sent), unless
//! `--allow-unknown-shape` names it; unknown classes pass with one notice; kco.yaml adds a
//! class; positions read as PostgreSQL shows them.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::SnapshotFile;
use crate::support::env::TestEnv;
use crate::support::git::git;
use kco::model::file::{OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{ConnectorState, OffsetEntry};

const PG: &str = "io.debezium.connector.postgresql.PostgresConnector";

fn pg_offsets(lsn: Value) -> Value {
    json!([{"partition": {"server": "pg"},
            "offset": {"lsn": lsn, "lsn_proc": 23803720, "txId": 745, "ts_usec": 1764441689123456_i64}}])
}

/// A sealed file of a stopped source (as a kco without shapes would have sealed any edit).
fn write(dir: &Path, name: &str, class: &str, offsets: Value) -> PathBuf {
    SnapshotFile::source(name, offsets)
        .class(class)
        .state(Some(ConnectorState::Stopped))
        .write_in(&dir.join("snapshots/a"))
}

#[test]
fn validate_and_fmt_name_the_line_and_the_expected_shape() {
    let dir = TestEnv::new();
    let d = dir.path();
    let good = write(d, "good", PG, pg_offsets(json!(23803720)));
    let bad = write(d, "bad", PG, pg_offsets(json!("not-a-number")));
    let (code, out, err) = dir.kco(&["validate", "snapshots"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        out.trim(),
        "invalid: snapshots/a/bad.yaml:14: offset `lsn` is the string \"not-a-number\": expected integer >= 0; expected (io.debezium.connector.postgresql.PostgresConnector): {server: string} -> {lsn: integer >= 0, 15 optional keys}"
    );
    assert!(
        err.contains("hint: fix the offset to the expected shape"),
        "{err}"
    );
    let before = std::fs::read_to_string(&bad).unwrap();
    let (code, out, _) = dir.kco(&["fmt", "snapshots"]).parts();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("bad.yaml:14: offset `lsn`"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&bad).unwrap(),
        before,
        "left untouched"
    );
    let (code, out, err) = dir.kco(&["validate", good.to_str().unwrap()]).parts();
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(!err.contains("notice"), "a known class: {err}");
}

#[test]
fn an_unknown_class_passes_with_one_notice() {
    let dir = TestEnv::new();
    let d = dir.path();
    write(
        d,
        "x1",
        "com.example.Custom",
        json!([{"partition": {"a": 1}, "offset": {"whatever": "x"}}]),
    );
    write(
        d,
        "x2",
        "com.example.Custom",
        json!([{"partition": {"a": 2}, "offset": {"lns": -1}}]),
    );
    let (code, out, err) = dir.kco(&["validate"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    let notices: Vec<&str> = err.lines().filter(|l| l.starts_with("notice:")).collect();
    assert_eq!(notices.len(), 1, "{err}");
    assert!(notices[0].contains("com.example.Custom (2 files)"), "{err}");
    let r = dir.kco(&["validate", "-o", "json"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["unchecked"][0]["class"], "com.example.Custom");
    assert_eq!(doc["unchecked"][0]["files"].as_array().unwrap().len(), 2);
}

#[test]
fn apply_refuses_a_misfit_before_any_request_unless_allowed() {
    let dir = TestEnv::new();
    let d = dir.path();
    let fake = FakeConnect::builder()
        .source("dbz", PG, State::Stopped, pg_offsets(json!(23803720)))
        .start();
    let file = write(d, "dbz", PG, pg_offsets(json!(23803720)));
    let text = std::fs::read_to_string(&file).unwrap();
    let renamed: Vec<OffsetEntry> =
        serde_json::from_value(json!([{"partition": {"server": "pg"}, "offset": {"lns": 100}}]))
            .unwrap();
    let mut f = OffsetsFile::parse(&file, &text).unwrap();
    f.offsets = renamed;
    f.seal();
    std::fs::write(&file, f.render(DEFAULT_SCHEMA_REF)).unwrap();
    let url = fake.url();
    let apply = |extra: &[&str]| {
        let mut args = vec![
            "--url",
            url.as_str(),
            "--cluster",
            "a",
            "apply",
            "snapshots",
            "--yes",
        ];
        args.extend_from_slice(extra);
        dir.kco(&args).parts()
    };
    let (code, out, err) = apply(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("snapshots/a/dbz.yaml:14: unknown offset key `lns`: Debezium PostgreSQL does not write it (did you mean `lsn`?)"),
        "{err}"
    );
    assert!(
        fake.requests().is_empty(),
        "nothing sent: {:?}",
        fake.requests()
    );
    // A glob that names it lets it through.
    let (code, out, err) = apply(&["--allow-unknown-shape", "db*"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("warning: `dbz`: 2 offset problems against its class's shape, applied anyway"),
        "{err}"
    );
    assert_eq!(fake.offsets("dbz")[0]["offset"], json!({"lns": 100}));
}

#[test]
fn a_kco_yaml_adds_a_class_and_schema_prints_the_table() {
    let dir = TestEnv::new();
    let d = dir.path();
    dir.config("shapes:\n  - class: com.example.Custom\n    title: Custom source\n    source: https://example.com/Custom.java\n    partition:\n      shard: {type: integer, required: true}\n    offset:\n      seq: {type: integer, required: true, min: 0}\n    order: [seq]\n    unit: events\n");
    write(
        d,
        "c",
        "com.example.Custom",
        json!([{"partition": {"shard": 1}, "offset": {"sqe": 5}}]),
    );
    let (code, out, err) = dir.kco(&["validate"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "unknown offset key `sqe`: Custom source does not write it (did you mean `seq`?)"
        ),
        "{out}"
    );
    let r = dir.kco(&["schema", "--shapes", "-o", "json"]);
    assert_eq!(r.code, 0);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let classes: Vec<&str> = doc["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["class"].as_str())
        .collect();
    assert_eq!(classes[0], "com.example.Custom", "the user's entries first");
    assert!(classes.contains(&PG), "{classes:?}");
    // A bad entry is a config error with its line.
    dir.config("shapes:\n  - class: com.example.Custom\n    title: x\n    source: y\n    partition: {}\n    offset:\n      seq: {type: integr}\n");
    let (code, _, err) = dir.kco(&["validate"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("kco.yaml:7"), "{err}");
}

#[test]
fn diff_base_refuses_a_misfit_and_shows_readable_lsns() {
    let dir = TestEnv::new();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "dbz", PG, pg_offsets(json!(23803720)));
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "offsets"]);
    // A rewind to an earlier LSN: the markdown for the pull request shows it as PostgreSQL does.
    write(d, "dbz", PG, pg_offsets(json!(23800000)));
    let (code, out, err) = dir
        .kco(&["diff", "--base", "HEAD", "-o", "markdown"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("(0/16B3748, 2025-11-29T18:41:29.123456Z) -> "),
        "{out}"
    );
    assert!(
        out.contains("(0/16B28C0, 2025-11-29T18:41:29.123456Z)"),
        "{out}"
    );
    assert!(out.contains("moved backward by 3720 bytes"), "{out}");
    let r = dir.kco(&["diff", "--base", "HEAD", "-o", "json"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let p = &doc["connectors"][0]["partitions"][0];
    assert_eq!(p["after"]["lsn"], 23800000, "raw values kept");
    assert_eq!(
        p["readable"]["after"],
        "0/16B28C0, 2025-11-29T18:41:29.123456Z"
    );
    assert_eq!(
        p["readable"]["before"],
        "0/16B3748, 2025-11-29T18:41:29.123456Z"
    );
    // A misfit in the working tree is refused with its line.
    write(d, "dbz", PG, pg_offsets(json!(-1)));
    let (code, out, err) = dir.kco(&["diff", "--base", "HEAD"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("dbz.yaml:14: offset `lsn` is -1: it must be >= 0"),
        "{err}"
    );
}
