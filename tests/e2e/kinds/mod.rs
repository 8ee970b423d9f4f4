//! Real connector kinds, each through kco's round trip: snapshot, change the file (or the
//! live offsets), diff, apply, and the effect downstream (records replayed or not).

mod debezium;
mod debezium_shapes;
mod mirror;
mod shape_classes;
mod sinks;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::Testbed;
use crate::kco_steps::{on, testbed_env};
use crate::support::env::TestEnv;

/// kco against cluster a's first worker (`--url`, `--cluster a`), beside the test bed's
/// kco.yaml.
pub fn on_a(tb: &Testbed) -> TestEnv {
    testbed_env(tb).args(&on(&tb.a(), "a"))
}

/// `kco snapshot NAME` (kco's own file, not the harness's): its path.
pub fn snapshot_of(env: &TestEnv, name: &str) -> PathBuf {
    let (code, out, err) = env.kco(&["snapshot", name]).parts();
    assert_eq!(code, 0, "kco snapshot {name}: {out}{err}");
    let path = env.path().join(format!("snapshots/a/{name}.yaml"));
    assert!(path.is_file(), "{} missing: {out}", path.display());
    // What the real connector wrote fits its class's shape (schemas/shapes.yaml).
    let (code, out, err) = env.kco(&["validate", path.to_str().unwrap()]).parts();
    assert_eq!(code, 0, "kco validate {name}: {out}{err}");
    assert!(!err.contains("notice"), "a class kco knows: {err}");
    path
}

/// `kco diff NAME --fail-on any` must report a difference (exit 2); returns its JSON.
pub fn diff_that_differs(env: &TestEnv, name: &str) -> Value {
    let (code, out, err) = env
        .kco(&["diff", name, "--fail-on", "any", "-o", "json"])
        .parts();
    assert_eq!(
        code, 2,
        "kco diff {name}: a difference expected: {out}{err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `kco apply FILE --yes -o json`, asserted to succeed and converge; its JSON report.
pub fn apply_converged(env: &TestEnv, file: &Path) -> Value {
    let (code, out, err) = env
        .kco(&["apply", file.to_str().unwrap(), "--yes", "-o", "json"])
        .parts();
    assert_eq!(code, 0, "kco apply {}: {out}{err}", file.display());
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["result"]["converged"], true, "{doc}");
    doc
}
