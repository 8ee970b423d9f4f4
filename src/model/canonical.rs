//! Canonical form: the order of partitions and the bytes the checksum covers.

use std::cmp::Ordering;
use std::fmt::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{sink_partition, OffsetEntry};

/// Canonical JSON: object keys sorted, no white space. Numbers keep their JSON spelling.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write_canonical(&map[k.as_str()], out);
            }
            out.push('}');
        }
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
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// Orders partitions canonically: sink partitions by topic, then partition number; any other
/// partition by its canonical JSON. Sink partitions come first.
pub fn sort_entries(entries: &mut [OffsetEntry]) {
    entries.sort_by(|a, b| compare_partitions(&a.partition, &b.partition));
}

/// The canonical order of two partitions.
pub fn compare_partitions(a: &super::Fields, b: &super::Fields) -> Ordering {
    match (sink_partition(a), sink_partition(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => canonical_json(&Value::Object(a.clone()))
            .cmp(&canonical_json(&Value::Object(b.clone()))),
    }
}

/// `sha256:<hex>` over the canonical JSON of the offsets, in canonical order.
pub fn checksum(entries: &[OffsetEntry]) -> String {
    let mut sorted = entries.to_vec();
    sort_entries(&mut sorted);
    let doc = serde_json::to_value(&sorted).expect("offsets are JSON");
    let digest = Sha256::digest(canonical_json(&doc).as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(p: Value, o: Value) -> OffsetEntry {
        serde_json::from_value(json!({"partition": p, "offset": o})).unwrap()
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
}
