//! History that shows what happened: `kco snapshot --commit` (an observation, or with
//! `--record` the record of an apply or an undo), and `kco log` telling those commits from
//! someone's change, with the movement an apply and an undo really made on the cluster.

use std::path::Path;

use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{hand_edit, sink_offsets};
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::json::parse_json;
use crate::support::run::Kco;

const SINK: &str = "FileStreamSink";

/// A scratch repository on `main` with one commit (a README), and a staged edit of it.
fn repo() -> TestEnv {
    let t = apply_job();
    git(t.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(t.path().join("README.md"), "offsets\n").unwrap();
    git(t.path(), &["add", "-A"]);
    git(t.path(), &["commit", "-qm", "start"]);
    t
}

/// A test environment on cluster `prod`, with a git identity in its variables.
fn apply_job() -> TestEnv {
    TestEnv::new().args(&["--cluster", "prod"]).envs(&[
        ("GIT_AUTHOR_NAME", "Apply Job"),
        ("GIT_AUTHOR_EMAIL", "apply@example.com"),
        ("GIT_COMMITTER_NAME", "Apply Job"),
        ("GIT_COMMITTER_EMAIL", "apply@example.com"),
    ])
}

fn commits(dir: &Path) -> usize {
    git(dir, &["rev-list", "--count", "HEAD"]).parse().unwrap()
}

fn fake() -> FakeConnect {
    FakeConnect::builder()
        .sink(
            "orders",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 900), (1, 900), (2, 900)]),
        )
        .sink(
            "billing",
            SINK,
            State::Running,
            sink_offsets("bills", &[(0, 5)]),
        )
        .start()
}

#[test]
fn snapshot_commit_commits_its_files_alone_with_the_trailer_and_nothing_when_unchanged() {
    let t = repo();
    let dir = t.path();
    let fake = fake();
    // Someone's work in progress: an edit staged by hand, an untracked file.
    std::fs::write(dir.join("README.md"), "offsets, edited\n").unwrap();
    git(dir, &["add", "README.md"]);
    std::fs::write(dir.join("notes.yaml"), "mine: 1\n").unwrap();

    let r = t.on(&fake, &["snapshot", "--commit"]);
    r.assert_stderr(0, &["Committed 3 files as ", ": offsets of prod"]);
    assert_eq!(commits(dir), 2);
    assert_eq!(
        git(dir, &["show", "--name-status", "--format=%B%an", "HEAD"]),
        "offsets of prod\n\nKco-Snapshot: prod\nApply Job\n\nA\tsnapshots/connector-offsets-v1.json\nA\tsnapshots/prod/billing.yaml\nA\tsnapshots/prod/orders.yaml"
    );
    // What was not kco's is as it was: still staged, still untracked.
    assert_eq!(
        git(dir, &["status", "--porcelain"]),
        "M  README.md\n?? notes.yaml"
    );

    // Nothing moved: no commit, and kco says so.
    let r = t.on(&fake, &["snapshot", "--commit"]);
    r.assert_stderr(
        0,
        &["No snapshot file of cluster `prod` changed: no commit"],
    );
    assert_eq!(commits(dir), 2);

    // One connector moved: one file; JSON names the commit.
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 950), (1, 900), (2, 900)]),
    );
    let r = t.on(&fake, &["snapshot", "--commit", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let v = parse_json(&r.stdout);
    assert_eq!(
        v["commit"]["files"],
        serde_json::json!(["snapshots/prod/orders.yaml"])
    );
    assert_eq!(
        v["commit"]["commit"].as_str().unwrap(),
        git(dir, &["rev-parse", "HEAD"])
    );

    // A record of an apply, with the commit it applied.
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 800), (1, 900), (2, 900)]),
    );
    record(
        &t,
        &fake,
        "apply",
        &["--trailer", "Kco-Commit: 0123456789abcdef"],
    );
    assert_eq!(
        git(dir, &["log", "-1", "--format=%B"]),
        "offsets of prod after an apply of 0123456789ab\n\nKco-Apply: prod\nKco-Commit: 0123456789abcdef"
    );
}

#[test]
fn snapshot_commit_without_a_git_identity_stops_before_writing() {
    let t = repo();
    let dir = t.path();
    let fake = fake();
    let r = Kco::new(dir)
        .args([
            "--url",
            &fake.url(),
            "--cluster",
            "prod",
            "snapshot",
            "--commit",
        ])
        .run();
    r.assert_stderr(
        1,
        &[
            "error: no git identity to commit with in ",
            "hint: set it with `git config user.email you@example.com`",
        ],
    );
    assert!(!dir.join("snapshots").exists(), "nothing written");
    assert_eq!(commits(dir), 1);
    assert!(
        fake.requests().is_empty(),
        "no request: {:?}",
        fake.requests()
    );

    // Outside a git repository: said before any request.
    let outside = apply_job();
    let r = outside.on(&fake, &["snapshot", "--commit"]);
    r.assert_stderr(1, &["not in a git repository"]);
    assert!(!outside.path().join("snapshots").exists());
}

/// The kinds and what `kco log -o json` says of connector `name`, newest first.
/// `snapshot --commit --record <kind> <args>` against `fake`, which must succeed.
fn record(t: &TestEnv, fake: &FakeConnect, kind: &str, args: &[&str]) {
    let r = t.on(
        fake,
        &[&["snapshot", "--commit", "--record", kind], args].concat(),
    );
    assert_eq!(r.code, 0, "{r}");
}

fn log_entries(t: &TestEnv, fake: &FakeConnect, name: &str) -> Vec<Value> {
    let r = t.on(fake, &["log", name, "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.all());
    parse_json(&r.stdout)["connectors"][0]["commits"]
        .as_array()
        .unwrap()
        .clone()
}

/// `(partition, direction, distance, label)` of each partition of a log entry.
fn moves(e: &Value) -> Vec<(String, String, i64, String)> {
    e["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let part = &p["partition"];
            (
                format!(
                    "{}/{}",
                    part["kafka_topic"].as_str().unwrap(),
                    part["kafka_partition"]
                ),
                p["direction"].as_str().unwrap_or("-").to_string(),
                p["distance"].as_i64().unwrap_or(-1),
                p["label"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

/// The repository and [`fake`]'s cluster, its nightly (`snapshot --commit`) committed.
fn nightly() -> (TestEnv, FakeConnect) {
    let (t, fake) = (repo(), fake());
    assert_eq!(t.on(&fake, &["snapshot", "--commit", "-q"]).code, 0);
    (t, fake)
}

/// The `orders` file in the repository at `dir` edited by hand: its partitions at `parts`.
fn edit_orders(dir: &Path, parts: &[(i64, i64)]) {
    let file = dir.join("snapshots/prod/orders.yaml");
    hand_edit(&file, sink_offsets("orders", parts));
}

fn mv(p: &str, dir: &str, n: i64, label: &str) -> (String, String, i64, String) {
    (p.into(), dir.into(), n, label.into())
}

/// Issue 26, finding 9: after a merge that rewinds one partition by 100 records, an apply
/// of the merge that rewound the cluster by 200 records, and an undo, `kco log` shows the
/// merge as someone's change (file against file), and the apply and the undo as what they did
/// to the cluster, told apart from the nightly observations.
#[test]
fn log_shows_what_an_apply_and_an_undo_did_to_the_cluster() {
    // The nightly: the cluster at 900 on three partitions.
    let (t, fake) = nightly();
    let dir = t.path();
    // A pull request rewinds orders/0 to 800 (its file: 900 -> 800).
    git(dir, &["checkout", "-qb", "rewind"]);
    edit_orders(dir, &[(0, 800), (1, 900), (2, 900)]);
    git(dir, &["commit", "-qam", "rewind orders/0"]);
    git(dir, &["checkout", "-q", "main"]);
    // Meanwhile live moved on; then the merge.
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 1000), (1, 1003), (2, 1006)]),
    );
    git(
        dir,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge pull request #7",
            "rewind",
        ],
    );
    let merge = git(dir, &["rev-parse", "HEAD"]);

    // The apply-on-merge recipe: observe, apply the merge's change, record.
    assert_eq!(t.on(&fake, &["snapshot", "--commit", "-q"]).code, 0);
    let r = t.on(
        &fake,
        &[
            "apply",
            "snapshots/prod",
            "--commit",
            &merge,
            "--yes",
            "--backup-dir",
            "bk",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.all());
    let trailer = format!("Kco-Commit: {merge}");
    record(&t, &fake, "apply", &["--trailer", &trailer]);
    // The undo, and its record.
    assert_eq!(t.on(&fake, &["undo", "bk", "--yes"]).code, 0);
    record(&t, &fake, "undo", &[]);

    let log = log_entries(&t, &fake, "orders");
    let kinds: Vec<&str> = log.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["undo", "apply", "snapshot", "change", "snapshot"]);
    // The undo put the cluster back: forward by 200 records.
    assert_eq!(moves(&log[0]), [mv("orders/0", "forward", 200, "-")]);
    // The apply rewound the cluster by 200 records (not the file's 100); the partitions the
    // change left alone did not move.
    assert_eq!(
        moves(&log[1]),
        [mv("orders/0", "backward", 200, "reprocessing")]
    );
    assert_eq!(log[1]["trailers"][0]["key"], "Kco-Apply");
    assert_eq!(log[1]["trailers"][1]["value"], merge.as_str());
    assert_eq!(log[1]["notes"], serde_json::json!([]));
    // The merge, someone's change: its file moved orders/0 by 100 records.
    assert_eq!(log[3]["summary"], "Merge pull request #7");
    assert_eq!(
        moves(&log[3]),
        [mv("orders/0", "backward", 100, "reprocessing")]
    );

    let r = t.on(&fake, &["log", "orders"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("orders (sink, cluster prod)  snapshots/prod/orders.yaml"));
    let kinds: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .map(|l| l.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["undone", "applied", "observed", "change", "observed"]
    );
    assert!(
        r.stdout
            .contains("  undone    offsets of prod after an undo\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("orders/0: moved backward by 200 records: {\"kafka_offset\":1000} -> {\"kafka_offset\":800}  [REPROCESSING]"),
        "{}",
        r.stdout
    );
}

/// A record made right after someone's change (no observation before the apply) compares
/// with that change's file: the log says so rather than pass it off as the cluster's movement.
#[test]
fn a_record_without_an_observation_before_it_says_what_it_compares_with() {
    let (t, fake) = nightly();
    let dir = t.path();
    edit_orders(dir, &[(0, 700), (1, 900), (2, 900)]);
    git(dir, &["commit", "-qam", "rewind by hand"]);
    let change = git(dir, &["rev-parse", "HEAD"])[..12].to_string();
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 650), (1, 900), (2, 900)]),
    );
    record(&t, &fake, "apply", &["-q"]);
    let log = log_entries(&t, &fake, "orders");
    assert_eq!(log[0]["kind"], "apply");
    assert_eq!(log[1]["kind"], "change");
    assert_eq!(log[2]["kind"], "snapshot");
    let note = log[0]["notes"][0].as_str().unwrap();
    assert!(
        note.starts_with(&format!(
            "compared with the file of {change} (a change), not with the cluster before the apply"
        )),
        "{note}"
    );
    assert_eq!(log[1]["notes"], serde_json::json!([]));
}
