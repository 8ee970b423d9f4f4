//! Recovery of an operation on Confluent Cloud's contract: an asynchronous alter request a
//! run journaled is found by its status, never sent again, and the journal keeps a request
//! that is not over.

use std::time::Duration;

use super::journal::{self, JournalFile, Journaled};
use super::{Operation, StateDir};
use crate::client::AlterKind;
use crate::engine::apply::report::SentRequest;
use crate::engine::apply::tests::{offsets, src, state};
use crate::engine::apply::tests_cloud::{cloud, cloud_plan, cloud_with, patch, run, sent};
use crate::engine::apply::transaction::requests::exact_time;
use crate::engine::apply::{ApplyOutcome as Outcome, Observer, OperationObserver, Step};
use crate::engine::progress::Both;
use crate::fake::{FakeConnect, State};
use crate::model::ConnectorState;
use crate::wait::{ManualClock, WaitPolicy};

#[test]
fn a_request_stuck_pending_times_out_sends_nothing_more_and_the_journal_keeps_it() {
    let fake = cloud_with(&[("c", State::Running, vec![src("f", 10)])], |b| {
        b.alter_stuck("c")
    });
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    let dir = tempfile::tempdir().unwrap();
    let state_dir = StateDir::at(dir.path());
    let j = JournalFile::begin(&state_dir, &p, None, "t0")
        .unwrap()
        .unwrap();
    let c = run(&fake, &p, &Journaled::new(&j));
    assert_eq!(c.outcome, Outcome::Failed);
    assert_eq!(c.failed_step, Some(Step::WaitApplied));
    let error = c.error.clone().unwrap();
    assert!(
        error.contains("was still PENDING after 30s; kco sent nothing more"),
        "{error}"
    );
    assert_eq!(fake.alter_requests("c"), 1);
    assert_eq!(fake.mutating_requests().len(), 1, "{:?}", sent(&fake));
    assert!(c
        .pending_request
        .as_deref()
        .unwrap()
        .starts_with("PATCH of "));
    assert_eq!(offsets(&fake, "c"), vec![src("f", 10)]);
    // The journal keeps the connector and its request.
    let kept = journal::load(&state_dir, "a")
        .unwrap()
        .expect("journal kept");
    let entry = &kept.connectors["c"];
    let request = entry.request.as_ref().expect("the request is journaled");
    assert_eq!(request.kind, AlterKind::Patch);
    assert!(request.requested_at.is_some(), "{request:?}");
    // The request goes through later: the next command's recovery reads its status, sends no
    // other, verifies it, and sees the state back.
    fake.clear_alter_faults("c");
    fake.clear_requests();
    let op = open(&fake, &state_dir);
    let rep = op.recovered().expect("recovered");
    assert!(rep.ok, "{rep:#?}");
    let d = &rep.connectors[0].detail;
    assert!(
        d.contains("APPLIED") && d.contains("read back as requested"),
        "{d}"
    );
    assert_eq!(fake.alter_requests("c"), 1);
    assert!(fake.mutating_requests().is_empty(), "{:?}", sent(&fake));
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    assert!(journal::load(&state_dir, "a").unwrap().is_none());
}

fn open(fake: &FakeConnect, state_dir: &StateDir) -> Operation {
    let wait = WaitPolicy::with_timeout(Duration::from_secs(30));
    Operation::open(
        state_dir,
        "a",
        &|| Ok(fake.client()),
        &wait,
        &ManualClock::default(),
    )
    .unwrap()
}

/// What a run killed after sending its request leaves in `state_dir`: the journal of `p`,
/// `c`'s transaction started, the PATCH of `f` to 3 journaled (with when the service made
/// it, unless `with_id` is false: its answer lost) and sent. The service's answer.
fn killed_after_its_request(
    fake: &FakeConnect,
    state_dir: &StateDir,
    p: &crate::engine::apply::ApplyPlan,
    with_id: bool,
) -> crate::client::AlterRequest {
    let j = JournalFile::begin(state_dir, p, None, "t0")
        .unwrap()
        .unwrap();
    j.started("c").unwrap();
    let sent_at = crate::clock::now_rfc3339();
    let answer = fake
        .client()
        .request_alter("c", AlterKind::Patch, &[patch("f", 3)])
        .unwrap();
    let record = SentRequest {
        kind: AlterKind::Patch,
        requested_at: answer.requested_at.filter(|_| with_id).map(exact_time),
        sent_at,
    };
    j.requested("c", &record).unwrap();
    answer
}

#[test]
fn a_killed_run_is_recovered_by_reading_its_requests_status_not_by_sending_another() {
    for with_id in [true, false] {
        let fake = cloud();
        let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
        let dir = tempfile::tempdir().unwrap();
        let state_dir = StateDir::at(dir.path());
        killed_after_its_request(&fake, &state_dir, &p, with_id);
        fake.clear_requests();
        let op = open(&fake, &state_dir);
        let rep = op.recovered().expect("a journal was left");
        assert!(rep.ok, "{rep:#?}");
        let d = &rep.connectors[0].detail;
        assert!(
            d.contains("APPLIED at") && d.contains("its offsets read back as requested"),
            "{with_id}: {d}"
        );
        assert!(fake.mutating_requests().is_empty(), "{:?}", sent(&fake));
        assert_eq!(fake.alter_requests("c"), 1);
        assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 5)]);
        assert_eq!(state(&fake, "c"), ConnectorState::Running);
        assert!(journal::load(&state_dir, "a").unwrap().is_none());
    }
}

#[test]
fn recovery_tells_its_request_from_a_later_one_of_the_same_connector_whose_id_is_the_same() {
    // The status's `id` is the connector's: every request of `c` carries the same one. What
    // tells the journaled request from a later one is when the service says it was made.
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    let dir = tempfile::tempdir().unwrap();
    let state_dir = StateDir::at(dir.path());
    let ours = killed_after_its_request(&fake, &state_dir, &p, true);
    fake.finish_alter("c");
    // Someone else's request, a second later (the service dates requests to the second).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let theirs = fake
        .client()
        .request_alter("c", AlterKind::Patch, &[patch("f", 7)])
        .unwrap();
    assert_eq!(ours.id, theirs.id, "the service's id is the connector's");
    fake.finish_alter("c");
    let op = open(&fake, &state_dir);
    let rep = op.recovered().expect("a journal was left");
    let d = &rep.connectors[0].detail;
    assert!(
        d.contains("another one sent since") && d.contains("PATCH of "),
        "{rep:#?}"
    );
    assert_eq!(offsets(&fake, "c")[0], src("f", 7));
}

#[test]
fn recovery_reports_a_failed_request_as_nothing_changed() {
    let fake = cloud_with(&[("c", State::Running, vec![src("f", 10)])], |b| {
        b.alter_fails("c", "no such table")
    });
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    let dir = tempfile::tempdir().unwrap();
    let state_dir = StateDir::at(dir.path());
    killed_after_its_request(&fake, &state_dir, &p, true);
    let op = open(&fake, &state_dir);
    let rep = op.recovered().unwrap();
    assert!(rep.ok, "{rep:#?}");
    let d = &rep.connectors[0].detail;
    assert!(
        d.contains("FAILED (no such table); the offsets were not changed"),
        "{d}"
    );
    assert_eq!(offsets(&fake, "c"), vec![src("f", 10)]);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
}

#[test]
fn the_journal_records_the_request_before_it_is_sent_and_when_the_service_made_it_after() {
    struct Seen(std::sync::Mutex<Vec<Option<String>>>);
    impl Observer for Seen {}
    impl OperationObserver for Seen {
        fn requested(&self, _c: &str, r: &SentRequest) {
            self.0.lock().unwrap().push(r.requested_at.clone());
        }
    }
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    let dir = tempfile::tempdir().unwrap();
    let j = JournalFile::begin(&StateDir::at(dir.path()), &p, None, "t0")
        .unwrap()
        .unwrap();
    let seen = Seen(Default::default());
    let c = run(&fake, &p, &Both(Journaled::new(&j), &seen));
    assert_eq!(c.outcome, Outcome::Applied);
    let ids = seen.0.into_inner().unwrap();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids[0].is_none() && ids[1].is_some(), "{ids:?}");
    // The transaction ended with the state back: the journal is gone.
    assert!(!j.path().exists());
}
