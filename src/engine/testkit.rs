//! Builders the engine's unit tests share: a snapshot file as loaded, and the live diff's
//! input.

use std::path::{Path, PathBuf};

use super::diff::{DiffReport, ExitOn, LiveInput, Status};
use super::LoadedFile;
use crate::model::file::{OffsetsFile, DEFAULT_SCHEMA_REF};

/// `file` as loaded from `path`, its text as kco renders it.
pub(crate) fn loaded(path: &str, file: OffsetsFile) -> LoadedFile {
    LoadedFile {
        path: PathBuf::from(path),
        text: file.render(DEFAULT_SCHEMA_REF),
        file,
        lines: None,
    }
}

/// Each connector of a diff's report with its status, in the report's order.
pub(crate) fn statuses(r: &DiffReport) -> Vec<(&str, Status)> {
    r.connectors
        .iter()
        .map(|c| (c.name.as_str(), c.status))
        .collect()
}

/// A live diff of exactly `files` against `cluster`, exiting on drift, two connectors at a
/// time, paths shown relative to `/w`.
pub(crate) fn live_input<'a>(files: &'a [LoadedFile], cluster: &str) -> LiveInput<'a> {
    LiveInput {
        files,
        cluster: cluster.into(),
        whole_dir: false,
        exit_on: ExitOn::Drift,
        parallel: 2,
        cwd: Path::new("/w"),
        freshness: Default::default(),
    }
}
