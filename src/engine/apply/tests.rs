//! The engine against an in-memory cluster: every outcome, and a failure injected at every
//! step of the transaction.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::memory::{http, timeout, Memory};
use super::ApplyOutcome as Outcome;
use super::*;
use crate::engine::LoadedFile;
use crate::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use crate::model::{ConnectorState, ConnectorType, OffsetEntry, TargetState};

fn src(file: &str, pos: i64) -> OffsetEntry {
    serde_json::from_value(json!({"partition": {"filename": file}, "offset": {"position": pos}}))
        .unwrap()
}

fn loaded(
    name: &str,
    offsets: Vec<OffsetEntry>,
    state: Option<ConnectorState>,
    config: Option<BTreeMap<String, String>>,
) -> LoadedFile {
    let file = OffsetsFile::new(
        Metadata {
            name: name.into(),
            cluster: "a".into(),
            kafka_cluster_id: None,
            connect_version: None,
            connector_class: None,
            connector_type: ConnectorType::Source,
            state,
            captured_at: None,
        },
        offsets,
        config,
    );
    LoadedFile {
        path: PathBuf::from(format!("snapshots/a/{name}.yaml")),
        text: file.render(DEFAULT_SCHEMA_REF),
        file,
    }
}

fn want(name: &str, offsets: Vec<OffsetEntry>) -> Want {
    Want::File {
        target: name.into(),
        file: Box::new(loaded(name, offsets, None, None)),
        config: None,
        secret_vars: vec![],
    }
}

fn plan(mem: &Memory, wants: &[Want], prune: bool, create: bool) -> ApplyPlan {
    let opts = PlanOptions {
        prune,
        create,
        parallel: 2,
        create_state: None,
    };
    plan::build(mem, "a", wants, &opts).unwrap()
}

fn exec(mem: &Memory, plan: &ApplyPlan, prune: bool) -> ApplyReport {
    let opts = ExecOptions::new(prune, 2, Duration::from_secs(30));
    execute(mem, plan, &opts, &ManualClock::default(), &Silent).unwrap()
}

/// A cluster with connector `c` in `state` at position 10 of `f`.
fn cluster(state: ConnectorState) -> Memory {
    let mem = Memory::new("4.1.0");
    mem.add("c", ConnectorType::Source, state, vec![src("f", 10)]);
    mem
}

#[test]
fn in_sync_connector_gets_no_mutating_call() {
    let mem = cluster(ConnectorState::Running);
    let p = plan(&mem, &[want("c", vec![src("f", 10)])], true, false);
    assert_eq!(p.connectors[0].action, Action::NoChange { kept: 0 });
    assert_eq!(p.changes(), 0);
    let r = exec(&mem, &p, true);
    assert!(r.converged);
    assert_eq!(r.mutating_calls, 0);
    assert_eq!(r.connectors[0].outcome, Outcome::NoChange);
    assert!(mem.mutating().is_empty(), "{:?}", mem.mutating());
}

#[test]
fn each_prior_state_is_put_back() {
    for (state, restore_call) in [
        (ConnectorState::Running, Some("resume c")),
        (ConnectorState::Failed, Some("resume c")),
        (ConnectorState::Paused, Some("pause c")),
        (ConnectorState::Stopped, None),
    ] {
        let mem = cluster(state);
        let p = plan(&mem, &[want("c", vec![src("f", 3)])], false, false);
        let r = exec(&mem, &p, false);
        let c = &r.connectors[0];
        assert_eq!(c.outcome, Outcome::Applied, "{state}: {c:?}");
        assert_eq!(mem.get("c").unwrap().offsets, vec![src("f", 3)]);
        let mut expected: Vec<&str> = Vec::new();
        if state != ConnectorState::Stopped {
            expected.push("stop c");
        }
        expected.push("patch c");
        expected.extend(restore_call);
        assert_eq!(mem.mutating(), expected, "{state}");
        let want_state = match state {
            ConnectorState::Failed => ConnectorState::Running,
            s => s,
        };
        assert_eq!(mem.get("c").unwrap().state, want_state);
        assert_eq!(c.mutating_calls as usize, expected.len());
    }
}

#[test]
fn prune_sends_nulls_and_without_it_live_only_partitions_stay() {
    let live = vec![src("f", 10), src("g", 5)];
    for prune in [false, true] {
        let mem = Memory::new("4.1.0");
        mem.add(
            "c",
            ConnectorType::Source,
            ConnectorState::Running,
            live.clone(),
        );
        let p = plan(&mem, &[want("c", vec![src("f", 4)])], prune, false);
        match &p.connectors[0].action {
            Action::Patch {
                entries,
                prune_nulls,
                kept,
            } => {
                assert_eq!(entries.len(), if prune { 2 } else { 1 });
                assert_eq!(*prune_nulls, usize::from(prune));
                assert_eq!(*kept, usize::from(!prune));
            }
            other => panic!("{other:?}"),
        }
        let r = exec(&mem, &p, prune);
        assert!(r.converged, "{r:?}");
        let got = mem.get("c").unwrap().offsets;
        if prune {
            assert_eq!(got, vec![src("f", 4)]);
        } else {
            assert!(got.contains(&src("g", 5)) && got.contains(&src("f", 4)));
        }
    }
}

/// A failure injected at each step leaves the connector in its prior state, and the report
/// names the step.
#[test]
fn failure_at_each_step_puts_the_prior_state_back() {
    type Inject = fn(&Memory);
    let cases: Vec<(&str, Inject, Step)> = vec![
        (
            "status fails",
            |m| m.fault("status", http(500, "boom"), false),
            Step::RecordState,
        ),
        (
            "stop fails",
            |m| m.fault("stop", http(500, "boom"), false),
            Step::Stop,
        ),
        ("stop ignored", |m| m.ignore("stop"), Step::WaitStopped),
        (
            "patch fails",
            |m| m.fault("patch", http(500, "boom"), false),
            Step::Patch,
        ),
        ("patch ignored", |m| m.ignore("patch"), Step::Verify),
    ];
    for prior in [
        ConnectorState::Running,
        ConnectorState::Paused,
        ConnectorState::Stopped,
    ] {
        for (what, inject, step) in &cases {
            if prior == ConnectorState::Stopped && matches!(step, Step::Stop | Step::WaitStopped) {
                continue; // a stopped connector is not stopped again
            }
            let mem = cluster(prior);
            let p = plan(&mem, &[want("c", vec![src("f", 3)])], false, false);
            inject(&mem);
            let r = exec(&mem, &p, false);
            let c = &r.connectors[0];
            assert!(!r.converged, "{prior} {what}");
            assert_eq!(c.outcome, Outcome::Failed);
            assert_eq!(c.failed_step, Some(*step), "{prior} {what}: {c:?}");
            assert!(c.error.is_some());
            assert_eq!(mem.get("c").unwrap().state, prior, "{prior} {what}: {c:?}");
            if *step != Step::RecordState {
                assert!(c.state_restored, "{prior} {what}: {c:?}");
                assert_eq!(
                    c.final_state
                        .as_deref()
                        .map(|s| s.starts_with(&prior.to_string())),
                    Some(true)
                );
            } else {
                assert!(
                    mem.mutating().is_empty(),
                    "nothing sent before the state is known"
                );
            }
        }
    }
}

#[test]
fn a_resume_that_never_takes_effect_is_reported() {
    let mem = cluster(ConnectorState::Running);
    let p = plan(&mem, &[want("c", vec![src("f", 3)])], false, false);
    mem.ignore("resume");
    let r = exec(&mem, &p, false);
    let c = &r.connectors[0];
    assert!(!r.converged);
    assert_eq!(c.failed_step, Some(Step::WaitRestored));
    assert!(!c.state_restored);
    assert!(
        c.error.as_ref().unwrap().contains("waiting for RUNNING"),
        "{c:?}"
    );
    assert_eq!(c.final_state.as_deref(), Some("STOPPED (no tasks)"));
    // The offsets did change; the report says the state is not back.
    assert_eq!(mem.get("c").unwrap().offsets, vec![src("f", 3)]);
}

#[test]
fn a_patch_that_timed_out_is_read_back_before_resending() {
    // Timed out after taking effect: read back, found applied, not sent again.
    let mem = cluster(ConnectorState::Running);
    let p = plan(&mem, &[want("c", vec![src("f", 3)])], false, false);
    mem.fault("patch", timeout(), true);
    let r = exec(&mem, &p, false);
    assert!(r.converged, "{r:?}");
    let patches = mem.calls().iter().filter(|c| *c == "patch c").count();
    assert_eq!(patches, 1);
    assert!(r.connectors[0]
        .steps
        .iter()
        .any(|s| s.detail.contains("already applied")));

    // Timed out before taking effect: read back, not applied, sent again.
    let mem = cluster(ConnectorState::Running);
    let p = plan(&mem, &[want("c", vec![src("f", 3)])], false, false);
    mem.fault("patch", timeout(), false);
    let r = exec(&mem, &p, false);
    assert!(r.converged, "{r:?}");
    let patches = mem.calls().iter().filter(|c| *c == "patch c").count();
    assert_eq!(patches, 2);
    assert_eq!(mem.get("c").unwrap().offsets, vec![src("f", 3)]);
}

#[test]
fn reset_deletes_everything_inside_the_transaction() {
    let mem = cluster(ConnectorState::Paused);
    let wants = reset_wants(&["c".into(), "c".into()]);
    let p = plan(&mem, &wants, false, false);
    assert_eq!(p.connectors.len(), 1);
    assert_eq!(p.connectors[0].action, Action::Reset { partitions: 1 });
    let r = exec(&mem, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(mem.mutating(), vec!["stop c", "reset c", "pause c"]);
    assert!(mem.get("c").unwrap().offsets.is_empty());
    // Again: nothing left to reset, nothing sent.
    let p = plan(&mem, &wants, false, false);
    assert_eq!(p.changes(), 0);
}

#[test]
fn create_makes_a_stopped_connector_patches_then_starts_it() {
    let mem = Memory::new("4.1.0");
    let config = BTreeMap::from([
        ("connector.class".to_string(), "K".to_string()),
        ("name".to_string(), "old".to_string()),
        ("db.password".to_string(), "${kco:env:PW}".to_string()),
    ]);
    let file = loaded(
        "old",
        vec![src("f", 7)],
        Some(ConnectorState::Running),
        Some(config),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.yaml");
    std::fs::write(&path, &file.text).unwrap();
    let opts = CheckOptions {
        as_name: Some("new".into()),
        create: true,
    };
    // A missing variable stops everything before any request.
    let err = check(std::slice::from_ref(&path), &opts, &|_| None).unwrap_err();
    assert!(err.to_string().contains("PW"), "{err}");
    assert!(mem.calls().is_empty());

    let wants = check(&[path], &opts, &|v| (v == "PW").then(|| "s3cret".into())).unwrap();
    assert!(!format!("{wants:?}").contains("s3cret"));
    let p = plan(&mem, &wants, false, true);
    assert!(matches!(
        p.connectors[0].action,
        Action::Create {
            start_state: TargetState::Running,
            ..
        }
    ));
    assert!(!serde_json::to_string(&p).unwrap().contains("s3cret"));
    let r = exec(&mem, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(
        mem.mutating(),
        vec!["create new", "patch new", "resume new"]
    );
    let c = mem.get("new").unwrap();
    assert_eq!(c.offsets, vec![src("f", 7)]);
    assert_eq!(c.config["name"], "new");
    assert_eq!(c.config["db.password"], "s3cret");
    assert_eq!(c.state, ConnectorState::Running);
}

#[test]
fn a_failed_create_patch_leaves_the_new_connector_stopped() {
    let mem = Memory::new("4.1.0");
    let config = BTreeMap::from([("connector.class".to_string(), "K".to_string())]);
    let wants = vec![Want::File {
        target: "n".into(),
        file: Box::new(loaded("n", vec![src("f", 7)], None, Some(config))),
        config: None,
        secret_vars: vec![],
    }];
    let p = plan(&mem, &wants, false, true);
    mem.fault("patch", http(500, "boom"), false);
    let r = exec(&mem, &p, false);
    let c = &r.connectors[0];
    assert_eq!(c.failed_step, Some(Step::Patch));
    assert_eq!(mem.get("n").unwrap().state, ConnectorState::Stopped);
    assert!(c.warnings.iter().any(|w| w.contains("left STOPPED")));
}

#[test]
fn missing_connectors_and_old_versions_are_errors_before_any_change() {
    let mem = Memory::new("4.1.0");
    let p = plan(&mem, &[want("ghost", vec![src("f", 1)])], false, false);
    match &p.connectors[0].action {
        Action::Error { message } => assert!(message.contains("--create"), "{message}"),
        other => panic!("{other:?}"),
    }
    let opts = ExecOptions::new(false, 1, Duration::from_secs(1));
    assert!(execute(&mem, &p, &opts, &ManualClock::default(), &Silent).is_err());
    // --create without a config in the file names the file.
    let p = plan(&mem, &[want("ghost", vec![src("f", 1)])], false, true);
    assert!(
        matches!(&p.connectors[0].action, Action::Error { message } if message.contains("ghost.yaml"))
    );
    // 3.6 cannot create stopped.
    let mem = Memory::new("3.6.1");
    let wants = vec![Want::File {
        target: "n".into(),
        file: Box::new(loaded("n", vec![], None, Some(BTreeMap::new()))),
        config: None,
        secret_vars: vec![],
    }];
    let p = plan(&mem, &wants, false, true);
    assert!(
        matches!(&p.connectors[0].action, Action::Error { message } if message.contains("3.7"))
    );
    // 3.5 cannot alter offsets at all.
    let mem = Memory::new("3.5.2");
    let err = plan::build(&mem, "a", &[], &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, Error::UnsupportedVersion { .. }));
    assert!(mem.mutating().is_empty());
}

#[test]
fn backup_holds_live_offsets_and_undoes_the_apply() {
    let mem = Memory::new("4.1.0");
    mem.add(
        "c",
        ConnectorType::Source,
        ConnectorState::Running,
        vec![src("f", 10)],
    );
    mem.add(
        "d",
        ConnectorType::Source,
        ConnectorState::Running,
        vec![src("g", 1)],
    );
    let p = plan(
        &mem,
        &[
            want("c", vec![src("f", 3), src("h", 1)]),
            want("d", vec![src("g", 1)]),
        ],
        false,
        false,
    );
    let dir = tempfile::tempdir().unwrap();
    let b = backup::write(&p, dir.path(), "2024-01-01T00:00:00Z").unwrap();
    assert_eq!(b.files.len(), 1, "only the changing connector: {b:?}");
    assert!(exec(&mem, &p, false).converged);

    let wants = check(
        std::slice::from_ref(&b.dir),
        &CheckOptions::default(),
        &|_| None,
    )
    .unwrap();
    let undo = plan(&mem, &wants, true, false);
    assert!(exec(&mem, &undo, true).converged);
    assert_eq!(mem.get("c").unwrap().offsets, vec![src("f", 10)]);
}

#[test]
fn an_interrupt_skips_transactions_not_yet_started_and_sends_nothing_for_them() {
    use std::sync::atomic::AtomicBool;
    let mem = Memory::new("4.1.0");
    mem.add(
        "c1",
        ConnectorType::Source,
        ConnectorState::Running,
        vec![src("f", 10)],
    );
    mem.add(
        "c2",
        ConnectorType::Source,
        ConnectorState::Running,
        vec![src("g", 10)],
    );
    let wants = [want("c1", vec![src("f", 3)]), want("c2", vec![src("g", 3)])];
    let p = plan(&mem, &wants, false, false);
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(true)));
    let mut opts = ExecOptions::new(false, 1, Duration::from_secs(30));
    opts.interrupted = Some(flag);
    let r = execute(&mem, &p, &opts, &ManualClock::default(), &Silent).unwrap();
    assert!(r.interrupted && !r.converged);
    assert!(r.connectors.iter().all(|c| c.outcome == Outcome::Skipped));
    assert!(mem.mutating().is_empty(), "{:?}", mem.mutating());
    assert_eq!(mem.get("c1").unwrap().offsets, vec![src("f", 10)]);
}
