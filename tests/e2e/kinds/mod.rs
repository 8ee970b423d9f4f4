//! Real connector kinds, each through kco's round trip: snapshot, change the file (or the
//! live offsets), diff, apply, and the effect downstream (records replayed or not).

mod debezium;
mod debezium_shapes;
mod mirror;
mod shape_classes;
mod sinks;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::Connect;
use crate::kco_steps::kco_on;

/// `kco snapshot NAME` on cluster a (kco's own file, not the harness's): its path.
pub fn kco_snapshot(a: &Connect, dir: &Path, name: &str) -> PathBuf {
    let (code, out, err) = kco_on(a, "a", dir, &["snapshot", name]);
    assert_eq!(code, 0, "kco snapshot {name}: {out}{err}");
    let path = dir.join(format!("snapshots/a/{name}.yaml"));
    assert!(path.is_file(), "{} missing: {out}", path.display());
    // What the real connector wrote fits its class's shape (schemas/shapes.yaml).
    let (code, out, err) = kco_on(a, "a", dir, &["validate", path.to_str().unwrap()]);
    assert_eq!(code, 0, "kco validate {name}: {out}{err}");
    assert!(!err.contains("notice"), "a class kco knows: {err}");
    path
}

/// `kco diff NAME --fail-on any` must report a difference (exit 2); returns its JSON.
pub fn kco_diff_differs(a: &Connect, dir: &Path, name: &str) -> Value {
    let (code, out, err) = kco_on(
        a,
        "a",
        dir,
        &["diff", name, "--fail-on", "any", "-o", "json"],
    );
    assert_eq!(
        code, 2,
        "kco diff {name}: a difference expected: {out}{err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `kco apply FILE --yes -o json` on cluster a, asserted to succeed; its JSON report.
pub fn kco_apply(a: &Connect, dir: &Path, file: &Path) -> Value {
    let (code, out, err) = kco_on(
        a,
        "a",
        dir,
        &["apply", file.to_str().unwrap(), "--yes", "-o", "json"],
    );
    assert_eq!(code, 0, "kco apply {}: {out}{err}", file.display());
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["result"]["converged"], true, "{doc}");
    doc
}
