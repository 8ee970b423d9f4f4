//! `apply --translate`: the plan of files from another Kafka cluster, their sink offsets
//! translated through MirrorMaker 2's checkpoints on the target's Kafka (`engine::mirror`).

use std::collections::BTreeSet;

use super::Context;
use crate::client::Connect;
use crate::config::ClusterTarget;
use crate::engine::apply::plan::{ApplyPlan, LeftOut, PlanOptions, Want};
use crate::engine::apply::Checked;
use crate::engine::diff::{Alarm, DrInput};
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
    check_own_topics(&mut plan, &side);
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

/// Each sink the plan creates on the DR cluster also reads the DR cluster's own topics of
/// the same names (where producers write after a failover): the plan says which of them its
/// Kafka lacks, or has with another partition count than the mirrored copy, and what to
/// create. One metadata request, only when a created sink reads such a topic.
fn check_own_topics(plan: &mut ApplyPlan, side: &Target) {
    let Some(kafka) = &side.kafka else { return };
    let own: Vec<(usize, Vec<(String, String)>)> = plan
        .connectors
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.action, crate::engine::apply::Action::Create { .. }))
        .filter_map(|(i, c)| {
            let t = c.translation.as_ref()?;
            let before = c.config_changes.iter().find(|ch| ch.key == "topics")?;
            Some((i, mirror::own_topics(&before.before, t)))
        })
        .filter(|(_, own)| !own.is_empty())
        .collect();
    if own.is_empty() {
        return;
    }
    match crate::kafka::topic_partitions(kafka) {
        Ok(partitions) => {
            for (i, own) in own {
                let warnings = mirror::own_topic_warnings(&own, &partitions, &side.cluster);
                plan.connectors[i].warnings.extend(warnings);
            }
        }
        Err(e) => {
            for (i, _) in own {
                plan.connectors[i].warnings.push(format!(
                    "cannot check that the topics it reads exist on cluster `{}`'s Kafka: {e}",
                    side.cluster
                ));
            }
        }
    }
}

/// The readiness alarm's flags (`diff` against a DR cluster); each wins over the mirror's
/// setting in kco.yaml, which wins over kco's default.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Thresholds {
    /// Against a DR cluster: a sink partition behind its file whose group's last MM2
    /// checkpoint is older than this rings the alarm (exit 2, `dr_lagging`), e.g. `90s`
    /// [default: the mirror's `maxCheckpointAgeSeconds`, else 5m]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_checkpoint_age: Option<std::time::Duration>,
    /// Against a DR cluster: a sink partition more records behind its file than this rings
    /// the alarm [default: the mirror's `maxBehind`, else any number]
    #[arg(long, value_name = "RECORDS")]
    pub max_behind: Option<u64>,
    /// Against a DR cluster: no heartbeat copied through the mirror for longer than this
    /// rings the alarm, and so does a mirror with none to tell (when given) [default: the
    /// mirror's `maxMirrorSilenceSeconds`, else 2m]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_mirror_silence: Option<std::time::Duration>,
}

impl Thresholds {
    /// The alarm of a mirror whose kco.yaml sets `set`.
    fn alarm(&self, set: &crate::config::MirrorAlarm) -> Alarm {
        let default = Alarm::default();
        let silence = self.max_mirror_silence.or(set.max_mirror_silence);
        Alarm {
            max_checkpoint_age: self
                .max_checkpoint_age
                .or(set.max_checkpoint_age)
                .unwrap_or(default.max_checkpoint_age),
            max_behind: self.max_behind.or(set.max_behind),
            max_mirror_silence: silence.unwrap_or(default.max_mirror_silence),
            require_heartbeat: silence.is_some(),
        }
    }
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
    thresholds: &Thresholds,
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
    let env = |k: &str| std::env::var(k).ok();
    let configured = ctx.config.dr_settings(&target.name, &env)?.alarms;
    let alarms = side
        .relations
        .iter()
        .map(|(cluster, relation)| {
            let set = configured.get(cluster).copied().unwrap_or_default();
            (relation.alias.clone(), thresholds.alarm(&set))
        })
        .collect();
    Ok(DrInput {
        translations,
        sources,
        mirrors,
        alarms,
    })
}
