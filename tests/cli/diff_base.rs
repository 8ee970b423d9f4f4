//! `kco diff --base REV`: snapshot files at a git revision against the working tree, in a
//! temporary repository built by the test. No cluster: the URL points nowhere.

use kco::model::ConnectorType;
use serde_json::{json, Value};

use crate::support::data::{self, SnapshotFile};
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::json::{assert_json_eq, parse_json};

fn snapshot_text(name: &str, kind: ConnectorType, offsets: Value) -> String {
    SnapshotFile::captured(name, kind, offsets).text()
}

fn sink_offsets(parts: &[(i64, i64)]) -> Value {
    data::sink_offsets("orders", parts)
}

/// A repository whose last commit rewinds `orders/0` by 500 and removes `orders/1` in the
/// `orders-sink` file, and leaves `billing` alone.
fn repo() -> TestEnv {
    let t = TestEnv::new();
    let root = t.path();
    git(root, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(root.join("snapshots/a")).unwrap();
    let write = |name: &str, text: String| {
        std::fs::write(root.join(format!("snapshots/a/{name}.yaml")), text).unwrap()
    };
    write(
        "orders-sink",
        snapshot_text(
            "orders-sink",
            ConnectorType::Sink,
            sink_offsets(&[(0, 1500), (1, 700), (2, 40)]),
        ),
    );
    write(
        "billing",
        snapshot_text(
            "billing",
            ConnectorType::Source,
            json!([{"partition":{"filename":"/data/b.txt"},"offset":{"position":9}}]),
        ),
    );
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "snapshot"]);
    write(
        "orders-sink",
        snapshot_text(
            "orders-sink",
            ConnectorType::Sink,
            sink_offsets(&[(0, 1000), (2, 40)]),
        ),
    );
    git(root, &["commit", "-q", "-am", "rewind orders"]);
    t
}

#[test]
fn rewind_and_removal_as_json() {
    let t = repo();
    let base = git(t.path(), &["rev-parse", "HEAD~1"]);
    let (code, out, err) = t.kco(&["diff", "--base", "HEAD~1", "-o", "json"]).parts();
    assert_eq!(code, 2, "{err}");
    let got = parse_json(&out);
    let expected = json!({
        "mode": "base",
        "cluster": null,
        "base": "HEAD~1",
        "base_commit": base,
        "fail_on": "any",
        "fail_on_failed": false,
        "summary": {
            "connectors": 2,
            "differences": 1,
            "statuses": {"added":0,"changed":1,"class_changed":0,"removed":0,"type_changed":0,"unchanged":1},
            "partitions_changed": 2,
            "failed": 0,
            "unassigned": 0
        },
        "labels": {
            "against": "files",
            "why": "no cluster is configured: no kco.yaml cluster, --url or --cluster"
        },
        "connectors": [
            {
                "name": "billing", "status": "unchanged", "type": "source", "state": null,
                "file": "snapshots/a/billing.yaml", "notes": [],
                "counts": {"unchanged":1,"moved":0,"only_old":0,"only_new":0},
                "partitions": []
            },
            {
                "name": "orders-sink", "status": "changed", "type": "sink", "state": null,
                "file": "snapshots/a/orders-sink.yaml", "notes": [],
                "counts": {"unchanged":1,"moved":1,"only_old":1,"only_new":0},
                "partitions": [
                    {
                        "partition": {"kafka_topic":"orders","kafka_partition":0},
                        "kind": "moved",
                        "before": {"kafka_offset":1500},
                        "after": {"kafka_offset":1000},
                        "direction": "backward", "distance": 500, "unit": "records",
                        "field": "kafka_offset", "class": null,
                        "risk": {"code":"reprocessing",
                                 "message":"500 records will be reprocessed (duplicates downstream)"}
                    },
                    {
                        "partition": {"kafka_topic":"orders","kafka_partition":1},
                        "kind": "removed",
                        "before": {"kafka_offset":700},
                        "after": null,
                        "direction": null, "distance": null, "unit": null, "field": null,
                        "class": null,
                        "risk": {"code":"offset_reset",
                                 "message":"offset removed: falls back to auto.offset.reset"}
                    }
                ]
            }
        ],
        "exit_code": 2
    });
    assert_json_eq(&got, &expected);
}

#[test]
fn rewind_and_removal_as_text() {
    let t = repo();
    let (code, out, err) = t.kco(&["diff", "--base", "HEAD~1"]).parts();
    assert_eq!(code, 2, "{err}");
    assert!(
        out.contains("1 unchanged, 1 changed") || out.contains("1 changed, 1 unchanged"),
        "{out}"
    );
    let row = out.lines().find(|l| l.starts_with("orders-sink ")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        ["orders-sink", "changed", "sink", "1", "1", "1", "0"]
    );
    assert!(out.contains(
        "orders/0: moved backward by 500 records: {\"kafka_offset\":1500} -> {\"kafka_offset\":1000}  [REPROCESSING] 500 records will be reprocessed (duplicates downstream)"
    ), "{out}");
    assert!(out.contains(
        "orders/1: removed (was {\"kafka_offset\":700})  [OFFSET RESET] offset removed: falls back to auto.offset.reset"
    ), "{out}");
    // The unified YAML diff.
    assert!(
        out.contains("--- HEAD~1:snapshots/a/orders-sink.yaml"),
        "{out}"
    );
    assert!(out.contains("+++ snapshots/a/orders-sink.yaml"), "{out}");
    assert!(out.contains("\n-    kafka_offset: 1500\n"), "{out}");
    assert!(out.contains("\n+    kafka_offset: 1000\n"), "{out}");
    assert!(out.contains("-    kafka_offset: 700"), "{out}");
    assert!(!out.contains("billing (unchanged)"), "{out}");
    assert!(!out.contains('\u{1b}'), "no color when NO_COLOR is set");
}

#[test]
fn rewind_and_removal_as_markdown() {
    let t = repo();
    let (code, out, err) = t
        .kco(&["diff", "--base", "HEAD~1", "-o", "markdown"])
        .parts();
    assert_eq!(code, 2, "{err}");
    assert!(
        out.starts_with("## kco diff: offsets changed since `HEAD~1` ("),
        "{out}"
    );
    assert!(out.contains("**1 of 2 connectors differ**, 2 partitions changed."));
    assert!(out.contains(
        "| `orders-sink` | changed | sink | 1 | 1 | 1 | 0 | **REPROCESSING**, **OFFSET RESET** |"
    ), "{out}");
    // The unchanged connector is a count, not a row.
    assert!(!out.contains("| `billing` |"), "{out}");
    assert!(out.contains("\n1 unchanged (--all lists them)\n"), "{out}");
    assert!(
        out.contains("**REPROCESSING**: 500 records will be reprocessed (duplicates downstream)")
    );
    assert!(out.contains("**OFFSET RESET**: offset removed: falls back to auto.offset.reset"));
    assert!(
        out.contains("```diff\n--- HEAD~1:snapshots/a/orders-sink.yaml\n"),
        "{out}"
    );
    assert_eq!(out.matches("<details>").count(), 1);
}

#[test]
fn no_change_exits_0() {
    let t = repo();
    let (code, out, err) = t.kco(&["diff", "--base", "HEAD"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 unchanged"), "{out}");
    let (code, out, _) = t.kco(&["diff", "--base", "HEAD", "-o", "markdown"]).parts();
    assert_eq!(code, 0);
    assert!(out.contains("No differences."), "{out}");
}

#[test]
fn names_files_and_added_or_removed_files() {
    let t = repo();
    let root = t.path();
    std::fs::remove_file(root.join("snapshots/a/billing.yaml")).unwrap();
    std::fs::write(
        root.join("snapshots/a/new-sink.yaml"),
        snapshot_text("new-sink", ConnectorType::Sink, sink_offsets(&[(0, 3)])),
    )
    .unwrap();
    let (code, out, err) = t.kco(&["diff", "--base", "HEAD", "-o", "json"]).parts();
    assert_eq!(code, 2, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let statuses: Vec<(&str, &str)> = v["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("billing", "removed"),
            ("new-sink", "added"),
            ("orders-sink", "unchanged")
        ]
    );
    // A removed file named explicitly is still compared.
    let (code, out, err) = t
        .kco(&[
            "diff",
            "--base",
            "HEAD",
            "snapshots/a/billing.yaml",
            "-o",
            "json",
        ])
        .parts();
    assert_eq!(code, 2, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["connectors"][0]["status"], "removed");
    assert_eq!(v["summary"]["connectors"], 1);
}

#[test]
fn bad_revision_bad_file_and_no_repository_are_errors() {
    let t = repo();
    let (code, _, err) = t.kco(&["diff", "--base", "nope"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("unknown git revision `nope`"), "{err}");

    std::fs::write(
        t.path().join("snapshots/a/billing.yaml"),
        "apiVersion: kco/v1\nkind: [\n",
    )
    .unwrap();
    let (code, _, err) = t.kco(&["diff", "--base", "HEAD"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("  snapshots/a/billing.yaml:3:"), "{err}");

    // The same broken file at the revision is named `REV:path:line`.
    git(t.path(), &["commit", "-q", "-am", "break billing"]);
    std::fs::write(
        t.path().join("snapshots/a/billing.yaml"),
        snapshot_text("billing", ConnectorType::Source, json!([])),
    )
    .unwrap();
    let (code, _, err) = t.kco(&["diff", "--base", "HEAD"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("  HEAD:snapshots/a/billing.yaml:3:"), "{err}");

    let outside = TestEnv::new();
    std::fs::create_dir_all(outside.path().join("snapshots")).unwrap();
    let (code, _, err) = outside.kco(&["diff", "--base", "HEAD"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("not in a git repository"), "{err}");
}

/// A move of one record reads in the singular, in the partition line and in its risk
/// (docs/output.md: a count agrees with its noun).
#[test]
fn a_move_of_one_record_is_singular() {
    let t = TestEnv::new();
    let root = t.path();
    git(root, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(root.join("snapshots/a")).unwrap();
    let path = root.join("snapshots/a/orders-sink.yaml");
    let at = |offset: i64| {
        snapshot_text(
            "orders-sink",
            ConnectorType::Sink,
            sink_offsets(&[(0, offset)]),
        )
    };
    std::fs::write(&path, at(100)).unwrap();
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "snapshot"]);
    std::fs::write(&path, at(101)).unwrap();
    let (code, out, err) = t.kco(&["diff", "--base", "HEAD"]).parts();
    assert_eq!(code, 2, "{err}");
    assert!(
        out.contains("orders/0: moved forward by 1 record: {\"kafka_offset\":100} -> {\"kafka_offset\":101}  [DATA LOSS] 1 record will be skipped"),
        "{out}"
    );
    assert!(!out.contains("1 records"), "{out}");
}

/// Issue 33, finding 2: a pull request is reviewed against its merge base with the target,
/// as the forges show it, so the nightlies that landed on `main` since the branch forked are
/// not counted as the PR's; `--tip` compares with the target's tip.
#[test]
fn a_pull_request_is_reviewed_against_its_merge_base() {
    let t = TestEnv::new();
    let root = t.path();
    let file = root.join("snapshots/a/orders-sink.yaml");
    let night = |parts: &[(i64, i64)], at: &str| {
        SnapshotFile::captured("orders-sink", ConnectorType::Sink, sink_offsets(parts))
            .captured_at(at)
            .write(&file)
    };
    git(root, &["init", "-q", "-b", "main"]);
    night(&[(0, 100), (1, 100), (2, 100)], "2026-11-27T02:00:00Z");
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "nightly 1"]);
    let fork = git(root, &["rev-parse", "HEAD"]);
    // The PR rewinds one partition, by hand.
    git(root, &["checkout", "-q", "-b", "rewind"]);
    data::hand_edit(&file, sink_offsets(&[(0, 60), (1, 100), (2, 100)]));
    git(root, &["commit", "-q", "-am", "replay orders/0 from 60"]);
    // Two nightlies land on main meanwhile.
    git(root, &["checkout", "-q", "main"]);
    night(&[(0, 150), (1, 160), (2, 170)], "2026-11-28T02:00:00Z");
    git(root, &["commit", "-q", "-am", "nightly 2"]);
    night(&[(0, 200), (1, 210), (2, 220)], "2026-11-29T02:00:00Z");
    git(root, &["commit", "-q", "-am", "nightly 3"]);
    let tip = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-q", "rewind"]);

    let (code, out, err) = t.kco(&["diff", "--base", "main", "-o", "json"]).parts();
    assert_eq!(code, 2, "{err}");
    let v = parse_json(&out);
    assert_eq!(v["base"], "main");
    assert_eq!(v["base_commit"], fork.as_str(), "the merge base");
    assert_eq!(v["base_tip"], tip.as_str());
    assert_eq!(
        v["summary"]["partitions_changed"], 1,
        "the PR's one partition: {out}"
    );
    let p = &v["connectors"][0]["partitions"][0];
    assert_eq!(p["partition"]["kafka_partition"], 0);
    assert_eq!(p["risk"]["code"], "reprocessing");
    let (_, text, _) = t.kco(&["diff", "--base", "main"]).parts();
    assert!(
        text.starts_with(&format!(
            "working tree against the merge base of HEAD and `main` ({}; `main` is at {}): 1 connector: 1 changed",
            &fork[..12],
            &tip[..12]
        )),
        "{text}"
    );
    let (_, md, _) = t.kco(&["diff", "--base", "main", "-o", "markdown"]).parts();
    assert!(
        md.starts_with(&format!(
            "## kco diff: offsets changed since the merge base of HEAD and `main` ({}; `main` is at {})",
            &fork[..12],
            &tip[..12]
        )),
        "{md}"
    );

    // Two dots: every partition the nightlies moved is counted too.
    let (_, out, _) = t
        .kco(&["diff", "--base", "main", "--tip", "-o", "json"])
        .parts();
    let v = parse_json(&out);
    assert_eq!(v["base_commit"], tip.as_str());
    assert!(v.get("base_tip").is_none(), "{out}");
    assert_eq!(v["summary"]["partitions_changed"], 3, "{out}");
    // An ancestor of HEAD is its own merge base: nothing changes.
    let (_, out, _) = t.kco(&["diff", "--base", "HEAD~1", "-o", "json"]).parts();
    let v = parse_json(&out);
    assert_eq!(v["base_commit"], fork.as_str());
    assert!(v.get("base_tip").is_none(), "{out}");
    let (code, _, err) = t.kco(&["diff", "--tip"]).parts();
    assert_eq!(code, 1, "--tip needs --base: {err}");
}
