//! Files against the live cluster: one list call, the offsets of each connector read in
//! bounded parallel, then every connector and partition classified. Read-only: no request
//! here changes anything on the cluster.

use std::collections::BTreeMap;
use std::path::Path;

use super::dr::DrInput;
use super::{DiffReport, ExitOn, Mode};
use crate::client::Service;
use crate::engine::observed::{observed_note, read_reporting, Freshness, ReadError};
use crate::engine::progress::{Observer, Unheard};
use crate::engine::service_pause::{self, ServicePause};
use crate::engine::settle::settle_listing;
use crate::engine::{probe, LoadedFile};
use crate::error::{Error, Result};
use crate::model::file::{FileProblem, ProblemKind};
use crate::model::{ConnectorState, OffsetEntry};

/// What to compare with the cluster.
pub struct LiveInput<'a> {
    /// Valid snapshot files (checked before any request).
    pub files: &'a [LoadedFile],
    /// The cluster's name (for the report).
    pub cluster: String,
    /// Whether the files are a whole cluster directory: connectors without a file are then
    /// reported as `untracked`.
    pub whole_dir: bool,
    pub exit_on: ExitOn,
    pub parallel: usize,
    /// File paths are shown relative to this directory.
    pub cwd: &'a Path,
    /// How fresh observed offsets must be (a service that observes them: Confluent Cloud).
    pub freshness: Freshness,
}

/// Compares the files with the cluster.
pub fn diff_live(client: &dyn Service, input: LiveInput<'_>) -> Result<DiffReport> {
    diff_live_reporting(client, input, &Unheard)
}

/// [`diff_live`], telling `fleet` how the offset reads go.
pub fn diff_live_reporting(
    client: &dyn Service,
    input: LiveInput<'_>,
    fleet: &dyn Observer,
) -> Result<DiffReport> {
    diff_live_translated(client, input, fleet, &DrInput::default())
}

/// [`diff_live_reporting`], with the sink files of another Kafka cluster compared through
/// their translation (`engine::mirror`): "could this cluster take over now?".
pub fn diff_live_translated(
    client: &dyn Service,
    input: LiveInput<'_>,
    fleet: &dyn Observer,
    dr: &DrInput,
) -> Result<DiffReport> {
    // One file per connector: two (from two clusters' directories) would be ambiguous.
    let mut first: BTreeMap<&str, &LoadedFile> = BTreeMap::new();
    let mut problems = Vec::new();
    for f in input.files {
        if let Some(other) = first.insert(f.file.metadata.name.as_str(), f) {
            problems.push(FileProblem::new(
                ProblemKind::DuplicateConnector,
                &f.path,
                None,
                format!(
                    "connector `{}` is also in {}: name one file per connector",
                    f.file.metadata.name,
                    other.path.display()
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    let by_name: BTreeMap<&str, &LoadedFile> = input
        .files
        .iter()
        .map(|f| (f.file.metadata.name.as_str(), f))
        .collect();
    let filed: Vec<&str> = by_name.keys().copied().collect();
    let read_one = |name: &&str| read_reporting(client, name, &input.freshness, fleet);
    // The files name the connectors to read: their offsets are read while the cluster is
    // probed and listed (the listing takes one of the parallel slots), so that the listing
    // costs no round trip of its own. A file whose connector the listing lacks is missing,
    // whatever its read said.
    fleet.total(filed.len());
    let (listed, ahead) = crate::engine::parallel::beside(
        || -> Result<_> {
            probe(client)?;
            let mut listing = client
                .list_connectors()
                .map_err(|e| Error::client("listing connectors", e))?;
            settle_listing(client, &mut listing, |l| {
                input.whole_dir || by_name.contains_key(l.name.as_str())
            });
            Ok(listing)
        },
        &filed,
        input.parallel,
        |name, listing_failed| (!listing_failed()).then(|| read_one(name)),
    );
    let listing = listed?;
    let mut names: Vec<&str> = filed.clone();
    let untracked: Vec<&str> = match input.whole_dir {
        true => listing
            .keys()
            .map(String::as_str)
            .filter(|n| !by_name.contains_key(n))
            .collect(),
        false => Vec::new(),
    };
    if !untracked.is_empty() {
        fleet.total(filed.len() + untracked.len());
    }
    let rest = crate::engine::parallel::map(&untracked, input.parallel, |n| Some(read_one(n)));
    names.extend(&untracked);
    let reads: Vec<(&str, _)> = filed
        .iter()
        .copied()
        .zip(ahead)
        .chain(untracked.iter().copied().zip(rest))
        .collect();
    names.sort_unstable();
    // Only connectors on the cluster have offsets.
    let mut to_read = Vec::new();
    let mut read = Vec::new();
    for (name, r) in reads {
        let (true, Some(r)) = (listing.contains_key(name), r) else {
            continue;
        };
        to_read.push(name);
        read.push(match r {
            Ok(o) => Ok(Some(o)),
            // Deleted between the list and the read: it is missing.
            Err(ReadError::Client(e)) if e.is_not_found() => Ok(None),
            Err(ReadError::Client(e)) => Err(Error::client(
                format!("reading the offsets of connector `{name}`"),
                e,
            )),
            Err(stale) => Err(Error::Other(format!(
                "connector `{name}` on cluster `{}`: {stale}; compare again later, or allow older observations with --max-observed-age",
                input.cluster
            ))),
        });
    }
    // A connector shown PAUSED on a service that pauses connectors itself: whose pause it is
    // (one request more for each, read in parallel too).
    let pauses = crate::engine::parallel::map(&to_read, input.parallel, |name| {
        let shown = listing.get(*name).and_then(|l| l.state());
        paused_by_service(client, name, shown)
    });
    let read: Vec<Result<_>> = read
        .into_iter()
        .zip(pauses)
        .map(|(r, pause)| r.map(|o| o.map(|o| (o, pause))))
        .collect();
    let mut live_offsets: BTreeMap<&str, Vec<OffsetEntry>> = BTreeMap::new();
    let mut observed: BTreeMap<&str, String> = BTreeMap::new();
    let mut paused_by: BTreeMap<&str, ServicePause> = BTreeMap::new();
    for (name, r) in to_read.iter().zip(read) {
        if let Some((o, pause)) = r? {
            if let Some(p) = pause {
                paused_by.insert(name, p);
            }
            if let Some(note) = observed_note(client, &o) {
                observed.insert(name, note);
            }
            live_offsets.insert(name, o.entries);
        }
    }
    let connectors = names
        .iter()
        .map(|name| {
            let live = listing
                .get(*name)
                .zip(live_offsets.get(name))
                .map(|(l, o)| (l, o.as_slice()));
            let file = by_name.get(name).copied();
            let mut c = match (file, dr.translations.get(*name)) {
                (Some(f), Some(t)) => {
                    super::dr::classify(name, f, live, t, dr, &input.cluster, input.cwd)
                }
                (Some(f), None) if live.is_none() && dr.sources.contains(*name) => {
                    super::dr::skipped(name, f, &input.cluster, input.cwd)
                }
                _ => classify(
                    name,
                    file,
                    live,
                    paused_by.get(name),
                    &input.cluster,
                    input.cwd,
                ),
            };
            c.notes.extend(observed.get(name).cloned());
            c
        })
        .collect();
    let mut report = DiffReport::new(
        Mode::Live,
        input.exit_on,
        Some(input.cluster),
        None,
        connectors,
    );
    report.mirrors = dr
        .mirrors
        .iter()
        .map(|h| {
            let alarm = dr.alarms.get(&h.alias).copied().unwrap_or_default();
            crate::engine::mirror::heartbeat::MirrorHeartbeat {
                allowed_silence: Some(alarm.max_mirror_silence.as_secs()),
                ..h.clone()
            }
        })
        .collect();
    Ok(report)
}

/// The request `name` is paused around by its service, when it is shown PAUSED (read only
/// then: one request more per paused connector, on a service that pauses them itself).
fn paused_by_service(
    client: &dyn Service,
    name: &str,
    shown: Option<ConnectorState>,
) -> Option<ServicePause> {
    (shown == Some(ConnectorState::Paused))
        .then(|| service_pause::pending_request(client, name))
        .flatten()
}

mod classify;

pub(crate) use classify::{classify, OUTSIDE_KCO};

#[cfg(test)]
mod tests;
