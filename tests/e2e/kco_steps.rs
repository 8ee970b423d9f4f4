//! Steps around the `kco` binary for the end-to-end tests: a kco.yaml naming the test
//! bed's clusters, snapshot files written from live state, edits to those files, and
//! running kco against one worker.

use std::path::{Path, PathBuf};

use serde_json::Value;

use kco::model::file::{OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{secrets, ConnectorState, ConnectorType, OffsetEntry};

use crate::harness::{kco, output_parts, temp_dir, Connect, Testbed};
use crate::support::data::SnapshotFile;

/// Writes `<dir>/kco.yaml` with cluster "a" (both workers) and cluster "b".
pub fn write_config(dir: &Path, tb: &Testbed) {
    let yaml = format!(
        "clusters:\n  a:\n    urls: [{}]\n  b:\n    urls: [{}]\n",
        tb.a_urls.join(", "),
        tb.b_url
    );
    std::fs::write(dir.join("kco.yaml"), yaml).expect("write kco.yaml");
}

/// A temporary directory with a kco.yaml for the test bed's clusters (see [`write_config`]).
pub fn kco_dir(tb: &Testbed) -> tempfile::TempDir {
    let dir = temp_dir();
    write_config(dir.path(), tb);
    dir
}

/// A capture time later than any this process gave before (a second apart at least), so
/// that each file [`write_snapshot`] writes is an observation, as a `kco snapshot` is.
fn capture_time() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let prev = LAST.fetch_max(now, Ordering::SeqCst);
    let t = if prev >= now {
        LAST.fetch_add(1, Ordering::SeqCst) + 1
    } else {
        now
    };
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// A snapshot file of connector `name` on `connect` as it is now (offsets, state and, with
/// `with_config`, its config), written to `<dir>/<cluster>/<name>.yaml` through kco's own
/// file model (not `kco snapshot`: no cluster id, version or class in the metadata); captured
/// now, so an observation, as a file `kco snapshot` rewrote is.
pub fn write_snapshot(
    connect: &Connect,
    name: &str,
    cluster: &str,
    dir: &Path,
    with_config: bool,
) -> PathBuf {
    let status = connect
        .status(name)
        .unwrap_or_else(|| panic!("{name}: no such connector"));
    let kind = match status["type"].as_str() {
        Some("sink") => ConnectorType::Sink,
        _ => ConnectorType::Source,
    };
    let config = with_config
        .then(|| serde_json::from_value(connect.config(name)).expect("config of strings"));
    let state = status["connector"]["state"]
        .as_str()
        .and_then(ConnectorState::parse);
    SnapshotFile::new(name, kind, Value::Array(connect.offsets(name)))
        .cluster(cluster)
        .state(state)
        .config(config)
        .captured_at(&capture_time())
        .write(&kco::engine::store::file_path(dir, cluster, name))
}

/// Rewrites a snapshot file's offsets, given as Connect lists them (and re-seals it).
pub fn set_offsets(path: &Path, offsets: Vec<Value>) {
    let offsets: Vec<OffsetEntry> =
        serde_json::from_value(Value::Array(offsets)).expect("offset entries");
    edit_file(path, |f| {
        f.offsets = offsets;
        f.seal();
    });
}

/// Replaces secret-looking config values with placeholders, as `snapshot --with-config` does.
pub fn redact_config(path: &Path) {
    edit_file(path, |f| {
        let (redacted, _) = secrets::redact(
            &f.metadata.name,
            f.config.as_ref().unwrap(),
            &Default::default(),
        );
        f.config = Some(redacted);
    });
}

fn edit_file(path: &Path, edit: impl FnOnce(&mut OffsetsFile)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut f = OffsetsFile::parse(path, &text).unwrap();
    edit(&mut f);
    std::fs::write(path, f.render(DEFAULT_SCHEMA_REF)).unwrap();
}

/// Runs `kco --url <connect> --cluster <cluster> <args>` in `dir`; returns the exit code
/// (-1 when killed by a signal), stdout and stderr.
pub fn kco_on(
    connect: &Connect,
    cluster: &str,
    dir: &Path,
    args: &[&str],
) -> (i32, String, String) {
    let mut all = vec!["--url", connect.base.as_str(), "--cluster", cluster];
    all.extend_from_slice(args);
    output_parts(&kco(&all, dir))
}
