//! Comparing offsets: partition by partition, with direction and distance where offsets are
//! ordered. `diff` reports these comparisons; `apply` turns them into a plan.

mod order;

use serde::Serialize;

use std::cmp::Ordering;

use crate::model::{
    canonical_fields, compare_partitions, sink_partition, sort_by_partition, Fields, OffsetEntry,
};

pub use order::{movement, movement_in, Direction, Movement};

use crate::shapes::Shape;

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
    /// The offset on the wanted side (file / newer revision); JSON `after` (what it will be).
    #[serde(rename = "after")]
    pub wanted: Option<Fields>,
    /// The offset on the actual side (live / older revision); JSON `before` (what it is).
    #[serde(rename = "before")]
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
    compare_each(wanted, actual).collect()
}

/// [`compare`] with the connector's shape known (it orders the offsets).
pub fn compare_in(
    shape: Option<&Shape>,
    wanted: &[OffsetEntry],
    actual: &[OffsetEntry],
) -> Vec<PartitionDiff> {
    compare_each_in(shape, wanted, actual).collect()
}

/// [`compare`] a partition at a time: a caller that keeps only the changes never holds a row
/// for every partition.
pub fn compare_each<'a>(
    wanted: &'a [OffsetEntry],
    actual: &'a [OffsetEntry],
) -> Box<dyn Iterator<Item = PartitionDiff> + 'a> {
    compare_each_in(None, wanted, actual)
}

/// [`compare_each`] with the connector's shape known (it orders the offsets).
pub fn compare_each_in<'a>(
    shape: Option<&'a Shape>,
    wanted: &'a [OffsetEntry],
    actual: &'a [OffsetEntry],
) -> Box<dyn Iterator<Item = PartitionDiff> + 'a> {
    if wanted
        .iter()
        .chain(actual)
        .all(|e| is_ordered_exactly(&e.partition))
    {
        return Box::new(Merge::new(shape, wanted, actual));
    }
    Box::new(compare_by_key(shape, wanted, actual).into_iter())
}

/// Whether the canonical order ties this partition only with an equal one: a plain sink
/// partition (topic and number, nothing else) or any partition that is not a sink's (ordered
/// by its canonical JSON).
fn is_ordered_exactly(p: &Fields) -> bool {
    sink_partition(p).is_none() || p.len() == 2
}

/// Both sides in canonical order (a sealed file already is; only the order is checked), then
/// walked side by side: no key is built, and a row is made when asked for.
struct Merge<'a> {
    shape: Option<&'a Shape>,
    w: Vec<&'a OffsetEntry>,
    a: Vec<&'a OffsetEntry>,
    i: usize,
    j: usize,
}

impl<'a> Merge<'a> {
    fn new(shape: Option<&'a Shape>, wanted: &'a [OffsetEntry], actual: &'a [OffsetEntry]) -> Self {
        fn ordered(entries: &[OffsetEntry]) -> Vec<&OffsetEntry> {
            let mut v: Vec<&OffsetEntry> = entries.iter().collect();
            sort_by_partition(&mut v, |e| &e.partition);
            // A partition listed twice counts once, with its last offset.
            let mut out: Vec<&OffsetEntry> = Vec::with_capacity(v.len());
            for e in v {
                match out.last_mut() {
                    Some(last) if last.partition == e.partition => *last = e,
                    _ => out.push(e),
                }
            }
            out
        }
        Merge {
            shape,
            w: ordered(wanted),
            a: ordered(actual),
            i: 0,
            j: 0,
        }
    }
}

impl Iterator for Merge<'_> {
    type Item = PartitionDiff;

    fn next(&mut self) -> Option<PartitionDiff> {
        let (w, a) = (&self.w, &self.a);
        let (i, j) = (self.i, self.j);
        let order = match (w.get(i), a.get(j)) {
            (Some(x), Some(y)) => compare_partitions(&x.partition, &y.partition),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return None,
        };
        let (partition, wanted, actual) = match order {
            Ordering::Less => {
                self.i += 1;
                (&w[i].partition, Some(&w[i].offset), None)
            }
            Ordering::Greater => {
                self.j += 1;
                (&a[j].partition, None, Some(&a[j].offset))
            }
            Ordering::Equal => {
                self.i += 1;
                self.j += 1;
                (&w[i].partition, Some(&w[i].offset), Some(&a[j].offset))
            }
        };
        Some(row(
            self.shape,
            partition.clone(),
            wanted.cloned(),
            actual.cloned(),
        ))
    }
}

/// One partition's row.
fn row(
    shape: Option<&Shape>,
    partition: Fields,
    w: Option<Fields>,
    a: Option<Fields>,
) -> PartitionDiff {
    let (kind, movement) = match (&w, &a) {
        (Some(w), Some(a)) if offsets_equal(w, a) => (PartitionKind::Unchanged, None),
        (Some(w), Some(a)) => (PartitionKind::Moved, movement_in(shape, &partition, a, w)),
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
}

/// Any partitions: paired by their canonical JSON.
fn compare_by_key(
    shape: Option<&Shape>,
    wanted: &[OffsetEntry],
    actual: &[OffsetEntry],
) -> Vec<PartitionDiff> {
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
        .map(|(partition, w, a)| row(shape, partition, w, a))
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

    proptest::proptest! {
        /// Walking both sides in order gives what pairing by canonical JSON gives.
        #[test]
        fn the_merge_pairs_as_the_keys_do(
            w in proptest::collection::vec((0u8..3, 0i64..6, 0i64..4), 0..12),
            a in proptest::collection::vec((0u8..3, 0i64..6, 0i64..4), 0..12),
        ) {
            let e = |v: &Vec<(u8, i64, i64)>| -> Vec<OffsetEntry> {
                v.iter().map(|(kind, p, o)| {
                    let partition = match kind {
                        0 => json!({"kafka_topic": "t", "kafka_partition": p}),
                        1 => json!({"file": format!("f{p}")}),
                        _ => json!({"kafka_topic": "u", "kafka_partition": p}),
                    };
                    serde_json::from_value(json!({"partition": partition, "offset": {"o": o}})).unwrap()
                }).collect()
            };
            let (w, a) = (e(&w), e(&a));
            proptest::prop_assert_eq!(Merge::new(None, &w, &a).collect::<Vec<_>>(), compare_by_key(None, &w, &a));
        }
    }
}
