//! The steps of a service whose alters are requests it applies later ([`Op`]):
//! - [`Op::RequestAlter`]: send one request per kind of change (a PATCH of the partitions
//!   that change, a DELETE of those removed); read its status until it is applied or failed;
//!   check the service's record of the offsets before the change against the backup.
//! - [`Op::VerifyObserved`]: read the offsets back until they were observed after the change.
//! - [`Op::AwaitRestore`]: wait for the service to have put the state back, and put it back
//!   only if it does not.
//! - [`Op::CreateAt`]: create the connector at its position in one request.

use std::time::{Duration, SystemTime};

use super::{Failure, Tx};
use crate::client::{AlterKind, AlterStatus, ClientError, Op, Phase};
use crate::engine::apply::plan::Action;
use crate::engine::apply::report::{SentRequest, Step};
use crate::engine::apply::state::poll_target;
use crate::engine::apply::tx_error::TxError;
use crate::engine::settle::settled_status;
use crate::model::{canonical_fields, Fields, PatchEntry, TargetState};
use crate::wait::{until, Poll, WaitPolicy};

/// A request the service took (or may have taken): what its status is matched with.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    pub kind: AlterKind,
    /// When the service says it was made (its 202 answer, or its status when the answer was
    /// lost): what tells it from the connector's other requests. The request's `id` cannot:
    /// it is the connector's.
    pub requested_at: Option<SystemTime>,
    pub sent_at: SystemTime,
    pub entries: Vec<PatchEntry>,
}

impl Sent {
    fn label(&self) -> String {
        match self.requested_at {
            Some(t) => format!("{} of {}", self.kind, crate::clock::rfc3339(t)),
            None => format!(
                "{} sent at {}",
                self.kind,
                crate::clock::rfc3339(self.sent_at)
            ),
        }
    }
}

/// How far apart this machine's clock and the service's may be when a request whose answer was
/// lost is recognised by when it was made.
const CLOCK_SLACK: Duration = Duration::from_secs(300);

/// Whether `status` answers about `sent`: by kind and the service's `requested_at` when the
/// request's answer came; else by kind, by time (made no earlier than it was sent, give or
/// take the clocks), and by the partitions it carries (when those are known). Never by `id`,
/// which is the connector's and the same for all its requests.
pub(crate) fn is_ours(sent: &Sent, status: &AlterStatus) -> bool {
    matches_request(
        sent.kind,
        sent.requested_at,
        sent.sent_at,
        Some(&sent.entries),
        status,
    )
}

/// A time to the nanosecond, as the journal keeps the service's `requested_at` (compared
/// exactly when read back).
pub(crate) fn exact_time(t: SystemTime) -> String {
    humantime::format_rfc3339_nanos(t).to_string()
}

/// A request of the status, in words: `PATCH of 2024-02-20T15:14:19Z`.
pub(crate) fn request_words(st: &AlterStatus) -> String {
    let kind = st.request.kind.as_deref().unwrap_or("request");
    match st.request.requested_at {
        Some(t) => format!("{kind} of {}", crate::clock::rfc3339(t)),
        None => kind.to_string(),
    }
}

/// [`is_ours`] from what a journal keeps of a request (no partitions).
pub(crate) fn matches_request(
    kind: AlterKind,
    requested_at: Option<SystemTime>,
    sent_at: SystemTime,
    entries: Option<&[PatchEntry]>,
    status: &AlterStatus,
) -> bool {
    let r = &status.request;
    let same_kind = r.kind.as_deref().is_none_or(|k| k == kind.to_string());
    if let (Some(a), Some(b)) = (requested_at, r.requested_at) {
        return same_kind && a == b;
    }
    let time = r.requested_at.is_none_or(|t| t + CLOCK_SLACK >= sent_at);
    let offsets = match (entries, &r.offsets) {
        (Some(mine), Some(o)) => o.len() == mine.len() && partitions(o) == partitions(mine),
        _ => true,
    };
    same_kind && time && offsets
}

fn partitions(entries: &[PatchEntry]) -> std::collections::BTreeSet<String> {
    entries
        .iter()
        .map(|e| canonical_fields(&e.partition))
        .collect()
}

/// Reading a request's status looks every half second at first, then every two seconds:
/// the service applies a request within seconds to minutes, and each look is a request
/// against its rate limit.
fn status_policy(wait: WaitPolicy) -> WaitPolicy {
    WaitPolicy {
        first_delay: Duration::from_millis(500),
        max_delay: Duration::from_secs(2),
        ..wait
    }
}

fn show(f: Option<&Fields>) -> String {
    f.map_or_else(|| "(none)".into(), canonical_fields)
}

impl Tx<'_> {
    pub(super) fn service(&self) -> &'static str {
        self.client.backend().service()
    }

    /// The state to put back, read again once another request's pause is over; the one
    /// recorded stays when it cannot be read.
    fn record_again(&mut self) -> Option<TargetState> {
        let s = self.client.status(self.name()).ok()?;
        let s = settled_status(self.client, self.name(), s, self.clock, &self.opts.wait).ok()?;
        let prior = s.state?.target();
        self.report.prior_state = Some(prior);
        self.progress.recorded(&self.plan.name, prior);
        Some(prior)
    }

    /// The requests this connector's change takes: a DELETE of every partition for a reset;
    /// else a PATCH of the partitions that get an offset, then a DELETE of those removed (the
    /// contract's PATCH takes no null offset).
    fn requests(&self, step: Step) -> Vec<(AlterKind, Vec<PatchEntry>)> {
        let entries = match &self.plan.action {
            Action::Patch { entries, .. } | Action::Create { entries, .. }
                if step == Step::Patch =>
            {
                entries.clone()
            }
            _ => return vec![(AlterKind::Delete, Vec::new())],
        };
        let (set, removed): (Vec<_>, Vec<_>) =
            entries.into_iter().partition(|e| e.offset.is_some());
        let mut out = Vec::new();
        if !set.is_empty() {
            out.push((AlterKind::Patch, set));
        }
        if !removed.is_empty() {
            out.push((AlterKind::Delete, removed));
        }
        out
    }

    /// Sends each request and waits for it to be applied ([`Op::RequestAlter`](crate::client::Op)):
    /// when the last one was applied, for the read back to wait for.
    pub(super) fn alter_requests(&mut self, step: Step) -> Result<Option<SystemTime>, Failure> {
        let mut applied_at = None;
        let mut applied_one = false;
        for (kind, entries) in self.requests(step) {
            let done = self
                .send_request(step, kind, entries)
                .and_then(|sent| Ok((self.wait_applied(&sent)?, sent)));
            let (status, sent) = match done {
                Ok(v) => v,
                Err(f) => {
                    // A request refused or failed changed nothing, but one applied before it
                    // did.
                    self.report.offsets_sent |= applied_one;
                    return Err(f);
                }
            };
            applied_one = true;
            self.check_previous(&sent, &status);
            applied_at = applied_at.max(status.applied_at);
        }
        Ok(applied_at)
    }

    /// Sends one request, recorded in the journal before it leaves. A request refused
    /// because another is pending waits for that one (once) and is sent again; one whose
    /// answer was lost is looked for in the status before it is sent again.
    pub(super) fn send_request(
        &mut self,
        step: Step,
        kind: AlterKind,
        entries: Vec<PatchEntry>,
    ) -> Result<Sent, Failure> {
        self.step(step, |tx| {
            let name = tx.name().to_string();
            let what = match (kind, entries.len()) {
                (AlterKind::Delete, 0) => "DELETE of every partition".to_string(),
                (k, n) => format!("{k} of {}", crate::text::count(n, "partition")),
            };
            let mut sent = Sent {
                kind,
                requested_at: None,
                sent_at: crate::clock::now(),
                entries,
            };
            let attempts = tx.opts.alter_attempts.max(1);
            let mut notes: Vec<String> = Vec::new();
            let mut waited = false;
            for _ in 0..attempts {
                sent.sent_at = crate::clock::now();
                tx.journal(&sent);
                tx.report.offsets_sent = true;
                match tx.client.request_alter(&name, kind, &sent.entries) {
                    Ok(req) => {
                        sent.requested_at = req.requested_at;
                        tx.journal(&sent);
                        notes.push(format!("request {} ({what}) sent", sent.label()));
                        return Ok((sent, notes.join("; ")));
                    }
                    Err(e) if e.status() == Some(409) && !waited => {
                        waited = true;
                        notes.push(tx.wait_other(&e).map_err(|then| {
                            tx.report.offsets_sent = false;
                            TxError::Alter {
                                attempts: vec![e.to_string(), then],
                            }
                        })?);
                        if let Some(prior) = tx.record_again() {
                            notes.push(format!("its state read again: {prior}"));
                        }
                    }
                    Err(e) if e.outcome_unknown() => match tx.client.alter_status(&name) {
                        Ok(st) if is_ours(&sent, &st) => {
                            sent.requested_at = st.request.requested_at;
                            tx.journal(&sent);
                            notes.push(format!(
                                "{e}; its status shows it taken as request {} ({what})",
                                sent.label()
                            ));
                            return Ok((sent, notes.join("; ")));
                        }
                        _ => notes.push(format!("{e}; its status does not show it")),
                    },
                    Err(e) if notes.is_empty() => {
                        let error = TxError::from(e);
                        tx.report.offsets_sent = !error.refused();
                        return Err(error);
                    }
                    Err(e) => {
                        notes.push(e.to_string());
                        return Err(TxError::Alter { attempts: notes });
                    }
                }
            }
            Err(TxError::Alter { attempts: notes })
        })
    }

    fn journal(&self, sent: &Sent) {
        let record = SentRequest {
            kind: sent.kind,
            requested_at: sent.requested_at.map(exact_time),
            sent_at: crate::clock::rfc3339(sent.sent_at),
        };
        self.progress.requested(self.name(), &record);
    }

    /// The service refused a request because another is pending: waits for that one to be
    /// over, reading its status (no request is sent meanwhile). Says what it waited for.
    fn wait_other(&self, refused: &ClientError) -> Result<String, String> {
        let policy = status_policy(self.opts.wait);
        let said = refused.message().unwrap_or("a request is pending");
        let mut last: Option<String> = None;
        let over = until(self.clock, &policy, || {
            match self.client.alter_status(self.name()) {
                Ok(st) if st.phase.is_final() => Poll::Ready(st),
                Ok(st) => {
                    let seen = format!("{} {}", request_words(&st), st.phase);
                    if last.as_ref() != Some(&seen) {
                        let told = format!("waiting for another client's request {seen}");
                        self.progress.waiting(self.name(), &told);
                    }
                    last = Some(seen.clone());
                    Poll::Pending(seen)
                }
                Err(e) => Poll::Pending(format!("status unreadable: {e}")),
            }
        });
        match over {
            Ok(st) => Ok(format!(
                "{} refused it ({said}): waited for request {} to be {}, then sent it again",
                self.service(),
                request_words(&st),
                st.phase
            )),
            Err(e) => Err(format!(
                "the pending request {} was not over in time ({e}); nothing of this change was sent",
                last.unwrap_or_default()
            )),
        }
    }

    /// Reads the request's status until it is applied or failed. Any other phase (pending,
    /// being validated, one kco does not know) is not done.
    fn wait_applied(&mut self, sent: &Sent) -> Result<AlterStatus, Failure> {
        let policy = status_policy(self.opts.wait);
        let service = self.service();
        self.step(Step::WaitApplied, |tx| {
            let mut phase = Phase::Pending;
            let mut theirs = None;
            let mut unreadable = None;
            let mut told: Option<Phase> = None;
            let label = sent.label();
            let over = until(tx.clock, &policy, || {
                match tx.client.alter_status(tx.name()) {
                    Ok(st) if !is_ours(sent, &st) => {
                        theirs = Some(request_words(&st));
                        Poll::Failed("another request".into())
                    }
                    Ok(st) => {
                        if told.as_ref() != Some(&st.phase) {
                            let seen = format!("request {label}: {}", st.phase);
                            tx.progress.waiting(tx.name(), &seen);
                            told = Some(st.phase.clone());
                        }
                        if st.phase.is_final() {
                            return Poll::Ready(st);
                        }
                        phase = st.phase.clone();
                        Poll::Pending(st.phase.to_string())
                    }
                    Err(e) => {
                        let seen = format!("status unreadable: {e}");
                        unreadable = Some(e);
                        Poll::Pending(seen)
                    }
                }
            });
            let st = match over {
                Ok(st) => st,
                Err(_) if theirs.is_some() => {
                    return Err(TxError::NotOurRequest {
                        ours: sent.label(),
                        theirs: theirs.unwrap_or_default(),
                    })
                }
                Err(crate::wait::WaitError::TimedOut { waited, .. }) => {
                    if let (Some(e), Phase::Pending) = (unreadable, &phase) {
                        return Err(TxError::Status {
                            id: sent.label(),
                            source: Box::new(e),
                        });
                    }
                    tx.report.pending_request = Some(sent.label());
                    return Err(TxError::AlterNotDone {
                        service,
                        id: sent.label(),
                        phase: phase.to_string(),
                        waited,
                    });
                }
                Err(e) => {
                    return Err(TxError::Alter {
                        attempts: vec![e.to_string()],
                    })
                }
            };
            if st.phase == Phase::Failed {
                tx.report.offsets_sent = false;
                return Err(TxError::AlterFailed {
                    service,
                    id: sent.label(),
                    message: st.message.clone(),
                });
            }
            let at = st
                .applied_at
                .map(|t| format!(" at {}", crate::clock::rfc3339(t)))
                .unwrap_or_default();
            Ok((st, format!("request {} APPLIED{at}", sent.label())))
        })
    }

    /// The service's record of the offsets before the change, against the backup's (the live
    /// offsets the plan read): a partition that differs was changed by someone in between.
    fn check_previous(&mut self, sent: &Sent, status: &AlterStatus) {
        let Some(previous) = &status.previous_offsets else {
            return;
        };
        let before = |entries: &mut dyn Iterator<Item = (&Fields, Option<&Fields>)>| {
            entries
                .map(|(p, o)| (canonical_fields(p), show(o)))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        let theirs = before(&mut previous.iter().map(|e| (&e.partition, e.offset.as_ref())));
        let backup = before(
            &mut self
                .plan
                .live_offsets
                .iter()
                .map(|e| (&e.partition, Some(&e.offset))),
        );
        let none = "(none)".to_string();
        let differ: Vec<String> = partitions(&sent.entries)
            .into_iter()
            .chain(if sent.entries.is_empty() {
                // A DELETE of every partition: every partition of either record.
                theirs.keys().chain(backup.keys()).cloned().collect()
            } else {
                Vec::new()
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter_map(|p| {
                let t = theirs.get(&p).unwrap_or(&none);
                let b = backup.get(&p).unwrap_or(&none);
                (t != b).then(|| format!("{p} (backup {b}, {} {t})", self.service()))
            })
            .collect();
        if !differ.is_empty() {
            self.report.warnings.push(format!(
                "{}'s record of the offsets before request {} differs from the backup for {}: someone changed them between the backup and the request; the backup holds what kco read, {} the offsets replaced: {}",
                self.service(),
                sent.label(),
                crate::text::count(differ.len(), "partition"),
                self.service(),
                super::summarize(&differ)
            ));
        }
    }

    /// Reads the offsets back until they were observed after the change was applied and are
    /// as wanted.
    pub(super) fn verify_observed(
        &mut self,
        step: Step,
        applied_at: Option<SystemTime>,
    ) -> Result<((), String), TxError> {
        let policy = self.opts.wait;
        let mut observed = None;
        until(self.clock, &policy, || {
            match self.client.offsets_read(self.name()) {
                Ok(read) => {
                    if let (Some(a), Some(o)) = (applied_at, read.observed_at) {
                        if o < a {
                            return Poll::Pending(format!(
                                "observed at {}, before the change was applied at {}",
                                crate::clock::rfc3339(o),
                                crate::clock::rfc3339(a)
                            ));
                        }
                    }
                    let bad = self.mismatches(step, &read.entries);
                    if bad.is_empty() {
                        observed = read.observed_at;
                        Poll::Ready(read.entries)
                    } else {
                        Poll::Pending(super::summarize(&bad))
                    }
                }
                Err(e) => Poll::Pending(format!("reading offsets: {e}")),
            }
        })
        .map(|live| {
            self.note_others(step, &live);
            let read = crate::text::count(live.len(), "partition");
            let at = observed
                .map(|t| format!(" observed at {}", crate::clock::rfc3339(t)))
                .unwrap_or_default();
            let now = self.now_at(step, &live);
            ((), format!("read back: {read}{at}, as wanted{now}"))
        })
        .map_err(TxError::NotVerified)
    }

    /// A request still pending once the wait is over: the connector is left as it is (in the
    /// service's hands, or STOPPED by kco), nothing is sent, and the journal keeps the request
    /// for a recovery to read.
    pub(super) fn leave_pending(&mut self, prior: TargetState) -> Result<(), Failure> {
        self.report.restored_state = Some(prior);
        match self.client.status(self.name()) {
            Ok(s) if matches!(poll_target(Ok(s.clone()), prior), Poll::Ready(_)) => {
                self.report.state_restored = true;
            }
            _ if self.put_back() == Op::AwaitRestore => self.report.warnings.push(format!(
                "`{}` stays in {}'s hands while its request is pending; the journal keeps it: `kco recover` reads the request's status and then sees {prior} back",
                self.plan.name,
                self.service()
            )),
            _ => self.report.warnings.push(format!(
                "`{}` stays STOPPED while its request is pending; the journal keeps it: `kco recover` reads the request's status and then puts {prior} back",
                self.plan.name
            )),
        }
        Ok(())
    }

    /// Waits for the service to show `target` (it resumes or pauses the connector itself);
    /// asks for it only when it does not come, and says so.
    pub(super) fn await_state(&mut self, target: TargetState) -> Result<(), Failure> {
        self.report.restored_state = Some(target);
        let policy = self.opts.wait;
        let service = self.service();
        let mut told: Option<String> = None;
        let seen = until(self.clock, &policy, || {
            let polled = poll_target(self.client.status(self.name()), target);
            if let Poll::Pending(now) = &polled {
                if told.as_ref() != Some(now) {
                    let held = format!("{service} holds it: {now}; waiting for {target}");
                    self.progress.waiting(self.name(), &held);
                    told = Some(now.clone());
                }
            }
            polled
        });
        match seen {
            Ok(s) => {
                let service = self.service();
                self.step(Step::WaitRestored, |tx| {
                    let seen = s.describe();
                    tx.report.final_state = Some(seen.clone());
                    Ok(((), format!("{service} put it back: {seen}")))
                })?;
                self.report.state_restored = true;
                if target == TargetState::Running {
                    self.wait_tasks()?;
                }
                Ok(())
            }
            Err(e) => {
                self.report.warnings.push(format!(
                    "{} did not put `{}` back {target} by itself ({e}): kco asked for it",
                    self.service(),
                    self.plan.name
                ));
                self.restore(target)
            }
        }
    }

    /// A connector to create on a service whose create call takes the offsets: created at its
    /// position in one request ([`Op::CreateAt`]).
    pub(super) fn create_at(&mut self) -> Result<(), Failure> {
        let entries = match &self.plan.action {
            Action::Create { entries, .. } => entries.clone(),
            _ => Vec::new(),
        };
        self.step(Step::Create, |tx| {
            let config = &tx.plan.config.as_ref().expect("a create has a config").0;
            let n = crate::text::count(entries.len(), "partition");
            match tx.client.create_at(tx.name(), config, &entries) {
                Ok(()) => Ok((
                    (),
                    format!("created at its position ({n} in the create request)"),
                )),
                Err(e) if e.outcome_unknown() && tx.client.status(tx.name()).is_ok() => Ok((
                    (),
                    "the create timed out, but the connector exists now".into(),
                )),
                Err(e) => Err(e.into()),
            }
        })
    }
}
