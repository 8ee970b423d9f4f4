//! What the fake's Confluent Cloud mode keeps beside the shared cluster: the service's ids,
//! its key, its clock, and per connector its observations and its last alter request. Data
//! only; the routes that serve it are `cloud.rs`.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

use super::kinds::{OffsetEntry, State};
use crate::client::CloudIds;

/// The service's state beside the shared cluster.
#[derive(Debug, Clone)]
pub(crate) struct CloudMode {
    pub ids: CloudIds,
    /// The `Authorization` header every request must carry, when an API key is set.
    pub authorization: Option<String>,
    /// Status reads each phase before `APPLIED` lasts.
    pub phase_reads: u32,
    /// Stale reads every connector starts with.
    pub stale_reads: u32,
    /// A fixed start for the service's clock (it then runs on from there).
    pub clock: Option<(SystemTime, Instant)>,
    /// Per connector name: what the service keeps about it.
    pub connectors: BTreeMap<String, CloudConnector>,
    /// Per connector name: how its alter requests misbehave.
    pub faults: BTreeMap<String, AlterFaults>,
}

/// What the service keeps about one connector.
#[derive(Debug, Clone, Default)]
pub(crate) struct CloudConnector {
    /// Reads left that answer an old observation.
    pub stale_reads: u32,
    /// The offsets before the last applied change (what an old observation shows).
    pub before_change: Option<Vec<OffsetEntry>>,
    /// When the last change was applied (whole seconds).
    pub applied_at: Option<SystemTime>,
    /// When the last read said the offsets were observed.
    pub observed_at: Option<SystemTime>,
    /// The last alter request.
    pub request: Option<AlterRecord>,
    /// Alter requests accepted so far.
    pub accepted: usize,
}

/// How a connector's alter requests misbehave (set by the builder or the test).
#[derive(Debug, Clone, Default)]
pub struct AlterFaults {
    /// The request ends FAILED with this message; nothing changes.
    pub fails: Option<String>,
    /// The request stays PENDING.
    pub stuck: bool,
    /// This phase is shown instead of `PENDING_VALIDATION`.
    pub unknown_phase: Option<String>,
}

/// One alter request, as the status shows it.
#[derive(Debug, Clone)]
pub(crate) struct AlterRecord {
    /// `PATCH` or `DELETE`.
    pub kind: String,
    /// The partitions asked for, normalized (an empty list: every partition, for DELETE).
    pub updates: Vec<OffsetEntry>,
    pub requested_at: SystemTime,
    pub status_reads: u32,
    pub phase: String,
    pub message: String,
    pub previous_offsets: Option<Vec<OffsetEntry>>,
    pub applied_at: Option<SystemTime>,
    /// The state the connector comes back to when the request is over.
    pub restore: State,
}

impl AlterRecord {
    pub(crate) fn is_final(&self) -> bool {
        self.phase == "APPLIED" || self.phase == "FAILED"
    }
}

impl CloudMode {
    pub fn new(environment: &str, kafka_cluster: &str) -> CloudMode {
        CloudMode {
            ids: CloudIds {
                environment: environment.to_string(),
                kafka_cluster: kafka_cluster.to_string(),
            },
            authorization: None,
            phase_reads: 1,
            stale_reads: 0,
            clock: None,
            connectors: BTreeMap::new(),
            faults: BTreeMap::new(),
        }
    }

    /// `/connect/v1/environments/{env}/clusters/{lkc}`.
    pub fn base_path(&self) -> String {
        crate::client::Backend::ConfluentCloud(self.ids.clone()).base_path()
    }

    /// The service's clock.
    pub fn now(&self) -> SystemTime {
        match self.clock {
            Some((at, started)) => at + started.elapsed(),
            None => crate::clock::real_now(),
        }
    }

    /// What the service keeps about `name` (created on first use).
    pub fn connector(&mut self, name: &str) -> &mut CloudConnector {
        let stale = self.stale_reads;
        self.connectors
            .entry(name.to_string())
            .or_insert_with(|| CloudConnector {
                stale_reads: stale,
                ..CloudConnector::default()
            })
    }
}
