//! Files captured on another Kafka cluster, against a DR cluster: the one DR path of apply
//! and diff. From the cluster's resolved settings (`kafka:`, `mirrors:`) it finds which files
//! cross Kafka clusters, translates their sink offsets through MirrorMaker 2 (`mirror`),
//! leaves their sources out, and reads the mirrors' heartbeats: an apply's plan gets the
//! translations, what is left out and the checks of the DR cluster's own topics
//! ([`Crossing`]); a diff gets its readiness input ([`readiness`], [`diff_live`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::client::Service;
use crate::config::{ConfigError, DrSettings};
use crate::engine::apply::plan::{Action, ApplyPlan, LeftOut, Translations, Want};
use crate::engine::diff::{diff_live_translated, Alarm, DiffReport, DrInput, LiveInput};
use crate::engine::mirror::{self, Target, TranslateMode};
use crate::engine::progress::Observer;
use crate::engine::store::LoadedFile;
use crate::error::{Error, Result};
use crate::kafka::KafkaError;
use crate::model::file::OffsetsFile;
use crate::model::ConnectorType;

/// What kco is asked to do with files of another Kafka cluster, resolved from flags and
/// kco.yaml.
#[derive(Debug, Clone)]
pub struct DrOptions {
    /// The DR cluster's `kafka:` and `mirrors:`, or why kco.yaml's cannot be resolved: an
    /// error only when a file crosses Kafka clusters.
    pub settings: std::result::Result<DrSettings, ConfigError>,
    /// `--translate`.
    pub mode: Option<TranslateMode>,
    /// `--with-sources`: plan the source files too (apply).
    pub with_sources: bool,
    /// The readiness alarm of each mirror, by MM2's source alias (diff).
    pub alarms: BTreeMap<String, Alarm>,
}

impl DrOptions {
    /// Settings only, no flag given.
    pub fn of(settings: std::result::Result<DrSettings, ConfigError>) -> DrOptions {
        DrOptions {
            settings,
            mode: None,
            with_sources: false,
            alarms: BTreeMap::new(),
        }
    }
}

/// The target side of cluster `cluster`: its Kafka cluster id (from Connect), its `kafka:`
/// and `mirrors:`.
pub fn target(cluster: &str, dr: &DrOptions, client: &dyn Service) -> Result<Target> {
    let settings = dr.settings.as_ref().map_err(|e| Error::from(e.clone()))?;
    let info = crate::engine::probe(client)?;
    Ok(Target {
        cluster: cluster.to_string(),
        kafka_cluster_id: info.info.kafka_cluster_id,
        relations: settings.mirrors.clone(),
        kafka: settings.kafka.clone(),
    })
}

/// Milliseconds since the Unix epoch, by kco's clock (`crate::clock`).
fn now_ms() -> i64 {
    crate::clock::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A Kafka that could not be read: kco cannot tell whether anything translates (exit 1).
fn kafka_error(cluster: &str, e: KafkaError) -> Error {
    Error::Other(format!(
        "cannot read MirrorMaker 2's topics on cluster `{cluster}`'s Kafka: {e}"
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

/// The files of the wants, by target connector.
fn wanted_files(wants: &[Want]) -> Vec<(&str, &OffsetsFile)> {
    wants
        .iter()
        .filter_map(|w| match w {
            Want::File { target, file, .. } => Some((target.as_str(), &file.file)),
            _ => None,
        })
        .collect()
}

/// An apply's files that cross Kafka clusters: the sink translations its plan is built
/// with, and the sources left out of it.
pub struct Crossing {
    side: Target,
    pub translations: Translations,
    pub left_out: BTreeSet<String>,
}

impl Crossing {
    /// `None` when every file of `wants` was captured on cluster `cluster` (nothing is read).
    pub fn of(
        client: &dyn Service,
        cluster: &str,
        wants: &[Want],
        dr: &DrOptions,
    ) -> Result<Option<Crossing>> {
        let files = wanted_files(wants);
        if files.iter().all(|(_, f)| f.metadata.cluster == cluster) {
            return Ok(None);
        }
        let side = target(cluster, dr, client)?;
        let left_out = if dr.with_sources {
            BTreeSet::new()
        } else {
            foreign_sources(&files, &side)
        };
        let translations = mirror::translate(&files, &side, dr.mode, None, now_ms())
            .map_err(|e| kafka_error(cluster, e))?;
        Ok(Some(Crossing {
            side,
            translations,
            left_out,
        }))
    }

    /// The plan built with the translations, completed: the sources left out, and what the
    /// DR cluster's Kafka lacks of the topics the sinks it creates read.
    pub fn complete(self, plan: &mut ApplyPlan) {
        check_own_topics(plan, &self.side);
        plan.left_out = self
            .left_out
            .into_iter()
            .map(|name| LeftOut {
                name,
                why: format!(
                    "{} (captured on another Kafka cluster; --with-sources plans it)",
                    mirror::SOURCE_LEFT_OUT
                ),
            })
            .collect();
    }
}

/// Each sink the plan creates on the DR cluster also reads the DR cluster's own topics of
/// the same names (where producers write after a failover): the plan says, once per topic
/// with every sink that reads it, which of them its Kafka lacks, or has with another
/// partition count than the mirrored copy, and what to create. One metadata request, only
/// when a created sink reads such a topic.
fn check_own_topics(plan: &mut ApplyPlan, side: &Target) {
    let Some(kafka) = &side.kafka else { return };
    let mut own: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for c in plan
        .connectors
        .iter()
        .filter(|c| matches!(c.action, Action::Create { .. }))
    {
        let Some(t) = c.translation.as_ref() else {
            continue;
        };
        let Some(before) = c.config_changes.iter().find(|ch| ch.key == "topics") else {
            continue;
        };
        for pair in mirror::own_topics(&before.before, t) {
            own.entry(pair).or_default().push(c.name.clone());
        }
    }
    if own.is_empty() {
        return;
    }
    match crate::kafka::topic_partitions(kafka) {
        Ok(partitions) => plan.warnings.extend(mirror::own_topic_warnings(
            &own,
            &partitions,
            &side.cluster,
            kafka,
        )),
        Err(e) => {
            let sinks: BTreeSet<&str> = own.values().flatten().map(String::as_str).collect();
            let sinks: Vec<String> = sinks.iter().map(|s| format!("`{s}`")).collect();
            plan.warnings.push(format!(
                "cannot check that the topics {} read exist on cluster `{}`'s Kafka: {e}",
                sinks.join(", "),
                side.cluster
            ));
        }
    }
}

/// A diff's readiness input against DR cluster `cluster`: the translations of the sink files
/// captured on another Kafka cluster, the source files left out of readiness, and the
/// mirrors' heartbeats (none, and no request, when every file is of this cluster).
pub fn readiness(
    client: &dyn Service,
    cluster: &str,
    files: &[LoadedFile],
    dr: &DrOptions,
) -> Result<DrInput> {
    let foreign: Vec<(&str, &OffsetsFile)> = files
        .iter()
        .filter(|f| f.file.metadata.cluster != cluster)
        .map(|f| (f.file.metadata.name.as_str(), &f.file))
        .collect();
    if foreign.is_empty() {
        return Ok(DrInput::default());
    }
    let side = target(cluster, dr, client)?;
    let sources = foreign_sources(&foreign, &side);
    let sinks: Vec<(&str, &OffsetsFile)> = foreign
        .iter()
        .copied()
        .filter(|(_, f)| f.metadata.connector_type == ConnectorType::Sink)
        .collect();
    let now = now_ms();
    let translations = mirror::translate(&sinks, &side, dr.mode, None, now)
        .map_err(|e| kafka_error(cluster, e))?;
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
                    .map_err(|e| kafka_error(cluster, e))?,
            );
        }
    }
    Ok(DrInput {
        translations,
        sources,
        mirrors,
        alarms: dr.alarms.clone(),
    })
}

/// A live diff whose files may be of another Kafka cluster: a DR readiness check when they
/// are ([`readiness`]), a plain live diff when none is.
pub fn diff_live(
    client: &dyn Service,
    input: LiveInput<'_>,
    fleet: &dyn Observer,
    dr: &DrOptions,
) -> Result<DiffReport> {
    let ready = readiness(client, &input.cluster, input.files, dr)?;
    diff_live_translated(client, input, fleet, &ready)
}
