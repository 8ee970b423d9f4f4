//! Fast CLI tests: the `kco` binary against an in-process fake Kafka Connect.

mod apply;
mod fake_connect;
mod fake_selftest;
