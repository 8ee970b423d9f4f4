//! What the CLI tests (`tests/cli`) and the end-to-end tests (`tests/e2e`) share: the one
//! hermetic way to run the `kco` binary ([`run`]), one test's environment around it ([`env`]:
//! its directory, `kco.yaml`, the arguments its runs share) and the builders of their test data
//! ([`data`]: offsets and snapshot files; [`git`]: scratch repositories; [`fakes`]: fake
//! Connect setups used by several files; [`json`]: JSON output read and compared; [`docs`]: the
//! command blocks of the pages the tests run), [`conformance`], the suite every service
//! passes (the fake in each mode, the real worker), and [`behaviours`], what the engine
//! achieves through `kco` on every kind of service. docs/testing.md describes them.

pub mod behaviours;
pub mod conformance;
pub mod data;
pub mod docs;
pub mod env;
pub mod fakes;
pub mod git;
pub mod json;
pub mod run;
