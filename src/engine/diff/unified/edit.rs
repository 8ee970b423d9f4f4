//! What a unified diff is made of: edits, each a run of lines kept, deleted or inserted, and
//! the context shown around them.

use similar::{Algorithm, DiffOp};

/// Lines of context around each change.
pub(super) const CONTEXT: usize = 3;

/// What an edit does with its lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Edit {
    Equal,
    Delete,
    Insert,
}

pub(super) type Range = std::ops::Range<usize>;

/// Where an edit goes: what it does, where it starts on each side (0-based lines of the YAML
/// shown), its lines.
pub(super) type EditSink<'f> = dyn FnMut(Edit, usize, usize, &[&str]) + 'f;

/// Myers's line diff of `a` and `b`, which start at lines `o` and `n`, as edits (a
/// replacement is its deletion, then its insertion).
pub(super) fn myers(a: &[&str], b: &[&str], o: usize, n: usize, f: &mut EditSink<'_>) {
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
