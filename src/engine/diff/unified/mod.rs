//! The unified diff of one connector's two sides (kco's YAML of their type, class and
//! offsets), in time linear in their size, and without either side's text held whole.
//!
//! A plain line diff (Myers) costs O(lines x changes): for a sink whose 100,000 partitions all
//! moved that is minutes. Wide sides are walked item by item instead ([`walk`]): the first walk
//! finds the hunks (the changes with their context), the second writes them. Small sides keep
//! the plain diff of their whole texts. Either way, a hunk's `@@` line numbers each side's
//! lines as the side says ([`crate::engine::diff::Numbering`]): a file's side by the lines of
//! the file, so that a hunk starts where `git diff` says it does.
//!
//! Nothing here prints: the CLI writes the lines it is handed (in colour, in chunks).

mod edit;
mod hunks;
mod numbers;
mod walk;

use edit::{myers, Edit};
use hunks::{Hunk, Hunks};
use numbers::Numbers;
use walk::Walk;

use crate::engine::diff::side::{Side, YamlSides};

/// Up to this many lines (both sides together), the plain diff of the two texts is shown.
const PLAIN_DIFF_LINES: usize = 4000;
/// Up to this many entries (both sides together) the texts are written whole to see whether
/// they are short enough for the plain diff; an entry is at least two lines.
const SMALL_ENTRIES: usize = PLAIN_DIFF_LINES / 2;

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
pub struct Prepared<'a>(Worked<'a>);

enum Worked<'a> {
    Plain(String),
    Walked(Walk<'a>, Vec<Hunk>),
}

/// Works out the diff of `y`.
pub fn prepare(y: &YamlSides) -> Prepared<'_> {
    if !is_wide(y) {
        let text = |s: &Option<Side>| s.as_ref().map(Side::yaml).unwrap_or_default();
        let (old, new) = (text(&y.old), text(&y.new));
        if old == new {
            return Prepared(Worked::Plain(String::new()));
        }
        let (a, b) = (lines(&old), lines(&new));
        if a.len() + b.len() <= PLAIN_DIFF_LINES {
            return Prepared(Worked::Plain(plain(y, &a, &b)));
        }
    }
    let walk = Walk::new(y.old.as_ref(), y.new.as_ref());
    let hunks = walk.hunks();
    Prepared(Worked::Walked(walk, hunks))
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The plain line diff (Myers) of two whole texts.
fn plain(y: &YamlSides, a: &[&str], b: &[&str]) -> String {
    let mut edits = Vec::new();
    myers(a, b, 0, 0, &mut |edit, o, n, lines| {
        edits.push((edit, o, n, lines.len()))
    });
    let numbers = [Numbers::of(y.old.as_ref()), Numbers::of(y.new.as_ref())];
    let mut hunks = Hunks::default();
    for &(edit, o, n, len) in &edits {
        hunks.edit(edit, o, n, len);
    }
    let hunks = hunks.finish(a.len(), &numbers);
    let mut out = String::new();
    let replay = |sink: &mut edit::EditSink<'_>| {
        for &(edit, o, n, len) in &edits {
            let lines = match edit {
                Edit::Insert => &b[n..n + len],
                _ => &a[o..o + len],
            };
            sink(edit, o, n, lines);
        }
    };
    hunks::write(&hunks, y, replay, &mut |l| {
        out.push_str(l);
        out.push('\n');
    });
    out
}

impl Prepared<'_> {
    /// Writes the diff a line at a time (without line breaks).
    pub fn write(&self, y: &YamlSides, emit: &mut dyn FnMut(&str)) {
        match &self.0 {
            Worked::Plain(text) => text.lines().for_each(&mut *emit),
            Worked::Walked(walk, hunks) => walk.write(hunks, y, emit),
        }
    }
}

#[cfg(test)]
mod oracle;

#[cfg(test)]
mod tests;
