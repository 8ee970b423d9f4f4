//! A sink file of another Kafka cluster against a DR cluster: compared through its
//! translation (MM2's checkpoints, `engine::mirror`). Not on the cluster is expected there
//! (`dr_ready` when every partition translates), and a partition without a translation is
//! `no_translation`, a difference.

use std::collections::BTreeSet;
use std::path::Path;

use super::live::classify as classify_live;
use super::{ConnectorDiff, Status};
use crate::client::ConnectorListing;
use crate::engine::apply::plan::Translations;
use crate::engine::mirror::heartbeat::MirrorHeartbeat;
use crate::engine::mirror::{PartitionTranslation, Translation};
use crate::engine::LoadedFile;
use crate::model::OffsetEntry;

/// What a diff against a DR cluster knows beyond Connect: the sink files' translations, the
/// source files that are not part of DR readiness, and the mirrors' heartbeats.
#[derive(Debug, Clone, Default)]
pub struct DrInput {
    pub translations: Translations,
    /// Source connectors of another Kafka cluster, by name.
    pub sources: BTreeSet<String>,
    pub mirrors: Vec<MirrorHeartbeat>,
}

pub(super) fn classify(
    name: &str,
    file: &LoadedFile,
    live: Option<(&ConnectorListing, &[OffsetEntry])>,
    translation: &Result<Translation, String>,
    cluster: &str,
    cwd: &Path,
) -> ConnectorDiff {
    let t = match translation {
        Err(m) => {
            let mut d = classify_live(name, Some(file), live, None, cluster, cwd);
            d.status = Status::NoTranslation;
            d.notes = vec![m.clone()];
            d.partitions.clear();
            return d;
        }
        Ok(t) => t,
    };
    // The file as this cluster would hold it.
    let mut translated = file.clone();
    translated.file.offsets = t.offsets.clone();
    let mut d = classify_live(name, Some(&translated), live, None, cluster, cwd);
    if live.is_none() {
        d.status = Status::DrReady;
        d.notes = vec![format!(
            "not on cluster `{cluster}`: it could start here from MirrorMaker 2's checkpoints"
        )];
        d.yaml = None;
    }
    d.notes.extend(t.partitions.iter().map(readiness));
    d.translation = Some(t.clone());
    d
}

/// A source file of another Kafka cluster, not on this DR cluster: not part of readiness.
pub(super) fn skipped(name: &str, file: &LoadedFile, cluster: &str, cwd: &Path) -> ConnectorDiff {
    let mut d = classify_live(name, Some(file), None, None, cluster, cwd);
    d.status = Status::Skipped;
    d.notes = vec![format!(
        "not part of DR readiness: {}",
        crate::engine::mirror::SOURCE_LEFT_OUT
    )];
    d.partitions.clear();
    d.yaml = None;
    d
}

fn ago(seconds: i64) -> String {
    humantime::format_duration(std::time::Duration::from_secs(seconds.max(0) as u64)).to_string()
}

/// `orders/0 600 -> east.orders/0 591: 9 records behind the file; the group's last
/// checkpoint was written 41s ago`
pub fn readiness(p: &PartitionTranslation) -> String {
    let head = p.crossing();
    match &p.checkpoint {
        None => format!("{head}: offsets kept"),
        Some(cp) => format!(
            "{head}: {} behind the file; the group's last checkpoint was written {} ago",
            crate::text::count(p.redelivers.max(0) as usize, "record"),
            ago(p
                .seconds_since_last_checkpoint
                .unwrap_or(cp.seconds_since_written))
        ),
    }
}

/// `mirror `east`: last heartbeat 2s ago (east.heartbeats, copied through the mirror)`
pub fn heartbeat_line(h: &MirrorHeartbeat) -> String {
    match (&h.topic, h.seconds_since_last_heartbeat) {
        (Some(topic), Some(s)) => format!(
            "mirror `{}`: last heartbeat {} ago (`{topic}`, {})",
            h.alias,
            ago(s),
            if h.mirrored {
                "copied from the source cluster: records come through"
            } else {
                "written by the mirror's heartbeat connector on this cluster"
            }
        ),
        _ => format!(
            "mirror `{}`: not known to be alive ({})",
            h.alias,
            h.problem.as_deref().unwrap_or("no heartbeat")
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::super::diff_live_translated;
    use super::*;
    use crate::engine::apply::plan::Translations;
    use crate::engine::mirror::{Found, PartitionTranslation, TranslateMode};
    use crate::engine::progress::Unheard;
    use crate::engine::testkit;
    use crate::fake::{ConnectorSpec, FakeConnect};
    use crate::model::file::{Metadata, OffsetsFile};
    use crate::model::ConnectorType;

    fn east_sink(name: &str) -> LoadedFile {
        let metadata = Metadata {
            kafka_cluster_id: Some("K-EAST".into()),
            ..Metadata::new(name, "east", ConnectorType::Sink)
        };
        let offsets = vec![OffsetEntry::sink("orders", 0, 600)];
        let f = OffsetsFile::new(metadata, offsets, None);
        testkit::loaded(&format!("/w/snapshots/east/{name}.yaml"), f)
    }

    fn translated(dr_offset: i64) -> Translation {
        let offsets = vec![OffsetEntry::sink("east.orders", 0, dr_offset)];
        Translation {
            mode: TranslateMode::File,
            alias: Some("east".into()),
            policy: "default",
            checkpoints_topic: Some("east.checkpoints.internal".into()),
            group: "connect-x".into(),
            partitions: vec![PartitionTranslation {
                topic: "orders".into(),
                partition: 0,
                file_offset: 600,
                dr_topic: "east.orders".into(),
                dr_offset,
                checkpoint: Some(Found {
                    upstream: 590,
                    downstream: dr_offset,
                    written_ms: 0,
                    seconds_since_written: 42,
                }),
                seconds_since_last_checkpoint: Some(42),
                redelivers: 10,
            }],
            renames: BTreeMap::from([("orders".into(), "east.orders".into())]),
            offsets,
            relation: None,
        }
    }

    #[test]
    fn a_dr_cluster_reports_ready_sinks_and_partitions_without_a_translation() {
        let fake = FakeConnect::builder()
            .connector(
                ConnectorSpec::sink("moved", "KSink")
                    .offsets(json!([{"partition": {"kafka_topic": "east.orders", "kafka_partition": 0}, "offset": {"kafka_offset": 580}}])),
            )
            .in_process();
        let files = vec![east_sink("ready"), east_sink("moved"), east_sink("blind")];
        let translations: Translations = BTreeMap::from([
            ("ready".to_string(), Ok(translated(580))),
            ("moved".to_string(), Ok(translated(580))),
            (
                "blind".to_string(),
                Err(
                    "consumer group `connect-blind` has no checkpoint at all (groups.exclude)"
                        .into(),
                ),
            ),
        ]);
        let input = testkit::live_input(&files, "west");
        let dr = DrInput {
            translations: translations.clone(),
            ..DrInput::default()
        };
        let r = diff_live_translated(&fake.client(), input, &Unheard, &dr).unwrap();
        assert_eq!(
            testkit::statuses(&r),
            vec![
                ("blind", Status::NoTranslation),
                ("moved", Status::InSync),
                ("ready", Status::DrReady),
            ]
        );
        let ready = &r.connectors[2];
        assert!(
            ready.notes.iter().any(|n| n
                == "orders/0 600 -> east.orders/0 580: 10 records behind the file; the group's last checkpoint was written 42s ago"),
            "{:?}",
            ready.notes
        );
        assert!(r.connectors[0].notes[0].contains("groups.exclude"));
        assert_eq!(r.exit_code, 2);

        let without_blind: Translations = translations
            .into_iter()
            .filter(|(k, _)| k != "blind")
            .collect();
        let input = testkit::live_input(&files[..2], "west");
        let dr = DrInput {
            translations: without_blind,
            ..DrInput::default()
        };
        let r = diff_live_translated(&fake.client(), input, &Unheard, &dr).unwrap();
        assert_eq!(r.exit_code, 0, "ready and in sync: west could take over");
        let json = serde_json::to_value(&r).unwrap();
        let statuses = &json["summary"]["statuses"];
        assert_eq!(statuses["dr_ready"], 1, "{statuses}");
        assert_eq!(
            statuses["no_translation"], 0,
            "every status, zeros included: {statuses}"
        );
        assert_eq!(statuses["missing"], 0, "{statuses}");
        let ready = &json["connectors"][1];
        assert_eq!(
            ready["translation"]["partitions"][0]["dr_offset"], 580,
            "{ready}"
        );
        assert_eq!(
            ready["translation"]["partitions"][0]["checkpoint"]["seconds_since_written"], 42,
            "{ready}"
        );
        assert_eq!(
            ready["translation"]["partitions"][0]["redelivers"], 10,
            "{ready}"
        );
    }

    /// A source file of the primary in the directory: not part of DR readiness (issue 23).
    #[test]
    fn a_source_file_of_the_primary_does_not_fail_readiness() {
        let fake = FakeConnect::builder().in_process();
        let metadata = Metadata {
            kafka_cluster_id: Some("K-EAST".into()),
            ..Metadata::new("orders-src", "east", ConnectorType::Source)
        };
        let src = testkit::loaded(
            "/w/snapshots/east/orders-src.yaml",
            OffsetsFile::new(metadata, Vec::new(), None),
        );
        let files = vec![east_sink("ready"), src];
        let dr = DrInput {
            translations: BTreeMap::from([("ready".to_string(), Ok(translated(580)))]),
            sources: BTreeSet::from(["orders-src".to_string()]),
            mirrors: Vec::new(),
        };
        let input = testkit::live_input(&files, "west");
        let r = diff_live_translated(&fake.client(), input, &Unheard, &dr).unwrap();
        assert_eq!(
            testkit::statuses(&r),
            vec![("orders-src", Status::Skipped), ("ready", Status::DrReady)]
        );
        assert!(r.connectors[0].notes[0].contains("not part of DR readiness"));
        assert_eq!(r.exit_code, 0, "a source does not fail the readiness check");
    }
}
