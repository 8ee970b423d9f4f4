//! A sink file of another Kafka cluster against a DR cluster: compared through its
//! translation (MM2's checkpoints, `engine::mirror`). Not on the cluster is expected there
//! (`dr_ready` when every partition translates), and a partition without a translation is
//! `no_translation`, a difference. A sink that translates while its mirror lags beyond the
//! readiness alarm's thresholds ([`Alarm`]) is `dr_lagging`, a difference too: the alarm
//! rings while the mirror is stalled, not only once a checkpoint is missing.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

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
    /// The readiness alarm of each mirror, by MM2's source alias ([`Alarm::default`] for
    /// one not listed).
    pub alarms: std::collections::BTreeMap<String, Alarm>,
}

/// The readiness alarm's thresholds (`--max-checkpoint-age`, `--max-behind`,
/// `--max-mirror-silence`, or the mirror's `maxCheckpointAgeSeconds`, `maxBehind` and
/// `maxMirrorSilenceSeconds` in kco.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alarm {
    /// A partition behind the file whose group's last checkpoint is older than this: the
    /// mirror has not caught up with what the sink had read when the file was taken (MM2
    /// writes a checkpoint about every minute while the group commits). A partition at or
    /// past the file's position is ready however old its checkpoint (an idle group commits
    /// nothing new).
    pub max_checkpoint_age: Duration,
    /// More records behind the file than this, delivered again after a failover (`None`:
    /// any number; at-least-once delivery allows them).
    pub max_behind: Option<u64>,
    /// The last heartbeat copied through the mirror from the source cluster older than this:
    /// no record comes through.
    pub max_mirror_silence: Duration,
    /// Whether a mirror with no heartbeat copied from the source (no heartbeat connector on
    /// the source side, or only the one the DR cluster's worker writes) rings too (set when
    /// `--max-mirror-silence` is given).
    pub require_heartbeat: bool,
}

impl Default for Alarm {
    fn default() -> Self {
        Alarm {
            max_checkpoint_age: Duration::from_secs(5 * 60),
            max_behind: None,
            max_mirror_silence: Duration::from_secs(2 * 60),
            require_heartbeat: false,
        }
    }
}

impl Alarm {
    /// Why the sink `t` translates to should not be trusted now: one reason per threshold
    /// exceeded, naming it; `heartbeat` is its mirror's.
    pub fn rings(&self, t: &Translation, heartbeat: Option<&MirrorHeartbeat>) -> Vec<String> {
        let mut why = Vec::new();
        for p in &t.partitions {
            let Some(cp) = &p.checkpoint else { continue };
            // An offset sync is written when the mirror's lag grows, not while it keeps up:
            // its age says nothing of a stall (failback, `offset_syncs`).
            if p.offset_syncs.is_some() {
                if let Some(max) = self.max_behind.filter(|m| p.redelivers > *m as i64) {
                    why.push(format!(
                        "{}: {} behind the file, over the {max} allowed (--max-behind): a failback now delivers them again",
                        p.crossing(),
                        crate::text::count(p.redelivers as usize, "record"),
                    ));
                }
                continue;
            }
            let age = p
                .seconds_since_last_checkpoint
                .unwrap_or(cp.seconds_since_written)
                .max(0) as u64;
            if p.redelivers > 0 && age > self.max_checkpoint_age.as_secs() {
                why.push(format!(
                    "{}: {} behind the file and the group's last checkpoint is {} old, over the {} allowed (--max-checkpoint-age): is MirrorMaker 2's checkpoint connector running?",
                    p.crossing(),
                    crate::text::count(p.redelivers as usize, "record"),
                    ago(age as i64),
                    humantime::format_duration(self.max_checkpoint_age)
                ));
            }
            if let Some(max) = self.max_behind.filter(|m| p.redelivers > *m as i64) {
                why.push(format!(
                    "{}: {} behind the file, over the {max} allowed (--max-behind): a failover now delivers them again",
                    p.crossing(),
                    crate::text::count(p.redelivers as usize, "record"),
                ));
            }
        }
        let Some(alias) = t.alias.as_deref() else {
            return why;
        };
        let silence = heartbeat
            .filter(|h| h.mirrored)
            .and_then(|h| h.seconds_since_last_heartbeat);
        match silence {
            Some(s) if s.max(0) as u64 > self.max_mirror_silence.as_secs() => why.push(format!(
                "mirror `{alias}`: no heartbeat has come through from the source for {}, over the {} allowed (--max-mirror-silence): the mirror is stalled or the source is down",
                ago(s),
                humantime::format_duration(self.max_mirror_silence)
            )),
            None if self.require_heartbeat => why.push(format!(
                "mirror `{alias}`: no heartbeat copied from the source (`{alias}.heartbeats`) to tell whether records come through, and --max-mirror-silence {} asks for one",
                humantime::format_duration(self.max_mirror_silence)
            )),
            _ => {}
        }
        why
    }
}

pub(super) fn classify(
    name: &str,
    file: &LoadedFile,
    live: Option<(&ConnectorListing, &[OffsetEntry])>,
    translation: &Result<Translation, String>,
    dr: &DrInput,
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
    let mut rings = Vec::new();
    if live.is_none() {
        let heartbeat = dr
            .mirrors
            .iter()
            .find(|h| Some(h.alias.as_str()) == t.alias.as_deref());
        let alarm = t
            .alias
            .as_ref()
            .and_then(|a| dr.alarms.get(a))
            .copied()
            .unwrap_or_default();
        rings = alarm.rings(t, heartbeat);
        d.status = if rings.is_empty() {
            Status::DrReady
        } else {
            Status::DrLagging
        };
        d.notes = vec![format!(
            "not on cluster `{cluster}`: it could start here from MirrorMaker 2's checkpoints"
        )];
        d.yaml = None;
    }
    d.notes.extend(t.partitions.iter().map(readiness));
    d.notes.extend(t.stale_note());
    d.notes.extend(rings);
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
        Some(cp) if p.offset_syncs.is_some() => format!(
            "{head}: {} behind the file; through the offset sync of record {} (copied to {}), written {} ago",
            crate::text::count(p.redelivers.max(0) as usize, "record"),
            cp.upstream,
            cp.downstream,
            ago(cp.seconds_since_written)
        ),
        Some(cp) => format!(
            "{head}: {} behind the file; the group's last checkpoint was written {} ago",
            crate::text::count(p.redelivers.max(0) as usize, "record"),
            ago(p
                .seconds_since_last_checkpoint
                .unwrap_or(cp.seconds_since_written))
        ),
    }
}

/// `mirror `east`: last heartbeat 2s ago (east.heartbeats, copied through the mirror)`; a
/// heartbeat copied through the mirror longer ago than the alarm allows says that nothing
/// has come through since, and the threshold.
pub fn heartbeat_line(h: &MirrorHeartbeat) -> String {
    match (&h.topic, h.seconds_since_last_heartbeat) {
        (Some(topic), Some(s)) if h.mirrored && h.allowed_silence.is_some_and(|a| s.max(0) as u64 > a) => format!(
            "mirror `{}`: last heartbeat {} ago (`{topic}`, copied from the source cluster): nothing has come through for {}, over --max-mirror-silence {}",
            h.alias,
            ago(s),
            ago(s),
            ago(h.allowed_silence.unwrap_or_default() as i64)
        ),
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
                offset_syncs: None,
                latest_checkpoint: None,
            }],
            renames: BTreeMap::from([("orders".into(), "east.orders".into())]),
            offsets,
            relation: None,
            file_age_seconds: None,
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
            ..DrInput::default()
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

    fn heartbeat(mirrored: bool, seconds: Option<i64>) -> MirrorHeartbeat {
        MirrorHeartbeat {
            alias: "east".into(),
            topic: seconds.map(|_| {
                if mirrored {
                    "east.heartbeats"
                } else {
                    "heartbeats"
                }
                .to_string()
            }),
            mirrored,
            last_heartbeat_ms: seconds.map(|_| 0),
            seconds_since_last_heartbeat: seconds,
            problem: None,
            allowed_silence: None,
        }
    }

    /// The readiness alarm (issue 30): a stalled checkpoint while behind the file, too many
    /// records behind, a mirror silent, each rings (`dr_lagging`, exit 2) with its reason;
    /// an old checkpoint at the file's position, or a heartbeat only the DR cluster's own
    /// worker writes, does not.
    #[test]
    fn the_readiness_alarm_rings_for_each_threshold_exceeded_and_only_then() {
        let fake = FakeConnect::builder().in_process();
        let files = vec![east_sink("s")];
        let aged = |age: i64, behind: i64| {
            let mut t = translated(580);
            let p = &mut t.partitions[0];
            p.seconds_since_last_checkpoint = Some(age);
            p.redelivers = behind;
            t
        };
        let run = |t: Translation, alarm: Alarm, mirrors: Vec<MirrorHeartbeat>| {
            let dr = DrInput {
                translations: BTreeMap::from([("s".to_string(), Ok(t))]),
                mirrors,
                alarms: BTreeMap::from([("east".to_string(), alarm)]),
                ..DrInput::default()
            };
            let input = testkit::live_input(&files, "west");
            let r = diff_live_translated(&fake.client(), input, &Unheard, &dr).unwrap();
            (
                r.connectors[0].status,
                r.connectors[0].notes.join("\n"),
                r.exit_code,
            )
        };
        let default = Alarm::default();
        // 126 s since the last checkpoint, 244 behind: ready under the default 5 min ...
        let (status, _, code) = run(aged(126, 244), default, vec![]);
        assert_eq!((status, code), (Status::DrReady, 0));
        // ... lagging under 90 s.
        let tight = Alarm {
            max_checkpoint_age: Duration::from_secs(90),
            ..default
        };
        let (status, notes, code) = run(aged(126, 244), tight, vec![]);
        assert_eq!((status, code), (Status::DrLagging, 2), "{notes}");
        assert!(
            notes.contains("orders/0 600 -> east.orders/0 580: 244 records behind the file and the group's last checkpoint is 2m 6s old, over the 1m 30s allowed (--max-checkpoint-age)"),
            "{notes}"
        );
        // An old checkpoint at the file's position: an idle group, ready.
        let (status, _, _) = run(aged(3600, 0), tight, vec![]);
        assert_eq!(status, Status::DrReady);
        // Too many records behind.
        let few = Alarm {
            max_behind: Some(100),
            ..default
        };
        let (status, notes, _) = run(aged(10, 244), few, vec![]);
        assert_eq!(status, Status::DrLagging, "{notes}");
        assert!(
            notes.contains("244 records behind the file, over the 100 allowed (--max-behind)"),
            "{notes}"
        );
        let (status, _, _) = run(aged(10, 100), few, vec![]);
        assert_eq!(status, Status::DrReady);
        // The mirror: silent through the mirror rings; the DR worker's own heartbeat (alive
        // with the source down) does not tell, and rings only when a heartbeat is required.
        let (status, notes, _) = run(aged(10, 5), default, vec![heartbeat(true, Some(150))]);
        assert_eq!(status, Status::DrLagging, "{notes}");
        assert!(notes.contains("mirror `east`: no heartbeat has come through from the source for 2m 30s, over the 2m allowed (--max-mirror-silence)"), "{notes}");
        let (status, _, _) = run(aged(10, 5), default, vec![heartbeat(true, Some(3))]);
        assert_eq!(status, Status::DrReady);
        let (status, _, _) = run(aged(10, 5), default, vec![heartbeat(false, Some(0))]);
        assert_eq!(status, Status::DrReady);
        let required = Alarm {
            require_heartbeat: true,
            ..default
        };
        let (status, notes, _) = run(aged(10, 5), required, vec![heartbeat(false, Some(0))]);
        assert_eq!(status, Status::DrLagging, "{notes}");
        assert!(
            notes.contains("no heartbeat copied from the source (`east.heartbeats`) to tell whether records come through, and --max-mirror-silence 2m asks for one"),
            "{notes}"
        );
    }

    /// A stale file (issue 31, d): ready (the alarm is about the mirror), and said with its
    /// age and how far the group has moved past it, under the partition's line.
    #[test]
    fn a_ready_file_the_group_has_moved_past_says_its_age() {
        let fake = FakeConnect::builder().in_process();
        let files = vec![east_sink("s")];
        let mut t = translated(580);
        t.file_age_seconds = Some(660);
        t.partitions[0].latest_checkpoint = Some(Found {
            upstream: 2309,
            downstream: 2290,
            written_ms: 0,
            seconds_since_written: 26,
        });
        let dr = DrInput {
            translations: BTreeMap::from([("s".to_string(), Ok(t))]),
            ..DrInput::default()
        };
        let input = testkit::live_input(&files, "west");
        let r = diff_live_translated(&fake.client(), input, &Unheard, &dr).unwrap();
        assert_eq!(r.connectors[0].status, Status::DrReady);
        let notes = r.connectors[0].notes.join("\n");
        assert!(
            notes.contains("the file was captured 11m ago, and the group has committed past it since: orders/0 by 1709 records (MM2's latest checkpoint of the group, upstream 2309 -> downstream 2290, written 26s ago)"),
            "{notes}"
        );
    }

    /// The mirror's line (issue 31, 3): a heartbeat copied through the mirror longer ago than
    /// the alarm allows does not claim that records come through; it says the silence and
    /// the threshold.
    #[test]
    fn the_mirror_line_says_a_silence_past_the_threshold() {
        let judged = |seconds: i64| MirrorHeartbeat {
            allowed_silence: Some(10),
            ..heartbeat(true, Some(seconds))
        };
        assert_eq!(
            heartbeat_line(&judged(26)),
            "mirror `east`: last heartbeat 26s ago (`east.heartbeats`, copied from the source cluster): nothing has come through for 26s, over --max-mirror-silence 10s"
        );
        assert_eq!(
            heartbeat_line(&judged(3)),
            "mirror `east`: last heartbeat 3s ago (`east.heartbeats`, copied from the source cluster: records come through)"
        );
    }
}
