//! One git revision against the working tree: what a pull request changes in the snapshot
//! files, with the risk of each partition's change: against the live offsets when a cluster
//! is given (`base_live`), else the revision's offset against the working tree's.

use std::collections::BTreeMap;
use std::path::PathBuf;
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
    let named = Revision::resolve(first, input.rev)?;
    // A pull request is reviewed as the forges show it: against the merge base of HEAD and
    // the target (three dots), so what landed on the target since the branch forked (the
    // nightlies) is not counted as the PR's.
    let merge_base = match input.tip {
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

    let (at_rev, mut problems) = revision.load(input.paths)?;
    let mut old = BaseSide::new();
    // Where each file's lines are, for the line numbers of the unified diffs.
    let (mut old_lines, mut new_lines) = (BTreeMap::new(), BTreeMap::new());
    for (repo_path, f) in at_rev {
        old_lines.insert(key(&f.file), f.lines());
        old.insert(key(&f.file), (repo_path, f.file));
    }

    let existing: Vec<PathBuf> = input.paths.iter().filter(|p| p.exists()).cloned().collect();
    let mut new = BaseSide::new();
    if !existing.is_empty() {
        find_files(&existing).map_err(|p| Error::Files(vec![p]))?;
        let (loaded, p) = load_files(&existing);
        problems.extend(p);
        for f in loaded {
            // The working tree's offsets must fit their connector's shape, as apply needs.
            let c = crate::shapes::check::check_file(
                crate::shapes::registry(),
                &f.file,
                &f.path,
                &f.text,
            );
            problems.extend(c.problems);
            let rel = revision.repo_path(&f.path)?;
            new_lines.insert(key(&f.file), f.lines());
            new.insert(key(&f.file), (rel, f.file));
        }
    }
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }

    let keys: std::collections::BTreeSet<_> = old.keys().chain(new.keys()).cloned().collect();
    let labels = match &input.against {
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
    };
    let mut labels = labels;
    let (mut read, mut unread) = (0usize, Vec::<(String, String)>::new());
    let connectors = keys
        .into_iter()
        .map(|k| {
            let mut c = classify(&k.1, old.get(&k), new.get(&k), &revision.rev);
            if let Some(y) = &mut c.yaml {
                number(&mut y.old, old_lines.remove(&k));
                number(&mut y.new, new_lines.remove(&k));
            }
            if let Against::Live {
                client,
                cluster,
                freshness,
                leftovers,
            } = &input.against
            {
                if *cluster == k.0 {
                    let file = new.get(&k).or(old.get(&k)).map(|(_, f)| f);
                    let class = file.and_then(|f| f.metadata.connector_class.as_deref());
                    let config = file.and_then(|f| f.config.as_ref());
                    let labelled = super::base_live::label(
                        &mut c, *client, cluster, class, freshness, leftovers, config,
                    );
                    match labelled {
                        Labelled::Live => read += 1,
                        Labelled::FilesOnly(why) => unread.push((c.name.clone(), why)),
                        Labelled::Nothing => {}
                    }
                } else if !c.partitions.is_empty() {
                    c.notes.push(format!(
                        "labels compare the files only: the file is cluster `{}`'s, the review read cluster `{cluster}`",
                        k.0
                    ));
                }
            }
            c
        })
        .collect();
    // Labels never claim live offsets kco did not read: none read, the review compared the
    // files only; some, those are named.
    if let (LabelsAgainst::Live, Some((_, why))) = (&labels.against, unread.first()) {
        if read == 0 {
            labels = Labels {
                against: LabelsAgainst::Files,
                why: Some(format!(
                    "{why}{}",
                    match unread.len() {
                        1 => String::new(),
                        n => format!(" (and {} more)", n - 1),
                    }
                )),
                read_at: None,
                ..labels
            };
        } else {
            labels.files_only = unread.into_iter().map(|(n, _)| n).collect();
        }
    }
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
