//! `kco reset`: delete connectors' offsets, inside the same safe transaction as apply.

use std::path::PathBuf;

use super::Context;
use crate::error::{Error, Result};

/// Delete all offsets of connectors (backed up first), restoring their state afterwards
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Examples:\n  kco reset orders-sink --dry-run\n  kco reset orders-sink --yes"
)]
pub struct Args {
    /// Connector names
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Show the plan and stop before any change
    #[arg(long)]
    pub dry_run: bool,
    /// Reset without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Where to write the backup [default: .kco/backups/<UTC time>/<cluster>/]
    #[arg(long)]
    pub backup_dir: Option<PathBuf>,
    /// Seconds to wait for a connector to reach a state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
}

pub fn run(_args: Args, _ctx: &Context) -> Result<u8> {
    Err(Error::Other("reset is not implemented yet".into()))
}
