//! `kco reset`: delete connectors' offsets, inside the same safe transaction as apply.

use std::path::PathBuf;
use std::time::Duration;

use super::apply::{drive, Run};
use super::Context;
use crate::engine::apply::reset_wants;
use crate::engine::select;
use crate::error::{Error, Result};

/// Delete all offsets of connectors (backed up first), restoring their state afterwards
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Each connector is stopped, its offsets deleted (DELETE .../offsets) and read back \
as empty, and its prior state put back. The live offsets are backed up first; `kco apply <backup dir>` \
restores them.\n\nExit codes: 0 every connector reset (or had no offsets); 1 otherwise (also when a \
name or glob matches no connector).\n\n\
Examples:\n  kco reset orders-sink --dry-run\n  kco reset 'orders-*' --yes"
)]
pub struct Args {
    /// Connector names or globs (globs are resolved against the cluster's connectors)
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
    /// Seconds a resumed connector's tasks may take to run (a task that fails, or none
    /// starting, is a failure)
    #[arg(long, default_value_t = 60)]
    pub task_timeout: u64,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let target = ctx.target()?;
    let run = Run {
        verb: "Delete the offsets of these connectors",
        dry_run: args.dry_run,
        yes: args.yes,
        prune: true,
        create: false,
        create_state: None,
        parallel: 4,
        backup_dir: args.backup_dir,
        wait_timeout: Duration::from_secs(args.wait_timeout),
        fail_on: Vec::new(),
        source: None,
        task_timeout: Duration::from_secs(args.task_timeout),
    };
    let names = if args.names.iter().any(|n| select::is_glob(n)) {
        let live = ctx
            .connect(&target)?
            .list_connectors()
            .map_err(|e| Error::client("cannot list connectors", e))?;
        let live: Vec<&str> = live.keys().map(String::as_str).collect();
        select::resolve(&live, &args.names, &format!("on cluster `{}`", target.name))?
    } else {
        args.names.clone()
    };
    drive(ctx, &target, &reset_wants(&names), &run)
}
