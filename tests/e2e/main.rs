//! End-to-end tests against the real test bed (scripts/local-connect.sh).

mod apply;
mod apply_bed;
