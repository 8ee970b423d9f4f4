//! Where things are in a snapshot file's text: the lines that problems point at, and those
//! that a unified diff shows.

use super::canonical::{in_canonical_order, sort_by_partition};

pub(super) fn strip_location(e: &serde_yaml::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The 1-based line of the first `key:` at any indentation.
pub(super) fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let needle = format!("{key}:");
    text.lines()
        .position(|l| l.trim_start().trim_start_matches("- ").starts_with(&needle))
        .map(|i| i + 1)
}

/// The 1-based line of `key` inside the top-level `config:` map.
pub(super) fn config_key_line(text: &str, key: &str) -> Option<usize> {
    let start = text.lines().position(|l| l.starts_with("config:"))?;
    let spellings = [
        format!("{key}:"),
        format!("{}:", super::yaml::string(key)),
        format!("'{key}':"),
    ];
    text.lines()
        .enumerate()
        .skip(start + 1)
        .take_while(|(_, l)| l.is_empty() || l.starts_with(' ') || l.starts_with('#'))
        .find(|(_, l)| {
            spellings
                .iter()
                .any(|s| l.trim_start().starts_with(s.as_str()))
        })
        .map(|(i, _)| i + 1)
}

/// The 1-based lines where each item of the top-level `offsets:` sequence starts.
pub(super) fn offsets_item_lines(text: &str) -> Vec<usize> {
    let mut lines = text.lines().enumerate();
    let mut out = Vec::new();
    for (_, l) in lines.by_ref() {
        if l.starts_with("offsets:") {
            break;
        }
    }
    let mut indent: Option<usize> = None;
    for (i, l) in lines {
        let trimmed = l.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let this = l.len() - trimmed.len();
        if this == 0 && !trimmed.starts_with('-') {
            break;
        }
        if trimmed.starts_with("- ") || trimmed == "-" {
            match indent {
                None => {
                    indent = Some(this);
                    out.push(i + 1);
                }
                Some(n) if n == this => out.push(i + 1),
                _ => {}
            }
        }
    }
    out
}

/// Where a unified diff's lines of a snapshot file are in its text (1-based), so that its hunks
/// carry the file's own line numbers: `connectorClass:` and `type:` of `metadata:`, the top-level
/// `offsets:`, and each entry's lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileLines {
    pub header: HeaderLines,
    /// Each entry's first line and line count, in canonical order (the order a diff shows).
    pub entries: Vec<(u32, u32)>,
}

/// The lines of the keys a diff shows before the entries; `None` where the file has no such
/// line (a missing key, a flow-style map).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeaderLines {
    pub class: Option<usize>,
    pub kind: Option<usize>,
    pub offsets: Option<usize>,
}

impl FileLines {
    /// Reads the lines of a file's text, whose `offsets` are parsed from it. A file laid out
    /// as kco writes it has one line per line shown; a hand-written layout (flow style,
    /// comments) is mapped entry by entry.
    pub fn of(offsets: &[super::OffsetEntry], text: &str) -> FileLines {
        let top = |key: &str| {
            text.lines()
                .position(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))
        };
        let metadata = top("metadata");
        let header = HeaderLines {
            class: metadata.and_then(|m| metadata_key(text, m, "connectorClass")),
            kind: metadata.and_then(|m| metadata_key(text, m, "type")),
            offsets: top("offsets").map(|i| i + 1),
        };
        let n = offsets.len();
        let mut spans = offsets_item_spans(text, n);
        if spans.len() != n {
            // Not one item a line-start: every entry is placed at the `offsets:` line.
            let at = header.offsets.unwrap_or(1) as u32;
            spans = vec![(at, 1); n];
        } else if !in_canonical_order(offsets) {
            let mut paired: Vec<(&super::OffsetEntry, (u32, u32))> =
                offsets.iter().zip(spans).collect();
            sort_by_partition(&mut paired, |p| &p.0.partition);
            spans = paired.into_iter().map(|(_, s)| s).collect();
        }
        spans.shrink_to_fit();
        FileLines {
            header,
            entries: spans,
        }
    }
}

/// The 1-based line of `key` directly inside the top-level map that starts at line index `at`.
fn metadata_key(text: &str, at: usize, key: &str) -> Option<usize> {
    let mut indent = None;
    for (i, l) in text.lines().enumerate().skip(at + 1) {
        let trimmed = l.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let this = l.len() - trimmed.len();
        if this == 0 {
            return None;
        }
        if *indent.get_or_insert(this) == this
            && trimmed
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        {
            return Some(i + 1);
        }
    }
    None
}

/// Each item of the top-level `offsets:` sequence: its first 1-based line and its line count
/// (up to its last line that is neither blank nor a comment); `expected` items are room made
/// ahead. A wide file is 500,000 lines: they are read as bytes, a line's first few only.
fn offsets_item_spans(text: &str, expected: usize) -> Vec<(u32, u32)> {
    let bytes = text.as_bytes();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(expected);
    let (mut pos, mut line) = (0, 0u32);
    let mut in_block = false;
    // The items' indent, and the last line of the item being read that has content.
    let (mut indent, mut last) = (None, 0u32);
    loop {
        line += 1;
        let rest = &bytes[pos..];
        let this = rest.iter().take_while(|&&b| b == b' ').count();
        let first = rest.get(this).copied();
        let content = !matches!(first, None | Some(b'\n' | b'\r' | b'#'));
        if !in_block {
            in_block = rest.starts_with(b"offsets:");
        } else if content {
            if this == 0 && first != Some(b'-') {
                break;
            }
            let dash = first == Some(b'-')
                && matches!(rest.get(this + 1), None | Some(b' ' | b'\n' | b'\r'));
            if dash && *indent.get_or_insert(this) == this {
                if let Some(item) = out.last_mut() {
                    item.1 = last - item.0 + 1;
                }
                out.push((line, 1));
            }
            last = line;
        }
        match text[pos..].find('\n') {
            Some(i) => pos += i + 1,
            None => break,
        }
    }
    if let Some(item) = out.last_mut() {
        item.1 = last - item.0 + 1;
    }
    out
}

/// The 1-based line of `key` in the `section` map (`partition` or `offset`) of the offsets
/// item `index`; without `key`, or when it is not found, the line of the section itself, else
/// the item's first line.
pub fn entry_line(text: &str, index: usize, section: &str, key: Option<&str>) -> Option<usize> {
    let items = offsets_item_lines(text);
    let start = *items.get(index)?;
    let end = items.get(index + 1).copied().unwrap_or(usize::MAX);
    let header = format!("{section}:");
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .skip(start - 1)
        .take_while(|(n, _)| *n < end)
        .collect();
    let strip = |l: &str| {
        l.trim_start()
            .trim_start_matches("- ")
            .trim_start()
            .to_string()
    };
    let Some(pos) = lines
        .iter()
        .position(|(_, l)| strip(l).starts_with(&header))
    else {
        return Some(start);
    };
    let section_line = lines[pos].0;
    let Some(key) = key else {
        return Some(section_line);
    };
    let spellings = [
        format!("{key}:"),
        format!("{}:", super::yaml::string(key)),
        format!("'{key}':"),
    ];
    let found = lines[pos + 1..]
        .iter()
        .take_while(|(_, l)| {
            let s = strip(l);
            !(s.starts_with("partition:") || s.starts_with("offset:"))
        })
        .find(|(_, l)| {
            spellings
                .iter()
                .any(|s| l.trim_start().starts_with(s.as_str()))
        })
        .map(|(n, _)| *n);
    // An inline map (`offset: {lsn: 1}`) has its keys on the section's line.
    Some(found.unwrap_or(section_line))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::file::OffsetsFile;

    const HEAD: &str =
        "apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: s\n  cluster: a\n";

    fn lines(text: &str) -> FileLines {
        let file = OffsetsFile::parse(Path::new("f.yaml"), text).unwrap();
        FileLines::of(&file.offsets, text)
    }

    #[test]
    fn a_file_as_kco_writes_it_has_one_line_per_line_shown() {
        let text = format!(
            "{HEAD}  connectorClass: C\n  type: sink\n  state: RUNNING\noffsets:\n\
             - partition:\n    kafka_partition: 0\n    kafka_topic: t\n  offset:\n    kafka_offset: 1\n\
             - partition:\n    kafka_partition: 1\n    kafka_topic: t\n  offset:\n    kafka_offset: 2\n\
             checksum: x\n"
        );
        let got = lines(&text);
        let header = HeaderLines {
            class: Some(6),
            kind: Some(7),
            offsets: Some(9),
        };
        assert_eq!(got.header, header);
        assert_eq!(got.entries, vec![(10, 5), (15, 5)]);
    }

    #[test]
    fn a_hand_written_layout_is_mapped_entry_by_entry_in_canonical_order() {
        // Keys in another order, a flow-style entry, a comment, entries out of order.
        let text = format!(
            "{HEAD}  type: sink\n  connectorClass: C\noffsets:\n\
             - {{partition: {{kafka_topic: t, kafka_partition: 1}}, offset: {{kafka_offset: 2}}}}\n\
             # the first partition\n\
             - partition:\n    kafka_topic: t\n    kafka_partition: 0\n  offset:\n    kafka_offset: 1\n\
             checksum: x\n"
        );
        let got = lines(&text);
        assert_eq!((got.header.kind, got.header.class), (Some(6), Some(7)));
        // Partition 0 is shown first: its lines are 11 to 15; partition 1's is line 9.
        assert_eq!(got.entries, vec![(11, 5), (9, 1)]);
    }

    #[test]
    fn an_indented_sequence_and_blank_lines_between_entries() {
        let text = format!(
            "{HEAD}  type: sink\noffsets:\n\
             \x20 - partition:\n      kafka_partition: 0\n      kafka_topic: t\n    offset:\n      kafka_offset: 1\n\
             \n\
             \x20 - partition: {{kafka_partition: 1, kafka_topic: t}}\n    offset: {{kafka_offset: 2}}\n\
             checksum: x\n"
        );
        let got = lines(&text);
        assert_eq!(got.header.offsets, Some(7));
        assert_eq!(got.entries, vec![(8, 5), (14, 2)]);
    }
}
