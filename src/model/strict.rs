//! Maps that refuse duplicate keys. serde's maps keep the last of two equal keys, so a hand
//! edit that writes `kafka_offset` twice, or a kco.yaml with two clusters of one name, would be
//! taken silently; these make it an error (with the file's line, like any parse error).

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// A JSON object whose keys, at every depth, are unique.
pub fn fields<'de, D: Deserializer<'de>>(d: D) -> Result<super::Fields, D::Error> {
    match d.deserialize_map(StrictValue)? {
        Value::Object(m) => Ok(m.into_iter().collect()),
        _ => Err(D::Error::custom("expected a map")),
    }
}

/// A map from names to `T` whose names are unique.
pub fn unique_map<'de, D, T>(d: D) -> Result<BTreeMap<String, T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = BTreeMap<String, T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(k) = a.next_key::<String>()? {
                if out.contains_key(&k) {
                    return Err(A::Error::custom(format!("duplicate key `{k}`")));
                }
                let v = a.next_value()?;
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(V(PhantomData))
}

struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a number JSON can hold")))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = a.next_element_seed(StrictValue)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = a.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(A::Error::custom(format!("duplicate key `{k}`")));
            }
            let v = a.next_value_seed(StrictValue)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct E {
        #[serde(deserialize_with = "fields")]
        f: crate::model::Fields,
    }

    #[test]
    fn duplicates_are_refused_at_any_depth_and_nan_too() {
        let ok = serde_yaml::from_str::<E>("f: {a: 1, b: {c: [1, {d: 2}]}}").unwrap();
        assert_eq!(ok.f["b"]["c"][1]["d"], 2);
        let e = serde_yaml::from_str::<E>("f: {a: 1, a: 2}").unwrap_err();
        assert!(e.to_string().contains("duplicate key `a`"), "{e}");
        let e = serde_yaml::from_str::<E>("f: {a: {b: 1, b: 1}}").unwrap_err();
        assert!(e.to_string().contains("duplicate key `b`"), "{e}");
        let e = serde_yaml::from_str::<E>("f: {a: .nan}").unwrap_err();
        assert!(e.to_string().contains("not a number JSON can hold"), "{e}");
        assert!(serde_json::from_str::<E>(r#"{"f": {"a": 1, "a": 2}}"#).is_err());
    }
}
