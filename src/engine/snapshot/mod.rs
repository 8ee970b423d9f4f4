//! `snapshot`: read every selected connector's offsets and write one file per connector.
//!
//! Policy (documented in docs/snapshot.md):
//! - The cluster is probed and listed first; an unreachable cluster, an unsupported version,
//!   a failed listing or an exact name that does not exist stop everything before any write.
//! - Each connector's file is then written on its own, atomically. A connector whose offsets
//!   cannot be read is reported as `failed` and its existing file is left as it was; the
//!   others are still written (each file is self-consistent), and the command exits 1.
//! - A file whose offsets (and config, when captured) equal the live ones is not rewritten,
//!   so it stays byte-identical, `capturedAt` included.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::observed::{self, Freshness, Observed};
use super::progress::{Observer, Unheard};
use super::service_pause::{self, ServicePause};
use super::settle::{is_transient, settle_listing};
use super::snapshot_stale::stale_files;
pub use super::snapshot_stale::StaleFile;
use super::{parallel, probe, store, Selector};
use crate::client::{ConnectorListing, Service};
use crate::error::{Error, Result};
use crate::model::file::{
    Metadata, OffsetsFile, OffsetsFrom, DEFAULT_SCHEMA_REF, SCHEMA_COMMENT, SCHEMA_FILE,
};
use crate::model::{in_canonical_order, secrets, sort_entries, ConnectorState, ConnectorType};

/// What to snapshot and how.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    pub selector: Selector,
    /// How many connectors to read at once.
    pub parallel: usize,
    /// Also capture each connector's config, secrets replaced by placeholders.
    pub with_config: bool,
    /// Remove the files of connectors that no longer exist.
    pub prune: bool,
    /// Record what would empty the backup: a file whose connector the cluster answers with
    /// no offsets at all while the file holds some, and `--prune` of every file of the
    /// cluster. Without it, such a file is left as it was (reported failed) and such a
    /// prune is refused ([`Error::WouldEmpty`]), since a wrong URL or a wrong topic answers
    /// the same.
    pub allow_empty: bool,
    /// The `$schema` reference written in new files (existing files keep theirs).
    pub schema_ref: String,
    /// How fresh observed offsets must be (a service that observes them: Confluent Cloud).
    pub freshness: Freshness,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            selector: Selector::all(),
            parallel: parallel::DEFAULT_READS,
            with_config: false,
            prune: false,
            allow_empty: false,
            schema_ref: DEFAULT_SCHEMA_REF.into(),
            freshness: Freshness::default(),
        }
    }
}

/// What happened to one connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotOutcome {
    /// No file existed; one was written.
    Created,
    /// The offsets (or captured config) changed; the file was rewritten.
    Updated,
    /// Nothing changed; the file was not touched.
    Unchanged,
    /// Not captured (type unknown: plugin missing on the worker).
    Skipped,
    /// Could not be read; its file, if any, was left as it was.
    Failed,
}

/// One connector in the report.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectorSnapshot {
    pub name: String,
    /// `null` when Connect reports the type as unknown.
    #[serde(rename = "type")]
    pub connector_type: Option<ConnectorType>,
    pub outcome: SnapshotOutcome,
    /// The connector's file (written, unchanged, or left as it was).
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub path: PathBuf,
    /// How many partitions were captured (`null` when skipped or failed).
    pub partitions: Option<usize>,
    /// Config keys replaced by `${kco:env:...}` placeholders (names only).
    pub redacted: Vec<String>,
    /// Why it was skipped or failed, or a note on the rewrite.
    pub message: Option<String>,
    /// The connector or a task FAILED, or UNASSIGNED past the listing's wait, as the
    /// listing showed it (`engine::health`): its offsets are captured all the same; absent
    /// when healthy.
    #[serde(skip_serializing_if = "super::health::Health::is_healthy")]
    pub health: super::health::Health,
}

/// The result of a snapshot run.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotReport {
    pub cluster: String,
    pub url: String,
    pub connect_version: String,
    pub kafka_cluster_id: Option<String>,
    /// The directory of this cluster's files.
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub dir: PathBuf,
    pub connectors: Vec<ConnectorSnapshot>,
    pub stale: Vec<StaleFile>,
    /// The JSON Schema kco keeps beside the files, when a file written now points at it.
    #[serde(skip)]
    pub schema: Option<PathBuf>,
    /// With `--commit`: the commit made (absent when nothing changed, or without `--commit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<crate::engine::history::record::Committed>,
}

impl SnapshotReport {
    pub fn count(&self, outcome: SnapshotOutcome) -> usize {
        self.connectors
            .iter()
            .filter(|c| c.outcome == outcome)
            .count()
    }

    /// The files this run owns, for `--commit`: every captured connector's file (written or
    /// already equal to the live offsets) and every file `--prune` removed. Files of
    /// connectors that failed or were skipped, and stale files left in place, are not. The
    /// schema the written files point at goes with them.
    pub fn owned_files(&self) -> Vec<PathBuf> {
        let captured = self.connectors.iter().filter(|c| {
            matches!(
                c.outcome,
                SnapshotOutcome::Created | SnapshotOutcome::Updated | SnapshotOutcome::Unchanged
            )
        });
        captured
            .map(|c| c.path.clone())
            .chain(
                self.stale
                    .iter()
                    .filter(|s| s.pruned)
                    .map(|s| s.path.clone()),
            )
            .chain(self.schema.clone())
            .collect()
    }

    pub fn failed(&self) -> Vec<&ConnectorSnapshot> {
        self.connectors
            .iter()
            .filter(|c| c.outcome == SnapshotOutcome::Failed)
            .collect()
    }
}

/// Snapshots the selected connectors of `client` into `dir/<cluster_name>/`. Never prints;
/// `now` gives the RFC 3339 capture time.
pub fn snapshot(
    client: &dyn Service,
    cluster_name: &str,
    dir: &Path,
    opts: &SnapshotOptions,
    now: &dyn Fn() -> String,
) -> Result<SnapshotReport> {
    snapshot_reporting(client, cluster_name, dir, opts, now, &Unheard)
}

/// [`snapshot`], telling `fleet` how the offset reads go.
///
/// The connectors the directory's files name (a nightly's case: nearly all of them) have
/// their offsets read while the cluster is probed and listed, so that the listing costs no
/// round trip of its own; each such file is written as soon as the listing says what goes
/// into it, while the other reads go on. Nothing is written before the listing has
/// succeeded and the selection matched. A connector the listing showed in a transient state,
/// or whose read came before it existed, is read again after the listing, like those no
/// file names.
pub fn snapshot_reporting(
    client: &dyn Service,
    cluster_name: &str,
    dir: &Path,
    opts: &SnapshotOptions,
    now: &dyn Fn() -> String,
    fleet: &dyn Observer,
) -> Result<SnapshotReport> {
    // The plugins' config definitions (`--with-config` on Connect) are read after the
    // listing names the classes: their reads would add to those in flight, so then nothing
    // is read ahead.
    let reads_secrets = opts.with_config && client.capabilities().config_definitions;
    let filed = match reads_secrets {
        true => Vec::new(),
        false => filed_names(dir, cluster_name, &opts.selector),
    };
    let read = |name: &str| observed::read_reporting(client, name, &opts.freshness, fleet);
    let captured_at = now();
    if !filed.is_empty() {
        fleet.total(filed.len());
    }
    let (listed, ahead) = parallel::ahead(
        || list(client, cluster_name, dir, opts, captured_at),
        &filed,
        opts.parallel,
        |name, failed| (!failed()).then(|| read(name)),
        |name, read, listed| {
            let l = listed.selected(name, &opts.selector)?;
            match read? {
                // Read before the listing: read again after it (created meanwhile, or
                // deleted since).
                Err(observed::ReadError::Client(e)) if e.is_unknown_connector() => None,
                _ if listed.unsettled.contains(name) => None,
                read => Some(listed.finish(client, l, Some(read), opts)),
            }
        },
    );
    let listed = listed?;
    let mut done: BTreeMap<String, Result<(ConnectorSnapshot, bool)>> = filed
        .iter()
        .zip(ahead)
        .filter_map(|(name, r)| Some((name.clone(), r.flatten()?)))
        .collect();
    let rest: Vec<&ConnectorListing> = listed
        .listing
        .values()
        .filter(|l| opts.selector.matches(&l.name, l.connector_type))
        .filter(|l| !done.contains_key(&l.name))
        .collect();
    if !rest.is_empty() {
        fleet.total(filed.len() + rest.len());
    }
    let results = parallel::map(&rest, opts.parallel, |l| {
        let read = l.connector_type.map(|_| read(&l.name));
        listed.finish(client, l, read, opts)
    });
    done.extend(rest.iter().map(|l| l.name.clone()).zip(results));
    let Listed {
        cluster,
        listing,
        files,
        points_at_schema,
        ..
    } = listed;
    files
        .commit()
        .map_err(|(path, source)| Error::Write { path, source })?;
    let schema = points_at_schema.into_inner().then(|| dir.join(SCHEMA_FILE));
    if schema.is_some() {
        store::write_schema(dir)?;
    }
    let mut connectors = Vec::new();
    // Files known to hold a listed connector (written now, or found holding these offsets):
    // not stale, so not read again below.
    let mut current = BTreeSet::new();
    // Files this run created: no file of the cluster stood for their connectors before.
    let mut created = BTreeSet::new();
    for (_, done) in done {
        let (mut report, is_current) = done?;
        report.health =
            super::health::Health::of(listing.get(&report.name).and_then(|l| l.status.as_ref()));
        if is_current {
            current.insert(report.path.clone());
        }
        if report.outcome == SnapshotOutcome::Created {
            created.insert(report.path.clone());
        }
        connectors.push(report);
    }
    let stale = match stale_files(
        dir,
        cluster_name,
        &listing,
        (&current, &created),
        &opts.selector,
        opts.prune,
        opts.allow_empty,
    ) {
        // The cluster answered with none of the connectors its files hold: the files this
        // run created, of connectors that are its own no more than the others, go too, so
        // that the directory is as it was.
        Err(e @ Error::WouldEmpty { .. }) => {
            for path in &created {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
        r => r?,
    };
    Ok(SnapshotReport {
        cluster: cluster_name.to_string(),
        url: cluster.url,
        connect_version: cluster.info.version,
        kafka_cluster_id: cluster.info.kafka_cluster_id,
        dir: store::cluster_dir(dir, cluster_name),
        connectors,
        stale,
        schema,
        commit: None,
    })
}

/// The selected connectors that the cluster's directory has files for, by their file names
/// (a name the listing lacks is read for nothing, and its file is then found stale).
fn filed_names(dir: &Path, cluster_name: &str, selector: &Selector) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(store::cluster_dir(dir, cluster_name)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| store::connector_of(&e.ok()?.path()))
        .filter(|name| selector.matches_name(name))
        .collect();
    names.sort_unstable();
    names
}

/// What the listing gives every connector's file, once the cluster has answered.
struct Listed<'a> {
    cluster: probe::ClusterInfo,
    listing: BTreeMap<String, ConnectorListing>,
    /// Listed in a transient state (its offsets are read after the listing).
    unsettled: BTreeSet<String>,
    secret_keys: BTreeMap<String, std::result::Result<BTreeSet<String>, String>>,
    base: Capture<'a>,
    dir: &'a Path,
    /// Many files are made durable together at the end (one flush, then the renames); a few
    /// are each synced as written.
    files: crate::fsutil::Batch,
    /// Whether a file written now points at the schema kco keeps at `<dir>/`.
    points_at_schema: std::sync::atomic::AtomicBool,
}

/// Probes and lists the cluster, checks the selection and prepares the writes: the first
/// step, after which nothing can stop the run before its files are written.
fn list<'a>(
    client: &dyn Service,
    cluster_name: &'a str,
    dir: &'a Path,
    opts: &SnapshotOptions,
    captured_at: String,
) -> Result<Listed<'a>> {
    let cluster = probe(client)?;
    let mut listing = client
        .list_connectors()
        .map_err(|e| Error::client("cannot list connectors", e))?;
    let selected = |l: &ConnectorListing| opts.selector.matches(&l.name, l.connector_type);
    let unsettled = listing
        .values()
        .filter(|l| selected(l) && l.status.as_ref().is_some_and(is_transient))
        .map(|l| l.name.clone())
        .collect();
    settle_listing(client, &mut listing, selected);
    let live: Vec<&str> = listing.keys().map(String::as_str).collect();
    opts.selector.check_matched(
        &live,
        &format!("on cluster `{cluster_name}` ({})", cluster.url),
    )?;
    let readable: Vec<&ConnectorListing> = listing
        .values()
        .filter(|l| selected(l) && l.connector_type.is_some())
        .collect();
    // A service without config definitions (Confluent Cloud) masks its secret values itself:
    // those, and keys that look secret by name, become placeholders (`secrets::redact`).
    let secret_keys = if opts.with_config && client.capabilities().config_definitions {
        password_keys(client, &readable, opts.parallel)
    } else {
        BTreeMap::new()
    };
    let selected_count = listing.values().filter(|l| selected(l)).count();
    // What a run killed before its renames left behind.
    crate::fsutil::remove_stale_temps(&store::cluster_dir(dir, cluster_name), STALE_TEMP);
    Ok(Listed {
        base: Capture {
            cluster_name,
            kafka_cluster_id: cluster.info.kafka_cluster_id.clone(),
            connect_version: cluster.info.version.clone(),
            captured_at,
            offsets_from: client
                .capabilities()
                .offsets_through_kafka
                .then_some(OffsetsFrom::Kafka),
        },
        cluster,
        listing,
        unsettled,
        secret_keys,
        dir,
        files: crate::fsutil::Batch::new(selected_count),
        points_at_schema: std::sync::atomic::AtomicBool::new(false),
    })
}

impl Listed<'_> {
    /// Connector `name`, when the listing has it and `selector` takes it.
    fn selected(&self, name: &str, selector: &Selector) -> Option<&ConnectorListing> {
        let l = self.listing.get(name)?;
        selector.matches(&l.name, l.connector_type).then_some(l)
    }

    /// Connector `l`'s report, its file written from its offsets `read` (`None`: its type is
    /// unknown, so it is not captured), and whether its file is known to hold it.
    fn finish(
        &self,
        client: &dyn Service,
        l: &ConnectorListing,
        read: Option<std::result::Result<Observed, observed::ReadError>>,
        opts: &SnapshotOptions,
    ) -> Result<(ConnectorSnapshot, bool)> {
        let path = store::file_path(self.dir, self.base.cluster_name, &l.name);
        let (Some(kind), Some(read)) = (l.connector_type, read) else {
            return Ok((skipped(l, path), false));
        };
        match read {
            Ok(read) => {
                let secrets = l.class.as_ref().and_then(|c| self.secret_keys.get(c));
                let paused_by = (l.state() == Some(ConnectorState::Paused))
                    .then(|| service_pause::pending_request(client, &l.name))
                    .flatten();
                match capture(l, kind, read, secrets, opts, &self.base) {
                    Ok((file, redacted)) => write(
                        &path,
                        file,
                        redacted,
                        paused_by.as_ref(),
                        opts,
                        &self.files,
                        &self.points_at_schema,
                    ),
                    Err(message) => Ok((failed(l, path, message), false)),
                }
            }
            // Listed, then deleted before its offsets were read (connectors come and go on a
            // live cluster): nothing to capture, and no reason to fail the others' snapshot.
            Err(observed::ReadError::Client(e))
                if e.is_unknown_connector() && gone(client, &l.name) =>
            {
                Ok((
                    ConnectorSnapshot {
                        message: Some(
                            "deleted while the snapshot ran: no file written (a file it had is left as it was)".into(),
                        ),
                        connector_type: l.connector_type,
                        ..skipped(l, path)
                    },
                    false,
                ))
            }
            Err(e) => Ok((failed(l, path, e.to_string()), false)),
        }
    }
}

/// A temporary file this old is a killed run's, not a running one's.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Cluster-wide facts that go into every file of a run.
struct Capture<'a> {
    cluster_name: &'a str,
    kafka_cluster_id: Option<String>,
    connect_version: String,
    captured_at: String,
    /// Where the offsets are read, other than the service's REST API.
    offsets_from: Option<OffsetsFrom>,
}

/// Per connector class: the keys its plugin declares as PASSWORD, or why they are unknown.
fn password_keys(
    client: &dyn Service,
    connectors: &[&ConnectorListing],
    parallel: usize,
) -> BTreeMap<String, std::result::Result<BTreeSet<String>, String>> {
    let classes: Vec<String> = connectors
        .iter()
        .filter_map(|l| l.class.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let defs = parallel::map(&classes, parallel, |c| {
        client
            .plugin_config(c)
            .map(|defs| {
                defs.into_iter()
                    .filter(|d| d.kind.eq_ignore_ascii_case("PASSWORD"))
                    .map(|d| d.name)
                    .collect()
            })
            .map_err(|e| {
                format!("cannot read the config definitions of {c} to find its secrets: {e}")
            })
    });
    classes.into_iter().zip(defs).collect()
}

/// The file for one connector, and the config keys that were redacted.
fn capture(
    l: &ConnectorListing,
    kind: ConnectorType,
    read: Observed,
    secret_keys: Option<&std::result::Result<BTreeSet<String>, String>>,
    opts: &SnapshotOptions,
    base: &Capture,
) -> std::result::Result<(OffsetsFile, Vec<String>), String> {
    let (config, redacted) = if opts.with_config {
        let declared = match secret_keys {
            Some(Ok(keys)) => keys.clone(),
            Some(Err(e)) => return Err(e.clone()),
            None => BTreeSet::new(),
        };
        let (config, redacted) = secrets::redact(&l.name, &l.config, &declared);
        (Some(config), redacted)
    } else {
        (None, Vec::new())
    };
    let metadata = Metadata {
        name: l.name.clone(),
        cluster: base.cluster_name.to_string(),
        kafka_cluster_id: base.kafka_cluster_id.clone(),
        connect_version: Some(base.connect_version.clone()),
        connector_class: l.class.clone(),
        connector_type: kind,
        state: l.state(),
        captured_at: Some(base.captured_at.clone()),
        observed_at: read.observed_at.map(crate::clock::rfc3339),
        offsets_from: base.offsets_from,
    };
    Ok((OffsetsFile::new(metadata, read.entries, config), redacted))
}

/// The capture time of a file rewritten from live: `new`, or one second after the file's
/// `old` one when `new` is not later (two captures within a second, or a clock fixed by
/// `KCO_NOW`). A rewritten file's `capturedAt` always moves: that is what tells an
/// observation from a hand edit in git history (`history::version`).
fn later_capture(old: Option<&str>, new: Option<String>) -> Option<String> {
    let parse = |t: &str| humantime::parse_rfc3339(t).ok();
    match (old.and_then(parse), new.as_deref().and_then(parse)) {
        (Some(o), Some(n)) if n <= o => {
            Some(crate::clock::rfc3339(o + std::time::Duration::from_secs(1)))
        }
        _ => new,
    }
}

/// Writes `file` at `path` unless the existing file already holds the same offsets (and
/// config, when captured). Also says whether the file at `path` is now known to be this
/// connector's (same name and cluster inside). A connector `paused_by` its service around a
/// pending request keeps the state its file records: the service puts it back.
fn write(
    path: &Path,
    mut file: OffsetsFile,
    redacted: Vec<String>,
    paused_by: Option<&ServicePause>,
    opts: &SnapshotOptions,
    files: &crate::fsutil::Batch,
    points_at_schema: &std::sync::atomic::AtomicBool,
) -> Result<(ConnectorSnapshot, bool)> {
    let existing = std::fs::read_to_string(path).ok();
    let previous = existing
        .as_deref()
        .map(|text| (text, OffsetsFile::parse(path, text)));
    let mut message = None;
    let mut is_current = true;
    if let Some(pause) = paused_by {
        let recorded = previous
            .as_ref()
            .and_then(|(_, old)| old.as_ref().ok())
            .and_then(|old| old.metadata.state);
        if recorded.is_some() {
            file.metadata.state = recorded;
        }
        message = Some(pause.snapshot_note(recorded.map(|s| s.target())));
    }
    if let Some((_, Ok(old))) = &previous {
        if file.offsets.is_empty() && !old.offsets.is_empty() && !opts.allow_empty {
            let report = ConnectorSnapshot {
                name: file.metadata.name.clone(),
                connector_type: Some(file.metadata.connector_type),
                outcome: SnapshotOutcome::Failed,
                path: path.to_path_buf(),
                partitions: None,
                redacted,
                message: Some(format!(
                    "the cluster answered with no offsets for it, and its file holds {}: the file is left as it was (a wrong cluster, URL or offsets topic answers the same; if its offsets were reset on purpose, `kco snapshot {} --allow-empty` records them empty)",
                    crate::text::count(old.offsets.len(), "partition"),
                    file.metadata.name
                )),
                health: Default::default(),
            };
            return Ok((report, false));
        }
    }
    let outcome = match &previous {
        None => SnapshotOutcome::Created,
        Some((text, Ok(old))) => {
            if !opts.with_config && file.config.is_none() {
                // Only `--with-config` refreshes a captured config; keep the one there is.
                file.config = old.config.clone();
            }
            let same_offsets = if in_canonical_order(&old.offsets) {
                old.offsets == file.offsets
            } else {
                let mut old_sorted = old.offsets.clone();
                sort_entries(&mut old_sorted);
                old_sorted == file.offsets
            };
            // A connector its owner paused or stopped is recorded as such: the target state
            // is part of what the file records (a transient one, UNASSIGNED during a
            // rebalance, is not).
            let target = |f: &OffsetsFile| f.metadata.state.map(|s| s.target());
            let same_state = target(old) == target(&file) || target(&file).is_none();
            if !same_state {
                message = Some(format!(
                    "state {} recorded (the file had {})",
                    target(&file).map(|t| t.to_string()).unwrap_or_default(),
                    target(old)
                        .map(|t| t.to_string())
                        .unwrap_or_else(|| "none".into())
                ));
            }
            let same = same_offsets && old.config == file.config && same_state;
            if same && old.is_sealed() && old.is_canonical_text(text) {
                is_current = old.metadata.name == file.metadata.name
                    && old.metadata.cluster == file.metadata.cluster;
                SnapshotOutcome::Unchanged
            } else {
                if same {
                    message = Some("same offsets; rewritten in canonical form".into());
                }
                file.metadata.captured_at = later_capture(
                    old.metadata.captured_at.as_deref(),
                    file.metadata.captured_at,
                );
                SnapshotOutcome::Updated
            }
        }
        Some((_, Err(problem))) => {
            message = Some(format!("replaced an unreadable file ({problem})"));
            SnapshotOutcome::Updated
        }
    };
    if outcome != SnapshotOutcome::Unchanged {
        let schema_ref = existing
            .as_deref()
            .and_then(|t| t.lines().next())
            .and_then(|l| l.strip_prefix(SCHEMA_COMMENT))
            .filter(|r| !r.trim().is_empty())
            .unwrap_or(&opts.schema_ref);
        if schema_ref == DEFAULT_SCHEMA_REF {
            points_at_schema.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        files
            .put(path, file.render(schema_ref).as_bytes())
            .map_err(|e| Error::Write {
                path: path.to_path_buf(),
                source: e,
            })?;
    }
    let report = ConnectorSnapshot {
        name: file.metadata.name.clone(),
        connector_type: Some(file.metadata.connector_type),
        outcome,
        path: path.to_path_buf(),
        partitions: Some(file.offsets.len()),
        redacted,
        message,
        health: Default::default(),
    };
    Ok((report, is_current))
}

/// The cluster no longer has connector `name` (a 404 alone may be a worker that has not read
/// the latest configs yet).
fn gone(client: &dyn Service, name: &str) -> bool {
    client
        .connector_names()
        .is_ok_and(|names| !names.iter().any(|n| n == name))
}

fn skipped(l: &ConnectorListing, path: PathBuf) -> ConnectorSnapshot {
    ConnectorSnapshot {
        name: l.name.clone(),
        connector_type: None,
        outcome: SnapshotOutcome::Skipped,
        path,
        partitions: None,
        redacted: Vec::new(),
        message: Some("connector type unknown: is its plugin installed on the worker?".into()),
        health: Default::default(),
    }
}

fn failed(l: &ConnectorListing, path: PathBuf, message: String) -> ConnectorSnapshot {
    ConnectorSnapshot {
        name: l.name.clone(),
        connector_type: l.connector_type,
        outcome: SnapshotOutcome::Failed,
        path,
        partitions: None,
        redacted: Vec::new(),
        message: Some(message),
        health: Default::default(),
    }
}

#[cfg(test)]
mod tests;
