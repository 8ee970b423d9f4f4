//! Ordinary accidents of the pull-request flow cost no record, on the real test bed: two CI
//! runners and a teammate sharing one bare remote, the recipes of `examples/ci` run by path as
//! a CI job runs them (`gitops`), a FileStream sink reading three topics whose every record is
//! counted in its file.
//!
//! - A stale re-run: runner B re-runs apply on merge on its original checkout after runner A
//!   applied the merge and pushed its record: it says `Applied already`, applies and records
//!   nothing (the shared remote's mark of what was applied, read under the lock).
//! - A revert after the cluster moved on: a pull request rewinds t1 and is applied; a branch
//!   reverting it (forward) is merged after a nightly moved the file past the offset the
//!   revert restores, through kco's merge driver: the merge keeps the nightly, and apply on
//!   merge rewinds nothing. A revert straight on trunk has nothing to commit.
//! - One unsealed commit: a hand edit of t2 pushed without `kco fmt` stops apply on merge
//!   with the file named (nothing applied); its re-seal pushed after it is applied once (t2
//!   replayed once) and the queue moves on.
//!
//! The nightly recipe snapshots the whole cluster, so the test has the test bed to itself.

use std::cell::Cell;
use std::rc::Rc;

use crate::gitops::{Flow, Pipes, Project};
use crate::harness::{temp_dir, testbed_alone};
use crate::kco_steps::{file_offsets, hand_edit_offset};
use crate::support::git::git_may_fail;

#[test]
fn a_rerun_a_revert_and_an_unsealed_commit_write_no_record_twice() {
    let Some(tb) = testbed_alone() else { return };
    let a = tb.a();
    let root_dir = temp_dir();
    let root = root_dir.path();
    let day = Rc::new(Cell::new(1));
    let p = Project::new(root, &tb.a_urls, &day, None);
    let (mate, run_a, run_b) = (&p.mate, &p.run_a, &p.run_b);

    // Three sources, the sink reading their topics.
    let (pipes, mut flow) = Pipes::start(&a, root, "kco-e2e-acc");
    let (topics, sink) = (&pipes.topics, &pipes.sink);
    let file_rel = format!("snapshots/a/{sink}.yaml");
    let check = |flow: &Flow, what: &str| pipes.check(flow, what);
    check(&flow, "20 records on each topic");
    let recipe = |r: &crate::gitops::Runner, script: &str| {
        let args: &[&str] = match script {
            "nightly-snapshot.sh" | "apply-on-merge.sh" => &["--push", "a"],
            _ => unreachable!(),
        };
        r.recipe(script, args, &[])
    };
    let nightly = |r: &crate::gitops::Runner| {
        r.job();
        let (code, said) = recipe(r, "nightly-snapshot.sh");
        assert_eq!(code, 0, "{said}");
    };
    nightly(run_a);

    // The teammate's pull requests: a hand edit re-sealed (`kco fmt`) on a branch of trunk.
    let pr_file = mate.dir.join(&file_rel);
    let branch = |name: &str| {
        mate.git(&["checkout", "-q", "trunk"]);
        mate.git(&["pull", "-q", "--ff-only"]);
        mate.git(&["checkout", "-q", "-b", name]);
    };
    let fmt = || {
        let (code, so, se) = mate
            .env()
            .kco(&["--cluster", "a", "fmt", &file_rel])
            .parts();
        assert_eq!(code, 0, "{so}{se}");
    };
    let merge = |name: &str, title: &str| -> String {
        mate.git(&["checkout", "-q", "trunk"]);
        mate.git(&["pull", "-q", "--ff-only"]);
        let (merged, said) = git_may_fail(&mate.dir, &["merge", "--no-ff", "-m", title, name]);
        assert!(merged, "{said}");
        mate.git(&["push", "-q", "origin", "trunk"]);
        mate.head()
    };

    // 1. A stale re-run. PR #1 replays t0 from 10, merged; both runners' jobs check out the
    //    merge. Runner A applies it and pushes its record; runner B's re-run of the job, on
    //    its original checkout, applies nothing and records nothing.
    day.set(2);
    branch("pr-1");
    hand_edit_offset(&pr_file, &topics[0], Some(10));
    fmt();
    mate.git(&["commit", "-qam", "replay t0 from 10"]);
    let merge1 = merge("pr-1", "Merge pull request #1");
    run_a.job();
    run_b.job();
    assert_eq!(run_b.head(), merge1);
    let (code, said) = recipe(run_a, "apply-on-merge.sh");
    assert_eq!(code, 0, "{said}");
    flow.rewind(0, 10);
    check(&flow, "PR #1 applied: t0 replayed from 10");
    let recorded = p.tip();
    let (code, said) = recipe(run_b, "apply-on-merge.sh");
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("Applied already: "), "{said}");
    assert!(said.contains("no record written"), "{said}");
    assert_eq!(p.tip(), recorded, "a second record: {said}");
    let records = crate::support::git::git(
        &p.remote,
        &["log", "trunk", "--format=%H", "--grep=^Kco-Commit: "],
    );
    let of_merge1 = crate::support::git::git(
        &p.remote,
        &[
            "log",
            "trunk",
            "--format=%H",
            &format!("--grep=^Kco-Commit: {merge1}$"),
        ],
    );
    assert_eq!(of_merge1.lines().count(), 1, "{records}");
    check(&flow, "the stale re-run applied nothing");

    // 2. A revert after the cluster moved on. PR #2 replays t1 from 5, applied with the sink
    //    stopped (so that its record holds 5), then resumed: t1 read again up to 20.
    day.set(3);
    branch("pr-2");
    hand_edit_offset(&pr_file, &topics[1], Some(5));
    fmt();
    mate.git(&["commit", "-qam", "replay t1 from 5"]);
    let merge2 = merge("pr-2", "Merge pull request #2");
    a.stop(sink);
    run_a.job();
    let (code, said) = recipe(run_a, "apply-on-merge.sh");
    assert_eq!(code, 0, "{said}");
    a.resume(sink);
    flow.rewind(1, 5);
    check(&flow, "PR #2 applied: t1 replayed from 5");
    //    The teammate branches the revert of it from there: t1 back from 5 to 20 (forward).
    branch("revert-2");
    let (reverted, said) = git_may_fail(&mate.dir, &["revert", "--no-edit", "-m", "1", &merge2]);
    assert!(reverted, "{said}");
    assert_eq!(file_offsets(&pr_file, topics)[1], Some(20), "{said}");
    //    Before it is merged, live moves on (30) and the nightly lands on trunk.
    flow.feed(10);
    check(&flow, "30 on each topic");
    nightly(run_b);
    //    Merged through the driver: the nightly's 30 is past the revert's 20, so the merge
    //    keeps 30 and says why; apply on merge then rewinds nothing.
    mate.git(&["checkout", "-q", "trunk"]);
    mate.git(&["pull", "-q", "--ff-only"]);
    let (merged, said) = git_may_fail(
        &mate.dir,
        &[
            "merge",
            "--no-ff",
            "-m",
            "Merge pull request #3",
            "revert-2",
        ],
    );
    assert!(merged, "{said}");
    assert!(
        said.contains("the snapshot is already past it"),
        "the driver says why: {said}"
    );
    assert_eq!(file_offsets(&pr_file, topics)[1], Some(30), "{said}");
    mate.git(&["push", "-q", "origin", "trunk"]);
    run_a.job();
    let (code, said) = recipe(run_a, "apply-on-merge.sh");
    assert_eq!(code, 0, "{said}");
    check(&flow, "the merged revert rewound nothing");
    //    A revert straight on trunk, after the nightly and the record, has nothing to commit.
    mate.git(&["checkout", "-q", "trunk"]);
    mate.git(&["pull", "-q", "--ff-only"]);
    let (reverted, said) = git_may_fail(&mate.dir, &["revert", "--no-edit", "-m", "1", &merge2]);
    assert!(!reverted && said.contains("nothing to commit"), "{said}");
    let _ = git_may_fail(&mate.dir, &["revert", "--abort"]);
    mate.git(&["reset", "-q", "--hard", "origin/trunk"]);

    // 3. One unsealed commit. The teammate replays t2 from 15 by hand and pushes it to trunk
    //    without `kco fmt`: apply on merge stops, naming the file, and changes nothing.
    day.set(4);
    mate.git(&["checkout", "-q", "trunk"]);
    mate.git(&["pull", "-q", "--ff-only"]);
    hand_edit_offset(&pr_file, &topics[2], Some(15));
    mate.git(&["commit", "-qam", "replay t2 from 15 (not re-sealed)"]);
    mate.git(&["push", "-q", "origin", "trunk"]);
    let unsealed = p.tip();
    run_b.job();
    let (code, said) = recipe(run_b, "apply-on-merge.sh");
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&file_rel) && said.contains("checksum"),
        "{said}"
    );
    assert_eq!(p.tip(), unsealed, "nothing recorded: {said}");
    check(&flow, "the unsealed commit changed nothing");
    //    Its re-seal, pushed after it: the change is applied once, t2 replayed from 15, and
    //    the next run has nothing to do.
    fmt();
    mate.git(&["commit", "-qam", "kco fmt"]);
    mate.git(&["push", "-q", "origin", "trunk"]);
    run_b.job();
    let (code, said) = recipe(run_b, "apply-on-merge.sh");
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("passed over (cannot be taken: line ") && said.contains(&unsealed[..12]),
        "{said}"
    );
    flow.rewind(2, 15);
    check(
        &flow,
        "the re-sealed change applied once: t2 replayed from 15",
    );
    run_a.job();
    let (code, said) = recipe(run_a, "apply-on-merge.sh");
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("nothing to apply on cluster a"), "{said}");
    check(&flow, "the queue moved on");
    drop(pipes);
}
