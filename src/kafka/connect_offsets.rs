//! Connect's offsets topic (`offset.storage.topic`) as the worker writes it with its internal
//! JSON converter (schemas off): each record is one source partition's offset, its key
//! `["<connector>", {partition}]`, its value the offset, a null value (or a JSON `null`) a
//! deletion. The topic is compacted, and the records of one key share a partition, so the
//! last record of a key is its offset.

use std::collections::BTreeMap;

use serde_json::Value;

use super::topic_role::{Role, Tally};
use super::{KafkaError, KafkaOptions, RawRecord};

/// A record's connector, source partition and offset (`None`: a deletion); `None` for a
/// record that is not a Connect source offset (a tool's, or a corrupt one).
pub fn decode(key: Option<&[u8]>, value: Option<&[u8]>) -> Option<(String, Value, Option<Value>)> {
    let (name, partition) = super::topic_role::offset_key(key?)?;
    let offset = match value {
        None => None,
        Some(v) => match serde_json::from_slice::<Value>(v).ok()? {
            Value::Null => None,
            o @ Value::Object(_) => Some(o),
            _ => return None,
        },
    };
    Some((name, partition, offset))
}

/// Every connector's source offsets in `topic`: by connector name, each partition's offset
/// (the last record of its key; a deleted partition is left out), in partition order.
/// Records that are not a Connect source offset are skipped.
pub type SourceOffsets = BTreeMap<String, Vec<(Value, Value)>>;

/// Reads the whole of `topic` (every partition, to the end each had when its read began);
/// a topic most of whose records are not source offsets is refused
/// ([`KafkaError::NotItsRole`]): it is not the offsets topic, and no connector has offsets
/// in it.
pub fn read_source_offsets(opts: &KafkaOptions, topic: &str) -> Result<SourceOffsets, KafkaError> {
    let mut last: BTreeMap<(String, String), (Value, Option<Value>)> = BTreeMap::new();
    let mut tally = Tally::default();
    super::scan_topic(opts, topic, &mut |_, r: RawRecord<'_>| {
        tally.add(r.key);
        if let Some((name, partition, offset)) = decode(r.key, r.value) {
            last.insert((name, partition.to_string()), (partition, offset));
        }
    })?;
    tally
        .check(Role::Offsets)
        .map_err(|holds| KafkaError::NotItsRole {
            topic: topic.to_string(),
            holds,
        })?;
    Ok(collect(last))
}

fn collect(last: BTreeMap<(String, String), (Value, Option<Value>)>) -> SourceOffsets {
    let mut out = SourceOffsets::new();
    for ((name, _), (partition, offset)) in last {
        let partitions = out.entry(name).or_default();
        if let Some(offset) = offset {
            partitions.push((partition, offset));
        }
    }
    out.retain(|_, p| !p.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bytes(v: &Value) -> Vec<u8> {
        v.to_string().into_bytes()
    }

    #[test]
    fn a_key_of_a_name_and_a_map_with_a_map_or_null_is_a_source_offset() {
        let key = bytes(&json!(["src", {"filename": "/a"}]));
        let at = bytes(&json!({"position": 7}));
        assert_eq!(
            decode(Some(&key), Some(&at)),
            Some((
                "src".into(),
                json!({"filename": "/a"}),
                Some(json!({"position": 7}))
            ))
        );
        assert_eq!(
            decode(Some(&key), None),
            Some(("src".into(), json!({"filename": "/a"}), None))
        );
        assert_eq!(
            decode(Some(&key), Some(b"null")),
            Some(("src".into(), json!({"filename": "/a"}), None)),
            "a JSON null deletes too"
        );
        for (k, v) in [
            (json!(["src"]), json!({})),
            (json!(["src", "not a map"]), json!({})),
            (json!([1, {}]), json!({})),
            (json!(["src", {}]), json!(3)),
        ] {
            assert_eq!(decode(Some(&bytes(&k)), Some(&bytes(&v))), None, "{k} {v}");
        }
        assert_eq!(decode(None, Some(b"{}")), None);
        assert_eq!(decode(Some(b"not json"), Some(b"{}")), None);
    }

    #[test]
    fn the_last_record_of_each_key_wins_and_a_deletion_leaves_the_partition_out() {
        let mut last = BTreeMap::new();
        let put = |last: &mut BTreeMap<_, _>, name: &str, p: Value, o: Option<Value>| {
            last.insert((name.to_string(), p.to_string()), (p, o));
        };
        put(&mut last, "a", json!({"f": 1}), Some(json!({"pos": 1})));
        put(&mut last, "a", json!({"f": 1}), Some(json!({"pos": 9})));
        put(&mut last, "a", json!({"f": 2}), Some(json!({"pos": 2})));
        put(&mut last, "a", json!({"f": 2}), None);
        put(&mut last, "gone", json!({"f": 3}), None);
        let got = collect(last);
        assert_eq!(got.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(got["a"], [(json!({"f": 1}), json!({"pos": 9}))]);
    }
}
