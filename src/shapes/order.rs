//! Which of two offsets of one shape is further along, and by how much: the shape's `order`
//! fields compared in turn.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

use super::check::spec_of;
use super::table::{Format, Shape};
use super::value::{as_i128, binlog_file};
use crate::model::Fields;

/// How `to` lies relative to `from`: the ordering (never `Equal`: equal positions have no
/// movement) and, when the first order field that differs is the distance field, how far.
pub fn compare(shape: &Shape, from: &Fields, to: &Fields) -> Option<(Ordering, Option<u64>)> {
    if shape.order.is_empty() {
        return None;
    }
    let distance_field = shape.distance.as_ref().or(shape.order.last())?;
    for field in &shape.order {
        let format = spec_of(&shape.offset, field).and_then(|s| s.format);
        let (a, b) = (key(from.get(field)?, format)?, key(to.get(field)?, format)?);
        match b.cmp(&a) {
            Ordering::Equal => continue,
            o => {
                let distance = match (field == distance_field, &a, &b) {
                    (true, Key::Number(x), Key::Number(y)) => u64::try_from(x.abs_diff(*y)).ok(),
                    _ => None,
                };
                return Some((o, distance));
            }
        }
    }
    None
}

/// What the distance counts, and the field(s) compared (`file+pos`); borrowed where it can
/// be (a diff asks once per moved partition).
pub fn unit_and_field(shape: &Shape) -> (&str, Cow<'_, str>) {
    let field = match shape.order.as_slice() {
        [one] => Cow::Borrowed(one.as_str()),
        many => Cow::Owned(many.join("+")),
    };
    let unit = shape
        .unit
        .as_deref()
        .or(shape.distance.as_deref())
        .or(shape.order.last().map(String::as_str))
        .unwrap_or_default();
    (unit, field)
}

/// A value as it orders.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Number(i128),
    Binlog(String, u64),
    Text(String),
}

fn key(v: &Value, format: Option<Format>) -> Option<Key> {
    match (v, format) {
        (Value::String(s), Some(Format::BinlogFile)) => {
            binlog_file(s).map(|(stem, n)| Key::Binlog(stem.to_string(), n))
        }
        (Value::String(s), Some(Format::Decimal)) => s.parse().ok().map(Key::Number),
        (Value::String(s), _) => Some(Key::Text(s.clone())),
        (Value::Number(_), _) => as_i128(v).map(Key::Number),
        _ => None,
    }
}
