//! End-to-end tests against a real Kafka Connect test bed (`scripts/local-connect.sh up`).
//!
//! Without a reachable test bed every test skips, unless `KCO_E2E=required`.
//! Worker URLs: `KCO_E2E_A_URLS` (cluster a, comma-separated) and `KCO_E2E_B_URL`.

mod accidents;
mod apply;
mod behaviours;
mod compat_doc;
mod conformance;
mod crash;
mod diff;
mod dr;
mod dr_runbook;
mod gateway;
mod gitops;
mod harness;
mod history;
mod history_delta;
mod image;
mod init_doctor;
mod kco_steps;
mod kinds;
mod lock;
mod metrics;
mod month;
mod msk_connect;
mod msk_iam;
mod msk_mode;
mod orphaned;
mod queued_stop;
mod recipes;
mod remotes;
mod reset;
mod secure;
mod snapshot;
mod standalone;
#[path = "../support/mod.rs"]
#[allow(dead_code)] // shared with tests/cli; this suite uses a part
mod support;
mod target_cluster;
mod tasks;
mod testbed;
mod testbed_sink;
mod through_kafka;
mod week;
mod wrong_topics;
