//! Ordered offsets: which way an offset moved, and how far.
//!
//! The order comes from the connector's shape (`schemas/shapes.yaml`, [`crate::shapes`]): a
//! sink's `kafka_offset` (records), FileStream's `position` (bytes), MirrorMaker's `offset`
//! (records), Debezium MySQL's binlog `file` + `pos`, PostgreSQL's `lsn`, ... When the class is
//! not known, the first shape of the table that both offsets fit is used, and failing that a
//! single integer field on both sides. Anything else is unordered.

use std::cmp::Ordering;

use serde::Serialize;

use crate::model::{sink_partition, ConnectorType, Fields, Key};
use crate::shapes::{self, Shape};

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

/// How `to` lies relative to `from`, where the offset shape has an order (found from the
/// offsets themselves).
pub fn movement(partition: &Fields, from: &Fields, to: &Fields) -> Option<Movement> {
    movement_in(None, partition, from, to)
}

/// [`movement`] under a known shape (the connector class's), else as [`movement`] finds it.
pub fn movement_in(
    shape: Option<&Shape>,
    partition: &Fields,
    from: &Fields,
    to: &Fields,
) -> Option<Movement> {
    let registry = shapes::registry();
    let shape = shape.or_else(|| {
        if sink_partition(partition).is_some() {
            return registry.find(ConnectorType::Sink, None);
        }
        registry.entries().iter().find(|s| {
            s.connector_type == ConnectorType::Source
                && !s.order.is_empty()
                && shapes::check::fits(s, partition, from)
                && shapes::check::fits(s, partition, to)
        })
    });
    if let Some(shape) = shape {
        let (ordering, distance) = shapes::order::compare(shape, from, to)?;
        let (unit, field) = shapes::order::unit_and_field(shape);
        return Some(Movement {
            direction: direction(ordering),
            distance,
            unit: unit.into(),
            field: field.as_ref().into(),
        });
    }
    // No known shape: a single integer field on both sides.
    if from.len() == 1 && to.len() == 1 {
        let (k, _) = from.iter().next()?;
        let a = shapes::value::as_i128(from.get(k)?)?;
        let b = shapes::value::as_i128(to.get(k)?)?;
        if a == b {
            return None;
        }
        let unit = match k.as_str() {
            "position" => "bytes",
            "offset" => "records",
            other => other,
        };
        return Some(Movement {
            direction: direction(b.cmp(&a)),
            distance: u64::try_from((b - a).unsigned_abs()).ok(),
            unit: unit.into(),
            field: k.as_str().into(),
        });
    }
    None
}

fn direction(o: Ordering) -> Direction {
    if o == Ordering::Greater {
        Direction::Forward
    } else {
        Direction::Backward
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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
