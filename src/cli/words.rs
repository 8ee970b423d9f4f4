//! kco's words, written once (docs/output.md): how a partition, an offset and a count read
//! in every command's text and markdown.

use crate::model::{canonical_fields, sink_partition, Fields};

/// A partition as every command names it: `topic/partition` for a sink, its canonical JSON
/// otherwise.
pub fn partition(p: &Fields) -> String {
    match sink_partition(p) {
        Some((t, n)) => format!("{t}/{n}"),
        None => canonical_fields(p),
    }
}

/// An offset as its canonical JSON; `(none)` when absent.
pub fn offset(o: Option<&Fields>) -> String {
    o.map(canonical_fields).unwrap_or_else(|| "(none)".into())
}

pub use crate::text::count;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(v: serde_json::Value) -> Fields {
        v.as_object().unwrap().clone().into()
    }

    #[test]
    fn one_spelling_each() {
        let sink = f(json!({"kafka_topic": "orders", "kafka_partition": 0}));
        assert_eq!(partition(&sink), "orders/0");
        let src = f(json!({"filename": "/data/in.txt"}));
        assert_eq!(partition(&src), r#"{"filename":"/data/in.txt"}"#);
        let o = f(json!({"kafka_offset": 1000}));
        assert_eq!(offset(Some(&o)), r#"{"kafka_offset":1000}"#);
        assert_eq!(offset(None), "(none)");
    }
}
