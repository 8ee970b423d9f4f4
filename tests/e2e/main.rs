//! End-to-end tests against a real Kafka Connect test bed (`scripts/local-connect.sh up`).
//!
//! Without a reachable test bed every test skips, unless `KCO_E2E=required`.
//! Worker URLs: `KCO_E2E_A_URLS` (cluster a, comma-separated) and `KCO_E2E_B_URL`.

mod apply;
mod crash;
mod diff;
mod harness;
mod kco_steps;
mod secure;
mod snapshot;
mod testbed;
