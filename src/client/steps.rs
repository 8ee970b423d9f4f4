//! How a service makes one connector's change: the steps, in order, from the closed set the
//! engine runs ([`Op`]). Each service says its own list ([`Service::steps`](super::Service));
//! one executor (`engine::apply::transaction`) runs any list, with the same rule for every
//! service: a step that takes the connector out of its state is followed, whatever fails
//! after it, by the step that puts the recorded state back.
//!
//! A service whose change is another sequence (describe, delete, write the offsets through
//! Kafka, create again) is a new list here and, for a step the set lacks, one new [`Op`]
//! with its one implementation in the executor: no flag, no branch per service.

use serde::Serialize;

/// The kind of change a connector's plan makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Offsets moved (or removed with `--prune`) on an existing connector.
    Patch,
    /// Every offset removed.
    Reset,
    /// A connector created from its file, at the file's offsets.
    Create,
    /// Its offsets removed, then the connector deleted (undoing a create).
    Delete,
}

/// One step of a change, as the executor runs it and a plan shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Reads the connector's state (settled), the state put back after the change.
    RecordState,
    /// kco stops the connector and waits until it is STOPPED (nothing sent when it is).
    Stop,
    /// The offsets altered by PATCH (or DELETE of every one for a reset), answered once done;
    /// a request whose answer was lost is read back before it is sent again.
    Alter,
    /// The offsets altered by requests the service applies later, one per kind of change,
    /// each request's status read until it is applied or failed; the journal keeps each
    /// request before it is sent.
    RequestAlter,
    /// The offsets read back until they are as wanted.
    Verify,
    /// The offsets read back until the service observed them after the change, as wanted.
    VerifyObserved,
    /// The connector created in the STOPPED state, and waited for.
    Create,
    /// The connector created at its position in one request, started by the service.
    CreateAt,
    /// The connector deleted.
    Delete,
    /// kco asks for the recorded state (or the planned end state) and waits for it, and
    /// for a RUNNING one, its tasks.
    Restore,
    /// The service puts the state back itself: kco waits for it, and asks for it only when
    /// it does not come.
    AwaitRestore,
    /// The connector's definition read (everything the service's create call takes), to
    /// create it again with.
    Describe,
    /// The connector deleted, its definition written to the journal first (a kill from here
    /// on is recovered by creating it again), and waited until it is gone and its sink's
    /// group has no members.
    DeleteKeeping,
    /// The offsets written to the offsets topic (one Kafka transaction) and the sink's group,
    /// and read back.
    WriteTopic,
    /// The connector created again from its definition, and waited until it runs.
    CreateFrom,
}

impl Op {
    /// Whether this step takes the connector out of the state it was recorded in: from
    /// then on, a failure is followed by the list's step that puts it back.
    pub fn holds(self) -> bool {
        matches!(self, Op::Stop | Op::RequestAlter | Op::DeleteKeeping)
    }

    /// Whether this step puts the recorded state back.
    pub fn puts_back(self) -> bool {
        matches!(self, Op::Restore | Op::AwaitRestore | Op::CreateFrom)
    }

    /// Whether this step writes the offsets through Kafka rather than through the service:
    /// a list with it runs as one write of every connector's offsets (`Operation::run_topic`),
    /// not as one transaction per connector.
    pub fn through_kafka(self) -> bool {
        matches!(self, Op::WriteTopic)
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = serde_json::to_value(self).expect("a step serializes");
        f.write_str(s.as_str().unwrap_or("?"))
    }
}

/// Kafka Connect's steps (KIP-875): kco stops the connector, alters its offsets by one
/// request answered once done, reads them back and puts the state back; a connector is
/// created STOPPED (KIP-980), then altered.
pub fn kafka_connect(change: ChangeKind) -> &'static [Op] {
    use Op::*;
    match change {
        ChangeKind::Patch | ChangeKind::Reset => &[RecordState, Stop, Alter, Verify, Restore],
        ChangeKind::Create => &[Create, Alter, Verify, Restore],
        ChangeKind::Delete => &[RecordState, Stop, Alter, Verify, Delete],
    }
}

/// The steps of a service that pauses the connector around an alter request it applies
/// later, observes offsets periodically and creates a connector at its position (Confluent
/// Cloud's managed connectors).
pub fn requested_alters(change: ChangeKind) -> &'static [Op] {
    use Op::*;
    match change {
        ChangeKind::Patch | ChangeKind::Reset => {
            &[RecordState, RequestAlter, VerifyObserved, AwaitRestore]
        }
        ChangeKind::Create => &[CreateAt, VerifyObserved, AwaitRestore],
        ChangeKind::Delete => &[RecordState, RequestAlter, VerifyObserved, Delete],
    }
}

/// The steps of a service that can neither stop a connector nor alter its offsets, but
/// deletes and creates connectors, and whose workers read their offsets from an offsets topic
/// (and a sink's group) that kco writes through Kafka (Amazon MSK Connect with a pinned
/// `offset.storage.topic`): the connector is described, deleted with its definition kept,
/// its offsets written, and created again from the definition. A connector is not created
/// nor deleted for a file (its definition holds more than a file has): no steps.
pub fn recreated_around_a_kafka_write(change: ChangeKind) -> &'static [Op] {
    use Op::*;
    match change {
        ChangeKind::Patch | ChangeKind::Reset => {
            &[RecordState, Describe, DeleteKeeping, WriteTopic, CreateFrom]
        }
        ChangeKind::Create | ChangeKind::Delete => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list that takes the connector out of its state puts it back, or deletes it,
    /// after: the executor's rule needs a step to run when something fails.
    #[test]
    fn every_list_that_holds_a_connector_ends_by_putting_it_back_or_deleting_it() {
        for list in [
            kafka_connect,
            requested_alters,
            recreated_around_a_kafka_write,
        ] {
            for change in [
                ChangeKind::Patch,
                ChangeKind::Reset,
                ChangeKind::Create,
                ChangeKind::Delete,
            ] {
                let ops = list(change);
                let Some(&last) = ops.last() else {
                    continue;
                };
                assert!(
                    last.puts_back() || last == Op::Delete,
                    "{change:?}: {ops:?}"
                );
                let first_hold = ops.iter().position(|o| o.holds());
                if let Some(i) = first_hold {
                    assert!(ops[..i].contains(&Op::RecordState), "{change:?}: {ops:?}");
                }
            }
        }
    }

    #[test]
    fn steps_are_shown_by_their_snake_case_names() {
        assert_eq!(Op::RequestAlter.to_string(), "request_alter");
        assert_eq!(Op::AwaitRestore.to_string(), "await_restore");
    }
}
