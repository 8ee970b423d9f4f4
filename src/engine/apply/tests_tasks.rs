//! After the restore, a resumed connector's tasks must run: a task that fails is a failure
//! with its trace, and a connector whose tasks never start is not reported as a success.

use std::time::Duration;

use super::tests::{cluster, exec, plan, src, want};
use super::*;
use crate::fake::{ConnectorSpec, FakeConnect, State};

const TRACE: &str = "org.apache.kafka.connect.errors.ConnectException: offset 5 is out of range\n\tat org.x.Task.poll(Task.java:42)\nCaused by: java.lang.IllegalStateException: no such position\n\tat y";

#[test]
fn resumed_tasks_must_run_and_the_step_is_reported() {
    let fake = cluster(State::Running);
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let r = exec(&fake, &p, false);
    let c = &r.connectors[0];
    assert_eq!(c.outcome, ApplyOutcome::Applied);
    let last = c.steps.last().unwrap();
    assert_eq!(last.step, Step::WaitTasks);
    assert_eq!(last.detail, "RUNNING (tasks: 1 RUNNING)");
}

#[test]
fn a_task_that_fails_after_the_restore_is_a_failure_with_its_trace() {
    let fake = cluster(State::Running);
    fake.fail_tasks("c", Some(TRACE));
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let r = exec(&fake, &p, false);
    assert!(!r.converged);
    let c = &r.connectors[0];
    assert_eq!(c.outcome, ApplyOutcome::Failed);
    assert_eq!(c.failed_step, Some(Step::WaitTasks));
    let e = c.error.as_deref().unwrap();
    assert!(
        e.contains("task 0 FAILED: org.apache.kafka.connect.errors.ConnectException: offset 5 is out of range / Caused by: java.lang.IllegalStateException: no such position"),
        "{e}"
    );
    assert!(!e.contains("Task.java"), "the stack is left out: {e}");
    // The state itself was put back: the connector runs (its task does not).
    assert!(c.state_restored);
    assert_eq!(fake.state("c"), Some(State::Running));
}

#[test]
fn a_connector_whose_tasks_never_start_fails_after_the_task_timeout() {
    let fake = FakeConnect::builder()
        .connector(
            ConnectorSpec::source("c", "K")
                .config("tasks.max", "0")
                .offsets(serde_json::to_value(vec![src("f", 10)]).unwrap()),
        )
        .in_process();
    let p = plan(&fake, &[want("c", vec![src("f", 5)])], false, false);
    let mut opts = ExecOptions::new(false, 1, Duration::from_secs(30));
    opts.tx.task_timeout = Duration::from_secs(7);
    let r = execute(&fake.client(), &p, &opts, &ManualClock::default(), &Unheard).unwrap();
    let c = &r.connectors[0];
    assert_eq!(c.outcome, ApplyOutcome::Failed);
    assert_eq!(c.failed_step, Some(Step::WaitTasks));
    let e = c.error.as_deref().unwrap();
    assert!(e.contains("gave up after 7s"), "{e}");
    assert!(e.contains("RUNNING (no tasks): no task started"), "{e}");
}
