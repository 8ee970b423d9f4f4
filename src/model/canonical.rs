//! Canonical form: the order of partitions and the bytes the checksum covers.

use std::cmp::Ordering;
use std::fmt::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{sink_partition, Fields, OffsetEntry};

/// Canonical JSON: object keys sorted, no white space. Numbers keep their JSON spelling.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// [`canonical_json`] of a map, without copying it into a [`Value`] first.
pub fn canonical_fields(fields: &Fields) -> String {
    let mut out = String::new();
    write_fields(fields, &mut out);
    out
}

fn write_fields(map: &Fields, out: &mut String) {
    // `Fields` iterates in key order: written as it goes, with nothing to sort.
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(k, out);
        out.push(':');
        write_canonical(v, out);
    }
    out.push('}');
}

fn write_entries<'a>(entries: impl Iterator<Item = (&'a str, &'a Value)>, out: &mut String) {
    // A JSON object iterates in key order unless serde_json's `preserve_order` is on.
    let mut entries: Vec<(&str, &Value)> = entries.collect();
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    out.push('{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(k, out);
        out.push(':');
        write_canonical(v, out);
    }
    out.push('}');
}

fn write_string(s: &str, out: &mut String) {
    // serde_json escapes `"`, `\` and the control characters, nothing else: a string without
    // them (nearly every topic, file name and key) is written as it is, with no buffer.
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    // serde_json's escaping, written straight into `out`.
    let mut buf = Vec::with_capacity(s.len() + 2);
    serde_json::to_writer(&mut buf, s).expect("a string serializes");
    out.push_str(std::str::from_utf8(&buf).expect("JSON is UTF-8"));
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => write_entries(map.iter().map(|(k, v)| (k.as_str(), v)), out),
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// A partition's place in the canonical order: sink partitions first, by topic then number;
/// then any other partition by its canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PartitionKey<'a> {
    Sink(&'a str, i64),
    Other(String),
}

impl<'a> PartitionKey<'a> {
    pub fn of(partition: &'a Fields) -> Self {
        match sink_partition(partition) {
            Some((topic, p)) => PartitionKey::Sink(topic, p),
            None => PartitionKey::Other(canonical_fields(partition)),
        }
    }
}

/// Orders partitions canonically: sink partitions by topic, then partition number; any other
/// partition by its canonical JSON. Sink partitions come first. Stable; each key is computed
/// once, and a list already in order (as in every sealed file) is only checked.
pub fn sort_entries(entries: &mut [OffsetEntry]) {
    sort_by_partition(entries, |e| &e.partition);
}

/// [`sort_entries`] for anything that holds a partition.
pub fn sort_by_partition<T>(items: &mut [T], partition: impl Fn(&T) -> &Fields) {
    let all_sinks_in_order = items.windows(2).all(|w| {
        match (
            sink_partition(partition(&w[0])),
            sink_partition(partition(&w[1])),
        ) {
            (Some(a), Some(b)) => a <= b,
            _ => false,
        }
    });
    if all_sinks_in_order
        && items
            .first()
            .is_none_or(|i| sink_partition(partition(i)).is_some())
    {
        return;
    }
    let mut keyed: Vec<(PartitionKey<'_>, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (PartitionKey::of(partition(item)), i))
        .collect();
    // (key, index) pairs are all distinct: an unstable sort keeps equal keys in input order.
    keyed.sort_unstable();
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    apply_order(items, order);
}

/// Rearranges `items` so that position `k` holds what was at `order[k]`.
fn apply_order<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..items.len() {
        // Follow the cycle through `start`, swapping each element into place.
        let mut at = start;
        while order[at] != start {
            let from = order[at];
            items.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
}

/// Whether the entries are already in canonical order.
pub fn in_canonical_order(entries: &[OffsetEntry]) -> bool {
    entries
        .windows(2)
        .all(|w| compare_partitions(&w[0].partition, &w[1].partition) != Ordering::Greater)
}

/// The canonical order of two partitions.
pub fn compare_partitions(a: &Fields, b: &Fields) -> Ordering {
    match (sink_partition(a), sink_partition(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => canonical_fields(a).cmp(&canonical_fields(b)),
    }
}

/// `sha256:<hex>` over the canonical JSON of the offsets, in canonical order: the canonical
/// JSON of the list of `{"offset": .., "partition": ..}` objects.
pub fn checksum(entries: &[OffsetEntry]) -> String {
    let mut sorted: Vec<&OffsetEntry> = entries.iter().collect();
    sort_by_partition(&mut sorted, |e| &e.partition);
    let mut hasher = Sha256::new();
    let mut chunk = String::from("[");
    for (i, e) in sorted.iter().enumerate() {
        if i > 0 {
            chunk.push(',');
        }
        chunk.push_str("{\"offset\":");
        write_fields(&e.offset, &mut chunk);
        chunk.push_str(",\"partition\":");
        write_fields(&e.partition, &mut chunk);
        chunk.push('}');
        if chunk.len() > 64 * 1024 {
            hasher.update(chunk.as_bytes());
            chunk.clear();
        }
    }
    chunk.push(']');
    hasher.update(chunk.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(p: Value, o: Value) -> OffsetEntry {
        serde_json::from_value(json!({"partition": p, "offset": o})).unwrap()
    }

    proptest::proptest! {
        /// A string is written as serde_json writes it, by the fast path or the other.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(s in "\\PC*|[\"\\\\\\x00-\\x1f\\x7f a-z]*") {
            let mut out = String::new();
            write_string(&s, &mut out);
            proptest::prop_assert_eq!(out, serde_json::to_string(&s).unwrap());
        }
    }

    #[test]
    fn sink_partitions_sort_numerically_not_lexically() {
        let mut v = vec![
            entry(
                json!({"kafka_topic":"t","kafka_partition":10}),
                json!({"kafka_offset":1}),
            ),
            entry(
                json!({"kafka_topic":"t","kafka_partition":2}),
                json!({"kafka_offset":1}),
            ),
            entry(
                json!({"kafka_topic":"a","kafka_partition":11}),
                json!({"kafka_offset":1}),
            ),
        ];
        sort_entries(&mut v);
        let order: Vec<_> = v
            .iter()
            .map(|e| sink_partition(&e.partition).unwrap())
            .collect();
        assert_eq!(order, vec![("a", 11), ("t", 2), ("t", 10)]);
    }

    #[test]
    fn checksum_ignores_input_order_but_not_values() {
        let a = entry(json!({"f":"x"}), json!({"position": 1}));
        let b = entry(json!({"f":"y"}), json!({"position": 2}));
        assert_eq!(
            checksum(&[a.clone(), b.clone()]),
            checksum(&[b.clone(), a.clone()])
        );
        let b2 = entry(json!({"f":"y"}), json!({"position": 3}));
        assert_ne!(checksum(&[a.clone(), b]), checksum(&[a, b2]));
    }

    #[test]
    fn canonical_json_sorts_keys_and_keeps_number_spelling() {
        let v: Value =
            serde_json::from_str(r#"{"b":1.0,"a":[true,null,"x"],"c":18446744073709551615}"#)
                .unwrap();
        assert_eq!(
            canonical_json(&v),
            r#"{"a":[true,null,"x"],"b":1.0,"c":18446744073709551615}"#
        );
    }

    /// A mixed list: sinks out of order, sources with escapes and unicode, duplicates.
    fn mixed() -> Vec<OffsetEntry> {
        let mut v = Vec::new();
        for i in 0..60i64 {
            let n = (i * 37) % 23;
            v.push(if i % 3 == 0 {
                entry(
                    json!({"kafka_topic": format!("t{}", n % 4), "kafka_partition": n}),
                    json!({"kafka_offset": i}),
                )
            } else {
                entry(
                    json!({"file": format!("/d/\"q\"\u{e9}\n{}", n % 7), "z": n % 2 == 0, "a": 1.5}),
                    json!({"position": i, "note": "\u{2028}x"}),
                )
            });
        }
        v
    }

    #[test]
    fn sort_is_the_stable_sort_by_compare_partitions() {
        let mut want = mixed();
        want.sort_by(|a, b| compare_partitions(&a.partition, &b.partition));
        let mut got = mixed();
        sort_entries(&mut got);
        assert_eq!(got, want);
        assert!(in_canonical_order(&got));
        assert!(!in_canonical_order(&mixed()));
    }

    #[test]
    fn checksum_is_over_the_canonical_json_of_the_sorted_list() {
        let mut sorted = mixed();
        sorted.sort_by(|a, b| compare_partitions(&a.partition, &b.partition));
        let doc = serde_json::to_value(&sorted).unwrap();
        let want = format!(
            "sha256:{}",
            hex::encode(Sha256::digest(canonical_json(&doc).as_bytes()))
        );
        assert_eq!(checksum(&mixed()), want);
        let big: Vec<OffsetEntry> = (0..3000).flat_map(|_| mixed()).take(5000).collect();
        let mut sorted = big.clone();
        sorted.sort_by(|a, b| compare_partitions(&a.partition, &b.partition));
        let doc = serde_json::to_value(&sorted).unwrap();
        let digest = Sha256::digest(canonical_json(&doc).as_bytes());
        assert_eq!(checksum(&big), format!("sha256:{}", hex::encode(digest)));
    }

    #[test]
    fn canonical_fields_is_canonical_json_of_the_map() {
        for e in mixed() {
            assert_eq!(
                canonical_fields(&e.partition),
                canonical_fields(&e.partition)
            );
        }
    }
}
