//! Issue 33, "Done when": a month of GitOps on the real test bed, two CI runners sharing one
//! bare remote (its default branch `trunk`, not `main`), a teammate opening pull requests, the
//! recipes of `examples/ci` committed to the project and run by path as a CI job runs them
//! (executable bit, their own arguments). Each finding of the issue is one day of the month,
//! and each day reads back what the worker holds afterwards: offsets (`GET offsets`), states
//! (`GET status`), and how many times the sink wrote each record to its file.
//!
//! - Day 1, finding 11: the recipes are 100755 in git and run by path; runner A is a
//!   throw-away checkout on a detached HEAD (the branch from `KCO_BRANCH`), runner B a kept
//!   checkout on `trunk` (the branch it has checked out).
//! - Day 2, finding 1: a nightly committed by hand (`kco snapshot` and a plain `git commit`,
//!   no trailer) is an observation: apply on merge applies nothing, no record is duplicated.
//! - Day 3, finding 2: a pull request reviewed after a nightly landed on trunk shows its own
//!   partition only (the merge base), then is applied on merge.
//! - Day 4, finding 3: a merge with a nightly on top of it is still applied, once.
//! - Day 5, finding 4: the revert of that merge (a forward change) leaves the partition where
//!   live already passed it.
//! - Days 6-7, finding 6: a connector paused after it moved on since last night is recorded
//!   `PAUSED` where it was paused, the next night commits nothing, and it stays paused.
//! - Day 8, findings 9 and 5: a refused pull request merged anyway; the nightly's hint never
//!   says `--yes`; `show --at` and `apply --at --prune` give what the cluster had, passing
//!   over the refused change.
//! - Day 9, finding 10: a review with the cluster out of reach says it compared the files.
//! - Day 10, finding 7: runner A killed mid-apply with the sink STOPPED, twice; runner B's
//!   nightly refuses to record it, `kco recover` on B and B's next apply finish A's journal
//!   from the remote, and the sink runs again.
//! - Finding 8 (the image): every kco command of a runner goes through [`Runner::env`]. The
//!   image test (`image::a_month_of_gitops_with_runner_b_in_the_image`) lives the same month
//!   with runner B's kco the release image run by podman on its checkout: its shared lock,
//!   the journal it finishes from the remote, and its `snapshot --commit` pushes all go
//!   through the image's own git.
//!
//! One sink reads three single-partition topics (`t0/0`, `t1/0`, `t2/0`), each fed by a
//! FileStream source; records flow whenever the test appends lines to a source's file. A
//! second sink (the archive) reads `t1` and is paused on day 6. The nightly recipe snapshots
//! the whole cluster, so the test has the test bed to itself.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use serde_json::Value;

use crate::gitops::{written, Flow, Pipes, Project};
use crate::harness::{file_sink_config, temp_dir, testbed_alone, unique_name};
use crate::kco_steps::{by_topic, file_offsets, hand_edit_offset, review, text_offsets};
use crate::support::git::{git, git_may_fail};

/// The YAML of a snapshot file's text.
fn yaml(text: &str) -> serde_yaml::Value {
    serde_yaml::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The state a snapshot file's text records.
fn file_state(text: &str) -> String {
    yaml(text)["metadata"]["state"]
        .as_str()
        .unwrap_or("-")
        .to_string()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A commit's committer time, as kco's `--at` takes it (`2026-12-03T09:21:54Z`).
fn commit_time(dir: &Path, rev: &str) -> String {
    let secs: u64 = git(dir, &["log", "-1", "--format=%ct", rev])
        .parse()
        .unwrap();
    let at = std::time::UNIX_EPOCH + Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// A loopback port nothing listens on (bound, then let go).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn a_month_of_gitops_on_two_runners_keeps_the_worker_where_the_history_says() {
    live_the_month(None);
}

/// The month. `runner_b`, when given, makes runner B's kco: called with the directory that
/// holds the remote and every checkout, it returns the program to run (the image's wrapper).
pub fn live_the_month(runner_b: Option<&dyn Fn(&Path) -> PathBuf>) {
    let Some(tb) = testbed_alone() else { return };
    let a = tb.a();
    let root_dir = temp_dir();
    let root = root_dir.path();
    let day = Rc::new(Cell::new(1));

    // Day 0. A bare remote whose default branch is `trunk`; the teammate's clone commits
    // kco.yaml (cluster a only), the merge driver's attribute and the recipes, copied into
    // `ci/` as examples/README.md says (`gitops::Project::new`).
    let Project {
        remote,
        mate,
        run_a,
        run_b,
    } = Project::new(root, &tb.a_urls, &day, runner_b);
    let tip = || git(&remote, &["rev-parse", "trunk"]);
    // The locks and journals left (the record of finished journals stays, by design).
    let kco_refs = || {
        git(
            &remote,
            &[
                "for-each-ref",
                "--format=%(refname)",
                "refs/kco/locks/",
                "refs/kco/journals/",
            ],
        )
    };

    //    The connectors: three sources, the sink reading their topics, the archive reading t1.
    let (mut pipes, mut flow) = Pipes::start(&a, root, "kco-e2e-month");
    let archive_out = root.join("archive.out");
    let archive = unique_name("kco-e2e-month-archive");
    let archive_guard = a.create(&archive, file_sink_config(&archive_out, &pipes.topics[1]));
    pipes.guards.push(archive_guard);
    let (topics, sources, sink) = (&pipes.topics, &pipes.sources, &pipes.sink);
    let file_rel = format!("snapshots/a/{sink}.yaml");
    let archive_rel = format!("snapshots/a/{archive}.yaml");
    let archive_at = |n: usize| {
        let want = [None, Some(n as i64), None];
        a.wait_offsets(&archive, "the archive at the end of t1", |o| {
            by_topic(topics, o) == want
        });
    };
    archive_at(20);

    // What the sink holds: exactly the flow's end on the worker, once caught up, and in its
    // file each record as many times as the flow says (`gitops::Pipes::check`).
    let check = |flow: &Flow, what: &str| pipes.check(flow, what);
    check(&flow, "20 records on each topic");

    // Day 1. Runner A's nightly (finding 11: by path, on a detached HEAD, the branch from
    // KCO_BRANCH): every connector's file committed with the trailer, pushed to trunk.
    run_a.job();
    let (code, said) = run_a.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(tip(), run_a.head(), "pushed to trunk: {said}");
    let body = git(&remote, &["log", "-1", "--format=%B", "trunk"]);
    assert!(body.contains("Kco-Snapshot: a"), "{body}");
    assert_eq!(file_offsets(&run_a.dir.join(&file_rel), topics), flow.end());

    // Day 2, finding 1. Runner B backs the cluster up by hand, as getting-started.md's nightly
    // does: `kco snapshot`, `git add`, a plain `git commit` without any trailer, pushed.
    day.set(2);
    flow.feed(10);
    check(&flow, "30 on each topic");
    run_b.job();
    let (code, so, se) = run_b.env().kco(&["--cluster", "a", "snapshot"]).parts();
    assert_eq!(code, 0, "{so}{se}");
    run_b.git(&["add", "snapshots"]);
    run_b.git(&["commit", "-qm", "nightly backup"]);
    run_b.git(&["push", "-q", "origin", "HEAD:trunk"]);
    let by_hand = run_b.head();
    let body = run_b.git(&["log", "-1", "--format=%B"]);
    assert!(!body.contains("Kco-"), "no trailer: {body}");
    let (code, log, se) = run_b
        .env()
        .kco(&["--cluster", "a", "log", sink, "-o", "json"])
        .parts();
    assert_eq!(code, 0, "{log}{se}");
    let newest = &json(&log)["connectors"][0]["commits"][0];
    assert_eq!(newest["commit"], by_hand.as_str(), "{log}");
    assert_eq!(newest["kind"], "snapshot", "an observation: {newest}");
    //    Live moves past that file (35); runner A's apply on merge runs on the push: it finds
    //    nothing to apply, and the sink writes no record twice.
    flow.feed(5);
    check(&flow, "35 on each topic");
    run_a.job();
    let (code, said) = run_a.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("nothing to apply on cluster a"), "{said}");
    assert_eq!(tip(), by_hand, "nothing recorded: {said}");
    check(&flow, "a hand-committed nightly applied nothing");
    assert_eq!(a.state(sink), "RUNNING");

    // Day 3, finding 2. The teammate's PR #1 replays t0 from 25, by hand, re-sealed.
    day.set(3);
    let pr_file = mate.dir.join(&file_rel);
    let hand_change = |branch: &str, edits: &[(usize, Option<i64>)], msg: &str| {
        mate.git(&["checkout", "-q", "trunk"]);
        mate.git(&["pull", "-q", "--ff-only"]);
        mate.git(&["checkout", "-q", "-b", branch]);
        for (i, to) in edits {
            hand_edit_offset(&pr_file, &topics[*i], *to);
        }
        let (code, so, se) = mate
            .env()
            .kco(&["--cluster", "a", "fmt", &file_rel])
            .parts();
        assert_eq!(code, 0, "{so}{se}");
        mate.git(&["commit", "-qam", msg]);
        mate.git(&["push", "-q", "-u", "origin", branch]);
    };
    let merge = |branch: &str, title: &str| -> String {
        mate.git(&["checkout", "-q", "trunk"]);
        mate.git(&["pull", "-q", "--ff-only"]);
        mate.git(&["merge", "-q", "--no-ff", "-m", title, branch]);
        mate.git(&["push", "-q", "origin", "trunk"]);
        mate.head()
    };
    hand_change("pr-1", &[(0, Some(25))], "replay t0 from 25");
    //    While it is open, live moves on (40) and runner A's nightly lands on trunk.
    flow.feed(5);
    check(&flow, "40 on each topic");
    run_a.job();
    let (code, said) = run_a.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(tip(), run_a.head(), "{said}");
    //    The review, as the CI job runs it on the PR's checkout: against the merge base, only
    //    the PR's partition, labelled by what it does to live (40 -> 25).
    mate.git(&["checkout", "-q", "pr-1"]);
    mate.git(&["fetch", "-q"]);
    let body_file = root.join("review.md");
    let body_arg = body_file.to_str().unwrap();
    let accepted = [("PR_LABELS", "offsets-risk-accepted")];
    let (code, said) = mate.recipe("pr-review.sh", &["origin/trunk", body_arg], &accepted);
    assert_eq!(code, 0, "the label accepts it: {said}");
    let (code, report, se) = mate
        .env()
        .kco(&["diff", "--base", "origin/trunk", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "{report}{se}");
    let v = json(&report);
    let merge_base = mate.git(&["merge-base", "HEAD", "origin/trunk"]);
    assert_ne!(
        merge_base,
        tip(),
        "the nightly landed after the branch forked"
    );
    assert_eq!(v["base_commit"], merge_base.as_str(), "{report}");
    assert_eq!(v["summary"]["differences"], 1, "{report}");
    assert_eq!(v["summary"]["partitions_changed"], 1, "{report}");
    let labels = review(&report, sink);
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(
        (labels[0].0.as_str(), labels[0].1.as_str()),
        (topics[0].as_str(), "REPROCESSING")
    );
    let rewound = flow.lines[0] - 25;
    assert!(
        labels[0]
            .2
            .starts_with(&format!("at least {rewound} records")),
        "{labels:?}"
    );
    let body = std::fs::read_to_string(&body_file).unwrap();
    let connectors = v["summary"]["connectors"].as_u64().unwrap();
    assert!(
        body.contains(&format!(
            "**1 of {connectors} connectors differ**, 1 partition changed."
        )),
        "{body}"
    );
    assert!(
        body.contains("REPROCESSING accepted by the label"),
        "{body}"
    );
    //    Against trunk's tip (two dots) the nightly's progress would be listed too.
    let (_, tip_report, _) = mate
        .env()
        .kco(&["diff", "--base", "origin/trunk", "--tip", "-o", "json"])
        .parts();
    assert!(
        json(&tip_report)["summary"]["differences"].as_u64() > Some(1),
        "{tip_report}"
    );
    //    Merged, and applied on merge by runner B (the first apply: the changes since HEAD^,
    //    said so), recorded and pushed: t0 replayed from 25 once, nothing else.
    let merge1 = merge("pr-1", "Merge pull request #1");
    run_b.job();
    let (code, said) = run_b.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("no apply record of cluster a yet"), "{said}");
    let body = git(&remote, &["log", "-1", "--format=%B", "trunk"]);
    assert!(
        body.ends_with(&format!("Kco-Apply: a\nKco-Commit: {merge1}")),
        "{body}"
    );
    flow.rewind(0, 25);
    check(&flow, "PR #1 applied: t0 replayed from 25");
    a.wait_running(sink);

    // Day 4, finding 3. PR #2 replays t1 from 30 and is merged; before apply on merge runs,
    // live moves on (45) and the nightly lands on top of the merge.
    day.set(4);
    hand_change("pr-2", &[(1, Some(30))], "replay t1 from 30");
    let merge2 = merge("pr-2", "Merge pull request #2");
    flow.feed(5);
    check(&flow, "45 on each topic");
    run_a.job();
    let (code, said) = run_a.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    let nightly4 = tip();
    assert_ne!(
        nightly4, merge2,
        "the nightly is on top of the merge: {said}"
    );
    //    The sink stopped, so that what the apply writes can be read back as it is (kco keeps
    //    it STOPPED). Runner B's apply on merge still applies PR #2 (t1 at 30), and only it.
    a.stop(sink);
    run_b.job();
    let (code, said) = run_b.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    let body = git(&remote, &["log", "-1", "--format=%B", "trunk"]);
    assert!(
        body.ends_with(&format!("Kco-Apply: a\nKco-Commit: {nightly4}")),
        "{body}"
    );
    let l = flow.end();
    assert_eq!(
        by_topic(topics, &a.offsets(sink)),
        [l[0], Some(30), l[2]],
        "{said}"
    );
    assert_eq!(a.state(sink), "STOPPED");
    a.resume(sink);
    flow.rewind(1, 30);
    check(&flow, "PR #2 applied: t1 replayed from 30");
    //    A rerun applies nothing.
    let recorded = tip();
    run_b.job();
    let (code, said) = run_b.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("nothing to apply on cluster a"), "{said}");
    assert_eq!(tip(), recorded);
    check(&flow, "the rerun applied nothing");

    // Day 5, finding 4. PR #3 reverts PR #2 (`git revert -m 1`, the merge driver merging the
    // records since): t1 forward from 30 to 40, which live (45) has passed. The review says
    // LEFT; apply on merge leaves t1 where it is: no record of t1 written again.
    day.set(5);
    mate.git(&["checkout", "-q", "trunk"]);
    mate.git(&["pull", "-q", "--ff-only"]);
    mate.git(&["checkout", "-q", "-b", "revert-2"]);
    let (reverted, said) = git_may_fail(&mate.dir, &["revert", "--no-edit", "-m", "1", &merge2]);
    assert!(reverted, "{said}");
    assert_eq!(file_offsets(&pr_file, topics)[1], Some(40), "{said}");
    mate.git(&["push", "-q", "-u", "origin", "revert-2"]);
    let (_, report, se) = mate
        .env()
        .kco(&["diff", "--base", "origin/trunk", "-o", "json"])
        .parts();
    let labels = review(&report, sink);
    assert_eq!(labels.len(), 1, "{report}{se}");
    assert_eq!(
        (labels[0].0.as_str(), labels[0].1.as_str()),
        (topics[1].as_str(), "LEFT"),
        "{report}"
    );
    merge("revert-2", "Merge pull request #3");
    run_a.job();
    let (code, said) = run_a.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("left where it is"), "{said}");
    check(&flow, "the revert rewound nothing");
    assert_eq!(a.state(sink), "RUNNING");

    // Days 6 and 7, finding 6. During the day records flow (50 each), and the archive's
    // owner pauses it, past where last night's file has it. Runner A's nightly passes (exit
    // 0) and records it PAUSED, at the offset it was paused at; the next night, runner B's
    // (the branch it has checked out) commits nothing; the archive stays paused, its file of
    // records unchanged.
    day.set(6);
    flow.feed(5);
    check(&flow, "50 on each topic");
    archive_at(flow.lines[1]);
    let archived = flow.lines[1];
    a.pause(&archive);
    run_a.job();
    let (code, said) = run_a.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(tip(), run_a.head(), "{said}");
    let files = git(
        &remote,
        &["diff-tree", "--no-commit-id", "--name-only", "-r", "trunk"],
    );
    assert!(files.lines().any(|f| f == archive_rel), "{files}");
    let text = git(&remote, &["show", &format!("trunk:{archive_rel}")]);
    assert_eq!(file_state(&text), "PAUSED", "{text}");
    assert_eq!(
        text_offsets(&text, topics)[1],
        Some(archived as i64),
        "{text}"
    );
    day.set(7);
    let night6 = tip();
    run_b.job();
    let (code, said) = run_b.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("nothing moved on cluster a"), "{said}");
    assert_eq!(tip(), night6);
    assert_eq!(a.state(&archive), "PAUSED");

    // Day 8, findings 9 and 5. PR #4 skips t0 far ahead and drops t2: the review blocks it
    // (DATA LOSS, OFFSET RESET), it is merged anyway, and apply on merge refuses it.
    day.set(8);
    hand_change(
        "pr-4",
        &[(0, Some(400)), (2, None)],
        "skip t0 ahead, drop t2",
    );
    mate.git(&["fetch", "-q"]);
    let (code, said) = mate.recipe("pr-review.sh", &["origin/trunk", body_arg], &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("blocked: DATA LOSS, OFFSET RESET"), "{said}");
    let refused = merge("pr-4", "Merge pull request #4");
    flow.feed(5);
    check(&flow, "55 on each topic");
    run_b.job();
    let (code, said) = run_b.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("nothing applied on cluster a"), "{said}");
    assert_eq!(tip(), refused, "nothing committed: {said}");
    check(&flow, "the refused merge changed nothing");
    //    The nightly now finds the cluster behind trunk's files: exit 2, nothing committed,
    //    and its hint suggests a dry run, never an apply without review.
    run_a.job();
    let (code, said) = run_a.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("`kco --cluster a apply snapshots/a --dry-run`"),
        "{said}"
    );
    assert!(!said.contains("--yes"), "{said}");
    assert_eq!(tip(), refused);
    check(&flow, "the nightly changed nothing");
    //    Where the cluster had the sink at the refused merge: the version before it (what
    //    the cluster had), the refused change passed over and named.
    let at = commit_time(&remote, &refused);
    let had_text = git(&remote, &["show", &format!("{refused}^1:{file_rel}")]);
    let had = text_offsets(&had_text, topics);
    assert!(had.iter().all(Option::is_some), "{had_text}");
    let (code, shown, se) = run_b
        .env()
        .kco(&["--cluster", "a", "show", sink, "--at", &at, "-o", "json"])
        .parts();
    assert_eq!(code, 0, "{shown}{se}");
    let v = json(&shown);
    let entries = v["offsets"].as_array().unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(by_topic(topics, entries), had, "{shown}");
    let version = git(
        &remote,
        &[
            "log",
            "-1",
            "--first-parent",
            "--format=%H",
            &format!("{refused}^1"),
            "--",
            &file_rel,
        ],
    );
    assert_eq!(v["version"]["commit"], version.as_str(), "{shown}");
    let passed_over: Vec<&Value> = v["not_applied"].as_array().into_iter().flatten().collect();
    assert_eq!(passed_over.len(), 1, "{shown}");
    assert_eq!(passed_over[0]["commit"], refused.as_str(), "{shown}");
    let (code, text, se) = run_b
        .env()
        .kco(&["--cluster", "a", "show", sink, "--at", &at])
        .parts();
    assert_eq!(code, 0, "{text}{se}");
    assert!(
        text.contains("passed over 1 change not applied by then"),
        "{text}"
    );
    //    `apply --at --prune` puts the sink back there: each topic replayed from the version
    //    the cluster had, t0 not skipped to 400, t2 kept (not re-read from the start).
    let (code, so, se) = run_b
        .env()
        .kco(&[
            "--cluster",
            "a",
            "apply",
            &file_rel,
            "--at",
            &at,
            "--prune",
            "--yes",
        ])
        .parts();
    assert_eq!(code, 0, "{so}{se}");
    for (i, o) in had.iter().enumerate() {
        flow.rewind(i, o.unwrap());
    }
    check(&flow, "apply --at: what the cluster had");
    a.wait_running(sink);
    //    Unblocked as examples/README.md says: the refused merge passed over by an empty
    //    record, the cluster's offsets accepted by a snapshot; apply on merge then has
    //    nothing to do.
    run_b.job();
    run_b.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        &format!("skip {refused}"),
        "-m",
        &format!("Kco-Apply: a\nKco-Commit: {refused}"),
    ]);
    let (code, so, se) = run_b
        .env()
        .kco(&["--cluster", "a", "snapshot", "--commit"])
        .parts();
    assert_eq!(code, 0, "{so}{se}");
    run_b.git(&["push", "-q", "origin", "HEAD:trunk"]);
    run_a.job();
    let (code, said) = run_a.recipe("apply-on-merge.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("nothing to apply on cluster a"), "{said}");

    // Day 9, finding 10. PR #5 replays t2 from 40. Reviewed with the cluster out of reach
    // (a kco.yaml naming a closed port): the comment's headline and stderr say the labels
    // compare the files only; JSON says `files`. With the cluster reachable, `live`.
    day.set(9);
    hand_change("pr-5", &[(2, Some(40))], "replay t2 from 40");
    mate.git(&["fetch", "-q"]);
    std::fs::write(
        mate.dir.join("kco.unreachable.yaml"),
        format!(
            "clusters:\n  a:\n    urls: [http://127.0.0.1:{}]\n",
            closed_port()
        ),
    )
    .unwrap();
    let unreachable = [
        ("KCO_CONFIG", "kco.unreachable.yaml"),
        ("PR_LABELS", "offsets-risk-accepted"),
    ];
    let (code, said) = mate.recipe("pr-review.sh", &["origin/trunk", body_arg], &unreachable);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("warning: cannot read cluster `a`")
            && said.contains("the labels compare the files only"),
        "stderr says so: {said}"
    );
    let body = std::fs::read_to_string(&body_file).unwrap();
    assert!(
        body.contains("Labels compare the files only, not the cluster"),
        "{body}"
    );
    assert!(!body.contains("live offsets"), "{body}");
    let (_, report, _) = mate
        .env()
        .envs(&unreachable[..1])
        .kco(&["diff", "--base", "origin/trunk", "-o", "json"])
        .parts();
    assert_eq!(json(&report)["labels"]["against"], "files", "{report}");
    let (_, report, _) = mate
        .env()
        .kco(&["diff", "--base", "origin/trunk", "-o", "json"])
        .parts();
    assert_eq!(json(&report)["labels"]["against"], "live", "{report}");

    // Day 10, finding 7. PR #5 is merged; runner A's apply (the recipe's apply step) is
    // killed right after it stopped the sink: the sink STOPPED, A's lock and journal left on
    // the remote.
    day.set(10);
    let merge5 = merge("pr-5", "Merge pull request #5");
    let apply = [
        "--cluster",
        "a",
        "apply",
        "snapshots/a",
        "--unapplied",
        "--fail-on",
        "data-loss,reset",
        "--yes",
    ];
    let stop_ok = format!("{sink}: stop ok");
    run_a.job();
    assert!(run_a.killed_at(&apply, &stop_ok), "{stop_ok} never seen");
    a.wait_stopped(sink);
    let refs = kco_refs();
    assert!(
        refs.contains("refs/kco/journals/a") && refs.contains("refs/kco/locks/a"),
        "{refs}"
    );
    //    Runner B: its nightly refuses to record the stop (exit 2, naming the lock's holder
    //    and `kco recover`), a snapshot refuses while the journal is on the remote, nothing is
    //    committed, and the sink is still STOPPED at its offsets.
    run_b.job();
    let (code, said) = run_b.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains(&format!("{sink} (state_drifted)"))
            && said.contains("a kco operation holds the cluster's lock (refs/kco/locks/a")
            && said.contains("`kco recover`"),
        "{said}"
    );
    let (code, so, se) = run_b.env().kco(&["--cluster", "a", "snapshot"]).parts();
    assert_eq!(code, 1, "{so}{se}");
    assert!(se.contains("refs/kco/journals/a"), "{se}");
    assert_eq!(tip(), merge5);
    assert_eq!(a.state(sink), "STOPPED");
    assert_eq!(by_topic(topics, &a.offsets(sink)), flow.end());
    //    `kco recover` on runner B finishes A's journal: the sink RUNNING, no ref left.
    let (code, so, se) = run_b.env().kco(&["--cluster", "a", "recover"]).parts();
    assert_eq!(code, 0, "{so}{se}");
    let said = format!("{so}{se}");
    assert!(
        said.contains("did not finish") && said.contains(&format!("{sink}: RUNNING put back")),
        "{said}"
    );
    a.wait_running(sink);
    assert_eq!(kco_refs(), "", "{said}");
    check(&flow, "recovered: nothing replayed");
    //    The job retried on runner A, killed at the same step again; runner B's next
    //    operation (the apply, by hand) finishes the journal first, then applies PR #5 and
    //    records it, as examples/README.md spells it.
    run_a.job();
    assert!(run_a.killed_at(&apply, &stop_ok), "{stop_ok} never seen");
    a.wait_stopped(sink);
    run_b.job();
    let (code, so, se) = run_b.env().kco(&apply).parts();
    assert_eq!(code, 0, "{so}{se}");
    assert!(format!("{so}{se}").contains("did not finish"), "{so}{se}");
    let trailer = format!("Kco-Commit: {merge5}");
    let (code, so, se) = run_b
        .env()
        .kco(&[
            "--cluster",
            "a",
            "snapshot",
            "--commit",
            "--record",
            "apply",
            "--trailer",
            &trailer,
        ])
        .parts();
    assert_eq!(code, 0, "{so}{se}");
    run_b.git(&["push", "-q", "origin", "HEAD:trunk"]);
    flow.rewind(2, 40);
    check(&flow, "PR #5 applied once, after the recovery");
    a.wait_running(sink);
    assert_eq!(kco_refs(), "");

    // Day 11. The month ends with a nightly that records every state as the worker has it:
    // the sink and the sources RUNNING, the archive still PAUSED with only the records it had
    // read before its pause.
    day.set(11);
    flow.feed(5);
    check(&flow, "60 on each topic");
    run_b.job();
    let (code, said) = run_b.recipe("nightly-snapshot.sh", &["--push", "a"], &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(tip(), run_b.head(), "{said}");
    for (name, state) in sources
        .iter()
        .map(|s| (s.as_str(), "RUNNING"))
        .chain([(sink.as_str(), "RUNNING"), (archive.as_str(), "PAUSED")])
    {
        assert_eq!(a.state(name), state, "{name} on the worker");
        let text = git(
            &remote,
            &["show", &format!("trunk:snapshots/a/{name}.yaml")],
        );
        assert_eq!(file_state(&text), state, "{name}'s file: {text}");
    }
    let seen = written(&archive_out);
    let want: HashMap<String, usize> = (1..=archived).map(|n| (format!("t1-{n}"), 1)).collect();
    assert_eq!(seen, want, "the archive wrote t1 up to its pause, once");
    assert_eq!(kco_refs(), "");
    drop(pipes);
}
