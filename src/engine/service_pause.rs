//! A connector its service paused around its own offsets request: a service that pauses
//! connectors itself ([`Op::AwaitRestore`] in its steps, Confluent Cloud) shows PAUSED while
//! a request is pending, then puts back the state the connector had. That PAUSED is not a
//! state its owner chose, and not one a kco operation left behind: `diff` says so and does
//! not count it as a change of state, and `snapshot` keeps the state the file records.
//!
//! [`Op::AwaitRestore`]: crate::client::Op

use crate::client::{AlterStatus, ChangeKind, Op, Service};
use crate::engine::apply::transaction::requests::request_words;
use crate::model::TargetState;

/// The request a connector is paused around.
#[derive(Debug, Clone, PartialEq)]
pub struct ServicePause {
    /// The service, in words (`Confluent Cloud`).
    pub service: &'static str,
    /// The request, in words: `PATCH of 2024-02-20T15:14:19Z`.
    pub request: String,
    /// Its phase (`PENDING`, `PENDING_VALIDATION`).
    pub phase: String,
}

impl ServicePause {
    /// What a diff says of the connector, whose file records `recorded`.
    pub fn diff_note(&self, recorded: TargetState) -> String {
        format!(
            "PAUSED by {} around its pending {} ({}): the service puts back the state it had when the request ends; the file's state {recorded} stands",
            self.service, self.request, self.phase
        )
    }

    /// What a snapshot says when it keeps the file's state `kept` (`None`: no file had one).
    pub fn snapshot_note(&self, kept: Option<TargetState>) -> String {
        match kept {
            Some(s) => format!(
                "PAUSED by {} around its pending {} ({}): the file's state {s} kept",
                self.service, self.request, self.phase
            ),
            None => format!(
                "PAUSED by {} around its pending {} ({}): recorded PAUSED, as no file says what it was before; the next snapshot after the request records the state the service puts back",
                self.service, self.request, self.phase
            ),
        }
    }
}

/// Whether `name`, shown PAUSED, is paused by its service around a pending request of its
/// own. `None` on a service that never pauses a connector itself (Kafka Connect: no request
/// is sent), when the last request is over, or when its status cannot be read (then the
/// PAUSED is taken as it is shown).
pub fn pending_request(client: &dyn Service, name: &str) -> Option<ServicePause> {
    if !client.steps(ChangeKind::Patch).contains(&Op::AwaitRestore) {
        return None;
    }
    let status: AlterStatus = client.alter_status(name).ok()?;
    (!status.phase.is_final()).then(|| ServicePause {
        service: client.backend().service(),
        request: request_words(&status),
        phase: status.phase.to_string(),
    })
}
