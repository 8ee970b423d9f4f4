//! `kco validate`: offline checks of snapshot files, for CI and pre-commit hooks.

use std::path::PathBuf;

use super::Context;
use crate::error::{Error, Result};

/// Check snapshot files offline: syntax, schema, checksum, shapes
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:\n  kco validate\n  kco validate snapshots/prod/orders.yaml")]
pub struct Args {
    /// Files or directories [default: the snapshots directory]
    pub paths: Vec<PathBuf>,
}

pub fn run(_args: Args, _ctx: &Context) -> Result<u8> {
    Err(Error::Other("validate is not implemented yet".into()))
}
