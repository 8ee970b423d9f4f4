//! The walk over the items of both sides (the header, then one item per partition), in time
//! linear in their size: both sides list their partitions in the same canonical order, so
//! items are paired by walking both lists once; only a pair that differs is diffed line by
//! line, and it is a few lines long. Items are written as YAML one at a time, never a side
//! whole.

use std::collections::HashMap;

use super::edit::{myers, Edit, EditSink, Range};
use super::hunks::{self, Hunk, Hunks};
use super::numbers::Numbers;
use crate::engine::diff::side::{Side, YamlSides};
use crate::model::canonical_fields;

/// How the walk takes the items of both sides.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Pair(usize, usize),
    Delete(usize),
    Insert(usize),
}

pub(super) struct Walk<'a> {
    old: Option<&'a Side>,
    new: Option<&'a Side>,
    steps: Vec<Step>,
}

fn item_count(side: Option<&Side>) -> usize {
    side.map_or(0, Side::items)
}

impl<'a> Walk<'a> {
    /// Pairs the items: the headers with each other, and entries by partition, walking both
    /// sides in order; an entry not where the walk expects it is looked up (an index built
    /// the first time one is needed). Unpaired entries are deleted or inserted whole.
    pub(super) fn new(old: Option<&'a Side>, new: Option<&'a Side>) -> Self {
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

    /// The hunks: where the changes are, with their context, numbered as each side says.
    pub(super) fn hunks(&self) -> Vec<Hunk> {
        let mut hunks = Hunks::default();
        let mut numbers = [Numbers::default(), Numbers::default()];
        let (old_lines, _) = self.edits(
            &mut |edit, o, n, lines| hunks.edit(edit, o, n, lines.len()),
            Some(&mut numbers),
        );
        hunks.finish(old_lines, &numbers)
    }

    /// The labels, then each hunk's `@@` line and lines.
    pub(super) fn write(&self, hunks: &[Hunk], y: &YamlSides, emit: &mut dyn FnMut(&str)) {
        hunks::write(
            hunks,
            y,
            |sink| {
                self.edits(sink, None);
            },
            emit,
        );
    }

    /// Every edit in order, with where it starts on each side (0-based lines) and its lines;
    /// notes in `numbers` where each item is; returns the line counts of both sides.
    fn edits(
        &self,
        f: &mut EditSink<'_>,
        mut numbers: Option<&mut [Numbers; 2]>,
    ) -> (usize, usize) {
        let (mut a, mut b) = (String::new(), String::new());
        let (mut o, mut n) = (0, 0);
        for &step in &self.steps {
            a.clear();
            b.clear();
            let (i, j) = match step {
                Step::Delete(i) => (Some(i), None),
                Step::Insert(j) => (None, Some(j)),
                Step::Pair(i, j) => (Some(i), Some(j)),
            };
            let la = self.lines(self.old, i, &mut a);
            let lb = self.lines(self.new, j, &mut b);
            if let Some([on, nn]) = numbers.as_deref_mut() {
                if let (Some(side), Some(i)) = (self.old, i) {
                    on.item(side, i, o, la.len());
                }
                if let (Some(side), Some(j)) = (self.new, j) {
                    nn.item(side, j, n, lb.len());
                }
            }
            match step {
                Step::Delete(_) => f(Edit::Delete, o, n, &la),
                Step::Insert(_) => f(Edit::Insert, o, n, &lb),
                Step::Pair(..) if la == lb => f(Edit::Equal, o, n, &la),
                Step::Pair(..) => pair(&la, &lb, o, n, f),
            }
            o += la.len();
            n += lb.len();
        }
        (o, n)
    }

    /// The lines of item `k` of `side`, written into `buf`; none without an item.
    fn lines<'b>(
        &self,
        side: Option<&Side>,
        k: Option<usize>,
        buf: &'b mut String,
    ) -> Vec<&'b str> {
        match (side, k) {
            (Some(side), Some(k)) => {
                side.item(k, buf);
                buf.split_inclusive('\n').collect()
            }
            _ => Vec::new(),
        }
    }
}

/// Two paired items that differ, diffed line by line (a replacement is its deletion, then
/// its insertion). Most pairs differ in a run of lines that have nothing in common (a moved
/// offset): that is their diff, with no diff algorithm run; anything else goes to Myers.
fn pair(a: &[&str], b: &[&str], o: usize, n: usize, f: &mut EditSink<'_>) {
    let Some(ops) = disjoint_middle(a, b) else {
        return myers(a, b, o, n, f);
    };
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
}

/// The diff of two texts that differ only in a middle run whose lines appear nowhere on the
/// other side: the common prefix, the old middle deleted, the new one inserted, the common
/// suffix. `None` otherwise (a line could then be matched in more than one way, and the
/// choice is Myers's).
pub(super) fn disjoint_middle(a: &[&str], b: &[&str]) -> Option<[(Edit, Range, Range); 4]> {
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

/// The walk over the items of both sides, whatever their size.
#[cfg(test)]
pub(super) fn walked(y: &YamlSides, emit: &mut dyn FnMut(&str)) {
    let walk = Walk::new(y.old.as_ref(), y.new.as_ref());
    let hunks = walk.hunks();
    walk.write(&hunks, y, emit);
}
