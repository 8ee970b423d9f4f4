//! Exact types across GET -> file -> PATCH: every JSON offsets document survives the YAML file
//! unchanged, and the PATCH body built from the file equals what `GET` returned.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Number, Value};

use super::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use super::{canonical_json, sort_entries, ConnectorType, OffsetEntry, PatchEntry};

/// Strings that a YAML reader could take for something else.
const TRICKY: &[&str] = &[
    "0123",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Y",
    "N",
    "NO",
    "True",
    "TRUE",
    "False",
    "null",
    "Null",
    "NULL",
    "~",
    "1e3",
    "1E3",
    "-1e3",
    "0x1F",
    "0o17",
    "0b101",
    "2024-01-01",
    "2024-01-01T00:00:00Z",
    "",
    " x",
    "x ",
    " ",
    "true",
    "false",
    ".inf",
    "-.inf",
    ".nan",
    ".NaN",
    "+1",
    "1_000",
    "1.",
    ".5",
    "-0",
    "-0.0",
    "0.0",
    "12:30:00",
    "1:20",
    "=",
    "<<",
    "- a",
    "a: b",
    "#x",
    "x #y",
    "'q'",
    "\"dq\"",
    "@x",
    "`x",
    "!tag",
    "&anchor",
    "*alias",
    "%x",
    "{a: 1}",
    "[1]",
    "?",
    ":",
    "-",
    "---",
    "...",
    "a\nb",
    "a\n",
    "\n",
    "\t",
    "tab\there",
    "\r\n",
    "é",
    "日本語",
    "🦀",
    "\u{feff}bom",
    "\u{85}",
    "\u{2028}",
    "\u{0}",
    "\u{7f}",
    "\\",
    "a.b.c",
    "host:9092",
    "nan",
    "NaN",
    "inf",
    "Infinity",
    "Yes",
    "ON",
    "Off",
    "0o17",
    "+.5",
    "1_0",
    "file:/tmp/x",
    "${file:/x:y}",
    "9223372036854775808",
    "18446744073709551616",
];

fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(TRICKY).prop_map(str::to_string),
        2 => any::<String>(),
        1 => "[a-z0-9 .:_-]{0,12}",
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        proptest::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1e300,
            -1e300,
            1e-300,
            5e-324,
            1e16,
            1e15,
            1e21,
            123456789.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            9007199254740993.0,
        ]),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
    ]
}

fn primitive() -> impl Strategy<Value = Value> {
    prop_oneof![
        proptest::sample::select(vec![i64::MIN, -1, 0, 1, i64::MAX]).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        proptest::sample::select(vec![i64::MAX as u64 + 1, u64::MAX]).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        float().prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        tricky_string().prop_map(Value::String),
    ]
}

fn fields() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(tricky_string(), primitive(), 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn offsets_doc() -> impl Strategy<Value = Value> {
    proptest::collection::vec((fields(), fields()), 0..4).prop_map(|v| {
        let items: Vec<Value> = v
            .into_iter()
            .map(|(p, o)| json!({"partition": p, "offset": o}))
            .collect();
        json!({ "offsets": items })
    })
}

fn metadata() -> Metadata {
    Metadata::new("c", "a", ConnectorType::Source)
}

/// GET body -> file text -> parsed file -> PATCH body. Returns the PATCH body (as the client
/// sends it) and the offsets read back from the file.
fn through_file(get_body: &str) -> (Value, Vec<OffsetEntry>, String) {
    let doc: Value = serde_json::from_str(get_body).unwrap();
    let entries: Vec<OffsetEntry> = serde_json::from_value(doc["offsets"].clone()).unwrap();
    let text = OffsetsFile::new(metadata(), entries, None).render(DEFAULT_SCHEMA_REF);
    let back = OffsetsFile::parse(Path::new("t.yaml"), &text)
        .unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"));
    assert!(back.is_sealed(), "{text}");
    assert!(back.is_canonical_text(&text), "{text}");
    let patch: Vec<PatchEntry> = back
        .offsets
        .iter()
        .map(|e| PatchEntry {
            partition: e.partition.clone(),
            offset: Some(e.offset.clone()),
        })
        .collect();
    (json!({ "offsets": patch }), back.offsets, text)
}

fn sorted(doc: &Value) -> Vec<OffsetEntry> {
    let mut e: Vec<OffsetEntry> = serde_json::from_value(doc["offsets"].clone()).unwrap();
    sort_entries(&mut e);
    e
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_offsets_document_survives_the_file(doc in offsets_doc()) {
        let body = serde_json::to_string(&doc).unwrap();
        let original: Value = serde_json::from_str(&body).unwrap();
        let (patch, back, text) = through_file(&body);
        let want = sorted(&original);
        prop_assert_eq!(&back, &want, "file text:\n{}", text);
        let want_body = json!({ "offsets": want });
        prop_assert_eq!(&patch, &want_body);
        // Same bytes on the wire: no 1 vs 1.0, no string vs number.
        prop_assert_eq!(canonical_json(&patch), canonical_json(&want_body));
    }
}

#[test]
fn edge_values_keep_their_exact_type() {
    let body = r#"{"offsets":[{"partition":{"a.b":"0123","host:port":"yes","k":"~","e":""},
        "offset":{"min":-9223372036854775808,"max":18446744073709551615,"one":1,"onef":1.0,
        "negz":-0.0,"big":1e300,"s":"1e3","h":"0x1F","d":"2024-01-01","sp":" x","t":"true",
        "n":null,"b":false,"no":"no","on":"on","nul":"null","u":"日本🦀"}}]}"#;
    let original: Value = serde_json::from_str(body).unwrap();
    let (patch, _, text) = through_file(body);
    assert_eq!(canonical_json(&patch), canonical_json(&original), "{text}");
    let o = &patch["offsets"][0]["offset"];
    assert!(
        o["one"].is_u64() && o["onef"].is_f64() && o["max"].is_u64(),
        "{text}"
    );
    assert_eq!(
        o["negz"].as_f64().map(f64::is_sign_negative),
        Some(true),
        "{text}"
    );
    assert_eq!(o["s"], json!("1e3"));
    assert_eq!(o["n"], Value::Null);
    // Portable: YAML 1.1 readers must not see booleans, dates or non-floats either.
    for quoted in [
        "\"0123\"",
        "\"yes\"",
        "\"no\"",
        "\"on\"",
        "\"2024-01-01\"",
        "1.0e+300",
    ] {
        assert!(text.contains(quoted), "{quoted} in\n{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The line-by-line reading of kco's own layout gives what the YAML parser gives.
    #[test]
    fn the_fast_path_reads_what_the_yaml_parser_reads(doc in offsets_doc()) {
        let entries: Vec<OffsetEntry> = serde_json::from_value(doc["offsets"].clone()).unwrap();
        let text = OffsetsFile::new(metadata(), entries, None).render(DEFAULT_SCHEMA_REF);
        let slow: OffsetsFile = serde_yaml::from_str(&text).unwrap();
        if let Some((rest, fast)) = super::canonical_parse::split_offsets(&text) {
            prop_assert_eq!(&fast, &slow.offsets, "{}", text);
            let rest: OffsetsFile = serde_yaml::from_str(&rest).unwrap();
            prop_assert_eq!(rest.checksum, slow.checksum);
        }
    }
}

#[test]
fn the_fast_path_takes_kco_layout_and_leaves_the_rest() {
    let sink = "apiVersion: kco/v1\nkind: ConnectorOffsets\noffsets:\n- partition:\n    \
        kafka_partition: 0\n    kafka_topic: t\n  offset:\n    kafka_offset: 5\nchecksum: x\n";
    let (rest, e) = super::canonical_parse::split_offsets(sink).expect("canonical layout");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].offset["kafka_offset"], json!(5));
    assert!(rest.contains("offsets: []\nchecksum: x\n"), "{rest}");
    for odd in [
        sink.replace("kafka_offset: 5", "kafka_offset: 5.0"),
        sink.replace("kafka_offset: 5", "kafka_offset: 05"),
        sink.replace("kafka_topic: t", "kafka_topic: \"t\""),
        sink.replace("kafka_topic: t", "kafka_topic: yes"),
        sink.replace("    kafka_topic: t\n", "    kafka_topic: t # c\n"),
        sink.replace("    kafka_partition: 0\n    kafka_topic: t\n", ""),
        sink.replace("  offset:\n    kafka_offset: 5\n", ""),
        sink.replace(
            "    kafka_topic: t\n",
            "    kafka_topic: t\n    kafka_topic: u\n",
        ),
        sink.replace("    kafka_topic", "     kafka_topic"),
    ] {
        assert!(
            super::canonical_parse::split_offsets(&odd).is_none(),
            "{odd}"
        );
    }
}
