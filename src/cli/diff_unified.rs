//! The unified YAML diff of one connector's two sides, in time linear in their size, and
//! without either side's text held whole.
//!
//! A plain line diff (Myers) costs O(lines x changes): for a sink whose 100,000 partitions all
//! moved that is minutes. But both sides list their partitions in the same canonical order,
//! one `- partition:` item each, so items are paired by walking both lists once; only a pair
//! that differs is diffed line by line, and it is a few lines long. The items are written as
//! YAML one at a time, in two walks: the first finds the hunks (the changes with their
//! context), the second writes them. Small sides keep the plain diff of their whole texts, so
//! their output is exactly what it always was.

use std::collections::HashMap;

use similar::{Algorithm, DiffOp, TextDiff};

#[cfg(test)]
use super::diff_hunks::range;
use super::diff_hunks::{Hunk, HunkWriter, Hunks};
use crate::engine::diff::{Side, YamlSides};
use crate::model::canonical_fields;

/// Up to this many lines (both sides together), the plain diff of the two texts is shown.
const PLAIN_DIFF_LINES: usize = 4000;
/// Up to this many entries (both sides together) the texts are written whole to see whether
/// they are short enough for the plain diff; an entry is at least two lines.
const SMALL_ENTRIES: usize = PLAIN_DIFF_LINES / 2;
/// Lines of context around each change.
pub(super) const CONTEXT: usize = 3;

/// `--- old_label` / `+++ new_label` and the hunks; empty when the sides are equal.
pub fn unified(y: &YamlSides) -> String {
    let mut out = String::new();
    unified_lines(y, &mut |l| {
        out.push_str(l);
        out.push('\n');
    });
    out
}

/// [`unified`] a line at a time (without its line break), so that a wide connector's diff
/// goes to its reader without being held whole.
pub fn unified_lines(y: &YamlSides, emit: &mut dyn FnMut(&str)) {
    prepare(y).write(y, emit);
}

/// Whether working out the diff of these sides is worth a thread of its own, beside the
/// writing of the partition lines.
pub fn is_wide(y: &YamlSides) -> bool {
    entries(&y.old) + entries(&y.new) > SMALL_ENTRIES
}

fn entries(s: &Option<Side>) -> usize {
    s.as_ref().map_or(0, |s| s.offsets.len())
}

/// A connector's unified diff, worked out and not yet written: the plain diff of small sides
/// as text, or the hunks of the walk over their items. For a wide connector this is half of
/// the work; it can be done on another thread while the partition lines are written.
pub enum Prepared<'a> {
    Plain(String),
    Walked(Walk<'a>, Vec<Hunk>),
}

/// Works out the diff of `y`.
pub fn prepare(y: &YamlSides) -> Prepared<'_> {
    if !is_wide(y) {
        let text = |s: &Option<Side>| s.as_ref().map(Side::yaml).unwrap_or_default();
        let (old, new) = (text(&y.old), text(&y.new));
        if old == new {
            return Prepared::Plain(String::new());
        }
        let lines = |t: &str| t.split_inclusive('\n').count();
        if lines(&old) + lines(&new) <= PLAIN_DIFF_LINES {
            let text = TextDiff::from_lines(&old, &new)
                .unified_diff()
                .context_radius(CONTEXT)
                .header(&y.old_label, &y.new_label)
                .to_string();
            return Prepared::Plain(text);
        }
    }
    let walk = Walk::new(y.old.as_ref(), y.new.as_ref());
    let hunks = walk.hunks();
    Prepared::Walked(walk, hunks)
}

impl Prepared<'_> {
    /// Writes the diff a line at a time (without line breaks).
    pub fn write(&self, y: &YamlSides, emit: &mut dyn FnMut(&str)) {
        match self {
            Prepared::Plain(text) => text.lines().for_each(&mut *emit),
            Prepared::Walked(walk, hunks) => walk.write(hunks, y, emit),
        }
    }
}

/// The walk over the items of both sides, whatever their size.
#[cfg(test)]
fn walked(y: &YamlSides, emit: &mut dyn FnMut(&str)) {
    let walk = Walk::new(y.old.as_ref(), y.new.as_ref());
    let hunks = walk.hunks();
    walk.write(&hunks, y, emit);
}

/// One item of a side: 0 is the header (type, class, `offsets:`), `k + 1` is entry `k`.
fn write_item(side: &Side, item: usize, out: &mut String) {
    match item {
        0 => side.header(out),
        k => side.entry(k - 1, out),
    }
}

fn item_count(side: Option<&Side>) -> usize {
    side.map_or(0, |s| s.offsets.len() + 1)
}

/// Where an edit goes: what it does, where it starts on each side (0-based lines), its lines.
type EditSink<'f> = dyn FnMut(Edit, usize, usize, &[&str]) + 'f;

/// How the walk takes the items of both sides.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Pair(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// What an edit does with its lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Edit {
    Equal,
    Delete,
    Insert,
}

pub struct Walk<'a> {
    old: Option<&'a Side>,
    new: Option<&'a Side>,
    steps: Vec<Step>,
}

impl<'a> Walk<'a> {
    /// Pairs the items: the headers with each other, and entries by partition, walking both
    /// sides in order; an entry not where the walk expects it is looked up (an index built
    /// the first time one is needed). Unpaired entries are deleted or inserted whole.
    fn new(old: Option<&'a Side>, new: Option<&'a Side>) -> Self {
        let (na, nb) = (item_count(old), item_count(new));
        let partition =
            |s: Option<&'a Side>, i: usize| &s.expect("counted").offsets[i - 1].partition;
        let mut steps = Vec::with_capacity(na.max(nb) + 1);
        let mut index: Option<HashMap<String, usize>> = None;
        let mut next = 0;
        for i in 0..na {
            let found = if i == 0 {
                (nb > 0).then_some(0)
            } else if (1..nb).contains(&next) && partition(new, next) == partition(old, i) {
                Some(next)
            } else {
                let index = index.get_or_insert_with(|| {
                    (1..nb)
                        .map(|j| (canonical_fields(partition(new, j)), j))
                        .collect()
                });
                index.get(&canonical_fields(partition(old, i))).copied()
            };
            match found {
                Some(j) if j >= next => {
                    steps.extend((next..j).map(Step::Insert));
                    steps.push(Step::Pair(i, j));
                    next = j + 1;
                }
                _ => steps.push(Step::Delete(i)),
            }
        }
        steps.extend((next..nb).map(Step::Insert));
        Walk { old, new, steps }
    }

    /// The hunks: where the changes are, with their context.
    fn hunks(&self) -> Vec<Hunk> {
        let mut hunks = Hunks::default();
        let (old_lines, _) = self.edits(&mut |edit, o, n, lines| match edit {
            Edit::Equal => {}
            Edit::Delete => hunks.change(o, lines.len(), n, 0),
            Edit::Insert => hunks.change(o, 0, n, lines.len()),
        });
        hunks.finish(old_lines)
    }

    /// The labels, then each hunk's `@@` line and lines.
    fn write(&self, hunks: &[Hunk], y: &YamlSides, emit: &mut dyn FnMut(&str)) {
        if hunks.is_empty() {
            return;
        }
        emit(&format!("--- {}", y.old_label));
        emit(&format!("+++ {}", y.new_label));
        let mut writer = HunkWriter {
            hunks,
            at: 0,
            started: false,
            line: String::new(),
        };
        self.edits(&mut |edit, o, n, lines| writer.write(edit, o, n, lines, emit));
    }

    /// Every edit in order, with where it starts on each side (0-based lines) and its lines;
    /// returns the line counts of both sides.
    fn edits(&self, f: &mut EditSink<'_>) -> (usize, usize) {
        let (mut a, mut b) = (String::new(), String::new());
        let (mut o, mut n) = (0, 0);
        for &step in &self.steps {
            a.clear();
            b.clear();
            match step {
                Step::Delete(i) => {
                    write_item(self.old.expect("counted"), i, &mut a);
                    let lines: Vec<&str> = a.split_inclusive('\n').collect();
                    f(Edit::Delete, o, n, &lines);
                    o += lines.len();
                }
                Step::Insert(j) => {
                    write_item(self.new.expect("counted"), j, &mut b);
                    let lines: Vec<&str> = b.split_inclusive('\n').collect();
                    f(Edit::Insert, o, n, &lines);
                    n += lines.len();
                }
                Step::Pair(i, j) => {
                    write_item(self.old.expect("counted"), i, &mut a);
                    write_item(self.new.expect("counted"), j, &mut b);
                    let la: Vec<&str> = a.split_inclusive('\n').collect();
                    let lb: Vec<&str> = b.split_inclusive('\n').collect();
                    if la == lb {
                        f(Edit::Equal, o, n, &la);
                    } else {
                        pair(&la, &lb, o, n, f);
                    }
                    o += la.len();
                    n += lb.len();
                }
            }
        }
        (o, n)
    }
}

/// Two paired items that differ, diffed line by line (a replacement is its deletion, then
/// its insertion). Most pairs differ in a run of lines that have nothing in common (a moved
/// offset): that is their diff, with no diff algorithm run; anything else goes to Myers.
fn pair(a: &[&str], b: &[&str], o: usize, n: usize, f: &mut EditSink<'_>) {
    if let Some(ops) = disjoint_middle(a, b) {
        for (edit, or, nr) in ops {
            let lines = if edit == Edit::Insert {
                &b[nr.clone()]
            } else {
                &a[or.clone()]
            };
            if !lines.is_empty() {
                f(edit, o + or.start, n + nr.start, lines);
            }
        }
        return;
    }
    for op in similar::capture_diff_slices(Algorithm::Myers, a, b) {
        let (or, nr) = (op.old_range(), op.new_range());
        match op {
            DiffOp::Equal { .. } => f(Edit::Equal, o + or.start, n + nr.start, &a[or]),
            _ => {
                if !or.is_empty() {
                    f(Edit::Delete, o + or.start, n + nr.start, &a[or.clone()]);
                }
                if !nr.is_empty() {
                    f(Edit::Insert, o + or.end, n + nr.start, &b[nr]);
                }
            }
        }
    }
}

pub(super) type Range = std::ops::Range<usize>;

/// The diff of two texts that differ only in a middle run whose lines appear nowhere on the
/// other side: the common prefix, the old middle deleted, the new one inserted, the common
/// suffix. `None` otherwise (a line could then be matched in more than one way, and the
/// choice is Myers's).
fn disjoint_middle(a: &[&str], b: &[&str]) -> Option<[(Edit, Range, Range); 4]> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (pre..a.len() - suf, pre..b.len() - suf);
    if a[ma.clone()].iter().any(|x| b.contains(x)) || b[mb.clone()].iter().any(|y| a.contains(y)) {
        return None;
    }
    Some([
        (Edit::Equal, 0..pre, 0..pre),
        (Edit::Delete, ma.clone(), mb.start..mb.start),
        (Edit::Insert, ma.end..ma.end, mb.clone()),
        (Edit::Equal, ma.end..a.len(), mb.end..b.len()),
    ])
}

#[cfg(test)]
#[path = "diff_unified_oracle.rs"]
mod oracle;

#[cfg(test)]
#[path = "diff_unified_tests.rs"]
mod tests;
