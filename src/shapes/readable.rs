//! Positions as the database's own tools show them: a PostgreSQL LSN as `0/16B3748`, a MySQL
//! binlog position as `mysql-bin.000003:154`, Debezium's `ts_usec`/`ts_sec` as a UTC time.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::Value;

use super::value::as_i128;
use crate::model::Fields;

/// The readable form of `offset` under a shape's `templates`; `None` when there are none or
/// none of them can be filled.
pub fn readable(templates: &[String], offset: &Fields) -> Option<String> {
    let parts: Vec<String> = templates.iter().filter_map(|t| fill(t, offset)).collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Whether a template is well formed: braces closed, fields that are offset keys (`is_key`),
/// known formats.
pub fn check_template(template: &str, is_key: impl Fn(&str) -> bool) -> Result<(), String> {
    for piece in pieces(template)? {
        if let Piece::Field(field, format) = piece {
            if !is_key(field) {
                return Err(format!("`{field}` is not an offset key"));
            }
            if let Some(f) = format {
                if !FORMATS.contains(&f) {
                    return Err(format!(
                        "unknown format `{f}` (known: {})",
                        FORMATS.join(", ")
                    ));
                }
            }
        }
    }
    Ok(())
}

const FORMATS: [&str; 4] = ["pg-lsn", "epoch-s", "epoch-ms", "epoch-us"];

enum Piece<'a> {
    Text(&'a str),
    Field(&'a str, Option<&'a str>),
}

fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| "a `{` without its `}`".to_string())?
            + open;
        let inner = &rest[open + 1..close];
        let (field, format) = match inner.split_once(':') {
            Some((f, fmt)) => (f, Some(fmt)),
            None => (inner, None),
        };
        out.push(Piece::Field(field, format));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

fn fill(template: &str, offset: &Fields) -> Option<String> {
    let mut out = String::new();
    for piece in pieces(template).ok()? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Field(field, format) => out.push_str(&format_value(offset.get(field)?, format)?),
        }
    }
    Some(out)
}

fn format_value(v: &Value, format: Option<&str>) -> Option<String> {
    match format {
        None => Some(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        Some("pg-lsn") => {
            let n = u64::try_from(as_i128(v)?).ok()?;
            Some(format!("{:X}/{:X}", n >> 32, n & 0xFFFF_FFFF))
        }
        Some(unit @ ("epoch-s" | "epoch-ms" | "epoch-us")) => {
            let n = u64::try_from(as_i128(v)?).ok()?;
            let d = match unit {
                "epoch-s" => Duration::from_secs(n),
                "epoch-ms" => Duration::from_millis(n),
                _ => Duration::from_micros(n),
            };
            let t = UNIX_EPOCH.checked_add(d)?;
            // Years past 9999 have no RFC 3339 form.
            if d.as_secs() > 253_402_300_799 {
                return None;
            }
            Some(match unit {
                "epoch-s" => humantime::format_rfc3339_seconds(t).to_string(),
                "epoch-ms" => humantime::format_rfc3339_millis(t).to_string(),
                _ => humantime::format_rfc3339_micros(t).to_string(),
            })
        }
        Some(_) => None,
    }
}
