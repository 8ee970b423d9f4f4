//! The silent core of each command: what to do against a cluster and the files, returning
//! reports as data. Nothing here prints.

pub mod apply;
pub mod diff;
pub mod dr;
pub mod fail_on;
pub mod fmt;
pub mod health;
pub mod history;
pub mod import;
pub mod interchange;
pub mod ls;
pub mod membership;
pub mod merge;
pub mod metrics;
pub mod mirror;
pub mod neighbours;
pub mod observed;
pub mod operation;
pub mod orphaned;
pub mod parallel;
pub mod probe;
pub mod progress;
pub mod revision;
pub mod risk;
pub mod select;
pub mod service_pause;
pub mod settle;
pub mod shape_gate;
pub mod shared_group;
pub mod sink_lag;
pub mod snapshot;
mod snapshot_stale;
pub mod store;
pub mod strimzi;
pub mod through_kafka;
pub mod validate;

#[cfg(test)]
pub(crate) mod testkit;

pub use probe::{probe, require_version, ClusterInfo};
pub use select::Selector;
pub use store::{load_files, LoadedFile};
