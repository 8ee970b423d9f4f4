//! `kco ls`: the cluster's connectors and how each one's snapshot file compares.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::all_clusters::Structured;
use super::output::Style;
use super::Context;
use crate::engine::diff::Status;
use crate::engine::ls::{ls_keeping, LsReport};
use crate::engine::{load_files, store};
use crate::error::{Error, Result, EXIT_OK};

/// List a cluster's connectors with state, tasks, partitions and their file's status
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
One row per connector on the cluster, and per file whose connector is not there: type, state, \
tasks (running/total), partitions with a committed offset, and the file's status as `kco diff` \
classifies it: in_sync, advanced (normal progress of a running connector), drifted, missing, \
untracked (no file), type_changed, class_changed. Files are those of the cluster's directory \
(<dir>/<cluster>/). A connector or task FAILED (or UNASSIGNED still after a 15 s wait) gets a \
line under the table: `FAILED  NAME: task 0 FAILED: <the first line of the worker's trace>`. \
Read-only.\n\n\
Exit codes: 0 success (whatever the statuses; `kco diff` is the check), 1 error.\n\n\
Examples:\n  kco ls\n  kco --cluster prod ls -o json\n  kco ls --all-clusters")]
pub struct Args {
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// List every cluster of kco.yaml at once
    #[arg(long, conflicts_with = "orphaned")]
    pub all_clusters: bool,
    /// List instead the connector names with source offsets left in the workers' offsets
    /// topic (`connectTopics.offsets`, read through `kafka:`), or sink offsets left in their
    /// consumer group (`connect-<name>`), that no connector of the cluster has: a connector
    /// created under such a name resumes from them
    #[arg(long)]
    pub orphaned: bool,
    /// Also show how far each sink is behind its topics (records between its committed
    /// offsets and the partitions' ends), read through the cluster's `kafka:` in kco.yaml
    #[arg(long, conflicts_with_all = ["all_clusters", "orphaned"])]
    pub lag: bool,
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    // `ls --orphaned` is a command of its own in the metrics (its file sits beside ls's).
    let command = match args.orphaned {
        true => "ls --orphaned",
        false => "ls",
    };
    let metrics = super::metrics::Run::start(ctx, command, &args.metrics)?;
    let result = judge(args, ctx, metrics.as_ref());
    super::metrics::finish(metrics, ctx, result)
}

/// The listing itself; its metrics added to `metrics` when asked for.
fn judge(args: Args, ctx: &Context, metrics: Option<&super::metrics::Run>) -> Result<u8> {
    if args.orphaned {
        return orphaned(ctx, metrics);
    }
    if args.all_clusters {
        let work = |name: &str| {
            let r = gather(&args, ctx, Some(name));
            if let Some(m) = metrics {
                if let Ok(report) = &r {
                    m.add(name, crate::engine::metrics::ls_metrics(report));
                }
                m.cluster_ended(name, &r, |_| false);
            }
            r
        };
        return super::all_clusters::run(ctx, work, |r, s| finish(r, s, ctx));
    }
    let mut report = gather(&args, ctx, None)?;
    let lags = if args.lag || metrics.is_some() {
        let positions = std::mem::take(&mut report.sink_positions);
        super::sink_lag::read(ctx, &report.cluster.clone(), || positions, args.lag)?
    } else {
        None
    };
    if let (true, Some(lags)) = (args.lag, &lags) {
        report.set_lag(lags);
    }
    if let Some(m) = metrics {
        m.add(&report.cluster, crate::engine::metrics::ls_metrics(&report));
        m.add_sink_lag(&report.cluster, lags.as_deref());
    }
    Ok(finish(&report, Structured::Alone, ctx))
}

/// One cluster's listing (`None`: the cluster the global flags name).
fn gather(args: &Args, ctx: &Context, cluster: Option<&str>) -> Result<LsReport> {
    let dir = match &args.dir {
        Some(d) => ctx.cwd.join(d),
        None => ctx.snapshots_dir(),
    };
    let target = match cluster {
        Some(name) => ctx.target_named(Some(name))?,
        None => {
            ctx.ensure_cluster_named(&dir)?;
            ctx.target()?
        }
    };
    let client = ctx.connect_listing(&target)?;
    let cluster_dir = store::cluster_dir(&dir, &target.name);
    let files = if cluster_dir.is_dir() {
        let (files, problems) = load_files(&[cluster_dir]);
        if !problems.is_empty() {
            return Err(Error::Files(problems));
        }
        files
    } else {
        Vec::new()
    };
    ls_keeping(
        &*client,
        &files,
        &target.name,
        (
            args.read.parallel,
            args.read.freshness(&ctx.config, &target.name),
        ),
        &ctx.cwd,
        // The lag needs each sink's offsets: with --lag, or metrics (where `kafka:` is set).
        args.lag
            || args.metrics.metrics_file.is_some()
            || ctx.printer.format == super::OutputFormat::Openmetrics,
    )
}

/// Prints one cluster's listing; its exit code.
fn finish(report: &LsReport, structured: Structured, ctx: &Context) -> u8 {
    let p = &ctx.printer;
    if p.format == super::OutputFormat::Openmetrics {
        // The run's metrics take the report's place (cli/metrics.rs).
    } else if p.is_structured() {
        if structured == Structured::Alone {
            p.structured(report);
        }
    } else {
        p.out(&table(ctx, report, structured == Structured::Together));
        p.status(&format!(
            "{} on cluster `{}`",
            super::words::count(report.connectors.len(), "connector"),
            report.cluster
        ));
    }
    EXIT_OK
}

/// The table; with `cluster_column` (`--all-clusters`) each row names its cluster first, and
/// where the sinks' lag was read (`--lag`) a LAG column gives each sink's records between its
/// committed offsets and its partitions' ends.
fn table(ctx: &Context, report: &LsReport, cluster_column: bool) -> String {
    let p = &ctx.printer;
    let lag_column = report.connectors.iter().any(|c| c.lag.is_some());
    let mut header = vec![
        "CLUSTER",
        "CONNECTOR",
        "TYPE",
        "STATE",
        "TASKS",
        "PARTITIONS",
    ];
    if lag_column {
        header.push("LAG");
    }
    header.push("SNAPSHOT");
    let mut rows: Vec<Vec<String>> = vec![header.into_iter().map(String::from).collect()];
    for c in &report.connectors {
        let mut row = vec![
            report.cluster.clone(),
            c.name.clone(),
            c.connector_type
                .map(|t| t.to_string())
                .unwrap_or("-".into()),
            c.state.clone().unwrap_or("-".into()),
            format!("{}/{}", c.tasks_running, c.tasks),
            c.partitions.to_string(),
        ];
        if lag_column {
            row.push(c.lag.map_or("-".into(), |l| l.to_string()));
        }
        row.push(c.status.as_str().to_string());
        rows.push(row);
    }
    let last = rows[0].len() - 1;
    let widths: Vec<usize> = (0..=last)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (n, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i == 0 && !cluster_column {
                continue;
            }
            if i == last {
                let style = match report.connectors.get(n.wrapping_sub(1)).map(|c| c.status) {
                    _ if n == 0 => None,
                    Some(Status::InSync) => Some(Style::Good),
                    Some(Status::Advanced) => Some(Style::Dim),
                    Some(_) => Some(Style::Bad),
                    None => None,
                };
                line.push_str(&style.map_or(cell.clone(), |s| p.paint(s, cell)));
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    // A FAILED or long UNASSIGNED connector or task, said plainly, with the worker's why.
    for c in &report.connectors {
        if let Some(verdict) = c.health.verdict() {
            let cluster = match cluster_column {
                true => format!("{} ", report.cluster),
                false => String::new(),
            };
            let _ = writeln!(
                out,
                "{}  {cluster}{}: {}",
                p.paint(Style::Bad, verdict),
                c.name,
                c.health.describe()
            );
        }
    }
    out
}

/// `kco ls --orphaned`: the names in the offsets topic and the sinks' groups that no connector
/// of the cluster has.
fn orphaned(ctx: &Context, metrics: Option<&super::metrics::Run>) -> Result<u8> {
    let target = ctx.target()?;
    let (kafka, topic) = ctx.offsets_topic(&target, "ls --orphaned")?;
    let topic = topic.as_str();
    let client = ctx.connect_listing(&target)?;
    let live = client.list_connectors().map_err(|e| {
        Error::client(
            format!("cluster `{}`: listing its connectors", target.name),
            e,
        )
    })?;
    let found = super::orphaned::found(ctx, &target, &kafka, topic, &live, &*client)?;
    super::orphaned::warn_unchecked(ctx, &found.unchecked);
    super::orphaned::say_live_elsewhere(ctx, &found, &[]);
    let p = &ctx.printer;
    if let Some(m) = metrics {
        let found = crate::engine::metrics::orphaned_metrics(&target.name, &found);
        m.add(&target.name, found);
    }
    if p.format == super::OutputFormat::Openmetrics {
        return Ok(EXIT_OK);
    }
    if p.is_structured() {
        p.structured(&found);
        return Ok(EXIT_OK);
    }
    if found.unread_records > 0 {
        p.warn(&format!(
            "{} of topic `{topic}` not a Connect source offset (left out)",
            crate::text::count(found.unread_records as usize, "record")
        ));
    }
    if found.sources.is_empty() && found.sinks.is_empty() {
        p.out(&format!(
            "No offsets left in topic `{topic}` or in a sink's consumer group by connectors that cluster `{}` no longer has.\n",
            target.name
        ));
        return Ok(EXIT_OK);
    }
    // A name may have left both: a source's offsets and a sink's group.
    let names: std::collections::BTreeSet<&str> = found
        .sources
        .iter()
        .map(|o| o.name.as_str())
        .chain(found.sinks.iter().map(|o| o.name.as_str()))
        .collect();
    let count = names.len();
    let mut out = format!(
        "Offsets left in topic `{topic}` and in sinks' consumer groups by {} that cluster `{}` does not have (a connector created under one of these names resumes from them):\n",
        crate::text::count(count, "connector name"),
        target.name
    );
    // (name, type, partitions, where, last commit)
    let mut rows: Vec<(&str, &str, usize, String, String)> = Vec::new();
    for o in &found.sources {
        let at = std::time::UNIX_EPOCH
            + std::time::Duration::from_millis(o.last_commit_ms.max(0) as u64);
        let at = crate::clock::rfc3339(at);
        rows.push((&o.name, "source", o.partitions.len(), topic.to_string(), at));
    }
    for o in &found.sinks {
        // Kafka keeps no time for a committed offset that kco can read.
        rows.push((
            &o.name,
            "sink",
            o.partitions.len(),
            o.group.clone(),
            "-".into(),
        ));
    }
    rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(4).max(4);
    let place = rows.iter().map(|r| r.3.len()).max().unwrap_or(5).max(5);
    out.push_str(&format!(
        "{:width$}  TYPE    PARTITIONS  {:place$}  LAST COMMIT\n",
        "NAME", "WHERE"
    ));
    for (name, kind, partitions, at_place, at) in rows {
        out.push_str(&format!(
            "{name:width$}  {kind:<6}  {partitions:>10}  {at_place:place$}  {at}\n"
        ));
    }
    p.out(&out);
    Ok(EXIT_OK)
}
