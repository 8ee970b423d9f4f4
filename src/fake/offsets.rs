//! PATCH offsets: request validation (sink and source rules) and merging into stored offsets.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::state::{Kind, OffsetEntry};

/// Why a PATCH body was refused: (HTTP status, message).
pub(crate) type Refusal = (u16, String);

/// Validates a PATCH body and returns normalized `(partition, offset-or-null)` updates in
/// request order. Nothing is applied when any entry is invalid.
pub(crate) fn parse_patch(kind: Kind, body: &Value) -> Result<Vec<OffsetEntry>, Refusal> {
    const MISSING: &str = "Partitions / offsets need to be provided for an alter offsets request";
    let list = match body.get("offsets") {
        None | Some(Value::Null) => return Err((400, MISSING.into())),
        Some(Value::Array(list)) if list.is_empty() => return Err((400, MISSING.into())),
        Some(Value::Array(list)) => list,
        Some(other) => return Err((500, format!("Cannot deserialize offsets from {other}"))),
    };
    list.iter()
        .map(|entry| {
            let Value::Object(map) = entry else {
                return Err((500, format!("Cannot deserialize offset entry from {entry}")));
            };
            let partition = map.get("partition").unwrap_or(&Value::Null);
            let offset = map.get("offset").unwrap_or(&Value::Null);
            match kind {
                Kind::Sink => sink_entry(partition, offset).map_err(|m| (400, m)),
                Kind::Source => source_entry(partition, offset).map_err(|m| (400, m)),
                Kind::Unknown => Err((500, "Failed to find the connector's plugin".into())),
            }
        })
        .collect()
}

/// Applies updates in order: a null offset removes the partition, anything else adds or
/// overwrites it. Unlisted partitions are left alone. Partitions are found through an index
/// (keyed by their JSON text, which is canonical: map keys are sorted), so that a PATCH of a
/// sink's 100k partitions is linear, not quadratic.
pub(crate) fn merge(stored: &mut Vec<OffsetEntry>, updates: Vec<OffsetEntry>) {
    let mut index: HashMap<String, usize> = stored
        .iter()
        .enumerate()
        .map(|(at, (p, _))| (p.to_string(), at))
        .collect();
    let mut removed = HashSet::new();
    for (partition, offset) in updates {
        let key = partition.to_string();
        match (index.get(&key).copied(), offset.is_null()) {
            (Some(at), true) => {
                index.remove(&key);
                removed.insert(at);
            }
            (Some(at), false) => stored[at].1 = offset,
            (None, true) => {}
            (None, false) => {
                index.insert(key, stored.len());
                stored.push((partition, offset));
            }
        }
    }
    if !removed.is_empty() {
        let mut at = 0;
        stored.retain(|_| {
            at += 1;
            !removed.contains(&(at - 1))
        });
    }
}

fn sink_entry(partition: &Value, offset: &Value) -> Result<OffsetEntry, String> {
    let Value::Object(p) = partition else {
        return Err("The partition for a sink connector offset cannot be null or missing".into());
    };
    if !p.contains_key("kafka_topic") || !p.contains_key("kafka_partition") {
        return Err(
            "The partition for a sink connector offset must contain the keys \
                    'kafka_topic' and 'kafka_partition'"
                .into(),
        );
    }
    let Some(topic) = p["kafka_topic"].as_str() else {
        return Err("Kafka topic names must be valid strings and may not be null".into());
    };
    let kafka_partition = match &p["kafka_partition"] {
        Value::Null => {
            return Err("Kafka partitions must be valid numbers and may not be null".into())
        }
        value => parse_int(value)
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| {
                format!(
                    "Failed to parse the following Kafka partition value in the provided offsets: \
                 '{}'. Partition values for sink connectors need to be integers.",
                    display(value)
                )
            })?,
    };
    let partition = json!({ "kafka_topic": topic, "kafka_partition": kafka_partition });
    let offset = match offset {
        Value::Null => Value::Null,
        Value::Object(o) => {
            let value = match o.get("kafka_offset") {
                None => {
                    return Err("The offset for a sink connector should either be null or \
                                contain the key 'kafka_offset'"
                        .into())
                }
                Some(Value::Null) => {
                    return Err("Kafka offsets must be valid numbers and may not be null".into())
                }
                Some(value) => value,
            };
            let n = parse_int(value).ok_or_else(|| {
                format!(
                    "Failed to parse the following Kafka offset value in the provided offsets: \
                     '{}'. Offset values for sink connectors need to be integers.",
                    display(value)
                )
            })?;
            json!({ "kafka_offset": n })
        }
        other => return Err(format!("Offsets must be specified as a Map, got {other}")),
    };
    Ok((partition, offset))
}

/// A JSON integer, or a string holding one (the worker accepts both).
fn parse_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn source_entry(partition: &Value, offset: &Value) -> Result<OffsetEntry, String> {
    if partition.is_null() {
        return Err("The partition for a source connector offset cannot be null or missing".into());
    }
    check_primitive_map(partition)?;
    if !offset.is_null() {
        check_primitive_map(offset)?;
    }
    Ok((partition.clone(), offset.clone()))
}

fn check_primitive_map(value: &Value) -> Result<(), String> {
    let Value::Object(map) = value else {
        return Err(format!("Offsets must be specified as a Map, got {value}"));
    };
    for (key, field) in map {
        let kind = match field {
            Value::Array(_) => "ARRAY",
            Value::Object(_) => "MAP",
            _ => continue,
        };
        return Err(format!(
            "Offsets may only contain primitive types as values, but field {key} contains {kind}"
        ));
    }
    Ok(())
}
