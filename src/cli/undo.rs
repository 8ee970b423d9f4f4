//! `kco undo BACKUP`: undo an operation from the backup it wrote: the offsets it changed are
//! put back exactly (`--prune`), and the connectors it created are deleted (with their
//! offsets). Only a kco backup is accepted, and it goes back on the cluster it was taken from.

use std::path::PathBuf;

use super::apply_render::Verb;
use super::change::{ChangeArgs, Request};
use super::operate::drive;
use super::Context;
use crate::engine::apply::{self, backup, CheckOptions, TargetCluster};
use crate::engine::membership::same_url;
use crate::engine::shape_gate::AllowUnknownShape;
use crate::error::{Error, Result};

/// Undo an apply, reset or undo from its backup: restore changed offsets exactly, delete created connectors
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "BACKUP is a directory that an apply, reset or undo wrote and printed (under \
<state dir>/backups/); its kco-backup.json names the cluster it was taken from, and the undo goes \
to that cluster (a different --cluster is refused), through the worker it was taken from (a \
--url that names another worker is refused; a Confluent Cloud cluster is named by its environment \
and cluster ids, and the undo goes to the endpoint kco.yaml configures now). The offsets of the connectors the operation \
changed are put back exactly, and the connectors it created are stopped, emptied of offsets and \
deleted. Plan first; nothing changes without --yes (or a yes on the terminal). --fail-on refuses, \
before any change, an undo that would rewind (reprocessing), skip ahead (data-loss) or remove \
(reset) a partition's offset.\n\n\
The backup of a `kco reset --orphaned` holds keys of the workers' offsets topic and deleted sinks' \
group offsets: the undo writes each key's value back and commits each group's offsets again, through \
Kafka (`kafka:` and `connectTopics.offsets` of the cluster), refused while a connector has one of \
their names or a group has members.\n\n\
Exit codes: 0 everything undone (or nothing to undo); 1 otherwise.\n\n\
Examples:\n  kco undo .kco/backups/20240131T120000Z/prod --dry-run\n  \
kco undo .kco/backups/20240131T120000Z/prod --yes"
)]
pub struct Args {
    /// The backup directory an apply, reset or undo printed
    pub backup: PathBuf,
    /// Undo this connector even if the backed-up offsets do not fit its class's shape (a
    /// name or glob; repeatable)
    #[arg(long, value_name = "NAME")]
    pub allow_unknown_shape: Vec<String>,
    /// Refuse the whole undo, before any change, if its plan has these risks (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',')]
    pub fail_on: Vec<super::apply::RefuseArg>,
    #[command(flatten)]
    pub change: ChangeArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let dir = ctx.cwd.join(&args.backup);
    let shown = PathBuf::from(ctx.display_path(&dir));
    let marker = backup::read_marker(&dir).map_err(|e| match e {
        Error::NotABackup { why, .. } => Error::NotABackup {
            dir: shown.clone(),
            why,
        },
        e => e,
    })?;
    if let Some(asked) = ctx
        .global
        .cluster
        .as_ref()
        .filter(|c| **c != marker.cluster)
    {
        return Err(Error::BackupOfOtherCluster {
            dir: shown,
            backup_cluster: marker.cluster,
            asked: asked.clone(),
        });
    }
    if ctx.global.url.is_none() && !ctx.config.cluster_names().contains(&marker.cluster) {
        return Err(Error::Usage(format!(
            "the backup {} was taken on cluster `{}` ({}), which kco.yaml does not name: pass --url with that cluster's worker URL",
            ctx.display_path(&dir),
            marker.cluster,
            marker.url
        )));
    }
    let mut target = ctx.target_named(Some(&marker.cluster))?;
    // Where the cluster is reached now: its URLs, or for one read from its topics its Kafka.
    let configured = match target.backend.over_kafka() {
        true => vec![format!(
            "kafka://{}",
            ctx.offsets_topic(&target, "undo")?.0.bootstrap_display()
        )],
        false => target.http.urls.clone(),
    };
    let taken_here = configured.iter().any(|u| same_url(u, &marker.url));
    if !taken_here && !target.backend.addressed_by_url() {
        // The ids in kco.yaml name the connectors: the undo goes to the endpoint configured
        // now, whichever one the backup was taken through.
        ctx.printer.status(&format!(
            "The backup was taken through {}; the undo goes to cluster `{}`'s {} endpoint in kco.yaml, {}.",
            marker.url,
            marker.cluster,
            target.backend.service(),
            configured.join(", ")
        ));
    } else if !taken_here {
        if ctx.global.url.is_some() {
            return Err(Error::BackupOfOtherWorker {
                dir: shown,
                cluster: marker.cluster,
                backup_url: marker.url,
                given: target.http.urls.join(","),
                origin: ctx.sources().url.into(),
            });
        }
        // Taken with --url from a worker kco.yaml does not list for the cluster: the offsets
        // go back where they were changed.
        ctx.printer.status(&format!(
            "The backup was taken from {}, which kco.yaml does not list for cluster `{}`: the undo goes to that worker.",
            marker.url, marker.cluster
        ));
        target.http.urls = vec![marker.url.clone()];
    }
    if let Some(topic) = &marker.offsets_topic {
        return undo_topic(ctx, &target, &dir, topic, &args.change);
    }
    let env = |k: &str| std::env::var(k).ok();
    let check = CheckOptions {
        as_name: None,
        create: false,
        target: TargetCluster {
            name: marker.cluster.clone(),
            named: false,
        },
        allow_unknown_shape: AllowUnknownShape::new(&args.allow_unknown_shape)?,
    };
    let wants = apply::check(std::slice::from_ref(&dir), &check, &env)?;
    let mut request = Request::exact(Verb::Undo, &args.change);
    request.refuse = args.fail_on.into_iter().map(Into::into).collect();
    drive(ctx, &target, &wants, &args.change, &request)
}

/// The undo of a `kco reset --orphaned` (or of such an undo): each key of the offsets topic
/// and each group offset the backup keeps gets its value back, through Kafka, while no
/// connector has its name.
fn undo_topic(
    ctx: &Context,
    target: &crate::config::ClusterTarget,
    dir: &std::path::Path,
    topic: &str,
    change: &ChangeArgs,
) -> Result<u8> {
    let (kafka, configured) = ctx.offsets_topic(target, "undo")?;
    if let Some(w) = crate::engine::through_kafka::per_connector_topic(&target.name, &configured) {
        ctx.printer.warn(&w);
    }
    let (records, groups) = backup::read_topic(dir)?;
    let plan = |op: &crate::engine::operation::Operation| {
        let plan =
            crate::engine::orphaned::plan_restore(&kafka, &target.name, topic, &records, &groups)
                .map_err(|e| {
                Error::Other(format!(
                    "cluster `{}`: the backup {}: {e}",
                    target.name,
                    ctx.display_path(dir)
                ))
            })?;
        let live = op.client().list_connectors().map_err(|e| {
            Error::client(
                format!("cluster `{}`: listing its connectors", target.name),
                e,
            )
        })?;
        let present: Vec<String> = plan
            .names
            .iter()
            .filter(|n| live.contains_key(*n))
            .cloned()
            .collect();
        // A service that deletes and creates connectors around the write does so here too.
        let recreates = op
            .client()
            .steps(crate::client::ChangeKind::Patch)
            .contains(&crate::client::Op::DeleteKeeping);
        if recreates {
            let mut plan = plan;
            plan.recreated = present.into_iter().collect();
            return Ok(plan);
        }
        if !present.is_empty() {
            return Err(Error::ConnectorsExist {
                cluster: target.name.clone(),
                topic: topic.to_string(),
                names: present,
                route: crate::error::ResetRoute::of(&op.client().capabilities()),
            });
        }
        Ok(plan)
    };
    super::orphaned::drive(ctx, target, &kafka, change, Verb::Undo, &plan)
}
