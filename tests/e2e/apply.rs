//! `kco apply` on the real test bed: the move, a sink rewind, --prune, states put back,
//! idempotence, recovery onto another cluster, and an apply during a worker restart.

use std::path::Path;
use std::sync::RwLock;

use serde_json::{json, Value};

use crate::apply_bed::*;
use kco::model::file::{OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{secrets, OffsetEntry};

/// The worker-restart test takes this for writing, so it runs alone.
static BED: RwLock<()> = RwLock::new(());

fn ok(o: &std::process::Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn entry(v: Value) -> OffsetEntry {
    serde_json::from_value(v).unwrap()
}

fn position(file: &str, pos: u64) -> OffsetEntry {
    entry(json!({"partition": {"filename": file}, "offset": {"position": pos}}))
}

/// Rewrites a snapshot file's offsets (and re-seals it).
fn set_offsets(path: &Path, offsets: Vec<OffsetEntry>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut f = OffsetsFile::parse(path, &text).unwrap();
    f.offsets = offsets;
    f.seal();
    std::fs::write(path, f.render(DEFAULT_SCHEMA_REF)).unwrap();
}

/// Replaces secret-looking config values with placeholders, as `snapshot --with-config` does.
fn redact_config(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut f = OffsetsFile::parse(path, &text).unwrap();
    let (redacted, _) = secrets::redact(
        &f.metadata.name,
        f.config.as_ref().unwrap(),
        &Default::default(),
    );
    f.config = Some(redacted);
    std::fs::write(path, f.render(DEFAULT_SCHEMA_REF)).unwrap();
}

/// A FileStreamSource on `url` that has read all `lines` lines of its own file.
fn source_at_end(
    url: &'static str,
    dir: &Path,
    prefix: &str,
    lines: usize,
) -> (Connector, String, u64) {
    let name = unique(prefix);
    let input = dir.join(format!("{name}.txt"));
    append_lines(&input, 1, lines);
    let len = std::fs::metadata(&input).unwrap().len();
    let c = Connector::create(url, &name, file_source(&input, &unique("topic")), None);
    let file = input.to_string_lossy().into_owned();
    wait(&format!("{name} to commit position {len}"), || {
        c.offsets() == vec![position(&file, len)]
    });
    (c, file, len)
}

#[test]
fn move_a_source_to_a_new_name_on_another_cluster() {
    if !up() {
        return;
    }
    let _bed = BED.read().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let topic = unique("move");
    let input = dir.path().join("in.txt");
    append_lines(&input, 1, 50);
    let len = std::fs::metadata(&input).unwrap().len();
    let mut config = file_source(&input, &topic);
    config["kco.test.password"] = json!("pw-value");
    let src = Connector::create(A, &unique("move-src"), config, None);
    let file = input.to_string_lossy().into_owned();
    wait("the first 50 lines to be read", || {
        src.offsets() == vec![position(&file, len)]
    });
    // Captured while running (and idle at the end of its input), so the file says RUNNING and
    // the new connector is started; then the old one is deleted before more input arrives.
    let snap = snapshot(&src, "a", &dir.path().join("snapshots"), true);
    redact_config(&snap);
    let var = secrets::env_var_name(&src.name, "kco.test.password");
    assert!(std::fs::read_to_string(&snap).unwrap().contains(&var));
    assert!(!std::fs::read_to_string(&snap).unwrap().contains("pw-value"));
    drop(src);
    append_lines(&input, 51, 100);

    let new = unique("move-dst");
    let _dst_guard = Connector::adopt(B, &new);
    let args = [
        "--cluster",
        "b",
        "apply",
        snap.to_str().unwrap(),
        "--as",
        &new,
        "--create",
        "--yes",
    ];
    let o = kco_env(dir.path(), &args, &[(var.as_str(), "pw-value")]);
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("pw-value"));
    let dst = Connector::adopt(B, &new);
    dst.wait_state("RUNNING");
    let cfg = call("GET", &dst.path("/config"), None).1;
    assert_eq!(cfg["kco.test.password"], "pw-value");
    assert_eq!(cfg["name"], new.as_str());
    let reader = TopicReader::new(dir.path(), &topic);
    assert_eq!(reader.wait_lines(100), expected_lines(1, 100));
    std::mem::forget(dst); // `_dst_guard` deletes it
}

#[test]
fn a_sink_rewind_reprocesses_from_exactly_there() {
    if !up() {
        return;
    }
    let _bed = BED.read().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let topic = unique("rewind");
    let input = dir.path().join("in.txt");
    append_lines(&input, 1, 20);
    let _src = Connector::create(A, &unique("rewind-src"), file_source(&input, &topic), None);
    let out = dir.path().join("sink.out");
    let sink = Connector::create(
        A,
        &unique("rewind-sink"),
        json!({"connector.class": FILE_SINK, "file": out, "topics": topic, "tasks.max": "1"}),
        None,
    );
    let lines = || -> Vec<String> {
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    };
    wait("20 lines in the sink", || lines().len() >= 20);
    let committed = entry(
        json!({"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 20}}),
    );
    wait("the sink to commit offset 20", || {
        sink.offsets() == vec![committed.clone()]
    });
    let snap = snapshot(&sink, "a", &dir.path().join("snapshots"), false);
    let rewound = entry(
        json!({"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 10}}),
    );
    set_offsets(&snap, vec![rewound]);

    let o = kco(
        dir.path(),
        &["--cluster", "a", "apply", snap.to_str().unwrap(), "--yes"],
    );
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("backward 10 records"));
    wait("30 lines in the sink", || lines().len() >= 30);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let got = lines();
    assert_eq!(got.len(), 30, "{got:?}");
    assert_eq!(got[..20], expected_lines(1, 20)[..]);
    assert_eq!(got[20..], expected_lines(11, 20)[..]);
    assert_eq!(sink.state(), "RUNNING");
}

#[test]
fn prune_removes_live_only_partitions_and_a_stopped_connector_stays_stopped() {
    if !up() {
        return;
    }
    let _bed = BED.read().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let input = dir.path().join("in.txt");
    let c = Connector::create(
        A,
        &unique("prune"),
        file_source(&input, &unique("t")),
        Some("STOPPED"),
    );
    c.wait_state("STOPPED");
    c.patch(json!([
        {"partition": {"filename": "/kco/f1"}, "offset": {"position": 5}},
        {"partition": {"filename": "/kco/f2"}, "offset": {"position": 7}}
    ]));
    let snap = snapshot(&c, "a", &dir.path().join("snapshots"), false);
    set_offsets(&snap, vec![position("/kco/f1", 3)]);
    let path = snap.to_str().unwrap();

    let o = kco(dir.path(), &["--cluster", "a", "apply", path, "--yes"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("kept (live only; --prune removes it)"));
    let mut got = c.offsets();
    got.sort_by_key(|e| e.partition["filename"].to_string());
    assert_eq!(got, vec![position("/kco/f1", 3), position("/kco/f2", 7)]);
    assert_eq!(c.state(), "STOPPED");

    let o = kco(
        dir.path(),
        &["--cluster", "a", "apply", path, "--yes", "--prune"],
    );
    ok(&o);
    assert_eq!(c.offsets(), vec![position("/kco/f1", 3)]);
    assert_eq!(c.state(), "STOPPED");
}

#[test]
fn states_are_put_back_and_a_second_apply_sends_nothing() {
    if !up() {
        return;
    }
    let _bed = BED.read().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let snaps = dir.path().join("snapshots");
    let (running, _, _) = source_at_end(A, dir.path(), "st-run", 5);
    let (paused, _, _) = source_at_end(A, dir.path(), "st-pause", 5);
    paused.put("pause");
    paused.wait_state("PAUSED");
    let (stopped, _, _) = source_at_end(A, dir.path(), "st-stop", 5);
    stopped.stop();
    // Each file: the live offsets plus one more partition, so that applying changes something
    // and the connector, at the end of its own file, then holds still.
    for c in [&running, &paused, &stopped] {
        let snap = snapshot(c, "a", &snaps, false);
        let mut offsets = c.offsets();
        offsets.push(position(&format!("/kco/extra/{}", c.name), 11));
        set_offsets(&snap, offsets);
    }
    let dir_arg = snaps.join("a");
    let dir_arg = dir_arg.to_str().unwrap();
    let o = kco(
        dir.path(),
        &["--cluster", "a", "apply", dir_arg, "--yes", "-o", "json"],
    );
    ok(&o);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["result"]["converged"], true);
    running.wait_state("RUNNING");
    assert_eq!(running.state(), "RUNNING");
    assert_eq!(paused.state(), "PAUSED");
    assert_eq!(stopped.state(), "STOPPED");
    for c in [&running, &paused, &stopped] {
        assert!(c
            .offsets()
            .contains(&position(&format!("/kco/extra/{}", c.name), 11)));
    }

    let o = kco(
        dir.path(),
        &["--cluster", "a", "apply", dir_arg, "--yes", "-o", "json"],
    );
    ok(&o);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["result"]["mutating_calls"], 0, "{doc}");
    for c in doc["plan"]["connectors"].as_array().unwrap() {
        assert_eq!(c["action"]["kind"], "no_change", "{c}");
    }
}

#[test]
fn a_set_of_connectors_is_recovered_onto_an_empty_cluster() {
    if !up() {
        return;
    }
    let _bed = BED.read().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let snaps = dir.path().join("snapshots");
    let mut expected = Vec::new();
    let mut guards = Vec::new();
    for i in 0..3 {
        let (c, file, len) = source_at_end(A, dir.path(), &format!("dr{i}"), 5 + i);
        snapshot(&c, "a", &snaps, true);
        expected.push((c.name.clone(), file, len));
        guards.push(Connector::adopt(B, &c.name));
        drop(c); // gone from a
    }
    let listing = call("GET", &format!("{B}/connectors"), None).1;
    for (name, _, _) in &expected {
        assert!(
            !listing.as_array().unwrap().contains(&json!(name)),
            "{name} on b"
        );
    }
    let o = kco(
        dir.path(),
        &[
            "--cluster",
            "b",
            "apply",
            snaps.join("a").to_str().unwrap(),
            "--create",
            "--yes",
        ],
    );
    ok(&o);
    for (name, file, len) in &expected {
        let c = Connector::adopt(B, name);
        c.wait_state("RUNNING");
        assert_eq!(c.offsets(), vec![position(file, *len)], "{name}");
        std::mem::forget(c); // the guard deletes it
    }
}

#[test]
fn an_apply_during_a_worker_restart_converges() {
    if !up() {
        return;
    }
    let _bed = BED.write().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_config(dir.path());
    let snaps = dir.path().join("snapshots");
    let mut conns = Vec::new();
    for i in 0..4 {
        let (c, _, _) = source_at_end(A, dir.path(), &format!("rs{i}"), 3);
        let snap = snapshot(&c, "a", &snaps, false);
        let mut offsets = c.offsets();
        offsets.push(position(&format!("/kco/extra/{}", c.name), 1));
        set_offsets(&snap, offsets);
        conns.push(c);
    }
    let script = std::env::var("KCO_TESTBED_SCRIPT")
        .unwrap_or_else(|_| format!("{}/scripts/local-connect.sh", env!("CARGO_MANIFEST_DIR")));
    let restart = std::thread::spawn(move || {
        std::process::Command::new(script)
            .args(["restart-worker", "a2"])
            .output()
            .unwrap()
    });
    wait("worker a2 to go down", || {
        reqwest::blocking::get(format!("{A2}/")).is_err()
    });
    let o = kco(
        dir.path(),
        &[
            "--cluster",
            "a",
            "apply",
            snaps.join("a").to_str().unwrap(),
            "--yes",
            "-v",
        ],
    );
    let restarted = restart.join().unwrap();
    assert!(
        restarted.status.success(),
        "restart-worker: {}",
        String::from_utf8_lossy(&restarted.stderr)
    );
    wait("worker a2 to serve again", || {
        call("GET", &format!("{A2}/"), None).0 == 200
    });
    ok(&o);
    for c in &conns {
        c.wait_state("RUNNING");
        assert!(c
            .offsets()
            .contains(&position(&format!("/kco/extra/{}", c.name), 1)));
    }
}
