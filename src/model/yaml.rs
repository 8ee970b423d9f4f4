//! The YAML spelling of snapshot files, written by hand rather than by `serde_yaml`.
//!
//! `serde_yaml` reads its own output back faithfully, but it writes strings such as `yes`,
//! `on` or `2024-01-01` unquoted and floats such as `1e300` without a dot: YAML 1.1 readers
//! (PyYAML, Ruby, many editors and CI tools) take those for booleans, dates and strings. A
//! snapshot file is meant to be read by other tools too, so every scalar here is spelled the
//! same way under YAML 1.1 and 1.2:
//!
//! - a string is plain only when it is made of `A-Z a-z 0-9 _ . / - :`, starts with a letter,
//!   `_` or `/`, does not end with `:`, and is not a YAML 1.1 boolean or null word (`yes`, `Off`, `null`, ...);
//!   otherwise it is double-quoted, with every non-printable or line-breaking character
//!   escaped (`\n`, `\t`, `\uXXXX`, ...);
//! - integers are written in decimal; floats always carry a dot and a signed exponent
//!   (`1.0`, `-0.0`, `1.0e+300`), which both YAML versions read as floats;
//! - map keys are sorted by their bytes.

use std::fmt::Write;

use serde_json::{Number, Value};

use super::Fields;

/// YAML 1.1 words that resolve to booleans or null (compared case-insensitively).
const RESERVED_WORDS: &[&str] = &["y", "n", "yes", "no", "true", "false", "on", "off", "null"];

/// Whether `s` can be written without quotes and read back as the same string by any YAML
/// reader.
pub(super) fn is_plain_safe(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '/')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | ':'))
        // `a:` at the end of a line would start a mapping.
        && !s.ends_with(':')
        && !RESERVED_WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

/// A string scalar: plain when safe, else double-quoted with escapes.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_string(&mut out, s);
    out
}

/// [`string`], appended to `out`.
pub fn push_string(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Not printable in YAML, or a line break to YAML 1.1 readers (U+0085, U+2028,
            // U+2029), or a byte-order mark.
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number: integers in decimal, floats with a dot and, when there is one, a signed exponent.
pub fn number(n: &Number) -> String {
    if n.is_f64() {
        // serde_json spells floats the shortest way that reads back exactly (`1e300`, `5e-324`,
        // `1.0`).
        let s = n.to_string();
        match s.split_once(['e', 'E']) {
            Some((mantissa, exp)) => {
                let mantissa = if mantissa.contains('.') {
                    mantissa.to_string()
                } else {
                    format!("{mantissa}.0")
                };
                let exp = if exp.starts_with(['-', '+']) {
                    exp.to_string()
                } else {
                    format!("+{exp}")
                };
                format!("{mantissa}e{exp}")
            }
            None if s.contains('.') => s,
            None => format!("{s}.0"),
        }
    } else {
        n.to_string()
    }
}

/// A primitive value. Nested maps and arrays (invalid in offsets, but representable) are
/// written as double-quoted-key flow collections so that nothing is lost.
pub fn value(v: &Value) -> String {
    let mut out = String::new();
    push_value(&mut out, v);
    out
}

/// [`value`], appended to `out`.
pub fn push_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // Integers, the common case, without an intermediate string.
        Value::Number(n) if !n.is_f64() => {
            let _ = write!(out, "{n}");
        }
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => push_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_string(out, k);
                out.push_str(": ");
                push_value(out, &map[k.as_str()]);
            }
            out.push('}');
        }
    }
}

/// Writes `key:` and a block map of `fields` at `indent` spaces (`{}` when empty).
pub fn write_fields(out: &mut String, indent: usize, key: &str, fields: &Fields) {
    if fields.is_empty() {
        out.push_str(key);
        out.push_str(": {}\n");
        return;
    }
    out.push_str(key);
    out.push_str(":\n");
    // `Fields` iterates in key order.
    for (k, v) in fields {
        out.extend(std::iter::repeat_n(' ', indent));
        push_string(out, k);
        out.push_str(": ");
        push_value(out, v);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_strings_are_quoted_and_plain_words_are_not() {
        for s in [
            "yes",
            "No",
            "ON",
            "off",
            "y",
            "null",
            "~",
            "true",
            "",
            " x",
            "0123",
            "1e3",
            "0x1F",
            "2024-01-01",
            ".inf",
            "a: b",
            "host:",
            "a b",
            "-x",
        ] {
            assert!(string(s).starts_with('"'), "{s} -> {}", string(s));
        }
        for s in [
            "orders",
            "kafka_topic",
            "/tmp/in.txt",
            "org.apache.X",
            "a-b_c",
        ] {
            assert_eq!(string(s), s);
        }
        assert_eq!(
            string("a\"b\\c\nd\u{2028}\u{85}"),
            r#""a\"b\\c\nd\u2028\u0085""#
        );
    }

    #[test]
    fn floats_carry_a_dot_and_a_signed_exponent() {
        let f = |x: f64| number(&Number::from_f64(x).unwrap());
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(1e300), "1.0e+300");
        assert_eq!(f(5e-324), "5.0e-324");
        assert_eq!(f(1.5e300), "1.5e+300");
        assert_eq!(number(&Number::from(u64::MAX)), "18446744073709551615");
    }
}
