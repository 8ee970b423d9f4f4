//! The journal: written before the first stop, emptied as transactions end, kept for a
//! connector whose state could not be put back; and recovery from a journal left behind by a
//! run that died mid-way.

use std::time::Duration;

use super::journal::{self, JournalFile, Journaled};
use super::tests::{cluster, exec, fake_with, plan, src, state, want};
use super::*;
use crate::engine::recover::{entries_from_backup, recover, RecoverOutcome};
use crate::fake::{FakeConnect, State};
use crate::model::{ConnectorState, TargetState};

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
    let j = JournalFile::begin(dir.path(), &p, Some(dir.path()), "t0")
        .unwrap()
        .unwrap();
    let on_disk = journal::load(dir.path(), "a").unwrap().unwrap();
    assert_eq!(on_disk.connectors.len(), 12);
    assert_eq!(on_disk.connectors["c00"].prior_state, TargetState::Running);
    assert_eq!(on_disk.connectors["c11"].prior_state, TargetState::Paused);
    assert_eq!(on_disk.pid, std::process::id());
    // Nothing was sent to write it.
    fake.assert_no_mutations();
    let progress = Journaled::new(&j, &Silent);
    let opts = ExecOptions::new(false, 3, Duration::from_secs(30));
    let r = execute(
        &fake.client(),
        &p,
        &opts,
        &ManualClock::default(),
        &progress,
    )
    .unwrap();
    assert!(r.converged);
    assert!(j.remaining().is_empty());
    assert!(!journal::path(dir.path(), "a").exists(), "cleared");
}

#[test]
fn a_connector_whose_state_was_not_put_back_stays_in_the_journal() {
    let fake = cluster(State::Running);
    fake.set_resume_ignored(true);
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let j = JournalFile::begin(dir.path(), &p, None, "t0")
        .unwrap()
        .unwrap();
    let progress = Journaled::new(&j, &Silent);
    let opts = ExecOptions::new(false, 1, Duration::from_secs(5));
    let r = execute(
        &fake.client(),
        &p,
        &opts,
        &ManualClock::default(),
        &progress,
    )
    .unwrap();
    assert!(!r.converged);
    let left = journal::load(dir.path(), "a").unwrap().unwrap();
    assert_eq!(left.connectors["c"].prior_state, TargetState::Running);
    // The worker behaves again: recovery puts it back and says so.
    fake.set_resume_ignored(false);
    let rep = recover(
        &fake.client(),
        "a",
        "j",
        &left.connectors,
        &WaitPolicy::with_timeout(Duration::from_secs(5)),
        &ManualClock::default(),
    );
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
    let j = JournalFile::begin(dir.path(), &p, None, "t0")
        .unwrap()
        .unwrap();
    // What the dead process did before dying.
    for n in ["c00", "c01", "c02", "c11"] {
        fake.set_state(n, State::Stopped);
    }
    fake.set_offsets("c00", serde_json::to_value(vec![src("f", 99)]).unwrap());
    std::mem::forget(j);
    let left = journal::load(dir.path(), "a").unwrap().unwrap();
    assert_eq!(left.connectors.len(), 12);
    fake.clear_requests();
    let rep = recover(
        &fake.client(),
        "a",
        "j",
        &left.connectors,
        &WaitPolicy::with_timeout(Duration::from_secs(5)),
        &ManualClock::default(),
    );
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
    // Each state is asked for once (status may lag a stop the dead process sent: Connect
    // treats a resume of a running connector as nothing); offsets are not touched.
    let sent: Vec<String> = fake
        .mutating_requests()
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_eq!(sent.len(), 12, "{sent:?}");
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
    };
    let entries = [("c".to_string(), created)].into_iter().collect();
    let rep = recover(
        &fake.client(),
        "a",
        "j",
        &entries,
        &WaitPolicy::with_timeout(Duration::from_secs(5)),
        &ManualClock::default(),
    );
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
        if d == crate::engine::recover::SETTLE && !self.landed.swap(true, Ordering::SeqCst) {
            self.fake.set_state(self.name, State::Stopped);
        }
        self.clock.sleep(d);
    }
}

/// Status showed RUNNING (it lags), the resume was sent, then the dead process's stop
/// landed: recovery looks again once the states had time to settle, and resumes it again.
#[test]
fn a_stop_that_lands_after_recovery_is_undone() {
    let fake = cluster(State::Running);
    let entries = [(
        "c".to_string(),
        journal::JournalEntry {
            prior_state: TargetState::Running,
            created: false,
        },
    )]
    .into_iter()
    .collect();
    let clock = LateStop {
        clock: ManualClock::default(),
        fake: &fake,
        name: "c",
        landed: false.into(),
    };
    let rep = recover(
        &fake.client(),
        "a",
        "j",
        &entries,
        &WaitPolicy::with_timeout(Duration::from_secs(5)),
        &clock,
    );
    assert!(rep.ok, "{rep:?}");
    assert_eq!(rep.connectors[0].outcome, RecoverOutcome::Restored);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    assert_eq!(fake.count("PUT", "/connectors/c/resume"), 2);
}
