//! The guarded operation: the journal written before the first stop, emptied as transactions
//! end, kept for a connector whose state could not be put back; recovery from a journal left
//! behind by a run that died mid-way, reading before it writes; the lock, the backup and the
//! refusals that no caller can skip.

use std::collections::BTreeMap;
use std::time::Duration;

use super::journal::{self, JournalFile, Journaled};
use super::recover::{entries_from_backup, recover, RecoverOutcome};
use super::*;
use crate::engine::apply::tests::{cluster, exec, fake_with, mutating, plan, src, state, want};
use crate::engine::apply::{backup, execute, Checked, Unheard, Want};
use crate::fake::{FakeConnect, Fault, State};
use crate::model::{ConnectorState, TargetState};
use crate::wait::ManualClock;

fn journal_path(dir: &tempfile::TempDir) -> PathBuf {
    StateDir::at(dir.path()).journal_path("a")
}

fn load(dir: &tempfile::TempDir) -> Option<Journal> {
    journal::load(&StateDir::at(dir.path()), "a").unwrap()
}

/// Recovery of `entries` on the fake as cluster `a`, waiting up to 5 s on `clock`.
fn recover_on(
    fake: &FakeConnect,
    entries: &BTreeMap<String, JournalEntry>,
    clock: &dyn Clock,
) -> RecoverReport {
    let wait = WaitPolicy::with_timeout(Duration::from_secs(5));
    recover(&fake.client(), "a", Path::new("j"), entries, &wait, clock)
}

/// The journal of `p` begun in `dir` (no backup named), as an operation writes it.
fn begin(dir: &tempfile::TempDir, p: &ApplyPlan) -> JournalFile {
    JournalFile::begin(&StateDir::at(dir.path()), p, None, "t0")
        .unwrap()
        .unwrap()
}

/// Executes `p`, `parallel` at a time, keeping journal `j` as transactions end and telling
/// `progress`.
fn execute_journaled(
    fake: &FakeConnect,
    p: &ApplyPlan,
    j: &JournalFile,
    parallel: usize,
    progress: &dyn OperationObserver,
) -> ApplyReport {
    let opts = ExecOptions::new(false, parallel, Duration::from_secs(30));
    let journaled = Journaled::new(j);
    execute(
        &fake.client(),
        p,
        &opts,
        &ManualClock::default(),
        &Both(&journaled, progress),
    )
    .unwrap()
}

/// A journal entry of a connector not created by the operation.
fn entry(prior_state: TargetState, started: bool) -> JournalEntry {
    JournalEntry {
        prior_state,
        created: false,
        started,
        request: None,
        definition: None,
    }
}

/// Journal entries by connector name.
fn entries<const N: usize>(list: [(&str, JournalEntry); N]) -> BTreeMap<String, JournalEntry> {
    list.into_iter().map(|(n, e)| (n.to_string(), e)).collect()
}

/// An observer that notes what `check` says at each step.
struct AtEachStep<F> {
    check: F,
    seen: std::sync::Mutex<Vec<bool>>,
}

impl<F: Fn() -> bool + Sync> AtEachStep<F> {
    fn new(check: F) -> Self {
        AtEachStep {
            check,
            seen: Default::default(),
        }
    }

    fn seen(self) -> Vec<bool> {
        self.seen.into_inner().unwrap()
    }
}

impl<F: Fn() -> bool + Sync> crate::engine::progress::Observer for AtEachStep<F> {}

impl<F: Fn() -> bool + Sync> OperationObserver for AtEachStep<F> {
    fn step(&self, _: &str, _: &crate::engine::apply::StepRecord) {
        self.seen.lock().unwrap().push((self.check)());
    }
}

fn twelve() -> FakeConnect {
    let names: Vec<String> = (0..12).map(|i| format!("c{i:02}")).collect();
    let specs: Vec<(&str, State, Vec<_>)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let st = if i == 11 {
                State::Paused
            } else {
                State::Running
            };
            (n.as_str(), st, vec![src("f", 10)])
        })
        .collect();
    fake_with("4.1.0", &specs)
}

fn wants_all(fake: &FakeConnect) -> Vec<Want> {
    fake.connector_names()
        .iter()
        .map(|n| want(n, vec![src("f", 99)]))
        .collect()
}

#[test]
fn the_journal_records_prior_states_before_any_change_and_is_cleared_at_the_end() {
    let fake = twelve();
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&fake, &wants_all(&fake), false, false);
    let j = JournalFile::begin(&StateDir::at(dir.path()), &p, Some(dir.path()), "t0")
        .unwrap()
        .unwrap();
    let on_disk = load(&dir).unwrap();
    assert_eq!(on_disk.connectors.len(), 12);
    assert_eq!(on_disk.connectors["c00"].prior_state, TargetState::Running);
    assert_eq!(on_disk.connectors["c11"].prior_state, TargetState::Paused);
    assert_eq!(on_disk.pid, std::process::id());
    // Nothing was sent to write it.
    fake.assert_no_mutations();
    let r = execute_journaled(&fake, &p, &j, 3, &Unheard);
    assert!(r.converged);
    assert!(j.remaining().is_empty());
    assert!(!journal_path(&dir).exists(), "cleared");
}

#[test]
fn a_connector_whose_state_was_not_put_back_stays_in_the_journal() {
    let fake = cluster(State::Running);
    fake.set_resume_ignored(true);
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let j = begin(&dir, &p);
    let r = execute_journaled(&fake, &p, &j, 1, &Unheard);
    assert!(!r.converged);
    let left = load(&dir).unwrap();
    assert_eq!(left.connectors["c"].prior_state, TargetState::Running);
    // The worker behaves again: recovery puts it back and says so.
    fake.set_resume_ignored(false);
    let rep = recover_on(&fake, &left.connectors, &ManualClock::default());
    assert!(rep.ok, "{rep:?}");
    assert_eq!(rep.connectors[0].outcome, RecoverOutcome::Restored);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
}

/// A run killed mid-way: the journal was written, four connectors were stopped (and one
/// patched), then nothing. Recovery puts back exactly the recorded states.
#[test]
fn recovery_after_a_run_that_died_mid_way_puts_every_state_back() {
    let fake = twelve();
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&fake, &wants_all(&fake), false, false);
    let j = begin(&dir, &p);
    // What the dead process did before dying.
    for n in ["c00", "c01", "c02", "c11"] {
        fake.set_state(n, State::Stopped);
    }
    fake.set_offsets("c00", serde_json::to_value(vec![src("f", 99)]).unwrap());
    std::mem::forget(j);
    let left = load(&dir).unwrap();
    assert_eq!(left.connectors.len(), 12);
    fake.clear_requests();
    let rep = recover_on(&fake, &left.connectors, &ManualClock::default());
    assert!(rep.ok, "{rep:?}");
    for n in fake.connector_names() {
        let want = if n == "c11" {
            ConnectorState::Paused
        } else {
            ConnectorState::Running
        };
        assert_eq!(state(&fake, &n), want, "{n}");
    }
    let restored: Vec<&str> = rep
        .connectors
        .iter()
        .filter(|c| c.outcome == RecoverOutcome::Restored)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(restored, ["c00", "c01", "c02", "c11"]);
    // Recovery reads before it writes: only the four out of their state are sent anything,
    // once each; offsets are not touched.
    let sent: Vec<String> = fake
        .mutating_requests()
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert!(
        sent.iter()
            .all(|s| s.contains("/resume") || s.contains("/c11/pause")),
        "{sent:?}"
    );
    assert_eq!(
        fake.offset("c00", &serde_json::json!({"filename": "f"})),
        Some(serde_json::json!({"position": 99}))
    );
}

#[test]
fn a_created_connector_is_left_stopped_and_the_backup_gives_the_states_when_the_journal_is_lost() {
    let fake = cluster(State::Running);
    fake.set_state("c", State::Stopped);
    let created = journal::JournalEntry {
        prior_state: TargetState::Running,
        created: true,
        started: false,
        request: None,
        definition: None,
    };
    let entries = entries([("c", created)]);
    let rep = recover_on(&fake, &entries, &ManualClock::default());
    assert_eq!(rep.connectors[0].outcome, RecoverOutcome::LeftCreated);
    assert_eq!(state(&fake, "c"), ConnectorState::Stopped);
    // A backup of a RUNNING connector says RUNNING.
    fake.set_state("c", State::Running);
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let dir = tempfile::tempdir().unwrap();
    backup::write(&p, dir.path(), "t").unwrap();
    let from_backup = entries_from_backup(dir.path()).unwrap();
    assert_eq!(from_backup["c"].prior_state, TargetState::Running);
    assert!(!from_backup["c"].created);
    let _ = exec(&fake, &p, false);
}

/// A clock whose first settle pause is when the stop a dead process sent lands.
struct LateStop<'a> {
    clock: ManualClock,
    fake: &'a FakeConnect,
    name: &'a str,
    landed: std::sync::atomic::AtomicBool,
}

impl crate::wait::Clock for LateStop<'_> {
    fn now(&self) -> std::time::Instant {
        self.clock.now()
    }
    fn sleep(&self, d: Duration) {
        use std::sync::atomic::Ordering;
        if d == super::recover::SETTLE && !self.landed.swap(true, Ordering::SeqCst) {
            self.fake.set_state(self.name, State::Stopped);
        }
        self.clock.sleep(d);
    }
}

/// Status showed RUNNING (it lags), so nothing was sent; then the dead process's stop
/// landed: recovery looks again once the states had time to settle, and resumes it.
#[test]
fn a_stop_that_lands_after_recovery_is_undone() {
    let fake = cluster(State::Running);
    let entries = entries([("c", entry(TargetState::Running, false))]);
    let clock = LateStop {
        clock: ManualClock::default(),
        fake: &fake,
        name: "c",
        landed: false.into(),
    };
    let rep = recover_on(&fake, &entries, &clock);
    assert!(rep.ok, "{rep:?}");
    assert_eq!(rep.connectors[0].outcome, RecoverOutcome::Restored);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    assert_eq!(fake.count("PUT", "/connectors/c/resume"), 1);
}

fn open(fake: &FakeConnect, dir: &tempfile::TempDir) -> Operation {
    Operation::open(
        &StateDir::at(dir.path()),
        "a",
        &|| Ok(fake.client()),
        &WaitPolicy::with_timeout(Duration::from_secs(5)),
        &ManualClock::default(),
    )
    .unwrap()
}

fn settings(dry_run: bool, refuse: Vec<Refuse>) -> Settings {
    Settings {
        dry_run,
        refuse,
        exec: ExecOptions::new(false, 2, Duration::from_secs(5)),
        backup_dir: None,
    }
}

fn checked(fake: &FakeConnect, pos: i64) -> Checked {
    let wants: Vec<Want> = fake
        .connector_names()
        .iter()
        .map(|n| want(n, vec![src("f", pos)]))
        .collect();
    crate::engine::apply::tests::checked("a", wants)
}

/// One RUNNING connector `c`, an operation opened on it in a fresh state directory, and the
/// plan that moves `c` to position `pos`.
fn planned(pos: i64) -> (FakeConnect, tempfile::TempDir, Operation, ApplyPlan) {
    let fake = cluster(State::Running);
    let dir = tempfile::tempdir().unwrap();
    let op = open(&fake, &dir);
    let plan = op
        .plan(&checked(&fake, pos), &PlanOptions::default())
        .unwrap();
    (fake, dir, op, plan)
}

/// Runs `plan` with no refusal and a yes to the confirmation, telling `progress`.
fn run_confirmed(op: &Operation, plan: &ApplyPlan, progress: &dyn OperationObserver) -> Ran {
    let mut yes = |_: &ApplyPlan| Ok(true);
    op.run(
        plan,
        &settings(false, vec![]),
        &mut yes,
        progress,
        &ManualClock::default(),
    )
    .unwrap()
}

/// Whatever the caller passes as progress, the run writes the backup (with its marker) and
/// the journal before the first change, and clears the journal at the end.
#[test]
fn every_run_backs_up_and_journals_before_the_first_change() {
    let (fake, dir, op, plan) = planned(42);
    let seen = AtEachStep::new(|| journal_path(&dir).exists());
    let ran = run_confirmed(&op, &plan, &seen);
    let Ran::Done(done) = ran else {
        panic!("{ran:?}")
    };
    assert!(done.report.converged);
    let seen = seen.seen();
    assert!(
        !seen.is_empty() && seen.iter().all(|&j| j),
        "journal during every step: {seen:?}"
    );
    assert!(!journal_path(&dir).exists(), "cleared at the end");
    let marker = backup::read_marker(&done.backup.dir).unwrap();
    assert_eq!(marker.cluster, "a");
    assert!(done.backup.dir.starts_with(dir.path().join("backups")));
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
}

/// A refusal, a dry run and a declined confirmation send nothing and write nothing.
#[test]
fn refusals_dry_runs_and_a_no_change_nothing() {
    let (fake, dir, op, plan) = planned(1);
    let mut asked = 0;
    let mut no = |_: &ApplyPlan| {
        asked += 1;
        Ok(false)
    };
    let clock = ManualClock::default();
    let refused = op
        .run(
            &plan,
            &settings(false, vec![Refuse::Reprocessing]),
            &mut no,
            &Unheard,
            &clock,
        )
        .unwrap();
    assert!(
        matches!(&refused, Ran::Refused(r) if r.len() == 1),
        "{refused:?}"
    );
    let dry = op
        .run(&plan, &settings(true, vec![]), &mut no, &Unheard, &clock)
        .unwrap();
    assert!(matches!(dry, Ran::DryRun));
    let declined = op
        .run(&plan, &settings(false, vec![]), &mut no, &Unheard, &clock)
        .unwrap();
    assert!(matches!(declined, Ran::Declined));
    assert_eq!(asked, 1, "asked only before a change");
    fake.assert_no_mutations();
    assert!(!dir.path().join("backups").exists());
    assert!(!journal_path(&dir).exists());
}

/// The worker refuses the stop (403, or a 500 that is not a timeout): the connector never
/// left RUNNING, so the transaction fails without a resume and leaves no journal behind.
#[test]
fn a_refused_stop_leaves_nothing_behind() {
    for (status, message) in [(403, "forbidden"), (500, "the herder failed")] {
        let fake = cluster(State::Running);
        fake.fault(
            Fault::on("PUT", "/connectors/c/stop")
                .always()
                .respond(status, message),
        );
        let dir = tempfile::tempdir().unwrap();
        let op = open(&fake, &dir);
        let plan = op
            .plan(&checked(&fake, 42), &PlanOptions::default())
            .unwrap();
        let ran = run_confirmed(&op, &plan, &Unheard);
        let Ran::Done(done) = ran else {
            panic!("{ran:?}")
        };
        assert!(!done.report.converged, "{status}");
        assert!(done.left.is_empty(), "{status}: {:?}", done.left);
        assert!(!journal_path(&dir).exists(), "{status}");
        assert_eq!(fake.count("PUT", "/connectors/c/resume"), 0, "{status}");
        assert_eq!(state(&fake, "c"), ConnectorState::Running);
        drop(op);
        // A later reader is not blocked.
        ensure_finished(&StateDir::at(dir.path()), "a").unwrap();
    }
}

/// Opening finishes an interrupted operation by reading first: a connector already back in
/// its state gets nothing; the journal goes once every state is back.
#[test]
fn opening_finishes_an_interrupted_operation_reading_before_writing() {
    let fake = fake_with(
        "4.1.0",
        &[
            ("c", State::Running, vec![src("f", 10)]),
            ("d", State::Stopped, vec![src("f", 10)]),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let all = checked(&fake, 99);
    let mut p = plan(&fake, all.wants(), false, false);
    // Both were RUNNING when the dead run recorded them.
    for c in &mut p.connectors {
        c.live_state = Some(ConnectorState::Running);
    }
    std::mem::forget(begin(&dir, &p));
    let e = ensure_finished(&StateDir::at(dir.path()), "a").unwrap_err();
    assert!(matches!(e, Error::Unfinished { connectors: 2, .. }), "{e}");
    fake.clear_requests();
    let op = open(&fake, &dir);
    let r = op.recovered().expect("a recovery");
    assert!(r.ok);
    assert_eq!(
        r.interrupted.as_ref().map(|i| i.pid),
        Some(std::process::id())
    );
    let outcomes: Vec<_> = r.connectors.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [RecoverOutcome::AlreadyThere, RecoverOutcome::Restored]
    );
    assert_eq!(mutating(&fake), ["PUT /connectors/d/resume"]);
    assert!(!journal_path(&dir).exists());
}

/// A journal whose connector cannot be put back (the worker refuses the resume) stays; the
/// plan is refused until it is finished, and `discard_journal` forgets it, naming it.
#[test]
fn an_unrecoverable_journal_refuses_plans_until_discarded() {
    let fake = cluster(State::Stopped);
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&fake, checked(&fake, 99).wants(), false, false);
    let mut p = p;
    p.connectors[0].live_state = Some(ConnectorState::Running);
    std::mem::forget(begin(&dir, &p));
    fake.fault(
        Fault::on("PUT", "/connectors/c/resume")
            .always()
            .respond(403, "forbidden"),
    );
    let op = open(&fake, &dir);
    assert!(!op.recovered().unwrap().ok);
    let e = op
        .plan(&checked(&fake, 5), &PlanOptions::default())
        .unwrap_err();
    assert!(matches!(e, Error::Unfinished { connectors: 1, .. }), "{e}");
    drop(op);
    let forgotten = discard(&StateDir::at(dir.path()), "a").unwrap().unwrap();
    assert_eq!(forgotten.connectors["c"].prior_state, TargetState::Running);
    assert!(!journal_path(&dir).exists());
    assert!(discard(&StateDir::at(dir.path()), "a").unwrap().is_none());
    fake.clear_faults();
}

/// While another process holds the lock, readers hear "in progress", not "interrupted".
#[test]
fn a_live_lock_is_an_operation_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::at(dir.path());
    let other = lock::Holder {
        pid: 1,
        host: "elsewhere".into(),
        since: "2026-12-01T00:00:00Z".into(),
        id: "0123456789abcdef".into(),
        user: None,
        job: None,
    };
    std::fs::create_dir_all(state.lock_path("a").parent().unwrap()).unwrap();
    std::fs::write(state.lock_path("a"), serde_json::to_string(&other).unwrap()).unwrap();
    let e = ensure_finished(&state, "a").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::InProgress { .. }), "{text}");
    assert!(
        text.contains("in progress") && text.contains("pid 1 on elsewhere"),
        "{text}"
    );
    assert!(ensure_finished(&state, "b").is_ok());
}

/// A connector whose transaction had started may have been sent a stop that status does not
/// show yet: recovery asks for its state even though status shows it (and a refusal then is
/// no failure); one whose transaction never started is only read.
#[test]
fn recovery_asks_again_for_a_started_connector_and_only_reads_the_others() {
    let fake = fake_with(
        "4.1.0",
        &[
            ("c", State::Running, vec![src("f", 10)]),
            ("d", State::Running, vec![src("f", 10)]),
        ],
    );
    let entries = entries([
        ("c", entry(TargetState::Running, true)),
        ("d", entry(TargetState::Running, false)),
    ]);
    let rep = recover_on(&fake, &entries, &ManualClock::default());
    assert!(rep.ok, "{rep:?}");
    assert_eq!(
        mutating(&fake),
        ["PUT /connectors/c/stop", "PUT /connectors/c/resume"]
    );
    assert_eq!(rep.connectors[0].outcome, RecoverOutcome::Restored);
    assert_eq!(rep.connectors[1].outcome, RecoverOutcome::AlreadyThere);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    // The worker refuses to stop or resume a connector that runs: no failure.
    fake.clear_requests();
    for verb in ["stop", "resume"] {
        fake.fault(
            Fault::on("PUT", &format!("/connectors/c/{verb}"))
                .always()
                .respond(403, "may not change it"),
        );
    }
    let rep = recover_on(&fake, &entries, &ManualClock::default());
    assert!(rep.ok, "{rep:?}");
    assert_eq!(rep.connectors[0].outcome, RecoverOutcome::AlreadyThere);
    assert!(rep.connectors[0].detail.contains("refused"), "{rep:?}");
    fake.clear_faults();
}

/// A stop the dead process sent can wait in the worker's request queue (behind a rebalance)
/// while status still shows RUNNING, and a resume does not cancel it: recovery's own stop,
/// answered only once the queue before it is worked through, fences it off before the
/// resume. Without that stop, the queued one would land after recovery and leave the
/// connector STOPPED.
#[test]
fn a_stop_still_queued_in_the_worker_lands_before_the_state_is_put_back() {
    let fake = fake_with(
        "4.1.0",
        &[
            ("c", State::Running, vec![src("f", 10)]),
            ("d", State::Paused, vec![src("f", 10)]),
        ],
    );
    fake.queue_stop("c");
    fake.queue_stop("d");
    let entries = entries([
        ("c", entry(TargetState::Running, true)),
        ("d", entry(TargetState::Paused, true)),
    ]);
    let rep = recover_on(&fake, &entries, &ManualClock::default());
    assert!(rep.ok, "{rep:?}");
    // The queue drains later (the rebalance ends): nothing is left in it to land.
    fake.land_queued_stops();
    assert_eq!(fake.state("c"), Some(State::Running));
    assert_eq!(fake.state("d"), Some(State::Paused));
    assert!(
        rep.connectors[0].detail.contains("stopped first"),
        "{rep:?}"
    );
}

/// A stop that got no answer (Connect's 90 s REST timeout while a rebalance holds its
/// queue) is still handled later, after the resume that put the state back: the run keeps
/// the connector in its journal, and the next operation's recovery fences that stop off and
/// puts RUNNING back.
#[test]
fn a_stop_without_an_answer_keeps_the_journal_until_the_next_command_puts_the_state_back() {
    let (fake, dir, op, plan) = planned(42);
    fake.queue_stop("c");
    fake.fault(Fault::on("PUT", "/connectors/c/stop").always().timeout());
    let ran = run_confirmed(&op, &plan, &Unheard);
    let Ran::Done(done) = ran else {
        panic!("{ran:?}")
    };
    let c = &done.report.connectors[0];
    assert!(!c.state_restored, "{c:?}");
    assert!(
        c.warnings.iter().any(|w| w.contains("may still land")),
        "{c:?}"
    );
    assert!(journal_path(&dir).exists(), "the journal keeps `c`");
    drop(op);
    // The rebalance ends: the queued stop lands after the resume, and stops are answered.
    fake.land_queued_stops();
    fake.clear_faults();
    assert_eq!(fake.state("c"), Some(State::Stopped));
    fake.clear_requests();
    let op = open(&fake, &dir);
    assert!(op.recovered().is_some_and(|r| r.ok));
    assert_eq!(
        mutating(&fake),
        ["PUT /connectors/c/stop", "PUT /connectors/c/resume"]
    );
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    assert!(!journal_path(&dir).exists());
}

/// The journal marks a connector started before its transaction's first request.
#[test]
fn the_journal_marks_each_transaction_started_before_it_sends_anything() {
    let fake = cluster(State::Running);
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let j = begin(&dir, &p);
    assert!(!load(&dir).unwrap().connectors["c"].started);
    let checks = AtEachStep::new(|| load(&dir).is_none_or(|j| j.connectors["c"].started));
    execute_journaled(&fake, &p, &j, 1, &checks);
    let seen = checks.seen();
    assert!(!seen.is_empty() && seen.iter().all(|&s| s), "{seen:?}");
}

/// The plan's listing may show a STOPPED connector as UNASSIGNED (a rebalance), which the
/// journal would take for RUNNING: the state the transaction reads before its first change
/// replaces it, so that recovery after a crash would not start a stopped connector.
#[test]
fn the_state_the_transaction_records_replaces_a_transient_one_in_the_journal() {
    let fake = cluster(State::Stopped);
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    p.connectors[0].live_state = Some(ConnectorState::Unassigned);
    let j = begin(&dir, &p);
    assert_eq!(
        load(&dir).unwrap().connectors["c"].prior_state,
        TargetState::Running
    );
    let prior_in_journal = AtEachStep::new(|| {
        load(&dir).map(|j| j.connectors["c"].prior_state) == Some(TargetState::Stopped)
    });
    let r = execute_journaled(&fake, &p, &j, 1, &prior_in_journal);
    assert!(r.converged, "{r:?}");
    let seen = prior_in_journal.seen();
    // Told at the end of each step: the state is recorded right after the first one.
    assert!(!seen[0], "{seen:?}");
    assert!(seen[1..].iter().all(|&s| s), "{seen:?}");
    assert_eq!(state(&fake, "c"), ConnectorState::Stopped);
}
