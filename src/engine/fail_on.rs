//! `apply --fail-on`: the risks of an apply plan, as `diff --base` labels a change to a file
//! (risk.rs), so that a plan that would rewind, skip ahead or drop partitions is refused
//! before anything is sent.

use serde::Serialize;

use crate::compare::PartitionKind;
use crate::engine::apply::{Action, ApplyPlan};
use crate::engine::risk::{assess, while_moving, Risk, RiskCode};
use crate::model::Fields;

/// A risk that refuses the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refuse {
    /// An offset moves backwards (REPROCESSING).
    Reprocessing,
    /// An offset moves forwards (DATA LOSS).
    DataLoss,
    /// A partition's offset is removed (`--prune`: OFFSET RESET).
    Reset,
}

impl Refuse {
    pub fn covers(self, code: RiskCode) -> bool {
        matches!(
            (self, code),
            (Refuse::Reprocessing, RiskCode::Reprocessing)
                | (Refuse::DataLoss, RiskCode::DataLoss)
                | (
                    Refuse::Reset,
                    RiskCode::OffsetReset | RiskCode::SourceRestart
                )
        )
    }
}

/// One partition whose change a `--fail-on` forbids.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    pub connector: String,
    pub partition: Fields,
    pub risk: Risk,
}

/// Every partition of the plan whose change one of `refuse` forbids: live offset (before)
/// against the file's (after), as `diff --base` assesses a revision against the working tree.
pub fn refusals(plan: &ApplyPlan, refuse: &[Refuse]) -> Vec<Refusal> {
    let mut out = Vec::new();
    for c in &plan.connectors {
        // A connector to create is judged against what an earlier connector of its name
        // left, where the plan read it (`plan::label_creates`).
        let (Action::Patch { .. } | Action::Create { .. }, Some(kind)) =
            (&c.action, c.connector_type)
        else {
            continue;
        };
        for d in &c.partitions {
            let wanted = match d.kind {
                PartitionKind::OnlyActual if !c.removes(d, plan.prune) => continue,
                _ => d.wanted.as_ref(),
            };
            let risk = assess(kind, d.actual.as_ref(), wanted, d.movement.as_ref());
            // Live moves until the apply stops a running connector: its counts are bounds.
            let moving = c.live_state == Some(crate::model::ConnectorState::Running);
            let risk = risk.map(|r| if moving { while_moving(r) } else { r });
            if let Some(risk) = risk.filter(|r| refuse.iter().any(|f| f.covers(r.code))) {
                out.push(Refusal {
                    connector: c.name.clone(),
                    partition: d.partition.clone(),
                    risk,
                });
            }
        }
    }
    out
}
