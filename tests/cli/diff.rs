//! `kco diff` against the in-process fake Connect: statuses, partitions, exit codes, the JSON
//! document, and that diff never sends a mutating request.

use std::path::Path;

use kco::model::ConnectorType;
use serde_json::{json, Value};

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{self, source_offsets, SnapshotFile};
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::json::{assert_json_eq, parse_json};

const SINK: &str = "FileStreamSink";
const SOURCE: &str = "FileStreamSource";

fn sink_offsets(parts: &[(i64, i64)]) -> Value {
    data::sink_offsets("t", parts)
}

fn write(dir: &Path, name: &str, kind: ConnectorType, offsets: Value) {
    SnapshotFile::captured(name, kind, offsets).write_in(&dir.join("snapshots/a"));
}

/// A running sink that progressed (advanced), a stopped source that was rewound (drift), a
/// file for a deleted connector (missing) and a connector without a file (untracked).
fn scenario() -> (TestEnv, FakeConnect) {
    let t = TestEnv::new();
    write(
        t.path(),
        "orders",
        ConnectorType::Sink,
        sink_offsets(&[(0, 100), (1, 50)]),
    );
    write(
        t.path(),
        "files",
        ConnectorType::Source,
        source_offsets(120),
    );
    write(
        t.path(),
        "gone",
        ConnectorType::Sink,
        sink_offsets(&[(0, 1)]),
    );
    let fake = FakeConnect::builder()
        .version("4.1.0")
        .sink(
            "orders",
            SINK,
            State::Running,
            sink_offsets(&[(0, 130), (1, 50), (2, 7)]),
        )
        .source("files", SOURCE, State::Stopped, source_offsets(100))
        .sink("extra", SINK, State::Running, sink_offsets(&[(0, 3)]))
        .start();
    (t, fake)
}

#[test]
fn whole_directory_as_json() {
    let (t, fake) = scenario();
    let (code, out, err) = t.on(&fake, &["diff", "-o", "json"]).parts();
    assert_eq!(code, 2, "{err}");
    let got = parse_json(&out);
    let expected = json!({
        "mode": "live", "cluster": "a", "base": null, "base_commit": null, "fail_on": "drift", "fail_on_failed": false,
        "summary": {
            "connectors": 4, "differences": 3,
            "statuses": {"advanced":1,"class_changed":0,"drifted":1,"dr_lagging":0,"dr_ready":0,"in_sync":0,
                         "missing":1,"no_translation":0,"skipped":0,"state_changed":0,"state_drifted":0,
                         "type_changed":0,"untracked":1},
            "partitions_changed": 3,
            "failed": 0,
            "unassigned": 0
        },
        "connectors": [
            {"name":"extra","status":"untracked","type":"sink","state":"RUNNING","file":null,
             "notes":["on the cluster, but no snapshot file"],
             "counts":{"unchanged":0,"moved":0,"only_old":0,"only_new":1},"partitions":[]},
            {"name":"files","status":"drifted","type":"source","state":"STOPPED",
             "file":"snapshots/a/files.yaml",
             "notes":["live state STOPPED, the file records RUNNING: paused or stopped outside kco, the next snapshot records it"],
             "counts":{"unchanged":0,"moved":1,"only_old":0,"only_new":0},
             "partitions":[{
                "partition":{"filename":"/data/in.txt"},"kind":"moved",
                "before":{"position":120},"after":{"position":100},
                "direction":"backward","distance":20,"unit":"bytes","field":"position",
                "class":"drift","risk":null}]},
            {"name":"gone","status":"missing","type":"sink","state":null,
             "file":"snapshots/a/gone.yaml","notes":["not on cluster `a`"],
             "counts":{"unchanged":0,"moved":0,"only_old":1,"only_new":0},"partitions":[]},
            {"name":"orders","status":"advanced","type":"sink","state":"RUNNING",
             "file":"snapshots/a/orders.yaml","notes":[],
             "counts":{"unchanged":1,"moved":1,"only_old":0,"only_new":1},
             "partitions":[
                {"partition":{"kafka_topic":"t","kafka_partition":0},"kind":"moved",
                 "before":{"kafka_offset":100},"after":{"kafka_offset":130},
                 "direction":"forward","distance":30,"unit":"records","field":"kafka_offset",
                 "class":"advanced","risk":null},
                {"partition":{"kafka_topic":"t","kafka_partition":2},"kind":"only_live",
                 "before":null,"after":{"kafka_offset":7},
                 "direction":null,"distance":null,"unit":null,"field":null,
                 "class":"advanced","risk":null}]}
        ],
        "exit_code": 2
    });
    assert_json_eq(&got, &expected);
    fake.assert_no_mutations();
    // One listing, one offsets read per connector: the files' are read beside the listing
    // (`gone`'s answers 404 and counts for nothing: the listing says it is missing).
    assert_eq!(fake.count("GET", "/connectors/orders/offsets"), 1);
    assert_eq!(fake.count("GET", "/connectors/files/offsets"), 1);
    assert_eq!(fake.count("GET", "/connectors/extra/offsets"), 1);
    assert_eq!(fake.count("GET", "/connectors/gone/offsets"), 1);
}

#[test]
fn advanced_is_fine_unless_fail_on_any() {
    let (t, fake) = scenario();
    // A connector name resolves to its file; named files report no untracked connectors.
    let (code, out, err) = t.on(&fake, &["diff", "orders"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 advanced"), "{out}");
    assert!(!out.contains("extra"), "{out}");
    assert!(
        out.contains("t/0: live ahead of file by 30 records: file {\"kafka_offset\":100} -> live {\"kafka_offset\":130}  [ADVANCED]"),
        "{out}"
    );
    assert!(out.contains("t/2: only live: {\"kafka_offset\":7} (not in the file)  [ADVANCED]"));
    assert!(out.contains("+++ live: a/orders"), "{out}");
    let r = t.on(&fake, &["diff", "orders", "--fail-on", "any"]);
    assert_eq!(r.code, 2);
    fake.assert_no_mutations();
}

#[test]
fn drift_in_text_and_markdown() {
    let (t, fake) = scenario();
    let file = "snapshots/a/files.yaml";
    let (code, out, _) = t.on(&fake, &["diff", file]).parts();
    assert_eq!(code, 2);
    assert!(
        out.contains("{\"filename\":\"/data/in.txt\"}: live behind file by 20 bytes: file {\"position\":120} -> live {\"position\":100}  [DRIFT]"),
        "{out}"
    );
    let (code, out, _) = t.on(&fake, &["diff", file, "-o", "markdown"]).parts();
    assert_eq!(code, 2);
    assert!(
        out.starts_with("## kco diff: snapshot files against cluster `a`"),
        "{out}"
    );
    assert!(
        out.contains("| `files` | drifted | source | 0 | 1 | 0 | 0 | **DRIFT** |"),
        "{out}"
    );
    assert!(
        out.contains("```diff\n--- snapshots/a/files.yaml\n+++ live: a/files\n"),
        "{out}"
    );
}

#[test]
fn in_sync_exits_0_and_type_change_is_reported() {
    let t = TestEnv::new();
    write(t.path(), "s", ConnectorType::Sink, sink_offsets(&[(0, 5)]));
    write(t.path(), "k", ConnectorType::Sink, sink_offsets(&[(0, 5)]));
    let fake = FakeConnect::builder()
        .version("4.1.0")
        .sink("s", SINK, State::Stopped, sink_offsets(&[(0, 5)]))
        .start();
    // The file records RUNNING: a connector stopped outside kco is a routine state, not
    // drift (exit 0); under --fail-on any it is a difference.
    let (code, out, err) = t.on(&fake, &["diff", "s"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 state changed"), "{out}");
    assert!(
        out.contains("live state STOPPED, the file records RUNNING: paused or stopped outside kco"),
        "{out}"
    );
    let r = t.on(&fake, &["diff", "s", "--fail-on", "any"]);
    assert_eq!(r.code, 2);
    // A kco operation holding the cluster's shared lock (running, or killed on another
    // runner) may have left it stopped: state drift (exit 2), the holder named.
    let bare = TestEnv::new();
    git(bare.path(), &["init", "-q", "--bare"]);
    git(t.path(), &["init", "-q", "-b", "main"]);
    git(
        t.path(),
        &["remote", "add", "origin", bare.path().to_str().unwrap()],
    );
    let tree = git(t.path(), &["mktree"]);
    let lock = git(
        t.path(),
        &["commit-tree", &tree, "-m", "kco lock of cluster a"],
    );
    git(
        t.path(),
        &["push", "-q", "origin", &format!("{lock}:refs/kco/locks/a")],
    );
    let (code, out, err) = t.on(&fake, &["diff", "s"]).parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("1 state drifted"), "{out}");
    assert!(
        out.contains(
            "a kco operation holds the cluster's lock (refs/kco/locks/a on git remote `origin`"
        ),
        "{out}"
    );
    // The state named without "outside kco" or a snapshot that would record it.
    assert!(
        out.contains("live state STOPPED, the file records RUNNING\n")
            && !out.contains("outside kco"),
        "{out}"
    );
    git(t.path(), &["push", "-q", "origin", ":refs/kco/locks/a"]);
    fake.set_state("s", State::Running);
    let (code, out, err) = t.on(&fake, &["diff", "s"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 in sync"), "{out}");
    fake.add_connector(
        crate::fake_connect::ConnectorSpec::source("k", SOURCE).offsets(source_offsets(1)),
    );
    let r = t.on(&fake, &["diff", "k", "-o", "json"]);
    assert_eq!(r.code, 2);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["connectors"][0]["status"], "type_changed");
    assert_eq!(
        v["connectors"][0]["notes"][0],
        "type changed from sink to source"
    );
}

#[test]
fn invalid_file_or_unknown_name_fails_before_any_request() {
    let (t, fake) = scenario();
    let path = t.path().join("snapshots/a/orders.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("kafka_offset: 100", "kafka_offset: 101");
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = t.on(&fake, &["diff"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("snapshots/a/orders.yaml:"), "{err}");
    assert!(err.contains("checksum mismatch"), "{err}");
    let (code, _, err) = t.on(&fake, &["diff", "nosuch"]).parts();
    assert_eq!(code, 1);
    assert!(
        err.contains("connector `nosuch` has no snapshot file"),
        "{err}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn base_mode_sends_no_request() {
    let t = TestEnv::new();
    git(t.path(), &["init", "-q"]);
    write(
        t.path(),
        "orders",
        ConnectorType::Sink,
        sink_offsets(&[(0, 100)]),
    );
    git(t.path(), &["add", "."]);
    git(t.path(), &["commit", "-q", "-m", "one"]);
    write(
        t.path(),
        "orders",
        ConnectorType::Sink,
        sink_offsets(&[(0, 90)]),
    );
    let fake = FakeConnect::builder().version("4.1.0").start();
    let (code, out, err) = t
        .on(&fake, &["diff", "--base", "HEAD", "--offline"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("10 records will be reprocessed"), "{out}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

/// A connector of 3,000 moved partitions whose topics are not ASCII: the unified diff is
/// walked item by item (past the plain diff's size), and JSON and YAML reports of hundreds of
/// kilobytes are handed to stdout in chunks that never cut a character.
#[test]
fn a_wide_connector_in_every_output_format() {
    const N: usize = 3000;
    let t = TestEnv::new();
    let entries = |base: i64| -> Value {
        (0..N)
            .map(|i| {
                json!({"partition":{"kafka_topic":format!("tópico-日本-{:03}", i / 10),"kafka_partition":i % 10},
                       "offset":{"kafka_offset":base + i as i64}})
            })
            .collect()
    };
    write(t.path(), "wide", ConnectorType::Sink, entries(5_000_000));
    let fake = FakeConnect::builder()
        .sink("wide", SINK, State::Stopped, entries(1_000))
        .start();

    let (code, text, err) = t.on(&fake, &["diff", "wide"]).parts();
    assert_eq!(code, 2, "{err}");
    let minus = text
        .lines()
        .filter(|l| l.starts_with("-    kafka_offset: "))
        .count();
    let plus = text
        .lines()
        .filter(|l| l.starts_with("+    kafka_offset: "))
        .count();
    assert_eq!((minus, plus), (N, N));
    let unified = &text[text
        .find("--- snapshots/a/wide.yaml")
        .expect("a unified diff")..];
    assert!(
        unified.starts_with("--- snapshots/a/wide.yaml\n+++ live: a/wide\n@@ -"),
        "{unified:.400}"
    );
    assert!(
        text.contains(" kafka_topic: \"tópico-日本-299\"\n"),
        "{unified:.400}"
    );

    let (code, json, err) = t.on(&fake, &["diff", "wide", "-o", "json"]).parts();
    assert_eq!(code, 2, "{err}");
    assert!(json.len() > 4 << 16, "{} bytes", json.len());
    let doc: Value = serde_json::from_str(&json).unwrap();
    let rows = doc["connectors"][0]["partitions"].as_array().unwrap();
    assert_eq!(rows.len(), N);
    assert_eq!(rows[N - 1]["partition"]["kafka_topic"], "tópico-日本-299");
    assert_eq!(rows[N - 1]["distance"], 4_999_000);

    let (code, yaml, err) = t.on(&fake, &["diff", "wide", "-o", "yaml"]).parts();
    assert_eq!(code, 2, "{err}");
    let doc: Value = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(
        doc["connectors"][0]["partitions"].as_array().unwrap().len(),
        N
    );
    assert!(!yaml.contains('\u{FFFD}'));
    fake.assert_no_mutations();
}
