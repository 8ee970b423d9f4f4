//! Does an offset fit its connector's shape? Unknown keys (with the likely intended one),
//! missing required keys, wrong types, values out of range.

use std::fmt::Write;

use serde_json::Value;

use super::table::{FieldSpec, Format, Shape, Shapes, ValueType};
use super::value::{as_i128, binlog_file};
use crate::model::{Fields, OffsetEntry};

/// Which map of an entry a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Partition,
    Offset,
}

impl Section {
    pub fn as_str(self) -> &'static str {
        match self {
            Section::Partition => "partition",
            Section::Offset => "offset",
        }
    }
}

/// One misfit in one entry: where (`key` is `None` for the map as a whole) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfit {
    pub section: Section,
    pub key: Option<String>,
    pub message: String,
}

/// Every way `entry` does not fit `shape`.
pub fn check_entry(shape: &Shape, entry: &OffsetEntry) -> Vec<Misfit> {
    let mut out = Vec::new();
    check_map(
        shape,
        Section::Partition,
        &entry.partition,
        &shape.partition,
        &shape.partition_any_of,
        &mut out,
    );
    check_map(
        shape,
        Section::Offset,
        &entry.offset,
        &shape.offset,
        &shape.offset_any_of,
        &mut out,
    );
    out
}

/// Whether `entry` fits `shape` without any misfit.
pub fn fits(shape: &Shape, partition: &Fields, offset: &Fields) -> bool {
    let mut out = Vec::new();
    check_map(
        shape,
        Section::Partition,
        partition,
        &shape.partition,
        &shape.partition_any_of,
        &mut out,
    );
    if !out.is_empty() {
        return false;
    }
    check_map(
        shape,
        Section::Offset,
        offset,
        &shape.offset,
        &shape.offset_any_of,
        &mut out,
    );
    out.is_empty()
}

/// The spec of `key` in `specs`: its own, or a `prefix*` pattern's.
pub fn spec_of<'a>(
    specs: &'a std::collections::BTreeMap<String, FieldSpec>,
    key: &str,
) -> Option<&'a FieldSpec> {
    specs.get(key).or_else(|| {
        specs
            .iter()
            .find(|(k, _)| k.strip_suffix('*').is_some_and(|p| key.starts_with(p)))
            .map(|(_, s)| s)
    })
}

fn check_map(
    shape: &Shape,
    section: Section,
    map: &Fields,
    specs: &std::collections::BTreeMap<String, FieldSpec>,
    any_of: &[String],
    out: &mut Vec<Misfit>,
) {
    let what = section.as_str();
    let mut unknown = Vec::new();
    for (k, v) in map {
        match spec_of(specs, k) {
            None => unknown.push(k.as_str()),
            // A nested value is the file format's own error (values are primitives).
            Some(_) if v.is_object() || v.is_array() => {}
            Some(spec) => {
                if let Err(m) = value_fits(spec, v) {
                    out.push(Misfit {
                        section,
                        key: Some(k.to_string()),
                        message: format!("{what} `{k}` is {}: {m}", describe_value(v)),
                    });
                }
            }
        }
    }
    let missing: Vec<&String> = specs
        .iter()
        .filter(|(k, s)| s.required && !k.ends_with('*') && !map.contains_key(k.as_str()))
        .map(|(k, _)| k)
        .collect();
    for k in unknown {
        let guess = likely(k, specs, map);
        let mut message = format!(
            "unknown {what} key `{k}`: {} does not write it",
            shape.title
        );
        if let Some(g) = guess {
            let _ = write!(message, " (did you mean `{g}`?)");
        }
        out.push(Misfit {
            section,
            key: Some(k.to_string()),
            message,
        });
    }
    for k in missing {
        out.push(Misfit {
            section,
            key: None,
            message: format!(
                "{what} lacks `{k}` ({}), which {} needs",
                spec_text(&specs[k]),
                shape.title
            ),
        });
    }
    if !any_of.is_empty() && !any_of.iter().any(|k| map.contains_key(k.as_str())) {
        out.push(Misfit {
            section,
            key: None,
            message: format!(
                "{what} needs one of {}",
                any_of
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
}

/// The known key that `typo` most likely meant: one not present, within two edits.
fn likely<'a>(
    typo: &str,
    specs: &'a std::collections::BTreeMap<String, FieldSpec>,
    map: &Fields,
) -> Option<&'a str> {
    specs
        .keys()
        .filter(|k| !k.ends_with('*') && !map.contains_key(k.as_str()))
        .map(|k| (strsim::levenshtein(typo, k), k))
        .filter(|(d, k)| *d <= 2 && *d < k.len().max(typo.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

fn describe_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the string {}", Value::String(s.clone())),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// Whether a value fits a key's spec; the error says what was expected.
pub fn value_fits(spec: &FieldSpec, v: &Value) -> Result<(), String> {
    if v.is_null() {
        return if spec.nullable {
            Ok(())
        } else {
            Err(format!("expected {}", spec_text(spec)))
        };
    }
    let types = spec.types.list();
    let typed = match v {
        Value::String(s) => types
            .contains(&ValueType::String)
            .then(|| string_fits(spec, s)),
        Value::Bool(_) => types.contains(&ValueType::Boolean).then_some(Ok(())),
        Value::Number(n) if n.is_i64() || n.is_u64() => (types.contains(&ValueType::Integer)
            || types.contains(&ValueType::Number))
        .then(|| range_fits(spec, as_i128(v))),
        Value::Number(_) => types.contains(&ValueType::Number).then_some(Ok(())),
        _ => None,
    };
    match typed {
        Some(Ok(())) => Ok(()),
        Some(Err(m)) => Err(m),
        None => Err(format!("expected {}", spec_text(spec))),
    }
}

fn string_fits(spec: &FieldSpec, s: &str) -> Result<(), String> {
    if spec.non_empty && s.is_empty() {
        return Err("expected a non-empty string".into());
    }
    match spec.format {
        None => Ok(()),
        Some(Format::Decimal) => match s.parse::<i128>() {
            Ok(n) => range_fits(spec, Some(n)),
            Err(_) => Err(format!("expected {}", spec_text(spec))),
        },
        Some(Format::BinlogFile) => match binlog_file(s) {
            Some(_) => Ok(()),
            None => Err("expected a binlog file name `<name>.<number>`".into()),
        },
        Some(Format::SqlserverLsn) => {
            if s == "NULL" || sqlserver_lsn(s) {
                Ok(())
            } else {
                Err("expected a SQL Server LSN such as `0000002a:00000dc0:0003`".into())
            }
        }
    }
}

fn range_fits(spec: &FieldSpec, n: Option<i128>) -> Result<(), String> {
    let Some(n) = n else { return Ok(()) };
    if let Some(min) = spec.min {
        if n < i128::from(min) {
            return Err(format!("it must be >= {min}"));
        }
    }
    if let Some(max) = spec.max {
        if n > i128::from(max) {
            return Err(format!("it must be <= {max}"));
        }
    }
    Ok(())
}

fn sqlserver_lsn(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 3
        && [8, 8, 4]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A key's rules in words: `integer >= 0`, `string or boolean`, `decimal string`.
pub fn spec_text(spec: &FieldSpec) -> String {
    let mut types: Vec<String> = spec
        .types
        .list()
        .iter()
        .map(|t| {
            match (t, spec.format) {
                (ValueType::String, Some(Format::Decimal)) => "string of digits",
                (ValueType::String, Some(Format::BinlogFile)) => "binlog file name",
                (ValueType::String, Some(Format::SqlserverLsn)) => "SQL Server LSN string",
                (ValueType::String, None) if spec.non_empty => "non-empty string",
                (ValueType::String, None) => "string",
                (ValueType::Integer, _) => "integer",
                (ValueType::Number, _) => "number",
                (ValueType::Boolean, _) => "boolean",
            }
            .to_string()
        })
        .collect();
    if spec.nullable {
        types.push("null".into());
    }
    let mut s = types.join(" or ");
    match (spec.min, spec.max) {
        (Some(a), Some(b)) if a == b => {
            let _ = write!(s, " = {a}");
        }
        (Some(a), Some(b)) => {
            let _ = write!(s, " in {a}..={b}");
        }
        (Some(a), None) => {
            let _ = write!(s, " >= {a}");
        }
        (None, Some(b)) => {
            let _ = write!(s, " <= {b}");
        }
        (None, None) => {}
    }
    s
}

/// The shape in one line: `{server: string} -> {lsn: integer >= 0, 15 optional keys}`; the
/// optional keys are named when there are few (`kco schema --shapes` lists them all).
pub fn signature(shape: &Shape) -> String {
    let side = |specs: &std::collections::BTreeMap<String, FieldSpec>| {
        let mut parts: Vec<String> = specs
            .iter()
            .filter(|(_, s)| s.required)
            .map(|(k, s)| format!("{k}: {}", spec_text(s)))
            .collect();
        let optional: Vec<&str> = specs
            .iter()
            .filter(|(_, s)| !s.required)
            .map(|(k, _)| k.as_str())
            .collect();
        match optional.len() {
            0 => {}
            1..=4 => parts.push(format!("optional: {}", optional.join(", "))),
            n => parts.push(format!("{n} optional keys")),
        }
        format!("{{{}}}", parts.join(", "))
    };
    format!("{} -> {}", side(&shape.partition), side(&shape.offset))
}

/// What checking one file against the shapes found.
#[derive(Debug, Default)]
pub struct FileCheck {
    /// Every misfit, with file and line.
    pub problems: Vec<crate::model::file::FileProblem>,
    /// The connector class the table does not know (a source file whose offsets went
    /// unchecked); `(no connectorClass)` when the file does not name one.
    pub unchecked: Option<String>,
}

/// The file's offsets against its connector's shape. At most [`MAX_PER_FILE`] problems are
/// listed (a bad bulk edit of a wide file is one story), then one line with the count left.
pub fn check_file(
    shapes: &Shapes,
    file: &crate::model::file::OffsetsFile,
    path: &std::path::Path,
    text: &str,
) -> FileCheck {
    use crate::model::file::{entry_line, FileProblem, ProblemKind};
    let meta = &file.metadata;
    // A sink's shape is the file format's own rule, checked when the file is loaded.
    if meta.connector_type == crate::model::ConnectorType::Sink {
        return FileCheck::default();
    }
    let Some(shape) = shapes.find(meta.connector_type, meta.connector_class.as_deref()) else {
        return FileCheck {
            problems: Vec::new(),
            unchecked: Some(
                meta.connector_class
                    .clone()
                    .unwrap_or_else(|| "(no connectorClass)".into()),
            ),
        };
    };
    let mut problems = Vec::new();
    let mut more = 0usize;
    for (i, e) in file.offsets.iter().enumerate() {
        for m in check_entry(shape, e) {
            if problems.len() >= MAX_PER_FILE {
                more += 1;
                continue;
            }
            let line = entry_line(text, i, m.section.as_str(), m.key.as_deref());
            problems.push(FileProblem::new(
                ProblemKind::Shape,
                path,
                line,
                format!(
                    "{}; expected ({}): {}",
                    m.message,
                    shape.class.as_deref().unwrap_or("every sink"),
                    signature(shape)
                ),
            ));
        }
    }
    if more > 0 {
        problems.push(FileProblem::new(
            ProblemKind::Shape,
            path,
            None,
            format!(
                "{} against the shape, not listed",
                crate::text::count(more, "more problem")
            ),
        ));
    }
    FileCheck {
        problems,
        unchecked: None,
    }
}

/// How many shape problems one file lists.
pub const MAX_PER_FILE: usize = 20;
