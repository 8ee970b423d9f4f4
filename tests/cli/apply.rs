//! `kco apply` and `kco reset` against the fake Connect worker.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::fake_connect::{ConnectorSpec, FakeConnect, Fault, State};
use crate::support::data::{self, SnapshotFile, SINK, SOURCE};
use crate::support::env::TestEnv;
use kco::model::ConnectorState;

fn sink_offsets(pairs: &[(i64, i64)]) -> Value {
    data::sink_offsets("t", pairs)
}

/// The snapshot file of sink `name` on topic `t` at `(partition, offset)` pairs, without
/// config, in `snapshots/`; returns its path as an argument.
fn sink_snapshot(dir: &Path, name: &str, pairs: &[(i64, i64)]) -> String {
    let path = SnapshotFile::sink(name, sink_offsets(pairs)).write_in(&dir.join("snapshots"));
    path.to_str().unwrap().to_string()
}

fn sink_fake(state: State) -> FakeConnect {
    FakeConnect::builder()
        .sink("s", SINK, state, sink_offsets(&[(0, 100), (2, 7)]))
        .start()
}

fn methods(fake: &FakeConnect) -> Vec<String> {
    fake.mutating_requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Running);
    let f = sink_snapshot(dir.path(), "s", &[(0, 10), (1, 5)]);
    let (code, out, err) = dir.on(&fake, &["apply", &f, "--dry-run"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("~ s (sink, RUNNING): stop, patch 2 partitions, then RUNNING again"),
        "{out}"
    );
    assert!(
        out.contains(
            "t/0: {\"kafka_offset\":100} -> {\"kafka_offset\":10}  [REPROCESSING] at least 90 records will be reprocessed"
        ),
        "{out}"
    );
    assert!(out.contains("t/1: (none) -> {\"kafka_offset\":5}"), "{out}");
    assert!(
        out.contains("t/2: {\"kafka_offset\":7} kept (live only; --prune removes it)"),
        "{out}"
    );
    assert!(err.contains("Dry run: nothing was changed."), "{err}");
    fake.assert_no_mutations();
    assert!(!dir.path().join(".kco").exists(), "no backup on a dry run");
}

#[test]
fn refuses_without_yes_when_stdin_is_not_a_terminal() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Running);
    let f = sink_snapshot(dir.path(), "s", &[(0, 10)]);
    let (code, out, err) = dir.on(&fake, &["apply", &f]).parts();
    assert_eq!(code, 1);
    assert!(out.contains("t/0"), "the plan is shown first: {out}");
    assert!(err.contains("--yes"), "{err}");
    fake.assert_no_mutations();
}

#[test]
fn apply_backs_up_and_the_backup_undoes_it() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Running);
    let before = fake.offsets("s");
    let f = sink_snapshot(dir.path(), "s", &[(0, 10), (1, 5)]);
    let (code, out, err) = dir.on(&fake, &["apply", &f, "--yes", "--prune"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        methods(&fake),
        vec![
            "PUT /connectors/s/stop",
            "PATCH /connectors/s/offsets",
            "PUT /connectors/s/resume"
        ]
    );
    assert_eq!(fake.offsets("s"), sink_offsets(&[(0, 10), (1, 5)]));
    assert_eq!(fake.state("s"), Some(State::Running));
    assert!(
        out.contains("ok s: offsets applied and verified; RUNNING"),
        "{out}"
    );
    // The backup: printed, and a valid file under .kco/backups/<time>/<cluster>/.
    let line = err
        .lines()
        .find(|l| l.starts_with("Backup of the live offsets: "))
        .expect(&err);
    let backup_dir = line
        .trim_start_matches("Backup of the live offsets: ")
        .split(" (undo")
        .next()
        .unwrap();
    assert!(
        backup_dir.starts_with(".kco/backups/") && backup_dir.ends_with("/a"),
        "{backup_dir}"
    );
    let (files, problems) = kco::engine::load_files(&[dir.path().join(backup_dir)]);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].file.metadata.state, Some(ConnectorState::Running));

    let r = dir.on(&fake, &["apply", backup_dir, "--prune", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    let mut got: Vec<Value> = fake.offsets("s").as_array().unwrap().clone();
    let mut want: Vec<Value> = before.as_array().unwrap().clone();
    got.sort_by_key(|v| v.to_string());
    want.sort_by_key(|v| v.to_string());
    assert_eq!(got, want);
}

#[test]
fn a_second_apply_sends_no_mutating_request() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Running);
    let f = sink_snapshot(dir.path(), "s", &[(0, 10)]);
    let f = &f;
    let r = dir.on(&fake, &["apply", f, "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    fake.clear_requests();
    let (code, out, _) = dir.on(&fake, &["apply", f, "--yes"]).parts();
    assert_eq!(code, 0);
    assert!(out.contains("No changes."), "{out}");
    fake.assert_no_mutations();
    let r = dir.on(&fake, &["apply", f, "--output", "json"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["result"]["mutating_calls"], 0, "{doc}");
    assert_eq!(doc["plan"]["connectors"][0]["action"]["kind"], "no_change");
    fake.assert_no_mutations();
}

#[test]
fn a_rebalance_conflict_is_retried() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Paused);
    fake.fault(
        Fault::on("PATCH", "/connectors/s/offsets")
            .nth(1)
            .conflict(),
    );
    let f = sink_snapshot(dir.path(), "s", &[(0, 10)]);
    let r = dir.on(&fake, &["apply", &f, "--yes", "-o", "json"]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(fake.count("PATCH", "/connectors/s/offsets"), 2);
    assert_eq!(fake.state("s"), Some(State::Paused));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let c = &doc["result"]["connectors"][0];
    assert_eq!(c["outcome"], "applied");
    assert_eq!(c["prior_state"], "PAUSED");
    assert_eq!(doc["result"]["converged"], true);
}

#[test]
fn a_resume_that_never_takes_effect_fails_the_apply() {
    let dir = TestEnv::new();
    let fake = FakeConnect::builder()
        .sink("s", SINK, State::Running, sink_offsets(&[(0, 100)]))
        .resume_ignored()
        .start();
    let f = sink_snapshot(dir.path(), "s", &[(0, 10)]);
    let args = ["apply", &f, "--yes", "--wait-timeout", "1"];
    let (code, out, err) = dir.on(&fake, &args).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("FAILED s: failed at wait_restored: waiting for RUNNING"),
        "{out}"
    );
    assert!(
        out.contains("now: STOPPED (no tasks) (RUNNING could not be put back)"),
        "{out}"
    );
    assert!(err.contains("not every connector converged"), "{err}");
}

#[test]
fn invalid_files_stop_everything_before_any_request() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Running);
    let f = sink_snapshot(dir.path(), "s", &[(0, 10)]);
    let edited = std::fs::read_to_string(&f)
        .unwrap()
        .replace("kafka_offset: 10", "kafka_offset: 11");
    std::fs::write(&f, edited).unwrap();
    let (code, _, err) = dir.on(&fake, &["apply", &f, "--yes"]).parts();
    assert_eq!(code, 1);
    assert!(
        err.contains("s.yaml:") && err.contains("checksum mismatch"),
        "{err}"
    );
    assert!(fake.requests().is_empty());
}

fn old_offsets() -> Value {
    json!([{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 42}}])
}

/// The snapshot of source `old` at [`old_offsets`], with a config whose secret comes from
/// `KCO_TEST_PW`; returns its path as an argument.
fn old_source_snapshot(dir: &Path) -> String {
    let config = BTreeMap::from([
        ("connector.class".to_string(), SOURCE.to_string()),
        ("name".to_string(), "old".to_string()),
        ("file".to_string(), "/tmp/in.txt".to_string()),
        ("topic".to_string(), "t".to_string()),
        (
            "db.password".to_string(),
            "${kco:env:KCO_TEST_PW}".to_string(),
        ),
    ]);
    let path = SnapshotFile::source("old", old_offsets())
        .config(Some(config))
        .write_in(&dir.join("snapshots"));
    path.to_str().unwrap().to_string()
}

#[test]
fn create_with_a_missing_secret_fails_before_any_request() {
    let dir = TestEnv::new();
    let fake = FakeConnect::start();
    let f = old_source_snapshot(dir.path());
    let args = ["apply", &f, "--as", "new", "--create", "--yes"];
    let (code, _, err) = dir.on(&fake, &args).parts();
    assert_eq!(code, 1);
    assert!(
        err.contains("old.yaml:") && err.contains("KCO_TEST_PW"),
        "{err}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn create_moves_offsets_to_a_new_name_and_never_prints_the_secret() {
    let dir = TestEnv::new();
    let fake = FakeConnect::start();
    let f = old_source_snapshot(dir.path());
    let secret = "hunter2-very-secret";
    let args = ["apply", &f, "--as", "new", "--create", "--yes", "-v"];
    let (code, out, err) = dir
        .cmd()
        .on(&fake)
        .args(args)
        .envs(&[("KCO_TEST_PW", secret)])
        .run()
        .parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("+ new (source, from a/old): create STOPPED"),
        "{out}"
    );
    assert!(out.contains("secrets from KCO_TEST_PW"), "{out}");
    assert!(!out.contains(secret) && !err.contains(secret));
    let create = &fake.mutating_requests()[0];
    assert_eq!(create.method, "POST");
    assert_eq!(create.body.as_ref().unwrap()["initial_state"], "STOPPED");
    assert_eq!(
        methods(&fake)[1..],
        [
            "PATCH /connectors/new/offsets",
            "PUT /connectors/new/resume"
        ]
    );
    let config = fake.config("new").unwrap();
    assert_eq!(config["db.password"], secret);
    assert_eq!(config["name"], "new");
    assert_eq!(fake.offsets("new"), old_offsets());
    assert_eq!(fake.state("new"), Some(State::Running));
}

#[test]
fn create_state_overrides_the_state_in_the_file() {
    let dir = TestEnv::new();
    let fake = FakeConnect::start();
    let f = old_source_snapshot(dir.path());
    let env = [("KCO_TEST_PW", "pw")];
    let args = ["apply", &f, "--create-state", "stopped"];
    let (code, ..) = dir.cmd().on(&fake).args(args).envs(&env).run().parts();
    assert_eq!(code, 1, "--create-state needs --create");
    assert!(fake.requests().is_empty());
    let args = [
        "apply",
        &f,
        "--create",
        "--create-state",
        "stopped",
        "--yes",
    ];
    let r = dir.cmd().on(&fake).args(args).envs(&env).run();
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(methods(&fake)[1..], ["PATCH /connectors/old/offsets"]);
    assert_eq!(fake.state("old"), Some(State::Stopped));
    assert_eq!(fake.offsets("old")[0]["offset"]["position"], 42);
}

#[test]
fn a_missing_connector_without_create_is_a_plan_error() {
    let dir = TestEnv::new();
    let fake = FakeConnect::start();
    let f = sink_snapshot(dir.path(), "ghost", &[(0, 1)]);
    let (code, out, err) = dir.on(&fake, &["apply", &f, "--yes"]).parts();
    assert_eq!(code, 1);
    assert!(
        out.contains("! ghost (sink): error:") && out.contains("--create"),
        "{out}"
    );
    assert!(err.contains("nothing was changed"), "{err}");
    fake.assert_no_mutations();
}

#[test]
fn externally_managed_offsets_are_a_warning() {
    let dir = TestEnv::new();
    let fake = FakeConnect::builder()
        .connector(
            ConnectorSpec::sink("s", SINK)
                .offsets(sink_offsets(&[(0, 100)]))
                .externally_managed_offsets(),
        )
        .start();
    let f = sink_snapshot(dir.path(), "s", &[(0, 10)]);
    let (code, out, err) = dir.on(&fake, &["apply", &f, "--yes"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("warning:") && out.contains("externally"),
        "{out}"
    );
}

#[test]
fn reset_deletes_offsets_and_keeps_a_stopped_connector_stopped() {
    let dir = TestEnv::new();
    let fake = sink_fake(State::Stopped);
    let (code, out, _) = dir.on(&fake, &["reset", "s", "--dry-run"]).parts();
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "- s (sink, STOPPED): stop, delete the offsets of all 2 partitions, left STOPPED"
        ),
        "{out}"
    );
    fake.assert_no_mutations();
    let r = dir.on(&fake, &["reset", "s", "--yes", "--backup-dir", "bk"]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(methods(&fake), vec!["DELETE /connectors/s/offsets"]);
    assert_eq!(fake.offsets("s"), json!([]));
    assert_eq!(fake.state("s"), Some(State::Stopped));
    assert!(dir.path().join("bk/s.yaml").is_file());
    // The backup restores them.
    let r = dir.on(&fake, &["apply", "bk", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(fake.offsets("s").as_array().unwrap().len(), 2);
}
