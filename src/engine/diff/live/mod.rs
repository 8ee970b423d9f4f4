//! Files against the live cluster: one list call, the offsets of each connector read in
//! bounded parallel, then every connector and partition classified. Read-only: no request
//! here changes anything on the cluster.

use std::collections::BTreeMap;
use std::path::Path;

use super::dr::DrInput;
use super::{ConnectorDiff, DiffReport, ExitOn, Mode};
use crate::client::{ConnectorListing, Service};
use crate::engine::mirror::heartbeat::MirrorHeartbeat;
use crate::engine::observed::{observed_note, read_reporting, Freshness, Observed, ReadError};
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
    let by_name = one_file_each(input.files)?;
    let ClusterRead {
        listing,
        names,
        reads,
    } = read_cluster(client, &input, &by_name, fleet)?;
    let live = LiveOffsets::of(client, &input, &listing, reads)?;
    let connectors = names
        .iter()
        .map(|name| {
            let file = by_name.get(name.as_str()).copied();
            compare_connector(name, file, &listing, &live, &input, dr)
        })
        .collect();
    let mut report = DiffReport::new(
        Mode::Live,
        input.exit_on,
        Some(input.cluster),
        None,
        connectors,
    );
    report.mirrors = mirror_heartbeats(dr);
    Ok(report)
}

/// The files by connector name, one file per connector: two (from two clusters'
/// directories) would be ambiguous, and fail the diff before any request.
fn one_file_each(files: &[LoadedFile]) -> Result<BTreeMap<&str, &LoadedFile>> {
    let mut first: BTreeMap<&str, &LoadedFile> = BTreeMap::new();
    let mut problems = Vec::new();
    for f in files {
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
    Ok(first)
}

/// What one look at the cluster gave: its listing, and an offsets read of each connector.
struct ClusterRead {
    listing: BTreeMap<String, ConnectorListing>,
    /// Every connector compared, filed or (a whole directory) untracked, sorted.
    names: Vec<String>,
    /// Each connector's read, `None` when it was not tried (the listing failed first).
    reads: Vec<(String, Option<std::result::Result<Observed, ReadError>>)>,
}

/// Probes and lists the cluster while the offsets of the filed connectors are read (the
/// listing takes one of the parallel slots, so that it costs no round trip of its own); then,
/// for a whole directory, reads the connectors the listing has and no file names
/// (untracked). A file whose connector the listing lacks is missing, whatever its read said.
fn read_cluster(
    client: &dyn Service,
    input: &LiveInput<'_>,
    by_name: &BTreeMap<&str, &LoadedFile>,
    fleet: &dyn Observer,
) -> Result<ClusterRead> {
    let filed: Vec<&str> = by_name.keys().copied().collect();
    let read_one = |name: &&str| read_reporting(client, name, &input.freshness, fleet);
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
    let reads: Vec<_> = filed
        .iter()
        .zip(ahead)
        .chain(untracked.iter().zip(rest))
        .map(|(name, r)| (name.to_string(), r))
        .collect();
    let mut names: Vec<String> = reads.iter().map(|(n, _)| n.clone()).collect();
    names.sort_unstable();
    Ok(ClusterRead {
        listing,
        names,
        reads,
    })
}

/// The offsets read of the connectors on the cluster, with what the report notes of them.
#[derive(Default)]
struct LiveOffsets {
    offsets: BTreeMap<String, Vec<OffsetEntry>>,
    /// When a service observed them, if it did (Confluent Cloud).
    observed: BTreeMap<String, String>,
    /// The request a service paused a connector around, for those shown PAUSED.
    paused_by: BTreeMap<String, ServicePause>,
}

impl LiveOffsets {
    /// The reads of the connectors the listing has (only those have offsets), each shown
    /// PAUSED on a service that pauses connectors itself asked whose pause it is (one request
    /// more for each, in parallel too). A connector deleted between the list and the read is
    /// missing; a read that failed, or an observation too old, fails the diff.
    fn of(
        client: &dyn Service,
        input: &LiveInput<'_>,
        listing: &BTreeMap<String, ConnectorListing>,
        reads: Vec<(String, Option<std::result::Result<Observed, ReadError>>)>,
    ) -> Result<LiveOffsets> {
        let mut to_read = Vec::new();
        let mut read = Vec::new();
        for (name, r) in reads {
            let (true, Some(r)) = (listing.contains_key(&name), r) else {
                continue;
            };
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
            to_read.push(name);
        }
        let pauses = crate::engine::parallel::map(&to_read, input.parallel, |name| {
            let shown = listing.get(name).and_then(|l| l.state());
            paused_by_service(client, name, shown)
        });
        let mut live = LiveOffsets::default();
        for ((name, r), pause) in to_read.into_iter().zip(read).zip(pauses) {
            let Some(o) = r? else { continue };
            if let Some(p) = pause {
                live.paused_by.insert(name.clone(), p);
            }
            if let Some(note) = observed_note(client, &o) {
                live.observed.insert(name.clone(), note);
            }
            live.offsets.insert(name, o.entries);
        }
        Ok(live)
    }
}

/// One connector compared: its file's sink through its translation when it has one, a
/// source of the other Kafka cluster the cluster lacks skipped, else file against live.
fn compare_connector(
    name: &str,
    file: Option<&LoadedFile>,
    listing: &BTreeMap<String, ConnectorListing>,
    live: &LiveOffsets,
    input: &LiveInput<'_>,
    dr: &DrInput,
) -> ConnectorDiff {
    let on_cluster = listing
        .get(name)
        .zip(live.offsets.get(name))
        .map(|(l, o)| (l, o.as_slice()));
    let mut c = match (file, dr.translations.get(name)) {
        (Some(f), Some(t)) => {
            super::dr::classify(name, f, on_cluster, t, dr, &input.cluster, input.cwd)
        }
        (Some(f), None) if on_cluster.is_none() && dr.sources.contains(name) => {
            super::dr::skipped(name, f, &input.cluster, input.cwd)
        }
        _ => classify(
            name,
            file,
            on_cluster,
            live.paused_by.get(name),
            &input.cluster,
            input.cwd,
        ),
    };
    c.notes.extend(live.observed.get(name).cloned());
    c
}

/// The mirrors' heartbeats as the report shows them, each with the silence its alarm allows.
fn mirror_heartbeats(dr: &DrInput) -> Vec<MirrorHeartbeat> {
    dr.mirrors
        .iter()
        .map(|h| {
            let alarm = dr.alarms.get(&h.alias).copied().unwrap_or_default();
            MirrorHeartbeat {
                allowed_silence: Some(alarm.max_mirror_silence.as_secs()),
                ..h.clone()
            }
        })
        .collect()
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
