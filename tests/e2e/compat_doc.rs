//! docs/compatibility.md must show exactly what scripts/compat.sh last measured, as
//! recorded in docs/compatibility.json: the same releases, the same features, the same
//! cells. Needs no test bed.

use serde_json::Value;

use crate::harness::repo_root;

/// A cell as scripts/lib/compat-render.sh renders it (`render_cell`).
fn render(cell: &Value) -> String {
    let note = cell["note"].as_str().unwrap_or_default();
    match cell["status"].as_str().expect("status") {
        "ok" => "✅".to_string(),
        "refused" => format!("➖ {note}"),
        "failed" | "unavailable" => format!("❌ {note}"),
        other => panic!("unknown status {other}"),
    }
}

fn row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

#[test]
fn compatibility_doc_matches_the_measured_results() {
    let docs = repo_root().join("docs");
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(docs.join("compatibility.json")).expect("compatibility.json"),
    )
    .expect("compatibility.json is JSON");
    let md = std::fs::read_to_string(docs.join("compatibility.md")).expect("compatibility.md");
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("<!-- table:begin -->"))
        .skip(1)
        .take_while(|l| !l.starts_with("<!-- table:end -->"))
        .collect();
    assert!(
        table.len() >= 3,
        "no table between the markers in compatibility.md"
    );

    let features = json["features"].as_array().expect("features");
    let mut header = vec!["Kafka".to_string()];
    header.extend(
        features
            .iter()
            .map(|f| f["label"].as_str().unwrap().to_string()),
    );
    assert_eq!(
        row(table[0]),
        header,
        "the doc's columns are the measured features"
    );
    assert_eq!(row(table[1]).len(), header.len());

    let versions = json["versions"].as_array().expect("versions");
    assert!(!versions.is_empty());
    let rows = &table[2..];
    assert_eq!(rows.len(), versions.len(), "one row per measured release");
    for (line, v) in rows.iter().zip(versions) {
        let mut expected = vec![v["version"].as_str().unwrap().to_string()];
        for f in features {
            let key = f["key"].as_str().unwrap();
            expected.push(render(&v["cells"][key]));
        }
        assert_eq!(row(line), expected, "the row of {}", v["version"]);
    }
    let command = json["command"].as_str().expect("command");
    assert!(
        md.contains(&format!("Produced by `{command}`")),
        "the doc names the command that produced it"
    );
}
