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
