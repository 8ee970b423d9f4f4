//! `kco log`, `kco show --at` and `kco apply --at / --changed-since / --fail-on` on a git
//! history generated here (fixed dates, so commit ids are stable), against the fake Connect.

use kco::model::ConnectorType::{Sink, Source};
use serde_json::{json, Value};

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{hand_edit, sink_offsets, SnapshotFile};
use crate::support::env::TestEnv;
use crate::support::git::git_at;
use crate::support::json::{named, parse_json};

/// The connector classes as the files of [`history`] name them.
const SINK: &str = "FileStreamSink";
const SOURCE: &str = "FileStreamSource";

pub fn orders(parts: &[(i64, i64)]) -> Value {
    sink_offsets("orders", parts)
}

pub fn billing(pos: i64) -> Value {
    json!([{"partition":{"filename":"/data/b.txt"},"offset":{"position":pos}}])
}

/// A scratch repository with its files under `snapshots/a/`; kco runs in it on cluster `a`.
pub struct Repo {
    env: TestEnv,
}

impl std::ops::Deref for Repo {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        &self.env
    }
}

impl Repo {
    pub fn new() -> Repo {
        let env = offline();
        git_at(
            env.path(),
            "2026-11-01T00:00:00Z",
            &["init", "-q", "-b", "main"],
        );
        Repo { env }
    }
    pub fn write(&self, rel: &str, name: &str, kind: kco::model::ConnectorType, offsets: Value) {
        SnapshotFile::captured(name, kind, offsets).write(&self.path().join(rel));
    }
    /// A file as `kco snapshot` rewrites it from live: captured at `at` (an observation).
    pub fn observe(
        &self,
        rel: &str,
        name: &str,
        kind: kco::model::ConnectorType,
        offsets: Value,
        at: &str,
    ) {
        SnapshotFile::captured(name, kind, offsets)
            .captured_at(at)
            .write(&self.path().join(rel));
    }
    pub fn commit(&self, date: &str, msg: &str) -> String {
        git_at(self.path(), date, &["add", "-A"]);
        git_at(self.path(), date, &["commit", "-q", "-m", msg]);
        git_at(self.path(), date, &["rev-parse", "HEAD"])
    }
    pub fn git(&self, date: &str, args: &[&str]) -> String {
        git_at(self.path(), date, args)
    }
}

/// Five nightly-like commits on `main`, then a merge:
/// 1 (11-27): orders {0:100, 1:50}, billing 10, legacy;
/// 2 (11-28): orders {0:200, 1:80} (observed: a new capture time); billing untouched;
/// 3 (11-29): orders rewound by hand {0:120} (REPROCESSING 80, partition 1 gone: OFFSET RESET), newbie added;
/// 4 (11-30): billing moved to `snapshots/a/old/billing.yaml` at 30, legacy removed;
/// merge of branch `fix` (12-01): orders {0:300} (by hand).
/// The hand edits are changes no apply record covers: `--at` passes over them.
pub fn history() -> (Repo, Vec<String>) {
    let r = Repo::new();
    let mut c = Vec::new();
    r.write(
        "snapshots/a/orders.yaml",
        "orders",
        Sink,
        orders(&[(0, 100), (1, 50)]),
    );
    r.write("snapshots/a/billing.yaml", "billing", Source, billing(10));
    r.write("snapshots/a/legacy.yaml", "legacy", Sink, orders(&[(0, 7)]));
    c.push(r.commit("2026-11-27T02:00:00Z", "nightly 1"));
    r.observe(
        "snapshots/a/orders.yaml",
        "orders",
        Sink,
        orders(&[(0, 200), (1, 80)]),
        "2026-11-28T02:00:00Z",
    );
    c.push(r.commit("2026-11-28T02:00:00Z", "nightly 2"));
    hand_edit(
        &r.path().join("snapshots/a/orders.yaml"),
        orders(&[(0, 120)]),
    );
    r.write("snapshots/a/newbie.yaml", "newbie", Sink, orders(&[(2, 5)]));
    c.push(r.commit("2026-11-29T02:00:00Z", "bad rewind"));
    std::fs::remove_file(r.path().join("snapshots/a/billing.yaml")).unwrap();
    std::fs::remove_file(r.path().join("snapshots/a/legacy.yaml")).unwrap();
    r.write(
        "snapshots/a/old/billing.yaml",
        "billing",
        Source,
        billing(30),
    );
    c.push(r.commit("2026-11-30T02:00:00Z", "move billing"));
    r.git("2026-12-01T01:00:00Z", &["checkout", "-q", "-b", "fix"]);
    hand_edit(
        &r.path().join("snapshots/a/orders.yaml"),
        orders(&[(0, 300)]),
    );
    r.commit("2026-12-01T01:00:00Z", "fix orders");
    r.git("2026-12-01T01:30:00Z", &["checkout", "-q", "main"]);
    r.git(
        "2026-12-01T02:00:00Z",
        &["merge", "-q", "--no-ff", "-m", "merge fix", "fix"],
    );
    c.push(r.git("2026-12-01T02:00:00Z", &["rev-parse", "HEAD"]));
    (r, c)
}

/// A test environment on cluster `a`, with no URL: offline unless a run names one.
pub fn offline() -> TestEnv {
    TestEnv::new().args(&["--cluster", "a"])
}

/// `kco apply snapshots/a <args>` against `fake`: exit code, stdout and stderr.
pub fn apply(r: &TestEnv, fake: &FakeConnect, args: &[&str]) -> (i32, String, String) {
    r.on(fake, &[&["apply", "snapshots/a"], args].concat())
        .parts()
}

/// `kco apply snapshots/a <args>` at a URL nothing answers at: exit code, stdout and stderr.
pub fn apply_unreachable(r: &TestEnv, args: &[&str]) -> (i32, String, String) {
    let url = ["--url", "http://127.0.0.1:9", "apply", "snapshots/a"];
    r.kco(&[&url[..], args].concat()).parts()
}

/// The cluster as [`history`]'s head found it before the fix: `orders` at 900, `newbie`
/// added, `billing` at 30 and `legacy` still there (stopped).
pub fn fake_at_head() -> FakeConnect {
    FakeConnect::builder()
        .sink("orders", SINK, State::Running, orders(&[(0, 900)]))
        .sink("newbie", SINK, State::Running, orders(&[(2, 5)]))
        .source("billing", SOURCE, State::Running, billing(30))
        .sink("legacy", SINK, State::Stopped, orders(&[(0, 7)]))
        .start()
}

#[test]
fn log_follows_a_connector_through_rewinds_skips_and_merges() {
    let (r, c) = history();
    let (code, out, err) = r.kco(&["log", "orders", "-o", "json"]).parts();
    assert_eq!(code, 0, "{err}");
    let v = parse_json(&out);
    let o = &v["connectors"][0];
    assert_eq!(v["connectors"].as_array().unwrap().len(), 1);
    assert_eq!(o["name"], "orders");
    let commits: Vec<&str> = o["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["commit"].as_str().unwrap())
        .collect();
    assert_eq!(
        commits,
        vec![c[4].as_str(), c[2].as_str(), c[1].as_str(), c[0].as_str()]
    );
    let merge = &o["commits"][0];
    assert_eq!(merge["summary"], "merge fix");
    assert_eq!(merge["partitions"][0]["direction"], "forward");
    assert_eq!(merge["partitions"][0]["distance"], 180);
    assert_eq!(merge["partitions"][0]["label"], Value::Null);
    let rewind = &o["commits"][1];
    assert_eq!(rewind["date"], "2026-11-29T02:00:00Z");
    assert_eq!(rewind["partitions"][0]["direction"], "backward");
    assert_eq!(rewind["partitions"][0]["distance"], 80);
    assert_eq!(rewind["partitions"][0]["unit"], "records");
    assert_eq!(rewind["partitions"][0]["label"], "reprocessing");
    assert_eq!(rewind["partitions"][1]["kind"], "removed");
    assert_eq!(rewind["partitions"][1]["label"], "offset_reset");
    assert_eq!(o["commits"][3]["status"], "added");

    let (code, text, _) = r
        .kco(&[
            "log",
            "orders",
            "--since",
            "2026-11-28",
            "--until",
            "2026-11-29 12:00",
        ])
        .parts();
    assert_eq!(code, 0);
    assert!(
        text.contains("bad rewind") && text.contains("nightly 2"),
        "{text}"
    );
    assert!(
        !text.contains("nightly 1") && !text.contains("merge fix"),
        "{text}"
    );
    assert!(text.contains("orders/0: moved backward by 80 records: {\"kafka_offset\":200} -> {\"kafka_offset\":120}  [REPROCESSING]"), "{text}");
    assert!(
        text.contains("orders/1: removed (was {\"kafka_offset\":80})  [OFFSET RESET]"),
        "{text}"
    );

    let run = r.kco(&["log", "orders", "-n", "1", "-o", "json"]);
    assert_eq!(
        parse_json(&run.stdout)["connectors"][0]["commits"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn log_pairs_moved_files_and_shows_connectors_that_came_and_went() {
    let (r, c) = history();
    let (code, out, err) = r.kco(&["log", "-o", "json"]).parts();
    assert_eq!(code, 0, "{err}");
    let v = parse_json(&out);
    let by = |n: &str| named(&v, "connectors", n).clone();
    let b = by("billing");
    assert_eq!(b["file"], "snapshots/a/old/billing.yaml");
    assert_eq!(b["commits"][0]["commit"], c[3].as_str());
    assert_eq!(b["commits"][0]["status"], "changed");
    assert_eq!(
        b["commits"][0]["notes"][0],
        "file moved from snapshots/a/billing.yaml to snapshots/a/old/billing.yaml"
    );
    assert_eq!(b["commits"][0]["partitions"][0]["distance"], 20);
    assert_eq!(b["commits"][0]["partitions"][0]["unit"], "bytes");
    let legacy = by("legacy");
    assert_eq!(legacy["commits"][0]["status"], "removed");
    assert_eq!(legacy["commits"][1]["status"], "added");
    assert_eq!(by("newbie")["commits"].as_array().unwrap().len(), 1);

    let (code, _, err) = r.kco(&["log", "nosuch"]).parts();
    assert_eq!(code, 1);
    assert!(
        err.contains("`nosuch` did not match any connector changed by a commit under snapshots/a")
            && err.contains("hint: the connectors there: `billing`, `newbie`, `orders`"),
        "{err}"
    );
}

#[test]
fn stalled_connectors_are_the_ones_no_recent_commit_moved_forward() {
    let (r, _) = history();
    // The last 2 commits that changed files: the merge (orders forward) and the move
    // (billing forward, legacy gone); newbie, added 3 commits back, never moved since.
    let (code, out, err) = r.kco(&["log", "--stalled", "2", "-o", "json"]).parts();
    assert_eq!(code, 2, "a stalled connector is exit 2: {err}");
    let v = parse_json(&out);
    let stalled: Vec<(&str, bool)> = v["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["stalled"].is_null())
        .map(|c| (c["name"].as_str().unwrap(), c["stalled"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        stalled,
        vec![("billing", false), ("newbie", true), ("orders", false)]
    );
    let (_, text, _) = r.kco(&["log", "--stalled", "2"]).parts();
    assert!(text.starts_with("1 of 3 connectors did not move forward over the last 2 commits:\n  newbie  snapshots/a/newbie.yaml  file unchanged in the last 2 commits  [STALLED]"), "{text}");
    // Over 3 commits orders rewound in one and moved forward in another: not stalled.
    let run = r.kco(&["log", "orders", "--stalled", "3", "-o", "json"]);
    assert_eq!(parse_json(&run.stdout)["connectors"][0]["stalled"], false);
    assert_eq!(run.code, 0, "none stalled");
}

#[test]
fn show_at_a_revision_and_a_time() {
    let (r, c) = history();
    let (code, out, err) = r
        .kco(&["show", "orders", "--at", "HEAD~2", "-o", "json"])
        .parts();
    assert_eq!(code, 0, "{err}");
    let v = parse_json(&out);
    assert_eq!(v["commit"]["commit"], c[2].as_str());
    // HEAD~2's rewind was made by hand and never applied: the cluster had nightly 2's.
    assert_eq!(v["offsets"], orders(&[(0, 200), (1, 80)]));
    assert_eq!(v["version"]["commit"], c[1].as_str());
    assert_eq!(v["not_applied"][0]["commit"], c[2].as_str());
    assert_eq!(v["file"], "snapshots/a/orders.yaml");
    let (_, text, _) = r.kco(&["show", "orders", "--at", "HEAD~2"]).parts();
    assert!(
        text.contains(&format!(
            "the version the cluster had: commit {} 2026-11-28 02:00 \"nightly 2\" (passed over 1 change not applied by then ({}))",
            &c[1][..12],
            &c[2][..12]
        )),
        "{text}"
    );
    // 2026-11-28 03:00 UTC is after nightly 2, before the rewind.
    let (code, text, _) = r
        .kco(&["show", "orders", "--at", "2026-11-28 03:00"])
        .parts();
    assert_eq!(code, 0);
    assert!(
        text.contains(&format!(
            "at `2026-11-28 03:00`: commit {} 2026-11-28 02:00 \"nightly 2\"",
            &c[1][..12]
        )),
        "{text}"
    );
    assert!(
        text.contains("orders/0   {\"kafka_offset\":200}\norders/1   {\"kafka_offset\":80}\n"),
        "{text}"
    );
    // Relative times, against the clock (fixed here): "yesterday 03:00" is 11-28 03:00.
    let at = |at: &[&str]| {
        let cmd = r.cmd().env("KCO_NOW", "2026-11-29T10:00:00Z");
        cmd.args(["show", "orders", "--at"]).args(at).run()
    };
    let r2 = at(&["yesterday 03:00"]);
    assert_eq!(r2.code, 0, "{}", r2.all());
    assert!(
        r2.stdout
            .contains(&format!("at `yesterday 03:00`: commit {}", &c[1][..12])),
        "{}",
        r2.stdout
    );
    let r2 = at(&["2 days ago", "-o", "json"]);
    assert_eq!(parse_json(&r2.stdout)["commit"]["commit"], c[0].as_str());
    // A moved file is found by its connector name, and followed to where it was: the move
    // kept the capture time and moved billing to 30 (a change, never applied), so the
    // cluster had nightly 1's 10.
    let (_, out, _) = r
        .kco(&["show", "billing", "--at", "HEAD", "-o", "yaml"])
        .parts();
    assert!(
        out.contains("file: snapshots/a/old/billing.yaml")
            && out.contains("position: 10")
            && out.contains("summary: move billing"),
        "{out}"
    );
    // Bad input.
    let (code, _, err) = r.kco(&["show", "orders", "--at", "2026-01-01"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains(&format!("no commit at or before 2026-01-01 (2026-01-01 00:00 UTC) on the current branch: its first commit, {}, is of 2026-11-27 02:00 UTC", &c[0][..12])), "{err}");
    let (code, _, err) = r.kco(&["show", "orders", "--at", "nope~1"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("unknown git revision `nope~1`"), "{err}");
    let (code, _, err) = r.kco(&["show", "newbie", "--at", "HEAD~3"]).parts();
    assert_eq!(code, 1);
    assert!(
        err.contains("connector `newbie` has no snapshot file at `HEAD~3`"),
        "{err}"
    );
    let outside = offline();
    let (code, _, err) = outside.kco(&["show", "orders", "--at", "HEAD"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("not in a git repository"), "{err}");
}

#[test]
fn a_file_invalid_at_a_revision_is_named_with_its_line() {
    let (r, _) = history();
    let p = r.path().join("snapshots/a/orders.yaml");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("kafka_offset: 300", "kafka_offset: [300");
    std::fs::write(&p, text).unwrap();
    let head = r.commit("2026-12-02T02:00:00Z", "broken");
    let (code, _, err) = r.kco(&["show", "orders", "--at", "HEAD"]).parts();
    assert_eq!(code, 1);
    assert!(err.contains("HEAD:snapshots/a/orders.yaml:"), "{err}");
    let (code, _, err) = r.kco(&["log", "orders"]).parts();
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("{}:snapshots/a/orders.yaml:", &head[..12])),
        "{err}"
    );
}

/// A record of an apply to cluster `cluster` of `applied`, touching no file (the apply left
/// every file as the change had it).
pub fn apply_record(r: &Repo, date: &str, cluster: &str, applied: &str) -> String {
    let msg = format!(
        "offsets of {cluster} after an apply\n\nKco-Apply: {cluster}\nKco-Commit: {applied}\n"
    );
    r.git(date, &["commit", "-q", "--allow-empty", "-m", &msg]);
    r.git(date, &["rev-parse", "HEAD"])
}

/// A repository whose one commit, a nightly, observed `orders` at {0: 100, 1: 50}; its id.
fn nightly_of_orders() -> (Repo, String) {
    let r = Repo::new();
    let offsets = orders(&[(0, 100), (1, 50)]);
    r.observe(
        "snapshots/a/orders.yaml",
        "orders",
        Sink,
        offsets,
        "2026-11-27T02:00:00Z",
    );
    let night = r.commit("2026-11-27T02:00:00Z", "nightly");
    (r, night)
}

/// `kco show orders --at <at> -o json`, asserted to succeed: its document.
fn show_orders(r: &Repo, at: &str) -> Value {
    let (code, out, err) = r.kco(&["show", "orders", "--at", at, "-o", "json"]).parts();
    assert_eq!(code, 0, "{err}");
    parse_json(&out)
}

/// The commits a `show --at` document passed over (`not_applied`).
fn not_applied(v: &Value) -> Vec<&str> {
    let passed = v["not_applied"].as_array().unwrap().iter();
    passed.map(|c| c["commit"].as_str().unwrap()).collect()
}

#[test]
fn at_is_what_the_cluster_had_observations_and_applied_changes_only() {
    let (r, night) = nightly_of_orders();
    let file = r.path().join("snapshots/a/orders.yaml");
    // Two pull requests merged and refused by the apply (no record): one skips partition 0
    // ahead, one removes partition 1.
    hand_edit(&file, orders(&[(0, 400), (1, 50)]));
    let skip = r.commit("2026-11-28T10:00:00Z", "skip orders/0 ahead");
    hand_edit(&file, orders(&[(0, 400)]));
    let drop = r.commit("2026-11-28T11:00:00Z", "drop orders/1");
    std::fs::write(r.path().join("README.md"), "offsets\n").unwrap();
    let docs = r.commit("2026-11-28T12:00:00Z", "docs");
    let show = |at: &str| show_orders(&r, at);
    let v = show("HEAD");
    assert_eq!(v["offsets"], orders(&[(0, 100), (1, 50)]), "the nightly's");
    assert_eq!(v["version"]["commit"], night.as_str());
    assert_eq!(not_applied(&v), [drop.as_str(), skip.as_str()]);

    // apply --at --prune takes the nightly's: partition 1 is not removed.
    let fake = FakeConnect::builder()
        .sink("orders", SINK, State::Running, orders(&[(0, 150), (1, 60)]))
        .start();
    let (code, out, err) = apply(&r, &fake, &["--at", "HEAD", "--prune", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(fake.offsets("orders"), orders(&[(0, 100), (1, 50)]));

    // An apply record of another cluster covers nothing here.
    apply_record(&r, "2026-11-28T13:00:00Z", "b", &docs);
    assert_eq!(show("HEAD")["offsets"], orders(&[(0, 100), (1, 50)]));
    // A record of cluster a applying the first change only: the cluster had that one.
    apply_record(&r, "2026-11-28T14:00:00Z", "a", &skip);
    let v = show("HEAD");
    assert_eq!(v["offsets"], orders(&[(0, 400), (1, 50)]));
    assert_eq!(v["version"]["commit"], skip.as_str());
    assert_eq!(v["not_applied"][0]["commit"], drop.as_str());
    // A record of a later commit covers every change before it; at a time before the
    // record, the cluster still had the nightly's.
    apply_record(&r, "2026-11-28T15:00:00Z", "a", &docs);
    let v = show("HEAD");
    assert_eq!(v["offsets"], orders(&[(0, 400)]));
    assert!(v.get("not_applied").is_none(), "{v}");
    assert!(v.get("version").is_none(), "the file's last change: {v}");
    let v = show("2026-11-28 13:30");
    assert_eq!(v["offsets"], orders(&[(0, 100), (1, 50)]));

    // A file holding only changes never applied has no position to show.
    r.write("snapshots/a/fresh.yaml", "fresh", Sink, orders(&[(0, 1)]));
    let mut f = std::fs::read_to_string(r.path().join("snapshots/a/fresh.yaml")).unwrap();
    f = f
        .lines()
        .filter(|l| !l.trim_start().starts_with("capturedAt:"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(r.path().join("snapshots/a/fresh.yaml"), f + "\n").unwrap();
    let (code, _, err) = r.kco(&["fmt", "snapshots/a/fresh.yaml"]).parts();
    assert_eq!(code, 0, "{err}");
    let fresh = r.commit("2026-11-29T10:00:00Z", "a hand-written file");
    let (code, _, err) = r.kco(&["show", "fresh", "--at", "HEAD"]).parts();
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("connector `fresh` has no position cluster `a` had at `HEAD`")
            && err.contains(&fresh[..12]),
        "{err}"
    );
    let (code, out, err) = apply(&r, &fake, &["--at", "HEAD", "--dry-run", "-o", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(parse_json(&out)["source"]["never_had"], json!(["fresh"]));
}

#[test]
fn at_follows_a_moved_file_to_where_it_was_and_a_move_is_no_observation() {
    let (r, night) = nightly_of_orders();
    // Moved by hand into a folder of its team: the same file, the same capture time.
    std::fs::create_dir_all(r.path().join("snapshots/a/payments")).unwrap();
    r.git(
        "2026-11-28T10:00:00Z",
        &[
            "mv",
            "snapshots/a/orders.yaml",
            "snapshots/a/payments/orders.yaml",
        ],
    );
    let moved = r.commit("2026-11-28T10:00:00Z", "orders to the payments folder");
    let show = |at: &str| show_orders(&r, at);
    let v = show("HEAD");
    assert_eq!(v["file"], "snapshots/a/payments/orders.yaml");
    assert_eq!(v["offsets"], orders(&[(0, 100), (1, 50)]));
    assert!(
        v.get("not_applied").is_none(),
        "a move changes no offset: {v}"
    );

    // Then edited at its new place, merged and never applied: the cluster still had the
    // nightly's, found at the file's old path.
    hand_edit(
        &r.path().join("snapshots/a/payments/orders.yaml"),
        orders(&[(0, 400), (1, 50)]),
    );
    let skip = r.commit("2026-11-28T11:00:00Z", "skip orders/0 ahead");
    let v = show("HEAD");
    assert_eq!(v["offsets"], orders(&[(0, 100), (1, 50)]), "{v}");
    assert_eq!(v["version"]["commit"], night.as_str());
    assert_eq!(v["not_applied"][0]["commit"], skip.as_str());
    assert_eq!(v["not_applied"].as_array().unwrap().len(), 1, "{v}");

    // Moved and edited in one commit: a change too, never the cluster's.
    r.git(
        "2026-11-28T12:00:00Z",
        &[
            "mv",
            "snapshots/a/payments/orders.yaml",
            "snapshots/a/orders.yaml",
        ],
    );
    hand_edit(
        &r.path().join("snapshots/a/orders.yaml"),
        orders(&[(0, 500), (1, 50)]),
    );
    let back = r.commit("2026-11-28T12:00:00Z", "back, and further ahead");
    let v = show("HEAD");
    assert_eq!(v["offsets"], orders(&[(0, 100), (1, 50)]), "{v}");
    assert_eq!(not_applied(&v), [back.as_str(), skip.as_str()]);
    // What log says of the same commits: the move and both edits are changes, not nightlies.
    let run = r.kco(&["log", "orders", "-o", "json"]);
    let kinds: Vec<(String, String)> = parse_json(&run.stdout)["connectors"][0]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["commit"].as_str().unwrap().to_string(),
                c["kind"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let kind_of = |id: &str| {
        kinds
            .iter()
            .find(|(c, _)| id.starts_with(c.as_str()) || c.starts_with(id))
            .map(|(_, k)| k.clone())
    };
    assert_eq!(kind_of(&moved), kind_of(&skip), "{kinds:?}");
    assert_eq!(kind_of(&skip).as_deref(), Some("change"), "{kinds:?}");
    assert_eq!(kind_of(&night).as_deref(), Some("snapshot"), "{kinds:?}");
}

/// Issue 46: `kco log` never describes a position the cluster did not have. A nightly after
/// a merge never applied compares with the nightly before it (555 -> 613: 58 forward), not
/// with the merge's file (350), and says so.
#[test]
fn log_compares_a_snapshot_after_an_unapplied_change_with_the_last_snapshot() {
    let r = Repo::new();
    let file = r.path().join("snapshots/a/orders.yaml");
    let night = |offsets, at: &str| {
        r.observe("snapshots/a/orders.yaml", "orders", Sink, offsets, at);
        r.commit(at, "nightly")
    };
    let first = night(orders(&[(0, 555)]), "2026-11-27T02:00:00Z");
    hand_edit(&file, orders(&[(0, 350)]));
    let change = r.commit("2026-11-27T10:00:00Z", "merge the rewind (never applied)");
    night(orders(&[(0, 613)]), "2026-11-28T02:00:00Z");
    let (code, out, err) = r.kco(&["log", "orders", "-o", "json"]).parts();
    assert_eq!(code, 0, "{err}");
    let v = parse_json(&out);
    let latest = &v["connectors"][0]["commits"][0];
    assert_eq!(latest["kind"], "snapshot", "{latest}");
    assert_eq!(latest["partitions"][0]["direction"], "forward", "{latest}");
    assert_eq!(latest["partitions"][0]["distance"], 58, "{latest}");
    let notes = latest["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "compared with the last snapshot, {}",
            &first[..12]
        )),
        "{notes}"
    );
    assert!(notes.contains(&change[..12]), "{notes}");
    let (_, text, _) = r.kco(&["log", "orders"]).parts();
    assert!(
        !text.contains("{\"kafka_offset\":350} -> {\"kafka_offset\":613}"),
        "{text}"
    );
}
