//! The line numbers of a hunk's `@@` line: each line shown, numbered as its side says
//! ([`Numbering`]): by its line in the file the side was read from, where it would be in that
//! file, or its own count.

use crate::engine::diff::side::{Numbering, Side};
use crate::model::HeaderLines;

/// One side's numbers, noted item by item as a walk meets them: runs of lines shown whose
/// numbers follow each other (a file laid out as kco writes it is one run after its header).
#[derive(Debug, Default)]
pub(super) struct Numbers {
    runs: Vec<Run>,
}

/// Lines `view..view + len` shown are numbered from `line`; a run of a file's entry that is
/// not one line per line shown (a hand-written layout) gives its last line to the rest.
#[derive(Debug, Clone, Copy)]
struct Run {
    view: usize,
    line: usize,
    len: usize,
    exact: bool,
}

impl Numbers {
    /// The numbers of a whole side, its items written to count their lines (a small side).
    pub(super) fn of(side: Option<&Side>) -> Numbers {
        let mut numbers = Numbers::default();
        if let Some(side) = side {
            let (mut text, mut at) = (String::new(), 0);
            for k in 0..side.items() {
                text.clear();
                side.item(k, &mut text);
                let len = text.split_inclusive('\n').count();
                numbers.item(side, k, at, len);
                at += len;
            }
        }
        numbers
    }

    /// Notes that item `k` of `side` (0 the header, `k + 1` entry `k`) is shown as lines
    /// `at..at + len`.
    pub(super) fn item(&mut self, side: &Side, k: usize, at: usize, len: usize) {
        let header = |h: &HeaderLines| {
            let mut keys = Vec::with_capacity(3);
            if side.class.is_some() {
                keys.push([h.class, h.kind, h.offsets]);
            }
            if side.connector_type.is_some() {
                keys.push([h.kind, h.class, h.offsets]);
            }
            keys.push([h.offsets, h.kind, h.class]);
            keys
        };
        let header_lines = |h: &HeaderLines, numbers: &mut Numbers| {
            for (i, key) in header(h).into_iter().enumerate() {
                let line = key.into_iter().flatten().next().unwrap_or(at + i + 1);
                numbers.push(at + i, line, 1, true);
            }
        };
        match (&side.numbering, k) {
            (Numbering::Own, _) => self.push(at, at + 1, len, true),
            (Numbering::File(f), 0) => header_lines(&f.header, self),
            (Numbering::Into(h), 0) => header_lines(h, self),
            (Numbering::File(f), k) => match f.entries.get(k - 1) {
                Some(&(line, real)) => {
                    let real = real as usize;
                    self.push(at, line as usize, real.min(len), real == len)
                }
                None => self.push(at, f.header.offsets.unwrap_or(1), 1, false),
            },
            (Numbering::Into(h), _) => {
                // The entries follow `offsets:`, the header's last line.
                let offsets = h.offsets.or(h.kind).or(h.class);
                let header_len = usize::from(side.class.is_some())
                    + usize::from(side.connector_type.is_some())
                    + 1;
                let first = offsets.map_or(header_len + 1, |l| l + 1);
                self.push(at, first + at - header_len, len, true)
            }
        }
    }

    fn push(&mut self, view: usize, line: usize, len: usize, exact: bool) {
        if let Some(last) = self.runs.last_mut() {
            if last.exact && exact && last.view + last.len == view && last.line + last.len == line {
                last.len += len;
                return;
            }
        }
        self.runs.push(Run {
            view,
            line,
            len,
            exact,
        });
    }

    /// The number of line `v` shown (0-based).
    fn line(&self, v: usize) -> usize {
        match self.runs.partition_point(|r| r.view <= v) {
            0 => v + 1,
            i => {
                let r = self.runs[i - 1];
                r.line + (v - r.view).min(r.len.saturating_sub(1))
            }
        }
    }

    /// Lines `start..end` shown as `diff -u` writes a range: `first,count` (`first` alone
    /// for one line); an empty range is written `line,0` with the line before it.
    pub(super) fn range(&self, start: usize, end: usize) -> String {
        match end.saturating_sub(start) {
            1 => format!("{}", self.line(start)),
            0 if start == 0 => "0,0".into(),
            0 => format!("{},0", self.line(start - 1)),
            len => format!("{},{len}", self.line(start)),
        }
    }
}
