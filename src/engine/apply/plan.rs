//! The apply plan, as data: for each connector, what will be sent and why. Built from the files
//! and live state with reads only; printed (or serialized) before anything changes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::client::{ChangeKind, ConnectVersion, ConnectorListing, Op, Service};
use crate::compare::{compare, PartitionDiff, PartitionKind};
use crate::engine::mirror::Translation;
use crate::engine::probe::require_changes;
use crate::engine::settle::settle_listing;
use crate::engine::{parallel, probe, require_version, ClusterInfo, LoadedFile};
use crate::error::{Error, Result};
use crate::model::{
    canonical_fields, ConnectorState, ConnectorType, Fields, OffsetEntry, PatchEntry, TargetState,
};

/// A connector config with its secrets resolved. Never printed: `Debug` hides the values.
#[derive(Clone, Default)]
pub struct ResolvedConfig(pub BTreeMap<String, String>);

impl std::fmt::Debug for ResolvedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = crate::text::count(self.0.len(), "key");
        write!(f, "ResolvedConfig({keys}, values redacted)")
    }
}

/// One thing the user asked for.
#[derive(Debug, Clone)]
pub enum Want {
    /// Make connector `target` hold the file's offsets.
    File {
        target: String,
        file: Box<LoadedFile>,
        /// The file's config with placeholders resolved (only with `--create`).
        config: Option<ResolvedConfig>,
        /// Environment variables the config's placeholders name.
        secret_vars: Vec<String>,
        /// A change from git history (`apply --commit`, `--changed-since`): only the
        /// partitions it changed are planned, not the whole file.
        change: Option<Change>,
    },
    /// Delete every offset of `name`.
    Reset { name: String },
    /// Delete connector `name` and its offsets (it was created by the apply being undone).
    Delete { name: String },
}

impl Want {
    pub fn target(&self) -> &str {
        match self {
            Want::File { target, .. } => target,
            Want::Reset { name } | Want::Delete { name } => name,
        }
    }

    /// The file a `File` want applies, with its target.
    pub fn file(&self) -> Option<(&str, &LoadedFile)> {
        match self {
            Want::File { target, file, .. } => Some((target, file)),
            _ => None,
        }
    }
}

/// What a change to a connector's file did to its offsets, partition by partition: the
/// partitions it set (changed or added) and those it removed. Applied as such, it leaves
/// every other live partition where it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Change {
    pub set: Vec<OffsetEntry>,
    pub removed: Vec<Fields>,
    /// Per set partition (by `canonical_fields` of its partition), the offset the files had
    /// before the change; absent for a partition the change added. It tells a forward change
    /// (skip ahead) from a backward one (rewind).
    pub from: std::collections::BTreeMap<String, Fields>,
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.removed.is_empty()
    }
}

/// What planning may do.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    pub prune: bool,
    pub create: bool,
    pub parallel: usize,
    /// The state to leave a created connector in; `None`: the state recorded in its file.
    pub create_state: Option<TargetState>,
    /// On a service that observes offsets: the bound on an observation's age (kco.yaml's
    /// `confluentCloud.maxObservedAgeSeconds`); `None`: 120 s.
    pub max_observed_age: Option<std::time::Duration>,
    /// A file of another Kafka cluster (a failover or failback) may move a connector of its
    /// name that runs on the target (`--allow-running-primary`); else that is a plan error.
    pub allow_running_primary: bool,
}

/// The whole plan against one cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ApplyPlan {
    pub cluster: String,
    pub url: String,
    pub connect_version: String,
    /// The service and its version, for the plan's header: `Kafka Connect 4.1.0`, or
    /// `Confluent Cloud` (which has no version to read).
    #[serde(skip)]
    pub server: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kafka_cluster_id: Option<String>,
    pub prune: bool,
    pub connectors: Vec<ConnectorPlan>,
    /// Files not planned, and why (source connectors of another Kafka cluster without
    /// `--with-sources`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// Warnings about the plan as a whole (a neighbour cluster that could not be looked at
    /// for sinks sharing a consumer group).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A file the plan leaves out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    pub name: String,
    pub why: String,
}

impl ApplyPlan {
    /// Connectors that will be changed.
    pub fn changes(&self) -> usize {
        self.connectors
            .iter()
            .filter(|c| c.action.changes())
            .count()
    }

    /// Connectors that cannot be applied (nothing is applied while there are any).
    pub fn errors(&self) -> usize {
        self.connectors
            .iter()
            .filter(|c| matches!(c.action, Action::Error { .. }))
            .count()
    }
}

/// One connector's part of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectorPlan {
    /// The connector on the target cluster.
    pub name: String,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::shown_path::option"
    )]
    pub file: Option<PathBuf>,
    /// `cluster/name` the file was captured from, when that is not this connector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub connector_type: Option<ConnectorType>,
    /// The state now; `None` when the connector does not exist.
    pub live_state: Option<ConnectorState>,
    pub action: Action,
    /// The partitions that differ (wanted = file, actual = live).
    pub partitions: Vec<PartitionDiff>,
    /// How many partitions already hold the wanted offset.
    pub unchanged: usize,
    pub warnings: Vec<String>,
    /// A sink file from another Kafka cluster: its partitions renamed and translated through
    /// MirrorMaker 2's checkpoints (`engine::mirror`); `wanted` holds the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation: Option<Translation>,
    /// Config keys kco changes in the file's config when it creates the connector (a DR
    /// cluster's topic names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_changes: Vec<crate::engine::mirror::ConfigChange>,
    /// How the service itself takes part in the change, when it does (a service that pauses
    /// and resumes the connector around an alter, or creates it at its position):
    /// `Confluent Cloud pauses and resumes it itself while the offsets change`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_service: Option<String>,
    /// The steps the service makes the change with, in the order the executor runs them
    /// ([`Service::steps`]); none when nothing is sent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Op>,
    /// A connector to create: what its `partitions` compare the file's offsets with, the
    /// offsets an earlier connector of its name left, which the created connector's PATCH
    /// replaces (or nothing, and why: [`label_creates`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leftovers: Option<crate::engine::orphaned::of_name::Gone>,
    /// Live offsets, for the backup and for verification.
    #[serde(skip)]
    pub live_offsets: Vec<OffsetEntry>,
    /// A change from git history: the live partitions outside it, left where they are (not
    /// in `partitions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_alone: Option<usize>,
    /// A change from git history: the partitions it moved forward whose target live has
    /// already passed, left where they are (`risk::passed`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passed: Vec<PartitionDiff>,
    /// A change from git history: the files' offset before the change, per partition it set
    /// (`Change::from`), for the direction rule.
    #[serde(skip)]
    pub change_from: std::collections::BTreeMap<String, Fields>,
    /// The offsets wanted (the file's, or those a change set; empty for a reset).
    #[serde(skip)]
    pub wanted: Vec<OffsetEntry>,
    /// The partitions whose offsets the change removes (by canonical partition): reset as
    /// `--prune` resets a live-only partition.
    #[serde(skip)]
    pub removed: BTreeSet<String>,
    #[serde(skip)]
    pub class: Option<String>,
    #[serde(skip)]
    pub config: Option<ResolvedConfig>,
}

impl ConnectorPlan {
    /// This plan, which cannot be applied, and why: nothing is applied while any connector
    /// has such a plan.
    fn failing(mut self, message: String) -> ConnectorPlan {
        self.action = Action::Error { message };
        self
    }

    /// Says how `client`'s service makes this plan's change: its steps, and what it does
    /// itself, in words.
    pub(crate) fn by_service_of(&mut self, client: &dyn Service) {
        self.by_service = by_service(client, &self.action);
        self.steps = self
            .action
            .change()
            .map_or_else(Vec::new, |c| client.steps(c).to_vec());
    }

    /// Whether applying removes this live-only partition's offset: every one with `prune`, or
    /// of a connector to create (what an earlier connector of its name left: the file's
    /// offsets replace it), else those the change removed.
    pub fn removes(&self, d: &PartitionDiff, prune: bool) -> bool {
        d.kind == PartitionKind::OnlyActual
            && (prune
                || matches!(self.action, Action::Create { .. })
                || self.removed.contains(&canonical_fields(&d.partition)))
    }

    /// Whether `d` (wanted against live) is a partition a change moved forward whose target
    /// live has already passed: left where it is (`risk::passed`), at planning and again when
    /// the stopped connector's offsets are read before the PATCH.
    pub fn passed(&self, d: &PartitionDiff) -> bool {
        let (Some(from), Some(to)) = (
            self.change_from.get(&canonical_fields(&d.partition)),
            d.wanted.as_ref(),
        ) else {
            return false;
        };
        let shape = self
            .connector_type
            .and_then(|t| crate::shapes::registry().find(t, self.class.as_deref()));
        let forward = crate::compare::movement_in(shape, &d.partition, from, to);
        let live_to_target = d
            .actual
            .as_ref()
            .and_then(|live| crate::compare::movement_in(shape, &d.partition, live, to));
        crate::engine::risk::passed(forward.as_ref(), live_to_target.as_ref())
    }

    /// The PATCH body for a comparison of the wanted offsets with live ones: wanted offsets
    /// for moved and missing partitions, and a null for each live-only one it removes.
    pub fn entries(&self, diffs: &[PartitionDiff], prune: bool) -> Vec<PatchEntry> {
        diffs
            .iter()
            .filter(|d| !self.passed(d))
            .filter_map(|d| match d.kind {
                PartitionKind::Moved | PartitionKind::OnlyWanted => Some(PatchEntry {
                    partition: d.partition.clone(),
                    offset: d.wanted.clone(),
                }),
                PartitionKind::OnlyActual if self.removes(d, prune) => Some(PatchEntry {
                    partition: d.partition.clone(),
                    offset: None,
                }),
                _ => None,
            })
            .collect()
    }
}

/// What will be done to one connector.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Live already holds the file's offsets: no request at all.
    NoChange {
        /// Live-only partitions left as they are (no `--prune`).
        kept: usize,
    },
    /// Stop, PATCH `entries`, verify, put the state back (or leave it in `end_state`).
    Patch {
        entries: Vec<PatchEntry>,
        /// How many of `entries` are `null` (`--prune`).
        prune_nulls: usize,
        kept: usize,
        /// The state to leave it in instead of the one it had: `--create-state` on a
        /// failover (or failback) onto a connector the target already has, such as the
        /// sink an earlier failback left STOPPED there.
        #[serde(skip_serializing_if = "Option::is_none")]
        end_state: Option<TargetState>,
    },
    /// Create stopped from the file's config, PATCH, verify, then start in `start_state`.
    Create {
        entries: Vec<PatchEntry>,
        start_state: TargetState,
        config_keys: usize,
        /// Environment variables that supply its secrets (the values are never shown).
        secrets_from_env: Vec<String>,
    },
    /// Stop, DELETE every offset, verify none is left, put the state back.
    Reset { partitions: usize },
    /// Stop, DELETE every offset, then DELETE the connector (undoing its creation).
    Delete { partitions: usize },
    /// Cannot be applied; nothing is applied while any connector has this.
    Error { message: String },
}

impl Action {
    /// The change its service makes ([`Service::steps`]); none when nothing is sent.
    pub fn change(&self) -> Option<ChangeKind> {
        match self {
            Action::Patch { .. } => Some(ChangeKind::Patch),
            Action::Create { .. } => Some(ChangeKind::Create),
            Action::Reset { .. } => Some(ChangeKind::Reset),
            Action::Delete { .. } => Some(ChangeKind::Delete),
            Action::NoChange { .. } | Action::Error { .. } => None,
        }
    }

    /// Whether applying sends mutating requests for this connector.
    pub fn changes(&self) -> bool {
        matches!(
            self,
            Action::Patch { .. }
                | Action::Create { .. }
                | Action::Reset { .. }
                | Action::Delete { .. }
        )
    }

    pub fn kind(&self) -> ActionKind {
        match self {
            Action::NoChange { .. } => ActionKind::NoChange,
            Action::Patch { .. } => ActionKind::Patch,
            Action::Create { .. } => ActionKind::Create,
            Action::Reset { .. } => ActionKind::Reset,
            Action::Delete { .. } => ActionKind::Delete,
            Action::Error { .. } => ActionKind::Error,
        }
    }
}

/// What a plan does to a connector, without the details (`action` in the apply report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    NoChange,
    Patch,
    Create,
    Reset,
    Delete,
    Error,
}

/// Reads live state and plans every want. Fails before any plan when the cluster cannot
/// alter offsets at all.
pub fn build(
    client: &dyn Service,
    cluster: &str,
    wants: &[Want],
    opts: &PlanOptions,
) -> Result<ApplyPlan> {
    build_translated(client, cluster, wants, opts, &Translations::new())
}

/// What `engine::mirror::translate` made of the sink files that cross Kafka clusters, by
/// target connector: a translation, or why there is none (a plan error).
pub type Translations = BTreeMap<String, std::result::Result<Translation, String>>;

/// [`build`], with the sink files of another Kafka cluster translated.
pub fn build_translated(
    client: &dyn Service,
    cluster: &str,
    wants: &[Want],
    opts: &PlanOptions,
    translations: &Translations,
) -> Result<ApplyPlan> {
    let info = probe(client)?;
    let what = if wants.iter().all(|w| matches!(w, Want::Reset { .. })) {
        "resetting offsets"
    } else {
        "altering offsets"
    };
    require_changes(client, cluster, what)?;
    require_version(&info, ConnectVersion::OFFSETS_WRITE, what)?;
    let (mut listing, unlisted) = list_wanted(client, cluster, wants)?;
    // The state the plan shows, the journal and the backup record.
    let wanted: BTreeSet<&str> = wants.iter().map(Want::target).collect();
    settle_listing(client, &mut listing, |l| wanted.contains(l.name.as_str()));
    let connectors = parallel::map(wants, opts.parallel, |w| {
        let translation = translations.get(w.target());
        let mut plan = plan_one(
            client,
            &info,
            cluster,
            listing.get(w.target()),
            w,
            opts,
            translation,
        );
        if unlisted.contains(w.target()) {
            plan.action = Action::Error {
                message: format!(
                    "connector `{}` exists on cluster `{cluster}`, but Connect's listing leaves it out (its status cannot be read yet, as just after it was created or during a rebalance): try again in a moment",
                    w.target()
                ),
            };
        }
        plan.by_service_of(client);
        plan
    });
    Ok(ApplyPlan {
        cluster: cluster.to_string(),
        url: info.url.clone(),
        connect_version: info.info.version.clone(),
        server: match client.capabilities().version_endpoint {
            true => format!("{} {}", client.backend().service(), info.info.version),
            false => client.backend().service().to_string(),
        },
        kafka_cluster_id: info.info.kafka_cluster_id.clone(),
        prune: opts.prune,
        connectors,
        left_out: Vec::new(),
        warnings: Vec::new(),
    })
}

/// What the service does itself in this action, in words (see
/// [`ConnectorPlan::by_service`]).
pub(crate) fn by_service(client: &dyn Service, action: &Action) -> Option<String> {
    let service = client.backend().service();
    let steps = client.steps(action.change()?);
    if steps.contains(&Op::CreateAt) {
        return Some(format!(
            "{service} creates it at its position in one request"
        ));
    }
    steps
        .contains(&Op::AwaitRestore)
        .then(|| format!("{service} pauses and resumes it itself while the offsets change"))
}

fn plan_one(
    client: &dyn Service,
    info: &ClusterInfo,
    cluster: &str,
    live: Option<&ConnectorListing>,
    want: &Want,
    opts: &PlanOptions,
    translation: Option<&std::result::Result<Translation, String>>,
) -> ConnectorPlan {
    let mut plan = blank(want.target(), live);
    let (file, config, secret_vars, change) = match want {
        Want::File {
            file,
            config,
            secret_vars,
            change,
            ..
        } => (
            Some(&**file),
            config.clone(),
            secret_vars.clone(),
            change.as_ref(),
        ),
        Want::Reset { .. } | Want::Delete { .. } => (None, None, Vec::new(), None),
    };
    if let (Want::Delete { .. }, None) = (want, live) {
        // Already gone: nothing to undo.
        return plan;
    }
    if let Some(f) = file {
        if let Err(message) = take_file(&mut plan, f, cluster, change, translation) {
            return plan.failing(message);
        }
    }
    let Some(live) = live else {
        let Some(f) = file else {
            let message = format!(
                "connector `{}` does not exist on cluster `{cluster}`",
                plan.name
            );
            return plan.failing(message);
        };
        let new = New {
            file: f,
            config,
            secret_vars,
        };
        return match plan_create(&mut plan, client, info, cluster, new, opts) {
            Ok(()) => plan,
            Err(message) => plan.failing(message),
        };
    };
    let checked = check_existing(&mut plan, file, live, opts, cluster)
        .and_then(|()| read_and_compare(&mut plan, client, change, opts));
    match checked {
        Ok(()) => existing_action(plan, live, want, file.is_some(), opts, cluster),
        Err(message) => plan.failing(message),
    }
}

/// The plan of the connector `name` that `live` lists (or none), before anything is
/// planned.
pub(crate) fn blank(name: &str, live: Option<&ConnectorListing>) -> ConnectorPlan {
    ConnectorPlan {
        name: name.to_string(),
        file: None,
        from: None,
        connector_type: live.and_then(|l| l.connector_type),
        live_state: live.and_then(ConnectorListing::state),
        action: Action::NoChange { kept: 0 },
        partitions: Vec::new(),
        unchanged: 0,
        warnings: Vec::new(),
        translation: None,
        config_changes: Vec::new(),
        by_service: None,
        steps: Vec::new(),
        left_alone: None,
        leftovers: None,
        passed: Vec::new(),
        change_from: Default::default(),
        live_offsets: Vec::new(),
        wanted: Vec::new(),
        removed: BTreeSet::new(),
        class: live.and_then(|l| l.class.clone()),
        config: None,
    }
}

/// What the file wants: its offsets (or those a change from git history sets), where it was
/// captured, and its offsets translated through MirrorMaker 2 when it is of another Kafka
/// cluster. `Err`: why it cannot be applied.
fn take_file(
    plan: &mut ConnectorPlan,
    f: &LoadedFile,
    cluster: &str,
    change: Option<&Change>,
    translation: Option<&std::result::Result<Translation, String>>,
) -> std::result::Result<(), String> {
    let meta = &f.file.metadata;
    plan.file = Some(f.path.clone());
    plan.wanted = f.file.offsets.clone();
    plan.connector_type = Some(meta.connector_type);
    if meta.name != plan.name || meta.cluster != cluster {
        plan.from = Some(format!("{}/{}", meta.cluster, meta.name));
    }
    plan.class = plan.class.take().or_else(|| meta.connector_class.clone());
    if let Some(ch) = change {
        plan.wanted = ch.set.clone();
        plan.removed = ch.removed.iter().map(canonical_fields).collect();
    }
    match translation {
        Some(Err(m)) => return Err(m.clone()),
        Some(Ok(_)) if change.is_some() => {
            return Err(format!(
                "{}: a change from git history cannot cross a MirrorMaker 2 mirror; apply the whole file (without --commit or --changed-since)",
                f.path.display()
                ))
                }
                Some(Ok(t)) => {
                plan.wanted = t.offsets.clone();
                plan.warnings.extend(t.stale_note());
                plan.translation = Some(t.clone());
                }
                None => {}
                }
    Ok(())
}

/// A connector to create: its file, and the config and secrets the caller resolved for it.
struct New<'a> {
    file: &'a LoadedFile,
    config: Option<ResolvedConfig>,
    secret_vars: Vec<String>,
}

/// Plans the create of a connector the cluster lacks (with `--create`), from its file's
/// config, started in the state its file records (or `--create-state`).
fn plan_create(
    plan: &mut ConnectorPlan,
    client: &dyn Service,
    info: &ClusterInfo,
    cluster: &str,
    new: New,
    opts: &PlanOptions,
) -> std::result::Result<(), String> {
    let (f, name) = (new.file, plan.name.clone());
    if !opts.create {
        let how = match f.file.config.is_some() || new.config.is_some() {
                true => " (use --create to create it from the file's config)".to_string(),
                false => format!(
                "; its file has no config to create it from: capture it with `kco --cluster {} snapshot --with-config` (the nightly recipe: KCO_WITH_CONFIG=1), then apply with --create",
                f.file.metadata.cluster
                ),
                };
        return Err(format!(
            "connector `{name}` does not exist on cluster `{cluster}`{how}"
        ));
    }
    let Some(mut config) = new
        .config
        .or_else(|| f.file.config.clone().map(ResolvedConfig))
    else {
        return Err(format!(
                "{}: the file has no config to create `{name}` from (capture it with `kco snapshot --with-config`)",
                f.path.display()
                ));
    };
    if let Some(t) = &plan.translation {
        plan.config_changes = crate::engine::mirror::rename_config(&mut config.0, t);
    }
    if info.version < ConnectVersion::INITIAL_STATE
        && client.steps(ChangeKind::Create).contains(&Op::Create)
    {
        return Err(format!(
                "creating `{name}` in the STOPPED state needs Kafka Connect {} (KIP-980); {} runs {}: create it yourself and stop it at once (`PUT /connectors/{name}/stop`; it may process records until then), then apply without --create",
                ConnectVersion::INITIAL_STATE, info.url, info.info.version
                ));
    }
    plan.partitions = compare(&plan.wanted, &[]);
    let recorded = f.file.metadata.state;
    if let Some(s) = recorded.filter(|s| s.is_transient() && opts.create_state.is_none()) {
        plan.warnings.push(format!(
                "{} records the state {s} (a rebalance or restart when it was taken), which does not say whether `{name}` ran: it is started RUNNING (--create-state picks another)", // not a count
                f.path.display()
                ));
    }
    let start_state = opts.create_state.unwrap_or_else(|| {
        f.file
            .metadata
            .state
            .map(ConnectorState::target)
            .unwrap_or(TargetState::Running)
    });
    // A failover starts what the primary ran: a sink its nightly captured stopped or
    // paused is started so only when the user says so, and the plan says it.
    if plan.translation.is_some()
        && opts.create_state.is_none()
        && start_state != TargetState::Running
    {
        plan.warnings.push(format!(
                "{} records `{name}` {start_state} on cluster `{}` when it was captured: it is created and left {start_state} on `{cluster}`, reading nothing; to start it with the others, apply with --create-state running", // not a count
                f.path.display(),
                f.file.metadata.cluster
                ));
    }
    plan.action = Action::Create {
        entries: plan.entries(&plan.partitions, false),
        start_state,
        config_keys: config.0.len(),
        secrets_from_env: new.secret_vars,
    };
    plan.config = Some(config);
    Ok(())
}

/// Checks an existing connector against its file: a running primary's sink, topics it does
/// not read, another type or class. Warnings go on the plan; `Err`: why it cannot be
/// applied.
fn check_existing(
    plan: &mut ConnectorPlan,
    file: Option<&LoadedFile>,
    live: &ConnectorListing,
    opts: &PlanOptions,
    cluster: &str,
) -> std::result::Result<(), String> {
    let name = plan.name.clone();
    plan.warnings
        .extend(crate::engine::strimzi::operator_warning(&name, live));
    // A file of another Kafka cluster says where the sink stood there; one of its name that
    // runs here (a primary's old sink, resumed on its own when its region came back) reads
    // beside the sink the file was captured from, each record twice, until stopped.
    if let (Some(f), Some(t)) = (file, &plan.translation) {
        if live.state() == Some(ConnectorState::Running) && !opts.allow_running_primary {
            return Err(format!(
                "`{name}` is RUNNING on `{cluster}`, and the file is of cluster `{}`, where the sink it was captured from may run too: both read the same records, each delivered twice; stop it on `{cluster}` first (PUT /connectors/{name}/stop) and apply, or move it while it runs with --allow-running-primary",
                f.file.metadata.cluster
            ));
        }
        // An existing connector keeps its config: offsets of a topic it does not read move
        // nothing it will read.
        if let Some(read) = live.config.get("topics") {
            let unread = unread_topics(&t.offsets, read);
            if !unread.is_empty() {
                let names: Vec<String> = unread.iter().map(|t| format!("`{t}`")).collect();
                if let Some(s) = opts.create_state {
                    // Started as asked, it would read its old topics, not the ones the
                    // file's offsets are for: the failover would run and read nothing.
                    return Err(format!(
                        "`{name}` exists on `{cluster}` ({}), a leftover of an earlier failover or failback that reads `topics={read}`, not {}: started {s} (--create-state) it would not read them; delete it on `{cluster}` (`curl -X DELETE <{cluster}'s URL>/connectors/{name}`) and apply again: --create makes it with the topics it reads here",
                        live.state().map_or_else(|| "state unknown".to_string(), |s| s.to_string()),
                        names.join(", ")
                    ));
                }
                plan.warnings.push(format!(
                    "`{name}` on `{cluster}` reads `topics={read}`, not {}: their offsets are set but it will not read them; delete it and apply with --create, which makes it with the topics it reads here, or add them to its config",
                    names.join(", ")
                ));
            }
        }
    }
    // A sink's file naming a topic the sink does not read (a typo in a hand edit, `ordres`):
    // its offsets would move nothing the sink reads, and Connect refuses those of a topic
    // that does not exist.
    if let (Some(f), None, Some(read)) = (file, &plan.translation, live.config.get("topics")) {
        if f.file.metadata.connector_type == ConnectorType::Sink {
            let unread = unread_topics(&f.file.offsets, read);
            if !unread.is_empty() {
                let names: Vec<String> = unread.iter().map(|t| format!("`{t}`")).collect();
                plan.warnings.push(format!(
                    "the file sets offsets of {}, which `{name}` does not read (`topics={read}`): a typo in the file? They move nothing it reads, and Connect refuses offsets of a topic that does not exist",
                    names.join(", ")
                ));
            }
        }
    }
    if let (Some(f), Some(t)) = (file, live.connector_type) {
        if f.file.metadata.connector_type != t {
            return Err(format!(
                "the file holds {} offsets but `{name}` on `{cluster}` is a {t} connector",
                f.file.metadata.connector_type
            ));
        }
        if let (Some(a), Some(b)) = (&f.file.metadata.connector_class, &live.class) {
            if a != b {
                plan.warnings.push(format!(
                    "the file was captured from a {a}; `{name}` is a {b}"
                ));
            }
        }
    }
    Ok(())
}

/// Reads the live offsets and compares them with what the file wants: a change from git
/// history leaves the live partitions it did not touch, and those whose target live has
/// already passed, where they are.
fn read_and_compare(
    plan: &mut ConnectorPlan,
    client: &dyn Service,
    change: Option<&Change>,
    opts: &PlanOptions,
) -> std::result::Result<(), String> {
    let name = plan.name.clone();
    // Offsets a service observes periodically are read until an observation is recent
    // (a stale one is an error, never planned from nor backed up as current).
    let fresh = crate::engine::observed::Freshness::with_max_age(
        opts.max_observed_age
            .unwrap_or(crate::engine::observed::DEFAULT_MAX_AGE),
    );
    let read = crate::engine::observed::read_offsets(
        client,
        &name,
        &fresh,
        &crate::clock::now,
        &crate::wait::SystemClock,
    );
    plan.live_offsets = match read {
        Ok(o) => o.entries,
        Err(e) => return Err(format!("cannot read the offsets of `{name}`: {e}")),
    };
    let shape = (plan.connector_type)
        .and_then(|t| crate::shapes::registry().find(t, plan.class.as_deref()));
    let mut diffs = crate::compare::compare_in(shape, &plan.wanted, &plan.live_offsets);
    if let Some(change) = change {
        // Live partitions the change did not touch are not part of the plan.
        let before = diffs.len();
        diffs.retain(|d| d.kind != PartitionKind::OnlyActual || plan.removes(d, false));
        plan.left_alone = Some(before - diffs.len());
        // A forward change whose target live has passed leaves the partition where it is.
        plan.change_from = change.from.clone();
        let (passed, kept): (Vec<_>, Vec<_>) = diffs.into_iter().partition(|d| plan.passed(d));
        diffs = kept;
        let gone: BTreeSet<String> = passed
            .iter()
            .map(|d| canonical_fields(&d.partition))
            .collect();
        plan.wanted
            .retain(|e| !gone.contains(&canonical_fields(&e.partition)));
        plan.passed = passed;
    }
    plan.unchanged = diffs.iter().filter(|d| !d.is_change()).count();
    plan.partitions = diffs.into_iter().filter(|d| d.is_change()).collect();
    Ok(())
}

/// The action on an existing connector, once its partitions are compared: delete (undoing
/// a create), reset (no file), patch, or nothing.
fn existing_action(
    mut plan: ConnectorPlan,
    live: &ConnectorListing,
    want: &Want,
    has_file: bool,
    opts: &PlanOptions,
    cluster: &str,
) -> ConnectorPlan {
    if let Want::Delete { .. } = want {
        plan.action = Action::Delete {
            partitions: plan.live_offsets.len(),
        };
        return plan;
    }
    if !has_file {
        plan.action = if plan.live_offsets.is_empty() {
            Action::NoChange { kept: 0 }
        } else {
            Action::Reset {
                partitions: plan.live_offsets.len(),
            }
        };
        return plan;
    }
    let entries = plan.entries(&plan.partitions, opts.prune);
    let kept = plan
        .partitions
        .iter()
        .filter(|d| d.kind == PartitionKind::OnlyActual && !plan.removes(d, opts.prune))
        .count();
    let end_state = leftover_state(&mut plan, live, opts, cluster);
    plan.action = match (entries.is_empty(), end_state) {
        (true, None) => Action::NoChange { kept },
        // In sync already, in another state: the file's offsets are sent again (the same
        // values) so that the transaction stops, verifies and starts it as any other.
        (true, Some(_)) => Action::Patch {
            entries: plan
                .wanted
                .iter()
                .map(|e| PatchEntry {
                    partition: e.partition.clone(),
                    offset: Some(e.offset.clone()),
                })
                .collect(),
            prune_nulls: 0,
            kept,
            end_state,
        },
        (false, _) => Action::Patch {
            prune_nulls: entries.iter().filter(|e| e.offset.is_none()).count(),
            entries,
            kept,
            end_state,
        },
    };
    plan
}

/// Labels each connector `plan` creates against what an earlier connector of its name left
/// (`leftovers`: its sink's group, its source's keys in the offsets topic), as the review
/// does: the created connector resumes from them, and its PATCH sets the file's offsets and
/// removes the others (`apply::transaction`), so its partitions are the file's offsets
/// compared with them, and `--fail-on` judges them. Where they cannot be read, the plan says
/// it compared with nothing (`leftovers`), and why. The PATCH itself is worked out again
/// from the offsets the created connector shows, as for any connector.
pub fn label_creates(
    plan: &mut ApplyPlan,
    client: &dyn Service,
    leftovers: &crate::engine::orphaned::of_name::Leftovers<'_>,
) {
    use crate::engine::orphaned::of_name::read;
    for c in &mut plan.connectors {
        let (Action::Create { .. }, Some(kind)) = (&c.action, c.connector_type) else {
            continue;
        };
        // A file of another Kafka cluster is translated through MirrorMaker 2: its
        // checkpoints, not this cluster's leftovers, say where it stands (`engine::dr`).
        if c.translation.is_some() {
            continue;
        }
        let config = c.config.as_ref().map(|r| &r.0);
        let (left, gone) = read(leftovers, client, &plan.cluster, &c.name, kind, config);
        let shape = crate::shapes::registry().find(kind, c.class.as_deref());
        let diffs = crate::compare::compare_in(shape, &c.wanted, &left);
        c.unchanged = diffs.iter().filter(|d| !d.is_change()).count();
        c.partitions = diffs.into_iter().filter(|d| d.is_change()).collect();
        c.leftovers = Some(gone);
    }
}

/// `--create-state` for a connector that exists. On a failover or failback (a file of
/// another Kafka cluster: the plan has a translation), the one of the file's name on the
/// target is a leftover of an earlier crossing (the sink a failback stopped there): it is
/// left in the state asked for, as one created would be. Elsewhere the flag is only for
/// the connectors --create makes, and a connector left in another state says so.
fn leftover_state(
    plan: &mut ConnectorPlan,
    live: &ConnectorListing,
    opts: &PlanOptions,
    cluster: &str,
) -> Option<TargetState> {
    let wanted = opts.create_state?;
    let name = plan.name.clone();
    let now = live
        .state()
        .filter(|s| !s.is_transient())
        .map(ConnectorState::target);
    if plan.translation.is_none() {
        if now.is_some_and(|s| s != wanted) {
            plan.warnings.push(format!(
                "`{name}` exists on `{cluster}`: --create-state {wanted} is for the connectors --create makes, and it keeps its state"
            ));
        }
        return None;
    }
    if now == Some(wanted) {
        return None;
    }
    Some(wanted)
}

// The live listing an apply plans from, with the connectors Connect's listing leaves out.

/// How often the listing is read again while a wanted connector exists but is not in it.
const RELISTS: usize = 3;
/// The pause before each new read.
const RELIST_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// The expanded listing, and the wanted connectors that exist but are not in it.
///
/// Connect's `GET /connectors?expand=...` leaves out a connector whose status or config this
/// worker cannot read yet (one created a moment ago, or during a rebalance): taken at its
/// word, an existing connector would be planned as one to create. When a wanted connector is
/// not in it, the plain `GET /connectors` (the names, from the same configs, no expansion)
/// says whether it exists; while one does, the expanded listing is read again. Those still
/// left out are returned, to be refused rather than created.
fn list_wanted(
    client: &dyn Service,
    cluster: &str,
    wants: &[Want],
) -> Result<(BTreeMap<String, ConnectorListing>, BTreeSet<String>)> {
    let failed = |e| Error::client(format!("cannot list connectors of `{cluster}`"), e);
    let mut listing = client.list_connectors().map_err(failed)?;
    for attempt in 0..=RELISTS {
        let absent: Vec<&str> = wants
            .iter()
            .map(Want::target)
            .filter(|n| !listing.contains_key(*n))
            .collect();
        if absent.is_empty() {
            return Ok((listing, BTreeSet::new()));
        }
        let names: BTreeSet<String> = client
            .connector_names()
            .map_err(failed)?
            .into_iter()
            .collect();
        let unlisted: BTreeSet<String> = absent
            .into_iter()
            .filter(|n| names.contains(*n))
            .map(str::to_string)
            .collect();
        if unlisted.is_empty() || attempt == RELISTS {
            return Ok((listing, unlisted));
        }
        std::thread::sleep(RELIST_PAUSE);
        listing = client.list_connectors().map_err(failed)?;
    }
    unreachable!("the last attempt returns")
}

/// The topics of a sink's `offsets` that its `topics` list (`read`) does not name.
fn unread_topics<'a>(offsets: &'a [OffsetEntry], read: &str) -> BTreeSet<&'a str> {
    let reads: BTreeSet<&str> = read.split(',').map(str::trim).collect();
    offsets
        .iter()
        .filter_map(|e| e.partition.get("kafka_topic").and_then(|v| v.as_str()))
        .filter(|topic| !reads.contains(topic))
        .collect()
}
