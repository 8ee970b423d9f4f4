//! Issue 26, "Done when": the week of the pull-request flow on the real test bed. Nightly
//! commits while connectors run, a PR that rewinds one partition and removes another, a
//! nightly landing while the PR is open (merged by the driver), apply on merge, a revert PR,
//! two runners applying at once through a shared remote. In each step the worker ends exactly
//! where the reviewed change said, and nowhere else; a partition the revert moves forward is
//! left where live already passed it.
//!
//! One sink reads three single-partition topics (`t0/0`, `t1/0`, `t2/0`), each fed by a
//! FileStream source; records flow whenever the test appends lines to a source's file.

use std::path::{Path, PathBuf};

use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, temp_dir, testbed, unique_name,
};
use crate::kco_steps::{
    by_topic, clone, count, file_offsets, hand_edit_offset, merge_pr, one_goes_ahead, review,
    wait_live, write_config, Offs,
};
use crate::support::env::TestEnv;
use crate::support::git::{git, git_may_fail};

#[test]
fn a_week_of_pull_requests_moves_the_worker_exactly_where_each_reviewed_change_said() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let root_dir = temp_dir();
    let root = root_dir.path();

    // 1. A bare remote repo and clones (a nightly runner, a teammate, two apply runners),
    //    each with a kco.yaml for cluster a; the merge driver registered in the teammate's.
    git(root, &["init", "-q", "--bare", "-b", "main", "remote.git"]);
    let nightly = clone(root, "nightly");
    git(&nightly, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    write_config(&nightly, &tb);
    std::fs::write(
        nightly.join(".gitattributes"),
        "snapshots/**/*.yaml merge=kco\n",
    )
    .unwrap();
    std::fs::write(nightly.join(".gitignore"), ".kco/\n").unwrap();
    git(&nightly, &["add", "-A"]);
    git(&nightly, &["commit", "-qm", "kco for cluster a"]);
    git(&nightly, &["push", "-q", "-u", "origin", "main"]);
    let mate = clone(root, "teammate");
    git(&mate, &["config", "merge.kco.name", "kco snapshot files"]);
    let driver = format!(
        "{} merge-file %O %A %B --path %P",
        env!("CARGO_BIN_EXE_kco")
    );
    git(&mate, &["config", "merge.kco.driver", &driver]);
    let teammate = TestEnv::at(&mate).args(&["--cluster", "a"]);
    let runners = [clone(root, "runner1"), clone(root, "runner2")];

    //    A sink running on cluster a over three topic-partitions, records flowing.
    let topics: Vec<String> = (0..3)
        .map(|i| unique_name(&format!("kco-e2e-week-t{i}")))
        .collect();
    let inputs: Vec<PathBuf> = (0..3).map(|i| root.join(format!("in{i}.txt"))).collect();
    let mut lines = [0usize; 3];
    let mut feed = |add: [usize; 3]| {
        for i in 0..3 {
            if add[i] > 0 {
                let from = lines[i] + 1;
                lines[i] += add[i];
                append_lines(&inputs[i], &numbered(&format!("t{i}"), from..=lines[i]));
            }
        }
        lines.map(|n| Some(n as i64))
    };
    let mut guards = Vec::new();
    let fed = feed([20, 20, 20]);
    for i in 0..3 {
        guards.push(a.create(
            &unique_name(&format!("kco-e2e-week-src{i}")),
            file_source_config(&inputs[i], &topics[i]),
        ));
    }
    let out = root.join("sink.out");
    let sink_guard = a.create(
        &unique_name("kco-e2e-week-sink"),
        file_sink_config(&out, &topics.join(",")),
    );
    let sink = sink_guard.name().to_string();
    wait_live(&a, &sink, &topics, fed, "20 records on each topic");
    let file_rel = format!("snapshots/a/{sink}.yaml");

    // 2. Nightly: `kco snapshot --commit` + push, twice while the connectors run (the offsets
    //    advance between the nights).
    //    Each night at 02:00 UTC of its own day (kco's clock, so that `capturedAt` moves as it
    //    does from one night to the next).
    let night = |day: u32, expect: Offs| -> String {
        git(&nightly, &["pull", "-q", "--ff-only"]);
        let r = TestEnv::at(&nightly)
            .cmd()
            .env("KCO_NOW", format!("2026-11-{day:02}T02:00:00Z"))
            .args(["--cluster", "a", "snapshot", &sink, "--commit"])
            .run();
        assert_eq!(r.code, 0, "{r}");
        let body = git(&nightly, &["log", "-1", "--format=%B"]);
        assert!(body.contains("Kco-Snapshot: a"), "{body}");
        assert_eq!(
            file_offsets(&nightly.join(&file_rel), &topics),
            expect,
            "the nightly captured live"
        );
        git(&nightly, &["push", "-q", "origin", "main"]);
        git(&nightly, &["rev-parse", "HEAD"])
    };
    night(23, fed);
    let fed = feed([10, 10, 10]);
    wait_live(&a, &sink, &topics, fed, "30 on each topic");
    night(24, fed);

    // 3. The teammate opens a PR branch that rewinds one partition of the sink (t0: 30 -> 25)
    //    and removes another (t2), edited by hand and re-sealed with `kco fmt`.
    git(&mate, &["pull", "-q"]);
    git(&mate, &["checkout", "-q", "-b", "rewind-t0"]);
    let pr_file = mate.join(&file_rel);
    hand_edit_offset(&pr_file, &topics[0], Some(25));
    hand_edit_offset(&pr_file, &topics[2], None);
    let (code, so, se) = teammate.kco(&["fmt", &file_rel]).parts();
    assert_eq!(code, 0, "{so}{se}");
    let (code, so, se) = teammate.kco(&["validate", &file_rel]).parts();
    assert_eq!(code, 0, "re-sealed: {so}{se}");
    git(&mate, &["commit", "-qam", "replay t0 from 25, drop t2"]);
    git(&mate, &["push", "-q", "-u", "origin", "rewind-t0"]);

    //    Live moves on (35 each); `kco diff --base origin/main` against live: the rewound
    //    partition REPROCESSING by its distance from LIVE (35 -> 25: 10), the removed one
    //    OFFSET RESET, nothing else listed.
    let fed = feed([5, 5, 5]);
    wait_live(&a, &sink, &topics, fed, "35 on each topic");
    let (code, text, se) = teammate.kco(&["diff", "--base", "origin/main"]).parts();
    assert_eq!(code, 2, "differences: {text}{se}");
    assert!(
        text.contains(
            "Labels: what applying the change would do to the live offsets of cluster `a`"
        ),
        "{text}"
    );
    let (_, json, se) = teammate
        .kco(&["diff", "--base", "origin/main", "-o", "json"])
        .parts();
    let labels = review(&json, &sink);
    let labels_only: Vec<(&str, &str)> = labels
        .iter()
        .map(|(t, l, _)| (t.as_str(), l.as_str()))
        .collect();
    assert_eq!(
        labels_only,
        [
            (topics[0].as_str(), "REPROCESSING"),
            (topics[2].as_str(), "OFFSET RESET")
        ],
        "{json}{se}"
    );
    assert!(
        labels[0].2.starts_with("at least 10 records"),
        "running: a bound {labels:?}"
    );

    // 4. A nightly lands on main while the PR is open (40 each); the teammate merges
    //    origin/main: the driver merges without conflict, the rewind survives, the nightly's
    //    advance of the other partition is taken, the removal stays.
    let fed = feed([5, 5, 5]);
    wait_live(&a, &sink, &topics, fed, "40 on each topic");
    let nightly_sha = night(25, fed);
    git(&mate, &["fetch", "-q"]);
    let (merged, said) = git_may_fail(&mate, &["merge", "--no-edit", "origin/main"]);
    assert!(merged, "the driver merged: {said}");
    assert!(!said.contains("CONFLICT"), "{said}");
    assert!(
        said.contains(&format!("{}/0: kept our change", topics[0])),
        "the driver says which change won: {said}"
    );
    assert_eq!(
        file_offsets(&pr_file, &topics),
        [Some(25), Some(40), None],
        "{said}"
    );
    let (code, so, se) = teammate.kco(&["fmt", "--check", &file_rel]).parts();
    assert_eq!(code, 0, "the merge is sealed: {so}{se}");
    git(&mate, &["push", "-q", "origin", "rewind-t0"]);

    // 5. The PR is merged into main (a merge commit, --no-ff) and pushed.
    git(&mate, &["checkout", "-q", "main"]);
    git(&mate, &["pull", "-q", "--ff-only"]);
    let merge = merge_pr(&mate, "Merge pull request #1", "rewind-t0");

    //    Live moves past the nightly on t1 (45); the sink is stopped so that what the apply
    //    writes can be read back as it is (kco keeps it STOPPED).
    let fed = feed([0, 5, 0]);
    let before = wait_live(&a, &sink, &topics, fed, "t1 at 45");
    a.stop(&sink);
    let run = &runners[0];
    git(run, &["pull", "-q", "--ff-only"]);

    //    Apply on merge, as the recipe spells it (`--fail-on data-loss,reset`): refused on
    //    the OFFSET RESET, nothing changed.
    let apply = |dir: &Path, rev: &str, fail_on: &str| {
        TestEnv::at(dir)
            .kco(&[
                "--cluster",
                "a",
                "apply",
                "snapshots/a",
                "--commit",
                rev,
                "--fail-on",
                fail_on,
                "--yes",
            ])
            .parts()
    };
    let (code, so, se) = apply(run, &merge, "data-loss,reset");
    assert_eq!(code, 1, "{so}{se}");
    assert!(
        se.contains(&format!("{sink} {}/0: [OFFSET RESET]", topics[2])),
        "{so}{se}"
    );
    assert_eq!(
        by_topic(&topics, &a.offsets(&sink)),
        before,
        "refused: nothing changed"
    );

    //    With the reset accepted (`--fail-on data-loss`): the rewound partition at the PR's
    //    value, the removed one without an offset, the other where live had it (45, not last
    //    night's 40).
    let (code, so, se) = apply(run, &merge, "data-loss");
    assert_eq!(code, 0, "{so}{se}");
    // The plan shows the partitions the review showed, with the same labels.
    let planned = |t: &str, what: &str| {
        so.lines()
            .any(|l| l.contains(&format!("{t}/0:")) && l.contains(what))
    };
    assert!(planned(&topics[0], "[REPROCESSING] 15 records"), "{so}");
    assert!(planned(&topics[2], "[OFFSET RESET]"), "{so}");
    assert!(!so.contains(&format!("{}/0:", topics[1])), "{so}");
    assert!(
        so.contains("1 other partition not in the change, left as live has it"),
        "{so}"
    );
    wait_live(
        &a,
        &sink,
        &topics,
        [Some(25), Some(45), None],
        "the merge applied",
    );
    assert_eq!(a.state(&sink), "STOPPED", "left STOPPED as it was");

    //    `kco apply --commit <nightly>` applies nothing: a nightly is a record.
    let (code, so, se) = apply(run, &nightly_sha, "data-loss");
    assert_eq!(code, 0, "{so}{se}");
    assert!(
        format!("{so}{se}").contains("not a change anyone decided: nothing to apply"),
        "{so}{se}"
    );
    assert_eq!(
        by_topic(&topics, &a.offsets(&sink)),
        [Some(25), Some(45), None],
        "{so}{se}"
    );

    // 6. The sink runs again (t0 replays from 25, t2 from the start) and live moves on (45,
    //    50, 45). A revert PR (`git revert -m 1 <merge>`): its review against live labels it
    //    by its effect: t0's revert moves it forward (25 -> 40) and live is past 40, so it is
    //    LEFT at 45 (file against file says DATA LOSS); t2 comes back at 40: REPROCESSING 5.
    a.resume(&sink);
    let fed = feed([5, 5, 5]);
    wait_live(&a, &sink, &topics, fed, "45, 50, 45");
    a.stop(&sink);
    git(&mate, &["checkout", "-q", "-b", "revert-1"]);
    git(&mate, &["revert", "--no-edit", "-m", "1", &merge]);
    assert_eq!(
        file_offsets(&pr_file, &topics),
        [Some(40), Some(40), Some(40)]
    );
    git(&mate, &["push", "-q", "-u", "origin", "revert-1"]);
    let (_, json, se) = teammate
        .kco(&["diff", "--base", "origin/main", "-o", "json"])
        .parts();
    let live_labels = review(&json, &sink);
    let got: Vec<(&str, &str, &str)> = live_labels
        .iter()
        .map(|(t, l, m)| (t.as_str(), l.as_str(), m.as_str()))
        .collect();
    assert_eq!(got.len(), 2, "{json}{se}");
    assert_eq!((got[0].0, got[0].1), (topics[0].as_str(), "LEFT"), "{json}");
    assert_eq!(
        (got[1].0, got[1].1),
        (topics[2].as_str(), "REPROCESSING"),
        "{json}"
    );
    assert!(got[1].2.starts_with("5 records"), "{json}");
    let (_, json, _) = teammate
        .kco(&["diff", "--base", "origin/main", "--offline", "-o", "json"])
        .parts();
    let offline = review(&json, &sink);
    assert_eq!(offline[0].0, topics[0]);
    assert_eq!(offline[0].1, "DATA LOSS", "files only: 25 -> 40 {json}");

    //    The revert is merged and applied: t2 back to 40, t0 left at 45, t1 untouched (50).
    git(&mate, &["checkout", "-q", "main"]);
    let revert_merge = merge_pr(&mate, "Merge pull request #2", "revert-1");
    git(run, &["pull", "-q", "--ff-only"]);
    let (code, so, se) = apply(run, &revert_merge, "data-loss,reset");
    assert_eq!(code, 0, "{so}{se}");
    wait_live(
        &a,
        &sink,
        &topics,
        [Some(45), Some(50), Some(40)],
        "the revert applied",
    );

    // 7. The sink RUNNING again (back at 45, 50, 45) and the night's snapshot lands; a PR
    //    then replays t1 from 42 (a rewind from the 50 the file now has) and is merged.
    //    Two apply runners apply that merge at once through the shared remote: exactly one
    //    proceeds, the other fails fast naming the holder (exit 1).
    a.resume(&sink);
    wait_live(&a, &sink, &topics, fed, "caught up at 45, 50, 45");
    night(26, fed);
    git(&mate, &["pull", "-q", "--ff-only"]);
    git(&mate, &["checkout", "-q", "-b", "replay-t1"]);
    hand_edit_offset(&pr_file, &topics[1], Some(42));
    let (code, so, se) = teammate.kco(&["fmt", &file_rel]).parts();
    assert_eq!(code, 0, "{so}{se}");
    git(&mate, &["commit", "-qam", "replay t1 from 42"]);
    git(&mate, &["checkout", "-q", "main"]);
    let replay = merge_pr(&mate, "Merge pull request #3", "replay-t1");
    for r in &runners {
        git(r, &["pull", "-q", "--ff-only"]);
    }
    let written = |i: usize| -> Vec<usize> {
        (1..=lines[i])
            .map(|n| count(&out, &format!("t{i}-{n}")))
            .collect()
    };
    let others_before = (written(0), written(2));
    let apply = [
        "apply",
        "snapshots/a",
        "--commit",
        &replay,
        "--fail-on",
        "data-loss,reset",
        "--yes",
    ];
    one_goes_ahead(&runners, &apply, &root.join("remote.git"));

    //    The worker ends where the change said: t1 replayed from 42 (records 43..50 written
    //    a second time, none before), t0 and t2 never rewound again; the sink RUNNING, as it
    //    was; no lock left on the remote.
    a.wait_running(&sink);
    wait_live(&a, &sink, &topics, fed, "caught up again");
    for n in 43..=50 {
        assert!(count(&out, &format!("t1-{n}")) >= 2, "t1-{n} replayed");
    }
    for n in 1..=42 {
        assert_eq!(count(&out, &format!("t1-{n}")), 1, "t1-{n} not replayed");
    }
    assert_eq!(
        (written(0), written(2)),
        others_before,
        "t0 and t2 not replayed"
    );
    assert_eq!(a.state(&sink), "RUNNING");
    drop(sink_guard);
    drop(guards);
}
