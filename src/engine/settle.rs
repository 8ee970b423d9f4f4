//! Connect shows UNASSIGNED while a connector moves between workers, and RESTARTING while it
//! restarts. Neither says which state the connector is asked to be in: a STOPPED connector
//! shows UNASSIGNED during a rebalance (seen on the test bed, right after a stop). Whatever
//! records a state (a snapshot, a backup, the state an apply puts back) or shows it (diff,
//! a plan) reads such a connector's status again until it says.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::{ClientError, ConnectorListing, ConnectorStatus, Service};
use crate::wait::{until, Clock, Poll, SystemClock, WaitError, WaitPolicy};

/// How long a listing waits for transient states: a rebalance on the test bed settles
/// within a few seconds. A connector still transient after it is shown as it is.
const LISTING_WAIT: Duration = Duration::from_secs(15);

/// Whether a status says nothing of the state the connector is asked to be in.
pub fn is_transient(status: &ConnectorStatus) -> bool {
    status.state.is_some_and(|s| s.is_transient())
}

/// `first`, or, when it is transient, the status read again until it is not. Fails with the
/// wait's error (the last status seen) when `policy` runs out.
pub fn settled_status(
    client: &dyn Service,
    name: &str,
    first: ConnectorStatus,
    clock: &dyn Clock,
    policy: &WaitPolicy,
) -> Result<ConnectorStatus, WaitError> {
    if !is_transient(&first) {
        return Ok(first);
    }
    until(clock, policy, || probe(client.status(name)))
}

fn probe(status: Result<ConnectorStatus, ClientError>) -> Poll<ConnectorStatus> {
    match status {
        Ok(s) if !is_transient(&s) => Poll::Ready(s),
        Ok(s) => Poll::Pending(s.describe()),
        Err(e) => Poll::Pending(format!("status unreadable: {e}")),
    }
}

/// Reads the status again of every listed connector that `only` picks and whose state is
/// transient or that has a task UNASSIGNED, until each settles or 15 s have passed, and puts what it read in the listing.
/// A connector that stays transient (or whose status cannot be read) keeps what the listing
/// said. (Another connector's rebalance is not waited for.)
pub fn settle_listing(
    client: &dyn Service,
    listing: &mut BTreeMap<String, ConnectorListing>,
    only: impl Fn(&ConnectorListing) -> bool,
) {
    let policy = WaitPolicy::with_timeout(LISTING_WAIT);
    settle_listing_with(client, listing, only, &SystemClock, &policy)
}

fn settle_listing_with(
    client: &dyn Service,
    listing: &mut BTreeMap<String, ConnectorListing>,
    only: impl Fn(&ConnectorListing) -> bool,
    clock: &dyn Clock,
    policy: &WaitPolicy,
) {
    let mut pending: Vec<String> = listing
        .values()
        .filter(|l| only(l) && l.status.as_ref().is_some_and(unsettled))
        .map(|l| l.name.clone())
        .collect();
    if pending.is_empty() {
        return;
    }
    let _ = until(clock, policy, || {
        pending.retain(|name| match client.status(name) {
            Ok(s) if !unsettled(&s) => {
                if let Some(l) = listing.get_mut(name) {
                    l.status = Some(s);
                }
                false
            }
            _ => true,
        });
        if pending.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending(pending.join(", "))
        }
    });
}

/// A listed status to read again: a transient state, or a task UNASSIGNED (moving between
/// workers; one still so after the wait is shown as such, `engine::health`).
fn unsettled(status: &ConnectorStatus) -> bool {
    is_transient(status) || status.tasks.iter().any(|t| t.state == "UNASSIGNED")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{ConnectorSpec, FakeConnect, Fault, State};
    use crate::model::ConnectorState;
    use crate::wait::ManualClock;
    use serde_json::json;

    fn unassigned() -> serde_json::Value {
        json!({"name": "c", "connector": {"state": "UNASSIGNED", "worker_id": "w"}, "tasks": [], "type": "source"})
    }

    /// A STOPPED connector `c` listed as UNASSIGNED, settled while its status answers as
    /// `status` says: the state the listing ends with, status reads, and the time waited.
    fn settle_c(
        status: Fault,
        picked: bool,
    ) -> (Option<ConnectorState>, usize, std::time::Duration) {
        let fake = FakeConnect::builder()
            .connector(ConnectorSpec::source("c", "K").state(State::Stopped))
            .in_process();
        let client = fake.client();
        let mut listing = client.list_connectors().unwrap();
        let shown = ConnectorStatus::from_json(&unassigned()).unwrap();
        listing.get_mut("c").unwrap().status = Some(shown);
        fake.fault(status.respond_json(200, unassigned()));
        let clock = ManualClock::default();
        let policy = WaitPolicy::with_timeout(LISTING_WAIT);
        settle_listing_with(&client, &mut listing, |_| picked, &clock, &policy);
        let reads = fake.count("GET", "/connectors/c/status");
        fake.clear_faults(); // a fault that never fired is the point of one case
        (listing["c"].state(), reads, clock.elapsed())
    }

    #[test]
    fn a_transient_state_in_a_listing_is_read_again_until_it_settles() {
        let (state, reads, _) = settle_c(Fault::on("GET", "/connectors/c/status").first(2), true);
        assert_eq!((state, reads), (Some(ConnectorState::Stopped), 3));
    }

    #[test]
    fn a_state_that_stays_transient_is_kept_after_the_wait() {
        let (state, _, waited) = settle_c(Fault::on("GET", "/connectors/c/status").always(), true);
        assert_eq!(state, Some(ConnectorState::Unassigned));
        assert_eq!(waited, LISTING_WAIT);
    }

    /// A RUNNING connector listed with its task UNASSIGNED (moving between workers): read
    /// again until the task is placed; one still unassigned after the wait is kept so, and
    /// the health verdict says UNASSIGNED.
    #[test]
    fn a_task_unassigned_in_a_listing_is_read_again_until_placed_or_the_wait_ends() {
        let moving = json!({"name": "c", "connector": {"state": "RUNNING", "worker_id": "w"},
            "tasks": [{"id": 0, "state": "UNASSIGNED", "worker_id": "w"}], "type": "source"});
        for (fault, placed) in [
            (Fault::on("GET", "/connectors/c/status").first(2), true),
            (Fault::on("GET", "/connectors/c/status").always(), false),
        ] {
            let fake = FakeConnect::builder()
                .connector(ConnectorSpec::source("c", "K").state(State::Running))
                .in_process();
            let client = fake.client();
            let mut listing = client.list_connectors().unwrap();
            listing.get_mut("c").unwrap().status = ConnectorStatus::from_json(&moving);
            fake.fault(fault.respond_json(200, moving.clone()));
            let clock = ManualClock::default();
            let policy = WaitPolicy::with_timeout(LISTING_WAIT);
            settle_listing_with(&client, &mut listing, |_| true, &clock, &policy);
            fake.clear_faults();
            let health = crate::engine::health::Health::of(listing["c"].status.as_ref());
            match placed {
                true => assert!(health.is_healthy(), "{health:?}"),
                false => {
                    assert_eq!(health.verdict(), Some("UNASSIGNED"));
                    assert_eq!(clock.elapsed(), LISTING_WAIT);
                }
            }
        }
    }

    #[test]
    fn a_connector_the_command_does_not_pick_is_not_waited_for() {
        let (state, reads, waited) =
            settle_c(Fault::on("GET", "/connectors/c/status").always(), false);
        assert_eq!(state, Some(ConnectorState::Unassigned));
        assert_eq!((reads, waited), (0, std::time::Duration::ZERO));
    }
}
