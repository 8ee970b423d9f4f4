//! The engine against the fake Connect, in process: every outcome, and a failure injected at
//! every step of the transaction. Waits run on a [`ManualClock`], so nothing sleeps.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::ApplyOutcome as Outcome;
use super::*;
use crate::engine::testkit;
use crate::engine::LoadedFile;
use crate::fake::{ConnectorSpec, FakeConnect, Fault, State};
use crate::model::file::{Metadata, OffsetsFile};
use crate::model::{ConnectorState, ConnectorType, OffsetEntry, TargetState};

pub(crate) fn src(file: &str, pos: i64) -> OffsetEntry {
    serde_json::from_value(json!({"partition": {"filename": file}, "offset": {"position": pos}}))
        .unwrap()
}

pub(crate) fn loaded(
    name: &str,
    offsets: Vec<OffsetEntry>,
    state: Option<ConnectorState>,
    config: Option<BTreeMap<String, String>>,
) -> LoadedFile {
    let metadata = Metadata {
        state,
        ..Metadata::new(name, "a", ConnectorType::Source)
    };
    let file = OffsetsFile::new(metadata, offsets, config);
    testkit::loaded(&format!("snapshots/a/{name}.yaml"), file)
}

pub(crate) fn want(name: &str, offsets: Vec<OffsetEntry>) -> Want {
    Want::File {
        target: name.into(),
        file: Box::new(loaded(name, offsets, None, None)),
        config: None,
        secret_vars: vec![],
        change: None,
    }
}

/// The default cluster `name`, not named on the command line.
pub(crate) fn on(name: &str) -> TargetCluster {
    TargetCluster {
        name: name.into(),
        named: false,
    }
}

/// Checks for cluster `name` with no `--as` and no `--create`.
pub(crate) fn plain(name: &str) -> CheckOptions {
    CheckOptions {
        as_name: None,
        create: false,
        target: on(name),
        allow_unknown_shape: Default::default(),
    }
}

/// Wants as if checked for `cluster`.
pub(crate) fn checked(cluster: &str, wants: Vec<Want>) -> Checked {
    Checked {
        cluster: cluster.into(),
        wants,
    }
}

pub(crate) fn plan(fake: &FakeConnect, wants: &[Want], prune: bool, create: bool) -> ApplyPlan {
    let opts = PlanOptions {
        prune,
        create,
        parallel: 2,
        create_state: None,
        max_observed_age: None,
        allow_running_primary: false,
    };
    plan::build(&fake.client(), "a", wants, &opts).unwrap()
}

pub(crate) fn exec(fake: &FakeConnect, plan: &ApplyPlan, prune: bool) -> ApplyReport {
    let opts = ExecOptions::new(prune, 2, Duration::from_secs(30));
    execute(
        &fake.client(),
        plan,
        &opts,
        &ManualClock::default(),
        &Unheard,
    )
    .unwrap()
}

/// A fake cluster of `version` with these source connectors (class `K`).
pub(crate) fn fake_with(
    version: &str,
    connectors: &[(&str, State, Vec<OffsetEntry>)],
) -> FakeConnect {
    let mut builder = FakeConnect::builder().version(version);
    for (name, state, offsets) in connectors {
        let offsets = serde_json::to_value(offsets).unwrap();
        let spec = ConnectorSpec::source(name, "K").state(*state);
        builder = builder.connector(spec.offsets(offsets));
    }
    builder.in_process()
}

/// A cluster with connector `c` in `state` at position 10 of `f`.
pub(crate) fn cluster(state: State) -> FakeConnect {
    fake_with("4.1.0", &[("c", state, vec![src("f", 10)])])
}

/// The next `/status` read of `c` shows it FAILED (connector and task), as a worker does for
/// a connector whose target state is RUNNING but which crashed. The fake has no FAILED state.
pub(crate) fn next_status_shows_failed(fake: &FakeConnect) {
    let failed = json!({
        "name": "c",
        "connector": {"state": "FAILED", "worker_id": "w:8083", "trace": "boom"},
        "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w:8083", "trace": "boom"}],
        "type": "source",
    });
    fake.fault(
        Fault::on("GET", "/connectors/c/status")
            .nth(1)
            .respond_json(200, failed),
    );
}

/// The stored offsets of `name`, as the model reads them.
pub(crate) fn offsets(fake: &FakeConnect, name: &str) -> Vec<OffsetEntry> {
    serde_json::from_value(fake.offsets(name)).unwrap()
}

/// The target state of `name` in the model's terms.
pub(crate) fn state(fake: &FakeConnect, name: &str) -> ConnectorState {
    match fake.state(name).expect("connector exists") {
        State::Running => ConnectorState::Running,
        State::Paused => ConnectorState::Paused,
        State::Stopped => ConnectorState::Stopped,
    }
}

/// Mutating requests so far, as `METHOD /path`.
pub(crate) fn mutating(fake: &FakeConnect) -> Vec<String> {
    let requests = fake.mutating_requests();
    requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn in_sync_connector_gets_no_mutating_call() {
    let fake = cluster(State::Running);
    let p = plan(&fake, &[want("c", vec![src("f", 10)])], true, false);
    assert_eq!(p.connectors[0].action, Action::NoChange { kept: 0 });
    assert_eq!(p.changes(), 0);
    let r = exec(&fake, &p, true);
    assert!(r.converged);
    assert_eq!(r.mutating_calls, 0);
    assert_eq!(r.connectors[0].outcome, Outcome::NoChange);
    assert!(mutating(&fake).is_empty(), "{:?}", mutating(&fake));
}

#[test]
fn each_prior_state_is_put_back() {
    for (prior, restore_call) in [
        (ConnectorState::Running, Some("PUT /connectors/c/resume")),
        (ConnectorState::Failed, Some("PUT /connectors/c/resume")),
        (ConnectorState::Paused, Some("PUT /connectors/c/pause")),
        (ConnectorState::Stopped, None),
    ] {
        let fake = cluster(match prior {
            ConnectorState::Paused => State::Paused,
            ConnectorState::Stopped => State::Stopped,
            _ => State::Running,
        });
        let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
        if prior == ConnectorState::Failed {
            next_status_shows_failed(&fake);
        }
        let r = exec(&fake, &p, false);
        let c = &r.connectors[0];
        assert_eq!(c.outcome, Outcome::Applied, "{prior}: {c:?}");
        assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
        let mut expected: Vec<&str> = Vec::new();
        if prior != ConnectorState::Stopped {
            expected.push("PUT /connectors/c/stop");
        }
        expected.push("PATCH /connectors/c/offsets");
        expected.extend(restore_call);
        assert_eq!(mutating(&fake), expected, "{prior}");
        let want_state = match prior {
            ConnectorState::Failed => ConnectorState::Running,
            s => s,
        };
        assert_eq!(state(&fake, "c"), want_state);
        assert_eq!(c.mutating_calls as usize, expected.len());
    }
}

#[test]
fn prune_sends_nulls_and_without_it_live_only_partitions_stay() {
    let live = vec![src("f", 10), src("g", 5)];
    for prune in [false, true] {
        let fake = fake_with("4.1.0", &[("c", State::Running, live.clone())]);
        let p = plan(&fake, &[want("c", vec![src("f", 4)])], prune, false);
        match &p.connectors[0].action {
            Action::Patch {
                entries,
                prune_nulls,
                kept,
                ..
            } => {
                assert_eq!(entries.len(), if prune { 2 } else { 1 });
                assert_eq!(*prune_nulls, usize::from(prune));
                assert_eq!(*kept, usize::from(!prune));
            }
            other => panic!("{other:?}"),
        }
        let r = exec(&fake, &p, prune);
        assert!(r.converged, "{r:?}");
        let got = offsets(&fake, "c");
        if prune {
            assert_eq!(got, vec![src("f", 4)]);
        } else {
            assert!(got.contains(&src("g", 5)) && got.contains(&src("f", 4)));
        }
    }
}

#[test]
fn a_change_patches_and_removes_only_its_partitions_and_verifies_them() {
    // Live f=10, g=5, h=7; the change sets f to 4 and removes h; g is not part of it.
    let live = vec![src("f", 10), src("g", 5), src("h", 7)];
    let fake = fake_with("4.1.0", &[("c", State::Running, live)]);
    let change = plan::Change {
        set: vec![src("f", 4)],
        removed: vec![src("h", 0).partition],
        ..Default::default()
    };
    let mut w = want("c", vec![src("f", 4), src("g", 1)]);
    if let Want::File { change: c, .. } = &mut w {
        *c = Some(change);
    }
    let p = plan(&fake, &[w], false, false);
    let c = &p.connectors[0];
    assert_eq!(c.left_alone, Some(1));
    assert_eq!(c.partitions.len(), 2, "{:?}", c.partitions);
    match &c.action {
        Action::Patch {
            entries,
            prune_nulls,
            kept,
            ..
        } => {
            assert_eq!(entries.len(), 2);
            assert_eq!((*prune_nulls, *kept), (1, 0));
        }
        other => panic!("{other:?}"),
    }
    let refused = crate::engine::fail_on::refusals(&p, &[crate::engine::fail_on::Refuse::Reset]);
    assert_eq!(refused.len(), 1);
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    let mut got = offsets(&fake, "c");
    got.sort_by_key(|e| crate::model::canonical_fields(&e.partition));
    assert_eq!(got, vec![src("f", 4), src("g", 5)]);
}

#[test]
fn reset_deletes_everything_inside_the_transaction() {
    let fake = cluster(State::Paused);
    let wants = Checked::reset(&["c".into(), "c".into()], "a");
    let p = plan(&fake, wants.wants(), false, false);
    assert_eq!(p.connectors.len(), 1);
    assert_eq!(p.connectors[0].action, Action::Reset { partitions: 1 });
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(
        mutating(&fake),
        vec![
            "PUT /connectors/c/stop",
            "DELETE /connectors/c/offsets",
            "PUT /connectors/c/pause"
        ]
    );
    assert!(offsets(&fake, "c").is_empty());
    // Again: nothing left to reset, nothing sent.
    let p = plan(&fake, wants.wants(), false, false);
    assert_eq!(p.changes(), 0);
}

/// A connector of the name was deleted and left its offsets (Connect keeps them): created
/// again, it shows them, and the file's offsets replace them rather than merge with them.
#[test]
fn a_create_removes_the_offsets_an_earlier_connector_of_its_name_left() {
    let fake = fake_with("4.1.0", &[]);
    fake.set_offsets(
        "again",
        serde_json::json!([
            {"partition": {"f": "left"}, "offset": {"pos": 99}},
            {"partition": {"f": "f"}, "offset": {"pos": 1}},
        ]),
    );
    let config = BTreeMap::from([("connector.class".to_string(), "K".to_string())]);
    let file = loaded(
        "again",
        vec![src("f", 7)],
        Some(ConnectorState::Running),
        Some(config),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("again.yaml");
    std::fs::write(&path, &file.text).unwrap();
    let opts = CheckOptions {
        as_name: None,
        create: true,
        target: on("a"),
        allow_unknown_shape: Default::default(),
    };
    let wants = check(&[path], &opts, &|_| None).unwrap();
    let p = plan(&fake, wants.wants(), false, true);
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(
        offsets(&fake, "again"),
        vec![src("f", 7)],
        "the file's only"
    );
    let warnings = &r.connectors[0].warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("left by an earlier connector") && w.contains("left")),
        "{warnings:?}"
    );
}

#[test]
fn create_makes_a_stopped_connector_patches_then_starts_it() {
    let fake = fake_with("4.1.0", &[]);
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
        target: on("a"),
        allow_unknown_shape: Default::default(),
    };
    // A missing variable stops everything before any request.
    let err = check(std::slice::from_ref(&path), &opts, &|_| None).unwrap_err();
    assert!(err.to_string().contains("PW"), "{err}");
    assert!(fake.requests().is_empty());

    let wants = check(&[path], &opts, &|v| (v == "PW").then(|| "s3cret".into())).unwrap();
    assert!(!format!("{wants:?}").contains("s3cret"));
    let p = plan(&fake, wants.wants(), false, true);
    assert!(matches!(
        p.connectors[0].action,
        Action::Create {
            start_state: TargetState::Running,
            ..
        }
    ));
    assert!(!serde_json::to_string(&p).unwrap().contains("s3cret"));
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(
        mutating(&fake),
        vec![
            "POST /connectors",
            "PATCH /connectors/new/offsets",
            "PUT /connectors/new/resume"
        ]
    );
    assert_eq!(offsets(&fake, "new"), vec![src("f", 7)]);
    let config = fake.config("new").unwrap();
    assert_eq!(config["name"], "new");
    assert_eq!(config["db.password"], "s3cret");
    assert_eq!(state(&fake, "new"), ConnectorState::Running);
}

#[test]
fn missing_connectors_and_old_versions_are_errors_before_any_change() {
    let fake = fake_with("4.1.0", &[]);
    let p = plan(&fake, &[want("ghost", vec![src("f", 1)])], false, false);
    match &p.connectors[0].action {
        Action::Error { message } => assert!(message.contains("--create"), "{message}"),
        other => panic!("{other:?}"),
    }
    let opts = ExecOptions::new(false, 1, Duration::from_secs(1));
    let client = fake.client();
    assert!(execute(&client, &p, &opts, &ManualClock::default(), &Unheard).is_err());
    // --create without a config in the file names the file.
    let p = plan(&fake, &[want("ghost", vec![src("f", 1)])], false, true);
    assert!(
        matches!(&p.connectors[0].action, Action::Error { message } if message.contains("ghost.yaml"))
    );
    assert!(mutating(&fake).is_empty());
    // 3.6 cannot create stopped.
    let fake = fake_with("3.6.1", &[]);
    let wants = vec![Want::File {
        target: "n".into(),
        file: Box::new(loaded("n", vec![], None, Some(BTreeMap::new()))),
        config: None,
        secret_vars: vec![],
        change: None,
    }];
    let p = plan(&fake, &wants, false, true);
    assert!(
        matches!(&p.connectors[0].action, Action::Error { message } if message.contains("3.7"))
    );
    // 3.5 cannot alter offsets at all.
    let fake = fake_with("3.5.2", &[]);
    let err = plan::build(&fake.client(), "a", &[], &PlanOptions::default()).unwrap_err();
    assert!(matches!(err, Error::UnsupportedVersion { .. }));
    assert!(mutating(&fake).is_empty());
}

#[test]
fn backup_holds_live_offsets_and_undoes_the_apply() {
    let fake = fake_with(
        "4.1.0",
        &[
            ("c", State::Running, vec![src("f", 10)]),
            ("d", State::Running, vec![src("g", 1)]),
        ],
    );
    let p = plan(
        &fake,
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
    assert!(exec(&fake, &p, false).converged);

    let wants = check(std::slice::from_ref(&b.dir), &plain("a"), &|_| None).unwrap();
    let undo = plan(&fake, wants.wants(), true, false);
    assert!(exec(&fake, &undo, true).converged);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 10)]);
}

#[test]
fn an_interrupt_skips_transactions_not_yet_started_and_sends_nothing_for_them() {
    use std::sync::atomic::AtomicBool;
    let fake = fake_with(
        "4.1.0",
        &[
            ("c1", State::Running, vec![src("f", 10)]),
            ("c2", State::Running, vec![src("g", 10)]),
        ],
    );
    let wants = [want("c1", vec![src("f", 3)]), want("c2", vec![src("g", 3)])];
    let p = plan(&fake, &wants, false, false);
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(true)));
    let mut opts = ExecOptions::new(false, 1, Duration::from_secs(30));
    opts.interrupted = Some(flag);
    let client = fake.client();
    let r = execute(&client, &p, &opts, &ManualClock::default(), &Unheard).unwrap();
    assert!(r.interrupted && !r.converged);
    assert!(r.connectors.iter().all(|c| c.outcome == Outcome::Skipped));
    assert!(mutating(&fake).is_empty(), "{:?}", mutating(&fake));
    assert_eq!(offsets(&fake, "c1"), vec![src("f", 10)]);
}

#[test]
fn each_transaction_is_reported_to_the_progress_fleet() {
    use crate::engine::progress::tests::Heard;
    let fake = fake_with("4.1.0", &[("c1", State::Running, vec![src("f", 10)])]);
    let p = plan(&fake, &[want("c1", vec![src("f", 3)])], false, false);
    let opts = ExecOptions::new(false, 1, Duration::from_secs(30));
    let bar = Heard::default();
    execute(&fake.client(), &p, &opts, &ManualClock::default(), &bar).unwrap();
    assert_eq!(
        bar.0.into_inner().unwrap(),
        ["total 1", "start c1", "end c1"]
    );
}

#[test]
fn before_3_6_the_refusal_names_what_was_asked() {
    let fake = fake_with("3.5.2", &[("c", State::Running, vec![src("f", 10)])]);
    let opts = PlanOptions {
        prune: false,
        create: false,
        parallel: 2,
        create_state: None,
        max_observed_age: None,
        allow_running_primary: false,
    };
    let refusal = |wants: &[Want]| {
        plan::build(&fake.client(), "a", wants, &opts)
            .unwrap_err()
            .to_string()
    };
    let reset = refusal(&[Want::Reset { name: "c".into() }]);
    assert!(
        reset.contains("resetting offsets needs Kafka Connect 3.6.0"),
        "{reset}"
    );
    let alter = refusal(&[want("c", vec![src("f", 7)])]);
    assert!(
        alter.contains("altering offsets needs Kafka Connect 3.6.0"),
        "{alter}"
    );
    assert!(fake.mutating_requests().is_empty());
}

/// A file belongs to its cluster: on another one that the user did not name it is refused
/// before anything is read from Connect; naming the cluster (or `--as` with it) allows it.
#[test]
fn a_file_of_another_cluster_needs_that_cluster_named() {
    let dir = tempfile::tempdir().unwrap();
    let f = loaded("c", vec![src("f", 7)], None, None);
    let path = dir.path().join("c.yaml");
    std::fs::write(&path, &f.text).unwrap();
    let e = check(std::slice::from_ref(&path), &plain("b"), &|_| None).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, crate::error::Error::OtherCluster { .. }),
        "{text}"
    );
    assert!(
        text.contains("cluster `a`") && text.contains("`b`"),
        "{text}"
    );
    assert!(text.contains("c.yaml"), "{text}");
    let mut as_new = plain("b");
    as_new.as_name = Some("c2".into());
    assert!(check(std::slice::from_ref(&path), &as_new, &|_| None).is_err());
    as_new.target.named = true;
    let ok = check(std::slice::from_ref(&path), &as_new, &|_| None).unwrap();
    assert_eq!((ok.cluster(), ok.wants()[0].target()), ("b", "c2"));
    assert!(check(std::slice::from_ref(&path), &plain("a"), &|_| None).is_ok());
}

/// The progress tests' recorder, told an operation's steps too (it ignores them).
impl super::OperationObserver for crate::engine::progress::tests::Heard {}

/// A deleted sink's consumer group (its config's `consumer.override.group.id`) holds t/0 at
/// 302 and t/1 at 5. The plan of its creation from a file at t/0 = 280 labels it against
/// them, as the created sink resumes from them and its PATCH replaces them: t/0 rewound by 22
/// (REPROCESSING), t/1 removed (OFFSET RESET), both refused by `--fail-on`. Without a Kafka to
/// read them, it says it compared with nothing.
#[test]
fn a_create_is_planned_against_what_an_earlier_connector_of_its_name_left() {
    use crate::engine::fail_on::{refusals, Refuse};
    use crate::engine::orphaned::memory::MemoryKafka;
    use crate::engine::orphaned::of_name::{Gone, Leftovers};
    use crate::engine::risk::RiskCode;

    let fake = fake_with("4.1.0", &[]);
    let config = BTreeMap::from([
        ("connector.class".to_string(), "K".to_string()),
        (
            "consumer.override.group.id".to_string(),
            "legacy".to_string(),
        ),
    ]);
    let sink = |p: i64, n: i64| -> OffsetEntry {
        serde_json::from_value(json!({"partition": {"kafka_topic": "t", "kafka_partition": p}, "offset": {"kafka_offset": n}}))
            .unwrap()
    };
    let metadata = Metadata::new("gone", "a", ConnectorType::Sink);
    let file = OffsetsFile::new(metadata, vec![sink(0, 280)], Some(config.clone()));
    let wants = [Want::File {
        target: "gone".into(),
        file: Box::new(testkit::loaded("snapshots/a/gone.yaml", file)),
        config: Some(plan::ResolvedConfig(config)),
        secret_vars: vec![],
        change: None,
    }];
    let refuse = [Refuse::Reprocessing, Refuse::Reset];

    let mut p = plan(&fake, &wants, false, true);
    let kafka = MemoryKafka::new(Vec::new(), false).with_group(
        "legacy",
        "consumer",
        0,
        &[("t", 0, 302), ("t", 1, 5)],
    );
    let leftovers = Leftovers::kafka(Box::new(kafka), None, Box::new(Vec::new));
    plan::label_creates(&mut p, &fake.client(), &leftovers);
    let c = &p.connectors[0];
    assert!(matches!(c.action, Action::Create { .. }), "{:?}", c.action);
    assert_eq!(
        c.leftovers,
        Some(Gone::Group {
            group: "legacy".into(),
            partitions: 2
        })
    );
    let risks: Vec<(RiskCode, String)> = refusals(&p, &refuse)
        .into_iter()
        .map(|r| (r.risk.code, r.risk.message))
        .collect();
    assert_eq!(
        risks,
        [
            (
                RiskCode::Reprocessing,
                "22 records will be reprocessed (duplicates downstream)".to_string()
            ),
            (
                RiskCode::OffsetReset,
                "offset removed: falls back to auto.offset.reset".to_string()
            ),
        ]
    );

    // No Kafka: compared with nothing, and nothing to refuse.
    let mut p = plan(&fake, &wants, false, true);
    plan::label_creates(
        &mut p,
        &fake.client(),
        &Leftovers::Unread("no `kafka:`".into()),
    );
    assert_eq!(
        p.connectors[0].leftovers,
        Some(Gone::Nothing {
            why: "no `kafka:`".into()
        })
    );
    assert!(refusals(&p, &refuse).is_empty());
}

/// `--create-state` on a connector that exists (issue 31, 2): a file of another Kafka
/// cluster (a translation) leaves the leftover in the state asked for once its offsets are
/// verified, also when they already match; a file of this cluster leaves it as it was, and
/// the plan says the flag is not for it.
#[test]
fn create_state_starts_a_leftover_of_a_failover_and_only_that() {
    let crossing = |offsets: Vec<OffsetEntry>| crate::engine::mirror::Translation {
        mode: crate::engine::mirror::TranslateMode::None,
        alias: Some("east".into()),
        policy: "default",
        checkpoints_topic: None,
        group: "connect-c".into(),
        partitions: Vec::new(),
        renames: BTreeMap::new(),
        offsets,
        relation: None,
        file_age_seconds: None,
    };
    let opts = PlanOptions {
        prune: false,
        create: true,
        parallel: 2,
        create_state: Some(TargetState::Running),
        max_observed_age: None,
        allow_running_primary: false,
    };
    for wanted in [4, 10] {
        let fake = cluster(State::Stopped);
        let translations =
            BTreeMap::from([("c".to_string(), Ok(crossing(vec![src("f", wanted)])))]);
        let wants = [want("c", vec![src("f", wanted)])];
        let p = plan::build_translated(&fake.client(), "a", &wants, &opts, &translations).unwrap();
        match &p.connectors[0].action {
            Action::Patch {
                entries, end_state, ..
            } => {
                assert_eq!(*end_state, Some(TargetState::Running));
                assert_eq!(entries.len(), 1, "the same offset sent again: {entries:?}");
            }
            other => panic!("{wanted}: {other:?}"),
        }
        let r = exec(&fake, &p, false);
        assert!(r.converged, "{r:?}");
        assert_eq!(fake.state("c"), Some(State::Running), "{wanted}");
        assert_eq!(offsets(&fake, "c"), vec![src("f", wanted)]);
    }
    // A file the group has moved past since it was captured: the plan says its age.
    let fake = cluster(State::Stopped);
    let mut stale = crossing(vec![src("f", 4)]);
    stale.file_age_seconds = Some(660);
    stale
        .partitions
        .push(crate::engine::mirror::PartitionTranslation {
            topic: "orders".into(),
            partition: 0,
            file_offset: 445,
            dr_topic: "east.orders".into(),
            dr_offset: 445,
            checkpoint: None,
            seconds_since_last_checkpoint: None,
            redelivers: 0,
            offset_syncs: None,
            latest_checkpoint: Some(crate::engine::mirror::Found {
                upstream: 2154,
                downstream: 2154,
                written_ms: 0,
                seconds_since_written: 5,
            }),
        });
    let translations = BTreeMap::from([("c".to_string(), Ok(stale))]);
    let wants = [want("c", vec![src("f", 4)])];
    let p = plan::build_translated(&fake.client(), "a", &wants, &opts, &translations).unwrap();
    assert!(
        p.connectors[0].warnings.iter().any(|w| w.starts_with(
            "the file was captured 11m ago, and the group has committed past it since: orders/0 by 1709 records"
        )),
        "{:?}",
        p.connectors[0].warnings
    );
    // A file of this cluster: the flag is for created connectors; said, and kept STOPPED.
    let fake = cluster(State::Stopped);
    let wants = [want("c", vec![src("f", 4)])];
    let p = plan::build(&fake.client(), "a", &wants, &opts).unwrap();
    let c = &p.connectors[0];
    assert!(
        matches!(
            c.action,
            Action::Patch {
                end_state: None,
                ..
            }
        ),
        "{:?}",
        c.action
    );
    assert!(
        c.warnings.iter().any(|w| w
            == "`c` exists on `a`: --create-state RUNNING is for the connectors --create makes, and it keeps its state"),
        "{:?}",
        c.warnings
    );
    exec(&fake, &p, false);
    assert_eq!(fake.state("c"), Some(State::Stopped));
}

/// A sink's file naming a topic the sink does not read (a typo in a hand edit): the plan
/// says so, naming the topic and the sink's `topics`; a topic it reads says nothing.
#[test]
fn a_sink_file_of_a_topic_the_sink_does_not_read_is_warned_of() {
    use crate::fake::ConnectorSpec;
    let entry = |topic: &str| -> OffsetEntry {
        serde_json::from_value(json!({"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 5}}))
            .unwrap()
    };
    let fake = crate::fake::FakeConnect::builder()
        .connector(
            ConnectorSpec::sink("orders", "K")
                .config("topics", "orders, payments")
                .offsets(json!([{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": 9}}])),
        )
        .in_process();
    let file = |topic: &str| {
        let metadata = Metadata::new("orders", "a", ConnectorType::Sink);
        Want::File {
            target: "orders".into(),
            file: Box::new(testkit::loaded(
                "snapshots/a/orders.yaml",
                OffsetsFile::new(metadata, vec![entry(topic)], None),
            )),
            config: None,
            secret_vars: vec![],
            change: None,
        }
    };
    let p = plan(&fake, &[file("ordres")], false, false);
    let warned = &p.connectors[0].warnings;
    assert!(
        warned.iter().any(|w| w.contains("offsets of `ordres`, which `orders` does not read (`topics=orders, payments`): a typo in the file?")),
        "{warned:?}"
    );
    let p = plan(&fake, &[file("payments")], false, false);
    assert!(
        p.connectors[0].warnings.is_empty(),
        "{:?}",
        p.connectors[0].warnings
    );
}
