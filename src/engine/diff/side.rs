//! One side of a diff (type, class, offsets), written as YAML only when a unified diff shows
//! it, an item at a time.

use crate::model::yaml::{string, write_fields};
use crate::model::{ConnectorType, OffsetEntry};

/// One side of a connector for its unified diff: type, class and offsets in canonical order.
/// The entries share their partitions and offsets with the comparison (nothing is copied);
/// the YAML is written when shown, as snapshot files spell it (kco's own writer,
/// [`crate::model::yaml`]), so that a unified diff reads like the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub connector_type: Option<ConnectorType>,
    pub class: Option<String>,
    /// In canonical partition order.
    pub offsets: Vec<OffsetEntry>,
}

/// A connector's two sides, labelled; an absent side (no file, no connector) is `None` and
/// diffs as an empty text.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlSides {
    pub old_label: String,
    pub old: Option<Side>,
    pub new_label: String,
    pub new: Option<Side>,
}

impl Side {
    pub fn new(
        connector_type: Option<ConnectorType>,
        class: Option<&str>,
        offsets: &[OffsetEntry],
    ) -> Side {
        let mut offsets = offsets.to_vec();
        crate::model::sort_by_partition(&mut offsets, |e| &e.partition);
        Side {
            connector_type,
            class: class.map(str::to_string),
            offsets,
        }
    }

    /// The lines before the first entry: type, class and `offsets:`.
    pub fn header(&self, out: &mut String) {
        if let Some(t) = self.connector_type {
            out.push_str("type: ");
            out.push_str(&t.to_string());
            out.push('\n');
        }
        if let Some(class) = &self.class {
            out.push_str("connectorClass: ");
            out.push_str(&string(class));
            out.push('\n');
        }
        out.push_str(if self.offsets.is_empty() {
            "offsets: []\n"
        } else {
            "offsets:\n"
        });
    }

    /// The lines of entry `i`: `- partition:` and `  offset:` with their fields.
    pub fn entry(&self, i: usize, out: &mut String) {
        let e = &self.offsets[i];
        write_fields(out, 4, "- partition", &e.partition);
        write_fields(out, 4, "  offset", &e.offset);
    }

    /// The whole side as YAML.
    pub fn yaml(&self) -> String {
        let mut out = String::new();
        self.header(&mut out);
        for i in 0..self.offsets.len() {
            self.entry(i, &mut out);
        }
        out
    }
}
