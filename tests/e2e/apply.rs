//! `kco apply` on the real test bed: the move, a sink rewind, --prune, states put back,
//! idempotence, recovery onto another cluster, and an apply during a worker restart.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{
    append_lines, file_source_config, local_connect, numbered, testbed, testbed_alone, unique_name,
    wait_for, Connect, ConnectorGuard, TopicReader,
};
use crate::kco_steps::{redact_config, set_offsets, testbed_env, write_snapshot};
use crate::support::data::sink_entry;
use crate::support::env::TestEnv;
use crate::support::run::Run;
use kco::model::secrets;

/// How long a worker restart may take to show (down, then serving again).
const RESTART_WAIT: Duration = Duration::from_secs(90);

fn position(file: &str, pos: u64) -> Value {
    json!({"partition": {"filename": file}, "offset": {"position": pos}})
}

/// A partition no connector reads, added to a snapshot so that applying it changes something.
fn extra(name: &str, pos: u64) -> Value {
    position(&format!("/kco/extra/{name}"), pos)
}

/// Runs `kco --cluster <cluster> apply <target> <flags>`, asserts it succeeded and returns its
/// stdout.
fn apply(env: &TestEnv, cluster: &str, target: &Path, flags: &[&str]) -> String {
    let mut args = vec!["--cluster", cluster, "apply", target.to_str().unwrap()];
    args.extend_from_slice(flags);
    env.kco(&args).success(&format!("kco {}", args.join(" ")))
}

/// `kco --cluster a apply <target> --yes -o json`: the JSON report.
fn apply_json(env: &TestEnv, target: &Path) -> Value {
    serde_json::from_str(&apply(env, "a", target, &["--yes", "-o", "json"])).unwrap()
}

/// Writes the snapshot of `name` (cluster a) with one [`extra`] partition at `pos` added.
fn snapshot_with_extra(a: &Connect, name: &str, snaps: &Path, pos: u64) {
    let snap = write_snapshot(a, name, "a", snaps, false);
    let mut offsets = a.offsets(name);
    offsets.push(extra(name, pos));
    set_offsets(&snap, offsets);
}

/// A FileStreamSource on `connect` that has read all `lines` lines of its own file.
fn source_at_end(
    connect: &Connect,
    dir: &Path,
    prefix: &str,
    lines: usize,
) -> (ConnectorGuard, String, u64) {
    let name = unique_name(prefix);
    let input = dir.join(format!("{name}.txt"));
    append_lines(&input, &numbered("line", 1..=lines));
    let len = std::fs::metadata(&input).unwrap().len();
    let c = connect.create(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-topic")),
    );
    let file = input.to_string_lossy().into_owned();
    connect.wait_offsets(&name, &format!("position {len}"), |o| {
        o == [position(&file, len)]
    });
    (c, file, len)
}

/// Before Connect 3.7 (KIP-980) a connector cannot be created STOPPED: `apply --create`
/// must refuse, say why and what to do instead, and create nothing.
fn assert_create_refused(out: &Run, connect: &Connect, names: &[&str]) {
    let text = out.all();
    assert!(out.code != 0, "apply --create must fail before 3.7: {text}");
    assert!(
        text.contains("in the STOPPED state needs Kafka Connect 3.7.0 (KIP-980)"),
        "the refusal names the version and the KIP: {text}"
    );
    assert!(
        text.contains("apply without --create"),
        "and the way out: {text}"
    );
    for name in names {
        assert!(!connect.has_connector(name), "{name} was created anyway");
    }
}

#[test]
fn move_a_source_to_a_new_name_on_another_cluster() {
    let Some(tb) = testbed() else { return };
    let (a, b) = (tb.a(), tb.b());
    let env = testbed_env(&tb);
    let topic = unique_name("kco-e2e-move");
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=50));
    let len = std::fs::metadata(&input).unwrap().len();
    let mut config = file_source_config(&input, &topic);
    config["kco.test.password"] = json!("pw-value");
    let src = a.create(&unique_name("kco-e2e-move-src"), config);
    let file = input.to_string_lossy().into_owned();
    a.wait_offsets(src.name(), "the first 50 lines read", |o| {
        o == [position(&file, len)]
    });
    // Captured while running (and idle at the end of its input), so the file says RUNNING and
    // the new connector is started; then the old one is deleted before more input arrives.
    let snap = write_snapshot(&a, src.name(), "a", &env.path().join("snapshots"), true);
    redact_config(&snap);
    let var = secrets::env_var_name(src.name(), "kco.test.password");
    assert!(std::fs::read_to_string(&snap).unwrap().contains(&var));
    assert!(!std::fs::read_to_string(&snap).unwrap().contains("pw-value"));
    // Stopped first (tasks gone), then deleted: a DELETE returns before the task has
    // stopped, and a task still running would read the lines appended next.
    a.stop(src.name());
    drop(src);
    append_lines(&input, &numbered("line", 51..=100));

    let new = unique_name("kco-e2e-move-dst");
    let _dst = b.adopt(&new);
    let snap = snap.to_str().unwrap();
    let args = [
        "--cluster",
        "b",
        "apply",
        snap,
        "--as",
        &new,
        "--create",
        "--yes",
    ];
    let out = env.cmd().env(&var, "pw-value").args(args).run();
    if !b.supports_initial_state() {
        assert_create_refused(&out, &b, &[&new]);
        return;
    }
    let stdout = out.success("kco apply --as --create");
    assert!(!stdout.contains("pw-value"));
    b.wait_running(&new);
    let cfg = b.config(&new);
    assert_eq!(cfg["kco.test.password"], "pw-value");
    assert_eq!(cfg["name"], new.as_str());
    let reader = TopicReader::start(&a, &topic, env.path());
    assert_eq!(reader.wait_lines_settled(100), numbered("line", 1..=100));
}

#[test]
fn a_sink_rewind_reprocesses_from_exactly_there() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let topic = unique_name("kco-e2e-rewind");
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=20));
    let src_config = file_source_config(&input, &topic);
    let _src = a.create(&unique_name("kco-e2e-rewind-src"), src_config);
    // The sink under test writes what it consumes to the reader's file.
    let reader = TopicReader::start(&a, &topic, env.path());
    let sink = reader.sink.name();
    reader.wait_lines(20);
    a.wait_offsets(sink, "the sink to commit offset 20", |o| {
        o == [sink_entry(&topic, 0, 20)]
    });
    let snap = write_snapshot(&a, sink, "a", &env.path().join("snapshots"), false);
    set_offsets(&snap, vec![sink_entry(&topic, 0, 10)]);

    let stdout = apply(&env, "a", &snap, &["--yes"]);
    assert!(stdout.contains("[REPROCESSING] at least 10 records will be reprocessed"));
    let got = reader.wait_lines_settled(30);
    assert_eq!(got.len(), 30, "{got:?}");
    assert_eq!(got[..20], numbered("line", 1..=20)[..]);
    assert_eq!(got[20..], numbered("line", 11..=20)[..]);
    assert_eq!(a.state(sink), "RUNNING");
}

#[test]
fn prune_removes_live_only_partitions_and_a_stopped_connector_stays_stopped() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let input = env.path().join("in.txt");
    let config = file_source_config(&input, &unique_name("kco-e2e-t"));
    let c = a.create_in_state(&unique_name("kco-e2e-prune"), config, "STOPPED");
    let name = c.name();
    a.wait_stopped(name);
    let reply = a.patch_offsets(
        name,
        json!([
            {"partition": {"filename": "/kco/f1"}, "offset": {"position": 5}},
            {"partition": {"filename": "/kco/f2"}, "offset": {"position": 7}}
        ]),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let snap = write_snapshot(&a, name, "a", &env.path().join("snapshots"), false);
    set_offsets(&snap, vec![position("/kco/f1", 3)]);

    let stdout = apply(&env, "a", &snap, &["--yes"]);
    assert!(stdout.contains("kept (live only; --prune removes it)"));
    let mut got = a.offsets(name);
    got.sort_by_key(|e| e["partition"]["filename"].to_string());
    assert_eq!(got, vec![position("/kco/f1", 3), position("/kco/f2", 7)]);
    assert_eq!(a.state(name), "STOPPED");

    apply(&env, "a", &snap, &["--yes", "--prune"]);
    assert_eq!(a.offsets(name), vec![position("/kco/f1", 3)]);
    assert_eq!(a.state(name), "STOPPED");
}

#[test]
fn states_are_put_back_and_a_second_apply_sends_nothing() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let snaps = env.path().join("snapshots");
    let (running, _, _) = source_at_end(&a, env.path(), "kco-e2e-st-run", 5);
    let (paused, _, _) = source_at_end(&a, env.path(), "kco-e2e-st-pause", 5);
    a.pause(paused.name());
    let (stopped, _, _) = source_at_end(&a, env.path(), "kco-e2e-st-stop", 5);
    a.stop(stopped.name());
    let all = [running.name(), paused.name(), stopped.name()];
    // Each file: the live offsets plus one more partition, so that applying changes something
    // and the connector, at the end of its own file, then holds still.
    for name in all {
        snapshot_with_extra(&a, name, &snaps, 11);
    }
    let doc = apply_json(&env, &snaps.join("a"));
    assert_eq!(doc["result"]["converged"], true);
    a.wait_running(running.name());
    assert_eq!(a.state(running.name()), "RUNNING");
    assert_eq!(a.state(paused.name()), "PAUSED");
    assert_eq!(a.state(stopped.name()), "STOPPED");
    for name in all {
        assert!(a.offsets(name).contains(&extra(name, 11)));
    }

    let doc = apply_json(&env, &snaps.join("a"));
    assert_eq!(doc["result"]["mutating_calls"], 0, "{doc}");
    for c in doc["plan"]["connectors"].as_array().unwrap() {
        assert_eq!(c["action"]["kind"], "no_change", "{c}");
    }
}

#[test]
fn a_set_of_connectors_is_recovered_onto_an_empty_cluster() {
    let Some(tb) = testbed() else { return };
    let (a, b) = (tb.a(), tb.b());
    let env = testbed_env(&tb);
    let snaps = env.path().join("snapshots");
    let mut expected = Vec::new();
    let mut guards = Vec::new();
    for i in 0..3 {
        let (c, file, len) = source_at_end(&a, env.path(), &format!("kco-e2e-dr{i}"), 5 + i);
        write_snapshot(&a, c.name(), "a", &snaps, true);
        expected.push((c.name().to_string(), file, len));
        guards.push(b.adopt(c.name()));
        drop(c); // gone from a
    }
    for (name, _, _) in &expected {
        assert!(!b.has_connector(name), "{name} on b");
    }
    if !b.supports_initial_state() {
        let snaps_a = snaps.join("a");
        let args = [
            "--cluster",
            "b",
            "apply",
            snaps_a.to_str().unwrap(),
            "--create",
            "--yes",
        ];
        let names: Vec<&str> = expected.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_create_refused(&env.kco(&args), &b, &names);
        return;
    }
    apply(&env, "b", &snaps.join("a"), &["--create", "--yes"]);
    for (name, file, len) in &expected {
        b.wait_running(name);
        assert_eq!(b.offsets(name), vec![position(file, *len)], "{name}");
    }
}

#[test]
fn an_apply_during_a_worker_restart_converges() {
    let Some(tb) = testbed_alone() else { return };
    let (a, a2) = (tb.a(), tb.a2());
    let env = testbed_env(&tb);
    let snaps = env.path().join("snapshots");
    let mut conns = Vec::new();
    for i in 0..4 {
        let (c, _, _) = source_at_end(&a, env.path(), &format!("kco-e2e-rs{i}"), 3);
        snapshot_with_extra(&a, c.name(), &snaps, 1);
        conns.push(c);
    }
    let restart = std::thread::spawn(|| local_connect(&["restart-worker", "a2"]));
    wait_for("worker a2 to go down", RESTART_WAIT, || {
        (!a2.answers())
            .then_some(())
            .ok_or("a2 still answers".to_string())
    });
    let snaps_a = snaps.join("a");
    let args = [
        "--cluster",
        "a",
        "apply",
        snaps_a.to_str().unwrap(),
        "--yes",
        "-v",
    ];
    let out = env.kco(&args);
    restart
        .join()
        .expect("scripts/local-connect.sh restart-worker a2");
    wait_for("worker a2 to serve again", RESTART_WAIT, || {
        a2.answers()
            .then_some(())
            .ok_or("a2 does not answer".to_string())
    });
    out.success("kco apply during the restart");
    for c in &conns {
        a.wait_running(c.name());
        assert!(a.offsets(c.name()).contains(&extra(c.name(), 1)));
    }
}
