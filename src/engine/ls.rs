//! `ls`: every connector of a cluster with its type, state, tasks, partition count and how its
//! snapshot file compares, as the live `diff` classifies it (the comparison is `diff`'s, not
//! written again here).

use super::observed::Freshness;
use std::path::Path;

use serde::Serialize;

use super::diff::{diff_live, ExitOn, LiveInput, Status};
use super::LoadedFile;
use crate::client::Service;
use crate::error::{Error, Result};
use crate::model::ConnectorType;

/// One connector (or a file whose connector is not on the cluster).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LsEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub connector_type: Option<ConnectorType>,
    /// Connect's state (`RUNNING`, ...); `null` when the connector is not on the cluster.
    pub state: Option<String>,
    /// Tasks reported by `/status`, and how many of them are `RUNNING`.
    pub tasks: usize,
    pub tasks_running: usize,
    /// Partitions with a committed offset on the cluster (0 when the connector is missing).
    pub partitions: usize,
    /// The connector's snapshot file, relative to the current directory.
    pub file: Option<String>,
    /// `diff`'s verdict: `in_sync`, `advanced`, `drifted`, `missing`, `untracked`,
    /// `type_changed` or `class_changed`.
    pub status: Status,
    /// The connector or a task FAILED, or UNASSIGNED past the listing's wait, with the
    /// trace's first line (`engine::health`); absent when healthy.
    #[serde(skip_serializing_if = "super::health::Health::is_healthy")]
    pub health: super::health::Health,
    /// With `--lag`, a sink's records between its committed offsets and its topics' ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<i64>,
}

/// The cluster's connectors, by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LsReport {
    pub cluster: String,
    pub connectors: Vec<LsEntry>,
    /// Each sink's committed offsets as the live diff saw them, for its lag (not shown).
    #[serde(skip)]
    pub sink_positions: super::sink_lag::Positions,
}

impl LsReport {
    /// Puts each sink's lag on its entry.
    pub fn set_lag(&mut self, lags: &[super::sink_lag::SinkLag]) {
        for l in lags {
            if let Some(e) = self.connectors.iter_mut().find(|e| e.name == l.connector) {
                e.lag = Some(l.total());
            }
        }
    }
}

/// Lists the cluster's connectors against `files` (the cluster's snapshot directory).
pub fn ls(
    client: &dyn Service,
    files: &[LoadedFile],
    cluster: &str,
    read: (usize, Freshness),
    cwd: &Path,
) -> Result<LsReport> {
    ls_keeping(client, files, cluster, read, cwd, false)
}

/// [`ls`], keeping each sink's committed offsets in the report (`sink_positions`) when
/// `positions`, for its lag (a map of every partition: only when the lag is wanted).
pub fn ls_keeping(
    client: &dyn Service,
    files: &[LoadedFile],
    cluster: &str,
    (parallel, freshness): (usize, Freshness),
    cwd: &Path,
    positions: bool,
) -> Result<LsReport> {
    let diff = diff_live(
        client,
        LiveInput {
            files,
            cluster: cluster.to_string(),
            whole_dir: true,
            exit_on: ExitOn::Drift,
            parallel,
            cwd,
            freshness,
        },
    )?;
    let sink_positions = if positions {
        super::sink_lag::sink_positions(&diff, files)
    } else {
        Default::default()
    };
    let listing = client
        .list_connectors()
        .map_err(|e| Error::client("listing connectors", e))?;
    let connectors = diff
        .connectors
        .into_iter()
        .map(|c| {
            let tasks = listing
                .get(&c.name)
                .and_then(|l| l.status.as_ref())
                .map(|s| s.tasks.as_slice())
                .unwrap_or_default();
            LsEntry {
                tasks: tasks.len(),
                tasks_running: tasks.iter().filter(|t| t.state == "RUNNING").count(),
                // Live partitions: those in both, moved or not, and those only live.
                partitions: if c.status == Status::Missing {
                    0
                } else {
                    c.counts.unchanged + c.counts.moved + c.counts.only_new
                },
                health: c.health,
                name: c.name,
                connector_type: c.connector_type,
                state: c.state,
                file: c.file,
                status: c.status,
                lag: None,
            }
        })
        .collect();
    Ok(LsReport {
        cluster: cluster.to_string(),
        connectors,
        sink_positions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::load_files;
    use crate::fake::{FakeConnect, State};
    use serde_json::json;

    #[test]
    fn every_connector_with_its_file_status() {
        let fake = FakeConnect::builder()
            .source("src", "S", State::Running, json!([{"partition": {"f": "a"}, "offset": {"p": 1}}, {"partition": {"f": "b"}, "offset": {"p": 1}}]))
            .sink("sink", "K", State::Stopped, json!([]))
            .in_process();
        let client = fake.client();
        let dir = tempfile::tempdir().unwrap();
        let snap = crate::engine::snapshot::snapshot(
            &client,
            "a",
            dir.path(),
            &crate::engine::snapshot::SnapshotOptions::default(),
            &|| "2026-01-01T00:00:00Z".to_string(),
        );
        assert!(snap.is_ok());
        fake.set_offsets("src", json!([{"partition": {"f": "a"}, "offset": {"p": 5}}, {"partition": {"f": "b"}, "offset": {"p": 1}}, {"partition": {"f": "c"}, "offset": {"p": 1}}]));
        fake.add_connector(crate::fake::ConnectorSpec::source("new", "S").state(State::Paused));
        let (files, problems) = load_files(&[dir.path().join("a")]);
        assert!(problems.is_empty());
        let r = ls(&client, &files, "a", (2, Freshness::default()), dir.path()).unwrap();
        let rows: Vec<(&str, Status, usize, usize)> = r
            .connectors
            .iter()
            .map(|c| (c.name.as_str(), c.status, c.partitions, c.tasks))
            .collect();
        assert_eq!(
            rows,
            [
                ("new", Status::Untracked, 0, 1),
                ("sink", Status::InSync, 0, 0),
                ("src", Status::Advanced, 3, 1)
            ]
        );
        assert_eq!(r.connectors[2].file.as_deref(), Some("a/src.yaml"));
        assert_eq!(r.connectors[2].tasks_running, 1);
    }
}
