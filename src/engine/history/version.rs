//! What one version of a snapshot file is, told by the file itself and not by the commit
//! that holds it: the one definition that `apply --commit`, `--changed-since` and
//! `--unapplied`, the labels of `diff --base`, `kco log` and `kco merge-file` share.
//!
//! - An **observation**: the file's `capturedAt` differs from the version before it (a new
//!   file that has one counts: kco read it from live). kco rewrote it from live; it records
//!   what the cluster did and is never applied.
//! - A **change**: offsets, config or metadata differ while `capturedAt` stayed the same (a
//!   hand edit re-sealed by `kco fmt`, a pull request; a new file without a `capturedAt`).
//!   It is what someone decided, and the only thing applied from history.
//!
//! Commit trailers (`Kco-Snapshot`, `Kco-Apply`, `Kco-Undo`) are labels only: a plain
//! `git commit` of a snapshot is an observation all the same.

use serde::Serialize;

use crate::model::file::OffsetsFile;

/// What a version of a file is, against the version before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Version {
    /// The same offsets, metadata and config.
    Unchanged,
    /// kco rewrote the file from live: `capturedAt` moved.
    Observation,
    /// Edited with `capturedAt` kept: someone's decision.
    Change,
}

/// What `after` is against `before` (`None`: the file is new).
pub fn version(before: Option<&OffsetsFile>, after: &OffsetsFile) -> Version {
    let Some(before) = before else {
        return if after.metadata.captured_at.is_some() {
            Version::Observation
        } else {
            Version::Change
        };
    };
    if before.offsets == after.offsets
        && before.metadata == after.metadata
        && before.config == after.config
    {
        Version::Unchanged
    } else if before.metadata.captured_at != after.metadata.captured_at {
        Version::Observation
    } else {
        Version::Change
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::Metadata;
    use crate::model::{ConnectorType, OffsetEntry};
    use serde_json::json;

    fn file(at: Option<&str>, offset: i64) -> OffsetsFile {
        let mut m = Metadata::new("s", "prod", ConnectorType::Sink);
        m.captured_at = at.map(Into::into);
        let p = json!({"kafka_topic": "t", "kafka_partition": 0});
        let o = json!({"kafka_offset": offset});
        let entry = OffsetEntry {
            partition: p.as_object().unwrap().clone().into(),
            offset: o.as_object().unwrap().clone().into(),
        };
        OffsetsFile::new(m, vec![entry], None)
    }

    #[test]
    fn a_new_capture_time_is_an_observation_and_a_kept_one_a_change() {
        let night = file(Some("2026-11-01T02:00:00Z"), 100);
        assert_eq!(
            version(Some(&night), &file(Some("2026-11-02T02:00:00Z"), 250)),
            Version::Observation
        );
        assert_eq!(
            version(Some(&night), &file(Some("2026-11-01T02:00:00Z"), 70)),
            Version::Change
        );
        assert_eq!(version(Some(&night), &night.clone()), Version::Unchanged);
    }

    #[test]
    fn a_new_file_is_an_observation_when_kco_captured_it_and_a_change_when_written_by_hand() {
        assert_eq!(
            version(None, &file(Some("2026-11-01T02:00:00Z"), 1)),
            Version::Observation
        );
        assert_eq!(version(None, &file(None, 1)), Version::Change);
    }
}
