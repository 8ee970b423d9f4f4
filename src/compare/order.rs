//! Ordered offsets: which way an offset moved, and how far.
//!
//! Known orders: a sink's `kafka_offset` (records); a source offset that is a single integer,
//! such as FileStream's `position` (bytes) or MirrorMaker's `offset` (records); Debezium
//! MySQL's binlog `file` + `pos`; Debezium Postgres's `lsn`. Anything else is unordered.

use serde::Serialize;
use serde_json::Value;

use crate::model::{sink_partition, Fields, Key};

/// Which way the offset moved, from the old/actual value to the new/wanted one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Forward,
    Backward,
}

/// The movement of one partition's offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Movement {
    pub direction: Direction,
    /// How far, in `unit`s, when it can be told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<u64>,
    /// What the distance counts: `records`, `bytes`, or the offset field's name.
    pub unit: Key,
    /// The field(s) compared, e.g. `kafka_offset`, `position`, `file+pos`, `lsn`.
    pub field: Key,
}

/// How `to` lies relative to `from`, where the offset shape has an order.
pub fn movement(partition: &Fields, from: &Fields, to: &Fields) -> Option<Movement> {
    if sink_partition(partition).is_some() {
        return integer_field(from, to, "kafka_offset", "records");
    }
    if let (Some(a), Some(b)) = (binlog(from), binlog(to)) {
        let direction = if b > a {
            Direction::Forward
        } else if b < a {
            Direction::Backward
        } else {
            return None;
        };
        let distance = (a.0 == b.0)
            .then(|| u64::try_from(a.1.abs_diff(b.1)).ok())
            .flatten();
        return Some(Movement {
            direction,
            distance,
            unit: "bytes".into(),
            field: "file+pos".into(),
        });
    }
    if from.contains_key("lsn") && to.contains_key("lsn") {
        return integer_field(from, to, "lsn", "bytes");
    }
    // A single integer field on both sides.
    if from.len() == 1 && to.len() == 1 {
        let (k, _) = from.iter().next()?;
        let unit = match k.as_str() {
            "position" => "bytes",
            "offset" => "records",
            other => other,
        };
        return integer_field(from, to, k, unit);
    }
    None
}

fn integer_field(from: &Fields, to: &Fields, field: &str, unit: &str) -> Option<Movement> {
    let a = as_i128(from.get(field)?)?;
    let b = as_i128(to.get(field)?)?;
    if a == b {
        return None;
    }
    Some(Movement {
        direction: if b > a {
            Direction::Forward
        } else {
            Direction::Backward
        },
        distance: u64::try_from((b - a).unsigned_abs()).ok(),
        unit: unit.into(),
        field: field.into(),
    })
}

fn as_i128(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Debezium MySQL's position: binlog file name (ordered by its numeric suffix), then `pos`.
fn binlog(o: &Fields) -> Option<((String, u64), i128)> {
    let file = o.get("file")?.as_str()?;
    let pos = as_i128(o.get("pos")?)?;
    let (stem, num) = file.rsplit_once('.')?;
    let n: u64 = num.parse().ok()?;
    Some(((stem.to_string(), n), pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(v: Value) -> Fields {
        v.as_object().unwrap().clone().into()
    }

    #[test]
    fn file_position_and_mirror_offsets() {
        let p = f(json!({"filename":"/x"}));
        let m = movement(&p, &f(json!({"position":100})), &f(json!({"position":40}))).unwrap();
        assert_eq!(
            (m.direction, m.distance, m.unit.as_str()),
            (Direction::Backward, Some(60), "bytes")
        );
        let p = f(json!({"cluster":"a","topic":"t","partition":0}));
        let m = movement(&p, &f(json!({"offset":1})), &f(json!({"offset":9}))).unwrap();
        assert_eq!(
            (m.direction, m.distance, m.unit.as_str()),
            (Direction::Forward, Some(8), "records")
        );
    }

    #[test]
    fn mysql_binlog_orders_across_files() {
        let p = f(json!({"server":"db"}));
        let a = f(json!({"file":"mysql-bin.000009","pos":900,"ts_sec":1}));
        let b = f(json!({"file":"mysql-bin.000010","pos":4,"ts_sec":2}));
        let m = movement(&p, &a, &b).unwrap();
        assert_eq!((m.direction, m.distance), (Direction::Forward, None));
        let c = f(json!({"file":"mysql-bin.000010","pos":104,"ts_sec":3}));
        let m = movement(&p, &c, &b).unwrap();
        assert_eq!((m.direction, m.distance), (Direction::Backward, Some(100)));
    }

    #[test]
    fn postgres_lsn_and_unordered_shapes() {
        let p = f(json!({"server":"pg"}));
        let m = movement(
            &p,
            &f(json!({"lsn":1000,"txId":5})),
            &f(json!({"lsn":1500,"txId":6})),
        )
        .unwrap();
        assert_eq!(
            (m.direction, m.distance, m.field.as_str()),
            (Direction::Forward, Some(500), "lsn")
        );
        assert!(movement(&p, &f(json!({"a":"x","b":1})), &f(json!({"a":"y","b":2}))).is_none());
    }
}
