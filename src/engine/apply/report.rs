//! What a transaction reports: its steps, each step's record, and the connector's outcome;
//! and the [`OperationObserver`] told them as they happen.

use serde::Serialize;

use super::backup::BackupReport;
use super::plan::ActionKind;
use crate::engine::progress::{Both, Observer, Unheard};
use crate::model::TargetState;

/// The steps of a transaction, in order. A report names the one that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    RecordState,
    Create,
    Stop,
    WaitStopped,
    Patch,
    Reset,
    /// A service that alters asynchronously: the request's status is read until it is over.
    WaitApplied,
    Verify,
    Restore,
    WaitRestored,
    WaitTasks,
    Delete,
    /// The connector's definition read, to create it again with.
    Describe,
    /// Deleted, waited for until it is gone.
    WaitGone,
    /// The offsets written through Kafka (one write of every connector's) and read back.
    WriteTopic,
    /// Created again from its definition, waited for until it is in its recorded state.
    CreateAgain,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = serde_json::to_value(self).expect("a step serializes");
        f.write_str(s.as_str().unwrap_or("?"))
    }
}

/// An asynchronous alter request a transaction sent (or was about to send): the journal
/// keeps it, so that a recovery reads its status instead of sending another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SentRequest {
    pub kind: crate::client::AlterKind,
    /// When the service says it was made (RFC 3339 to the nanosecond, as it answered): what
    /// tells the request from the connector's others (their `id` is the connector's). Absent
    /// until its answer came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    /// When kco sent it (RFC 3339, this machine's clock).
    pub sent_at: String,
}

/// What one step did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRecord {
    pub step: Step,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyOutcome {
    /// Already in sync: nothing was sent.
    NoChange,
    /// Changed, verified, and its state put back.
    Applied,
    /// Something failed; see `failed_step` and `error`.
    Failed,
    /// Not started because the run was interrupted: nothing was sent for it.
    Skipped,
}

/// What happened to one connector.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectorApply {
    pub name: String,
    pub action: ActionKind,
    pub outcome: ApplyOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<Step>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The target state recorded before any change (absent for a created connector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_state: Option<TargetState>,
    /// The state put back (or, for a created connector, started in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_state: Option<TargetState>,
    /// Whether that state was reached.
    pub state_restored: bool,
    /// The state last seen, e.g. `RUNNING (tasks: 1 RUNNING)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_state: Option<String>,
    /// Whether a PATCH or DELETE of offsets was sent (so offsets may have changed).
    pub offsets_sent: bool,
    pub warnings: Vec<String>,
    /// An asynchronous alter request that was not over when the transaction ended (its id,
    /// or when it was sent): the journal keeps the connector, so that a recovery reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_request: Option<String>,
    /// Mutating requests sent for this connector (0 when it was in sync).
    pub mutating_calls: u32,
    pub steps: Vec<StepRecord>,
}

impl ConnectorApply {
    pub fn converged(&self) -> bool {
        !matches!(self.outcome, ApplyOutcome::Failed | ApplyOutcome::Skipped)
    }
}

/// Told what an operation does as it does it, from several threads at once: besides how far
/// it is ([`Observer`]), each transaction's steps and the backup. Every method does nothing
/// unless implemented.
pub trait OperationObserver: Observer {
    /// A connector's transaction read the state it will put back, before its first change.
    fn recorded(&self, _connector: &str, _prior: TargetState) {}
    /// A connector's transaction is about to send an asynchronous alter request
    /// (`requested_at` unknown), or learnt when the service made it: told before the request
    /// is sent, and again after.
    fn requested(&self, _connector: &str, _request: &SentRequest) {}
    /// A step of a connector's transaction ended (the CLI prints them with `-v`).
    fn step(&self, _connector: &str, _record: &StepRecord) {}
    /// A step that waits on the service saw something new: an asynchronous alter's next phase
    /// (`request PATCH of T: PENDING_VALIDATION`), the state the service holds the connector in
    /// while it alters its offsets. Told once per change, not per read (`-v` prints it).
    fn waiting(&self, _connector: &str, _seen: &str) {}
    /// A connector's transaction ended, whatever its outcome.
    fn transaction(&self, _report: &ConnectorApply) {}
    /// The operation's backup is written, before its first change.
    fn backed_up(&self, _backup: &BackupReport) {}
}

impl OperationObserver for Unheard {}

impl<T: OperationObserver + ?Sized> OperationObserver for &T {
    fn recorded(&self, connector: &str, prior: TargetState) {
        (**self).recorded(connector, prior);
    }
    fn requested(&self, connector: &str, request: &SentRequest) {
        (**self).requested(connector, request);
    }
    fn step(&self, connector: &str, record: &StepRecord) {
        (**self).step(connector, record);
    }
    fn waiting(&self, connector: &str, seen: &str) {
        (**self).waiting(connector, seen);
    }
    fn transaction(&self, report: &ConnectorApply) {
        (**self).transaction(report);
    }
    fn backed_up(&self, backup: &BackupReport) {
        (**self).backed_up(backup);
    }
}

impl<A: OperationObserver, B: OperationObserver> OperationObserver for Both<A, B> {
    fn recorded(&self, connector: &str, prior: TargetState) {
        self.0.recorded(connector, prior);
        self.1.recorded(connector, prior);
    }
    fn requested(&self, connector: &str, request: &SentRequest) {
        self.0.requested(connector, request);
        self.1.requested(connector, request);
    }
    fn step(&self, connector: &str, record: &StepRecord) {
        self.0.step(connector, record);
        self.1.step(connector, record);
    }
    fn waiting(&self, connector: &str, seen: &str) {
        self.0.waiting(connector, seen);
        self.1.waiting(connector, seen);
    }
    fn transaction(&self, report: &ConnectorApply) {
        self.0.transaction(report);
        self.1.transaction(report);
    }
    fn backed_up(&self, backup: &BackupReport) {
        self.0.backed_up(backup);
        self.1.backed_up(backup);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_action_keeps_its_json_names() {
        let names: Vec<_> = [
            ActionKind::NoChange,
            ActionKind::Patch,
            ActionKind::Create,
            ActionKind::Reset,
            ActionKind::Error,
        ]
        .iter()
        .map(|k| serde_json::to_value(k).unwrap())
        .collect();
        assert_eq!(names, ["no_change", "patch", "create", "reset", "error"]);
    }
}
