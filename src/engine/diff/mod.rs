//! `diff` as data: what differs between snapshot files and a live cluster (`live`), or between
//! the files at a git revision and the working tree (`base`). The report types here are what
//! `--output json` prints; docs/diff.md documents them field by field.

mod base;
mod base_live;
mod dr;
mod live;
mod side;
pub mod unified;

#[cfg(test)]
mod gone_tests;

pub use side::{Numbering, Side, YamlSides};

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::compare::PartitionKind;
use crate::compare::{Direction, Movement};
use crate::error::{EXIT_DIFFERENCES, EXIT_OK};
use crate::model::{ConnectorType, Fields, Key};

pub use super::risk::{Risk, RiskCode};
use crate::engine::health::Health;
pub use crate::engine::orphaned::of_name::{Gone, LeftoverReader, Leftovers};
pub(crate) use base::classify;
pub use base::{diff_base, Against, BaseInput, BaseSide};
pub use dr::{heartbeat_line, Alarm, DrInput};
pub use live::{diff_live, diff_live_reporting, diff_live_translated, LiveInput};

/// Which comparison a report is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Files against the live cluster.
    Live,
    /// Files at a git revision against the working tree.
    Base,
}

/// Which differences make the exit code 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitOn {
    /// Everything except a running connector's normal progress (`advanced`).
    Drift,
    /// Any difference.
    Any,
}

/// A connector's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    // live
    /// File and cluster agree.
    InSync,
    /// Only a running connector's normal progress: offsets ahead of the file, new partitions.
    Advanced,
    /// Offsets differ in a way progress does not explain.
    Drifted,
    /// Offsets agree, but the connector is STOPPED or PAUSED where the file records it
    /// RUNNING (or STOPPED where it records PAUSED), and a kco operation holds the cluster's
    /// shared lock (running, or killed and not recovered): it may have left it stopped.
    StateDrifted,
    /// Offsets agree, and the connector is less active than its file records, with no kco
    /// operation on the cluster: its owner (or its service) paused or stopped it. A routine
    /// state, not drift: the next snapshot records it.
    StateChanged,
    /// A file, but no such connector on the cluster.
    Missing,
    /// On the cluster, but no file (whole-directory diffs only).
    Untracked,
    /// A sink file of another Kafka cluster, not on this cluster, whose every partition MM2's
    /// checkpoints translate: it could take over now (`engine::mirror`).
    DrReady,
    /// A sink file of another Kafka cluster with a partition that cannot be translated.
    NoTranslation,
    /// A sink file of another Kafka cluster, not on this cluster, whose partitions translate
    /// while its mirror lags beyond the readiness alarm's thresholds (`dr::Alarm`): a
    /// checkpoint too old, too many records behind, or the mirror silent.
    DrLagging,
    /// A source file of another Kafka cluster against a DR cluster: not part of DR readiness
    /// (its positions belong to the primary's source systems).
    Skipped,
    // base
    /// Same offsets at the revision and in the working tree.
    Unchanged,
    /// Offsets changed.
    Changed,
    /// A file added since the revision.
    Added,
    /// A file removed since the revision.
    Removed,
    // both
    /// The connector type (source/sink) differs.
    TypeChanged,
    /// The connector class differs.
    ClassChanged,
}

impl Status {
    /// The statuses a mode always counts in its summary, zeros included.
    pub fn all(mode: Mode) -> &'static [Status] {
        use Status::*;
        match mode {
            Mode::Live => &[
                InSync,
                Advanced,
                Drifted,
                StateDrifted,
                StateChanged,
                Missing,
                Untracked,
                DrReady,
                DrLagging,
                NoTranslation,
                Skipped,
                TypeChanged,
                ClassChanged,
            ],
            Mode::Base => &[
                Unchanged,
                Changed,
                Added,
                Removed,
                TypeChanged,
                ClassChanged,
            ],
        }
    }

    /// Whether this status makes `diff` exit 2 under `exit_on`.
    pub fn counts(self, exit_on: ExitOn) -> bool {
        match self {
            Status::InSync | Status::Unchanged | Status::DrReady | Status::Skipped => false,
            Status::Advanced | Status::StateChanged => exit_on == ExitOn::Any,
            _ => true,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::InSync => "in_sync",
            Status::Advanced => "advanced",
            Status::Drifted => "drifted",
            Status::StateDrifted => "state_drifted",
            Status::StateChanged => "state_changed",
            Status::Missing => "missing",
            Status::Untracked => "untracked",
            Status::DrReady => "dr_ready",
            Status::DrLagging => "dr_lagging",
            Status::NoTranslation => "no_translation",
            Status::Skipped => "skipped",
            Status::Unchanged => "unchanged",
            Status::Changed => "changed",
            Status::Added => "added",
            Status::Removed => "removed",
            Status::TypeChanged => "type_changed",
            Status::ClassChanged => "class_changed",
        }
    }
}

/// Whether a live difference is normal progress or drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Advanced,
    Drift,
}

/// How a partition compares and its two offsets, named after the mode's sides. Both modes
/// compare with the newer side as `compare`'s wanted side and the older as its actual side
/// (live: the cluster against the file; base: the working tree against the revision), so a
/// [`PartitionKind`] means the same in both; only its JSON name differs: live `moved`,
/// `only_live`, `only_file`; base `moved`, `added`, `removed`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Sides {
    /// JSON: `before` the file's offset, `after` the live one (docs/output.md: one pair of
    /// names for the two sides of every comparison).
    Live {
        #[serde(serialize_with = "live_kind")]
        kind: PartitionKind,
        #[serde(rename = "before")]
        file_offset: Option<Fields>,
        #[serde(rename = "after")]
        live_offset: Option<Fields>,
    },
    /// JSON: `before` the offset at the base revision, `after` the one in the working tree.
    Base {
        #[serde(serialize_with = "base_kind")]
        kind: PartitionKind,
        #[serde(rename = "before")]
        base_offset: Option<Fields>,
        #[serde(rename = "after")]
        head_offset: Option<Fields>,
    },
}

fn live_kind<S: serde::Serializer>(k: &PartitionKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match k {
        PartitionKind::Unchanged => "unchanged",
        PartitionKind::Moved => "moved",
        PartitionKind::OnlyWanted => "only_live",
        PartitionKind::OnlyActual => "only_file",
    })
}

fn base_kind<S: serde::Serializer>(k: &PartitionKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match k {
        PartitionKind::Unchanged => "unchanged",
        PartitionKind::Moved => "moved",
        PartitionKind::OnlyWanted => "added",
        PartitionKind::OnlyActual => "removed",
    })
}

/// One partition that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionReport {
    pub partition: Fields,
    /// `kind` and the two offsets.
    #[serde(flatten)]
    pub offsets: Sides,
    /// live: where the live offset lies relative to the file's; base: where the working tree's
    /// lies relative to the revision's. `null` when the offsets have no known order.
    pub direction: Option<Direction>,
    pub distance: Option<u64>,
    pub unit: Option<Key>,
    /// The offset field(s) compared (`kafka_offset`, `position`, `file+pos`, `lsn`, ...).
    pub field: Option<Key>,
    /// live only: normal progress (`advanced`) or `drift`.
    pub class: Option<Class>,
    /// base only: what applying the change would do to this partition: against its live
    /// offset when the review read the cluster (`labels`), else against the revision's.
    pub risk: Option<Risk>,
    /// base, against live: the partition's live offset (`null`: the cluster has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveOffset>,
    /// The offsets as the database's own tools show them (`0/16B3748`, `mysql-bin.000003:154`,
    /// UTC times), keyed by side as the offsets are (`before`, `after`); only where the
    /// connector's shape knows how (`schemas/shapes.yaml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readable: Option<BTreeMap<&'static str, String>>,
}

/// The readable forms of the sides that have one, or `None`.
pub(crate) fn readable_sides(
    shape: Option<&crate::shapes::Shape>,
    sides: [(&'static str, Option<&Fields>); 2],
) -> Option<BTreeMap<&'static str, String>> {
    let shape = shape?;
    let map: BTreeMap<&'static str, String> = sides
        .into_iter()
        .filter_map(|(name, f)| Some((name, shape.readable(f?)?)))
        .collect();
    (!map.is_empty()).then_some(map)
}

impl PartitionReport {
    /// One partition's line: its two sides and how one moved from the other; `class` and
    /// `risk` are for the mode to fill in.
    pub fn new(partition: Fields, offsets: Sides, m: Option<Movement>) -> Self {
        let (direction, distance, unit, field) = match m {
            Some(m) => (Some(m.direction), m.distance, Some(m.unit), Some(m.field)),
            None => (None, None, None, None),
        };
        PartitionReport {
            partition,
            offsets,
            direction,
            distance,
            unit,
            field,
            class: None,
            risk: None,
            live: None,
            readable: None,
        }
    }
}

/// A partition's live offset, read for a review's labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveOffset {
    pub offset: Option<Fields>,
    /// Why applying the change leaves this partition where live has it (a forward change
    /// whose target live has passed: `risk::passed`), when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
    /// The offset is what a deleted connector of the name left (the connector's
    /// `leftovers` says where), not a live connector's; not serialized.
    #[serde(skip)]
    pub leftover: bool,
}

/// What a review's risk labels compare the change's new offsets with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelsAgainst {
    /// The live offsets: each label is what applying the change would do.
    Live,
    /// The files at the revision only.
    Files,
}

/// base: what the labels say, and against what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Labels {
    pub against: LabelsAgainst,
    /// live: the cluster read, its URL, and when (RFC 3339 UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_at: Option<String>,
    /// files: why the cluster was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// live: the connectors whose live offsets could not be read, labelled by the files only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_only: Vec<String>,
}

/// Partition counts of one connector.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartitionCounts {
    pub unchanged: usize,
    pub moved: usize,
    /// live: `only_file`; base: `removed`.
    pub only_old: usize,
    /// live: `only_live`; base: `added`.
    pub only_new: usize,
}

impl PartitionReport {
    pub fn kind(&self) -> PartitionKind {
        match self.offsets {
            Sides::Live { kind, .. } | Sides::Base { kind, .. } => kind,
        }
    }
}

impl PartitionCounts {
    /// Counts one compared partition (compared with the newer side as wanted); false when it
    /// is unchanged (and so not listed).
    pub(super) fn count(&mut self, kind: PartitionKind) -> bool {
        match kind {
            PartitionKind::Unchanged => self.unchanged += 1,
            PartitionKind::Moved => self.moved += 1,
            PartitionKind::OnlyActual => self.only_old += 1,
            PartitionKind::OnlyWanted => self.only_new += 1,
        }
        kind != PartitionKind::Unchanged
    }
}

/// One connector's comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectorDiff {
    pub name: String,
    pub status: Status,
    /// The connector type (the file's, else the cluster's).
    #[serde(rename = "type")]
    pub connector_type: Option<ConnectorType>,
    /// live: the connector's state on the cluster (`RUNNING`, ...).
    pub state: Option<String>,
    /// The snapshot file (relative to the current directory, or the repository for `base`).
    pub file: Option<String>,
    /// Connector-level changes, in words (type or class changed, file added or removed).
    pub notes: Vec<String>,
    pub counts: PartitionCounts,
    /// The partitions that differ, in canonical order (unchanged ones are only counted).
    pub partitions: Vec<PartitionReport>,
    /// A sink file of another Kafka cluster: each partition's translation on this DR cluster
    /// (its checkpoint, when it was written, how far behind the file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation: Option<crate::engine::mirror::Translation>,
    /// base, against live, a connector the cluster lacks: what its change was labelled
    /// against (what an earlier connector of its name left, or nothing, and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leftovers: Option<Gone>,
    /// The two sides (type, class, offsets), for a unified diff of their YAML; not
    /// serialized.
    #[serde(skip)]
    pub yaml: Option<YamlSides>,
    /// live: the connector is less active than its file records (STOPPED or PAUSED where it
    /// says RUNNING, ...), whatever its status (`state_changed`, or `drifted` when its
    /// offsets drifted too); not serialized (the notes say it).
    #[serde(skip)]
    pub less_active: bool,
    /// live: the connector or a task FAILED, or UNASSIGNED past the listing's wait
    /// (`engine::health`); JSON `health`, absent when healthy. Offsets can be in sync while a
    /// task is FAILED: `--fail-on failed` makes it a difference.
    #[serde(skip_serializing_if = "Health::is_healthy")]
    pub health: Health,
}

/// Counts over the whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub connectors: usize,
    /// Connectors whose status makes the exit code 2.
    pub differences: usize,
    /// Connectors per status; every status of the mode is present.
    pub statuses: BTreeMap<&'static str, usize>,
    /// Partitions that differ, over all connectors.
    pub partitions_changed: usize,
    /// live: connectors with the connector or a task FAILED (`health`).
    pub failed: usize,
    /// live: connectors with the connector or a task UNASSIGNED past the listing's wait, and
    /// none FAILED.
    pub unassigned: usize,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffReport {
    pub mode: Mode,
    /// live: the cluster's name; base: the cluster whose directory was the default, if any.
    pub cluster: Option<String>,
    /// base: the revision as given.
    pub base: Option<String>,
    /// base: the commit whose files were compared: the merge base of HEAD and the revision
    /// (unless `--tip`), else the commit the revision names.
    pub base_commit: Option<String>,
    /// base: the commit the revision names, when the merge base compared is another one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_tip: Option<String>,
    /// Named after the flag, `--fail-on` (JSON: `fail_on`).
    #[serde(rename = "fail_on")]
    pub exit_on: ExitOn,
    /// `--fail-on failed`: a connector or task FAILED or UNASSIGNED (`summary.failed`,
    /// `summary.unassigned`) makes the exit code 2 too.
    pub fail_on_failed: bool,
    pub summary: Summary,
    /// base: what the risk labels compare with (live offsets, or the files only, and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<Labels>,
    pub connectors: Vec<ConnectorDiff>,
    /// live, against a DR cluster: what MirrorMaker 2's heartbeats say of each mirror the
    /// files cross.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mirrors: Vec<crate::engine::mirror::heartbeat::MirrorHeartbeat>,
    /// 0: no differences; 2: differences (per `exit_on`).
    pub exit_code: u8,
}

impl DiffReport {
    /// Assembles a report: connectors sorted by name, summary and exit code computed.
    pub fn new(
        mode: Mode,
        exit_on: ExitOn,
        cluster: Option<String>,
        base: Option<(String, String)>,
        mut connectors: Vec<ConnectorDiff>,
    ) -> Self {
        connectors.sort_by(|a, b| a.name.cmp(&b.name));
        let mut statuses: BTreeMap<&'static str, usize> =
            Status::all(mode).iter().map(|s| (s.as_str(), 0)).collect();
        for c in &connectors {
            *statuses.entry(c.status.as_str()).or_default() += 1;
        }
        let differences = connectors
            .iter()
            .filter(|c| c.status.counts(exit_on))
            .count();
        let summary = Summary {
            connectors: connectors.len(),
            differences,
            statuses,
            partitions_changed: connectors.iter().map(|c| c.partitions.len()).sum(),
            failed: connectors
                .iter()
                .filter(|c| c.health.verdict() == Some("FAILED"))
                .count(),
            unassigned: connectors
                .iter()
                .filter(|c| c.health.verdict() == Some("UNASSIGNED"))
                .count(),
        };
        let (base, base_commit) = match base {
            Some((b, c)) => (Some(b), Some(c)),
            None => (None, None),
        };
        DiffReport {
            mode,
            cluster,
            base,
            base_commit,
            base_tip: None,
            exit_on,
            fail_on_failed: false,
            summary,
            mirrors: Vec::new(),
            labels: None,
            exit_code: if differences > 0 {
                EXIT_DIFFERENCES
            } else {
                EXIT_OK
            },
            connectors,
        }
    }
}

impl DiffReport {
    /// `--fail-on failed`: a connector or task FAILED or UNASSIGNED is a difference too.
    pub fn fail_on_failed(&mut self) {
        self.fail_on_failed = true;
        if self.summary.failed + self.summary.unassigned > 0 {
            self.exit_code = EXIT_DIFFERENCES;
        }
    }

    /// Marks every connector less active than its file as possibly left so by the kco
    /// operation `holder` describes (it holds the cluster's lock: running, or killed and not
    /// recovered), with a note; one whose state alone changed (`state_changed`) becomes
    /// `state_drifted`, and the summary and exit code follow (one whose offsets drifted too
    /// stays `drifted`).
    pub fn state_left_by(&mut self, holder: &str) {
        let mut changed = false;
        for c in &mut self.connectors {
            if !c.less_active {
                continue;
            }
            // Not "outside kco", and not recorded by the next snapshot, which refuses while
            // the operation's journal is left.
            for n in &mut c.notes {
                if let Some(state) = n.strip_suffix(live::OUTSIDE_KCO) {
                    *n = state.to_string();
                }
            }
            c.notes.push(format!(
                "a kco operation holds the cluster's lock ({holder}): running, or killed and not recovered, it may have left it so: `kco recover`"
            ));
            if c.status == Status::StateChanged {
                c.status = Status::StateDrifted;
                changed = true;
            }
        }
        if changed {
            let mut again = DiffReport::new(
                self.mode,
                self.exit_on,
                self.cluster.take(),
                None,
                std::mem::take(&mut self.connectors),
            );
            again.base = self.base.take();
            again.base_commit = self.base_commit.take();
            again.base_tip = self.base_tip.take();
            again.labels = self.labels.take();
            again.mirrors = std::mem::take(&mut self.mirrors);
            if self.fail_on_failed {
                again.fail_on_failed();
            }
            *self = again;
        }
    }

    /// Whether a connector is less active than its file, with no kco operation to explain
    /// it yet ([`DiffReport::state_left_by`]).
    pub fn has_state_changes(&self) -> bool {
        self.connectors.iter().any(|c| c.less_active)
    }
}

/// Type and class notes, and the status they imply, for two sides of one connector.
pub(crate) fn identity_change(
    old_type: Option<ConnectorType>,
    new_type: Option<ConnectorType>,
    old_class: Option<&str>,
    new_class: Option<&str>,
    notes: &mut Vec<String>,
) -> Option<Status> {
    let mut status = None;
    if let (Some(a), Some(b)) = (old_type, new_type) {
        if a != b {
            notes.push(format!("type changed from {a} to {b}"));
            status = Some(Status::TypeChanged);
        }
    }
    if let (Some(a), Some(b)) = (old_class, new_class) {
        if a != b {
            notes.push(format!("class changed from {a} to {b}"));
            status = status.or(Some(Status::ClassChanged));
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(sides: impl Fn(PartitionKind) -> Sides) -> Vec<serde_json::Value> {
        [
            PartitionKind::Moved,
            PartitionKind::OnlyWanted,
            PartitionKind::OnlyActual,
        ]
        .into_iter()
        .map(|k| serde_json::to_value(sides(k)).unwrap()["kind"].clone())
        .collect()
    }

    #[test]
    fn one_partition_kind_two_vocabularies() {
        let live = kinds(|kind| Sides::Live {
            kind,
            file_offset: None,
            live_offset: None,
        });
        assert_eq!(live, ["moved", "only_live", "only_file"]);
        let base = kinds(|kind| Sides::Base {
            kind,
            base_offset: None,
            head_offset: None,
        });
        assert_eq!(base, ["moved", "added", "removed"]);
        let mut counts = PartitionCounts::default();
        for k in [
            PartitionKind::Unchanged,
            PartitionKind::OnlyWanted,
            PartitionKind::OnlyActual,
        ] {
            counts.count(k);
        }
        assert_eq!(
            (counts.unchanged, counts.only_new, counts.only_old),
            (1, 1, 1)
        );
    }
}
