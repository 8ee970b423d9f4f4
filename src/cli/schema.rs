//! `kco schema`: the JSON Schema of the snapshot file format.

use schemars::schema_for;

use super::Context;
use crate::error::Result;
use crate::model::file::OffsetsFile;

/// Print the JSON Schema of the snapshot file format (kco/v1)
#[derive(Debug, clap::Args)]
pub struct Args {}

/// The schema document, as committed under `schemas/`.
pub fn schema_json() -> String {
    let mut s = serde_json::to_string_pretty(&schema_for!(OffsetsFile)).expect("schema serializes");
    s.push('\n');
    s
}

pub fn run(_args: Args, ctx: &Context) -> Result<u8> {
    ctx.printer.out(&schema_json());
    Ok(0)
}

#[cfg(test)]
mod tests {
    /// The committed schema must be what the types say. To regenerate:
    /// `cargo run -q -- schema > schemas/connector-offsets-v1.json` (or run this test with
    /// `KCO_UPDATE_SCHEMA=1`).
    #[test]
    fn committed_schema_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("schemas/connector-offsets-v1.json");
        let want = super::schema_json();
        if std::env::var_os("KCO_UPDATE_SCHEMA").is_some() {
            crate::fsutil::write_atomic(&path, want.as_bytes()).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is not current: regenerate it with\n  cargo run -q -- schema > schemas/connector-offsets-v1.json\nor\n  KCO_UPDATE_SCHEMA=1 cargo test --lib committed_schema_is_current",
            path.display()
        );
    }
}
