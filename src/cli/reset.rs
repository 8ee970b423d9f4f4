//! `kco reset`: delete connectors' offsets, inside the same guarded operation as apply.

use std::collections::BTreeSet;

use super::apply_render::Verb;
use super::change::{ChangeArgs, Request};
use super::operate::drive;
use super::Context;
use crate::engine::apply::Checked;
use crate::engine::operation::Operation;
use crate::engine::orphaned;
use crate::engine::select;
use crate::error::{Error, Result};

/// Delete all offsets of connectors (backed up first), restoring their state afterwards
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Each connector is stopped, its offsets deleted (DELETE .../offsets) and read back \
as empty, and its prior state put back. The live offsets are backed up first; `kco undo <backup dir>` \
restores them.\n\n\
With --orphaned, the names are those of deleted connectors whose source offsets are left in the \
workers' offsets topic, or whose sink offsets are left in their consumer group `connect-<name>` \
(`kco ls --orphaned` lists them): each of their keys is deleted there (a null value, as the worker \
deletes one), and each group's committed offsets, through Kafka (`kafka:` and `connectTopics.offsets` \
of the cluster in kco.yaml), under the cluster's lock, after a backup that `kco undo` writes back; \
everything is read back. A connector created under such a name then starts afresh. Refused, nothing \
written, while a connector of the name exists or a group has members.\n\n\
Exit codes: 0 every connector reset (or had no offsets); 1 otherwise (also when a \
name or glob matches no connector).\n\n\
Examples:\n  kco reset orders-sink --dry-run\n  kco reset 'orders-*' --yes\n  \
kco reset --orphaned old-orders-source --yes"
)]
pub struct Args {
    /// Connector names or globs (globs are resolved against the cluster's connectors)
    #[arg(required = true, add = clap_complete::ArgValueCompleter::new(super::completions::connector_names))]
    pub names: Vec<String>,
    /// Delete instead the offsets that deleted connectors of these names left in the workers'
    /// offsets topic or in their sink's consumer group (`kco ls --orphaned` lists them)
    #[arg(long)]
    pub orphaned: bool,
    /// With --orphaned: delete although another cluster of kco.yaml could not be looked at
    /// (a source or sink of it, on the same Kafka, may own offsets taken for leftovers)
    #[arg(long, requires = "orphaned")]
    pub force: bool,
    #[command(flatten)]
    pub change: ChangeArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    // A URL alone stands for cluster `default`: not this project's cluster, whose lock and
    // journal it would miss.
    ctx.ensure_cluster_named(&ctx.snapshots_dir())?;
    if args.orphaned {
        return orphaned(&args, ctx);
    }
    let target = ctx.target()?;
    let request = Request::exact(Verb::Reset, &args.change);
    // Names and globs alike are resolved against the cluster's connectors: one that is not
    // there is a `no_match` error naming those that are, the closest first, nothing changed;
    // or, for a deleted connector's name that left offsets, what deletes them.
    let client = ctx.connect(&target)?;
    let listing = client
        .list_connectors()
        .map_err(|e| Error::client("cannot list connectors", e))?;
    let live: Vec<&str> = listing.keys().map(String::as_str).collect();
    let place = format!("on cluster `{}`", target.name);
    let matched = match select::resolve(&live, &args.names, &place) {
        Err(Error::NoMatch {
            patterns,
            place,
            closest,
            more,
            guess,
            ..
        }) => {
            let left = left_behind(ctx, &target, client.as_ref(), &listing, &patterns);
            return Err(Error::NoMatch {
                patterns,
                place,
                closest,
                more,
                guess,
                left,
            });
        }
        matched => matched?,
    };
    // Plain names keep the order they were given in.
    let names = match args.names.iter().any(|n| select::is_glob(n)) {
        true => matched,
        false => args.names.clone(),
    };
    let wants = Checked::reset(&names, &target.name);
    drive(ctx, &target, &wants, &args.change, &request)
}

/// For names of `patterns` that no connector of `target` has: those the orphan finder lists
/// (`kco ls --orphaned`) as having left offsets, and what deletes them on that kind of
/// cluster. `None` where none did, or where that cannot be read (no `kafka:` or offsets
/// topic in kco.yaml, Kafka unreachable): the names that exist are the hint then.
fn left_behind(
    ctx: &Context,
    target: &crate::config::ClusterTarget,
    client: &dyn crate::client::Service,
    listing: &std::collections::BTreeMap<String, crate::client::ConnectorListing>,
    patterns: &[String],
) -> Option<String> {
    let names: Vec<&String> = patterns
        .iter()
        .filter(|n| !select::is_glob(n) && !listing.contains_key(*n))
        .collect();
    if names.is_empty() {
        return None;
    }
    let (kafka, topic) = ctx.offsets_topic(target, "reset").ok()?;
    // Only a hint: a broken neighbour entry is the reset's to refuse, not this lookup's.
    let (others, _) = super::neighbours::looked_at(ctx, target);
    let named = super::orphaned::named_groups(ctx, target).ok()?;
    let found = orphaned::find_all(&kafka, &topic, listing, client, &others, &named).ok()?;
    let left = |n: &str| {
        found.sources.iter().any(|o| o.name == n) || found.sinks.iter().any(|o| o.name == n)
    };
    let names: Vec<&str> = names
        .into_iter()
        .map(String::as_str)
        .filter(|n| left(n))
        .collect();
    if names.is_empty() {
        return None;
    }
    let route = crate::error::ResetRoute::of(&client.capabilities());
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    Some(format!(
        "{} no connector of cluster `{}` now, but left offsets in topic `{topic}` or a sink's consumer group: {}",
        match names.len() {
            1 => format!("{} is", quoted[0]),
            _ => format!("{} are", quoted.join(", ")),
        },
        target.name,
        route.leftovers(&names.join(" "), &target.name)
    ))
}

/// Why `reset --orphaned` is refused on a cluster read from its topics, and what to do.
const SHARED_OFFSETS_TOPIC: &str = "its offsets topic may be shared with other Connect clusters (several AWS MSK Connect connectors given one `offset.storage.topic`), whose live connectors kco cannot see from here and would take for leftovers; to start a connector of a deleted name afresh, `kco apply` a file of that name with `offsets: []` before it is created: a file's offsets replace what its name left (docs/through-kafka.md#without-a-rest-api-aws-msk-connect)";

/// `kco reset --orphaned`: the offsets deleted connectors left, deleted in the offsets topic
/// and in the sinks' groups.
fn orphaned(args: &Args, ctx: &Context) -> Result<u8> {
    let target = ctx.target()?;
    let (kafka, topic) = ctx.offsets_topic(&target, "reset --orphaned")?;
    let plan = |op: &Operation| {
        // A cluster read from its topics alone may share its offsets topic with other Connect
        // clusters, whose live connectors kco cannot see: their offsets would look left behind.
        if !op.client().capabilities().changes_connectors() {
            let what = "deleting offsets left in its offsets topic";
            return Err(crate::engine::probe::read_only(
                op.client(),
                &target.name,
                what,
                SHARED_OFFSETS_TOPIC,
            ));
        }
        let listing = op.client().list_connectors().map_err(|e| {
            Error::client(
                format!("cluster `{}`: listing its connectors", target.name),
                e,
            )
        })?;
        // A name a connector has is that connector's: `kco reset NAME` resets it.
        let present: Vec<String> = args
            .names
            .iter()
            .filter(|n| !select::is_glob(n) && listing.contains_key(*n))
            .cloned()
            .collect();
        if !present.is_empty() {
            return Err(Error::ConnectorsExist {
                cluster: target.name.clone(),
                topic: topic.clone(),
                names: present,
                route: crate::error::ResetRoute::of(&op.client().capabilities()),
            });
        }
        let found = super::orphaned::found(ctx, &target, &kafka, &topic, &listing, op.client())?;
        // A neighbour not looked at may run a source or sink whose offsets look left behind.
        if !found.unchecked.is_empty() && !args.force {
            return Err(Error::NotLookedAt {
                cluster: target.name.clone(),
                others: found.unchecked.clone(),
            });
        }
        super::orphaned::warn_unchecked(ctx, &found.unchecked);
        super::orphaned::say_live_elsewhere(ctx, &found, &args.names);
        let left: BTreeSet<&str> = found
            .sources
            .iter()
            .map(|o| o.name.as_str())
            .chain(found.sinks.iter().map(|o| o.name.as_str()))
            .collect();
        let left: Vec<&str> = left.into_iter().collect();
        let place = format!(
            "with offsets left in topic `{topic}` or a sink's consumer group on cluster `{}` (`kco ls --orphaned`)",
            target.name
        );
        let names = select::resolve(&left, &args.names, &place)?;
        Ok(orphaned::plan_reset(&target.name, &found, &names))
    };
    super::orphaned::drive(ctx, &target, &kafka, &args.change, Verb::Reset, &plan)
}
