//! Reading a connector's state as the transaction needs it: has it reached a target state, will
//! it never, and how to describe what was seen.

use crate::client::{ClientError, ConnectorStatus};
use crate::model::{ConnectorState, TargetState};
use crate::wait::Poll;

/// `RUNNING (tasks: 2 RUNNING, 1 FAILED)`, or `STOPPED (no tasks)`.
pub fn describe(s: &ConnectorStatus) -> String {
    if s.tasks.is_empty() {
        return format!("{} (no tasks)", s.raw_state);
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for t in &s.tasks {
        match counts.iter_mut().find(|(st, _)| *st == t.state) {
            Some((_, n)) => *n += 1,
            None => counts.push((t.state.clone(), 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(st, n)| format!("{n} {st}")).collect();
    format!("{} (tasks: {})", s.raw_state, parts.join(", "))
}

/// Whether `status` shows `target` reached. A failed connector or task is final: waiting for
/// RUNNING or PAUSED then fails at once with Connect's trace.
pub fn poll_target(
    status: Result<ConnectorStatus, ClientError>,
    target: TargetState,
) -> Poll<ConnectorStatus> {
    let s = match status {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Poll::Pending("not found (yet)".into()),
        Err(e) => return Poll::Pending(format!("status unreadable: {e}")),
    };
    let reached = match target {
        TargetState::Stopped => s.is_fully_stopped(),
        TargetState::Running => s.settled_in(ConnectorState::Running),
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
    Poll::Pending(describe(&s))
}

fn trace_line(trace: &Option<String>) -> String {
    match trace.as_deref().and_then(|t| t.lines().next()) {
        Some(l) => format!(": {l}"),
        None => String::new(),
    }
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
        assert!(
            matches!(poll_target(Ok(s), TargetState::Running), Poll::Failed(m) if m == "task 1 FAILED: boom")
        );
        let s = status(
            json!({"name":"c","connector":{"state":"PAUSED"},"tasks":[{"id":0,"state":"PAUSED"}]}),
        );
        assert!(matches!(
            poll_target(Ok(s), TargetState::Paused),
            Poll::Ready(_)
        ));
    }
}
