//! Files against the live cluster: one list call, the offsets of each connector read in
//! bounded parallel, then every connector and partition classified. Read-only: no request
//! here changes anything on the cluster.

use std::collections::BTreeMap;
use std::path::Path;

use super::Class;
use super::{
    identity_change, ConnectorDiff, DiffReport, ExitOn, Mode, Numbering, PartitionCounts,
    PartitionReport, Side, Sides, Status, YamlSides,
};
use crate::client::{Connect, ConnectorListing};
use crate::compare::{compare_each_in, PartitionKind};
use crate::engine::apply::plan::Translations;
use crate::engine::progress::{self, Observer, Unheard};
use crate::engine::{probe, LoadedFile};
use crate::error::{Error, Result};
use crate::model::file::{FileProblem, ProblemKind};
use crate::model::{ConnectorState, OffsetEntry};

/// What to compare with the cluster.
pub struct LiveInput<'a> {
    /// Valid snapshot files (checked before any request).
    pub files: &'a [LoadedFile],
    /// The cluster's name (for the report).
    pub cluster: String,
    /// Whether the files are a whole cluster directory: connectors without a file are then
    /// reported as `untracked`.
    pub whole_dir: bool,
    pub exit_on: ExitOn,
    pub parallel: usize,
    /// File paths are shown relative to this directory.
    pub cwd: &'a Path,
}

/// Compares the files with the cluster.
pub fn diff_live(client: &Connect, input: LiveInput<'_>) -> Result<DiffReport> {
    diff_live_reporting(client, input, &Unheard)
}

/// [`diff_live`], telling `fleet` how the offset reads go.
pub fn diff_live_reporting(
    client: &Connect,
    input: LiveInput<'_>,
    fleet: &dyn Observer,
) -> Result<DiffReport> {
    diff_live_translated(client, input, fleet, &Translations::new())
}

/// [`diff_live_reporting`], with the sink files of another Kafka cluster compared through
/// their translation (`engine::mirror`): "could this cluster take over now?".
pub fn diff_live_translated(
    client: &Connect,
    input: LiveInput<'_>,
    fleet: &dyn Observer,
    translations: &Translations,
) -> Result<DiffReport> {
    // One file per connector: two (from two clusters' directories) would be ambiguous.
    let mut first: BTreeMap<&str, &LoadedFile> = BTreeMap::new();
    let mut problems = Vec::new();
    for f in input.files {
        if let Some(other) = first.insert(f.file.metadata.name.as_str(), f) {
            problems.push(FileProblem::new(
                ProblemKind::DuplicateConnector,
                &f.path,
                None,
                format!(
                    "connector `{}` is also in {}: name one file per connector",
                    f.file.metadata.name,
                    other.path.display()
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    probe(client)?;
    let listing = client
        .list_connectors()
        .map_err(|e| Error::client("listing connectors", e))?;
    let by_name: BTreeMap<&str, &LoadedFile> = input
        .files
        .iter()
        .map(|f| (f.file.metadata.name.as_str(), f))
        .collect();
    let mut names: Vec<&str> = by_name.keys().copied().collect();
    if input.whole_dir {
        names.extend(
            listing
                .keys()
                .map(String::as_str)
                .filter(|n| !by_name.contains_key(n)),
        );
    }
    names.sort_unstable();
    // Only connectors on the cluster have offsets to read.
    let to_read: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| listing.contains_key(*n))
        .collect();
    let read = progress::map(
        &to_read,
        input.parallel,
        fleet,
        |n| n,
        |name| {
            match client.offsets(name) {
                Ok(o) => Ok(Some(o)),
                // Deleted between the list and the read: it is missing.
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(Error::client(
                    format!("reading the offsets of connector `{name}`"),
                    e,
                )),
            }
        },
    );
    let mut live_offsets: BTreeMap<&str, Vec<OffsetEntry>> = BTreeMap::new();
    for (name, r) in to_read.iter().zip(read) {
        if let Some(o) = r? {
            live_offsets.insert(name, o);
        }
    }
    let connectors = names
        .iter()
        .map(|name| {
            let live = listing
                .get(*name)
                .zip(live_offsets.get(name))
                .map(|(l, o)| (l, o.as_slice()));
            let file = by_name.get(name).copied();
            match (file, translations.get(*name)) {
                (Some(f), Some(t)) => {
                    super::dr::classify(name, f, live, t, &input.cluster, input.cwd)
                }
                _ => classify(name, file, live, &input.cluster, input.cwd),
            }
        })
        .collect();
    Ok(DiffReport::new(
        Mode::Live,
        input.exit_on,
        Some(input.cluster),
        None,
        connectors,
    ))
}

/// One connector: its file (if any) against its live listing and offsets (if any).
pub(crate) fn classify(
    name: &str,
    file: Option<&LoadedFile>,
    live: Option<(&ConnectorListing, &[OffsetEntry])>,
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
    let running = state == Some(ConnectorState::Running);
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
        let advanced = running
            && match d.kind {
                PartitionKind::Moved => m
                    .as_ref()
                    .is_some_and(|m| m.direction == crate::compare::Direction::Forward),
                PartitionKind::OnlyWanted => true,
                _ => false,
            };
        let readable = super::readable_sides(
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
                state_note(file, state, &mut notes);
                Status::Drifted
            } else if state_note(file, state, &mut notes) {
                Status::StateDrifted
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
        name: name.to_string(),
        status,
        connector_type: file_type.or(live_type),
        state: live.and_then(|(l, _)| l.status.as_ref().map(|s| s.raw_state.clone())),
        file: path,
        notes,
        counts,
        partitions,
        yaml,
    }
}

/// Whether the live state is less active than the file records (RUNNING in the file, STOPPED
/// or PAUSED live; PAUSED in the file, STOPPED live); if so, a note says so.
fn state_note(
    file: Option<&LoadedFile>,
    live: Option<ConnectorState>,
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
    if less_active {
        notes.push(format!(
            "live state {live}, the file records {}: was it left stopped (an interrupted apply: `kco recover`)?",
            recorded.target()
        ));
    }
    less_active
}

#[cfg(test)]
mod tests;
