//! The transaction against the fake Connect, in process, with a failure injected at every
//! step: each leaves the connector as it was (or says it could not), and the report names the
//! step. Waits run on a [`ManualClock`], so nothing sleeps.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::tests::{cluster, exec, fake_with, loaded, mutating, offsets, plan, src, state, want};
use super::ApplyOutcome as Outcome;
use super::*;
use crate::fake::{Fault, State};
use crate::model::ConnectorState;

/// A failure injected at each step leaves the connector in its prior state, and the report
/// names the step.
#[test]
fn failure_at_each_step_puts_the_prior_state_back() {
    let fails = |method: &str, path: &str| Fault::on(method, path).nth(1).respond(500, "boom");
    let patched =
        json!({ "message": "The offsets for this connector have been altered successfully" });
    let cases = [
        (
            "status fails",
            fails("GET", "/connectors/c/status"),
            Step::RecordState,
        ),
        ("stop fails", fails("PUT", "/connectors/c/stop"), Step::Stop),
        (
            "stop ignored",
            Fault::on("PUT", "/connectors/c/stop")
                .always()
                .respond_json(202, Value::Null),
            Step::WaitStopped,
        ),
        (
            "patch fails",
            fails("PATCH", "/connectors/c/offsets"),
            Step::Patch,
        ),
        (
            "patch ignored",
            Fault::on("PATCH", "/connectors/c/offsets")
                .always()
                .respond_json(200, patched),
            Step::Verify,
        ),
    ];
    for prior in [State::Running, State::Paused, State::Stopped] {
        let shown = prior.as_str();
        for (what, fault, step) in &cases {
            if prior == State::Stopped && matches!(step, Step::Stop | Step::WaitStopped) {
                continue; // a stopped connector is not stopped again
            }
            let fake = cluster(prior);
            let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
            fake.fault(fault.clone());
            let r = exec(&fake, &p, false);
            let c = &r.connectors[0];
            assert!(!r.converged, "{shown} {what}");
            assert_eq!(c.outcome, Outcome::Failed);
            assert_eq!(c.failed_step, Some(*step), "{shown} {what}: {c:?}");
            assert!(c.error.is_some());
            assert_eq!(fake.state("c"), Some(prior), "{shown} {what}: {c:?}");
            if *step != Step::RecordState {
                assert!(c.state_restored, "{shown} {what}: {c:?}");
                assert_eq!(
                    c.final_state.as_deref().map(|s| s.starts_with(shown)),
                    Some(true),
                    "{shown} {what}: {c:?}"
                );
            } else {
                assert!(
                    mutating(&fake).is_empty(),
                    "nothing sent before the state is known"
                );
            }
        }
    }
}

#[test]
fn a_resume_that_never_takes_effect_is_reported() {
    let fake = cluster(State::Running);
    let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
    fake.set_resume_ignored(true);
    let r = exec(&fake, &p, false);
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
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
}

#[test]
fn a_patch_that_timed_out_is_read_back_before_resending() {
    // Timed out after taking effect: read back, found applied, not sent again.
    let fake = cluster(State::Running);
    let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
    fake.fault(
        Fault::on("PATCH", "/connectors/c/offsets")
            .nth(1)
            .applied_then_timeout(),
    );
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(fake.count("PATCH", "/connectors/c/offsets"), 1);
    assert!(r.connectors[0]
        .steps
        .iter()
        .any(|s| s.detail.contains("already applied")));

    // Timed out before taking effect: read back, not applied, sent again.
    let fake = cluster(State::Running);
    let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
    fake.fault(Fault::on("PATCH", "/connectors/c/offsets").nth(1).timeout());
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    assert_eq!(fake.count("PATCH", "/connectors/c/offsets"), 2);
    assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
}

#[test]
fn a_failed_create_patch_leaves_the_new_connector_stopped() {
    let fake = fake_with("4.1.0", &[]);
    let config = BTreeMap::from([("connector.class".to_string(), "K".to_string())]);
    let wants = vec![Want::File {
        target: "n".into(),
        file: Box::new(loaded("n", vec![src("f", 7)], None, Some(config))),
        config: None,
        secret_vars: vec![],
        change: None,
    }];
    let p = plan(&fake, &wants, false, true);
    fake.fault(
        Fault::on("PATCH", "/connectors/n/offsets")
            .nth(1)
            .respond(500, "boom"),
    );
    let r = exec(&fake, &p, false);
    let c = &r.connectors[0];
    assert_eq!(c.failed_step, Some(Step::Patch));
    assert_eq!(state(&fake, "n"), ConnectorState::Stopped);
    assert!(c.warnings.iter().any(|w| w.contains("left STOPPED")));
}

/// A want with a config to create it from: created only if it really does not exist.
fn creatable(name: &str, offsets: Vec<crate::model::OffsetEntry>) -> Want {
    creatable_recording(name, offsets, None)
}

/// [`creatable`], from a file that records `state`.
fn creatable_recording(
    name: &str,
    offsets: Vec<crate::model::OffsetEntry>,
    state: Option<ConnectorState>,
) -> Want {
    let config = BTreeMap::from([
        ("connector.class".to_string(), "K".to_string()),
        ("name".to_string(), name.to_string()),
    ]);
    Want::File {
        target: name.into(),
        file: Box::new(loaded(name, offsets, state, Some(config.clone()))),
        config: Some(plan::ResolvedConfig(config)),
        secret_vars: vec![],
        change: None,
    }
}

/// Connect's expanded listing leaves out a connector whose status it cannot read yet: with
/// `--create`, an existing connector is never planned as one to create.
#[test]
fn a_connector_the_listing_leaves_out_is_not_created() {
    const LISTING: &str = "/connectors?expand=status&expand=info";
    let wants = [creatable("c", vec![src("f", 7)])];

    // Left out once: found by its status, listed again, patched as the existing connector.
    let fake = cluster(State::Running);
    fake.fault(
        Fault::on("GET", LISTING)
            .nth(1)
            .respond_json(200, json!({})),
    );
    let p = plan(&fake, &wants, false, true);
    assert!(
        matches!(p.connectors[0].action, Action::Patch { .. }),
        "{:?}",
        p.connectors[0].action
    );
    assert_eq!(fake.count("GET", LISTING), 2);
    let r = exec(&fake, &p, false);
    assert!(r.converged, "{r:?}");
    assert!(!mutating(&fake).iter().any(|m| m == "POST /connectors"));
    assert_eq!(offsets(&fake, "c"), vec![src("f", 7)]);

    // Left out every time: refused, nothing sent.
    let fake = cluster(State::Running);
    fake.fault(
        Fault::on("GET", LISTING)
            .always()
            .respond_json(200, json!({})),
    );
    let p = plan(&fake, &wants, false, true);
    match &p.connectors[0].action {
        Action::Error { message } => {
            assert!(message.contains("listing leaves it out"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(fake.mutating_requests().is_empty());

    // Really absent: the names say so, and it is created.
    let fake = fake_with("4.1.0", &[]);
    let p = plan(&fake, &wants, false, true);
    assert!(matches!(p.connectors[0].action, Action::Create { .. }));
    assert_eq!(fake.count("GET", LISTING), 1);
    assert_eq!(fake.count("GET", "/connectors"), 1);
}

/// A stop that reached the leader, whose answer was lost between the worker and the leader,
/// may have stopped the connector: the state is put back anyway, and the journal keeps the
/// connector for the next command to check (a stop still queued could land later).
#[test]
fn a_stop_whose_forward_broke_after_reaching_the_leader_is_put_back() {
    for prior in [State::Running, State::Paused] {
        let fake = cluster(prior);
        let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
        fake.fault(
            Fault::on("PUT", "/connectors/c/stop")
                .always()
                .apply_then_respond(500, crate::fake::LEADER_RESET),
        );
        let r = exec(&fake, &p, false);
        let c = &r.connectors[0];
        assert_eq!(c.failed_step, Some(Step::Stop), "{c:?}");
        assert_eq!(fake.state("c"), Some(prior), "{c:?}");
        assert!(!c.state_restored, "the journal must keep it: {c:?}");
        assert!(
            c.warnings.iter().any(|w| w.contains("got no answer")),
            "{c:?}"
        );
    }
}

/// `/status` of connector `c` as Connect shows it while `c` moves between workers.
fn unassigned_status() -> Value {
    json!({
        "name": "c",
        "connector": {"state": "UNASSIGNED", "worker_id": "127.0.0.1:8083"},
        "tasks": [],
        "type": "source"
    })
}

/// A STOPPED or PAUSED connector shows UNASSIGNED during a rebalance: the state to put back is
/// read again until it says, and the connector stays as it was (it used to be taken for
/// RUNNING and resumed).
#[test]
fn an_unassigned_status_is_read_again_before_it_is_recorded() {
    for prior in [State::Stopped, State::Paused, State::Running] {
        let fake = cluster(prior);
        let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
        fake.fault(
            Fault::on("GET", "/connectors/c/status")
                .first(3)
                .respond_json(200, unassigned_status()),
        );
        let r = exec(&fake, &p, false);
        let c = &r.connectors[0];
        assert!(r.converged, "{prior:?}: {c:?}");
        assert_eq!(fake.state("c"), Some(prior), "{c:?}");
        assert_eq!(
            c.prior_state.map(|s| s.to_string()).as_deref(),
            Some(prior.as_str())
        );
        assert_eq!(offsets(&fake, "c"), vec![src("f", 3)]);
    }
}

/// A status that stays UNASSIGNED says nothing of what to put back: nothing is sent.
#[test]
fn a_status_that_stays_unassigned_leaves_the_connector_untouched() {
    let fake = cluster(State::Stopped);
    let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
    fake.fault(
        Fault::on("GET", "/connectors/c/status")
            .always()
            .respond_json(200, unassigned_status()),
    );
    let r = exec(&fake, &p, false);
    let c = &r.connectors[0];
    assert_eq!(c.failed_step, Some(Step::RecordState), "{c:?}");
    let error = c.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("did not settle") && error.contains("UNASSIGNED"),
        "{error}"
    );
    assert!(mutating(&fake).is_empty(), "{:?}", mutating(&fake));
    assert_eq!(fake.state("c"), Some(State::Stopped));
}

/// The listing a plan reads may show a STOPPED connector as UNASSIGNED (a rebalance): its
/// status is read again, so the plan, the journal and the backup record STOPPED.
#[test]
fn a_plan_reads_an_unassigned_connector_again() {
    const LISTING: &str = "/connectors?expand=status&expand=info";
    let fake = cluster(State::Stopped);
    let listing = json!({"c": {
        "status": unassigned_status(),
        "info": {"name": "c", "config": {"connector.class": "K", "name": "c"}, "tasks": [], "type": "source"}
    }});
    fake.fault(Fault::on("GET", LISTING).nth(1).respond_json(200, listing));
    let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
    assert_eq!(p.connectors[0].live_state, Some(ConnectorState::Stopped));
    assert_eq!(fake.count("GET", "/connectors/c/status"), 1);
}

/// A file taken while its connector moved between workers records UNASSIGNED: created from
/// it, the connector is started RUNNING, and the plan says why.
#[test]
fn a_file_that_records_a_transient_state_is_created_running_with_a_warning() {
    let fake = fake_with("4.1.0", &[]);
    let want = creatable_recording("c", vec![src("f", 3)], Some(ConnectorState::Unassigned));
    let p = plan(&fake, &[want], false, true);
    let c = &p.connectors[0];
    assert!(
        matches!(
            c.action,
            Action::Create {
                start_state: crate::model::TargetState::Running,
                ..
            }
        ),
        "{:?}",
        c.action
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("UNASSIGNED") && w.contains("--create-state")),
        "{:?}",
        c.warnings
    );
}

/// A PATCH the worker answers with an error of its own (5xx): read back, the offsets say
/// whether anything changed, so the report does not say they may differ when they do not.
#[test]
fn a_patch_failing_with_a_worker_error_reads_back_whether_it_changed_anything() {
    for (applied, sent) in [(false, false), (true, true)] {
        let fake = cluster(State::Running);
        let p = plan(&fake, &[want("c", vec![src("f", 3)])], false, false);
        let fault = Fault::on("PATCH", "/connectors/c/offsets").nth(1);
        fake.fault(match applied {
            true => fault.apply_then_respond(500, "boom"),
            false => fault.respond(500, "boom"),
        });
        let r = exec(&fake, &p, false);
        let c = &r.connectors[0];
        assert_eq!(c.failed_step, Some(Step::Patch), "{c:?}");
        assert_eq!(c.offsets_sent, sent, "applied: {applied}: {c:?}");
        assert_eq!(fake.state("c"), Some(State::Running));
    }
}
