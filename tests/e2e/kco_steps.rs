//! Steps around the `kco` binary for the end-to-end tests: a kco.yaml naming the test
//! bed's clusters, snapshot files written from live state, edits to those files, and
//! kco's arguments for one worker.

use std::path::{Path, PathBuf};

use serde_json::Value;

use kco::model::file::{OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{secrets, ConnectorState, ConnectorType, OffsetEntry};

use crate::harness::{Connect, Testbed};
use crate::support::data::SnapshotFile;
use crate::support::env::TestEnv;
use crate::support::git::git;

/// Writes `<dir>/kco.yaml` with cluster "a" (both workers) and cluster "b".
pub fn write_config(dir: &Path, tb: &Testbed) {
    let yaml = format!(
        "clusters:\n  a:\n    urls: [{}]\n  b:\n    urls: [{}]\n",
        tb.a_urls.join(", "),
        tb.b_url
    );
    std::fs::write(dir.join("kco.yaml"), yaml).expect("write kco.yaml");
}

/// A [`TestEnv`] in a temp directory of its own, with a kco.yaml for the test bed's clusters
/// (see [`write_config`]).
pub fn testbed_env(tb: &Testbed) -> TestEnv {
    let env = TestEnv::new();
    write_config(env.path(), tb);
    env
}

/// kco's arguments for `connect` as `cluster`: `--url <connect> --cluster <cluster>`.
pub fn on<'a>(connect: &'a Connect, cluster: &'a str) -> [&'a str; 4] {
    ["--url", &connect.base, "--cluster", cluster]
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

/// `kco --cluster a apply snapshots/a <args> --yes`: exit code, stdout, stderr.
pub fn apply_snapshots(env: &TestEnv, args: &[&str]) -> (i32, String, String) {
    let head = ["--cluster", "a", "apply", "snapshots/a"];
    env.kco(&[&head[..], args, &["--yes"]].concat()).parts()
}

// What week.rs and month.rs share: a sink reading three single-partition topics, its offsets
// by topic, hand edits of its file, the labels of a review, clones of a shared remote.

/// Offsets by topic index: `None` where the partition has no offset.
pub type Offs = [Option<i64>; 3];

/// The sink's offsets per topic, as `topics` orders them.
pub fn by_topic(topics: &[String], entries: &[Value]) -> Offs {
    let mut out = [None; 3];
    for e in entries {
        let Some(off) = e["offset"]["kafka_offset"].as_i64() else {
            continue;
        };
        let t = e["partition"]["kafka_topic"].as_str().unwrap();
        let i = topics.iter().position(|x| x == t).expect("a topic of ours");
        out[i] = Some(off);
    }
    out
}

/// Waits until the worker holds exactly `want` for the sink; returns it.
pub fn wait_live(a: &Connect, sink: &str, topics: &[String], want: Offs, what: &str) -> Offs {
    let got = a.wait_offsets(sink, what, |o| by_topic(topics, o) == want);
    by_topic(topics, &got)
}

/// The offsets a snapshot file holds, per topic (the test's own reading of the YAML).
pub fn file_offsets(path: &Path, topics: &[String]) -> Offs {
    text_offsets(&std::fs::read_to_string(path).unwrap(), topics)
}

/// [`file_offsets`] of a snapshot file's text (a version of it in git, say).
pub fn text_offsets(text: &str, topics: &[String]) -> Offs {
    let doc: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
    let entries: Value = serde_json::to_value(&doc["offsets"]).unwrap();
    by_topic(topics, entries.as_array().unwrap())
}

/// Edits a snapshot file's offsets as a teammate would, by hand (the checksum then no longer
/// matches: `kco fmt` re-seals it): `offset` set, `None` removes the partition.
pub fn hand_edit_offset(path: &Path, topic: &str, offset: Option<i64>) {
    let mut doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let list = doc["offsets"].as_sequence_mut().unwrap();
    let at = list
        .iter()
        .position(|e| e["partition"]["kafka_topic"].as_str() == Some(topic))
        .expect("the partition is in the file");
    match offset {
        Some(o) => list[at]["offset"]["kafka_offset"] = o.into(),
        None => {
            list.remove(at);
        }
    }
    std::fs::write(path, serde_yaml::to_string(&doc).unwrap()).unwrap();
}

/// Edits a snapshot file by hand, `from` replaced by `to` (a rewind, say), and re-seals it with
/// `kco fmt` in `env`, asserted to succeed.
pub fn edit_and_fmt(env: &TestEnv, file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap().replace(from, to);
    std::fs::write(file, text).unwrap();
    let (code, o, e) = env.kco(&["fmt", file.to_str().unwrap()]).parts();
    assert_eq!(code, 0, "{o}{e}");
}

/// `(partition, LABEL, message)` of each partition a `diff -o json` lists for `sink`.
pub fn review(json: &str, sink: &str) -> Vec<(String, String, String)> {
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let mut out = Vec::new();
    for c in v["connectors"].as_array().unwrap() {
        if c["name"] != sink {
            continue;
        }
        for p in c["partitions"].as_array().unwrap() {
            let label = match p["risk"]["code"].as_str() {
                _ if p["live"]["left"].is_string() => "LEFT",
                Some("reprocessing") => "REPROCESSING",
                Some("data_loss") => "DATA LOSS",
                Some("offset_reset") | Some("source_restart") => "OFFSET RESET",
                Some(other) => other,
                None => "-",
            };
            out.push((
                p["partition"]["kafka_topic"].as_str().unwrap().to_string(),
                label.to_string(),
                p["risk"]["message"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out.sort();
    out
}

/// A clone of the shared remote, with its own git identity (kco commits with it).
pub fn clone(root: &Path, name: &str) -> PathBuf {
    git(root, &["clone", "-q", "remote.git", name]);
    let dir = root.join(name);
    git(&dir, &["config", "user.name", name]);
    git(
        &dir,
        &["config", "user.email", &format!("{name}@example.com")],
    );
    dir
}

/// `git merge --no-ff -m <title> <branch>` in `clone`, pushed to origin's `main`: the merge.
pub fn merge_pr(clone: &Path, title: &str, branch: &str) -> String {
    git(clone, &["merge", "-q", "--no-ff", "-m", title, branch]);
    git(clone, &["push", "-q", "origin", "main"]);
    git(clone, &["rev-parse", "HEAD"])
}

/// `kco --cluster a <args>` in both `clones` at once, two runners applying through their
/// shared remote: exactly one goes ahead; the other fails at once naming the lock's holder,
/// before any plan. Afterwards no lock is left on `remote`.
pub fn one_goes_ahead(clones: &[PathBuf], args: &[&str], remote: &Path) {
    let spawn = |dir: &Path| TestEnv::at(dir).cmd().args(["--cluster", "a"]).args(args);
    let (one, two) = (spawn(&clones[0]).spawn(), spawn(&clones[1]).spawn());
    let runs = [one.finish(), two.finish()];
    let mut codes: Vec<i32> = runs.iter().map(|r| r.code).collect();
    codes.sort();
    assert_eq!(codes, [0, 1], "{runs:#?}");
    let loser = runs.iter().find(|r| r.code == 1).unwrap();
    assert!(
        loser
            .stderr
            .contains("cluster `a` is locked by another kco: pid ")
            && loser
                .stderr
                .contains("refs/kco/locks/a on git remote `origin`"),
        "{loser:#?}"
    );
    assert!(!loser.stdout.contains("Plan for cluster"), "{loser:#?}");
    let refs = git(
        remote,
        &["for-each-ref", "--format=%(refname)", "refs/kco/"],
    );
    assert_eq!(refs, "", "the lock is released");
}

/// How many times the sink wrote `line` to its output file.
pub fn count(out: &Path, line: &str) -> usize {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count()
}
