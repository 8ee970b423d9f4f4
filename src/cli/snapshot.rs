//! `kco snapshot`: every connector's offsets to versioned YAML files.

use std::path::PathBuf;

use super::Context;
use crate::error::{Error, Result};

/// Save connectors' offsets to versioned YAML files, one per connector
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Examples:\n  kco snapshot\n  kco snapshot 'orders-*' --type sink\n  kco --cluster prod snapshot --with-config --prune"
)]
pub struct Args {
    /// Connector names or globs [default: every connector]
    pub names: Vec<String>,
    /// Only connectors of this type
    #[arg(long = "type", value_enum)]
    pub kind: Option<super::TypeArg>,
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// How many connectors to read at once
    #[arg(long, default_value_t = 8)]
    pub parallel: usize,
    /// Also capture each connector's config (secrets become placeholders)
    #[arg(long)]
    pub with_config: bool,
    /// Remove files of connectors that no longer exist on the cluster
    #[arg(long)]
    pub prune: bool,
}

pub fn run(_args: Args, _ctx: &Context) -> Result<u8> {
    Err(Error::Other("snapshot is not implemented yet".into()))
}
