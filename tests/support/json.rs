//! JSON output in tests: read as one document, compared whole.

use serde_json::Value;

/// `text` as one JSON document; the test fails naming the text when it is not one.
pub fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The checks of a `kco doctor -o json` document that failed, in its order.
pub fn failed_checks(doc: &Value) -> Vec<&Value> {
    let checks = doc["checks"]
        .as_array()
        .expect("a doctor document has checks");
    checks.iter().filter(|c| c["ok"] == false).collect()
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

/// The entry of the array `doc[list]` whose `name` is `name` (a connector of `ls -o json`, a
/// sink of `ls --orphaned`), if any; the test fails when `doc[list]` is not an array.
pub fn find_named<'a>(doc: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    doc[list]
        .as_array()
        .unwrap_or_else(|| panic!("`{list}` is not an array: {doc}"))
        .iter()
        .find(|e| e["name"] == name)
}

/// [`find_named`]'s entry; the test fails showing `doc` when there is none.
pub fn named<'a>(doc: &'a Value, list: &str, name: &str) -> &'a Value {
    find_named(doc, list, name).unwrap_or_else(|| panic!("no `{name}` in `{list}`: {doc}"))
}
