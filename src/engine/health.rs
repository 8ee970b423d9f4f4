//! A connector's health as Connect's status shows it: the connector or a task FAILED (with
//! the first line of the worker's trace), or UNASSIGNED still after the listing waited for a
//! rebalance to settle (`settle::settle_listing`: 15 s). Offsets can be in sync while a task
//! is FAILED; diff, snapshot and ls say both, and their metrics carry both.

use serde::Serialize;

use crate::client::ConnectorStatus;
use crate::model::ConnectorState;

/// What is wrong with one part of a connector: its state, and why, when the worker says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trouble {
    /// `null` for the connector itself, else the task's id.
    pub task: Option<i64>,
    /// `FAILED` or `UNASSIGNED`.
    pub state: String,
    /// The worker it ran on, when Connect names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    /// The trace's first line and its `Caused by:` lines (at most two).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl Trouble {
    pub fn failed(&self) -> bool {
        self.state == "FAILED"
    }

    /// `task 0 FAILED: <trace>`, or `connector UNASSIGNED`.
    pub fn describe(&self) -> String {
        let part = match self.task {
            Some(id) => format!("task {id}"),
            None => "connector".into(),
        };
        let why = self
            .trace
            .as_deref()
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        format!("{part} {}{why}", self.state)
    }
}

/// The connector's and its tasks' troubles (empty: healthy, or not on the cluster).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Health {
    pub troubles: Vec<Trouble>,
}

impl Health {
    /// The troubles `status` shows (none without a status).
    pub fn of(status: Option<&ConnectorStatus>) -> Health {
        let Some(s) = status else {
            return Health::default();
        };
        let bad = |state: &str| state == "FAILED" || state == "UNASSIGNED";
        let mut troubles = Vec::new();
        if matches!(
            s.state,
            Some(ConnectorState::Failed | ConnectorState::Unassigned)
        ) {
            troubles.push(Trouble {
                task: None,
                state: s.raw_state.clone(),
                worker_id: s.worker_id.clone(),
                trace: trace_line(s.trace.as_deref()),
            });
        }
        for t in s.tasks.iter().filter(|t| bad(&t.state)) {
            troubles.push(Trouble {
                task: Some(t.id),
                state: t.state.clone(),
                worker_id: t.worker_id.clone(),
                trace: trace_line(t.trace.as_deref()),
            });
        }
        Health { troubles }
    }

    pub fn is_healthy(&self) -> bool {
        self.troubles.is_empty()
    }

    /// 1 when the connector itself is FAILED, else 0.
    pub fn connector_failed(&self) -> bool {
        self.troubles.iter().any(|t| t.task.is_none() && t.failed())
    }

    /// Its tasks in state `state` (`FAILED`, `UNASSIGNED`).
    pub fn tasks_in(&self, state: &str) -> usize {
        self.troubles
            .iter()
            .filter(|t| t.task.is_some() && t.state == state)
            .count()
    }

    /// The worst state shown: `FAILED` before `UNASSIGNED`; `None` when healthy.
    pub fn verdict(&self) -> Option<&'static str> {
        if self.troubles.iter().any(Trouble::failed) {
            Some("FAILED")
        } else if self.is_healthy() {
            None
        } else {
            Some("UNASSIGNED")
        }
    }

    /// `task 0 FAILED: <trace>; task 1 UNASSIGNED`.
    pub fn describe(&self) -> String {
        self.troubles
            .iter()
            .map(Trouble::describe)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The first line of a Java trace, with its `Caused by:` lines (at most two) joined by ` / `,
/// so that a report says why without the stack.
pub fn trace_line(trace: Option<&str>) -> Option<String> {
    let mut lines = trace?.lines().map(str::trim);
    let first = lines.next().filter(|l| !l.is_empty())?;
    let mut parts = vec![first.to_string()];
    parts.extend(
        lines
            .filter(|l| l.starts_with("Caused by:"))
            .take(2)
            .map(str::to_string),
    );
    Some(parts.join(" / "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(v: serde_json::Value) -> ConnectorStatus {
        ConnectorStatus::from_json(&v).unwrap()
    }

    #[test]
    fn a_running_connector_with_a_failed_task_is_failed_with_the_trace_s_first_line() {
        let s = status(json!({"name":"c","connector":{"state":"RUNNING"},"tasks":[
            {"id":0,"state":"RUNNING"},
            {"id":1,"state":"FAILED","worker_id":"w:8083","trace":"org.x.ConnectException: boom\n\tat a.b(C.java:1)\nCaused by: java.io.IOException: disk\n\tat d"}]}));
        let h = Health::of(Some(&s));
        assert_eq!(h.verdict(), Some("FAILED"));
        assert_eq!(h.tasks_in("FAILED"), 1);
        assert!(!h.connector_failed());
        assert_eq!(
            h.describe(),
            "task 1 FAILED: org.x.ConnectException: boom / Caused by: java.io.IOException: disk"
        );
    }

    #[test]
    fn an_unassigned_task_and_a_failed_connector_are_named_healthy_ones_are_not() {
        let s = status(
            json!({"name":"c","connector":{"state":"FAILED","trace":"bad config"},
            "tasks":[{"id":0,"state":"UNASSIGNED"}]}),
        );
        let h = Health::of(Some(&s));
        assert!(h.connector_failed());
        assert_eq!(h.tasks_in("UNASSIGNED"), 1);
        assert_eq!(
            h.describe(),
            "connector FAILED: bad config; task 0 UNASSIGNED"
        );
        let ok = status(json!({"name":"c","connector":{"state":"PAUSED"},
            "tasks":[{"id":0,"state":"PAUSED"}]}));
        assert!(Health::of(Some(&ok)).is_healthy());
        assert_eq!(Health::of(None).verdict(), None);
    }
}
