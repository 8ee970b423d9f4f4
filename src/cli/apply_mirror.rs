//! `apply --translate`: the plan of files from another Kafka cluster, their sink offsets
//! translated through MirrorMaker 2's checkpoints on the target's Kafka (`engine::mirror`).

use std::collections::BTreeSet;

use super::Context;
use crate::client::Connect;
use crate::config::ClusterTarget;
use crate::engine::apply::plan::{ApplyPlan, LeftOut, PlanOptions, Want};
use crate::engine::apply::Checked;
use crate::engine::diff::DrInput;
use crate::engine::mirror::{self, Target, TranslateMode};
use crate::engine::operation::Operation;
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;
use crate::model::ConnectorType;

/// `--translate`, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TranslateArg {
    /// The latest checkpoint at or below the file's offset: no record after it is skipped
    File,
    /// MirrorMaker 2's latest checkpoint: where the primary last committed (failover)
    Latest,
    /// Topics renamed per the mirror's policy, offsets kept (offset-preserving replication)
    None,
}

impl From<TranslateArg> for TranslateMode {
    fn from(a: TranslateArg) -> Self {
        match a {
            TranslateArg::File => TranslateMode::File,
            TranslateArg::Latest => TranslateMode::Latest,
            TranslateArg::None => TranslateMode::None,
        }
    }
}

/// The sink files of the wants, by target connector.
pub(super) fn sink_files(wants: &[Want]) -> Vec<(&str, &OffsetsFile)> {
    wants
        .iter()
        .filter_map(|w| match w {
            Want::File { target, file, .. } => Some((target.as_str(), &file.file)),
            _ => None,
        })
        .collect()
}

/// The target side of cluster `target`: its Kafka cluster id (from Connect), its `kafka:`
/// and `mirrors:`.
pub(super) fn target_side(
    ctx: &Context,
    target: &ClusterTarget,
    client: &Connect,
) -> Result<Target> {
    let env = |k: &str| std::env::var(k).ok();
    let dr = ctx.config.dr_settings(&target.name, &env)?;
    let info = crate::engine::probe(client)?;
    Ok(Target {
        cluster: target.name.clone(),
        kafka_cluster_id: info.info.kafka_cluster_id,
        relations: dr.mirrors,
        kafka: dr.kafka,
    })
}

pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A Kafka that could not be read: kco cannot tell whether anything translates (exit 1).
fn kafka_error(target: &ClusterTarget, e: crate::kafka::KafkaError) -> Error {
    Error::Other(format!(
        "cannot read MirrorMaker 2's topics on cluster `{}`'s Kafka: {e}",
        target.name
    ))
}

/// The source files of another Kafka cluster than `side`'s, by target connector.
fn foreign_sources(files: &[(&str, &OffsetsFile)], side: &Target) -> BTreeSet<String> {
    files
        .iter()
        .filter(|(_, f)| {
            f.metadata.connector_type == ConnectorType::Source
                && f.metadata.cluster != side.cluster
                && mirror::crosses(f, side)
        })
        .map(|(n, _)| n.to_string())
        .collect()
}

/// The plan, with every sink file of another Kafka cluster translated (or refused), and its
/// source files left out unless `with_sources`.
pub(super) fn plan(
    ctx: &Context,
    target: &ClusterTarget,
    op: &Operation,
    wants: &Checked,
    opts: &PlanOptions,
    mode: Option<TranslateMode>,
    with_sources: bool,
) -> Result<ApplyPlan> {
    let files = sink_files(wants.wants());
    let foreign = files.iter().any(|(_, f)| f.metadata.cluster != target.name);
    if !foreign {
        return op.plan(wants, opts);
    }
    let side = target_side(ctx, target, op.client())?;
    let left_out = if with_sources {
        BTreeSet::new()
    } else {
        foreign_sources(&files, &side)
    };
    let translations = mirror::translate(&files, &side, mode, None, now_ms())
        .map_err(|e| kafka_error(target, e))?;
    let mut plan = op.plan_translated(&wants.without(&left_out), opts, &translations)?;
    plan.left_out = left_out
        .into_iter()
        .map(|name| LeftOut {
            name,
            why: format!(
                "{} (captured on another Kafka cluster; --with-sources plans it)",
                mirror::SOURCE_LEFT_OUT
            ),
        })
        .collect();
    Ok(plan)
}

/// `diff` against a DR cluster: the translations of the sink files captured on another
/// Kafka cluster, the source files left out of readiness, and the mirrors' heartbeats (none,
/// and no request, when every file is of this cluster).
pub(super) fn diff_dr(
    ctx: &Context,
    target: &ClusterTarget,
    client: &Connect,
    files: &[crate::engine::LoadedFile],
    mode: Option<TranslateMode>,
) -> Result<DrInput> {
    let foreign: Vec<(&str, &OffsetsFile)> = files
        .iter()
        .filter(|f| f.file.metadata.cluster != target.name)
        .map(|f| (f.file.metadata.name.as_str(), &f.file))
        .collect();
    if foreign.is_empty() {
        return Ok(DrInput::default());
    }
    let side = target_side(ctx, target, client)?;
    let sources = foreign_sources(&foreign, &side);
    let sinks: Vec<(&str, &OffsetsFile)> = foreign
        .iter()
        .copied()
        .filter(|(_, f)| f.metadata.connector_type == ConnectorType::Sink)
        .collect();
    let now = now_ms();
    let translations =
        mirror::translate(&sinks, &side, mode, None, now).map_err(|e| kafka_error(target, e))?;
    let mut mirrors = Vec::new();
    if let Some(kafka) = &side.kafka {
        let used: BTreeSet<&str> = sinks
            .iter()
            .filter(|(_, f)| mirror::crosses(f, &side))
            .map(|(_, f)| f.metadata.cluster.as_str())
            .collect();
        for relation in used.iter().filter_map(|c| side.relations.get(*c)) {
            mirrors.push(
                mirror::heartbeat::read(relation, kafka, now)
                    .map_err(|e| kafka_error(target, e))?,
            );
        }
    }
    Ok(DrInput {
        translations,
        sources,
        mirrors,
    })
}
