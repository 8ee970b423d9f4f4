//! One side of a diff as YAML (type, class, offsets), for the unified diff.

use crate::model::{ConnectorType, OffsetEntry};

/// The YAML a side of a diff shows: type, class and offsets, spelled as snapshot files spell
/// them (kco's own writer, [`crate::model::yaml`]), so that a unified diff reads like the file.
pub(crate) fn side_yaml(
    connector_type: Option<ConnectorType>,
    class: Option<&str>,
    offsets: &[OffsetEntry],
) -> String {
    use crate::model::yaml::{string, write_fields};
    // Ordered by reference: the entries are not copied.
    let mut sorted: Vec<&OffsetEntry> = offsets.iter().collect();
    crate::model::sort_by_partition(&mut sorted, |e| &e.partition);
    let mut out = String::new();
    if let Some(t) = connector_type {
        out.push_str("type: ");
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if let Some(class) = class {
        out.push_str("connectorClass: ");
        out.push_str(&string(class));
        out.push('\n');
    }
    if sorted.is_empty() {
        out.push_str("offsets: []\n");
    } else {
        out.push_str("offsets:\n");
        // The first entries tell the size of the rest: one allocation, not a doubling that
        // leaves half of 20 MB unused.
        const SAMPLE: usize = 64;
        for (i, e) in sorted.iter().enumerate() {
            if i == SAMPLE {
                out.reserve((out.len() / SAMPLE) * (sorted.len() - SAMPLE) * 9 / 8);
            }
            write_fields(&mut out, 4, "- partition", &e.partition);
            write_fields(&mut out, 4, "  offset", &e.offset);
        }
    }
    out
}
