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
/// replacement is its deletion, then its insertion). Where each edit starts is counted from
/// the lengths of those before it: `similar` can give an insertion that follows an equal
/// line the old index of that line.
pub(super) fn myers(a: &[&str], b: &[&str], o: usize, n: usize, f: &mut EditSink<'_>) {
    let (mut i, mut j) = (0, 0);
    for op in similar::capture_diff_slices(Algorithm::Myers, a, b) {
        let (old_len, new_len) = (op.old_range().len(), op.new_range().len());
        if let DiffOp::Equal { .. } = op {
            f(Edit::Equal, o + i, n + j, &a[i..i + old_len]);
        } else {
            if old_len > 0 {
                f(Edit::Delete, o + i, n + j, &a[i..i + old_len]);
            }
            if new_len > 0 {
                f(Edit::Insert, o + i + old_len, n + j, &b[j..j + new_len]);
            }
        }
        i += old_len;
        j += new_len;
    }
}
