//! `kco apply`: put the files' offsets on a cluster, safely.

use std::path::PathBuf;

use super::Context;
use crate::error::{Error, Result};

/// Restore offsets from snapshot files: plan, back up, stop, patch, verify, restore state
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Examples:\n  kco apply snapshots/prod --dry-run\n  kco apply snapshots/prod/orders.yaml --yes\n  kco apply snapshots/prod/orders.yaml --as orders-v2 --cluster dr --create --yes\n  kco apply snapshots/prod --cluster dr --create --yes"
)]
pub struct Args {
    /// Snapshot files or directories
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Show the plan and stop before any change
    #[arg(long)]
    pub dry_run: bool,
    /// Apply without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Also remove live partitions that the file lacks (exact restore)
    #[arg(long)]
    pub prune: bool,
    /// How many connectors to apply at once
    #[arg(long, default_value_t = 4)]
    pub parallel: usize,
    /// Apply the (single) file's offsets to a connector of this name
    #[arg(long = "as", value_name = "NEW_NAME")]
    pub as_name: Option<String>,
    /// Create missing connectors from the config in their file (stopped, patched, then started)
    #[arg(long)]
    pub create: bool,
    /// Where to write the pre-apply backup [default: .kco/backups/<UTC time>/<cluster>/]
    #[arg(long)]
    pub backup_dir: Option<PathBuf>,
    /// Seconds to wait for a connector to reach a state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
}

pub fn run(_args: Args, _ctx: &Context) -> Result<u8> {
    Err(Error::Other("apply is not implemented yet".into()))
}
