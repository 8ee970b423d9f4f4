//! `kco reset`: delete connectors' offsets, inside the same guarded operation as apply.

use super::apply_render::Verb;
use super::operate::{drive, ChangeArgs, Request};
use super::Context;
use crate::engine::apply::Checked;
use crate::engine::select;
use crate::error::{Error, Result};

/// Delete all offsets of connectors (backed up first), restoring their state afterwards
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Each connector is stopped, its offsets deleted (DELETE .../offsets) and read back \
as empty, and its prior state put back. The live offsets are backed up first; `kco undo <backup dir>` \
restores them.\n\nExit codes: 0 every connector reset (or had no offsets); 1 otherwise (also when a \
name or glob matches no connector).\n\n\
Examples:\n  kco reset orders-sink --dry-run\n  kco reset 'orders-*' --yes"
)]
pub struct Args {
    /// Connector names or globs (globs are resolved against the cluster's connectors)
    #[arg(required = true)]
    pub names: Vec<String>,
    #[command(flatten)]
    pub change: ChangeArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    // A URL alone stands for cluster `default`: not this project's cluster, whose lock and
    // journal it would miss.
    ctx.ensure_cluster_named(&ctx.snapshots_dir())?;
    let target = ctx.target()?;
    let request = Request::exact(Verb::Reset, &args.change);
    // Names and globs alike are resolved against the cluster's connectors: one that is not
    // there is a `no_match` error naming those that are, the closest first, nothing changed.
    let live = ctx
        .connect(&target)?
        .list_connectors()
        .map_err(|e| Error::client("cannot list connectors", e))?;
    let live: Vec<&str> = live.keys().map(String::as_str).collect();
    let matched = select::resolve(&live, &args.names, &format!("on cluster `{}`", target.name))?;
    // Plain names keep the order they were given in.
    let names = match args.names.iter().any(|n| select::is_glob(n)) {
        true => matched,
        false => args.names.clone(),
    };
    let wants = Checked::reset(&names, &target.name);
    drive(ctx, &target, &wants, &args.change, &request)
}
