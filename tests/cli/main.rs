//! Fast CLI tests: the `kco` binary against an in-process fake Kafka Connect.

mod apply;
mod behaviours;
mod confluent_cloud;
mod confluent_cloud_apply;
mod conformance;
mod corpus;
mod crash;
mod crash_snapshot;
mod diff;
mod diff_base;
mod diff_lines;
mod doc_pages;
mod dr;
mod errors;
mod exit_codes;
/// The one fake of Connect, from the library (the `fake` feature).
use kco::fake as fake_connect;
mod fake_selftest;
mod fault_matrix;
mod fmt;
mod getting_started;
mod global_flags;
mod guarded;
mod history;
mod history_apply;
mod history_delta;
mod init_doctor;
mod interchange;
mod interrupt;
mod lock;
mod merge_file;
mod metrics;
mod output_snapshots;
mod recipes;
mod records;
mod secrets;
mod shapes;
mod ship;
mod snapshot;
#[path = "../support/mod.rs"]
#[allow(dead_code)] // shared with tests/e2e, which uses parts this suite does not
mod support;
mod target_cluster;
mod through_kafka;
mod undo;
mod validate;
mod voice;
