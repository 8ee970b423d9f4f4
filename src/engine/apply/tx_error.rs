//! What can go wrong inside one connector's transaction, typed; the report carries its text.

use crate::client::ClientError;
use crate::model::TargetState;
use crate::wait::WaitError;

use super::report::Step;

/// A failed step of a transaction.
#[derive(Debug, thiserror::Error)]
pub enum TxError {
    /// A call to Connect failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The service has no steps for this change (a service kco only reads): nothing sent.
    #[error("{service} has no steps kco can make this change with: nothing was sent")]
    NoSteps { service: &'static str },
    /// Connect reports a state kco does not know: nothing is changed.
    #[error("unknown state `{raw}`: left untouched")]
    UnknownState { raw: String },
    /// The status stayed UNASSIGNED or RESTARTING (a rebalance or a restart under way), which
    /// does not say whether the connector runs, is paused or is stopped: nothing is changed.
    #[error(
        "its state did not settle ({source}): kco cannot tell whether to put it back RUNNING, PAUSED or STOPPED, so it left it untouched; run again once the rebalance is over"
    )]
    Unsettled {
        #[source]
        source: WaitError,
    },
    /// The connector did not reach a state in time, or failed on the way.
    #[error("waiting for {target}: {source}")]
    Wait {
        target: TargetState,
        #[source]
        source: WaitError,
    },
    /// The connector runs again, but its tasks do not.
    #[error("tasks after the restore: {source}")]
    Tasks {
        #[source]
        source: WaitError,
    },
    #[error("reading offsets: {0}")]
    ReadOffsets(#[source] ClientError),
    /// PATCH or DELETE was sent, and what happened to each attempt.
    #[error("{}", attempts.join("; "))]
    Alter { attempts: Vec<String> },
    /// The service answered FAILED for the alter request: it changed nothing.
    #[error("{service} answered FAILED for request {id}: {message}; the offsets were not changed")]
    AlterFailed {
        service: &'static str,
        id: String,
        message: String,
    },
    /// The alter request was not over (applied or failed) in time. Nothing more was sent: the
    /// service may still apply it.
    #[error("request {id} was still {phase} after {}s; kco sent nothing more: {service} may still apply it (`kco recover` reads its status)", waited.as_secs())]
    AlterNotDone {
        service: &'static str,
        id: String,
        phase: String,
        waited: std::time::Duration,
    },
    /// The status no longer answers about this transaction's request: another was sent since.
    #[error("the last alter request of this connector is {theirs}, not {ours}: someone sent another one meanwhile; read the offsets (`kco diff`) before applying again")]
    NotOurRequest { ours: String, theirs: String },
    /// Reading the request's status failed.
    #[error("reading the status of request {id}: {source}")]
    Status {
        id: String,
        #[source]
        source: Box<ClientError>,
    },
    /// Reading back never showed the wanted offsets.
    #[error("offsets differ from the file after the change: {0}")]
    NotVerified(#[source] WaitError),
    /// A step failed, and putting the prior state back failed too.
    #[error("{first}; putting {prior} back then failed too ({step}: {then})")]
    RestoreFailedToo {
        first: Box<TxError>,
        prior: TargetState,
        step: Step,
        then: Box<TxError>,
    },
}

impl TxError {
    /// Connect answered with an error that says the request was not carried out (a refusal or
    /// a failure, not a timeout or a lost connection): it had no effect.
    pub fn had_no_effect(&self) -> bool {
        match self {
            TxError::Client(e) => e.had_no_effect(),
            _ => false,
        }
    }

    /// The request got no answer that says what became of it (a timeout, a lost connection):
    /// it may still take effect.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, TxError::Client(e) if e.outcome_unknown())
    }

    /// Connect refused the request outright (a 4xx answer): it had no effect.
    pub fn refused(&self) -> bool {
        match self {
            TxError::Client(e) => e.status().is_some_and(|s| (400..500).contains(&s)),
            _ => false,
        }
    }
}
