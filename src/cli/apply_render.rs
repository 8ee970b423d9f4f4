//! Text for `apply`, `reset` and `undo`: the plan before anything changes, each step with
//! `-v`, and a summary per connector afterwards, each in the command's own verb
//! (docs/output.md).

use super::output::{Printer, Style};
use super::report_error::error_line;
use super::words;
use crate::compare::{PartitionDiff, PartitionKind};
use crate::engine::apply::{
    Action, ActionKind, ApplyOutcome, ApplyPlan, ApplyReport, ConnectorApply, ConnectorPlan,
    Observer, OperationObserver, StepRecord,
};
use crate::engine::orphaned::of_name::Gone;
use crate::engine::risk::{assess, while_moving, RiskCode};
use crate::model::{ConnectorType, Fields, TargetState};

/// The command an operation runs for: its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Apply,
    Reset,
    Undo,
}

impl Verb {
    /// The confirmation question, before "on cluster X?".
    pub fn question(self) -> &'static str {
        match self {
            Verb::Apply => "Apply these changes",
            Verb::Reset => "Delete the offsets of these connectors",
            Verb::Undo => "Undo the operation",
        }
    }

    /// What a connector that went through is called in the summary.
    fn done(self) -> &'static str {
        match self {
            Verb::Apply => "applied",
            Verb::Reset => "reset",
            Verb::Undo => "undone",
        }
    }
}

/// The plan, one block per connector, then a count.
pub fn plan(p: &Printer, plan: &ApplyPlan) -> String {
    let mut out = format!(
        "Plan for cluster {} ({}, {}):\n",
        plan.cluster, plan.url, plan.server
    );
    for c in &plan.connectors {
        out.push('\n');
        out.push_str(&connector(p, c, plan.prune));
    }
    for l in &plan.left_out {
        out.push_str(&format!(
            "\n{} {}: left out: {}\n",
            p.paint(Style::Dim, "·"),
            p.paint(Style::Bold, &l.name),
            l.why
        ));
    }
    let unchanged = plan.connectors.len() - plan.changes() - plan.errors();
    out.push_str(&format!(
        "\nPlan: {} to change, {} unchanged, {}.\n",
        plan.changes(),
        unchanged,
        words::count(plan.errors(), "error")
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
    // A transient state (UNASSIGNED during a rebalance) does not say what is put back: the
    // transaction reads it again before the stop.
    let back = c
        .live_state
        .filter(|s| !s.is_transient())
        .map(|s| s.target());
    let (mark, style, what) = match &c.action {
        Action::NoChange { kept } => (
            "=",
            Style::Dim,
            if *kept > 0 {
                format!(
                    "no changes ({} kept; --prune removes {})",
                    words::count(*kept, "live-only partition"),
                    if *kept == 1 { "it" } else { "them" }
                )
            } else {
                "no changes".into()
            },
        ),
        Action::Patch {
            entries,
            prune_nulls,
            end_state,
            ..
        } => (
            "~",
            Style::Warn,
            {
                let then = |back: Option<TargetState>| match end_state {
                    Some(s) => format!(
                        "start {s} (--create-state; it is {} now)",
                        back.map_or_else(|| "in a state not known".to_string(), |b| b.to_string())
                    ),
                    None => then(back),
                };
                let patch = format!(
                    "patch {}{}",
                    words::count(entries.len(), "partition"),
                    if *prune_nulls > 0 {
                        format!(" ({prune_nulls} removed)")
                    } else {
                        String::new()
                    }
                );
                match (&c.by_service, end_state) {
                    (Some(note), Some(_)) => format!("{patch}; {note}; {}", then(back)),
                    (Some(note), None) => format!("{patch}; {note}"),
                    (None, _) => format!("stop, {patch}, {}", then(back)),
                }
            },
        ),
        Action::Create {
            entries,
            start_state,
            config_keys,
            secrets_from_env,
        } => (
            "+",
            Style::Good,
            {
                let config = format!(
                    "from the file's config ({}{})",
                    words::count(*config_keys, "key"),
                    if secrets_from_env.is_empty() {
                        String::new()
                    } else {
                        format!("; secrets from {}", secrets_from_env.join(", "))
                    }
                );
                let n = words::count(entries.len(), "partition");
                match &c.by_service {
                    Some(note) => format!(
                        "create {config} with the offsets of {n}, start {start_state}; {note}"
                    ),
                    None => format!("create STOPPED {config}, patch {n}, start {start_state}"),
                }
            },
        ),
        Action::Reset { partitions } => (
            "-",
            Style::Bad,
            {
                let delete = format!(
                    "delete the offsets of all {}",
                    words::count(*partitions, "partition")
                );
                match &c.by_service {
                    Some(note) => format!("{delete}; {note}"),
                    None => format!("stop, {delete}, {}", then(back)),
                }
            },
        ),
        Action::Delete { partitions } => (
            "-",
            Style::Bad,
            format!(
                "created by the operation being undone: {}delete the offsets of its {}, then delete the connector{}",
                if c.by_service.is_some() { "" } else { "stop, " },
                words::count(*partitions, "partition"),
                c.by_service
                    .as_ref()
                    .map(|n| format!("; {n}"))
                    .unwrap_or_default()
            ),
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
    if let Some(t) = &c.translation {
        out.push_str(&super::apply_mirror_render::translation(p, t));
    }
    for ch in &c.config_changes {
        out.push_str(&format!(
            "    config {}: {} -> {}  ({})\n",
            ch.key, ch.before, ch.after, ch.why
        ));
    }
    if let Some(g) = &c.leftovers {
        out.push_str(&format!(
            "    {}
",
            p.paint(Style::Dim, &leftovers_line(g))
        ));
    }
    if c.action.changes() {
        let kind = c.connector_type.unwrap_or(ConnectorType::Source);
        let shape = crate::shapes::registry().find(kind, c.class.as_deref());
        // Live moves until the apply stops the connector: its counts are bounds.
        let moving = c.live_state == Some(crate::model::ConnectorState::Running);
        for d in &c.partitions {
            let removes = c.removes(d, prune);
            out.push_str(&format!(
                "    {}\n",
                partition_line(p, d, (prune, removes), &c.action, (kind, moving), shape)
            ));
        }
        if c.unchanged > 0 {
            out.push_str(&format!(
                "    {}\n",
                p.paint(
                    Style::Dim,
                    &format!("{} unchanged", words::count(c.unchanged, "partition"))
                )
            ));
        }
        if let Some(n) = c.left_alone.filter(|n| *n > 0) {
            out.push_str(&format!(
                "    {}\n",
                p.paint(
                    Style::Dim,
                    &format!(
                        "{} not in the change, left as live has {}",
                        words::count(n, "other partition"),
                        if n == 1 { "it" } else { "them" }
                    )
                )
            ));
        }
    }
    for d in &c.passed {
        out.push_str(&format!(
            "    {}\n",
            p.paint(
                Style::Dim,
                &format!(
                    "{}: live {}, the change set {}: {}",
                    words::partition(&d.partition),
                    words::offset(d.actual.as_ref()),
                    words::offset(d.wanted.as_ref()),
                    crate::engine::risk::PASSED
                )
            )
        ));
    }
    for w in &c.warnings {
        out.push_str(&format!("    {} {w}\n", p.paint(Style::Warn, "warning:")));
    }
    out
}

/// What the partitions of a connector to create compare the file's offsets with.
fn leftovers_line(g: &Gone) -> String {
    match g {
        Gone::Group { group, partitions } => format!(
            "against the offsets its consumer group `{group}` still holds ({}), which it would resume from",
            words::count(*partitions, "partition")
        ),
        Gone::OffsetsTopic { topic, partitions } => format!(
            "against the offsets left under its name in topic `{topic}` ({}), which it would resume from",
            words::count(*partitions, "partition")
        ),
        Gone::Nothing { why } => format!(
            "against nothing: kco could not read the offsets an earlier connector of its name may have left, which it would resume from: {why}"
        ),
    }
}

fn then(back: Option<TargetState>) -> String {
    match back {
        Some(TargetState::Stopped) => "left STOPPED".into(),
        Some(s) => format!("then {s} again"),
        None => "then put its state back".into(),
    }
}

/// One partition's change: `orders/0: {"kafka_offset":1600} -> {"kafka_offset":1500}`, and
/// the risk label of what applying it does, as `diff --base` and `--fail-on` say it. An offset
/// whose shape knows a readable form shows it beside the raw one: `{"lsn":23803720,...}
/// (0/16B3748, 2026-11-29T18:21:29.123456Z)`.
fn partition_line(
    p: &Printer,
    d: &PartitionDiff,
    (prune, removes): (bool, bool),
    action: &Action,
    (kind, moving): (ConnectorType, bool),
    shape: Option<&crate::shapes::Shape>,
) -> String {
    let offset = |o: Option<&Fields>| {
        let raw = words::offset(o);
        match o.and_then(|o| shape?.readable(o)) {
            Some(r) => format!("{raw} ({r})"),
            None => raw,
        }
    };
    let name = words::partition(&d.partition);
    let (old, new) = (d.actual.as_ref(), d.wanted.as_ref());
    let removing = matches!(action, Action::Reset { .. } | Action::Delete { .. });
    let (after, new) = match d.kind {
        PartitionKind::OnlyActual if removing => ("(deleted)".to_string(), None),
        PartitionKind::OnlyActual if matches!(action, Action::Create { .. }) => {
            ("(removed: the file does not name it)".to_string(), None)
        }
        PartitionKind::OnlyActual if prune => ("(removed: --prune)".to_string(), None),
        PartitionKind::OnlyActual if removes => ("(removed by the change)".to_string(), None),
        PartitionKind::OnlyActual => {
            return p.paint(
                Style::Dim,
                &format!(
                    "{name}: {} kept (live only; --prune removes it)",
                    offset(old)
                ),
            )
        }
        _ => (offset(new), new),
    };
    let risk = assess(kind, old, new, d.movement.as_ref())
        .filter(|r| !matches!(r.code, RiskCode::NewPartition))
        .map(|r| if moving { while_moving(r) } else { r })
        .map(|r| {
            let style = match r.code {
                RiskCode::Reprocessing | RiskCode::Changed => Style::Warn,
                _ => Style::Bad,
            };
            format!(
                "  {} {}",
                p.paint(style, &format!("[{}]", r.code.label())),
                r.message
            )
        })
        .unwrap_or_default();
    format!("{name}: {} -> {after}{risk}", offset(old))
}

/// One line per connector, then the count.
pub fn summary(p: &Printer, report: &ApplyReport, verb: Verb) -> String {
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
    let unchanged = report.connectors.len() - applied - failed - skipped;
    let mut counts = vec![format!("{applied} {}", verb.done())];
    if unchanged > 0 {
        counts.push(format!("{unchanged} unchanged"));
    }
    counts.push(format!("{failed} failed"));
    if skipped > 0 {
        counts.push(format!("{skipped} skipped (interrupted)"));
    }
    out.push_str(&format!(
        "\n{} ({}).\n",
        counts.join(", "),
        words::count(report.mutating_calls as usize, "mutating request")
    ));
    out
}

fn connector_result(p: &Printer, c: &ConnectorApply) -> String {
    let mut out = match c.outcome {
        ApplyOutcome::NoChange => format!("{} {}: no changes\n", p.paint(Style::Dim, "="), c.name),
        ApplyOutcome::Skipped => format!(
            "{} {}: interrupted before it started; nothing was sent\n",
            p.paint(Style::Warn, "skipped"),
            c.name
        ),
        ApplyOutcome::Applied if c.action == ActionKind::Delete => format!(
            "{} {}: offsets deleted and verified, connector deleted\n",
            p.paint(Style::Good, "ok"),
            c.name,
        ),
        ApplyOutcome::Applied => format!(
            "{} {}: {}; {}{}\n",
            p.paint(Style::Good, "ok"),
            c.name,
            match c.action {
                ActionKind::Reset => "offsets deleted and verified",
                ActionKind::Create => "created, offsets applied and verified",
                ActionKind::Patch
                | ActionKind::NoChange
                | ActionKind::Error
                | ActionKind::Delete => "offsets applied and verified",
            },
            c.final_state.as_deref().unwrap_or("state unknown"),
            match (c.action, c.final_state.as_deref()) {
                (ActionKind::Create, Some(s)) if !s.starts_with("RUNNING") => {
                    " (created in the state its file records or --create-state asked for: not running; `--create-state running` creates it running)"
                }
                _ => "",
            }
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

impl Observer for StepPrinter<'_> {}

impl OperationObserver for StepPrinter<'_> {
    fn step(&self, connector: &str, r: &StepRecord) {
        let mark = if r.ok { "ok" } else { "failed" };
        self.0
            .detail(&format!("{connector}: {} {mark}: {}", r.step, r.detail));
    }
    fn waiting(&self, connector: &str, seen: &str) {
        self.0.detail(&format!("{connector}: {seen}"));
    }
}
