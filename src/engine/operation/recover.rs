//! Finishing an interrupted operation: put back the state that the journal (or a backup)
//! records for each connector, and wait until it is reached. Recovery reads before it writes:
//! a connector whose transaction never started and that is in its recorded state is left
//! alone (and looked at again once states have had time to settle); one whose transaction
//! started is stopped first, fencing off a stop the dead process left in the worker's
//! queue. Offsets are left as they are: the interrupted transaction may or may not have
//! changed them (the backup has the old ones; applying again finishes the change).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::journal::JournalEntry;
use crate::client::{ChangeKind, ConnectorStatus, Op, Service};
use crate::engine::apply::state::poll_target;
use crate::engine::load_files;
use crate::error::{Error, Result};
use crate::model::{ConnectorState, TargetState};
use crate::wait::{until, Clock, Poll, WaitPolicy};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoverOutcome {
    /// It was in another state; the recorded one was put back and reached.
    Restored,
    /// Status already showed the recorded state (nothing was sent unless its transaction had
    /// started).
    AlreadyThere,
    /// Created by the interrupted apply: left as it is (STOPPED), as a failed create is.
    LeftCreated,
    /// Its owner put it in another state since (PAUSED, say): not one the interrupted
    /// operation leaves (STOPPED, or the state it recorded), so not kco's to undo. Left as it
    /// is; nothing sent.
    ChangedSince,
    /// It no longer exists: nothing to do.
    Missing,
    /// Deleted by the interrupted operation, which had kept its definition: created again
    /// from it, and running.
    Recreated,
    /// The state could not be put back.
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecoveredConnector {
    pub name: String,
    pub wanted: TargetState,
    /// What status showed before recovery (`STOPPED (no tasks)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    pub outcome: RecoverOutcome,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecoverReport {
    pub cluster: String,
    /// Where the states came from: a journal or backup path.
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub source: PathBuf,
    /// The interrupted operation, when the states came from its journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interrupted>,
    pub ok: bool,
    pub connectors: Vec<RecoveredConnector>,
}

/// Who wrote a journal.
#[derive(Debug, Clone, Serialize)]
pub struct Interrupted {
    pub pid: u32,
    pub host: String,
    pub started_at: String,
}

impl RecoverReport {
    /// Nothing to recover: no journal at `source`.
    pub fn nothing(cluster: &str, source: &Path) -> RecoverReport {
        RecoverReport {
            cluster: cluster.to_string(),
            source: source.to_path_buf(),
            interrupted: None,
            ok: true,
            connectors: Vec::new(),
        }
    }
}

/// Puts each connector back in its recorded state.
pub fn recover(
    client: &dyn Service,
    cluster: &str,
    source: &Path,
    entries: &BTreeMap<String, JournalEntry>,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> RecoverReport {
    let mut connectors: Vec<RecoveredConnector> = entries
        .iter()
        .map(|(name, e)| one(client, name, e, wait, clock))
        .collect();
    // A stop the dead process sent can land after its state was put back (status lags the
    // target state): the states are looked at again once they have had time to settle, and
    // a connector that left its state is put back again.
    let reached = |r: &RecoveredConnector| {
        matches!(
            r.outcome,
            RecoverOutcome::Restored | RecoverOutcome::AlreadyThere
        ) && r.wanted != TargetState::Stopped
    };
    if connectors.iter().any(reached) {
        clock.sleep(SETTLE);
        for (r, (name, e)) in connectors.iter_mut().zip(entries) {
            let left = reached(r)
                && client
                    .status(name)
                    .is_ok_and(|s| !matches!(poll_target(Ok(s), e.prior_state), Poll::Ready(_)));
            if left {
                *r = one(client, name, e, wait, clock);
            }
        }
    }
    RecoverReport {
        cluster: cluster.to_string(),
        source: source.to_path_buf(),
        interrupted: None,
        ok: connectors
            .iter()
            .all(|c| c.outcome != RecoverOutcome::Failed),
        connectors,
    }
}

/// How long recovered states are given to settle before they are looked at again.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

fn one(
    client: &dyn Service,
    name: &str,
    e: &JournalEntry,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> RecoveredConnector {
    if let Some(definition) = &e.definition {
        return recreated(client, name, definition, e.prior_state, wait, clock);
    }
    // An asynchronous alter request the dead process sent: its status says what became of
    // it, and no other is sent; then the state is seen to.
    let mut note = None;
    let requests = client.steps(ChangeKind::Patch).contains(&Op::RequestAlter);
    if let (Some(sent), true) = (&e.request, requests) {
        match super::recover_request::await_request(client, name, sent, wait, clock) {
            Ok(n) => note = Some(n),
            Err(why) => {
                return RecoveredConnector {
                    name: name.to_string(),
                    wanted: e.prior_state,
                    found: client.status(name).ok().map(|s| s.describe()),
                    outcome: RecoverOutcome::Failed,
                    detail: why,
                }
            }
        }
    }
    let mut r = state_back(client, name, e, wait, clock);
    if let Some(n) = note {
        r.detail = format!("{n}; {}", r.detail);
    }
    r
}

/// A connector the interrupted operation deleted after keeping its definition: created again
/// from it when it is gone, and waited for until it runs; one that exists (created again
/// before the kill) is waited for the same. Its offsets are as the interrupted write left
/// them: the old ones or the new ones (one Kafka transaction), never between.
pub fn recreated(
    client: &dyn Service,
    name: &str,
    definition: &serde_json::Value,
    wanted: TargetState,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> RecoveredConnector {
    let mut r = RecoveredConnector {
        name: name.to_string(),
        wanted,
        found: None,
        outcome: RecoverOutcome::Failed,
        detail: String::new(),
    };
    let sent = match client.status(name) {
        Ok(s) => {
            r.found = Some(s.describe());
            false
        }
        Err(err) if err.is_not_found() => {
            if let Err(err) = client.create_from(definition) {
                r.detail = format!(
                    "deleted by the interrupted operation; creating it again from the definition it kept failed: {err} (the journal keeps the definition)"
                );
                return r;
            }
            true
        }
        Err(err) => {
            r.detail = format!("cannot read its status: {err}");
            return r;
        }
    };
    match until(clock, wait, || poll_target(client.status(name), wanted)) {
        Ok(s) => {
            r.outcome = match sent {
                true => RecoverOutcome::Recreated,
                false => RecoverOutcome::AlreadyThere,
            };
            r.detail = match sent {
                true => format!(
                    "deleted by the interrupted operation: created again from the definition it kept, {}",
                    s.describe()
                ),
                false => format!("exists again: {}; nothing sent", s.describe()),
            };
        }
        Err(e) => {
            r.detail = format!("created again from its definition, but not {wanted}: {e}");
        }
    }
    r
}

/// Puts the recorded state back.
fn state_back(
    client: &dyn Service,
    name: &str,
    e: &JournalEntry,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> RecoveredConnector {
    let mut r = RecoveredConnector {
        name: name.to_string(),
        wanted: e.prior_state,
        found: None,
        outcome: RecoverOutcome::Failed,
        detail: String::new(),
    };
    let status = match client.status(name) {
        Ok(s) => s,
        Err(err) if err.is_not_found() => {
            r.outcome = RecoverOutcome::Missing;
            r.detail = "does not exist: nothing to do".into();
            return r;
        }
        Err(err) => {
            r.detail = format!("cannot read its status: {err}");
            return r;
        }
    };
    r.found = Some(status.describe());
    if e.created {
        r.outcome = RecoverOutcome::LeftCreated;
        r.detail = format!(
            "created by the interrupted apply, left as it is; apply its file again, then start it ({})",
            e.prior_state
        );
        return r;
    }
    // Only what the operation may have left is put back: a stop (STOPPED), or its recorded
    // state (put back, or never left), or, where the service pauses the connector itself
    // around an alter, PAUSED. Any other state (PAUSED or RUNNING) is one its owner set
    // since: not kco's to undo.
    if let Some(set) = owner_state(&status, e.prior_state, service_puts_back(client)) {
        r.outcome = RecoverOutcome::ChangedSince;
        r.detail = format!(
            "{set} since: the interrupted operation leaves a connector STOPPED or {}, so its owner set it; left as it is, nothing sent",
            e.prior_state
        );
        return r;
    }
    // Read before writing: a connector whose transaction never started was sent nothing, so
    // one in its state needs nothing. One whose transaction started may have been sent a stop
    // that status does not show yet: its state is asked for all the same (resume and pause
    // are idempotent), and a refusal then is no failure while status shows the state.
    let in_state = matches!(
        poll_target(Ok(status.clone()), e.prior_state),
        Poll::Ready(_)
    );
    // A service that pauses the connector around an alter resumes it itself: nothing was
    // sent that it does not undo, so it is given the time to.
    let own_pause = service_puts_back(client);
    if !in_state && own_pause {
        if let Ok(s) = until(clock, wait, || {
            poll_target(client.status(name), e.prior_state)
        }) {
            r.outcome = RecoverOutcome::AlreadyThere;
            r.detail = format!(
                "{} put it back: {}; nothing sent",
                client.backend().service(),
                s.describe()
            );
            return r;
        }
    }
    if in_state && (!e.started || own_pause) {
        r.outcome = RecoverOutcome::AlreadyThere;
        r.detail = format!("{}: nothing sent", status.describe());
        return r;
    }
    // A stop waits in the worker's request queue (behind a rebalance, say), but a resume or
    // pause is written at once: a stop the dead process sent could land after the state is
    // put back. A stop of our own is answered only once the queue before it has been worked
    // through, so it fences that stop off; then the state is asked for.
    let mut fenced = false;
    // A service that pauses the connector itself has no stop to fence off (nor a stop
    // endpoint).
    if e.started && e.prior_state != TargetState::Stopped && !own_pause {
        match client.stop(name) {
            Ok(()) => {
                fenced = true;
                // Status then moves through STOPPED, so that the wait below sees the state
                // put back rather than the one status still showed. The stop was answered,
                // so the state is asked for even if status is slow to show it.
                let _ = until(clock, wait, || {
                    poll_target(client.status(name), TargetState::Stopped)
                });
            }
            // Refused outright (a token that may not stop, say): the dead process's stop
            // was refused as well.
            Err(err) if err.had_no_effect() => {}
            Err(err) => {
                r.detail = format!(
                    "stopping it first, so that a stop the interrupted run sent cannot land after {} is put back, failed: {err}",
                    e.prior_state
                );
                return r;
            }
        }
    }
    let sent = match e.prior_state {
        TargetState::Stopped => Ok(()),
        TargetState::Running => client.resume(name),
        TargetState::Paused => client.pause(name),
    };
    if let Err(err) = sent {
        if in_state && !fenced && err.had_no_effect() {
            r.outcome = RecoverOutcome::AlreadyThere;
            r.detail = format!(
                "{}; asking for it again was refused: {err}",
                status.describe()
            );
            return r;
        }
        r.detail = format!("putting {} back failed: {err}", e.prior_state);
        return r;
    }
    match until(clock, wait, || {
        poll_target(client.status(name), e.prior_state)
    }) {
        Ok(s) => {
            r.outcome = if in_state && !fenced {
                RecoverOutcome::AlreadyThere
            } else {
                RecoverOutcome::Restored
            };
            r.detail = if fenced {
                format!(
                    "stopped first (its transaction had started), then {}",
                    s.describe()
                )
            } else {
                s.describe()
            };
        }
        Err(err) => r.detail = format!("waiting for {}: {err}", e.prior_state),
    }
    r
}

/// The state `status` shows, when it is one that an operation recording `prior` cannot have
/// left the connector in (`own_pause`: the service pauses it itself around an alter): its
/// owner's doing. `None` for STOPPED, `prior` itself, a FAILED connector and a transient state
/// (which say nothing of who set them).
fn owner_state(
    status: &ConnectorStatus,
    prior: TargetState,
    own_pause: bool,
) -> Option<TargetState> {
    let live = match status.state? {
        ConnectorState::Running => TargetState::Running,
        ConnectorState::Paused => TargetState::Paused,
        _ => return None,
    };
    let left_by_kco = live == prior || (own_pause && live == TargetState::Paused);
    (!left_by_kco).then_some(live)
}

/// The states a backup directory records (every file's `metadata.state`), for a recovery
/// whose journal is lost.
pub fn entries_from_backup(dir: &Path) -> Result<BTreeMap<String, JournalEntry>> {
    let (files, problems) = load_files(&[dir.to_path_buf()]);
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    if files.is_empty() {
        return Err(Error::Usage(format!(
            "no backup files (*.yaml) under {}",
            dir.display()
        )));
    }
    Ok(files
        .into_iter()
        .filter_map(|f| {
            let state = f.file.metadata.state?;
            Some((
                f.file.metadata.name.clone(),
                JournalEntry {
                    prior_state: state.target(),
                    created: false,
                    // Whether a stop was sent is not known: the state is asked for.
                    started: true,
                    request: None,
                    definition: None,
                },
            ))
        })
        .collect())
}

/// Whether the service pauses a connector around its own alter and puts its state back
/// itself ([`Op::AwaitRestore`]).
fn service_puts_back(client: &dyn Service) -> bool {
    client.steps(ChangeKind::Patch).contains(&Op::AwaitRestore)
}
