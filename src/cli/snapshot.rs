//! `kco snapshot`: every connector's offsets to versioned YAML files.

use std::path::PathBuf;

use super::all_clusters::Structured;
use super::output::Style;
use super::progress::Bar;
use super::report_error;
use super::Context;
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
kco exits 1 naming them.\n\nExit codes: 0 success, 1 error (unreachable cluster, a name or glob \
that matches no connector, unsupported version, or any connector that could not be read; with \
--all-clusters, any cluster that failed).\n\nExamples:\n  kco snapshot\n  \
kco snapshot 'orders-*' --type sink\n  kco --cluster prod snapshot --with-config --prune\n  \
kco --url http://localhost:8083 --cluster dev snapshot -o json"
)]
pub struct Args {
    /// Connector names or globs [default: every connector]
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
    /// Remove files of connectors that no longer exist on the cluster
    #[arg(long)]
    pub prune: bool,
    /// Snapshot every cluster of kco.yaml at once
    #[arg(long)]
    pub all_clusters: bool,
    /// List every connector, unchanged ones too [default: those whose file was written, and a
    /// count of the others]
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    if args.all_clusters {
        let work = |name: &str| capture(&args, ctx, Some(name));
        return super::all_clusters::run(ctx, work, |r, s| finish(r, s, ctx, args.all));
    }
    let report = capture(&args, ctx, None)?;
    Ok(finish(&report, Structured::Alone, ctx, args.all))
}

/// Snapshots one cluster (`None`: the one the global flags name).
fn capture(args: &Args, ctx: &Context, cluster: Option<&str>) -> Result<SnapshotReport> {
    let target = match cluster {
        Some(name) => ctx.target_named(Some(name))?,
        None => ctx.target()?,
    };
    crate::engine::operation::ensure_settled(&ctx.state_dir(), &target.name)?;
    let client = ctx.connect(&target)?;
    let dir = match &args.dir {
        Some(d) => ctx.cwd.join(d),
        None => ctx.snapshots_dir(),
    };
    let opts = SnapshotOptions {
        selector: Selector::new(&args.names, args.kind.map(Into::into))?,
        parallel: args.read.parallel,
        with_config: args.with_config,
        prune: args.prune,
        ..SnapshotOptions::default()
    };
    ctx.printer.status(&format!(
        "Snapshotting cluster `{}` ({}) into {}",
        target.name,
        target.http.urls.join(", "),
        ctx.display_path(&crate::engine::store::cluster_dir(&dir, &target.name))
    ));
    let now = crate::clock::now_rfc3339;
    if cluster.is_some() {
        // Clusters run side by side: one bar each would overwrite the others.
        return snapshot(&client, &target.name, &dir, &opts, &now);
    }
    let bar = Bar::new(&ctx.printer, "snapshot");
    snapshot_reporting(&client, &target.name, &dir, &opts, &now, &bar)
}

/// Prints a cluster's report; its exit code.
fn finish(report: &SnapshotReport, structured: Structured, ctx: &Context, all: bool) -> u8 {
    for c in &report.connectors {
        if c.outcome == SnapshotOutcome::Skipped {
            ctx.printer.warn(&format!(
                "skipped `{}`: {}",
                c.name,
                c.message.as_deref().unwrap_or_default()
            ));
        }
    }
    if ctx.printer.is_structured() {
        if structured == Structured::Alone {
            ctx.printer.structured(report);
        }
    } else {
        // With --all-clusters every row names its cluster.
        render(report, ctx, all, structured == Structured::Together);
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
    let shown = |c: &&crate::engine::snapshot::ConnectorSnapshot| {
        all || c.outcome != SnapshotOutcome::Unchanged
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
