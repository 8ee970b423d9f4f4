//! Comparing offsets: partition by partition, with direction and distance where offsets are
//! ordered. `diff` reports these comparisons; `apply` turns them into a plan.

mod order;

use serde::Serialize;

use crate::model::{canonical_fields, sort_by_partition, Fields, OffsetEntry};

pub use order::{movement, Direction, Movement};

/// How one partition compares between a wanted set of offsets (a file, or a newer revision)
/// and an actual one (live state, or an older revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionKind {
    Unchanged,
    /// Both sides have the partition with different offsets.
    Moved,
    /// Only the wanted side has it.
    OnlyWanted,
    /// Only the actual side has it.
    OnlyActual,
}

/// One partition's comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionDiff {
    pub partition: Fields,
    pub kind: PartitionKind,
    /// The offset on the wanted side (file / newer revision).
    pub wanted: Option<Fields>,
    /// The offset on the actual side (live / older revision).
    pub actual: Option<Fields>,
    /// For `Moved`: the wanted offset relative to the actual one, where offsets are ordered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub movement: Option<Movement>,
}

impl PartitionDiff {
    pub fn is_change(&self) -> bool {
        self.kind != PartitionKind::Unchanged
    }
}

/// Compares two offset sets partition by partition, in canonical partition order.
pub fn compare(wanted: &[OffsetEntry], actual: &[OffsetEntry]) -> Vec<PartitionDiff> {
    use std::collections::BTreeMap;
    let key = canonical_fields;
    let mut rows: BTreeMap<String, (Fields, Option<Fields>, Option<Fields>)> = BTreeMap::new();
    for e in wanted {
        rows.entry(key(&e.partition))
            .or_insert_with(|| (e.partition.clone(), None, None))
            .1 = Some(e.offset.clone());
    }
    for e in actual {
        rows.entry(key(&e.partition))
            .or_insert_with(|| (e.partition.clone(), None, None))
            .2 = Some(e.offset.clone());
    }
    let mut out: Vec<PartitionDiff> = rows
        .into_values()
        .map(|(partition, w, a)| {
            let (kind, movement) = match (&w, &a) {
                (Some(w), Some(a)) if offsets_equal(w, a) => (PartitionKind::Unchanged, None),
                (Some(w), Some(a)) => (PartitionKind::Moved, movement(&partition, a, w)),
                (Some(_), None) => (PartitionKind::OnlyWanted, None),
                (None, _) => (PartitionKind::OnlyActual, None),
            };
            PartitionDiff {
                partition,
                kind,
                wanted: w,
                actual: a,
                movement,
            }
        })
        .collect();
    sort_by_partition(&mut out, |d| &d.partition);
    out
}

/// Offsets are equal when their canonical JSON is, except that an integer and a float of the
/// same value (Connect stores JSON integers as longs and others as doubles) still differ.
pub fn offsets_equal(a: &Fields, b: &Fields) -> bool {
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entries(v: serde_json::Value) -> Vec<OffsetEntry> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn classifies_every_partition() {
        let wanted = entries(json!([
            {"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":10}},
            {"partition":{"kafka_topic":"t","kafka_partition":1},"offset":{"kafka_offset":5}},
            {"partition":{"kafka_topic":"t","kafka_partition":2},"offset":{"kafka_offset":7}}
        ]));
        let actual = entries(json!([
            {"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":10}},
            {"partition":{"kafka_topic":"t","kafka_partition":1},"offset":{"kafka_offset":505}},
            {"partition":{"kafka_topic":"t","kafka_partition":10},"offset":{"kafka_offset":1}}
        ]));
        let d = compare(&wanted, &actual);
        let kinds: Vec<_> = d.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            vec![
                PartitionKind::Unchanged,
                PartitionKind::Moved,
                PartitionKind::OnlyWanted,
                PartitionKind::OnlyActual
            ]
        );
        let m = d[1].movement.clone().unwrap();
        assert_eq!(m.direction, Direction::Backward);
        assert_eq!(m.distance, Some(500));
    }
}
