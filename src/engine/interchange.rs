//! Offsets in the shape other tools use: the REST body `{"offsets": [{"partition", "offset"}]}`
//! that `GET /connectors/{name}/offsets` returns and `PATCH` takes, as curl, kcctl, the
//! Confluent CLI, Kafka's docs and Strimzi's `offsets.json` use it.
//!
//! Export writes it in canonical order; import turns it into a sealed kco file, checked by the
//! same rules as `kco validate`, with every problem pointing at the line of the input.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::model::file::{FileProblem, Metadata, OffsetsFile, ProblemKind, DEFAULT_SCHEMA_REF};
use crate::model::{canonical_json, checksum, sort_entries, ConnectorType, Fields, OffsetEntry};

/// What an imported file is about: the metadata the REST body does not carry.
#[derive(Debug, Clone)]
pub struct ImportMeta {
    pub name: String,
    pub cluster: String,
    /// `None`: inferred from the partitions' shape.
    pub connector_type: Option<ConnectorType>,
}

/// The REST body on one line, in canonical order: partitions sorted as in a kco file, keys
/// sorted, `partition` before `offset` as Connect writes it.
pub fn rest_body(offsets: &[OffsetEntry]) -> String {
    let entries: Vec<String> = sorted(offsets)
        .iter()
        .map(|e| {
            format!(
                "{{\"partition\":{},\"offset\":{}}}",
                crate::model::canonical_fields(&e.partition),
                crate::model::canonical_fields(&e.offset)
            )
        })
        .collect();
    format!("{{\"offsets\":[{}]}}\n", entries.join(","))
}

/// The REST body pretty-printed as Jackson's default printer does (Strimzi's `offsets.json`):
/// `"key" : value`, two-space indents, array items on the bracket's line. No final newline.
pub fn jackson_body(offsets: &[OffsetEntry]) -> String {
    let entries = sorted(offsets);
    if entries.is_empty() {
        return "{\n  \"offsets\" : [ ]\n}".into();
    }
    let items: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{{\n    \"partition\" : {},\n    \"offset\" : {}\n  }}",
                jackson_object(&e.partition, 4),
                jackson_object(&e.offset, 4)
            )
        })
        .collect();
    format!("{{\n  \"offsets\" : [ {} ]\n}}", items.join(", "))
}

fn jackson_object(fields: &Fields, indent: usize) -> String {
    if fields.is_empty() {
        return "{ }".into();
    }
    let mut keys: Vec<&str> = fields.keys().map(|k| k.as_str()).collect();
    keys.sort();
    let lines: Vec<String> = keys
        .iter()
        .map(|k| {
            format!(
                "{:w$}{} : {}",
                "",
                canonical_json(&Value::String(k.to_string())),
                canonical_json(&fields[*k]),
                w = indent + 2
            )
        })
        .collect();
    format!("{{\n{}\n{:indent$}}}", lines.join(",\n"), "")
}

fn sorted(offsets: &[OffsetEntry]) -> Vec<OffsetEntry> {
    let mut v = offsets.to_vec();
    sort_entries(&mut v);
    v
}

/// Parses a REST body and makes a sealed file of it. `line_base` is added to every line (the
/// body's position inside a larger file, e.g. a ConfigMap). Every problem names `path` and the
/// line in the input: syntax, unknown fields, sink shapes, duplicate partitions, values that
/// are not primitives, a type that cannot be inferred.
pub fn import_body(
    path: &Path,
    text: &str,
    line_base: usize,
    meta: &ImportMeta,
) -> Result<OffsetsFile, Vec<FileProblem>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        offsets: Vec<OffsetEntry>,
    }
    let problem = |kind, line: Option<usize>, message: String| {
        FileProblem::new(kind, path, line.map(|l| l + line_base), message)
    };
    let body: Body = serde_json::from_str(text).map_err(|e| {
        let kind = if e.is_syntax() || e.is_eof() {
            ProblemKind::Syntax
        } else {
            ProblemKind::Schema
        };
        let message = format!("not a Connect offsets body ({{\"offsets\": [...]}}): {e}");
        let message = match message.find(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        vec![problem(kind, Some(e.line()), message)]
    })?;
    let lines = entry_lines(text);
    let connector_type = match meta.connector_type.or_else(|| infer_type(&body.offsets)) {
        Some(t) => t,
        None => {
            let why = if body.offsets.is_empty() {
                "the offsets list is empty"
            } else {
                "some partitions have the sink shape (kafka_topic, kafka_partition) and some not"
            };
            return Err(vec![problem(
                ProblemKind::Invalid,
                Some(1),
                format!("cannot tell source from sink: {why}; pass --type source|sink"),
            )]);
        }
    };
    let metadata = Metadata::new(&meta.name, &meta.cluster, connector_type);
    // Checked in input order by the file format's own rules, on the file as it would be
    // rendered; each problem's line in that rendering is mapped back to the input's line.
    let mut file = OffsetsFile::new(metadata, Vec::new(), None);
    file.offsets = body.offsets;
    file.checksum = checksum(&file.offsets);
    let rendered = file.render(DEFAULT_SCHEMA_REF);
    let item_lines: Vec<usize> = rendered
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- partition"))
        .map(|(i, _)| i + 1)
        .collect();
    let problems: Vec<FileProblem> = file
        .check(path, &rendered)
        .into_iter()
        .map(|p| {
            // The item holding the line (a problem may point inside it, at a value).
            let index = p
                .line
                .and_then(|l| item_lines.iter().rposition(|&i| i <= l));
            let line = index.and_then(|i| lines.get(i).copied());
            problem(p.kind, line, p.message)
        })
        .collect();
    if !problems.is_empty() {
        return Err(problems);
    }
    file.seal();
    Ok(file)
}

/// `sink` when every partition is `{kafka_topic, kafka_partition}`, `source` when none is;
/// `None` when the list is empty or mixed.
pub fn infer_type(offsets: &[OffsetEntry]) -> Option<ConnectorType> {
    let sink_shaped = |e: &&OffsetEntry| {
        e.partition.len() == 2
            && e.partition.contains_key("kafka_topic")
            && e.partition.contains_key("kafka_partition")
    };
    let sinks = offsets.iter().filter(sink_shaped).count();
    match (sinks, offsets.len()) {
        (_, 0) => None,
        (s, n) if s == n => Some(ConnectorType::Sink),
        (0, _) => Some(ConnectorType::Source),
        _ => None,
    }
}

/// The 1-based line where each item of the top-level `offsets` array starts: every `{` opened
/// inside exactly two containers (the body object and the array), outside strings.
fn entry_lines(text: &str) -> Vec<usize> {
    let (mut depth, mut line, mut in_string, mut escaped) = (0usize, 1usize, false, false);
    let mut out = Vec::new();
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                if c == '{' && depth == 2 {
                    out.push(line);
                }
                depth += 1;
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entries(v: Value) -> Vec<OffsetEntry> {
        serde_json::from_value(v).unwrap()
    }

    fn meta(t: Option<ConnectorType>) -> ImportMeta {
        ImportMeta {
            name: "c".into(),
            cluster: "a".into(),
            connector_type: t,
        }
    }

    #[test]
    fn rest_body_is_canonical_and_reads_back() {
        let e = entries(json!([
            {"partition": {"kafka_topic": "t", "kafka_partition": 10}, "offset": {"kafka_offset": 1}},
            {"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": 5}}
        ]));
        let body = rest_body(&e);
        assert_eq!(
            body,
            "{\"offsets\":[{\"partition\":{\"kafka_partition\":2,\"kafka_topic\":\"t\"},\"offset\":{\"kafka_offset\":5}},{\"partition\":{\"kafka_partition\":10,\"kafka_topic\":\"t\"},\"offset\":{\"kafka_offset\":1}}]}\n"
        );
        let f = import_body(Path::new("in.json"), &body, 0, &meta(None)).unwrap();
        assert_eq!(f.metadata.connector_type, ConnectorType::Sink);
        assert_eq!(rest_body(&f.offsets), body);
        assert!(f.is_sealed());
    }

    #[test]
    fn jackson_pretty_print_matches_strimzi() {
        let e = entries(
            json!([{"partition": {"filename": "/opt/kafka/LICENSE"}, "offset": {"position": 15295}}]),
        );
        assert_eq!(
            jackson_body(&e),
            "{\n  \"offsets\" : [ {\n    \"partition\" : {\n      \"filename\" : \"/opt/kafka/LICENSE\"\n    },\n    \"offset\" : {\n      \"position\" : 15295\n    }\n  } ]\n}"
        );
        assert_eq!(jackson_body(&[]), "{\n  \"offsets\" : [ ]\n}");
        let f = import_body(Path::new("x"), &jackson_body(&e), 0, &meta(None)).unwrap();
        assert_eq!(f.metadata.connector_type, ConnectorType::Source);
        assert_eq!(f.offsets, e);
    }

    #[test]
    fn problems_point_at_the_input_line() {
        let text = "{\"offsets\": [\n {\"partition\": {\"kafka_topic\": \"t\", \"kafka_partition\": 0}, \"offset\": {\"kafka_offset\": 1}},\n {\"partition\": {\"kafka_topic\": \"t\", \"kafka_partition\": 0}, \"offset\": {\"kafka_offset\": -2}}\n]}";
        let problems = import_body(Path::new("in.json"), text, 10, &meta(None)).unwrap_err();
        assert!(problems.iter().all(|p| p.line == Some(13)), "{problems:?}");
        assert!(problems
            .iter()
            .any(|p| p.kind == ProblemKind::DuplicatePartition));
        assert!(problems.iter().any(|p| p.message.contains("kafka_offset")));

        let bad = import_body(Path::new("in.json"), "{\"offsets\": [\n{]", 0, &meta(None));
        assert_eq!(bad.unwrap_err()[0].line, Some(2));
        let unknown = import_body(Path::new("in.json"), "{\"offset\": []}", 0, &meta(None));
        assert_eq!(unknown.unwrap_err()[0].kind, ProblemKind::Schema);
    }

    #[test]
    fn type_is_inferred_only_when_unambiguous() {
        let empty = import_body(Path::new("e"), "{\"offsets\":[]}", 0, &meta(None));
        assert!(empty.unwrap_err()[0].message.contains("--type"));
        let f = import_body(
            Path::new("e"),
            "{\"offsets\":[]}",
            0,
            &meta(Some(ConnectorType::Sink)),
        )
        .unwrap();
        assert!(f.offsets.is_empty());
        let mixed = entries(json!([
            {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 1}},
            {"partition": {"filename": "f"}, "offset": {"position": 1}}
        ]));
        assert_eq!(infer_type(&mixed), None);
        // Given as source, sink-shaped partitions are fine (a source may use those keys).
        let src = import_body(
            Path::new("e"),
            &rest_body(&mixed),
            0,
            &meta(Some(ConnectorType::Source)),
        );
        assert!(src.is_ok());
    }

    #[test]
    fn nested_values_are_refused_with_their_line() {
        let text =
            "{\"offsets\":[\n{\"partition\":{\"f\":\"x\"},\"offset\":{\"p\":{\"deep\":1}}}]}";
        let p =
            import_body(Path::new("n"), text, 0, &meta(Some(ConnectorType::Source))).unwrap_err();
        assert_eq!(p[0].line, Some(2), "{p:?}");
    }
}
