//! `kco schema`: the JSON Schema of the snapshot file format.

use schemars::schema_for;

use super::Context;
use crate::error::Result;

/// Print the JSON Schema of the snapshot file format (kco/v1), or the offset shapes table
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "The schema is generated from the Rust types; the copy in \
schemas/connector-offsets-v1.json is kept current by a test. Editors with the YAML language \
server use it through each file's first-line $schema comment.\n\n\
--shapes prints the offset shapes in force: the built-in table (schemas/shapes.yaml) with the \
entries of kco.yaml's `shapes:` and `shapesFile:` (docs/shapes.md); --shapes-schema prints the \
JSON Schema of that table's format (schemas/offset-shapes-v1.json).\n\nExamples:\n  \
kco schema > connector-offsets-v1.json\n  kco schema | jq '.properties.metadata'\n  \
kco schema --shapes\n  kco schema --shapes -o json | jq '.shapes[].class'"
)]
pub struct Args {
    /// Print the offset shapes table in force (YAML; JSON with -o json)
    #[arg(long, conflicts_with = "shapes_schema")]
    pub shapes: bool,
    /// Print the JSON Schema of the shapes table format
    #[arg(long)]
    pub shapes_schema: bool,
}

/// The shapes table format's schema, as committed under `schemas/`.
pub fn shapes_schema_json() -> String {
    let mut s = serde_json::to_string_pretty(&schema_for!(crate::shapes::ShapeTable))
        .expect("schema serializes");
    s.push('\n');
    s
}

/// The schema document, as committed under `schemas/`.
pub fn schema_json() -> String {
    crate::model::file::schema_json()
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let p = &ctx.printer;
    if args.shapes {
        let table = crate::shapes::registry().table();
        if p.is_structured() {
            p.structured(&table);
        } else {
            p.out(&serde_yaml::to_string(&table).expect("the table serializes"));
        }
    } else if args.shapes_schema {
        p.out(&shapes_schema_json());
    } else {
        p.out(&schema_json());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    /// The schema committed at `file` must be `want`; `KCO_UPDATE_SCHEMA=1` rewrites it.
    /// `command` is kco's command that prints it, `test` the test that checks it.
    fn assert_committed(file: &str, want: &str, command: &str, test: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        if std::env::var_os("KCO_UPDATE_SCHEMA").is_some() {
            crate::fsutil::write_atomic(&path, want.as_bytes()).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is not current: regenerate it with\n  cargo run -q -- {command} > {file}\nor\n  KCO_UPDATE_SCHEMA=1 cargo test --lib {test}",
            path.display()
        );
    }

    /// The committed schema must be what the types say. To regenerate:
    /// `cargo run -q -- schema > schemas/connector-offsets-v1.json` (or run this test with
    /// `KCO_UPDATE_SCHEMA=1`).
    #[test]
    fn committed_schema_is_current() {
        assert_committed(
            "schemas/connector-offsets-v1.json",
            &super::schema_json(),
            "schema",
            "committed_schema_is_current",
        );
    }

    /// The committed schema of the shapes table is current, and the built-in table is valid
    /// under it. To regenerate: `cargo run -q -- schema --shapes-schema >
    /// schemas/offset-shapes-v1.json` (or run this test with `KCO_UPDATE_SCHEMA=1`).
    #[test]
    fn committed_shapes_schema_is_current() {
        assert_committed(
            "schemas/offset-shapes-v1.json",
            &super::shapes_schema_json(),
            "schema --shapes-schema",
            "committed_shapes_schema_is_current",
        );
    }

    /// `kco.example.yaml` at the repository root parses and resolves its clusters.
    #[test]
    fn example_config_is_valid() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kco.example.yaml");
        let config = crate::config::Config::load(&path).unwrap();
        assert_eq!(config.cluster_names(), vec!["a", "b"]);
        let t = config.resolve(None, None, &|_| None).unwrap();
        assert_eq!(t.name, "a");
        assert_eq!(
            t.http.urls,
            vec!["http://127.0.0.1:8083", "http://127.0.0.1:8084"]
        );
        // The commented production example is valid too, once uncommented.
        let text = std::fs::read_to_string(&path).unwrap();
        let prod: String = text
            .lines()
            .skip_while(|l| !l.contains("# prod:"))
            .map(|l| match l.strip_prefix("  # ") {
                Some(rest) => format!("  {rest}"),
                None => l.to_string(),
            })
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
            .map(|l| format!("{l}\n"))
            .collect();
        let doc = format!("clusters:\n{prod}");
        let c = crate::config::Config::parse(std::path::Path::new("kco.yaml"), &doc)
            .unwrap_or_else(|e| panic!("{e}\n{doc}"));
        assert_eq!(
            c.cluster_names(),
            vec!["cloud-prod", "orders-cdc", "prod", "staging"],
            "{doc}"
        );
        let env = |k: &str| k.starts_with("CONFLUENT_CLOUD_").then(|| "x".to_string());
        let cloud = c.resolve(Some("cloud-prod"), None, &env).unwrap();
        assert_eq!(cloud.backend.service(), "Confluent Cloud");
        let msk = c.resolve(Some("orders-cdc"), None, &env).unwrap();
        assert_eq!(msk.backend, crate::client::Backend::ConnectTopics);
        assert!(c.internal_topics("orders-cdc").is_some());
    }
}
