//! JSON output in tests: read as one document, compared whole.

use serde_json::Value;

/// `text` as one JSON document; the test fails naming the text when it is not one.
pub fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `got` is exactly `expected`; the test fails showing `got` in full.
pub fn assert_json_eq(got: &Value, expected: &Value) {
    assert_eq!(
        got,
        expected,
        "{}",
        serde_json::to_string_pretty(got).unwrap()
    );
}
