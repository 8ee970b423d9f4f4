//! The transaction against the fake in Confluent Cloud mode: a service that pauses and
//! resumes the connector itself and alters offsets through asynchronous requests. No stop is
//! ever sent; each change is one request whose status is read until it is over; the offsets
//! are verified from an observation made after the change. Waits run on a [`ManualClock`].

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::plan::ResolvedConfig;
use super::tests::{offsets, src, state};
use super::ApplyOutcome as Outcome;
use super::*;
use crate::client::AlterKind;
use crate::compare::compare;
use crate::fake::{ConnectorSpec, FakeConnect, Fault, State};
use crate::model::{ConnectorState, ConnectorType, OffsetEntry};

const ENV: &str = "env-abc123";
const LKC: &str = "lkc-xyz789";

/// A fake Confluent Cloud with these source connectors (class `K`), in process.
pub(crate) fn cloud_with(
    connectors: &[(&str, State, Vec<OffsetEntry>)],
    tune: impl FnOnce(crate::fake::FakeConnectBuilder) -> crate::fake::FakeConnectBuilder,
) -> FakeConnect {
    let mut builder = FakeConnect::builder().confluent_cloud(ENV, LKC);
    for (name, st, offsets) in connectors {
        let offsets = serde_json::to_value(offsets).unwrap();
        builder = builder.connector(ConnectorSpec::source(name, "K").state(*st).offsets(offsets));
    }
    tune(builder).in_process()
}

/// Connector `c`, RUNNING, at position 10 of `f` and 5 of `g`.
pub(crate) fn cloud() -> FakeConnect {
    cloud_with(
        &[("c", State::Running, vec![src("f", 10), src("g", 5)])],
        |b| b,
    )
}

/// Every request so far, as `METHOD /connectors/...` (the service's base path cut off).
pub(crate) fn sent(fake: &FakeConnect) -> Vec<String> {
    let base = format!("/connect/v1/environments/{ENV}/clusters/{LKC}");
    fake.requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path.trim_start_matches(&base)))
        .collect()
}

/// The bodies of the alter requests sent so far.
fn alter_bodies(fake: &FakeConnect) -> Vec<Value> {
    fake.requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/offsets/request"))
        .map(|r| r.body.unwrap_or(Value::Null))
        .collect()
}

/// The plan an apply of `wanted` to `name` makes (or of a reset), from the offsets the
/// service shows now, as `plan::build` makes it.
pub(crate) fn cloud_plan(
    fake: &FakeConnect,
    name: &str,
    wanted: Option<Vec<OffsetEntry>>,
    prune: bool,
) -> ApplyPlan {
    let client = fake.client();
    let live = client.offsets(name).unwrap();
    let mut p = blank(name, live.clone(), wanted.clone().unwrap_or_default());
    p.action = match wanted {
        None => Action::Reset {
            partitions: live.len(),
        },
        Some(w) => {
            let entries = p.entries(&compare(&w, &live), prune);
            Action::Patch {
                prune_nulls: entries.iter().filter(|e| e.offset.is_none()).count(),
                entries,
                kept: 0,
                end_state: None,
            }
        }
    };
    p.by_service_of(&client);
    whole(p, prune)
}

/// A connector's plan with no action yet: a RUNNING source `name` of class `K`.
fn blank(name: &str, live: Vec<OffsetEntry>, wanted: Vec<OffsetEntry>) -> ConnectorPlan {
    ConnectorPlan {
        connector_type: Some(ConnectorType::Source),
        live_state: Some(ConnectorState::Running),
        live_offsets: live,
        wanted,
        class: Some("K".into()),
        ..plan::blank(name, None)
    }
}

fn whole(p: ConnectorPlan, prune: bool) -> ApplyPlan {
    ApplyPlan {
        cluster: "a".into(),
        url: "https://api.confluent.cloud".into(),
        connect_version: String::new(),
        server: "Confluent Cloud".into(),
        kafka_cluster_id: None,
        prune,
        connectors: vec![p],
        left_out: Vec::new(),
        warnings: Vec::new(),
    }
}

pub(crate) fn run(
    fake: &FakeConnect,
    plan: &ApplyPlan,
    progress: &dyn OperationObserver,
) -> ConnectorApply {
    let opts = ExecOptions::new(plan.prune, 1, Duration::from_secs(30));
    let r = execute(
        &fake.client(),
        plan,
        &opts,
        &ManualClock::default(),
        progress,
    )
    .unwrap();
    r.connectors.into_iter().next().unwrap()
}

fn steps(c: &ConnectorApply) -> Vec<String> {
    c.steps.iter().map(|s| s.step.to_string()).collect()
}

fn detail(c: &ConnectorApply, step: Step) -> String {
    let found = c.steps.iter().rev().find(|s| s.step == step);
    found.map(|s| s.detail.clone()).unwrap_or_default()
}

#[test]
fn the_plan_says_the_service_pauses_and_resumes_the_connector_itself() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    let note = p.connectors[0].by_service.as_deref();
    assert_eq!(
        note,
        Some("Confluent Cloud pauses and resumes it itself while the offsets change")
    );
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["connectors"][0]["by_service"], json!(note));
    // Kafka Connect: kco stops and restarts it, and the plan says nothing of the sort.
    let connect = super::tests::cluster(State::Running);
    assert_eq!(
        plan::by_service(&connect.client(), &p.connectors[0].action),
        None
    );
    let v = serde_json::to_value(super::tests::plan(
        &connect,
        &[super::tests::want("c", vec![src("f", 3)])],
        false,
        false,
    ))
    .unwrap();
    assert!(v["connectors"][0].get("by_service").is_none(), "{v}");
}

/// The plan shows the steps each service makes the change with, in the order they run:
/// Confluent Cloud's request and wait, Kafka Connect's stop and restore.
#[test]
fn the_plan_shows_each_services_steps_in_order() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(
        v["connectors"][0]["steps"],
        json!([
            "record_state",
            "request_alter",
            "verify_observed",
            "await_restore"
        ])
    );
    let connect = super::tests::cluster(State::Running);
    let p = super::tests::plan(
        &connect,
        &[super::tests::want("c", vec![src("f", 3)])],
        false,
        false,
    );
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(
        v["connectors"][0]["steps"],
        json!(["record_state", "stop", "alter", "verify", "restore"])
    );
}

#[test]
fn an_apply_sends_one_request_with_only_the_changed_partitions_and_never_a_stop() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 5)]);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    // Record the state; one POST; the status until APPLIED (PENDING, PENDING_VALIDATION,
    // APPLIED); the offsets read back; the state seen back and its tasks running.
    let status = "GET /connectors/c/status";
    let poll = "GET /connectors/c/offsets/request/status";
    assert_eq!(
        sent(&fake),
        [
            status,
            "POST /connectors/c/offsets/request",
            poll,
            poll,
            poll,
            "GET /connectors/c/offsets",
            status,
            status,
            status,
            status,
        ],
        "{:#?}",
        c.steps
    );
    assert_eq!(
        alter_bodies(&fake),
        [json!({"type": "PATCH", "offsets": [
            {"partition": {"filename": "f"}, "offset": {"position": 3}}]})]
    );
    assert_eq!(c.mutating_calls, 1);
    assert_eq!(
        steps(&c),
        [
            "record_state",
            "patch",
            "wait_applied",
            "verify",
            "wait_restored",
            "wait_tasks"
        ]
    );
    let patch = detail(&c, Step::Patch);
    assert!(
        patch.starts_with("request PATCH of ") && patch.ends_with(" (PATCH of 1 partition) sent"),
        "{patch}"
    );
    assert!(
        detail(&c, Step::WaitApplied).contains(" APPLIED at 20"),
        "{c:#?}"
    );
    assert!(detail(&c, Step::Verify).contains("observed at"), "{c:#?}");
    assert!(
        detail(&c, Step::WaitRestored).starts_with("Confluent Cloud put it back: RUNNING"),
        "{c:#?}"
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn a_failed_request_is_a_failure_with_the_services_message_and_nothing_changed() {
    let fake = cloud_with(&[("c", State::Running, vec![src("f", 10)])], |b| {
        b.alter_fails("c", "offset 3 is out of range")
    });
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Failed);
    assert_eq!(c.failed_step, Some(Step::WaitApplied));
    let error = c.error.clone().unwrap();
    assert!(
        error.contains("Confluent Cloud answered FAILED for request PATCH of ")
            && error.contains("offset 3 is out of range")
            && error.ends_with("the offsets were not changed"),
        "{error}"
    );
    assert!(!c.offsets_sent);
    assert!(c.state_restored);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 10)]);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    assert_eq!(fake.alter_requests("c"), 1);
    assert!(!sent(&fake).iter().any(|r| r.contains("/stop")));
}

#[test]
fn an_unknown_phase_counts_as_not_done() {
    let fake = cloud_with(&[("c", State::Running, vec![src("f", 10)])], |b| {
        b.alter_phase_reads(3).unknown_phase("c", "REVIEWING")
    });
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    // Three reads PENDING, three REVIEWING, then APPLIED.
    assert_eq!(fake.count("GET", "*/offsets/request/status"), 7);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
}

#[test]
fn a_request_refused_as_pending_waits_for_the_pending_one_then_is_sent_once_more() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), false);
    // Someone else's request, still pending: the connector shows PAUSED meanwhile.
    let theirs = fake
        .client()
        .request_alter("c", AlterKind::Patch, &[patch("g", 7)])
        .unwrap();
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    let posts = sent(&fake)
        .into_iter()
        .filter(|r| r.starts_with("POST"))
        .count();
    assert_eq!(posts, 2, "{:?}", sent(&fake));
    assert_eq!(fake.alter_requests("c"), 2);
    let d = detail(&c, Step::Patch);
    let at = crate::clock::rfc3339(theirs.requested_at.unwrap());
    assert!(
        d.contains("Confluent Cloud refused it (")
            && d.contains(&format!(
                "waited for request PATCH of {at} to be APPLIED, then sent it again; its state read again: RUNNING"
            )),
        "{d}"
    );
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 7)]);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    // Their change replaced g's offset between the backup and ours: not a partition of ours.
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

/// Issue 34: only what kco sent is verified. Another client's pending request moves `g`,
/// which the file wants where the plan found it (so kco does not send it): the apply waits
/// for that request, sends its own `f`, verifies `f`, and says that `g` was changed by
/// another client, instead of waiting for `g` to come back and failing.
#[test]
fn a_partition_kco_did_not_send_that_another_client_moves_is_said_not_verified() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    let crate::engine::apply::plan::Action::Patch { entries, .. } = &p.connectors[0].action else {
        panic!("{p:?}")
    };
    assert_eq!(entries.len(), 1, "only f is sent: {entries:?}");
    fake.client()
        .request_alter("c", AlterKind::Patch, &[patch("g", 7)])
        .unwrap();
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 7)]);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].starts_with("another client changed 1 partition that kco did not send")
            && c.warnings[0].contains("{\"position\":5} when planned, {\"position\":7} now"),
        "{}",
        c.warnings[0]
    );
    // Two reads of the offsets at most: nothing waited for `g`.
    assert!(
        fake.count("GET", "*/connectors/c/offsets") <= 2,
        "{:?}",
        sent(&fake)
    );
}

pub(crate) fn patch(file: &str, pos: i64) -> crate::model::PatchEntry {
    let e = src(file, pos);
    crate::model::PatchEntry {
        partition: e.partition,
        offset: Some(e.offset),
    }
}

#[test]
fn an_old_observation_is_read_again_until_one_after_the_change() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    fake.stale_for("c", 2);
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(fake.count("GET", "*/connectors/c/offsets"), 3);
    let d = detail(&c, Step::Verify);
    assert!(d.starts_with("read back: 2 partitions observed at "), "{d}");
}

#[test]
fn previous_offsets_that_differ_from_the_backup_are_a_warning_naming_the_partition() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    // Someone moves f between the backup (the plan's read) and the request.
    fake.set_offsets(
        "c",
        serde_json::to_value(vec![src("f", 12), src("g", 5)]).unwrap(),
    );
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = &c.warnings[0];
    assert!(
        w.contains("differs from the backup for 1 partition")
            && w.contains(
                r#"{"filename":"f"} (backup {"position":10}, Confluent Cloud {"position":12})"#
            ),
        "{w}"
    );
}

#[test]
fn a_reset_is_one_delete_request_of_every_partition() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", None, false);
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(alter_bodies(&fake), [json!({"type": "DELETE"})]);
    assert!(offsets(&fake, "c").is_empty());
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
    assert!(detail(&c, Step::Reset).ends_with("(DELETE of every partition) sent"));
    assert_eq!(fake.mutating_requests().len(), 1);
}

#[test]
fn prune_patches_what_changes_then_deletes_what_is_removed() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), true);
    fake.clear_requests();
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(
        alter_bodies(&fake),
        [
            json!({"type": "PATCH", "offsets": [
                {"partition": {"filename": "f"}, "offset": {"position": 3}}]}),
            json!({"type": "DELETE", "offsets": [
                {"partition": {"filename": "g"}, "offset": null}]}),
        ]
    );
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
    assert_eq!(
        steps(&c),
        [
            "record_state",
            "patch",
            "wait_applied",
            "patch",
            "wait_applied",
            "verify",
            "wait_restored",
            "wait_tasks"
        ]
    );
}

#[test]
fn undo_puts_the_backups_offsets_back_through_the_same_requests() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), true);
    let dir = tempfile::tempdir().unwrap();
    backup::write(&p, dir.path(), "2026-12-02T04:00:00Z").unwrap();
    assert_eq!(run(&fake, &p, &Unheard).outcome, Outcome::Applied);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
    // Undo: the backup's files, applied with --prune.
    let (files, problems) = crate::engine::load_files(&[dir.path().to_path_buf()]);
    assert!(problems.is_empty(), "{problems:?}");
    let back = files[0].file.offsets.clone();
    let undo = cloud_plan(&fake, "c", Some(back), true);
    fake.clear_requests();
    let c = run(&fake, &undo, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(offsets(&fake, "c"), vec![src("f", 10), src("g", 5)]);
    assert!(!sent(&fake).iter().any(|r| r.contains("/stop")));
    assert_eq!(fake.mutating_requests().len(), 1, "{:?}", sent(&fake));
}

#[test]
fn create_makes_the_connector_at_its_position_in_one_request() {
    let fake = cloud_with(&[], |b| b);
    let wanted = vec![src("f", 42)];
    let config: BTreeMap<String, String> = [
        ("connector.class".to_string(), "K".to_string()),
        ("name".to_string(), "n".to_string()),
    ]
    .into();
    let mut p = cloud_plan_for_create("n", wanted.clone(), config);
    p.connectors[0].by_service = plan::by_service(&fake.client(), &p.connectors[0].action);
    assert_eq!(
        p.connectors[0].by_service.as_deref(),
        Some("Confluent Cloud creates it at its position in one request")
    );
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    let posts: Vec<_> = fake.mutating_requests();
    assert_eq!(posts.len(), 1, "{:?}", sent(&fake));
    assert_eq!(
        posts[0].body.as_ref().unwrap()["offsets"],
        json!([{"partition": {"filename": "f"}, "offset": {"position": 42}}])
    );
    assert_eq!(offsets(&fake, "n"), wanted);
    assert_eq!(state(&fake, "n"), ConnectorState::Running);
    assert_eq!(
        steps(&c),
        ["create", "verify", "wait_restored", "wait_tasks"]
    );
}

fn cloud_plan_for_create(
    name: &str,
    wanted: Vec<OffsetEntry>,
    config: BTreeMap<String, String>,
) -> ApplyPlan {
    let mut p = blank(name, Vec::new(), wanted.clone());
    p.live_state = None;
    p.partitions = compare(&wanted, &[]);
    p.action = Action::Create {
        entries: p.entries(&p.partitions, false),
        start_state: crate::model::TargetState::Running,
        config_keys: config.len(),
        secrets_from_env: Vec::new(),
    };
    p.config = Some(ResolvedConfig(config));
    whole(p, false)
}

#[test]
fn a_request_whose_answer_was_lost_is_looked_for_in_the_status_before_it_is_sent_again() {
    // Taken, then the connection dropped: found in the status, not sent again.
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    fake.fault(
        Fault::on("POST", "*/offsets/request")
            .nth(1)
            .apply_then_drop(),
    );
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(fake.alter_requests("c"), 1);
    assert_eq!(fake.count("POST", "*/offsets/request"), 1);
    let d = detail(&c, Step::Patch);
    assert!(
        d.contains("its status shows it taken as request PATCH of "),
        "{d}"
    );
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 5)]);

    // Dropped before it was taken: the status does not show it, so it is sent again.
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    fake.fault(
        Fault::on("POST", "*/offsets/request")
            .nth(1)
            .drop_connection(),
    );
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    assert_eq!(fake.alter_requests("c"), 1);
    assert_eq!(fake.count("POST", "*/offsets/request"), 2);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 5)]);
}

#[test]
fn a_state_the_service_does_not_put_back_is_asked_for_and_said() {
    /// Once the state is recorded, status shows the connector PAUSED (a service that does
    /// not resume it) until kco resumes it itself.
    struct NoResume<'a>(&'a FakeConnect);
    impl Observer for NoResume<'_> {}
    impl OperationObserver for NoResume<'_> {
        fn recorded(&self, _c: &str, _prior: crate::model::TargetState) {
            let paused = json!({"name": "c", "type": "source",
                "connector": {"state": "PAUSED", "worker_id": "w"},
                "tasks": [{"id": 0, "state": "PAUSED", "worker_id": "w"}]});
            self.0.fault(
                Fault::on("GET", "*/connectors/c/status")
                    .first(100_000)
                    .respond_json(200, paused),
            );
        }
        fn step(&self, _c: &str, r: &StepRecord) {
            if r.step == Step::Restore {
                self.0.clear_faults();
            }
        }
    }
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3), src("g", 5)]), false);
    fake.clear_requests();
    let c = run(&fake, &p, &NoResume(&fake));
    assert_eq!(c.outcome, Outcome::Applied, "{c:#?}");
    let base = format!("/connect/v1/environments/{ENV}/clusters/{LKC}");
    let puts: Vec<String> = fake
        .mutating_requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path.trim_start_matches(&base)))
        .collect();
    assert_eq!(
        puts,
        [
            "POST /connectors/c/offsets/request",
            "PUT /connectors/c/resume"
        ]
    );
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].starts_with("Confluent Cloud did not put `c` back RUNNING by itself (")
            && c.warnings[0].ends_with("): kco asked for it"),
        "{}",
        c.warnings[0]
    );
    assert_eq!(detail(&c, Step::Restore), "PUT /resume accepted");
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
}

#[test]
fn a_second_request_refused_after_the_first_applied_still_says_offsets_were_sent() {
    let fake = cloud();
    let p = cloud_plan(&fake, "c", Some(vec![src("f", 3)]), true);
    fake.fault(
        Fault::on("POST", "*/offsets/request")
            .nth(2)
            .respond(400, "partition g cannot be deleted"),
    );
    let c = run(&fake, &p, &Unheard);
    assert_eq!(c.outcome, Outcome::Failed, "{c:#?}");
    assert_eq!(c.failed_step, Some(Step::Patch));
    assert!(c.offsets_sent, "the PATCH was applied");
    assert!(c.state_restored);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3), src("g", 5)]);
    assert_eq!(state(&fake, "c"), ConnectorState::Running);
}
