//! `kco undo BACKUP`: undo an apply from the backup it wrote: the offsets it changed are put
//! back exactly (`--prune`), and the connectors it created are deleted (with their offsets).

use std::path::PathBuf;
use std::time::Duration;

use super::apply::{drive, Run};
use super::Context;
use crate::engine::apply::{self, CheckOptions};
use crate::error::Result;

/// Undo an apply from its backup: restore changed offsets exactly, delete created connectors
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "The same as `kco apply BACKUP --prune`: the backup directory holds the offsets and \
states of the connectors the apply changed, and `created.json` names those it created, which are \
stopped, emptied of offsets and deleted. Plan first; nothing changes without --yes (or a yes on \
the terminal).\n\nExit codes: 0 everything undone (or nothing to undo); 1 otherwise.\n\n\
Examples:\n  kco undo .kco/backups/20240131T120000Z/prod --cluster prod --dry-run\n  \
kco undo .kco/backups/20240131T120000Z/prod --cluster prod --yes"
)]
pub struct Args {
    /// The backup directory an apply printed
    pub backup: PathBuf,
    /// Show the plan and stop before any change
    #[arg(long)]
    pub dry_run: bool,
    /// Undo without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Where to write the backup of what the undo changes [default: .kco/backups/<UTC time>/<cluster>/]
    #[arg(long)]
    pub backup_dir: Option<PathBuf>,
    /// Seconds to wait for a connector to reach a state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
    /// Seconds a resumed connector's tasks may take to run
    #[arg(long, default_value_t = 60)]
    pub task_timeout: u64,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    let wants = apply::check(
        std::slice::from_ref(&ctx.cwd.join(&args.backup)),
        &CheckOptions::default(),
        &env,
    )?;
    let target = ctx.target()?;
    let run = Run {
        verb: "Undo the apply",
        dry_run: args.dry_run,
        yes: args.yes,
        prune: true,
        create: false,
        create_state: None,
        parallel: 4,
        backup_dir: args.backup_dir,
        wait_timeout: Duration::from_secs(args.wait_timeout),
        task_timeout: Duration::from_secs(args.task_timeout),
        fail_on: Vec::new(),
        source: None,
    };
    drive(ctx, &target, &wants, &run)
}
