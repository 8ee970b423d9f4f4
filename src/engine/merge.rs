//! `merge-file`: git's merge driver for snapshot files. Three versions of one connector's file
//! (the common ancestor, ours, theirs) are merged partition by partition, and the metadata and
//! config field by field, with the model's types; the result is re-sealed. Never prints, never
//! touches a cluster.
//!
//! What a side did to the file since the ancestor decides who wins where both sides changed
//! the same partition (docs/merge.md):
//! - an **observation**: `kco snapshot` rewrote the file, so its `metadata.capturedAt` is the
//!   new capture's time;
//! - a **deliberate change**: the offsets (or config) changed and `capturedAt` did not, as a
//!   hand edit re-sealed with `kco fmt` leaves it (fmt never touches the metadata).
//!
//! A deliberate change wins over an observation; of two observations the newer capture is
//! the file; two deliberate, different changes of one partition are a conflict, left in the
//! file between git's markers. A change moves a partition only in its own direction, as an
//! apply moves it (`engine::risk::passed`): a deliberate change that moves a partition forward
//! from the ancestor (a skip ahead; the revert of a rewind) whose target the other side's
//! observation has already passed leaves the observed offset, so that the merged file never
//! rewinds what the cluster had already passed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value};

use crate::model::file::{FileProblem, OffsetsFile, DEFAULT_SCHEMA_REF, SCHEMA_COMMENT};
use crate::model::{canonical_fields, Fields, OffsetEntry};

/// One of the two sides git merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Ours,
    Theirs,
}

impl Side {
    pub fn label(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Theirs => "theirs",
        }
    }
}

/// What a side did to the file since the common ancestor: the history's one definition
/// ([`crate::engine::history::version`]).
pub use crate::engine::history::version::Version as Change;

/// A partition both sides changed differently, where a deliberate change won over an
/// observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The partition (sink: `kafka_topic`, `kafka_partition`).
    pub partition: Fields,
    /// The side whose deliberate change was kept.
    pub kept: Side,
    /// The kept offset (`None`: the partition removed).
    pub kept_offset: Option<Fields>,
    /// The observed offset that was dropped (`None`: the snapshot no longer had it).
    pub observed: Option<Fields>,
    /// The dropped observation's `capturedAt`.
    pub observed_at: Option<String>,
    /// The change moved the partition forward from the ancestor and the observation is
    /// already past its target: the observed offset is the file's, not `kept_offset` (a
    /// change moves a partition only in its own direction).
    pub passed: bool,
}

/// Something both sides changed differently and deliberately: left between markers.
#[derive(Debug, Clone, PartialEq)]
pub enum Conflict {
    Partition(Fields),
    /// A `metadata` field, by its name in the file (`connectorClass`).
    Metadata(String),
    /// A `config` key.
    Config(String),
}

/// How the three versions were merged.
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    /// Partition by partition, field by field.
    Merged {
        ours: Change,
        theirs: Change,
        decisions: Vec<Decision>,
        conflicts: Vec<Conflict>,
    },
    /// Both sides are snapshots: the newer capture is the file (a snapshot is a whole
    /// picture of the connector at its time).
    NewerSnapshot {
        kept: Side,
        captured_at: Option<String>,
    },
    /// A version kco cannot read as a sealed snapshot file: merged line by line as git would,
    /// and why.
    AsText { why: FileProblem, conflicted: bool },
}

/// The merge's result: the text for OURS, and how it came about.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub text: String,
    pub how: How,
}

impl Merged {
    /// Whether the text still holds conflict markers (git must not take it as resolved).
    pub fn conflicted(&self) -> bool {
        match &self.how {
            How::Merged { conflicts, .. } => !conflicts.is_empty(),
            How::NewerSnapshot { .. } => false,
            How::AsText { conflicted, .. } => *conflicted,
        }
    }
}

/// Merges the texts of the ancestor, ours and theirs. `path` names the file in problems (git's
/// `%P` when given). Fails only when git's own line merge fails.
pub fn merge(path: &Path, base: &str, ours: &str, theirs: &str) -> Result<Merged, git2::Error> {
    // A version kco cannot take as a sealed file, with which version it is.
    let parsed = |version: &str, text: &str| -> Result<OffsetsFile, FileProblem> {
        let with_version = |mut p: FileProblem| {
            p.message = format!("{version}: {}", p.message);
            p
        };
        let file = OffsetsFile::parse(path, text).map_err(with_version)?;
        if !file.is_sealed() {
            return Err(with_version(FileProblem::new(
                crate::model::file::ProblemKind::ChecksumMismatch,
                path,
                None,
                "checksum mismatch: the offsets were edited and not re-sealed with `kco fmt`",
            )));
        }
        Ok(file)
    };
    let files = parsed("the common ancestor", base).and_then(|b| {
        Ok((
            b,
            parsed("our version", ours)?,
            parsed("their version", theirs)?,
        ))
    });
    let (b, o, t) = match files {
        Ok(files) => files,
        Err(why) => {
            let (text, conflicted) = merge_text(base, ours, theirs)?;
            return Ok(Merged {
                text,
                how: How::AsText { why, conflicted },
            });
        }
    };
    let schema_ref = schema_ref(ours);
    let (oc, tc) = (change(&b, &o), change(&b, &t));
    if oc == Change::Observation && tc == Change::Observation {
        let (ot, tt) = (&o.metadata.captured_at, &t.metadata.captured_at);
        if ot != tt {
            let (kept, mut file) = if newer(ot, tt) {
                (Side::Ours, o)
            } else {
                (Side::Theirs, t)
            };
            file.seal();
            return Ok(Merged {
                text: file.render(&schema_ref),
                how: How::NewerSnapshot {
                    kept,
                    captured_at: file.metadata.captured_at.clone(),
                },
            });
        }
    }
    let sides = Sides { oc, tc };
    let mut decisions = Vec::new();
    let mut conflicts = Vec::new();
    let meta = fields3(
        &to_map(&b.metadata),
        &to_map(&o.metadata),
        &to_map(&t.metadata),
        sides,
    );
    for k in &meta.conflicts {
        conflicts.push(Conflict::Metadata(k.clone()));
    }
    let config = config3(&b, &o, &t, sides);
    for k in &config.conflicts {
        conflicts.push(Conflict::Config(k.clone()));
    }
    let offsets = offsets3(&b, &o, &t, sides, &mut decisions);
    for p in &offsets.conflicts {
        conflicts.push(Conflict::Partition(p.clone()));
    }
    let build = |pick: Pick| -> OffsetsFile {
        let metadata = serde_json::from_value(Value::Object(meta.resolved(pick)))
            .expect("a merge of valid metadata is valid metadata");
        let config = config.present.then(|| {
            config
                .resolved(pick)
                .into_iter()
                .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
                .collect()
        });
        OffsetsFile::new(metadata, offsets.resolved(pick), config)
    };
    let text = if conflicts.is_empty() {
        build(Pick::Ours).render(&schema_ref)
    } else {
        // Three renderings that differ only where the sides conflict, merged by git's own
        // line merge: the markers stand around those lines alone. One checksum line for the
        // three (ours'), so that it is no conflict of its own: `kco fmt` re-seals whatever
        // the resolution keeps.
        let ours_file = build(Pick::Ours);
        let seal = ours_file.checksum.clone();
        let render = |mut f: OffsetsFile| {
            f.checksum = seal.clone();
            f.render(&schema_ref)
        };
        let (text, _) = merge_text(
            &render(build(Pick::Base)),
            &ours_file.render(&schema_ref),
            &render(build(Pick::Theirs)),
        )?;
        text
    };
    decisions.sort_by(|a, b| crate::model::compare_partitions(&a.partition, &b.partition));
    for d in &mut decisions {
        d.observed_at = match d.kept {
            Side::Ours => t.metadata.captured_at.clone(),
            Side::Theirs => o.metadata.captured_at.clone(),
        };
    }
    Ok(Merged {
        text,
        how: How::Merged {
            ours: oc,
            theirs: tc,
            decisions,
            conflicts,
        },
    })
}

/// What `side` did to the file since `base`.
pub fn change(base: &OffsetsFile, side: &OffsetsFile) -> Change {
    crate::engine::history::version::version(Some(base), side)
}

/// Whether capture time `a` is later than `b` (RFC 3339 UTC: text order is time order; a
/// time beats none).
fn newer(a: &Option<String>, b: &Option<String>) -> bool {
    a > b
}

/// The `$schema` reference of our version, as `kco fmt` keeps it.
fn schema_ref(text: &str) -> String {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix(SCHEMA_COMMENT))
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(DEFAULT_SCHEMA_REF)
        .to_string()
}

/// How each side changed the file: who wins where both changed one thing differently.
#[derive(Clone, Copy)]
struct Sides {
    oc: Change,
    tc: Change,
}

/// Which value a conflicting item takes in one rendering.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pick {
    Base,
    Ours,
    Theirs,
}

/// One item's three-way outcome.
enum Three<T> {
    Take(Option<T>),
    /// Both changed it differently; a deliberate change beat an observation.
    Won(Side, Option<T>),
    Conflict,
}

/// The three-way rule for one item (a partition, a metadata field, a config key), each
/// value absent (`None`) or present.
fn three<T: PartialEq + Clone>(
    b: Option<&T>,
    o: Option<&T>,
    t: Option<&T>,
    sides: Sides,
) -> Three<T> {
    if o == t || t == b {
        return Three::Take(o.cloned());
    }
    if o == b {
        return Three::Take(t.cloned());
    }
    match (sides.oc, sides.tc) {
        (Change::Change, Change::Observation) => Three::Won(Side::Ours, o.cloned()),
        (Change::Observation, Change::Change) => Three::Won(Side::Theirs, t.cloned()),
        _ => Three::Conflict,
    }
}

/// Items merged by key: the resolved ones, and the three values of each conflicting one.
struct Keyed<K: Ord, T> {
    resolved: BTreeMap<K, T>,
    conflicting: BTreeMap<K, [Option<T>; 3]>,
}

impl<K: Ord + Clone, T: Clone> Keyed<K, T> {
    fn merge(
        keys: BTreeSet<K>,
        get: impl Fn(K, usize) -> Option<T>,
        sides: Sides,
        mut won: impl FnMut(&K, Side, Option<T>) -> Option<T>,
    ) -> Self
    where
        T: PartialEq,
    {
        let mut out = Keyed {
            resolved: BTreeMap::new(),
            conflicting: BTreeMap::new(),
        };
        for k in keys {
            let [b, o, t] = [0, 1, 2].map(|i| get(k.clone(), i));
            match three(b.as_ref(), o.as_ref(), t.as_ref(), sides) {
                Three::Take(v) => {
                    if let Some(v) = v {
                        out.resolved.insert(k, v);
                    }
                }
                Three::Won(side, v) => {
                    if let Some(v) = won(&k, side, v) {
                        out.resolved.insert(k, v);
                    }
                }
                Three::Conflict => {
                    out.conflicting.insert(k, [b, o, t]);
                }
            }
        }
        out
    }

    /// The resolved items and, for each conflicting one, the value `pick` gives it.
    fn resolved(&self, pick: Pick) -> Vec<(K, T)> {
        let i = match pick {
            Pick::Base => 0,
            Pick::Ours => 1,
            Pick::Theirs => 2,
        };
        let mut all = self.resolved.clone();
        for (k, vs) in &self.conflicting {
            if let Some(v) = &vs[i] {
                all.insert(k.clone(), v.clone());
            }
        }
        all.into_iter().collect()
    }
}

/// A merged map of fields (metadata as JSON, config), with its conflicting keys.
struct Fields3 {
    keyed: Keyed<String, Value>,
    conflicts: Vec<String>,
    /// Whether the result has the map at all (config is optional).
    present: bool,
}

impl Fields3 {
    fn resolved(&self, pick: Pick) -> Map<String, Value> {
        self.keyed.resolved(pick).into_iter().collect()
    }
}

fn to_map<T: serde::Serialize>(v: &T) -> Map<String, Value> {
    match serde_json::to_value(v).expect("metadata serializes") {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn fields3(
    b: &Map<String, Value>,
    o: &Map<String, Value>,
    t: &Map<String, Value>,
    sides: Sides,
) -> Fields3 {
    let maps = [b, o, t];
    let keys = maps.iter().flat_map(|m| m.keys().cloned()).collect();
    let keyed = Keyed::merge(keys, |k, i| maps[i].get(&k).cloned(), sides, |_, _, v| v);
    Fields3 {
        conflicts: keyed.conflicting.keys().cloned().collect(),
        keyed,
        present: true,
    }
}

fn config3(b: &OffsetsFile, o: &OffsetsFile, t: &OffsetsFile, sides: Sides) -> Fields3 {
    let map = |f: &OffsetsFile| -> Map<String, Value> {
        f.config
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect()
    };
    let mut merged = fields3(&map(b), &map(o), &map(t), sides);
    let has = [b, o, t].map(|f| f.config.is_some());
    merged.present = match three(Some(&has[0]), Some(&has[1]), Some(&has[2]), sides) {
        Three::Take(v) | Three::Won(_, v) => v.unwrap_or(false),
        Three::Conflict => true,
    } || !merged.keyed.resolved.is_empty()
        || !merged.keyed.conflicting.is_empty();
    merged
}

/// The merged offsets, with the partitions in conflict.
struct Offsets3 {
    keyed: Keyed<String, OffsetEntry>,
    conflicts: Vec<Fields>,
}

impl Offsets3 {
    fn resolved(&self, pick: Pick) -> Vec<OffsetEntry> {
        self.keyed
            .resolved(pick)
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    }
}

fn offsets3(
    b: &OffsetsFile,
    o: &OffsetsFile,
    t: &OffsetsFile,
    sides: Sides,
    decisions: &mut Vec<Decision>,
) -> Offsets3 {
    let by_partition = |f: &OffsetsFile| -> BTreeMap<String, OffsetEntry> {
        f.offsets
            .iter()
            .map(|e| (canonical_fields(&e.partition), e.clone()))
            .collect()
    };
    let maps = [by_partition(b), by_partition(o), by_partition(t)];
    let keys = maps.iter().flat_map(|m| m.keys().cloned()).collect();
    let keyed = Keyed::merge(
        keys,
        |k, i| maps[i].get(&k).cloned(),
        sides,
        |k, side, kept| {
            let partition = maps
                .iter()
                .find_map(|m| m.get(k))
                .map(|e| e.partition.clone())
                .expect("a merged partition is in one of the versions");
            let observed = match side {
                Side::Ours => &maps[2],
                Side::Theirs => &maps[1],
            }
            .get(k);
            let passed = forward_and_passed(o, maps[0].get(k), kept.as_ref(), observed);
            decisions.push(Decision {
                partition,
                kept: side,
                kept_offset: kept.as_ref().map(|e| e.offset.clone()),
                observed: observed.map(|e| e.offset.clone()),
                observed_at: None,
                passed,
            });
            match passed {
                true => observed.cloned(),
                false => kept,
            }
        },
    );
    let conflicts = keyed
        .conflicting
        .values()
        .map(|vs| {
            vs.iter()
                .flatten()
                .next()
                .expect("a conflicting partition is in one of the versions")
                .partition
                .clone()
        })
        .collect();
    Offsets3 { keyed, conflicts }
}

/// Whether a deliberate change from `base` to `target` moved the partition forward and the
/// `observed` offset is already past that target (`engine::risk::passed`, the apply's rule),
/// in the order of the connector's class (`file`'s metadata).
fn forward_and_passed(
    file: &OffsetsFile,
    base: Option<&OffsetEntry>,
    target: Option<&OffsetEntry>,
    observed: Option<&OffsetEntry>,
) -> bool {
    let (Some(base), Some(target), Some(observed)) = (base, target, observed) else {
        return false;
    };
    let m = &file.metadata;
    let shape = crate::shapes::registry().find(m.connector_type, m.connector_class.as_deref());
    let p = &target.partition;
    let change = crate::compare::movement_in(shape, p, &base.offset, &target.offset);
    let observed_to_target =
        crate::compare::movement_in(shape, p, &observed.offset, &target.offset);
    crate::engine::risk::passed(change.as_ref(), observed_to_target.as_ref())
}

/// git's own line merge of three texts (libgit2): the text, and whether conflicts remain.
fn merge_text(base: &str, ours: &str, theirs: &str) -> Result<(String, bool), git2::Error> {
    fn input(content: &str) -> git2::MergeFileInput<'_> {
        let mut i = git2::MergeFileInput::new();
        i.content(content.as_bytes());
        i
    }
    let (b, o, t) = (input(base), input(ours), input(theirs));
    // merge_file, unlike libgit2's other entry points, does not initialise the library.
    drop(git2::Buf::new());
    let mut opts = git2::MergeFileOptions::new();
    opts.ancestor_label("base")
        .our_label(Side::Ours.label())
        .their_label(Side::Theirs.label());
    let r = git2::merge_file(&b, &o, &t, Some(&mut opts))?;
    Ok((
        String::from_utf8_lossy(r.content()).into_owned(),
        !r.is_automergeable(),
    ))
}

#[cfg(test)]
mod tests;
