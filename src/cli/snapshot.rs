//! `kco snapshot`: every connector's offsets to versioned YAML files.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::all_clusters::Structured;
use super::output::Style;
use super::progress::Bar;
use super::report_error;
use super::Context;
use crate::engine::history::record::{parse_trailer, Committed, Committer, RecordMessage};
use crate::engine::history::trailer::CommitKind;
use crate::engine::history::when::short_id;
use crate::engine::snapshot::{
    snapshot, snapshot_reporting, SnapshotOptions, SnapshotOutcome, SnapshotReport,
};
use crate::engine::Selector;
use crate::error::{Result, EXIT_ERROR, EXIT_OK};

/// Save connectors' offsets to versioned YAML files, one per connector
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Files: <dir>/<cluster>/<connector>.yaml. A file whose offsets did not change is not \
rewritten (byte-identical). If some connectors cannot be read, the others are still written and \
kco exits 1 naming them.\n\n\
--commit (in a git repository): commits exactly the cluster's files this run captured or \
pruned (never other files, never what is staged by hand), as `git commit -- FILES` would, with \
the message `offsets of CLUSTER` and the trailer `Kco-Snapshot: CLUSTER` (a label: every file \
kco rewrites from live gets a later capturedAt, and that makes it an observation of the cluster, \
which an apply from git history never applies, committed by kco or by hand). No commit when no file changed. \
--record apply|undo writes `Kco-Apply: CLUSTER` or `Kco-Undo: CLUSTER` instead: the record of \
what an apply or an undo did, which `kco log` shows as such (docs/time-travel.md: snapshot with \
--commit before the operation and with --record after it, and the history holds the cluster's \
real movement). The identity is git's (GIT_AUTHOR_NAME/EMAIL, GIT_COMMITTER_NAME/EMAIL, \
`git config user.name`/`user.email`); without one kco stops before anything is written. No \
hooks run; kco never pushes.\n\nExit codes: 0 success, 1 error (unreachable cluster, a name or glob \
that matches no connector, unsupported version, or any connector that could not be read; with \
--all-clusters, any cluster that failed; --commit: no git repository or identity).\n\nExamples:\n  kco snapshot\n  \
kco --cluster prod snapshot --with-config --prune\n  \
kco --cluster prod snapshot --commit\n  \
kco snapshot --commit --record apply --trailer \"Kco-Commit: $SHA\""
)]
pub struct Args {
    /// Connector names or globs [default: every connector]
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::connector_names))]
    pub names: Vec<String>,
    /// Only connectors of this type
    #[arg(long = "type", value_enum)]
    pub kind: Option<super::TypeArg>,
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// Also capture each connector's config (secrets become ${kco:env:VAR} placeholders)
    #[arg(long)]
    pub with_config: bool,
    /// Remove files of connectors that no longer exist on the cluster (never every file of
    /// the cluster without --allow-empty)
    #[arg(long)]
    pub prune: bool,
    /// Record what empties the backup: a file whose connector the cluster answers with no
    /// offsets while the file holds some, and --prune of every file of the cluster [default:
    /// such a file is left as it was and such a prune refused, exit 1]
    #[arg(long)]
    pub allow_empty: bool,
    /// Snapshot every cluster of kco.yaml at once
    #[arg(long)]
    pub all_clusters: bool,
    /// List every connector, unchanged ones too [default: those whose file was written, and a
    /// count of the others]
    #[arg(long)]
    pub all: bool,
    /// Commit the files this run captured or pruned (and nothing else), with the trailer
    /// `Kco-Snapshot: CLUSTER`
    #[arg(long)]
    pub commit: bool,
    /// With --commit: record the cluster's offsets after an apply or an undo (trailer
    /// `Kco-Apply` or `Kco-Undo`) instead of an observation
    #[arg(long, value_enum, value_name = "OPERATION", requires = "commit")]
    pub record: Option<RecordArg>,
    /// With --commit: one more trailer for the message, `Key: value` (e.g.
    /// `Kco-Commit: SHA`, the commit applied; `Kco-Backup: ID`); repeatable
    #[arg(long, value_name = "TRAILER", requires = "commit", value_parser = parse_trailer)]
    pub trailer: Vec<(String, String)>,
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

/// What a `--commit` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordArg {
    /// The cluster after an apply (`Kco-Apply`)
    Apply,
    /// The cluster after an undo (`Kco-Undo`)
    Undo,
}

impl From<RecordArg> for CommitKind {
    fn from(r: RecordArg) -> Self {
        match r {
            RecordArg::Apply => CommitKind::Apply,
            RecordArg::Undo => CommitKind::Undo,
        }
    }
}

/// Commits run one at a time (with --all-clusters the clusters are snapshotted at once).
static COMMITTING: Mutex<()> = Mutex::new(());

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let metrics = super::metrics::Run::start(ctx, "snapshot", &args.metrics)?;
    let result = judge(args, ctx, metrics.as_ref());
    super::metrics::finish(metrics, ctx, result)
}

/// The snapshot itself; its metrics added to `metrics` when asked for.
fn judge(args: Args, ctx: &Context, metrics: Option<&super::metrics::Run>) -> Result<u8> {
    ctx.ensure_cluster_named(&snapshots_dir(&args, ctx))?;
    if args.commit {
        // Before any request or write: a repository, and an identity to commit with.
        Committer::open(&snapshots_dir(&args, ctx))?;
    }
    if args.all_clusters {
        let work = |name: &str| {
            let r = capture(&args, ctx, Some(name));
            if let Some(m) = metrics {
                if let Ok(report) = &r {
                    m.add(name, crate::engine::metrics::snapshot_metrics(report));
                }
                m.cluster_ended(name, &r, |report| !report.failed().is_empty());
            }
            r
        };
        return super::all_clusters::run(ctx, work, |r, s| finish(r, s, ctx, &args));
    }
    let report = capture(&args, ctx, None)?;
    if let Some(m) = metrics {
        m.add(
            &report.cluster,
            crate::engine::metrics::snapshot_metrics(&report),
        );
    }
    Ok(finish(&report, Structured::Alone, ctx, &args))
}

/// Snapshots one cluster (`None`: the one the global flags name).
pub(super) fn capture(args: &Args, ctx: &Context, cluster: Option<&str>) -> Result<SnapshotReport> {
    let target = match cluster {
        Some(name) => ctx.target_named(Some(name))?,
        None => ctx.target()?,
    };
    super::recover::drop_left_behind_lock(ctx, &target.name)?;
    if let Some(f) =
        crate::engine::operation::ensure_finished_shared(&ctx.state_dir(), &target.name)?
    {
        super::recover::say_finished_elsewhere(ctx, &f);
    }
    let client = ctx.connect_listing(&target)?;
    let dir = snapshots_dir(args, ctx);
    let opts = SnapshotOptions {
        selector: Selector::new(&args.names, args.kind.map(Into::into))?,
        parallel: args.read.parallel,
        with_config: args.with_config,
        prune: args.prune,
        allow_empty: args.allow_empty,
        freshness: args.read.freshness(&ctx.config, &target.name),
        ..SnapshotOptions::default()
    };
    // A cluster read from its topics has no URL: it is where the service says it reads.
    let place = match target.http.urls.is_empty() {
        true => client.endpoint(),
        false => target.http.urls.join(", "),
    };
    ctx.printer.status(&format!(
        "Snapshotting cluster `{}` ({place}) into {}",
        target.name,
        ctx.display_path(&crate::engine::store::cluster_dir(&dir, &target.name))
    ));
    let now = crate::clock::now_rfc3339;
    let mut report = if cluster.is_some() {
        // Clusters run side by side: one bar each would overwrite the others.
        snapshot(&*client, &target.name, &dir, &opts, &now)?
    } else {
        let bar = Bar::new(&ctx.printer, "snapshot");
        snapshot_reporting(&*client, &target.name, &dir, &opts, &now, &bar)?
    };
    if args.commit {
        report.commit = commit(args, &dir, &report)?;
    }
    Ok(report)
}

fn snapshots_dir(args: &Args, ctx: &Context) -> PathBuf {
    match &args.dir {
        Some(d) => ctx.cwd.join(d),
        None => ctx.snapshots_dir(),
    }
}

/// `--commit`: the files this run owns, committed with the record's trailers.
fn commit(args: &Args, dir: &Path, report: &SnapshotReport) -> Result<Option<Committed>> {
    let _one_at_a_time = COMMITTING.lock().unwrap_or_else(|e| e.into_inner());
    let message = RecordMessage {
        kind: args.record.map_or(CommitKind::Snapshot, Into::into),
        cluster: report.cluster.clone(),
        trailers: args.trailer.clone(),
    };
    Committer::open(dir)?.commit(&report.owned_files(), &message.text())
}

/// Prints a cluster's report; its exit code.
fn finish(report: &SnapshotReport, structured: Structured, ctx: &Context, args: &Args) -> u8 {
    for c in &report.connectors {
        if c.outcome == SnapshotOutcome::Skipped {
            ctx.printer.warn(&format!(
                "skipped `{}`: {}",
                c.name,
                c.message.as_deref().unwrap_or_default()
            ));
        }
    }
    if ctx.printer.format == super::OutputFormat::Openmetrics {
        // The run's metrics take the report's place (cli/metrics.rs).
    } else if ctx.printer.is_structured() {
        if structured == Structured::Alone {
            ctx.printer.structured(report);
        }
    } else {
        // With --all-clusters every row names its cluster.
        render(report, ctx, args.all, structured == Structured::Together);
    }
    if args.commit {
        ctx.printer.status(&match &report.commit {
            Some(c) => format!(
                "Committed {} as {}: {}",
                super::words::count(c.files.len(), "file"),
                short_id(&c.commit),
                c.summary
            ),
            None => format!(
                "No snapshot file of cluster `{}` changed: no commit",
                report.cluster
            ),
        });
    }
    let failed = report.failed();
    if failed.is_empty() {
        return EXIT_OK;
    }
    let names: Vec<String> = failed.iter().map(|c| format!("`{}`", c.name)).collect();
    // The report holds the failures; this closing line names them on stderr.
    report_error::failure(
        &ctx.printer,
        &format!(
            "could not snapshot {}: {} (their files were left as they were)",
            super::words::count(failed.len(), "connector"),
            names.join(", ")
        ),
    );
    EXIT_ERROR
}

fn render(r: &SnapshotReport, ctx: &Context, all: bool, cluster_column: bool) {
    let p = &ctx.printer;
    let width = r.connectors.iter().map(|c| c.name.len()).max().unwrap_or(0);
    // `created  east  orders  ...` with --all-clusters.
    let cluster = if cluster_column {
        format!("{}  ", r.cluster)
    } else {
        String::new()
    };
    let blank = " ".repeat(cluster.len());
    // An unchanged file is shown when something about it is worth saying (a connector its
    // service paused around a pending request, its file's state kept).
    let shown = |c: &&crate::engine::snapshot::ConnectorSnapshot| {
        all || c.outcome != SnapshotOutcome::Unchanged
            || c.message.is_some()
            || !c.health.is_healthy()
    };
    for c in r.connectors.iter().filter(shown) {
        let (word, style) = match c.outcome {
            SnapshotOutcome::Created => ("created", Style::Good),
            SnapshotOutcome::Updated => ("updated", Style::Good),
            SnapshotOutcome::Unchanged => ("unchanged", Style::Dim),
            SnapshotOutcome::Skipped => ("skipped", Style::Warn),
            SnapshotOutcome::Failed => ("failed", Style::Bad),
        };
        let detail = match (c.outcome, c.partitions) {
            (SnapshotOutcome::Skipped | SnapshotOutcome::Failed, _) => {
                c.message.clone().unwrap_or_default()
            }
            (_, Some(n)) => {
                let mut s = format!(
                    "{} ({})",
                    ctx.display_path(&c.path),
                    super::words::count(n, "partition")
                );
                if let Some(m) = &c.message {
                    s.push_str(&format!("; {m}"));
                }
                s
            }
            _ => String::new(),
        };
        p.line(&format!(
            "{} {cluster}{:width$}  {detail}",
            p.paint(style, &format!("{word:<9}")),
            c.name
        ));
        if !c.redacted.is_empty() {
            p.line(&format!(
                "{:9} {blank}{:width$}  secrets replaced by placeholders: {}",
                "",
                "",
                c.redacted.join(", ")
            ));
        }
        // Captured all the same; the connector or a task is FAILED (or long UNASSIGNED).
        if !c.health.is_healthy() {
            p.line(&format!(
                "{:9} {blank}{:width$}  {}",
                "",
                "",
                p.paint(Style::Bad, &c.health.describe())
            ));
        }
    }
    for s in &r.stale {
        let (word, note) = if s.pruned {
            ("pruned", "removed: the connector no longer exists")
        } else {
            (
                "stale",
                "the connector no longer exists (--prune removes the file)",
            )
        };
        p.line(&format!(
            "{} {cluster}{:width$}  {} {note}",
            p.paint(Style::Warn, &format!("{word:<9}")),
            s.name,
            ctx.display_path(&s.path)
        ));
    }
    let counts: Vec<String> = [
        (SnapshotOutcome::Created, "created"),
        (SnapshotOutcome::Updated, "updated"),
        (SnapshotOutcome::Unchanged, "unchanged"),
        (SnapshotOutcome::Skipped, "skipped"),
        (SnapshotOutcome::Failed, "failed"),
    ]
    .into_iter()
    .map(|(o, word)| (r.count(o), word))
    .filter(|(n, _)| *n > 0)
    .map(|(n, word)| format!("{n} {word}"))
    .collect();
    p.status(&format!(
        "{}{}{}{}",
        if cluster_column {
            format!("cluster `{}`: ", r.cluster)
        } else {
            String::new()
        },
        super::words::count(r.connectors.len(), "connector"),
        if counts.is_empty() {
            String::new()
        } else {
            format!(": {}", counts.join(", "))
        },
        match (r.stale.len(), r.stale.iter().any(|s| s.pruned)) {
            (0, _) => String::new(),
            (k, true) => format!("; {} pruned", super::words::count(k, "stale file")),
            (k, false) => format!("; {}", super::words::count(k, "stale file")),
        }
    ));
}
