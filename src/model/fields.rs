//! [`Fields`]: a partition or an offset, a small flat map of JSON values.
//!
//! A connector's partitions and offsets have one to a handful of keys each, and there can be
//! a million of them. `serde_json::Map` is a `BTreeMap`, whose smallest node holds eleven
//! entries (about 630 bytes for one key); `Fields` is a vector of entries sorted by key (56
//! bytes per key), with the same API for what kco uses. Deserializing builds it directly, so
//! no `Value` is built first. Keys iterate sorted, as `serde_json::Map` without
//! `preserve_order` does; a repeated key keeps its last value, as there.

use std::fmt;

use compact_str::CompactString;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A field name. Up to 24 bytes (every name Connect's connectors use: `kafka_topic`,
/// `kafka_partition`, `kafka_offset`, `filename`, `position`, `lsn`, ...) it lives inline:
/// a million partitions do not mean millions of heap strings for the same few names.
pub type Key = CompactString;

/// A flat map of JSON values, keys sorted: a partition or an offset.
#[derive(Clone, Default, PartialEq)]
pub struct Fields(Vec<(Key, Value)>);

impl Fields {
    pub fn new() -> Self {
        Fields(Vec::new())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.find(key).ok().map(|i| &mut self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key`, returning its previous value.
    pub fn insert(&mut self, key: impl Into<Key>, value: Value) -> Option<Value> {
        let key = key.into();
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                // Maps of one to a few keys: grow by what is needed, not to four at once.
                self.0.reserve_exact(1);
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Builds from entries in any order; a repeated key keeps its last value.
    fn from_entries(mut entries: Vec<(Key, Value)>) -> Self {
        if !entries.is_sorted_by(|a, b| a.0 < b.0) {
            // Stable: among equal keys, the last one given ends up last, and is kept.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<(Key, Value)> = Vec::with_capacity(entries.len());
            for e in entries {
                match kept.last_mut() {
                    Some(last) if last.0 == e.0 => *last = e,
                    _ => kept.push(e),
                }
            }
            entries = kept;
        }
        entries.shrink_to_fit();
        Fields(entries)
    }
}

/// Borrowing iterator over [`Fields`], in key order.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (Key, Value)>,
    fn(&'a (Key, Value)) -> (&'a Key, &'a Value),
>;

impl std::ops::Index<&str> for Fields {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or_else(|| panic!("no field `{key}`"))
    }
}

impl fmt::Debug for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Key>> FromIterator<(K, Value)> for Fields {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        Fields::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl IntoIterator for Fields {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Fields {
    type Item = (&'a Key, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<serde_json::Map<String, Value>> for Fields {
    fn from(map: serde_json::Map<String, Value>) -> Self {
        map.into_iter().collect()
    }
}

impl From<Fields> for serde_json::Map<String, Value> {
    fn from(fields: Fields) -> Self {
        fields
            .0
            .into_iter()
            .map(|(k, v)| (k.into_string(), v))
            .collect()
    }
}

impl From<Fields> for Value {
    fn from(fields: Fields) -> Self {
        Value::Object(fields.into())
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Fields, A::Error> {
                let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(2).min(16));
                while let Some((k, v)) = access.next_entry::<Key, Value>()? {
                    entries.push((k, v));
                }
                Ok(Fields::from_entries(entries))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorted_last_value_wins_and_round_trips() {
        let f: Fields = serde_json::from_str(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(f.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(f["b"], json!(3));
        assert_eq!(serde_json::to_string(&f).unwrap(), r#"{"a":2,"b":3}"#);
        let map = json!({"z": "x", "a": null}).as_object().unwrap().clone();
        let g = Fields::from(map.clone());
        assert_eq!(Value::from(g.clone()), Value::Object(map));
        assert_eq!(g.get("a"), Some(&Value::Null));
        assert!(g.get("m").is_none());
    }
}
