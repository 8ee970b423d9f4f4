//! Reading a connector's state as the transaction needs it: has it reached a target state, will
//! it never, and how to describe what was seen.

use crate::client::{ClientError, ConnectorStatus};
use crate::model::{ConnectorState, TargetState};
use crate::wait::Poll;

/// Whether `status` shows `target` reached. A failed connector (or, while not yet there, a
/// failed task) is final: waiting for RUNNING or PAUSED then fails at once with Connect's trace.
pub fn poll_target(
    status: Result<ConnectorStatus, ClientError>,
    target: TargetState,
) -> Poll<ConnectorStatus> {
    let s = match status {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Poll::Pending("not found (yet)".into()),
        Err(e) => return Poll::Pending(format!("status unreadable: {e}")),
    };
    // RUNNING: the connector; its tasks are [`poll_tasks`]'s business (a failed task must not
    // make the state look not put back).
    let reached = match target {
        TargetState::Stopped => s.is_fully_stopped(),
        TargetState::Running => s.state == Some(ConnectorState::Running),
        TargetState::Paused => s.settled_in(ConnectorState::Paused),
    };
    if reached {
        return Poll::Ready(s);
    }
    if target != TargetState::Stopped {
        if s.state == Some(ConnectorState::Failed) {
            return Poll::Failed(format!("connector FAILED{}", trace_line(&s.trace)));
        }
        if let Some(t) = s.tasks.iter().find(|t| t.state == "FAILED") {
            return Poll::Failed(format!("task {} FAILED{}", t.id, trace_line(&t.trace)));
        }
    }
    Poll::Pending(s.describe())
}

/// What [`poll_tasks`] says after a first read with every task RUNNING.
pub const RUNNING_ONCE: &str = "tasks RUNNING once; reading again";

/// Whether a RUNNING connector's tasks run: at least one task, all RUNNING, on two reads in a
/// row (`seen_running`: the previous read had them so). A FAILED task is final.
pub fn poll_tasks(
    status: Result<ConnectorStatus, ClientError>,
    seen_running: bool,
) -> Poll<ConnectorStatus> {
    let s = match status {
        Ok(s) => s,
        Err(e) => return Poll::Pending(format!("status unreadable: {e}")),
    };
    if s.state == Some(ConnectorState::Failed) {
        return Poll::Failed(format!("connector FAILED{}", trace_line(&s.trace)));
    }
    if let Some(t) = s.tasks.iter().find(|t| t.state == "FAILED") {
        return Poll::Failed(format!("task {} FAILED{}", t.id, trace_line(&t.trace)));
    }
    let running = !s.tasks.is_empty() && s.settled_in(ConnectorState::Running);
    match (running, seen_running) {
        (true, true) => Poll::Ready(s),
        (true, false) => Poll::Pending(RUNNING_ONCE.into()),
        (false, _) if s.tasks.is_empty() => {
            Poll::Pending(format!("{}: no task started", s.describe()))
        }
        (false, _) => Poll::Pending(s.describe()),
    }
}

/// `: <first line>` of a Java trace, with its `Caused by:` lines (`health::trace_line`).
fn trace_line(trace: &Option<String>) -> String {
    crate::engine::health::trace_line(trace.as_deref())
        .map(|t| format!(": {t}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(v: serde_json::Value) -> ConnectorStatus {
        ConnectorStatus::from_json(&v).unwrap()
    }

    #[test]
    fn stopped_needs_zero_tasks_and_failures_are_final() {
        let s = status(
            json!({"name":"c","connector":{"state":"STOPPED"},"tasks":[{"id":0,"state":"RUNNING"}]}),
        );
        assert!(
            matches!(poll_target(Ok(s.clone()), TargetState::Stopped), Poll::Pending(d) if d == "STOPPED (tasks: 1 RUNNING)")
        );
        let s = status(json!({"name":"c","connector":{"state":"RUNNING"},"tasks":[
            {"id":0,"state":"RUNNING"},{"id":1,"state":"FAILED","trace":"boom\n at x"}]}));
        assert!(matches!(
            poll_target(Ok(s.clone()), TargetState::Running),
            Poll::Ready(_)
        ));
        assert!(matches!(poll_tasks(Ok(s), true), Poll::Failed(m) if m == "task 1 FAILED: boom"));
        let s = status(json!({"name":"c","connector":{"state":"PAUSED"},"tasks":[
            {"id":0,"state":"FAILED","trace":"boom\n at x"}]}));
        assert!(
            matches!(poll_target(Ok(s), TargetState::Running), Poll::Failed(m) if m == "task 0 FAILED: boom")
        );
        let s = status(json!({"name":"c","connector":{"state":"RUNNING"},"tasks":[
            {"id":0,"state":"FAILED","trace":"org.x.ConnectException: bad offset\n\tat a.b(C.java:1)\nCaused by: java.io.IOException: gone\n\tat d\nCaused by: x: y\nCaused by: z"}]}));
        assert!(
            matches!(poll_tasks(Ok(s), false), Poll::Failed(m) if m == "task 0 FAILED: org.x.ConnectException: bad offset / Caused by: java.io.IOException: gone / Caused by: x: y")
        );
        let none = status(json!({"name":"c","connector":{"state":"RUNNING"},"tasks":[]}));
        assert!(
            matches!(poll_tasks(Ok(none), false), Poll::Pending(m) if m == "RUNNING (no tasks): no task started")
        );
        let ok = status(
            json!({"name":"c","connector":{"state":"RUNNING"},"tasks":[{"id":0,"state":"RUNNING"}]}),
        );
        assert!(matches!(
            poll_tasks(Ok(ok.clone()), false),
            Poll::Pending(_)
        ));
        assert!(matches!(poll_tasks(Ok(ok), true), Poll::Ready(_)));
        let s = status(
            json!({"name":"c","connector":{"state":"PAUSED"},"tasks":[{"id":0,"state":"PAUSED"}]}),
        );
        assert!(matches!(
            poll_target(Ok(s), TargetState::Paused),
            Poll::Ready(_)
        ));
    }
}
