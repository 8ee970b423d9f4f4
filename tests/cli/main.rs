//! Fast CLI tests: the `kco` binary against an in-process fake Kafka Connect.

mod fake_connect;
mod fake_selftest;
