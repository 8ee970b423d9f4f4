//! The hunks of a unified diff: which lines of the edits of both sides are shown, with their
//! context, and how they are written (`@@ -a,b +c,d @@`, then ` `, `-` and `+` lines).

use super::edit::{Edit, EditSink, Range, CONTEXT};
use super::numbers::Numbers;
use crate::engine::diff::side::YamlSides;

/// A hunk: lines `os..oe` of the old side and `ns..ne` of the new (0-based lines of the YAML
/// shown), context included, and its `@@` line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Hunk {
    os: usize,
    oe: usize,
    ns: usize,
    ne: usize,
    head: String,
}

impl Hunk {
    /// The lines an edit's lines are placed among: an insertion by its new lines, anything
    /// else by its old ones.
    fn span(&self, edit: Edit) -> Range {
        match edit {
            Edit::Insert => self.ns..self.ne,
            _ => self.os..self.oe,
        }
    }
}

/// Hunks as `diff -u` groups changes: changes at most twice the context apart share a hunk,
/// which has up to `CONTEXT` lines of context before its first change and after its last.
#[derive(Default)]
pub(super) struct Hunks {
    done: Vec<Hunk>,
    open: Option<Hunk>,
    /// Where the last change ended on the old side.
    last: usize,
}

impl Hunks {
    /// Notes an edit (an equal run is no change).
    pub(super) fn edit(&mut self, edit: Edit, o: usize, n: usize, len: usize) {
        match edit {
            Edit::Equal => {}
            Edit::Delete => self.change(o, len, n, 0),
            Edit::Insert => self.change(o, 0, n, len),
        }
    }

    fn change(&mut self, o: usize, olen: usize, n: usize, nlen: usize) {
        let gap = o - self.last;
        match &mut self.open {
            Some(h) if gap <= 2 * CONTEXT => {
                h.oe = o + olen;
                h.ne = n + nlen;
            }
            _ => {
                self.close(CONTEXT);
                let before = gap.min(CONTEXT);
                self.open = Some(Hunk {
                    os: o - before,
                    oe: o + olen,
                    ns: n - before,
                    ne: n + nlen,
                    head: String::new(),
                });
            }
        }
        self.last = o + olen;
    }

    fn close(&mut self, after: usize) {
        if let Some(mut h) = self.open.take() {
            h.oe += after;
            h.ne += after;
            self.done.push(h);
        }
    }

    /// The hunks, given the old side's line count (the last one's context ends there), with
    /// their `@@` lines numbered as each side says.
    pub(super) fn finish(mut self, old_lines: usize, numbers: &[Numbers; 2]) -> Vec<Hunk> {
        let after = self
            .open
            .as_ref()
            .map_or(0, |h| (old_lines - h.oe).min(CONTEXT));
        self.close(after);
        for h in &mut self.done {
            h.head = format!(
                "@@ -{} +{} @@",
                numbers[0].range(h.os, h.oe),
                numbers[1].range(h.ns, h.ne)
            );
        }
        self.done
    }
}

/// Writes the labels, then each hunk's `@@` line and lines: `edits` hands every edit of
/// both sides, in order, to the sink it is given.
pub(super) fn write(
    hunks: &[Hunk],
    y: &YamlSides,
    edits: impl FnOnce(&mut EditSink<'_>),
    emit: &mut dyn FnMut(&str),
) {
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
    edits(&mut |edit, o, n, lines| writer.write(edit, o, n, lines, emit));
}

/// Writes the lines of the edits that fall in a hunk, each hunk after its `@@` line.
struct HunkWriter<'h> {
    hunks: &'h [Hunk],
    /// The hunk the next line belongs to, or follows.
    at: usize,
    /// Whether its `@@` line is written.
    started: bool,
    line: String,
}

impl HunkWriter<'_> {
    fn write(
        &mut self,
        edit: Edit,
        o: usize,
        n: usize,
        lines: &[&str],
        emit: &mut dyn FnMut(&str),
    ) {
        for (k, text) in lines.iter().enumerate() {
            let pos = if edit == Edit::Insert { n + k } else { o + k };
            while self.at < self.hunks.len() && pos >= self.hunks[self.at].span(edit).end {
                self.at += 1;
                self.started = false;
            }
            let Some(h) = self.hunks.get(self.at) else {
                return;
            };
            if pos < h.span(edit).start {
                continue;
            }
            if !self.started {
                emit(&h.head);
                self.started = true;
            }
            self.line.clear();
            self.line.push(match edit {
                Edit::Equal => ' ',
                Edit::Delete => '-',
                Edit::Insert => '+',
            });
            match text.strip_suffix('\n') {
                Some(text) => {
                    self.line.push_str(text);
                    emit(&self.line);
                }
                None => {
                    self.line.push_str(text);
                    emit(&self.line);
                    emit("\\ No newline at end of file");
                }
            }
        }
    }
}
