//! Text for `apply` and `reset`: the plan before anything changes, each step with `-v`, and a
//! summary per connector afterwards.

use super::output::{Printer, Style};
use super::report_error::error_line;
use crate::compare::{Direction, PartitionDiff, PartitionKind};
use crate::engine::apply::{
    Action, ActionKind, ApplyOutcome, ApplyPlan, ApplyReport, ConnectorApply, ConnectorPlan,
    Progress, StepRecord,
};
use crate::model::{canonical_fields, canonical_json, sink_partition, Fields, TargetState};

/// The plan, one block per connector, then a count.
pub fn plan(p: &Printer, plan: &ApplyPlan) -> String {
    let mut out = format!(
        "Plan for cluster {} ({}, Kafka Connect {}):\n",
        plan.cluster, plan.url, plan.connect_version
    );
    for c in &plan.connectors {
        out.push('\n');
        out.push_str(&connector(p, c, plan.prune));
    }
    let unchanged = plan.connectors.len() - plan.changes() - plan.errors();
    out.push_str(&format!(
        "\nPlan: {} to change, {} unchanged, {} error(s).\n",
        plan.changes(),
        unchanged,
        plan.errors()
    ));
    out
}

fn connector(p: &Printer, c: &ConnectorPlan, prune: bool) -> String {
    let mut about = Vec::new();
    if let Some(t) = c.connector_type {
        about.push(t.to_string());
    }
    if let Some(s) = c.live_state {
        about.push(s.to_string());
    }
    if let Some(f) = &c.from {
        about.push(format!("from {f}"));
    }
    let about = if about.is_empty() {
        String::new()
    } else {
        format!(" ({})", about.join(", "))
    };
    let back = c.live_state.map(|s| s.target());
    let (mark, style, what) = match &c.action {
        Action::NoChange { kept } => (
            "=",
            Style::Dim,
            if *kept > 0 {
                format!("no changes ({kept} live-only partition(s) kept; --prune removes them)")
            } else {
                "no changes".into()
            },
        ),
        Action::Patch {
            entries,
            prune_nulls,
            ..
        } => (
            "~",
            Style::Warn,
            format!(
                "stop, patch {} partition(s){}, {}",
                entries.len(),
                if *prune_nulls > 0 {
                    format!(" ({prune_nulls} removed)")
                } else {
                    String::new()
                },
                then(back)
            ),
        ),
        Action::Create {
            entries,
            start_state,
            config_keys,
            secrets_from_env,
        } => (
            "+",
            Style::Good,
            format!(
                "create STOPPED from the file's config ({config_keys} keys{}), patch {} partition(s), start {start_state}",
                if secrets_from_env.is_empty() {
                    String::new()
                } else {
                    format!("; secrets from {}", secrets_from_env.join(", "))
                },
                entries.len()
            ),
        ),
        Action::Reset { partitions } => (
            "-",
            Style::Bad,
            format!("stop, delete all {partitions} partition offset(s), {}", then(back)),
        ),
        Action::Delete { partitions } => (
            "-",
            Style::Bad,
            format!("created by the apply being undone: stop, delete its {partitions} partition offset(s), then delete the connector"),
        ),
        Action::Error { message } => ("!", Style::Bad, error_line(&|s, t| p.paint(s, t), message)),
    };
    let mut out = format!(
        "{} {}{}: {}\n",
        p.paint(style, mark),
        p.paint(Style::Bold, &c.name),
        about,
        what
    );
    if c.action.changes() {
        for d in &c.partitions {
            out.push_str(&format!("    {}\n", partition_line(p, d, prune, &c.action)));
        }
        if c.unchanged > 0 {
            out.push_str(&format!(
                "    {}\n",
                p.paint(
                    Style::Dim,
                    &format!("{} partition(s) unchanged", c.unchanged)
                )
            ));
        }
    }
    for w in &c.warnings {
        out.push_str(&format!("    {} {w}\n", p.paint(Style::Warn, "warning:")));
    }
    out
}

fn then(back: Option<TargetState>) -> String {
    match back {
        Some(TargetState::Stopped) => "left STOPPED".into(),
        Some(s) => format!("then {s} again"),
        None => "then put its state back".into(),
    }
}

fn partition_line(p: &Printer, d: &PartitionDiff, prune: bool, action: &Action) -> String {
    let label = partition_label(&d.partition);
    match d.kind {
        PartitionKind::OnlyActual
            if matches!(action, Action::Reset { .. } | Action::Delete { .. }) =>
        {
            format!("{label}: {} -> (deleted)", show(d.actual.as_ref()))
        }
        PartitionKind::OnlyActual if prune => format!(
            "{label}: {} -> {}",
            show(d.actual.as_ref()),
            p.paint(Style::Bad, "(removed: --prune)")
        ),
        PartitionKind::OnlyActual => p.paint(
            Style::Dim,
            &format!(
                "{label}: {} kept (live only; --prune removes it)",
                show(d.actual.as_ref())
            ),
        ),
        PartitionKind::OnlyWanted => format!("{label}: (none) -> {}", show(d.wanted.as_ref())),
        _ => {
            let risk = match &d.movement {
                Some(m) => {
                    let dist = m
                        .distance
                        .map(|n| format!(" {n} {}", m.unit))
                        .unwrap_or_default();
                    match m.direction {
                        Direction::Backward => p.paint(
                            Style::Warn,
                            &format!("  (backward{dist}: re-processed, duplicates possible)"),
                        ),
                        Direction::Forward => p.paint(
                            Style::Bad,
                            &format!("  (forward{dist}: skipped, data not processed)"),
                        ),
                    }
                }
                None => String::new(),
            };
            format!(
                "{label}: {} -> {}{risk}",
                show(d.actual.as_ref()),
                show(d.wanted.as_ref())
            )
        }
    }
}

fn partition_label(partition: &Fields) -> String {
    match sink_partition(partition) {
        Some((topic, n)) => format!("{topic}[{n}]"),
        None => canonical_fields(partition),
    }
}

fn show(offset: Option<&Fields>) -> String {
    match offset {
        None => "(none)".into(),
        Some(f) if f.len() == 1 => {
            let (k, v) = f.iter().next().expect("one field");
            format!("{k}={}", canonical_json(v))
        }
        Some(f) => canonical_fields(f),
    }
}

/// One line per connector, then the count.
pub fn summary(p: &Printer, report: &ApplyReport) -> String {
    let mut out = String::from("\n");
    for c in &report.connectors {
        out.push_str(&connector_result(p, c));
    }
    let applied = report
        .connectors
        .iter()
        .filter(|c| c.outcome == ApplyOutcome::Applied)
        .count();
    let count = |o: ApplyOutcome| report.connectors.iter().filter(|c| c.outcome == o).count();
    let (failed, skipped) = (count(ApplyOutcome::Failed), count(ApplyOutcome::Skipped));
    out.push_str(&format!(
        "\n{} applied, {} unchanged, {} failed{} ({} mutating request(s)).\n",
        applied,
        report.connectors.len() - applied - failed - skipped,
        failed,
        if skipped > 0 {
            format!(", {skipped} skipped (interrupted)")
        } else {
            String::new()
        },
        report.mutating_calls
    ));
    out
}

fn connector_result(p: &Printer, c: &ConnectorApply) -> String {
    let mut out = match c.outcome {
        ApplyOutcome::NoChange => format!("{} {}: no changes\n", p.paint(Style::Dim, "="), c.name),
        ApplyOutcome::Skipped => format!(
            "{} {}: skipped: interrupted before it started; nothing was sent\n",
            p.paint(Style::Warn, "--"),
            c.name
        ),
        ApplyOutcome::Applied => format!(
            "{} {}: {}; {}\n",
            p.paint(Style::Good, "ok"),
            c.name,
            match c.action {
                ActionKind::Reset => "offsets deleted and verified",
                ActionKind::Create => "created, offsets applied and verified",
                ActionKind::Delete => "offsets deleted and verified, connector deleted",
                ActionKind::Patch | ActionKind::NoChange | ActionKind::Error => {
                    "offsets applied and verified"
                }
            },
            c.final_state.as_deref().unwrap_or("state unknown")
        ),
        ApplyOutcome::Failed => {
            let step = c
                .failed_step
                .map(|s| format!(" at {s}"))
                .unwrap_or_default();
            let mut s = format!(
                "{} {}: failed{step}: {}\n",
                p.paint(Style::Bad, "FAILED"),
                c.name,
                c.error.as_deref().unwrap_or("unknown error")
            );
            if let Some(state) = &c.final_state {
                s.push_str(&format!("    now: {state}"));
                match (c.restored_state, c.state_restored) {
                    (Some(r), true) => s.push_str(&format!(" ({r} as before)")),
                    (Some(r), false) => s.push_str(&format!(" ({r} could not be put back)")),
                    _ => {}
                }
                s.push('\n');
            }
            s.push_str(&format!(
                "    offsets: {}\n",
                if c.offsets_sent {
                    "a change was sent; they may differ from before (the backup has the old ones)"
                } else {
                    "unchanged"
                }
            ));
            s
        }
    };
    for w in &c.warnings {
        out.push_str(&format!("    {} {w}\n", p.paint(Style::Warn, "warning:")));
    }
    out
}

/// Prints each step as it ends, with `-v`.
pub struct StepPrinter<'a>(pub &'a Printer);

impl Progress for StepPrinter<'_> {
    fn step(&self, connector: &str, r: &StepRecord) {
        let mark = if r.ok { "ok" } else { "failed" };
        self.0
            .detail(&format!("{connector}: {} {mark}: {}", r.step, r.detail));
    }
}
