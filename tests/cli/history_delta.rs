//! A change from git history is a delta (issue 26, findings 1, 2 and 4): `apply --commit` and
//! `apply --changed-since` set the partitions a change changed, reset those it removed (under
//! `--fail-on reset`), leave every other partition where live has it, and never apply a
//! record commit (a nightly snapshot). Against the fake Connect, on repositories built here.

use std::collections::BTreeMap;

use kco::model::ConnectorType::Sink;
use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::history::{apply, apply_record, apply_unreachable, Repo};
use crate::support::data::sink_offsets;

const SINK: &str = "FileStreamSink";

fn clicks(parts: &[(i64, i64)]) -> Value {
    sink_offsets("clicks", parts)
}

/// `topic/partition -> offset` of a connector on the fake.
fn live(fake: &FakeConnect, name: &str) -> BTreeMap<String, i64> {
    fake.offsets(name)
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let p = &e["partition"];
            (
                format!(
                    "{}/{}",
                    p["kafka_topic"].as_str().unwrap(),
                    p["kafka_partition"]
                ),
                e["offset"]["kafka_offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn map(parts: &[(&str, i64)]) -> BTreeMap<String, i64> {
    parts.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// `(partition, offset)` of `sink-x` on the fake, every partition one of topic `clicks`.
fn clicks_live(fake: &FakeConnect) -> Vec<(i64, i64)> {
    live(fake, "sink-x")
        .into_iter()
        .map(|(k, v)| (k.strip_prefix("clicks/").unwrap().parse().unwrap(), v))
        .collect()
}

/// `sink-x`'s file as a snapshot captured at `at` writes it: `clicks` at `parts`.
fn observe_x(r: &Repo, parts: &[(i64, i64)], at: &str) {
    r.observe("snapshots/a/sink-x.yaml", "sink-x", Sink, clicks(parts), at);
}

/// `other`'s file as a snapshot captured at `at` writes it: `o/0` at `offset`.
fn observe_other(r: &Repo, offset: i64, at: &str) {
    let offsets = sink_offsets("o", &[(0, offset)]);
    r.observe("snapshots/a/other.yaml", "other", Sink, offsets, at);
}

/// The pull request: on branch `pr`, a hand edit (the nightly's capturedAt kept: a change)
/// rewinds clicks/0 to 800 and removes clicks/2; merged into `main` with --no-ff.
fn merge_pr(r: &Repo) {
    r.git("2026-11-30T09:00:00Z", &["checkout", "-q", "-b", "pr"]);
    observe_x(r, &[(0, 800), (1, 900)], NIGHT);
    r.commit("2026-11-30T09:00:00Z", "rewind clicks/0, drop clicks/2");
    r.git("2026-11-30T10:00:00Z", &["checkout", "-q", "main"]);
    let merge = ["merge", "-q", "--no-ff", "-m", "merge pr", "pr"];
    r.git("2026-11-30T10:00:00Z", &merge);
}

/// Live: `sink-x` at `x` on `clicks`, `other` at `o` on `o/0`, both running.
fn live_at(x: &[(i64, i64)], o: i64) -> FakeConnect {
    FakeConnect::builder()
        .sink("sink-x", SINK, State::Running, clicks(x))
        .sink("other", SINK, State::Running, sink_offsets("o", &[(0, o)]))
        .start()
}

/// A commit with a trailer paragraph (as the nightly recipe writes it).
fn record(r: &Repo, date: &str, msg: &str, trailer: &str) -> String {
    r.git(date, &["add", "-A"]);
    r.git(date, &["commit", "-q", "-m", msg, "-m", trailer]);
    r.git(date, &["rev-parse", "HEAD"])
}

/// When the first nightly captured the files; a hand edit keeps it.
const NIGHT: &str = "2026-11-30T02:00:00Z";

/// The nightly holds `sink-x` at 900 on three partitions and `other` at 50; a pull request
/// (branch `pr`, merged with --no-ff) rewinds clicks/0 to 800 and removes clicks/2.
fn nightly_then_pr() -> Repo {
    let r = Repo::new();
    observe_x(&r, &[(0, 900), (1, 900), (2, 900)], NIGHT);
    observe_other(&r, 50, NIGHT);
    record(&r, NIGHT, "offsets of a", "Kco-Snapshot: a");
    merge_pr(&r);
    r
}

/// Live has moved on since the nightly.
fn moved_on() -> FakeConnect {
    live_at(&[(0, 1000), (1, 1003), (2, 1006)], 70)
}

#[test]
fn apply_of_a_merge_changes_only_the_partitions_the_pull_request_changed() {
    let r = nightly_then_pr();
    for how in [&["--changed-since", "HEAD~1"][..], &["--commit", "HEAD"]] {
        let fake = moved_on();
        let out = applied(&r, &fake, how);
        // clicks/1 (live 1003, file 900) was not part of the change: left where it is.
        assert_eq!(clicks_live(&fake), [(0, 800), (1, 1003)], "{how:?}: {out}");
        assert_eq!(live(&fake, "other"), map(&[("o/0", 70)]), "{out}");
        assert!(
            out.contains("clicks/0: {\"kafka_offset\":1000} -> {\"kafka_offset\":800}  [REPROCESSING] at least 200 records"),
            "{out}"
        );
        assert!(
            out.contains(
                "clicks/2: {\"kafka_offset\":1006} -> (removed by the change)  [OFFSET RESET]"
            ),
            "{out}"
        );
        assert!(
            out.contains("1 other partition not in the change, left as live has it"),
            "{out}"
        );
        assert!(!out.contains("clicks/1"), "{out}");
        assert!(
            out.contains("snapshots/a/sink-x.yaml  1 partition set, 1 removed; changed by"),
            "{out}"
        );
        assert!(out.contains("left alone (unchanged): other"), "{out}");
    }
}

#[test]
fn a_removed_partition_is_reset_and_fail_on_reset_refuses_it() {
    let r = nightly_then_pr();
    let fake = moved_on();
    let how = ["--changed-since", "HEAD~1", "--fail-on", "reset", "--yes"];
    let (code, out, err) = apply(&r, &fake, &how);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("refused by --fail-on: 1 partition at risk; nothing was changed:\n  sink-x clicks/2: [OFFSET RESET]"),
        "{err}"
    );
    fake.assert_no_mutations();
    let (code, out, err) = apply(&r, &fake, &["--commit", "HEAD", "-o", "json", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!live(&fake, "sink-x").contains_key("clicks/2"));
    let v = crate::support::json::parse_json(&out);
    let c = &v["plan"]["connectors"][0];
    assert_eq!(c["name"], "sink-x");
    assert_eq!(c["left_alone"], 1);
    assert_eq!(c["action"]["prune_nulls"], 1);
    assert_eq!(v["source"]["mode"], "commit");
    assert_eq!(v["source"]["files"][0]["partitions_set"], 1);
    assert_eq!(v["source"]["files"][0]["partitions_removed"], 1);
}

#[test]
fn a_nightly_commit_is_never_applied() {
    let r = nightly_then_pr();
    // The nightly lands after the merge: HEAD is an observation, moving both connectors.
    let night = "2026-12-01T02:00:00Z";
    observe_x(&r, &[(0, 810), (1, 1003)], night);
    observe_other(&r, 70, night);
    let nightly = record(&r, night, "offsets of a", "Kco-Snapshot: a");
    let fake = live_at(&[(0, 830), (1, 1010)], 90);
    let how = [
        "--changed-since",
        "HEAD~1",
        "--fail-on",
        "data-loss,reset",
        "--yes",
    ];
    let (code, out, err) = apply(&r, &fake, &how);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.ends_with("No changes.\n"), "{out}");
    assert!(
        out.contains(&format!(
            "not applied (observations only; Kco-Snapshot: a): {}",
            &nightly[..12]
        )),
        "{out}"
    );
    assert!(
        out.contains("none of 2 connectors\n"),
        "no dangling colon: {out}"
    );
    fake.assert_no_mutations();

    let (code, out, _) = apply_unreachable(&r, &["--commit", "HEAD"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with(&format!(
            "Commit {} 2026-12-01 02:00 \"offsets of a\" is a snapshot: it observed the cluster (Kco-Snapshot: a), not a change anyone decided: nothing to apply.\nNo changes.\n",
            &nightly[..12]
        )),
        "{out}"
    );

    // The same two answers as one JSON document each (no text on stdout).
    for how in [&["--changed-since", "HEAD~1"][..], &["--commit", "HEAD"]] {
        let (code, out, err) = apply(&r, &fake, &[how, &["-o", "json"]].concat());
        assert_eq!(code, 0, "{out}{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).expect(&out);
        assert!(doc["plan"].is_null() && doc["result"].is_null(), "{doc}");
        if how.contains(&"--commit") {
            assert_eq!(doc["record"]["kind"], "snapshot", "{doc}");
            assert_eq!(doc["record"]["trailer"], "Kco-Snapshot: a", "{doc}");
        } else {
            assert_eq!(doc["source"]["mode"], "changed_since", "{doc}");
            assert!(doc["record"].is_null(), "{doc}");
        }
    }
    fake.assert_no_mutations();

    // Since before the merge: the pull request's change, not the nightly's.
    let out = applied(&r, &fake, &["--changed-since", "HEAD~2"]);
    assert_eq!(clicks_live(&fake), [(0, 800), (1, 1010)], "{out}");
    assert_eq!(live(&fake, "other"), map(&[("o/0", 90)]), "{out}");
}

#[test]
fn changed_since_composes_commits_and_the_working_tree_later_wins() {
    let r = nightly_then_pr();
    // An uncommitted edit moves clicks/0 again and adds clicks/3.
    observe_x(&r, &[(0, 700), (1, 900), (3, 5)], NIGHT);
    let fake = moved_on();
    let out = applied(&r, &fake, &["--changed-since", "HEAD~1"]);
    assert_eq!(clicks_live(&fake), [(0, 700), (1, 1003), (3, 5)], "{out}");
    assert!(
        out.contains("2 partitions set, 1 removed; changed in the working tree (not committed)"),
        "{out}"
    );
}

/// `(partition, LABEL, message)` of every risk a `diff --base -o json` labels.
fn review_labels(v: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for c in v["connectors"].as_array().unwrap() {
        for p in c["partitions"].as_array().unwrap() {
            let Some(r) = p["risk"].as_object() else {
                continue;
            };
            let part = &p["partition"];
            let label = match r["code"].as_str().unwrap() {
                "reprocessing" => "REPROCESSING",
                "data_loss" => "DATA LOSS",
                "offset_reset" | "source_restart" => "OFFSET RESET",
                other => other,
            };
            out.push((
                format!(
                    "{}/{}",
                    part["kafka_topic"].as_str().unwrap(),
                    part["kafka_partition"]
                ),
                label.to_string(),
                r["message"].as_str().unwrap().to_string(),
            ));
        }
    }
    out.sort();
    out
}

/// `(partition, LABEL, message)` of every partition a `--fail-on` refusal names.
fn refused_labels(err: &str, connector: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = err
        .lines()
        .filter_map(|l| l.trim().strip_prefix(&format!("{connector} ")))
        .map(|l| {
            let (part, rest) = l.split_once(": [").unwrap();
            let (label, message) = rest.split_once("] ").unwrap();
            (part.to_string(), label.to_string(), message.to_string())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_review_labels_against_live_as_the_apply_plans_it_and_a_revert_by_its_effect() {
    let r = nightly_then_pr();
    let fake = moved_on();
    let (code, out, err) = r
        .on(&fake, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    let review = crate::support::json::parse_json(&out);
    assert_eq!(review["labels"]["against"], "live", "{out}");
    assert_eq!(review["labels"]["cluster"], "a");
    assert_eq!(review["labels"]["url"], fake.url().as_str());
    let labels = review_labels(&review);
    assert_eq!(
        labels,
        vec![
            (
                "clicks/0".into(),
                "REPROCESSING".into(),
                "at least 200 records will be reprocessed (duplicates downstream)".into()
            ),
            (
                "clicks/2".into(),
                "OFFSET RESET".into(),
                "offset removed: falls back to auto.offset.reset".into()
            ),
        ],
        "{out}"
    );
    assert_eq!(
        review["connectors"][1]["partitions"][0]["live"]["offset"]["kafka_offset"],
        1000
    );
    // The apply of the same change plans the same partitions with the same labels.
    let how = [
        "--commit",
        "HEAD",
        "--fail-on",
        "reprocessing,data-loss,reset",
    ];
    let (code, out, err) = apply(&r, &fake, &[&how[..], &["--yes"]].concat());
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(refused_labels(&err, "sink-x"), labels, "{err}");
    fake.assert_no_mutations();
    let (code, text, _) = r.on(&fake, &["diff", "--base", "HEAD~1"]).parts();
    assert_eq!(code, 2);
    assert!(
        text.contains(
            "Labels: what applying the change would do to the live offsets of cluster `a`"
        ),
        "{text}"
    );
    assert!(
        text.contains("clicks/0: live {\"kafka_offset\":1000} -> {\"kafka_offset\":800}; {\"kafka_offset\":900} -> {\"kafka_offset\":800} in the files  [REPROCESSING]"),
        "{text}"
    );

    // Applied, then live moves on to 1030; a revert of the merge puts 900 back in the file.
    applied(&r, &fake, &["--commit", "HEAD"]);
    fake.set_offsets("sink-x", clicks(&[(0, 1030), (1, 1040)]));
    r.git(
        "2026-12-02T09:00:00Z",
        &["revert", "--no-edit", "-m", "1", "HEAD"],
    );
    // File against file, the revert reads as a skip ahead (800 -> 900)...
    let (_, out, _) = r
        .on(
            &fake,
            &["diff", "--base", "HEAD~1", "--offline", "-o", "json"],
        )
        .parts();
    let files = crate::support::json::parse_json(&out);
    assert_eq!(files["labels"]["against"], "files");
    assert_eq!(files["labels"]["why"], "--offline");
    assert_eq!(review_labels(&files)[0].1, "DATA LOSS", "{out}");
    // ...and applied to live (1030) it would rewind, but a forward change never moves a
    // partition back: the review says it is left where it is, and the apply leaves it.
    let (_, out, _) = r
        .on(&fake, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    let doc = crate::support::json::parse_json(&out);
    assert!(
        review_labels(&doc).iter().all(|l| l.1 != "REPROCESSING"),
        "{out}"
    );
    let sink = crate::support::json::named(&doc, "connectors", "sink-x");
    let p = &sink["partitions"][0];
    assert_eq!(p["partition"]["kafka_partition"], 0, "{out}");
    assert_eq!(
        p["live"]["left"],
        "left where it is: live is already past the change's target (a forward change)",
        "{out}"
    );
    let (_, text, _) = r.on(&fake, &["diff", "--base", "HEAD~1"]).parts();
    assert!(text.contains("[LEFT]"), "{text}");
    let out = applied(&r, &fake, &["--commit", "HEAD"]);
    let want = [(0, 1030), (1, 1040), (2, 900)];
    assert_eq!(clicks_live(&fake), want, "the revert rewound live: {out}");
    assert!(
        out.contains("clicks/0: live {\"kafka_offset\":1030}, the change set {\"kafka_offset\":900}: left where it is: live is already past the change's target (a forward change)"),
        "{out}"
    );

    // A worker of another cluster than the files' (`--url` alone is cluster `default`): the
    // files are not labelled against it, and the connector says so.
    let other = crate::support::run::Kco::new(r.path())
        .args([
            "--url",
            fake.url().as_str(),
            "diff",
            "--base",
            "HEAD~1",
            "snapshots/a",
        ])
        .run();
    assert_eq!(other.code, 2, "{other:?}");
    assert!(
        other.stdout.contains("labels compare the files only: the file is cluster `a`'s, the review read cluster `default`"),
        "{}",
        other.stdout
    );
    assert!(other.stdout.contains("[DATA LOSS]"), "{}", other.stdout);

    // A cluster that cannot be read: the labels compare the files only, and say why.
    let (code, out, err) = r
        .kco(&["--url", "http://127.0.0.1:9", "diff", "--base", "HEAD~1"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("cannot read cluster `a`"), "{err}");
    assert!(
        out.contains("Labels compare the files only, not the cluster: cannot read cluster `a`:"),
        "{out}"
    );
}

/// `apply snapshots/a <how> --yes` against `fake`, asserted to succeed: its stdout.
fn applied(r: &Repo, fake: &FakeConnect, how: &[&str]) -> String {
    let (code, out, err) = apply(r, fake, &[how, &["--yes"]].concat());
    assert_eq!(code, 0, "{how:?}: {out}{err}");
    out
}

/// `(code, stdout, stderr)` of `apply snapshots/a --unapplied --yes` against `fake`.
fn apply_unapplied(r: &Repo, fake: &FakeConnect) -> (i32, String, String) {
    apply(r, fake, &["--unapplied", "--yes"])
}

#[test]
fn a_plain_commit_of_a_snapshot_is_an_observation_and_a_mixed_commit_applies_only_its_change() {
    let r = nightly_then_pr();
    // One commit, no trailer: sink-x rewritten from live (a new capturedAt), other edited by
    // hand (capturedAt kept).
    observe_x(&r, &[(0, 810), (1, 1003)], "2026-12-01T02:00:00Z");
    observe_other(&r, 40, NIGHT);
    r.commit("2026-12-01T02:00:00Z", "nightly, and other back to 40");
    for how in [&["--commit", "HEAD"][..], &["--changed-since", "HEAD~1"]] {
        let fake = moved_on();
        let out = applied(&r, &fake, how);
        let want = [(0, 1000), (1, 1003), (2, 1006)];
        let why = "the observation was applied";
        assert_eq!(clicks_live(&fake), want, "{how:?}: {why}: {out}");
        assert_eq!(live(&fake, "other"), map(&[("o/0", 40)]), "{how:?}: {out}");
        assert!(
            out.contains(
                "not applied (observed: kco rewrote the file from live, capturedAt moved): sink-x"
            ),
            "{how:?}: {out}"
        );
    }
}

/// A nightly, an apply record of it, a merged pull request (clicks/0 to 800, clicks/2
/// removed), then a second nightly on top, committed without a trailer.
fn merge_under_a_nightly() -> (Repo, String) {
    let r = Repo::new();
    observe_x(&r, &[(0, 900), (1, 900), (2, 900)], NIGHT);
    let first = record(&r, NIGHT, "offsets of a", "Kco-Snapshot: a");
    apply_record(&r, "2026-11-30T03:00:00Z", "a", &first);
    merge_pr(&r);
    let merge = r.git("2026-11-30T10:00:00Z", &["rev-parse", "HEAD"]);
    // The nightly lands before the apply job runs: live at 1000/1003, no clicks/2 yet read.
    observe_x(
        &r,
        &[(0, 1000), (1, 1003), (2, 1006)],
        "2026-12-01T02:00:00Z",
    );
    r.commit("2026-12-01T02:00:00Z", "nightly");
    (r, merge)
}

#[test]
fn unapplied_applies_a_merge_a_nightly_landed_on_and_a_rerun_after_its_record_applies_nothing() {
    let (r, merge) = merge_under_a_nightly();
    let fake = moved_on();
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 0, "{out}{err}");
    let why = "the merged change under the nightly was applied";
    assert_eq!(clicks_live(&fake), [(0, 800), (1, 1003)], "{why}: {out}");
    assert!(
        out.contains("Changes not yet applied, since the last one applied (Kco-Commit: "),
        "{out}"
    );
    assert!(
        out.contains(&format!("changed by {}", &merge[..12])),
        "{out}"
    );
    assert!(out.contains("not applied (observations only): "), "{out}");

    // The record of that apply: the next run finds nothing to do.
    let head = r.git("2026-12-01T03:00:00Z", &["rev-parse", "HEAD"]);
    apply_record(&r, "2026-12-01T03:00:00Z", "a", &head);
    let before = fake.mutating_requests().len();
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.ends_with("No changes.\n"), "{out}");
    assert_eq!(
        fake.mutating_requests().len(),
        before,
        "a rerun applied twice"
    );
}

#[test]
fn unapplied_without_an_apply_record_is_refused_and_says_where_to_start() {
    let r = nightly_then_pr();
    let fake = moved_on();
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("no apply record of cluster `a` on the first-parent history of HEAD"),
        "{err}"
    );
    assert!(err.contains("--changed-since REV"), "{err}");
    fake.assert_no_mutations();
}

/// Issue 33, finding 10: a review whose cluster answers but whose offsets cannot be read (a
/// wrong secret, a refusing gateway) never claims live labels: none read, the headline and
/// JSON say files, stderr warns; some read, the others are named.
#[test]
fn a_review_says_it_compared_the_files_when_live_could_not_be_read() {
    let r = Repo::new();
    for name in ["sink-x", "sink-y"] {
        r.observe(
            &format!("snapshots/a/{name}.yaml"),
            name,
            Sink,
            clicks(&[(0, 900)]),
            "2026-12-01T02:00:00Z",
        );
    }
    r.commit("2026-12-01T02:00:00Z", "nightly");
    for name in ["sink-x", "sink-y"] {
        crate::support::data::hand_edit(
            &r.path().join(format!("snapshots/a/{name}.yaml")),
            clicks(&[(0, 800)]),
        );
    }
    r.commit("2026-12-01T10:00:00Z", "rewind both");
    let fake = |fault: &str| {
        FakeConnect::builder()
            .sink("sink-x", SINK, State::Running, clicks(&[(0, 1000)]))
            .sink("sink-y", SINK, State::Running, clicks(&[(0, 1000)]))
            .fault(crate::fake_connect::Fault::on("GET", fault).respond(401, "Unauthorized"))
            .start()
    };

    let none = fake("/connectors/*/offsets");
    let (code, out, err) = r
        .on(&none, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    let doc = crate::support::json::parse_json(&out);
    assert_eq!(doc["labels"]["against"], "files", "{out}");
    let why = doc["labels"]["why"].as_str().unwrap();
    assert!(
        why.contains("cannot read the live offsets of `sink-x` on cluster `a`")
            && why.ends_with("(and 1 more)"),
        "{why}"
    );
    assert!(
        err.contains("warning: the review's labels compare the files only, not the cluster: cannot read the live offsets of `sink-x`"),
        "{err}"
    );
    let (_, md, _) = r
        .on(&none, &["diff", "--base", "HEAD~1", "-o", "markdown"])
        .parts();
    assert!(
        md.contains("Labels compare the files only, not the cluster: cannot read the live offsets"),
        "{md}"
    );
    assert!(!md.contains("live offsets of cluster"), "{md}");

    let one = fake("/connectors/sink-y/offsets");
    let (code, out, err) = r
        .on(&one, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    let doc = crate::support::json::parse_json(&out);
    assert_eq!(doc["labels"]["against"], "live");
    assert_eq!(doc["labels"]["files_only"], serde_json::json!(["sink-y"]));
    assert!(
        err.contains("compare the files only for 1 connector whose live offsets could not be read on cluster `a`: sink-y"),
        "{err}"
    );
    let (_, text, _) = r.on(&one, &["diff", "--base", "HEAD~1"]).parts();
    assert!(
        text.contains(
            "; the files only for 1 connector whose live offsets could not be read: sink-y"
        ),
        "{text}"
    );
}

/// A review against a sink its cluster is rebalancing (UNASSIGNED for a moment, as Connect
/// shows one being moved between workers) still counts as moving: its counts are bounds,
/// as for RUNNING; only a stopped one's are exact.
#[test]
fn a_review_of_a_sink_mid_rebalance_gives_bounds_and_a_stopped_one_exact_counts() {
    let r = nightly_then_pr();
    let fake = moved_on();
    fake.fault(
        crate::fake_connect::Fault::on("GET", "/connectors/sink-x/status")
            .always()
            .respond_json(
                200,
                serde_json::json!({"name": "sink-x", "type": "sink", "tasks": [],
                    "connector": {"state": "UNASSIGNED", "worker_id": "w1:8083"}}),
            ),
    );
    let run = r.on(&fake, &["diff", "--base", "HEAD~1", "-o", "json"]);
    assert_eq!(run.code, 2, "{run}");
    let labels = review_labels(&crate::support::json::parse_json(&run.stdout));
    assert!(
        labels[0].2.starts_with("at least 200 records"),
        "{labels:?}"
    );
    let fake = moved_on();
    fake.set_state("sink-x", State::Stopped);
    let (_, out, err) = r
        .on(&fake, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    let labels = review_labels(&crate::support::json::parse_json(&out));
    assert!(labels[0].2.starts_with("200 records"), "{labels:?}{err}");
}

/// The checksum line of a snapshot file's text.
fn seal_line(text: &str) -> &str {
    text.lines().find(|l| l.starts_with("checksum:")).unwrap()
}

/// After an applied nightly, a hand edit of `sink-x` (clicks/0 900 -> 885) pushed without
/// `kco fmt` (the old seal kept), then its re-seal in a second commit. Returns the ids of the
/// nightly, the unsealed edit and the re-seal.
fn unsealed_then_resealed() -> (Repo, [String; 3]) {
    let r = Repo::new();
    observe_x(&r, &[(0, 900), (1, 900), (2, 900)], NIGHT);
    let nightly = record(&r, NIGHT, "offsets of a", "Kco-Snapshot: a");
    apply_record(&r, "2026-11-30T03:00:00Z", "a", &nightly);
    let path = r.path().join("snapshots/a/sink-x.yaml");
    let before = std::fs::read_to_string(&path).unwrap();
    crate::support::data::hand_edit(&path, clicks(&[(0, 885), (1, 900), (2, 900)]));
    let sealed = std::fs::read_to_string(&path).unwrap();
    let unsealed = sealed.replace(seal_line(&sealed), seal_line(&before));
    assert_ne!(unsealed, sealed);
    std::fs::write(&path, &unsealed).unwrap();
    let bad = r.commit("2026-11-30T09:00:00Z", "rewind clicks/0 by 15 (not sealed)");
    std::fs::write(&path, &sealed).unwrap();
    let fix = r.commit("2026-11-30T09:30:00Z", "kco fmt");
    (r, [nightly, bad, fix])
}

/// Issue 46, finding 3: one unsealed commit never wedges the queue. The version that cannot
/// be taken is named with its commit and problem, and passed over for the next valid version
/// of the file: the change from the last valid version to it is applied once.
#[test]
fn an_unsealed_commit_followed_by_its_reseal_is_applied_once_and_the_queue_moves() {
    let (r, [_, bad, fix]) = unsealed_then_resealed();
    let fake = moved_on();
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        clicks_live(&fake),
        [(0, 885), (1, 1003), (2, 1006)],
        "the net change (clicks/0 to 885) is applied once: {out}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("passed over (cannot be taken: line "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("checksum"), "{line}");
    assert!(
        line.contains(&format!("snapshots/a/sink-x.yaml of {}", &bad[..12])),
        "{line}"
    );
    assert!(
        line.contains(&format!("superseded by {}", &fix[..12])),
        "{line}"
    );
    assert!(out.contains(&format!("changed by {}", &fix[..12])), "{out}");

    // JSON names it too.
    let fake = moved_on();
    let (code, json, err) = apply(&r, &fake, &["--unapplied", "--dry-run", "-o", "json"]);
    assert_eq!(code, 0, "{json}{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let invalid = &v["source"]["invalid"][0];
    assert_eq!(invalid["commit"]["commit"], bad.as_str(), "{json}");
    assert_eq!(invalid["instead"], "superseded", "{json}");
    assert_eq!(invalid["superseded_by"]["commit"], fix.as_str(), "{json}");
    fake.assert_no_mutations();
}

/// Issue 46, finding 3: the skip record the docs give for a change not to apply works when
/// it names the unsealed commit: the change it brought is passed over, the re-seal after it
/// brings nothing, and the run says where it started.
#[test]
fn a_skip_record_naming_the_unsealed_commit_passes_its_change_over() {
    let (r, [_, bad, _]) = unsealed_then_resealed();
    let skip = format!("Kco-Apply: a\nKco-Commit: {bad}");
    r.git(
        "2026-11-30T10:00:00Z",
        &["commit", "-q", "--allow-empty", "-m", "skip", "-m", &skip],
    );
    let fake = moved_on();
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.ends_with("No changes.\n"), "{out}");
    assert!(
        out.contains("the changes start from it: its offsets are read as written"),
        "{out}"
    );
    fake.assert_no_mutations();
}

/// The newest version cannot be taken: nothing is applied, and the error names the file.
#[test]
fn an_unsealed_newest_version_is_refused_naming_the_file() {
    let (r, _) = unsealed_then_resealed();
    let path = r.path().join("snapshots/a/sink-x.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("kafka_offset: 885", "kafka_offset: 870"),
    )
    .unwrap();
    r.commit("2026-11-30T11:00:00Z", "another unsealed edit");
    let fake = moved_on();
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("snapshots/a/sink-x.yaml"), "{err}");
    assert!(err.contains("checksum"), "{err}");
    fake.assert_no_mutations();
}

/// Issue 46, finding 2: a merge's direction is its pull request's (merge base to merge), as
/// the review and the merge driver judge it. A revert branch (clicks/0 back from 350 to 555:
/// forward) merged after a nightly moved the file to 602, its conflict resolved by hand to
/// 555, is a forward change whose target live (672) has passed: the apply leaves clicks/0
/// where it is and says why, where the files alone (602 -> 555) would read as a rewind.
#[test]
fn a_merged_revert_resolved_by_hand_after_a_nightly_moves_nothing_live_has_passed() {
    let r = Repo::new();
    observe_x(&r, &[(0, 555), (1, 900), (2, 900)], NIGHT);
    let first = record(&r, NIGHT, "offsets of a", "Kco-Snapshot: a");
    apply_record(&r, "2026-11-30T03:00:00Z", "a", &first);
    let path = r.path().join("snapshots/a/sink-x.yaml");
    // The rewind, merged and applied; its record observes 360.
    r.git("2026-11-30T09:00:00Z", &["checkout", "-q", "-b", "rewind"]);
    crate::support::data::hand_edit(&path, clicks(&[(0, 350), (1, 900), (2, 900)]));
    r.commit("2026-11-30T09:00:00Z", "rewind clicks/0");
    r.git("2026-11-30T10:00:00Z", &["checkout", "-q", "main"]);
    r.git(
        "2026-11-30T10:00:00Z",
        &["merge", "-q", "--no-ff", "-m", "merge rewind", "rewind"],
    );
    let merged = r.git("2026-11-30T10:00:00Z", &["rev-parse", "HEAD"]);
    observe_x(&r, &[(0, 360), (1, 910), (2, 910)], "2026-11-30T11:00:00Z");
    let msg = format!("offsets of a after an apply\n\nKco-Apply: a\nKco-Commit: {merged}");
    r.git("2026-11-30T11:00:00Z", &["add", "-A"]);
    r.git("2026-11-30T11:00:00Z", &["commit", "-q", "-m", &msg]);
    // The revert, on a branch from there: clicks/0 back to 555 by hand.
    r.git("2026-12-01T09:00:00Z", &["checkout", "-q", "-b", "revert"]);
    crate::support::data::hand_edit(&path, clicks(&[(0, 555), (1, 910), (2, 910)]));
    r.commit("2026-12-01T09:00:00Z", "revert the rewind");
    // Meanwhile the nightly: 602.
    r.git("2026-12-01T09:00:00Z", &["checkout", "-q", "main"]);
    observe_x(
        &r,
        &[(0, 602), (1, 1003), (2, 1006)],
        "2026-12-01T02:00:00Z",
    );
    record(&r, "2026-12-01T02:00:00Z", "nightly", "Kco-Snapshot: a");
    // The merge conflicts (no driver here); resolved by hand: the nightly's file with the
    // revert's clicks/0.
    let (ok, out) = crate::support::git::git_may_fail(
        r.path(),
        &["merge", "--no-ff", "-m", "merge revert", "revert"],
    );
    assert!(!ok, "{out}");
    r.git(
        "2026-12-01T10:00:00Z",
        &["checkout", "--ours", "snapshots/a/sink-x.yaml"],
    );
    crate::support::data::hand_edit(&path, clicks(&[(0, 555), (1, 1003), (2, 1006)]));
    r.commit("2026-12-01T10:00:00Z", "merge revert");

    let fake = live_at(&[(0, 672), (1, 1010), (2, 1012)], 70);
    let (code, out, err) = apply_unapplied(&r, &fake);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        clicks_live(&fake),
        [(0, 672), (1, 1010), (2, 1012)],
        "the revert rewound what live had passed: {out}"
    );
    assert!(
        out.contains(
            "left where it is: live is already past the change's target (a forward change)"
        ),
        "{out}"
    );
}

/// Issue 46: two changes to one connector applied in one run are each named with its commit.
#[test]
fn each_change_applied_in_one_run_names_its_own_commit() {
    let r = Repo::new();
    observe_x(&r, &[(0, 900), (1, 900), (2, 900)], NIGHT);
    let first = record(&r, NIGHT, "offsets of a", "Kco-Snapshot: a");
    apply_record(&r, "2026-11-30T03:00:00Z", "a", &first);
    let path = r.path().join("snapshots/a/sink-x.yaml");
    crate::support::data::hand_edit(&path, clicks(&[(0, 800), (1, 900), (2, 900)]));
    let one = r.commit("2026-11-30T09:00:00Z", "merge pull request #1");
    crate::support::data::hand_edit(&path, clicks(&[(0, 800), (1, 850), (2, 900)]));
    let two = r.commit("2026-11-30T10:00:00Z", "merge pull request #2");
    let fake = moved_on();
    let (code, out, err) = apply(&r, &fake, &["--unapplied", "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("changed by 2 commits: {} ", &one[..12]))
            && out.contains(&format!(", {} ", &two[..12])),
        "{out}"
    );
    let (_, json, _) = apply(&r, &fake, &["--unapplied", "--dry-run", "-o", "json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let changes = &v["source"]["files"][0]["changes"];
    assert_eq!(changes[0]["commit"], one.as_str(), "{json}");
    assert_eq!(changes[1]["commit"], two.as_str(), "{json}");
}

/// A pull request rewinds `sink-x`, which the cluster no longer has (deleted: its consumer
/// group may keep its offsets, which a sink created under its name resumes from). Without a
/// `kafka:` in kco.yaml, or with one that does not answer, kco cannot read them: the review
/// says it compared the change with nothing, in the connector's note, in JSON and on stderr,
/// rather than calling it a new partition silently.
#[test]
fn the_review_of_a_deleted_connector_says_it_compared_with_nothing_when_kafka_cannot_be_read() {
    let r = nightly_then_pr();
    let fake = FakeConnect::builder()
        .sink("other", SINK, State::Running, sink_offsets("o", &[(0, 70)]))
        .start();
    let (code, out, err) = r
        .on(&fake, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    let doc = crate::support::json::parse_json(&out);
    assert_eq!(doc["labels"]["against"], "live", "{out}");
    let x = crate::support::json::named(&doc, "connectors", "sink-x");
    assert_eq!(
        x["leftovers"],
        serde_json::json!({"against": "nothing", "why": "kco.yaml gives cluster `a` no `kafka:` to read them through"}),
        "{out}"
    );
    assert!(
        err.contains("warning: the review compared `sink-x` (not on the cluster) with nothing: kco.yaml gives cluster `a` no `kafka:`"),
        "{err}"
    );
    let (_, text, _) = r.on(&fake, &["diff", "--base", "HEAD~1"]).parts();
    assert!(
        text.contains("`sink-x` is not on the cluster: applying the change needs --create; labels compare with nothing: kco could not read the offsets an earlier connector of its name may have left"),
        "{text}"
    );
    let (_, md, _) = r
        .on(&fake, &["diff", "--base", "HEAD~1", "-o", "markdown"])
        .parts();
    assert!(md.contains("labels compare with nothing"), "{md}");

    // A `kafka:` that does not answer: the same, with Kafka's error.
    let yaml = format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"127.0.0.1:9\"}}\n",
        fake.url()
    );
    std::fs::write(r.path().join("kco.yaml"), yaml).unwrap();
    let (code, out, err) = r
        .on(&fake, &["diff", "--base", "HEAD~1", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "{out}{err}");
    let doc = crate::support::json::parse_json(&out);
    let x = crate::support::json::named(&doc, "connectors", "sink-x");
    assert_eq!(x["leftovers"]["against"], "nothing", "{out}");
    let why = x["leftovers"]["why"].as_str().unwrap();
    assert!(
        why.starts_with("cannot read consumer group `connect-sink-x`: ")
            && why.contains("127.0.0.1:9"),
        "{why}"
    );
}
