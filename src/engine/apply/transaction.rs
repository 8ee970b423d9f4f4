//! One connector's transaction: record its state, stop it, wait for zero tasks, alter its
//! offsets, read them back, and put the state back. Any failure after the stop puts the
//! recorded state back too, and the report names the step that failed.

use std::time::Duration;

pub(crate) mod requests;

use super::plan::{Action, ConnectorPlan};
pub use super::report::{ApplyOutcome, ConnectorApply, Step, StepRecord};
use super::state::{poll_target, poll_tasks, RUNNING_ONCE};
pub use super::tx_error::TxError;

use super::report::OperationObserver;
use crate::client::{ChangeKind, Op, Service};
use crate::compare::{compare, PartitionKind};
use crate::engine::settle::settled_status;
use crate::model::{canonical_fields, OffsetEntry, TargetState};
use crate::wait::{until, Clock, Poll, WaitPolicy};

/// How a transaction behaves.
#[derive(Debug, Clone, Copy)]
pub struct TxOptions {
    pub prune: bool,
    /// For every wait for a state.
    pub wait: WaitPolicy,
    /// How many times a PATCH/DELETE that timed out (and was found not applied) is sent.
    pub alter_attempts: u32,
    /// After a connector is RUNNING again: how long its tasks may take to run.
    pub task_timeout: Duration,
}

/// How long reading back may take to show the new offsets.
const VERIFY_WINDOW: Duration = Duration::from_secs(15);

struct Failure {
    step: Step,
    error: TxError,
}

struct Tx<'a> {
    client: &'a dyn Service,
    /// The steps the service makes this connector's change with ([`Service::steps`]).
    ops: &'static [Op],
    plan: &'a ConnectorPlan,
    opts: &'a TxOptions,
    clock: &'a dyn Clock,
    progress: &'a dyn OperationObserver,
    report: ConnectorApply,
}

/// The report of a connector whose transaction was never started.
pub fn skipped(plan: &ConnectorPlan) -> ConnectorApply {
    ConnectorApply {
        outcome: ApplyOutcome::Skipped,
        error: Some("interrupted before it started; nothing was sent".into()),
        ..blank_report(plan)
    }
}

fn blank_report(plan: &ConnectorPlan) -> ConnectorApply {
    ConnectorApply {
        name: plan.name.clone(),
        action: plan.action.kind(),
        outcome: ApplyOutcome::NoChange,
        failed_step: None,
        error: None,
        prior_state: None,
        restored_state: None,
        state_restored: false,
        final_state: None,
        offsets_sent: false,
        warnings: plan.warnings.clone(),
        pending_request: None,
        mutating_calls: 0,
        steps: Vec::new(),
    }
}

/// Runs one connector's part of the plan: the steps its service makes the change with
/// ([`Service::steps`]), by the one executor.
pub fn run(
    client: &dyn Service,
    plan: &ConnectorPlan,
    opts: &TxOptions,
    clock: &dyn Clock,
    progress: &dyn OperationObserver,
) -> ConnectorApply {
    let (counting, mutating) = client.counting();
    let mut tx = Tx {
        client: &*counting,
        ops: &[],
        plan,
        opts,
        clock,
        progress,
        report: blank_report(plan),
    };
    match plan.action.change() {
        None => match &plan.action {
            Action::Error { message } => {
                tx.report.outcome = ApplyOutcome::Failed;
                tx.report.error = Some(message.clone());
            }
            _ => tx.report.state_restored = true,
        },
        Some(change) => {
            tx.ops = client.steps(change);
            tx.follow(change);
        }
    }
    tx.report.mutating_calls = mutating.get();
    tx.report
}

/// What the steps run so far found: the state to put back, and what later steps need.
#[derive(Default)]
struct Found {
    /// The state recorded (and whether the connector was fully stopped already).
    prior: Option<(TargetState, bool)>,
    /// When the service applied the last request ([`Op::RequestAlter`]).
    applied_at: Option<std::time::SystemTime>,
}

impl Tx<'_> {
    fn name(&self) -> &str {
        &self.plan.name
    }

    /// The step of the list that puts the state back: its own, else (a list that ends by
    /// deleting the connector) kco's after a stop kco sent, the service's otherwise.
    fn put_back(&self) -> Op {
        self.ops.iter().copied().find(|o| o.puts_back()).unwrap_or(
            match self.ops.contains(&Op::Stop) {
                true => Op::Restore,
                false => Op::AwaitRestore,
            },
        )
    }

    /// Runs the list's steps in order up to the one that puts the state back, then
    /// concludes: with that step after a change, or after a failure, with what undoes the
    /// steps taken (the recorded state put back; a created connector left STOPPED).
    fn follow(&mut self, change: ChangeKind) {
        let alter = match change {
            ChangeKind::Reset | ChangeKind::Delete => Step::Reset,
            ChangeKind::Patch | ChangeKind::Create => Step::Patch,
        };
        // A list that writes through Kafka runs as one write of every connector
        // (`Operation::run_topic`), never one connector at a time.
        if self.ops.is_empty() || self.ops.iter().any(|o| o.through_kafka()) {
            return self.fail(Failure {
                step: alter,
                error: TxError::NoSteps {
                    service: self.client.backend().service(),
                },
            });
        }
        let mut found = Found::default();
        let mut result = Ok(());
        for &op in self.ops {
            if op.puts_back() {
                break;
            }
            result = self.perform(op, alter, &mut found);
            if result.is_err() {
                break;
            }
        }
        match (change, found.prior) {
            (ChangeKind::Create, _) => self.conclude_create(result),
            (ChangeKind::Delete, Some(_)) if result.is_ok() => {
                self.report.outcome = ApplyOutcome::Applied;
                self.report.state_restored = true;
                self.report.final_state = Some("deleted".into());
            }
            (_, Some((prior, _))) => {
                // Read again when another request had to be waited for (its pause is not
                // ours).
                let prior = self.report.prior_state.unwrap_or(prior);
                let end = match (&result, &self.plan.action, change) {
                    (
                        Ok(()),
                        Action::Patch {
                            end_state: Some(end),
                            ..
                        },
                        ChangeKind::Patch,
                    ) => *end,
                    _ => prior,
                };
                self.after_change(prior, end, result);
            }
            // The state could not be recorded: nothing was sent.
            (_, None) => {
                if let Err(f) = result {
                    self.fail(f);
                }
            }
        }
    }

    /// One step of the list.
    fn perform(&mut self, op: Op, alter: Step, found: &mut Found) -> Result<(), Failure> {
        match op {
            Op::RecordState => {
                found.prior = Some(self.record_state()?);
                Ok(())
            }
            Op::Stop => self.hold(found.prior.is_some_and(|(_, stopped)| stopped)),
            Op::Alter => self.step(alter, |tx| tx.alter(alter)),
            Op::RequestAlter => {
                found.applied_at = self.alter_requests(alter)?;
                Ok(())
            }
            Op::Verify => self.step(Step::Verify, |tx| tx.verify(alter)),
            Op::VerifyObserved => {
                let at = found.applied_at;
                self.step(Step::Verify, |tx| tx.verify_observed(alter, at))
            }
            Op::Create => self.create_stopped(),
            Op::CreateAt => self.create_at(),
            Op::Delete => self.step(Step::Delete, |tx| {
                tx.client.delete(tx.name())?;
                Ok(((), "DELETE accepted: the connector is gone".into()))
            }),
            Op::Restore | Op::AwaitRestore | Op::CreateFrom => {
                unreachable!("the put-back step concludes")
            }
            Op::Describe | Op::DeleteKeeping | Op::WriteTopic => {
                unreachable!("a list that writes through Kafka fails before its first step")
            }
        }
    }

    fn step<T>(
        &mut self,
        step: Step,
        f: impl FnOnce(&mut Self) -> Result<(T, String), TxError>,
    ) -> Result<T, Failure> {
        let (result, ok, detail) = match f(self) {
            Ok((v, detail)) => (Ok(v), true, detail),
            Err(error) => {
                let detail = error.to_string();
                (Err(Failure { step, error }), false, detail)
            }
        };
        let record = StepRecord { step, ok, detail };
        self.progress.step(&self.plan.name, &record);
        self.report.steps.push(record);
        result
    }

    fn fail(&mut self, f: Failure) {
        self.report.outcome = ApplyOutcome::Failed;
        self.report.failed_step = Some(f.step);
        self.report.error = Some(f.error.to_string());
    }

    /// The state to put back, and whether the connector is already fully stopped.
    fn record_state(&mut self) -> Result<(TargetState, bool), Failure> {
        let (prior, stopped) = self.step(Step::RecordState, |tx| {
            let s = tx.client.status(tx.name())?;
            let s = settled_status(tx.client, tx.name(), s, tx.clock, &tx.opts.wait)
                .map_err(|source| TxError::Unsettled { source })?;
            let raw = || TxError::UnknownState {
                raw: s.raw_state.clone(),
            };
            let state = s.state.ok_or_else(raw)?;
            let detail = format!("{} (will be put back as {})", s.describe(), state.target());
            Ok(((state.target(), s.is_fully_stopped()), detail))
        })?;
        self.report.prior_state = Some(prior);
        self.progress.recorded(&self.plan.name, prior);
        Ok((prior, stopped))
    }

    /// Stops the connector and waits for it ([`Op::Stop`]).
    fn hold(&mut self, already_stopped: bool) -> Result<(), Failure> {
        if already_stopped {
            self.step(Step::Stop, |_| {
                Ok(((), "already stopped: nothing sent".into()))
            })?;
        } else {
            self.step(Step::Stop, |tx| {
                tx.client.stop(tx.name())?;
                Ok(((), "PUT /stop accepted".into()))
            })?;
        }
        self.wait_for(Step::WaitStopped, TargetState::Stopped)
    }

    /// Puts `prior` back after `changed` (or leaves it `end`, when that differs) and records
    /// the outcome. A service that pauses the connector itself puts it back too: kco waits
    /// for it, and asks only when it does not.
    fn after_change(&mut self, prior: TargetState, end: TargetState, changed: Result<(), Failure>) {
        if let Err(f) = &changed {
            if f.step == Step::Stop && f.error.had_no_effect() {
                // The stop was refused: the connector never left its state, so there is
                // nothing to put back (and nothing for a journal to keep).
                self.report.state_restored = true;
                self.read_final_state();
                return self.fail(changed.unwrap_err());
            }
            if matches!(f.error, TxError::AlterNotDone { .. }) {
                // A request still pending: the connector stays as it is until it is over.
                let restored = self.leave_pending(prior);
                return self.conclude(prior, changed, restored);
            }
        }
        if self.put_back() == Op::AwaitRestore {
            let restored = self.await_state(prior);
            let restored = match restored {
                Ok(()) if end != prior => self.restore(end),
                other => other,
            };
            return self.conclude(end, changed, restored);
        }
        // A stop with no answer may still wait in the worker's request queue, and Connect
        // writes a resume or pause at once: that stop could land after the state is put
        // back. The journal keeps the connector, and the next command's recovery stops it
        // first, which fences the stop off, before putting its state back.
        let stop_unanswered =
            matches!(&changed, Err(f) if f.step == Step::Stop && f.error.outcome_unknown());
        let restored = self.restore(end);
        if stop_unanswered && self.report.state_restored {
            self.report.state_restored = false;
            self.report.warnings.push(format!(
                "the stop of `{}` got no answer and may still land after {end} was put back: the journal keeps it, and the next kco command on this cluster (or `kco recover`) puts its state back",
                self.plan.name
            ));
        }
        self.conclude(end, changed, restored);
    }

    /// The outcome of a change and of putting `prior` back after it, then the final state.
    fn conclude(
        &mut self,
        prior: TargetState,
        changed: Result<(), Failure>,
        restored: Result<(), Failure>,
    ) {
        match (changed, restored) {
            (Ok(()), Ok(())) => self.report.outcome = ApplyOutcome::Applied,
            (Ok(()), Err(f)) | (Err(f), Ok(())) => self.fail(f),
            (Err(f), Err(r)) => self.fail(Failure {
                step: f.step,
                error: TxError::RestoreFailedToo {
                    first: Box::new(f.error),
                    prior,
                    step: r.step,
                    then: Box::new(r.error),
                },
            }),
        }
        self.read_final_state();
    }

    /// Creates the connector STOPPED and waits for it ([`Op::Create`]).
    fn create_stopped(&mut self) -> Result<(), Failure> {
        self.step(Step::Create, |tx| {
            let config = &tx.plan.config.as_ref().expect("a create has a config").0;
            match tx
                .client
                .create(tx.name(), config, Some(TargetState::Stopped))
            {
                Ok(()) => Ok(((), "created in the STOPPED state".into())),
                Err(e) if e.outcome_unknown() && tx.client.status(tx.name()).is_ok() => Ok((
                    (),
                    "the create timed out, but the connector exists now".into(),
                )),
                Err(e) => Err(e.into()),
            }
        })?;
        self.wait_for(Step::WaitStopped, TargetState::Stopped)
    }

    /// A created connector, once its offsets are verified: started in its start state by
    /// the list's put-back step. A failure leaves a connector created STOPPED as it is (it
    /// held nothing before).
    fn conclude_create(&mut self, result: Result<(), Failure>) {
        let start = match &self.plan.action {
            Action::Create { start_state, .. } => *start_state,
            _ => TargetState::Running,
        };
        let result = match result {
            Ok(()) if self.put_back() == Op::AwaitRestore => {
                let target = if start == TargetState::Stopped {
                    self.report.warnings.push(format!(
                        "{} has no STOPPED state: `{}` is left PAUSED",
                        self.service(),
                        self.plan.name
                    ));
                    TargetState::Paused
                } else {
                    start
                };
                // The service starts a new connector itself; a PAUSED one is asked for.
                match target {
                    TargetState::Running => self.await_state(target),
                    _ => self.restore(target),
                }
            }
            Ok(()) => self.restore(start),
            Err(f) => {
                if f.step != Step::Create && self.ops.contains(&Op::Create) {
                    self.report.warnings.push(format!(
                        "`{}` was created by this apply and is left STOPPED",
                        self.plan.name
                    ));
                }
                Err(f)
            }
        };
        match result {
            Ok(()) => self.report.outcome = ApplyOutcome::Applied,
            Err(f) => self.fail(f),
        }
        self.read_final_state();
    }

    /// Puts `target` back and waits for it.
    fn restore(&mut self, target: TargetState) -> Result<(), Failure> {
        self.report.restored_state = Some(target);
        self.step(Step::Restore, |tx| {
            let name = tx.name().to_string();
            let detail = match target {
                TargetState::Running => tx.client.resume(&name).map(|()| "PUT /resume accepted"),
                TargetState::Paused => tx.client.pause(&name).map(|()| "PUT /pause accepted"),
                TargetState::Stopped => Ok("stays STOPPED: nothing sent"),
            };
            Ok(((), detail?.to_string()))
        })?;
        self.wait_for(Step::WaitRestored, target)?;
        self.report.state_restored = true;
        if target == TargetState::Running {
            self.wait_tasks()?;
        }
        Ok(())
    }

    /// Waits until the resumed connector's tasks run (at least one, every one RUNNING on two
    /// reads in a row); a task that fails is a failure with its trace.
    fn wait_tasks(&mut self) -> Result<(), Failure> {
        let policy = WaitPolicy {
            timeout: self.opts.task_timeout,
            ..self.opts.wait
        };
        self.step(Step::WaitTasks, |tx| {
            let mut seen_running = false;
            let s = until(tx.clock, &policy, || {
                let polled = poll_tasks(tx.client.status(tx.name()), seen_running);
                seen_running = matches!(polled, Poll::Pending(ref d) if d == RUNNING_ONCE);
                polled
            })
            .map_err(|source| TxError::Tasks { source })?;
            let seen = s.describe();
            tx.report.final_state = Some(seen.clone());
            Ok(((), seen))
        })
    }

    fn wait_for(&mut self, step: Step, target: TargetState) -> Result<(), Failure> {
        let policy = self.opts.wait;
        self.step(step, |tx| {
            let s = until(tx.clock, &policy, || {
                poll_target(tx.client.status(tx.name()), target)
            })
            .map_err(|source| TxError::Wait { target, source })?;
            let seen = s.describe();
            tx.report.final_state = Some(seen.clone());
            Ok(((), seen))
        })
    }

    fn read_final_state(&mut self) {
        if let Ok(s) = self.client.status(self.name()) {
            self.report.final_state = Some(s.describe());
        }
    }

    /// PATCH (or DELETE) what the live offsets, read now that the connector is stopped, lack.
    /// A request that timed out may have worked: read back before sending it again.
    fn alter(&mut self, step: Step) -> Result<((), String), TxError> {
        let name = self.name().to_string();
        // The offsets before the request, to tell a refusal that changed nothing.
        let mut before = None;
        let entries = if step == Step::Reset {
            Vec::new()
        } else {
            let live = self.read_offsets()?;
            let entries = (self.plan).entries(&compare(&self.plan.wanted, &live), self.prunes());
            if entries.is_empty() {
                return Ok(((), "live offsets already as wanted: nothing sent".into()));
            }
            self.note_leftovers(&entries);
            before = Some(live);
            entries
        };
        let attempts = self.opts.alter_attempts.max(1);
        let mut notes = Vec::new();
        for attempt in 1..=attempts {
            self.report.offsets_sent = true;
            let sent = if step == Step::Reset {
                self.client.reset_offsets(&name)
            } else {
                self.client.patch_offsets(&name, &entries)
            };
            match sent {
                Ok(ack) => {
                    if ack.externally_managed() {
                        self.report.warnings.push(ack.message);
                    }
                    let what = if step == Step::Reset {
                        "DELETE accepted".to_string()
                    } else {
                        let nulls = entries.iter().filter(|e| e.offset.is_none()).count();
                        format!(
                            "PATCH of {} ({nulls} null) accepted",
                            crate::text::count(entries.len(), "partition")
                        )
                    };
                    notes.push(what);
                    return Ok(((), notes.join("; ")));
                }
                Err(e) if e.outcome_unknown() => {
                    let live = self.read_offsets()?;
                    if self.mismatches(step, &live).is_empty() {
                        notes.push(format!("{e}; read back: already applied"));
                        return Ok(((), notes.join("; ")));
                    }
                    notes.push(format!("{e}; read back: not applied"));
                    if attempt == attempts {
                        return Err(TxError::Alter { attempts: notes });
                    }
                }
                Err(e) if notes.is_empty() => {
                    // Refused outright (4xx): nothing was changed. An error of the worker's
                    // (5xx) may have changed some: read back, the offsets say which.
                    let error = TxError::from(e);
                    self.report.offsets_sent = !error.refused() && !self.unchanged(&before);
                    return Err(error);
                }
                Err(e) => {
                    notes.push(e.to_string());
                    return Err(TxError::Alter { attempts: notes });
                }
            }
        }
        unreachable!("the loop returns on its last attempt")
    }

    /// Whether partitions live has and the file lacks are removed: with `--prune`, and always
    /// for a connector this apply creates. Offsets a deleted connector of the same name left
    /// (in the workers' offsets topic, or a sink's consumer group) show up once it exists
    /// again: the file's offsets replace them, never merge with them.
    fn prunes(&self) -> bool {
        self.opts.prune || matches!(self.plan.action, Action::Create { .. })
    }

    /// Says, for a connector this apply creates, which offsets of an earlier connector of its
    /// name the PATCH removes.
    fn note_leftovers(&mut self, entries: &[crate::model::PatchEntry]) {
        if !matches!(self.plan.action, Action::Create { .. }) {
            return;
        }
        let left: Vec<String> = entries
            .iter()
            .filter(|e| e.offset.is_none())
            .map(|e| canonical_fields(&e.partition))
            .collect();
        if !left.is_empty() {
            self.report.warnings.push(format!(
                "`{}` had offsets left by an earlier connector of its name ({}): removed, so that the file's offsets replace them: {}",
                self.plan.name,
                crate::text::count(left.len(), "partition"),
                summarize(&left)
            ));
        }
    }

    /// Whether the live offsets, read now, are still `before` (partition for partition);
    /// `false` when they cannot be read, or `before` is not known.
    fn unchanged(&self, before: &Option<Vec<OffsetEntry>>) -> bool {
        let Some(before) = before else { return false };
        let key = |e: &OffsetEntry| {
            (
                crate::model::canonical_json(
                    &serde_json::to_value(&e.partition).unwrap_or_default(),
                ),
                crate::model::canonical_json(&serde_json::to_value(&e.offset).unwrap_or_default()),
            )
        };
        let set = |v: &[OffsetEntry]| v.iter().map(key).collect::<std::collections::BTreeSet<_>>();
        self.client
            .offsets(self.name())
            .is_ok_and(|now| set(&now) == set(before))
    }

    fn read_offsets(&self) -> Result<Vec<OffsetEntry>, TxError> {
        self.client
            .offsets(self.name())
            .map_err(TxError::ReadOffsets)
    }

    /// Reads the offsets back until they are as wanted (Connect may show a write late).
    fn verify(&mut self, step: Step) -> Result<((), String), TxError> {
        let policy = self.opts.wait.capped(VERIFY_WINDOW);
        until(self.clock, &policy, || {
            match self.client.offsets(self.name()) {
                Ok(live) => {
                    let bad = self.mismatches(step, &live);
                    if bad.is_empty() {
                        Poll::Ready(live)
                    } else {
                        Poll::Pending(summarize(&bad))
                    }
                }
                Err(e) => Poll::Pending(format!("reading offsets: {e}")),
            }
        })
        .map(|live| {
            self.note_others(step, &live);
            let read = crate::text::count(live.len(), "partition");
            let now = self.now_at(step, &live);
            ((), format!("read back: {read}, as wanted{now}"))
        })
        .map_err(TxError::NotVerified)
    }

    /// Partitions whose live offset is not what this step wants, described.
    fn mismatches(&self, step: Step, live: &[OffsetEntry]) -> Vec<String> {
        let wanted: &[OffsetEntry] = if step == Step::Reset {
            &[]
        } else {
            &self.plan.wanted
        };
        let prune = self.prunes() || step == Step::Reset;
        let sent = self.sent_partitions(step);
        compare(wanted, live)
            .into_iter()
            .filter(|d| {
                sent.as_ref()
                    .is_none_or(|s| s.contains(&canonical_fields(&d.partition)))
            })
            .filter(|d| match d.kind {
                PartitionKind::Unchanged => false,
                PartitionKind::OnlyActual => prune || self.plan.removes(d, false),
                // Live moved past a forward change's target since the plan: left, not wrong.
                _ => !self.plan.passed(d),
            })
            .map(|d| {
                format!(
                    "{} wanted {} live {}",
                    canonical_fields(&d.partition),
                    shown(&d.wanted),
                    shown(&d.actual)
                )
            })
            .collect()
    }
}

impl Tx<'_> {
    /// The partitions this step changes (`None`: every one, as a reset or a create does):
    /// only these are verified. A wanted partition the plan found in place was not sent, and
    /// another client may move it meanwhile.
    fn sent_partitions(&self, step: Step) -> Option<std::collections::BTreeSet<String>> {
        match (&self.plan.action, step) {
            (crate::engine::apply::plan::Action::Patch { entries, .. }, Step::Patch) => Some(
                entries
                    .iter()
                    .map(|e| canonical_fields(&e.partition))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The offsets read back of the partitions this step sent (all, for a create), for the
    /// verify step's detail: `: {"p":1} at {"o":3}; ...` (three at most, then how many more);
    /// empty for a reset, whose read back is empty.
    fn now_at(&self, step: Step, live: &[OffsetEntry]) -> String {
        if step == Step::Reset {
            return String::new();
        }
        let sent = self.sent_partitions(step);
        let shown: Vec<String> = live
            .iter()
            .filter(|e| {
                sent.as_ref()
                    .is_none_or(|s| s.contains(&canonical_fields(&e.partition)))
            })
            .map(|e| {
                format!(
                    "{} at {}",
                    canonical_fields(&e.partition),
                    canonical_fields(&e.offset)
                )
            })
            .collect();
        match shown.is_empty() {
            true => String::new(),
            false => format!(": {}", summarize(&shown)),
        }
    }

    /// Wanted partitions kco did not send whose offset another client changed since the
    /// plan: said in the report, not a failure of this transaction.
    fn note_others(&mut self, step: Step, live: &[OffsetEntry]) {
        let Some(sent) = self.sent_partitions(step) else {
            return;
        };
        let others: Vec<String> = compare(&self.plan.wanted, live)
            .into_iter()
            .filter(|d| d.kind != PartitionKind::Unchanged && d.wanted.is_some())
            .filter(|d| !sent.contains(&canonical_fields(&d.partition)))
            .map(|d| {
                format!(
                    "{}: {} when planned, {} now",
                    canonical_fields(&d.partition),
                    shown(&d.wanted),
                    shown(&d.actual)
                )
            })
            .collect();
        if !others.is_empty() {
            self.report.warnings.push(format!(
                "another client changed {} that kco did not send (left as they are): {}",
                crate::text::count(others.len(), "partition"),
                summarize(&others)
            ));
        }
    }
}

/// An offset as a message shows it: canonical JSON, or `none`.
fn shown(f: &Option<crate::model::Fields>) -> String {
    match f {
        Some(m) => canonical_fields(m),
        None => "none".into(),
    }
}

fn summarize(bad: &[String]) -> String {
    let mut s = bad.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    if bad.len() > 3 {
        s.push_str(&format!("; and {} more", bad.len() - 3));
    }
    s
}
