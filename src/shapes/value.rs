//! Offset values as numbers and binlog file names, for the checks, the order and the
//! readable forms.

use serde_json::Value;

/// An integer, or a string of digits, as a wide integer.
pub fn as_i128(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// `<stem>.<number>`: the stem and the number.
pub fn binlog_file(s: &str) -> Option<(&str, u64)> {
    let (stem, num) = s.rsplit_once('.')?;
    if stem.is_empty() || num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stem, num.parse().ok()?))
}
