//! [`Fields`]: a partition or an offset, a small flat map of JSON values.
//!
//! A connector's partitions and offsets have one to a handful of keys each, and there can be
//! a million of them. `serde_json::Map` is a `BTreeMap`, whose smallest node holds eleven
//! entries (about 630 bytes for one key); `Fields` is a slice of entries sorted by key (56
//! bytes per key), with the same API for what kco uses. Deserializing builds it directly, so
//! no `Value` is built first. Keys iterate sorted, as `serde_json::Map` without
//! `preserve_order` does; a repeated key keeps its last value, as there.
//!
//! The slice is shared (`Arc`): a comparison's rows, a diff's sides and an apply's plan hold
//! the same partitions and offsets as the files and answers they come from, instead of a copy
//! each (a wide connector's diff held 22 MB of copies). Changing one copy leaves the others
//! as they were.

use std::fmt;
use std::sync::Arc;

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
#[derive(Clone, PartialEq)]
pub struct Fields(Arc<[(Key, Value)]>);

/// An entry of [`Fields`].
type Entry = (Key, Value);

impl Default for Fields {
    fn default() -> Self {
        Fields::new()
    }
}

impl Fields {
    pub fn new() -> Self {
        Fields(Arc::new([]))
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
        if self.0.len() <= INLINE {
            // A few keys: comparing lengths first passes over most of them without reading
            // a byte of either name.
            return self
                .0
                .iter()
                .find(|(k, _)| k.len() == key.len() && k.as_str() == key)
                .map(|(_, v)| v);
        }
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`, returning its previous value. (The entries are copied: build a large map
    /// with `collect`.)
    pub fn insert(&mut self, key: impl Into<Key>, value: Value) -> Option<Value> {
        let key = key.into();
        let mut entries = self.0.to_vec();
        let old = match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut entries[i].1, value)),
            Err(i) => {
                entries.insert(i, (key, value));
                None
            }
        };
        self.0 = entries.into();
        old
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.find(key).ok()?;
        let mut entries = self.0.to_vec();
        let old = entries.remove(i).1;
        self.0 = entries.into();
        Some(old)
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
    fn from_entries(mut entries: Vec<Entry>) -> Self {
        if !sorted_unique(&entries) {
            entries = sort_keep_last(entries);
        }
        Fields(entries.into())
    }
}

/// Whether the keys are in strictly increasing order.
fn sorted_unique(entries: &[Entry]) -> bool {
    entries.windows(2).all(|w| w[0].0 < w[1].0)
}

/// Sorted by key; among equal keys the last one given is kept.
fn sort_keep_last(mut entries: Vec<Entry>) -> Vec<Entry> {
    // Stable: among equal keys, the last one given ends up last, and is kept.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
    for e in entries {
        match kept.last_mut() {
            Some(last) if last.0 == e.0 => *last = e,
            _ => kept.push(e),
        }
    }
    kept
}

/// Up to this many entries are gathered on the stack.
const INLINE: usize = 4;

/// Gathers the entries of one [`Fields`]: the few keys of a partition or an offset stay on
/// the stack, and the map is allocated once, at its size (a million partitions are then a
/// million allocations, not three million).
#[derive(Default)]
pub(crate) struct FieldsBuilder {
    inline: [Option<Entry>; INLINE],
    len: usize,
    spilled: Vec<Entry>,
}

impl FieldsBuilder {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `key` was given already.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.inline.iter().flatten().any(|(k, _)| k == key)
            || self.spilled.iter().any(|(k, _)| k == key)
    }

    pub(crate) fn push(&mut self, key: Key, value: Value) {
        if self.len < INLINE {
            self.inline[self.len] = Some((key, value));
        } else {
            if self.spilled.is_empty() {
                self.spilled
                    .extend(self.inline.iter_mut().filter_map(Option::take));
            }
            self.spilled.push((key, value));
        }
        self.len += 1;
    }

    /// The map; a repeated key keeps its last value.
    pub(crate) fn build(self) -> Fields {
        if self.len > INLINE {
            return Fields::from_entries(self.spilled);
        }
        let sorted = (1..self.len).all(|i| {
            let (a, b) = (&self.inline[i - 1], &self.inline[i]);
            matches!((a, b), (Some(a), Some(b)) if a.0 < b.0)
        });
        let inline = self
            .inline
            .into_iter()
            .take(self.len)
            .map(|e| e.expect("counted"));
        if !sorted {
            return Fields::from_entries(inline.collect());
        }
        // `take` and `map` of an array keep the length known: the shared slice is allocated
        // once, with no vector first.
        Fields(inline.collect())
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
    /// The entries, copied where the map is shared.
    fn into_iter(self) -> Self::IntoIter {
        let entries: Vec<Entry> = self.0.iter().cloned().collect();
        entries.into_iter()
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
        for (k, v) in self.0.iter() {
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
                let mut entries = FieldsBuilder::default();
                while let Some((k, v)) = access.next_entry::<Key, Value>()? {
                    entries.push(k, v);
                }
                Ok(entries.build())
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
