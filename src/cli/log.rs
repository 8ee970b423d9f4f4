//! `kco log`: the offsets history of connectors, from the git history of their files.

use std::path::PathBuf;

use super::diff_render::partition_text;
use super::output::{Printer, Style};
use super::{Context, OutputFormat};
use crate::engine::diff::Status;
use crate::engine::history::log::{ConnectorLog, LogEntry};
use crate::engine::history::trailer::CommitKind;
use crate::engine::history::when::{parse_time, short_date, short_id};
use crate::engine::history::{log, LogInput, LogReport};
use crate::engine::store;
use crate::error::{Error, Result, EXIT_DIFFERENCES, EXIT_OK};

const AFTER_HELP: &str = "\
Follows the first-parent history of the current branch (a merge is one commit with everything
it brought in). Each commit that changed a connector's file is compared with the commit before
it, as `kco diff --base` compares: per partition the direction and distance (records, bytes,
LSN), labelled with the risk labels: REPROCESSING when an offset moved backwards, OFFSET RESET
when a partition was removed (a move forwards has no label). Times are UTC unless a zone is
given (`2026-11-29 02:00`, `2026-11-29T02:00:00+01:00`).

Each commit's version of a file is named by what it is: `observed` (its capturedAt moved: kco
rewrote it from live, whatever the commit's trailers say), `applied` and `undone` (Kco-Apply,
Kco-Undo: the cluster's offsets after an apply or an undo, `--record`), `change` (capturedAt
kept: someone's change, a pull request, a hand edit). A record that follows an observation shows what the
operation did to the cluster; one that follows a change compares with that change's file, and
says so.

--stalled N lists the connectors (present at HEAD) that no commit among the last N that changed
snapshot files moved forward: the connectors that are stuck. Then the exit code is 2 when any
connector is stalled, so that a nightly job can alert on it.

Exit codes: 0 success (--stalled: none stalled); 1 error (also a name or glob that matches no
connector with a commit); 2 --stalled only: a connector is stalled.

Examples:
  kco log orders-sink
  kco log 'orders-*' --since 2026-11-01 --max-count 5
  kco log --stalled 7
  kco log orders-sink --output json";

/// Show the history of connectors' offsets: the commits that moved them, and how far
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Connector names or globs [default: every connector]
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::connector_names))]
    pub names: Vec<String>,
    /// Only commits at or after this time
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only commits at or before this time
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// At most this many commits per connector
    #[arg(long, short = 'n', value_name = "N")]
    pub max_count: Option<usize>,
    /// List the connectors that did not move forward over the last N commits
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub stalled: Option<u32>,
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

fn time(flag: &str, v: &Option<String>) -> Result<Option<i64>> {
    v.as_deref()
        .map(|s| {
            parse_time(s).ok_or_else(|| {
                Error::Usage(format!(
                    "{flag} `{s}` is not a time (YYYY-MM-DD [HH:MM[:SS]] [Z|+HH:MM], yesterday 14:00, 2 days ago)"
                ))
            })
        })
        .transpose()
}

/// The directory an offline command reads: the cluster's, else the whole snapshots directory.
pub fn scope_dir(dir: &Option<PathBuf>, ctx: &Context) -> (PathBuf, Option<String>) {
    let dir = match dir {
        Some(d) => ctx.cwd.join(d),
        None => ctx.snapshots_dir(),
    };
    match ctx.offline_cluster() {
        Some(c) => (store::cluster_dir(&dir, &c), Some(c)),
        None => (dir, None),
    }
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let metrics = super::metrics::Run::start(ctx, "log", &args.metrics)?;
    let result = judge(args, ctx, metrics.as_ref());
    super::metrics::finish(metrics, ctx, result)
}

/// The log itself; its metrics added to `metrics` when asked for.
fn judge(args: Args, ctx: &Context, metrics: Option<&super::metrics::Run>) -> Result<u8> {
    let (scope, cluster) = scope_dir(&args.dir, ctx);
    let report = log(LogInput {
        scope: &scope,
        patterns: &args.names,
        since: time("--since", &args.since)?,
        until: time("--until", &args.until)?,
        max_count: args.max_count,
        stalled: args.stalled.map(|n| n as usize),
    })?;
    if let Some(m) = metrics {
        let found = crate::engine::metrics::log_metrics(&report);
        m.add(cluster.as_deref().unwrap_or_default(), found);
    }
    let p = &ctx.printer;
    match p.format {
        OutputFormat::Text => p.out(&p.fold(&text(&report, p))),
        OutputFormat::Markdown => p.out(&text(&report, p)),
        // The run's metrics take the report's place (cli/metrics.rs).
        OutputFormat::Openmetrics => {}
        _ => p.structured(&report),
    }
    let stalled = report.connectors.iter().any(|c| c.stalled == Some(true));
    Ok(if stalled { EXIT_DIFFERENCES } else { EXIT_OK })
}

fn text(r: &LogReport, p: &Printer) -> String {
    if let Some(n) = r.stalled_over {
        return stalled(r, n, p);
    }
    if r.connectors.is_empty() {
        return "No commit changed a snapshot file.\n".into();
    }
    let mut out = String::new();
    for c in &r.connectors {
        out.push_str(&header(c, p));
        for e in &c.commits {
            out.push_str(&entry(e, p));
        }
        out.push('\n');
    }
    out
}

fn header(c: &ConnectorLog, p: &Printer) -> String {
    format!(
        "{} ({}, cluster {})  {}\n",
        p.paint(Style::Bold, &c.name),
        c.connector_type,
        c.cluster,
        c.file
    )
}

/// The word for what a commit is, as the text shows it.
pub fn kind_word(kind: CommitKind) -> &'static str {
    match kind {
        CommitKind::Snapshot => "observed",
        CommitKind::Apply => "applied",
        CommitKind::Undo => "undone",
        CommitKind::Change => "change",
    }
}

fn entry(e: &LogEntry, p: &Printer) -> String {
    let word = format!("{:<8}", kind_word(e.kind));
    let word = match e.kind {
        CommitKind::Apply | CommitKind::Undo => p.paint(Style::Bold, &word),
        CommitKind::Snapshot => p.paint(Style::Dim, &word),
        CommitKind::Change => word,
    };
    let mut out = format!(
        "  {} {}  {word}  {}\n",
        p.paint(Style::Dim, short_id(&e.commit)),
        short_date(&e.date),
        e.summary
    );
    for n in &e.notes {
        out.push_str(&format!("    {n}\n"));
    }
    if matches!(e.status, Status::Added | Status::Removed) {
        return out;
    }
    if e.partitions.is_empty() {
        out.push_str("    offsets unchanged (only the file's other fields changed)\n");
    }
    for part in &e.partitions {
        let line = partition_text(&part.change);
        match part.label {
            Some(l) => out.push_str(&format!(
                "    {line}  [{}]\n",
                p.paint(Style::Error, l.label())
            )),
            None => out.push_str(&format!("    {line}\n")),
        }
    }
    out
}

fn stalled(r: &LogReport, n: usize, p: &Printer) -> String {
    let stuck: Vec<&ConnectorLog> = r
        .connectors
        .iter()
        .filter(|c| c.stalled == Some(true))
        .collect();
    let total = r.connectors.iter().filter(|c| c.stalled.is_some()).count();
    if stuck.is_empty() {
        return format!(
            "{} moved forward over the last {}; none stalled.\n",
            super::words::count(total, "connector"),
            super::words::count(n, "commit")
        );
    }
    let mut out = format!(
        "{} of {} did not move forward over the last {}:\n",
        stuck.len(),
        super::words::count(total, "connector"),
        super::words::count(n, "commit")
    );
    for c in stuck {
        let last = c
            .commits
            .first()
            .map(|e| {
                format!(
                    "last changed {} {}",
                    short_id(&e.commit),
                    short_date(&e.date)
                )
            })
            .unwrap_or_else(|| {
                format!(
                    "file unchanged in the last {}",
                    super::words::count(n, "commit")
                )
            });
        out.push_str(&format!(
            "  {}  {}  {}  [{}]\n",
            c.name,
            c.file,
            last,
            p.paint(Style::Error, "STALLED")
        ));
    }
    out
}
