//! A fast path for reading the `offsets:` block of a file written by kco.
//!
//! A file of 100,000 partitions is 10 MB of YAML; the general YAML parser takes most of a
//! second and 200 MB for it (it loads every event before deserializing). Files kco writes are
//! in one fixed layout (see [`super::yaml`]), so that block is read here line by line. Only
//! that exact layout with scalars whose meaning is unambiguous (plain integers, plain-safe
//! strings, `null`, `true`, `false`) is accepted; anything else (a quoted string, a float, a
//! hand-indented line, a comment) returns `None` and the whole file goes to the YAML parser,
//! as before. The rest of the file (header, config, checksum) always goes to the YAML parser.

use serde_json::{Number, Value};

use super::fields::FieldsBuilder;
use super::yaml::is_plain_safe;
use super::OffsetEntry;

/// The text with its `offsets:` block replaced by `offsets: []`, and the entries of that
/// block; `None` unless the block is in kco's canonical layout.
pub(super) fn split_offsets(text: &str) -> Option<(String, Vec<OffsetEntry>)> {
    let start = if text.starts_with("offsets:\n") {
        0
    } else {
        text.find("\noffsets:\n")? + 1
    };
    let body_start = start + "offsets:\n".len();
    let mut entries = Vec::new();
    let mut end = text.len();
    let mut pos = body_start;
    let mut partition: Option<FieldsBuilder> = None;
    let mut offset: Option<FieldsBuilder> = None;
    // Which map of the current entry the next `    key: value` lines belong to: none after
    // an empty map (`{}`).
    #[derive(PartialEq)]
    enum Open {
        Nothing,
        Partition,
        Offset,
    }
    let mut open = Open::Nothing;
    let finish = |entries: &mut Vec<OffsetEntry>,
                  p: Option<FieldsBuilder>,
                  o: Option<FieldsBuilder>| match (p, o) {
        (Some(partition), Some(offset)) => {
            entries.push(OffsetEntry {
                partition: partition.build(),
                offset: offset.build(),
            });
            Some(())
        }
        (None, None) => Some(()),
        _ => None,
    };
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = &text[pos..line_end];
        if !line.starts_with([' ', '-']) {
            end = pos;
            break;
        }
        if let Some(field) = line.strip_prefix("    ") {
            let (k, v) = field.split_once(": ")?;
            let map = match open {
                Open::Partition => partition.as_mut()?,
                Open::Offset => offset.as_mut()?,
                Open::Nothing => return None,
            };
            if !is_plain_safe(k) || map.contains(k) {
                return None;
            }
            map.push(k.into(), scalar(v)?);
        } else {
            // A block map (`partition:` without `{}`) has at least one line.
            let open_and_empty = match open {
                Open::Partition => partition.as_ref().is_some_and(FieldsBuilder::is_empty),
                Open::Offset => offset.as_ref().is_some_and(FieldsBuilder::is_empty),
                Open::Nothing => false,
            };
            if open_and_empty {
                return None;
            }
            match line {
                "- partition:" | "- partition: {}" => {
                    finish(&mut entries, partition.take(), offset.take())?;
                    partition = Some(FieldsBuilder::default());
                    open = Open::Partition;
                }
                "  offset:" | "  offset: {}" if partition.is_some() && offset.is_none() => {
                    offset = Some(FieldsBuilder::default());
                    open = Open::Offset;
                }
                _ => return None,
            }
            if line.ends_with("{}") {
                open = Open::Nothing;
            }
        }
        pos = line_end + 1;
    }
    if open == Open::Offset && offset.as_ref().is_some_and(FieldsBuilder::is_empty) {
        return None;
    }
    finish(&mut entries, partition, offset)?;
    if entries.is_empty() || !text[body_start..end].ends_with('\n') {
        return None;
    }
    let rest = format!("{}offsets: []\n{}", &text[..start], &text[end..]);
    Some((rest, entries))
}

/// A scalar whose meaning no YAML reader disputes, as the YAML parser reads it.
fn scalar(s: &str) -> Option<Value> {
    match s {
        "null" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // Leading zeros (`0123`, octal to YAML 1.1) and `-0` go to the YAML parser.
        if (digits.len() > 1 && digits.starts_with('0')) || s == "-0" {
            return None;
        }
        let n = match s.parse::<i64>() {
            Ok(i) => Number::from(i),
            Err(_) => Number::from(s.parse::<u64>().ok()?),
        };
        return Some(Value::Number(n));
    }
    is_plain_safe(s).then(|| Value::String(s.to_string()))
}
