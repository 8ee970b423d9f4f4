//! `kco reset`: delete connectors' offsets, inside the same guarded operation as apply.

use super::operate::{drive, ChangeArgs, Request, DEFAULT_PARALLEL};
use super::Context;
use crate::engine::apply::{Checked, PlanOptions};
use crate::error::Result;

/// Delete all offsets of connectors (backed up first), restoring their state afterwards
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Each connector is stopped, its offsets deleted (DELETE .../offsets) and read back \
as empty, and its prior state put back. The live offsets are backed up first; `kco undo <backup dir>` \
restores them.\n\nExit codes: 0 every connector reset (or had no offsets); 1 otherwise.\n\n\
Examples:\n  kco reset orders-sink --dry-run\n  kco reset orders-sink --yes"
)]
pub struct Args {
    /// Connector names
    #[arg(required = true)]
    pub names: Vec<String>,
    #[command(flatten)]
    pub change: ChangeArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let target = ctx.target()?;
    let request = Request {
        question: "Delete the offsets of these connectors",
        plan: PlanOptions {
            prune: true,
            create: false,
            parallel: usize::from(DEFAULT_PARALLEL),
            create_state: None,
        },
        fail_on: Vec::new(),
        source: None,
    };
    let wants = Checked::reset(&args.names, &target.name);
    drive(ctx, &target, &wants, &args.change, &request)
}
