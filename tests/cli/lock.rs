//! One lock every runner shares, through the binary: two clones of one git remote applying to
//! one cluster at once (one proceeds, the other fails naming the holder and sends nothing);
//! `recover` refusing at once while another kco holds the cluster; `kco lock status` and
//! `force-unlock`; and the line that says a lock is this machine's only.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::support::data::{sink_offset, SnapshotFile, SINK};
use crate::support::env::TestEnv;
use crate::support::fakes::sink_s;
use crate::support::git::git;
use crate::support::run::{wait_until, Kco};

/// A bare repository (the remote every runner pushes to) and `n` clones of it, each a kco
/// project: kco.yaml with cluster `a` at `fake`, and `snapshots/a/s.yaml` at 5.
struct Runners {
    dir: tempfile::TempDir,
    clones: Vec<TestEnv>,
}

impl Runners {
    fn new(fake: &FakeConnect, n: usize) -> Runners {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--bare", "remote.git"]);
        let clones = (0..n)
            .map(|i| {
                let name = format!("runner{i}");
                git(dir.path(), &["clone", "--quiet", "remote.git", &name]);
                let clone = dir.path().join(name);
                project_in(&clone, fake);
                TestEnv::at(clone)
            })
            .collect();
        Runners { dir, clones }
    }

    /// The lock refs on the remote.
    fn lock_refs(&self) -> String {
        git(
            &self.dir.path().join("remote.git"),
            &["for-each-ref", "--format=%(refname)", "refs/kco/locks/"],
        )
    }

    /// Runner 1's `apply snapshots/a`, killed (SIGKILL) once it sent its PATCH (held back
    /// meanwhile): the sink left STOPPED, its journal on the remote. The fault then cleared.
    fn first_killed_mid_apply(&self, fake: &FakeConnect) {
        fake.fault(Fault::on("PATCH", "/connectors/s/offsets").delay_ms(30_000));
        let first = self.clones[0]
            .cmd()
            .args(["--cluster", "a", "apply", "snapshots/a", "--yes"])
            .spawn();
        wait_until("the first apply to patch", || {
            fake.count("PATCH", "/connectors/s/offsets") > 0
        });
        first.kill9();
        fake.clear_faults();
    }

    /// The journal refs on the remote.
    fn journal_refs(&self) -> String {
        git(
            &self.dir.path().join("remote.git"),
            &["for-each-ref", "--format=%(refname)", "refs/kco/journals/"],
        )
    }
}

fn project_in(dir: &Path, fake: &FakeConnect) {
    std::fs::write(
        dir.join("kco.yaml"),
        format!("clusters:\n  a:\n    url: {}\n", fake.url()),
    )
    .unwrap();
    SnapshotFile::sink("s", sink_offset(5))
        .class(SINK)
        .write_in(&dir.join("snapshots/a"));
}

#[test]
fn two_clones_applying_at_once_one_proceeds_and_the_other_fails_naming_it_before_any_request() {
    let fake = sink_s(State::Running).start();
    fake.fault(
        Fault::on("PATCH", "/connectors/s/offsets")
            .nth(1)
            .delay_ms(4_000),
    );
    let r = Runners::new(&fake, 2);
    let first = r.clones[0]
        .cmd()
        .args(["--cluster", "a", "apply", "snapshots/a", "--yes"])
        .spawn();
    wait_until("the first apply to patch", || {
        fake.count("PATCH", "/connectors/s/offsets") > 0
    });
    assert_eq!(r.lock_refs(), "refs/kco/locks/a");
    let sent = fake.requests().len();
    // The second runner: refused before any request, naming the first.
    let (code, out) = r.clones[1]
        .kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    for part in [
        &format!(
            "cluster `a` is locked by another kco: pid {} on ",
            first.id()
        ),
        "refs/kco/locks/a on git remote `origin`",
        "`kco lock status --cluster a`",
        "`kco lock force-unlock ",
    ] {
        assert!(out.contains(part), "{part}: {out}");
    }
    assert!(!out.contains("Plan for cluster"), "{out}");
    // recover refuses at once too: it never waits on a connector another kco holds.
    let started = Instant::now();
    let (code, out) = r.clones[1]
        .kco(&["--cluster", "a", "recover"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("is locked by another kco: pid {}", first.id())),
        "{out}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(fake.requests().len(), sent, "{:?}", fake.requests());
    assert_eq!(fake.count("PUT", "/connectors/s/stop"), 1);
    // The first ends as the file says; the connector runs again, as it did before.
    let run = first.finish();
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(fake.offsets("s"), sink_offset(5));
    assert_eq!(fake.state("s"), Some(State::Running));
    assert_eq!(r.lock_refs(), "", "released");
    // Now the second runner goes ahead (nothing to change).
    let run = r.clones[1].kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.all().contains("No changes."), "{run}");
}

/// A lock a lost runner left on the remote, as its kco wrote it.
fn lost_runner_lock(clone: &Path, id: &str) {
    let tree = git(clone, &["mktree"]);
    let message = format!(
        "kco lock of cluster `a`\n\nid: {id}\ncluster: a\nrepo: origin\nhost: runner-9\npid: 4242\nuser: ci\njob: GITHUB_RUN_ID=77\nsince: 2026-11-30T23:00:00Z"
    );
    let commit = git(clone, &["commit-tree", &tree, "-m", &message]);
    git(
        clone,
        &[
            "push",
            "--quiet",
            "origin",
            &format!("{commit}:refs/kco/locks/a"),
        ],
    );
}

#[test]
fn a_lost_runners_lock_is_shown_by_status_and_removed_by_force_unlock_only_with_its_id() {
    let fake = sink_s(State::Running).start();
    let r = Runners::new(&fake, 1);
    let dir = &r.clones[0];
    let id = "0a1b2c3d4e5f6789";
    lost_runner_lock(dir.path(), id);
    let run = dir.kco(&["lock", "status"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.all(),
        "Locks are shared through git remote `origin`.\n\
         a: pid 4242 on runner-9 (user ci, CI job GITHUB_RUN_ID=77, since 2026-11-30T23:00:00Z), \
         lock id 0a1b2c3d4e5f6789 (remote: refs/kco/locks/a on git remote `origin`)\n"
    );
    let run = dir.kco(&["--cluster", "a", "lock", "status", "-o", "json"]);
    assert_eq!(run.code, 0, "{run}");
    let v: serde_json::Value = serde_json::from_str(&run.all()).unwrap();
    assert_eq!(v["remote"], "origin");
    assert_eq!(v["locks"][0]["id"], id);
    assert_eq!(v["locks"][0]["kind"], "remote");
    // An apply is refused naming it, with the id to force-unlock.
    let run = dir.kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.all().contains("pid 4242 on runner-9"), "{run}");
    assert!(
        run.all()
            .contains(&format!("`kco lock force-unlock {id} --cluster a`")),
        "{run}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    // A wrong id removes nothing; no terminal to ask on and no --yes: nothing either.
    let run = dir.kco(&["lock", "force-unlock", "ffff", "--yes"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.all().contains("no lock has id `ffff`"), "{run}");
    let run = dir.kco(&["lock", "force-unlock", id]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.all().contains("Pass --yes"), "{run}");
    assert_eq!(r.lock_refs(), "refs/kco/locks/a");
    let run = dir.kco(&["lock", "force-unlock", id, "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.all()
            .contains("Removed the lock of cluster `a` (refs/kco/locks/a on git remote `origin`)."),
        "{run}"
    );
    assert_eq!(r.lock_refs(), "");
    let run = dir.kco(&["lock", "status"]);
    assert_eq!(
        (run.code, run.all().contains("No lock is held.")),
        (0, true),
        "{run}"
    );
    let run = dir.kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(fake.offsets("s"), sink_offset(5));
}

#[test]
fn without_a_remote_the_lock_is_this_machines_only_and_a_change_says_so_once() {
    let fake = sink_s(State::Running).start();
    let dir = TestEnv::new();
    project_in(dir.path(), &fake);
    let say = "Locked cluster `a` on this machine only (the project is not in a git repository): \
               another clone applying to it at once is not kept out (docs/apply.md#locking)";
    // Reading and dry runs take no lock and say nothing of it.
    for args in [
        &["--cluster", "a", "diff"][..],
        &["--cluster", "a", "apply", "snapshots/a", "--dry-run"],
    ] {
        let run = dir.kco(args);
        assert!(!run.all().contains("this machine only"), "{args:?}: {run}");
    }
    let run = dir.kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.all().matches(say).count(), 1, "{run}");
    // A git repository with no remote.
    git(dir.path(), &["init", "--quiet"]);
    let run = dir.kco(&["--cluster", "a", "reset", "s", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.all()
            .contains("on this machine only (its git repository has no remote)"),
        "{run}"
    );
    let run = dir.kco(&["lock", "status"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.all(),
        "Locks are held on this machine only: its git repository has no remote.\nNo lock is held.\n"
    );
    // `lock: local` is a choice: nothing to say.
    dir.config(format!(
        "lock: local\nclusters:\n  a:\n    url: {}\n",
        fake.url()
    ));
    let run = dir.kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.all().contains("this machine only"), "{run}");
}

#[test]
fn a_remote_that_cannot_be_reached_refuses_the_change_before_any_request_and_says_which() {
    let fake = sink_s(State::Running).start();
    let dir = TestEnv::new();
    project_in(dir.path(), &fake);
    git(dir.path(), &["init", "--quiet"]);
    let gone = dir.path().join("gone.git");
    git(
        dir.path(),
        &["remote", "add", "origin", &gone.to_string_lossy()],
    );
    let run = dir.kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.all().contains(
            "error: cannot take or read the lock of cluster `a` on git remote `origin`: git push: "
        ),
        "{run}"
    );
    assert!(run.all().contains("`lock: local`"), "{run}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    assert!(
        !dir.path().join(".kco/locks/a.lock").exists(),
        "the local lock is let go"
    );
    let run = dir.kco(&["lock", "status"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.all()
            .contains("cannot read the cluster locks on git remote `origin`"),
        "{run}"
    );
}

/// Issue 33, finding 8: a project whose repository has a remote never falls back to a lock on
/// this machine because the `git` command cannot be run (an image without git): the change is
/// refused before any request, saying why and how; `lock: local` says it on purpose.
#[test]
fn without_the_git_command_a_project_with_a_remote_is_refused_not_downgraded() {
    let fake = sink_s(State::Running).start();
    let dir = TestEnv::new();
    project_in(dir.path(), &fake);
    git(dir.path(), &["init", "--quiet"]);
    git(
        dir.path(),
        &["remote", "add", "origin", "https://git.example/kco.git"],
    );
    let no_git = TestEnv::new();
    let run = |dir: &Path| {
        Kco::new(dir)
            .env("PATH", no_git.path())
            .args(["--cluster", "a", "apply", "snapshots/a", "--yes"])
            .run()
            .code_and_text()
    };
    let (code, out) = run(dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("is a git repository with the remote `origin` to share the lock through, but the `git` command cannot be run"),
        "{out}"
    );
    assert!(out.contains("`lock: local`"), "{out}");
    assert!(!out.contains("this machine only: the project"), "{out}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());

    // Said on purpose: the lock is this machine's, and the apply goes ahead.
    let yaml = std::fs::read_to_string(dir.path().join("kco.yaml")).unwrap();
    dir.config(format!("lock: local\n{yaml}"));
    let (code, out) = run(dir.path());
    assert_eq!(code, 0, "{out}");
}

/// Issue 33, finding 7: the journal travels with the shared lock. Runner 1 is killed while
/// the sink is STOPPED; on runner 2 a snapshot refuses to record that state (naming the
/// journal on the remote), `kco recover` puts the sink back RUNNING from runner 2's clone,
/// and the journal leaves the remote; then runner 2's apply goes ahead.
#[test]
fn a_runner_killed_mid_apply_is_finished_by_the_next_runner_from_the_journal_on_the_remote() {
    let fake = sink_s(State::Running).start();
    let r = Runners::new(&fake, 2);
    r.first_killed_mid_apply(&fake);
    assert_eq!(
        r.journal_refs(),
        "refs/kco/journals/a",
        "pushed before any change"
    );
    assert_eq!(fake.state("s"), Some(State::Stopped), "left stopped");

    // Runner 2's nightly: never records the STOPPED another runner's operation left.
    let run = r.clones[1].kco(&["--cluster", "a", "snapshot"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.all().contains("an interrupted operation on cluster `a` left 1 connector possibly out of their prior state (refs/kco/journals/a on git remote `origin`)"),
        "{run}"
    );
    // Runner 2 recovers from its own clone (the killed holder's lock is stale: same host),
    // naming where the journal really came from: the remote's ref, not its own `.kco`.
    let run = r.clones[1].kco(&["--cluster", "a", "recover"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.all().contains(
            "putting back the states it recorded in refs/kco/journals/a on git remote `origin`:"
        ),
        "{run}"
    );
    assert!(!run.all().contains(".kco/journal"), "{run}");
    assert_eq!(fake.state("s"), Some(State::Running), "{run}");
    assert_eq!(r.journal_refs(), "", "finished: {run}");
    assert_eq!(r.lock_refs(), "", "released: {run}");
    let run = r.clones[1].kco(&["--cluster", "a", "snapshot"]);
    assert_eq!(run.code, 0, "{run}");
    let run = r.clones[1].kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
}

/// Runner 1 killed mid-apply, the sink left STOPPED: its journal stays in its own `.kco` and
/// on the remote. Runner 2 applies, finishing the journal from the remote first.
fn killed_then_finished_elsewhere(fake: &FakeConnect, r: &Runners) {
    r.first_killed_mid_apply(fake);
    assert_eq!(fake.state("s"), Some(State::Stopped), "left stopped");
    assert!(r.clones[0].path().join(".kco/journal/a.json").exists());
    let run = r.clones[1].kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.all().contains("did not finish"), "{run}");
    assert_eq!(fake.state("s"), Some(State::Running), "{run}");
    assert_eq!(r.journal_refs(), "", "finished: {run}");
}

/// Crash safety across runners: once runner 2 finished runner 1's operation from the journal
/// on the remote, runner 1's own copy of that journal is recognised as finished (the remote
/// records who finished it) and dropped, saying so: it no longer blocks runner 1's snapshot,
/// and runner 1's `kco recover` never resumes the sink its owner has paused since.
#[test]
fn a_killed_runners_own_journal_is_dropped_once_another_runner_finished_it_on_the_remote() {
    let fake = sink_s(State::Running).start();
    let r = Runners::new(&fake, 2);
    killed_then_finished_elsewhere(&fake, &r);
    let stale = r.clones[0].path().join(".kco/journal/a.json");
    let kept = std::fs::read_to_string(&stale).unwrap();
    // The owner pauses the sink since.
    fake.set_state("s", State::Paused);
    fake.clear_requests();

    let finished_by = "was finished by pid ";
    let run = r.clones[0].kco(&["--cluster", "a", "recover"]);
    assert_eq!(run.code, 0, "{run}");
    for part in [
        "whose journal this checkout kept (.kco/journal/a.json)",
        finished_by,
        "(refs/kco/finished/a on git remote `origin`): its journal is dropped here",
        "Nothing to recover",
    ] {
        assert!(run.all().contains(part), "{part}: {run}");
    }
    assert_eq!(
        fake.state("s"),
        Some(State::Paused),
        "left as its owner set it"
    );
    assert!(
        fake.mutating_requests().is_empty(),
        "{:?}",
        fake.mutating_requests()
    );
    assert!(!stale.exists());

    // The same stale copy, and the nightly's snapshot on runner 1: it goes ahead, saying why.
    std::fs::write(&stale, &kept).unwrap();
    let run = r.clones[0].kco(&["--cluster", "a", "snapshot"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.all().contains(finished_by), "{run}");
    assert!(!stale.exists());
    let run = r.clones[0].kco(&["--cluster", "a", "snapshot"]);
    assert_eq!(
        (run.code, run.all().contains(finished_by)),
        (0, false),
        "said once: {run}"
    );
    assert_eq!(fake.state("s"), Some(State::Paused));
}

/// A dry run says what the real run would: while another runner's interrupted operation is
/// recorded on the remote, it refuses as it does for one in this checkout, naming the
/// journal's ref and that an apply finishes it first, without taking the lock or sending
/// anything; the real run then finishes it and applies.
#[test]
fn a_dry_run_refuses_while_another_runners_journal_is_on_the_remote_and_changes_nothing() {
    let fake = sink_s(State::Running).start();
    let r = Runners::new(&fake, 2);
    r.first_killed_mid_apply(&fake);
    fake.clear_requests();
    let lock_before = git(
        &r.dir.path().join("remote.git"),
        &["rev-parse", "refs/kco/locks/a"],
    );

    let run = r.clones[1].kco(&["--cluster", "a", "apply", "snapshots/a", "--dry-run"]);
    assert_eq!(run.code, 1, "{run}");
    for part in [
        "an interrupted operation on cluster `a` left 1 connector possibly out of their prior state (refs/kco/journals/a on git remote `origin`)",
        "any `kco apply` to it does so first",
    ] {
        assert!(run.all().contains(part), "{part}: {run}");
    }
    assert!(!run.all().contains("Plan for cluster"), "{run}");
    assert!(
        fake.mutating_requests().is_empty(),
        "{:?}",
        fake.mutating_requests()
    );
    assert_eq!(fake.state("s"), Some(State::Stopped));
    assert_eq!(r.journal_refs(), "refs/kco/journals/a", "left as it was");
    let lock_after = git(
        &r.dir.path().join("remote.git"),
        &["rev-parse", "refs/kco/locks/a"],
    );
    assert_eq!(lock_after, lock_before, "the lock was not taken");
    assert!(!r.clones[1].path().join(".kco/journal/a.json").exists());

    let run = r.clones[1].kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.all().contains("did not finish"), "{run}");
    assert_eq!(fake.state("s"), Some(State::Running));
    assert_eq!(r.journal_refs(), "");
}
