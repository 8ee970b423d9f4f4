//! A sink file of another Kafka cluster against a DR cluster: compared through its
//! translation (MM2's checkpoints, `engine::mirror`). Not on the cluster is expected there
//! (`dr_ready` when every partition translates), and a partition without a translation is
//! `no_translation`, a difference.

use std::path::Path;

use super::live::classify as classify_live;
use super::{ConnectorDiff, Status};
use crate::client::ConnectorListing;
use crate::engine::mirror::Translation;
use crate::engine::LoadedFile;
use crate::model::OffsetEntry;

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
            let mut d = classify_live(name, Some(file), live, cluster, cwd);
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
    let mut d = classify_live(name, Some(&translated), live, cluster, cwd);
    if live.is_none() {
        d.status = Status::DrReady;
        d.notes = vec![format!(
            "not on cluster `{cluster}`: it could start here from MirrorMaker 2's checkpoints"
        )];
        d.yaml = None;
    }
    d.notes.extend(t.partitions.iter().map(readiness));
    d
}

/// `orders/0 600 -> east.orders/0 591: checkpoint 41s old, 9 records behind the file`
pub fn readiness(p: &crate::engine::mirror::PartitionTranslation) -> String {
    let head = p.crossing();
    match &p.checkpoint {
        None => format!("{head}: offsets kept"),
        Some(cp) => format!(
            "{head}: checkpoint {} old, {} behind the file",
            humantime::format_duration(
                std::time::Duration::from_secs(cp.age_seconds.max(0) as u64)
            ),
            crate::text::count(p.redelivers.max(0) as usize, "record")
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
                    age_seconds: 42,
                }),
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
        let r = diff_live_translated(&fake.client(), input, &Unheard, &translations).unwrap();
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
                == "orders/0 600 -> east.orders/0 580: checkpoint 42s old, 10 records behind the file"),
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
        let r = diff_live_translated(&fake.client(), input, &Unheard, &without_blind).unwrap();
        assert_eq!(r.exit_code, 0, "ready and in sync: west could take over");
    }
}
