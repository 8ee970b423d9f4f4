//! Tests of the v1 file format.

use super::*;
use serde_json::json;

fn sample(kind: ConnectorType, offsets: Value) -> OffsetsFile {
    OffsetsFile::new(
        Metadata {
            name: "c1".into(),
            cluster: "a".into(),
            kafka_cluster_id: Some("abc".into()),
            connect_version: Some("4.1.0".into()),
            connector_class: Some("X".into()),
            connector_type: kind,
            state: Some(ConnectorState::Running),
            captured_at: Some("2026-01-01T00:00:00Z".into()),
            observed_at: None,
            offsets_from: None,
        },
        serde_json::from_value(offsets).unwrap(),
        None,
    )
}

#[test]
fn render_then_parse_round_trips_and_is_canonical() {
    let f = sample(
        ConnectorType::Sink,
        json!([{"partition":{"kafka_topic":"t","kafka_partition":1},"offset":{"kafka_offset":5}}]),
    );
    let text = f.render(DEFAULT_SCHEMA_REF);
    assert!(text.starts_with("# yaml-language-server: $schema="));
    let back = OffsetsFile::parse(Path::new("x.yaml"), &text).unwrap();
    assert_eq!(back, f);
    assert!(back.is_canonical_text(&text));
    assert!(back.check(Path::new("x.yaml"), &text).is_empty());
}

/// A file read through Kafka says so (`offsetsFrom: kafka`) after `observedAt`, and parses
/// back; another value is an error naming its line.
#[test]
fn where_the_offsets_were_read_renders_parses_back_and_is_checked() {
    let mut f = sample(
        ConnectorType::Source,
        json!([{"partition":{"filename":"/a"},"offset":{"position":5}}]),
    );
    f.metadata.offsets_from = Some(OffsetsFrom::Kafka);
    let text = f.render(DEFAULT_SCHEMA_REF);
    assert!(
        text.contains("  capturedAt: \"2026-01-01T00:00:00Z\"\n  offsetsFrom: kafka\n"),
        "{text}"
    );
    let back = OffsetsFile::parse(Path::new("x.yaml"), &text).unwrap();
    assert_eq!(back, f);
    assert!(back.is_canonical_text(&text));
    let bad = text.replace("offsetsFrom: kafka", "offsetsFrom: rest");
    let e = OffsetsFile::parse(Path::new("x.yaml"), &bad).unwrap_err();
    let line = bad.lines().position(|l| l.contains("offsetsFrom")).unwrap() + 1;
    assert_eq!(e.line, Some(line), "{e:?}");
}

#[test]
fn edited_offset_fails_checksum_with_line() {
    let f = sample(
        ConnectorType::Sink,
        json!([{"partition":{"kafka_topic":"t","kafka_partition":1},"offset":{"kafka_offset":5}}]),
    );
    let text = f
        .render(DEFAULT_SCHEMA_REF)
        .replace("kafka_offset: 5", "kafka_offset: 6");
    let back = OffsetsFile::parse(Path::new("x.yaml"), &text).unwrap();
    let problems = back.check(Path::new("x.yaml"), &text);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("checksum mismatch"));
    let line = problems[0].line.unwrap();
    assert!(text.lines().nth(line - 1).unwrap().starts_with("checksum:"));
}

#[test]
fn duplicate_and_bad_sink_shapes_point_at_the_item() {
    let mut f = sample(
        ConnectorType::Sink,
        json!([
            {"partition":{"kafka_topic":"t","kafka_partition":1},"offset":{"kafka_offset":5}},
            {"partition":{"kafka_topic":"t","kafka_partition":2},"offset":{"kafka_offset":-1}}
        ]),
    );
    f.offsets.push(f.offsets[0].clone());
    f.seal();
    let text = f.render(DEFAULT_SCHEMA_REF);
    let problems = f.check(Path::new("x.yaml"), &text);
    let msgs: Vec<_> = problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert!(
        msgs.iter().any(|(_, m)| m.contains("duplicate partition")),
        "{msgs:?}"
    );
    let neg = problems
        .iter()
        .find(|p| p.message.contains("kafka_offset"))
        .unwrap();
    let line = neg.line.unwrap();
    assert_eq!(
        text.lines().nth(line - 1).unwrap().trim_start(),
        "kafka_offset: -1",
        "the value's line: {text}\n{line}"
    );
}

#[test]
fn a_wrong_typed_value_is_pointed_at_on_its_own_line() {
    let text = "apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: x\n  cluster: a\n  type: sink\noffsets:\n  - partition:\n      kafka_topic: t\n      kafka_partition: 0\n    offset:\n      kafka_offset: abc\n  - partition:\n      kafka_topic: t\n      kafka_partition: 1\n    offset:\n      kafka_offset:\n        - 1\n  - partition:\n      kafka_topic: t\n      kafka_partition: \"2\"\n      extra: 1\n    offset:\n      kafka_offset: 3\nchecksum: sha256:00\n";
    let f = OffsetsFile::parse(Path::new("x.yaml"), text).unwrap();
    let lines: Vec<(usize, String)> = f
        .check(Path::new("x.yaml"), text)
        .into_iter()
        .filter(|p| !p.message.contains("checksum"))
        .map(|p| (p.line.unwrap(), p.message))
        .collect();
    let at = |n: usize| text.lines().nth(n - 1).unwrap().trim().to_string();
    let shown: Vec<(String, &str)> = lines
        .iter()
        .map(|(n, m)| (at(*n), m.split(',').next().unwrap()))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "kafka_offset: abc".to_string(),
                "sink offset needs `kafka_offset`"
            ),
            ("- 1".to_string(), "sink offset needs `kafka_offset`"),
            (
                "kafka_partition: \"2\"".to_string(),
                "sink partition needs `kafka_partition`"
            ),
            (
                "extra: 1".to_string(),
                "unexpected key `extra` in a sink partition"
            ),
        ],
        "{lines:?}"
    );
}

#[test]
fn unknown_version_and_fields_are_errors_with_lines() {
    let e = OffsetsFile::parse(
        Path::new("f.yaml"),
        "apiVersion: kco/v9\nkind: ConnectorOffsets\n",
    )
    .unwrap_err();
    assert!(e.message.contains("unsupported apiVersion"));
    assert_eq!(e.line, Some(1));
    let f = sample(ConnectorType::Source, json!([]));
    let text = f
        .render(DEFAULT_SCHEMA_REF)
        .replace("checksum:", "extra: 1\nchecksum:");
    let e = OffsetsFile::parse(Path::new("f.yaml"), &text).unwrap_err();
    assert!(e.message.contains("unknown field `extra`"), "{e}");
    assert!(e.line.is_some());
    assert!(e.to_string().starts_with("f.yaml:"), "{e}");
}

#[test]
fn shape_errors_name_a_line() {
    let f = sample(
        ConnectorType::Sink,
        json!([{"partition":{"kafka_topic":"t","kafka_partition":1},"offset":{"kafka_offset":5}}]),
    );
    let text = f.render(DEFAULT_SCHEMA_REF);
    for (from, to) in [
        ("  cluster: a\n", ""),
        ("checksum: ", "checksumx: "),
        ("type: sink", "type: sideways"),
        ("  offset:\n    kafka_offset: 5\n", ""),
        ("offsets:\n", "offsets: 3\n"),
    ] {
        let bad = text.replace(from, to);
        let e = OffsetsFile::parse(Path::new("f.yaml"), &bad).unwrap_err();
        eprintln!("{from:?}: {e}");
        assert!(e.line.is_some(), "{from:?}: {e:?}");
    }
}

#[test]
fn plain_secret_in_config_is_a_problem_on_its_line() {
    let mut f = sample(ConnectorType::Source, json!([]));
    f.config = Some(
        [
            ("connection.password", "hunter2"),
            ("db.password", "${kco:env:X}"),
            ("topic", "t"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    );
    let text = f.render(DEFAULT_SCHEMA_REF);
    let problems = f.check(Path::new("x.yaml"), &text);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(!problems[0].message.contains("hunter2"));
    let line = problems[0].line.unwrap();
    assert!(text
        .lines()
        .nth(line - 1)
        .unwrap()
        .contains("connection.password"));
}

#[test]
fn syntax_error_names_line() {
    let e = OffsetsFile::parse(Path::new("f.yaml"), "apiVersion: kco/v1\nkind: [\n").unwrap_err();
    assert!(e.line.is_some(), "{e:?}");
}

/// An unclosed bracket is pointed at where it opens, not lines later where the parser gave
/// up; with the column.
#[test]
fn an_unclosed_bracket_is_pointed_at_on_its_own_line_with_a_column() {
    let text = "apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: x\n  bad: [unclosed\n\nspec: {}\n";
    let e = OffsetsFile::parse(Path::new("f.yaml"), text).unwrap_err();
    assert_eq!((e.line, e.column), (Some(5), Some(8)), "{e:?}");
    assert_eq!(e.to_string().split(": ").next(), Some("f.yaml:5:8"));
    // An error that is where the parser saw it stays there.
    let e = OffsetsFile::parse(Path::new("f.yaml"), "a: 1\n@b: 2\n").unwrap_err();
    assert_eq!(e.line, Some(2), "{e:?}");
}

#[test]
fn conflict_markers_are_an_unresolved_merge_naming_their_lines() {
    let f = sample(
        ConnectorType::Sink,
        json!([{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}]),
    );
    let text = f.render(DEFAULT_SCHEMA_REF).replace(
        "    kafka_offset: 5\n",
        "<<<<<<< HEAD\n    kafka_offset: 5\n||||||| base\n    kafka_offset: 4\n=======\n    kafka_offset: 6\n>>>>>>> nightly\n",
    );
    let p = OffsetsFile::parse(Path::new("x.yaml"), &text).unwrap_err();
    assert_eq!(p.kind, ProblemKind::MergeConflict);
    assert_eq!(p.line, Some(18));
    assert_eq!(
        p.to_string(),
        "x.yaml:18: unresolved merge conflict: conflict markers on lines 18, 20, 22, 24"
    );
    // A string that merely holds the characters is no marker.
    let mut f = f;
    f.metadata.name = "<<<<<<< x".into();
    let text = f.render(DEFAULT_SCHEMA_REF);
    assert!(
        OffsetsFile::parse(Path::new("x.yaml"), &text).is_ok(),
        "{text}"
    );
}
