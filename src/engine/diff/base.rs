//! One git revision against the working tree: what a pull request changes in the snapshot
//! files, with the risk of each partition's change: against the live offsets when a cluster
//! is given (`base_live`), else the revision's offset against the working tree's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::base_live::Labelled;
use super::{
    identity_change, ConnectorDiff, DiffReport, ExitOn, Labels, LabelsAgainst, Mode, Numbering,
    PartitionCounts, PartitionReport, Side, Sides, Status, YamlSides,
};
use crate::compare::compare_each_in;
use crate::engine::revision::Revision;
use crate::engine::risk::assess;
use crate::engine::store::{find_files, load_files};
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;
use crate::model::FileLines;

/// What the labels of a review compare the change's new offsets with.
pub enum Against<'a> {
    /// The live offsets of this cluster: each label says what applying the change would do.
    Live {
        client: &'a dyn crate::client::Service,
        cluster: String,
        /// How fresh observed offsets must be (Confluent Cloud).
        freshness: crate::engine::observed::Freshness,
        /// Where what deleted connectors left is read, for a file whose connector the
        /// cluster lacks.
        leftovers: super::Leftovers<'a>,
    },
    /// The files at the revision only; `why` says why not live.
    Files { why: String },
}

/// What to compare.
pub struct BaseInput<'a> {
    /// The revision (`origin/main`, a commit, a tag).
    pub rev: &'a str,
    /// Files and directories, absolute; they may no longer exist in the working tree.
    pub paths: &'a [PathBuf],
    /// The cluster whose directory is compared, when it was the default.
    pub cluster: Option<String>,
    /// What the risk labels compare with.
    pub against: Against<'a>,
    /// Compare with `rev`'s own files (two dots), not with its merge base with HEAD.
    pub tip: bool,
}

/// One side's files, keyed by (cluster, connector): repository-relative path and contents.
pub type BaseSide = BTreeMap<(String, String), (String, OffsetsFile)>;

/// Compares the snapshot files at `rev` with the working tree.
pub fn diff_base(input: BaseInput<'_>) -> Result<DiffReport> {
    let first = input
        .paths
        .first()
        .ok_or_else(|| Error::Usage("no path to compare".into()))?;
    let Reviewed {
        revision,
        given,
        tip,
    } = reviewed(first, input.rev, input.tip)?;
    let mut sides = load_sides(&revision, input.paths)?;
    let keys: BTreeSet<_> = sides.old.keys().chain(sides.new.keys()).cloned().collect();
    let mut tally = LiveTally::default();
    let connectors = keys
        .into_iter()
        .map(|k| compare_connector(&k, &mut sides, &revision.rev, &input.against, &mut tally))
        .collect();
    let labels = tally.settle(first_labels(&input.against));
    let mut report = DiffReport::new(
        Mode::Base,
        ExitOn::Any,
        input.cluster,
        Some((given, revision.commit.clone())),
        connectors,
    );
    report.base_tip = tip;
    report.labels = Some(labels);
    Ok(report)
}

/// The revision a review reads its old side from, as the user named it and as compared.
struct Reviewed {
    /// The revision read: the merge base when there is one, labelled by its commit.
    revision: Revision,
    /// The revision as given (`origin/main`).
    given: String,
    /// The commit of the revision as given, when the merge base was read instead.
    tip: Option<String>,
}

/// Resolves `rev` in the repository holding `first`. A pull request is reviewed as the forges
/// show it: against the merge base of HEAD and the target (three dots), so what landed on the
/// target since the branch forked (the nightlies) is not counted as the PR's; `tip` (two
/// dots) reads `rev`'s own files.
fn reviewed(first: &Path, rev: &str, tip: bool) -> Result<Reviewed> {
    let named = Revision::resolve(first, rev)?;
    let merge_base = match tip {
        true => None,
        false => {
            let head = named.repo.resolve("HEAD")?;
            named
                .repo
                .git()
                .merge_base(head, named.oid())
                .ok()
                .filter(|b| *b != named.oid())
        }
    };
    let tip = merge_base.map(|_| named.commit.clone());
    let given = named.rev.clone();
    // Files read at the merge base are labelled by its commit (`1a2b3c4d5e6f:path`).
    let revision = match merge_base {
        Some(b) => Revision {
            rev: b.to_string()[..12].to_string(),
            commit: b.to_string(),
            ..named
        },
        None => named,
    };
    Ok(Reviewed {
        revision,
        given,
        tip,
    })
}

/// Both sides of a review, loaded, with where each file's lines are (for the line numbers of
/// the unified diffs).
struct LoadedSides {
    old: BaseSide,
    new: BaseSide,
    old_lines: BTreeMap<(String, String), Arc<FileLines>>,
    new_lines: BTreeMap<(String, String), Arc<FileLines>>,
}

/// Loads `paths` at `revision` and in the working tree (the paths that still exist there),
/// the working tree's offsets checked against their connector's shape, as apply needs. Every
/// problem of either side fails the review, before anything is compared.
fn load_sides(revision: &Revision, paths: &[PathBuf]) -> Result<LoadedSides> {
    let (at_rev, mut problems) = revision.load(paths)?;
    let mut sides = LoadedSides {
        old: BaseSide::new(),
        new: BaseSide::new(),
        old_lines: BTreeMap::new(),
        new_lines: BTreeMap::new(),
    };
    for (repo_path, f) in at_rev {
        sides.old_lines.insert(key(&f.file), f.lines());
        sides.old.insert(key(&f.file), (repo_path, f.file));
    }
    let existing: Vec<PathBuf> = paths.iter().filter(|p| p.exists()).cloned().collect();
    if !existing.is_empty() {
        find_files(&existing).map_err(|p| Error::Files(vec![p]))?;
        let (loaded, p) = load_files(&existing);
        problems.extend(p);
        for f in loaded {
            let c = crate::shapes::check::check_file(
                crate::shapes::registry(),
                &f.file,
                &f.path,
                &f.text,
            );
            problems.extend(c.problems);
            let rel = revision.repo_path(&f.path)?;
            sides.new_lines.insert(key(&f.file), f.lines());
            sides.new.insert(key(&f.file), (rel, f.file));
        }
    }
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    Ok(sides)
}

/// The labels a review starts with: live when a cluster is given, else the files'.
fn first_labels(against: &Against<'_>) -> Labels {
    match against {
        Against::Live {
            cluster, client, ..
        } => Labels {
            against: LabelsAgainst::Live,
            cluster: Some(cluster.clone()),
            url: Some(client.endpoint()),
            read_at: Some(crate::clock::now_rfc3339()),
            why: None,
            files_only: Vec::new(),
        },
        Against::Files { why } => Labels {
            against: LabelsAgainst::Files,
            cluster: None,
            url: None,
            read_at: None,
            why: Some(why.clone()),
            files_only: Vec::new(),
        },
    }
}

/// Which connectors' labels compared live offsets, and which the files only (with why).
#[derive(Default)]
struct LiveTally {
    read: usize,
    unread: Vec<(String, String)>,
}

impl LiveTally {
    /// `labels` as the connectors had them: labels never claim live offsets kco did not read.
    /// None read, the review compared the files only; some, those that were not are named.
    fn settle(self, labels: Labels) -> Labels {
        let (LabelsAgainst::Live, Some((_, why))) = (&labels.against, self.unread.first()) else {
            return labels;
        };
        if self.read > 0 {
            return Labels {
                files_only: self.unread.into_iter().map(|(n, _)| n).collect(),
                ..labels
            };
        }
        let more = match self.unread.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Labels {
            against: LabelsAgainst::Files,
            why: Some(format!("{why}{more}")),
            read_at: None,
            ..labels
        }
    }
}

/// One connector of a review: its two sides compared, their lines numbered, and its labels
/// set against the live offsets when its file is of the cluster read (else a note says why
/// they compare the files only).
fn compare_connector(
    k: &(String, String),
    sides: &mut LoadedSides,
    rev: &str,
    against: &Against<'_>,
    tally: &mut LiveTally,
) -> ConnectorDiff {
    let mut c = classify(&k.1, sides.old.get(k), sides.new.get(k), rev);
    if let Some(y) = &mut c.yaml {
        number(&mut y.old, sides.old_lines.remove(k));
        number(&mut y.new, sides.new_lines.remove(k));
    }
    let Against::Live {
        client,
        cluster,
        freshness,
        leftovers,
    } = against
    else {
        return c;
    };
    if *cluster != k.0 {
        if !c.partitions.is_empty() {
            c.notes.push(format!(
                "labels compare the files only: the file is cluster `{}`'s, the review read cluster `{cluster}`",
                k.0
            ));
        }
        return c;
    }
    let file = sides.new.get(k).or(sides.old.get(k)).map(|(_, f)| f);
    let class = file.and_then(|f| f.metadata.connector_class.as_deref());
    let config = file.and_then(|f| f.config.as_ref());
    match super::base_live::label(
        &mut c, *client, cluster, class, freshness, leftovers, config,
    ) {
        Labelled::Live => tally.read += 1,
        Labelled::FilesOnly(why) => tally.unread.push((c.name.clone(), why)),
        Labelled::Nothing => {}
    }
    c
}

/// Numbers a side's lines by the lines of its file.
fn number(side: &mut Option<Side>, lines: Option<Arc<FileLines>>) {
    if let (Some(side), Some(lines)) = (side, lines) {
        side.numbering = Numbering::File(lines);
    }
}

fn key(f: &OffsetsFile) -> (String, String) {
    (f.metadata.cluster.clone(), f.metadata.name.clone())
}

/// One connector's file at revision `old_rev` (`old`) against a newer one (`new`: the
/// working tree's, or a later commit's).
pub(crate) fn classify(
    name: &str,
    old: Option<&(String, OffsetsFile)>,
    new: Option<&(String, OffsetsFile)>,
    old_rev: &str,
) -> ConnectorDiff {
    let meta = |s: Option<&(String, OffsetsFile)>| s.map(|(_, f)| f.metadata.clone());
    let (om, nm) = (meta(old), meta(new));
    let old_type = om.as_ref().map(|m| m.connector_type);
    let new_type = nm.as_ref().map(|m| m.connector_type);
    let old_class = om.as_ref().and_then(|m| m.connector_class.clone());
    let new_class = nm.as_ref().and_then(|m| m.connector_class.clone());
    let kind = new_type.or(old_type).expect("one side exists");
    let empty = Vec::new();
    let old_offsets = old.map(|(_, f)| &f.offsets).unwrap_or(&empty);
    let new_offsets = new.map(|(_, f)| &f.offsets).unwrap_or(&empty);

    let mut counts = PartitionCounts::default();
    let mut partitions = Vec::new();
    let shape = crate::shapes::registry().find(kind, new_class.as_deref().or(old_class.as_deref()));
    for d in compare_each_in(shape, new_offsets, old_offsets) {
        if !counts.count(d.kind) {
            continue;
        }
        // compare(wanted = head, actual = base): the movement is from base to head.
        let m = d.movement.clone();
        let risk = match (old, new) {
            (Some(_), Some(_)) => assess(kind, d.actual.as_ref(), d.wanted.as_ref(), m.as_ref()),
            _ => None,
        };
        let readable = super::readable_sides(
            shape,
            [("before", d.actual.as_ref()), ("after", d.wanted.as_ref())],
        );
        let sides = Sides::Base {
            kind: d.kind,
            base_offset: d.actual,
            head_offset: d.wanted,
        };
        partitions.push(PartitionReport {
            risk,
            readable,
            ..PartitionReport::new(d.partition, sides, m)
        });
    }
    let mut notes = Vec::new();
    let status = match (old, new) {
        (None, Some(_)) => {
            notes.push(format!(
                "connector file added: applying it sets {} of `{name}`",
                crate::text::count(new_offsets.len(), "partition")
            ));
            Status::Added
        }
        (Some(_), None) => {
            notes.push(format!(
                "connector file removed: kco no longer manages `{name}`'s offsets (the cluster keeps them)"
            ));
            Status::Removed
        }
        _ => identity_change(
            old_type,
            new_type,
            old_class.as_deref(),
            new_class.as_deref(),
            &mut notes,
        )
        .unwrap_or(if partitions.is_empty() {
            Status::Unchanged
        } else {
            Status::Changed
        }),
    };
    let old_path = old.map(|(p, _)| p.clone());
    let new_path = new.map(|(p, _)| p.clone());
    if let (Some(a), Some(b)) = (&old_path, &new_path) {
        if a != b {
            notes.push(format!("file moved from {a} to {b}"));
        }
    }
    // Both sides as YAML, only for a connector that changed.
    let yaml = (status != Status::Unchanged).then(|| YamlSides {
        old_label: match &old_path {
            Some(p) => format!("{old_rev}:{p}"),
            None => "/dev/null".into(),
        },
        old: old.map(|_| Side::new(old_type, old_class.as_deref(), old_offsets)),
        new_label: new_path.clone().unwrap_or_else(|| "/dev/null".into()),
        new: new.map(|_| Side::new(new_type, new_class.as_deref(), new_offsets)),
    });
    ConnectorDiff {
        translation: None,
        leftovers: None,
        name: name.to_string(),
        status,
        connector_type: Some(kind),
        state: None,
        file: new_path.or(old_path),
        notes,
        counts,
        partitions,
        yaml,
        less_active: false,
        health: Default::default(),
    }
}
