//! The hunks of a unified diff: which lines of the walk over both sides are shown, with their
//! context, and how they are written (`@@ -a,b +c,d @@`, then ` `, `-` and `+` lines).

use super::diff_unified::{Edit, Range, CONTEXT};

/// A hunk: lines `os..oe` of the old side and `ns..ne` of the new, context included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Hunk {
    os: usize,
    oe: usize,
    ns: usize,
    ne: usize,
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
    pub(super) fn change(&mut self, o: usize, olen: usize, n: usize, nlen: usize) {
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

    /// The hunks, given the old side's line count (the last one's context ends there).
    pub(super) fn finish(mut self, old_lines: usize) -> Vec<Hunk> {
        let after = self.open.map_or(0, |h| (old_lines - h.oe).min(CONTEXT));
        self.close(after);
        self.done
    }
}

/// Writes the lines of the edits that fall in a hunk, each hunk after its `@@` line.
pub(super) struct HunkWriter<'h> {
    pub(super) hunks: &'h [Hunk],
    /// The hunk the next line belongs to, or follows.
    pub(super) at: usize,
    /// Whether its `@@` line is written.
    pub(super) started: bool,
    pub(super) line: String,
}

impl HunkWriter<'_> {
    pub(super) fn write(
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
                emit(&format!(
                    "@@ -{} +{} @@",
                    range(h.os, h.oe),
                    range(h.ns, h.ne)
                ));
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

/// `start,len` (1-based), `start` alone for one line, as in `diff -u`.
pub(super) fn range(start: usize, end: usize) -> String {
    let len = end.saturating_sub(start);
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}
