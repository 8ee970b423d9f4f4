//! One side of a diff (type, class, offsets), written as YAML only when a unified diff shows
//! it, an item at a time.

use std::sync::Arc;

use crate::model::yaml::{string, write_fields};
use crate::model::{ConnectorType, FileLines, HeaderLines, OffsetEntry};

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
    /// Which line numbers a unified diff gives this side's lines.
    pub numbering: Numbering,
}

/// The line numbers of a side's lines in a unified diff.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Numbering {
    /// Its own: the YAML shown counts from line 1 (a side that is no file).
    #[default]
    Own,
    /// The file's it was read from: each line shown has the number of its line in the file.
    File(Arc<FileLines>),
    /// The lines it would have in a file laid out as the one given, were its offsets written
    /// there (as `kco snapshot` writes them): type and class at the file's lines, entries one
    /// after the other from the line after `offsets:` (the live side of a file).
    Into(HeaderLines),
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
            numbering: Numbering::Own,
        }
    }

    /// The side numbered as `numbering` says.
    pub fn numbered(self, numbering: Numbering) -> Side {
        Side { numbering, ..self }
    }

    /// The lines before the first entry: class, type and `offsets:`, in the order of a
    /// snapshot file's metadata.
    pub fn header(&self, out: &mut String) {
        if let Some(class) = &self.class {
            out.push_str("connectorClass: ");
            out.push_str(&string(class));
            out.push('\n');
        }
        if let Some(t) = self.connector_type {
            out.push_str("type: ");
            out.push_str(&t.to_string());
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

    /// How many items it has: the header, then each entry.
    pub fn items(&self) -> usize {
        self.offsets.len() + 1
    }

    /// Item `k`: 0 is the header, `k + 1` is entry `k`.
    pub fn item(&self, k: usize, out: &mut String) {
        match k {
            0 => self.header(out),
            k => self.entry(k - 1, out),
        }
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
