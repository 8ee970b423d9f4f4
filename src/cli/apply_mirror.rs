//! `apply --translate`: the plan of files from another Kafka cluster, their sink offsets
//! translated through MirrorMaker 2's checkpoints on the target's Kafka (`engine::mirror`).

use super::Context;
use crate::client::Connect;
use crate::config::ClusterTarget;
use crate::engine::apply::plan::{self, ApplyPlan, PlanOptions, Want};
use crate::engine::apply::Checked;
use crate::engine::mirror::{self, Target, TranslateMode};
use crate::engine::operation::Operation;
use crate::error::Result;
use crate::model::file::OffsetsFile;

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

/// The plan, with every sink file of another Kafka cluster translated (or refused).
pub(super) fn plan(
    ctx: &Context,
    target: &ClusterTarget,
    op: &Operation,
    wants: &Checked,
    opts: &PlanOptions,
    mode: Option<TranslateMode>,
) -> Result<ApplyPlan> {
    let files = sink_files(wants.wants());
    let sinks = files
        .iter()
        .any(|(_, f)| f.metadata.connector_type == crate::model::ConnectorType::Sink);
    if !sinks {
        return op.plan(wants, opts);
    }
    let side = target_side(ctx, target, op.client())?;
    let translations = mirror::translate(&files, &side, mode, None, now_ms());
    op.plan_translated(wants, opts, &translations)
}

/// `diff`: the translations of the sink files captured on another cluster (none, and no
/// request, when every file is of this cluster or a source).
pub(super) fn diff_translations(
    ctx: &Context,
    target: &ClusterTarget,
    client: &Connect,
    files: &[crate::engine::LoadedFile],
) -> Result<plan::Translations> {
    let foreign: Vec<(&str, &OffsetsFile)> = files
        .iter()
        .filter(|f| {
            f.file.metadata.connector_type == crate::model::ConnectorType::Sink
                && f.file.metadata.cluster != target.name
        })
        .map(|f| (f.file.metadata.name.as_str(), &f.file))
        .collect();
    if foreign.is_empty() {
        return Ok(plan::Translations::new());
    }
    let side = target_side(ctx, target, client)?;
    Ok(mirror::translate(&foreign, &side, None, None, now_ms()))
}
