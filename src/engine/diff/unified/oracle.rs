//! The text-based pairing kco shipped before the walk over items: lines of two whole texts,
//! items found by their `- ` lines, and paired by their partition lines. The walk must give
//! the same output.

use std::collections::HashMap;

use similar::{group_diff_ops, Algorithm, DiffOp};

use super::edit::CONTEXT;
use super::numbers::Numbers;

/// The unified diff of two texts, as the text-based pairing made it.
pub(super) fn paired(old_label: &str, old: &str, new_label: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let (a, b) = (lines(old), lines(new));
    render(old_label, new_label, &a, &b, paired_ops(&a, &b))
}

fn lines(text: &str) -> Vec<&str> {
    // Counted first: half a million lines would otherwise end in a vector twice their size.
    let mut v = Vec::with_capacity(text.bytes().filter(|&b| b == b'\n').count() + 1);
    v.extend(text.split_inclusive('\n'));
    v
}

/// Where items start: every line beginning with `- ` (a top-level sequence item); the lines
/// before the first item form the header.
fn items(lines: &[&str]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend((1..lines.len()).filter(|&i| lines[i].starts_with("- ")));
    starts.push(lines.len());
    starts.dedup();
    starts
}

/// What pairs two items: their lines up to the `  offset:` line (the partition).
fn key<'a, 'b>(block: &'b [&'a str]) -> &'b [&'a str] {
    let end = block
        .iter()
        .position(|l| l.starts_with("  offset:"))
        .unwrap_or(block.len());
    &block[..end]
}

/// Edit operations that turn `a` into `b`: items paired in order by partition, the unpaired
/// ones deleted or inserted whole, and each differing pair diffed line by line.
fn paired_ops(a: &[&str], b: &[&str]) -> Vec<DiffOp> {
    let (sa, sb) = (items(a), items(b));
    let blocks = |starts: &[usize]| -> Vec<(usize, usize)> {
        starts.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (ba, bb) = (blocks(&sa), blocks(&sb));
    // Built the first time an item is not where the walk expects it: both sides are in the
    // same canonical order, so most items pair with the next one on the other side.
    let mut new_index: Option<HashMap<&[&str], usize>> = None;
    let mut ops = Ops::default();
    let mut next = 0;
    for (i, &(s, e)) in ba.iter().enumerate() {
        let item = key(&a[s..e]);
        // The header (block 0 on both sides) is always paired with the other header.
        let found = if i == 0 && !bb.is_empty() {
            Some(0)
        } else if bb
            .get(next)
            .is_some_and(|&(ns, ne)| key(&b[ns..ne]) == item)
        {
            Some(next)
        } else {
            let index = new_index.get_or_insert_with(|| {
                bb.iter()
                    .enumerate()
                    .map(|(j, &(ns, ne))| (key(&b[ns..ne]), j))
                    .collect()
            });
            index.get(item).copied()
        };
        match found {
            Some(j) if j >= next => {
                for &(ns, ne) in &bb[next..j] {
                    ops.insert(s, ns, ne - ns);
                }
                let (ns, ne) = bb[j];
                ops.pair(a, b, (s, e), (ns, ne));
                next = j + 1;
            }
            _ => ops.delete(s, e - s, bb.get(next).map_or(b.len(), |&(ns, _)| ns)),
        }
    }
    for &(ns, ne) in &bb[next.min(bb.len())..] {
        ops.insert(a.len(), ns, ne - ns);
    }
    ops.0
}

/// A list of edit operations, with neighbours of the same kind merged.
#[derive(Default)]
struct Ops(Vec<DiffOp>);

impl Ops {
    fn push(&mut self, op: DiffOp) {
        let merged = match (self.0.last_mut(), op) {
            (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) => {
                *len += more;
                true
            }
            (Some(DiffOp::Delete { old_len, .. }), DiffOp::Delete { old_len: more, .. }) => {
                *old_len += more;
                true
            }
            (Some(DiffOp::Insert { new_len, .. }), DiffOp::Insert { new_len: more, .. }) => {
                *new_len += more;
                true
            }
            _ => false,
        };
        if !merged {
            self.0.push(op);
        }
    }

    fn delete(&mut self, old_index: usize, old_len: usize, new_index: usize) {
        if old_len > 0 {
            self.push(DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            });
        }
    }

    fn insert(&mut self, old_index: usize, new_index: usize, new_len: usize) {
        if new_len > 0 {
            self.push(DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            });
        }
    }

    /// Two paired blocks: equal as a whole, or diffed line by line.
    fn pair(&mut self, a: &[&str], b: &[&str], (s, e): (usize, usize), (ns, ne): (usize, usize)) {
        if a[s..e] == b[ns..ne] {
            self.push(DiffOp::Equal {
                old_index: s,
                new_index: ns,
                len: e - s,
            });
            return;
        }
        for op in similar::capture_diff_slices(Algorithm::Myers, &a[s..e], &b[ns..ne]) {
            let (o, n) = (op.old_range(), op.new_range());
            let (o, n) = (o.start + s..o.end + s, n.start + ns..n.end + ns);
            match op {
                DiffOp::Equal { .. } => self.push(DiffOp::Equal {
                    old_index: o.start,
                    new_index: n.start,
                    len: o.len(),
                }),
                _ => {
                    self.delete(o.start, o.len(), n.start);
                    self.insert(o.end, n.start, n.len());
                }
            }
        }
    }
}

/// Formats hunks as `similar`'s unified diff does.
fn render(old_label: &str, new_label: &str, a: &[&str], b: &[&str], ops: Vec<DiffOp>) -> String {
    let mut out = String::new();
    render_lines(old_label, new_label, a, b, ops, &mut |l| {
        out.push_str(l);
        out.push('\n');
    });
    out
}

/// The hunks a line at a time, without line breaks.
fn render_lines(
    old_label: &str,
    new_label: &str,
    a: &[&str],
    b: &[&str],
    ops: Vec<DiffOp>,
    emit: &mut dyn FnMut(&str),
) {
    let groups = group_diff_ops(ops, CONTEXT);
    if groups.iter().all(Vec::is_empty) {
        return;
    }
    emit(&format!("--- {old_label}"));
    emit(&format!("+++ {new_label}"));
    let mut line = String::new();
    let own = Numbers::default();
    for group in groups.iter().filter(|g| !g.is_empty()) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        emit(&format!(
            "@@ -{} +{} @@",
            own.range(first.old_range().start, last.old_range().end),
            own.range(first.new_range().start, last.new_range().end)
        ));
        for op in group {
            let (tag, lines) = match op {
                DiffOp::Equal { .. } => (' ', &a[op.old_range()]),
                DiffOp::Delete { .. } => ('-', &a[op.old_range()]),
                DiffOp::Insert { .. } => ('+', &b[op.new_range()]),
                DiffOp::Replace { .. } => unreachable!("pairs are split into delete and insert"),
            };
            for text in lines {
                line.clear();
                line.push(tag);
                match text.strip_suffix('\n') {
                    Some(text) => {
                        line.push_str(text);
                        emit(&line);
                    }
                    None => {
                        line.push_str(text);
                        emit(&line);
                        emit("\\ No newline at end of file");
                    }
                }
            }
        }
    }
}
