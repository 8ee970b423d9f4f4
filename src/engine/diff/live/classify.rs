//! One connector's file (if any) against its live listing and offsets (if any): its status,
//! partitions, notes and the two YAML sides. The DR diff (`diff::dr`) classifies the file as
//! the DR cluster would hold it with the same function.

use std::path::Path;

use super::super::Class;
use super::super::{
    identity_change, ConnectorDiff, Numbering, PartitionCounts, PartitionReport, Side, Sides,
    Status, YamlSides,
};
use crate::client::ConnectorListing;
use crate::compare::{compare_each_in, PartitionKind};
use crate::engine::service_pause::ServicePause;
use crate::engine::LoadedFile;
use crate::model::{ConnectorState, OffsetEntry};

/// One connector: its file (if any) against its live listing and offsets (if any).
pub(crate) fn classify(
    name: &str,
    file: Option<&LoadedFile>,
    live: Option<(&ConnectorListing, &[OffsetEntry])>,
    paused_by: Option<&ServicePause>,
    cluster: &str,
    cwd: &Path,
) -> ConnectorDiff {
    let path = file.map(|f| {
        f.path
            .strip_prefix(cwd)
            .unwrap_or(&f.path)
            .display()
            .to_string()
    });
    let file_type = file.map(|f| f.file.metadata.connector_type);
    let file_class = file.and_then(|f| f.file.metadata.connector_class.as_deref());
    let live_type = live.and_then(|(l, _)| l.connector_type);
    let live_class = live.and_then(|(l, _)| l.class.as_deref());
    let state = live.and_then(|(l, _)| l.state());
    let empty: &[OffsetEntry] = &[];
    let file_offsets = file.map(|f| f.file.offsets.as_slice()).unwrap_or(empty);
    let live_list = live.map(|(_, o)| o).unwrap_or(empty);
    let mut notes = Vec::new();
    let mut less_active = false;
    // Offsets move forward while a connector runs; so may those of one paused or stopped
    // since its file recorded it RUNNING (it ran until then: its state is noted below, a
    // routine change). One its file records paused or stopped cannot have moved on.
    let ran = state == Some(ConnectorState::Running)
        || (matches!(
            state,
            Some(ConnectorState::Paused | ConnectorState::Stopped)
        ) && file.and_then(|f| f.file.metadata.state).map(|s| s.target())
            == Some(crate::model::TargetState::Running));
    let mut counts = PartitionCounts::default();
    let mut partitions = Vec::new();
    // Live is the newer side: the movement is where live lies relative to the file.
    let shape = file_type
        .or(live_type)
        .and_then(|t| crate::shapes::registry().find(t, file_class.or(live_class)));
    for d in compare_each_in(shape, live_list, file_offsets) {
        if !counts.count(d.kind) {
            continue;
        }
        let m = d.movement;
        let advanced = ran
            && match d.kind {
                PartitionKind::Moved => m
                    .as_ref()
                    .is_some_and(|m| m.direction == crate::compare::Direction::Forward),
                PartitionKind::OnlyWanted => true,
                _ => false,
            };
        let readable = super::super::readable_sides(
            shape,
            [("before", d.actual.as_ref()), ("after", d.wanted.as_ref())],
        );
        let sides = Sides::Live {
            kind: d.kind,
            file_offset: d.actual,
            live_offset: d.wanted,
        };
        let class = if advanced {
            Class::Advanced
        } else {
            Class::Drift
        };
        partitions.push(PartitionReport {
            class: Some(class),
            readable,
            ..PartitionReport::new(d.partition, sides, m)
        });
    }
    let status = match (file, live) {
        (Some(_), None) => {
            notes.push(format!("not on cluster `{cluster}`"));
            Status::Missing
        }
        (None, _) => {
            notes.push("on the cluster, but no snapshot file".into());
            Status::Untracked
        }
        (Some(_), Some(_)) => {
            if let Some(s) =
                identity_change(file_type, live_type, file_class, live_class, &mut notes)
            {
                s
            } else if partitions.iter().any(|p| p.class == Some(Class::Drift)) {
                less_active = state_note(file, state, paused_by, &mut notes);
                Status::Drifted
            } else if state_note(file, state, paused_by, &mut notes) {
                less_active = true;
                Status::StateChanged
            } else if partitions.is_empty() {
                Status::InSync
            } else {
                Status::Advanced
            }
        }
    };
    // A missing connector's partitions are not drift to act on one by one; an untracked
    // connector has nothing to compare with.
    if matches!(status, Status::Missing | Status::Untracked) {
        partitions.clear();
    }
    // Both sides, only for a connector that differs.
    let lines = file
        .filter(|_| status != Status::InSync)
        .map(LoadedFile::lines);
    let header = lines.as_ref().map(|l| l.header);
    let yaml = (status != Status::InSync).then(|| YamlSides {
        old_label: path.clone().unwrap_or_else(|| "(no file)".into()),
        old: lines.map(|lines| {
            Side::new(file_type, file_class, file_offsets).numbered(Numbering::File(lines))
        }),
        new_label: match live {
            Some(_) => format!("live: {cluster}/{name}"),
            None => format!("live: {cluster}/{name} (absent)"),
        },
        // The live side has no file: its lines are numbered where they would be in the
        // file, were the live offsets written there.
        new: live.map(|_| {
            let numbering = header.map_or(Numbering::Own, Numbering::Into);
            Side::new(live_type, live_class, live_list).numbered(numbering)
        }),
    });
    ConnectorDiff {
        translation: None,
        leftovers: None,
        name: name.to_string(),
        status,
        connector_type: file_type.or(live_type),
        state: live.and_then(|(l, _)| l.status.as_ref().map(|s| s.raw_state.clone())),
        file: path,
        notes,
        counts,
        partitions,
        yaml,
        less_active,
        health: crate::engine::health::Health::of(live.and_then(|(l, _)| l.status.as_ref())),
    }
}

/// What the note on a less active connector says when no kco operation explains it
/// (`DiffReport::state_left_by` drops it where one may).
pub(crate) const OUTSIDE_KCO: &str =
    ": paused or stopped outside kco, the next snapshot records it";

/// Whether the live state is less active than the file records (RUNNING in the file, STOPPED
/// or PAUSED live; PAUSED in the file, STOPPED live); if so, a note says so. Whether a kco
/// operation left it so is told by the cluster's lock (`DiffReport::state_left_by`). A
/// connector its service paused around its own pending request is not less active: it gets
/// its state back when the request ends (the note says so).
fn state_note(
    file: Option<&LoadedFile>,
    live: Option<ConnectorState>,
    paused_by: Option<&ServicePause>,
    notes: &mut Vec<String>,
) -> bool {
    let (Some(recorded), Some(live)) = (file.and_then(|f| f.file.metadata.state), live) else {
        return false;
    };
    let rank = |t: crate::model::TargetState| match t {
        crate::model::TargetState::Running => 2,
        crate::model::TargetState::Paused => 1,
        crate::model::TargetState::Stopped => 0,
    };
    let less_active = matches!(live, ConnectorState::Stopped | ConnectorState::Paused)
        && rank(live.target()) < rank(recorded.target());
    if let Some(pause) = paused_by.filter(|_| less_active && live == ConnectorState::Paused) {
        notes.push(pause.diff_note(recorded.target()));
        return false;
    }
    if less_active {
        notes.push(format!(
            "live state {live}, the file records {}{OUTSIDE_KCO}",
            recorded.target()
        ));
    }
    less_active
}
