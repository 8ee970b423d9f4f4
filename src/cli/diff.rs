//! `kco diff`: snapshot files against the live cluster, or one git revision against another.

use std::path::{Path, PathBuf};

use super::all_clusters::Structured;
use super::diff_render;
use super::progress::Bar;
use super::{Context, OutputFormat};
use crate::engine::diff::{self as engine, Against, BaseInput, DiffReport, LiveInput};
use crate::engine::{load_files, store};
use crate::error::{Error, Result};

const AFTER_HELP: &str = "\
Statuses (files against the cluster):
  in_sync        file and cluster agree
  advanced       a RUNNING connector is ahead of its file, or has new partitions: normal progress
  drifted        offsets differ otherwise (behind the file, changed while stopped, partitions gone)
  missing        a file, but no such connector on the cluster
  untracked      on the cluster, but no file (when diffing the whole cluster directory)
  type_changed / class_changed   the connector type or class differs
Against a DR cluster (files of another Kafka cluster it mirrors; docs/disaster-recovery.md):
  dr_ready       a sink not on this cluster whose every partition MM2's checkpoints translate
  no_translation a sink with a partition that cannot be translated (the note says why)
  dr_lagging     a sink that translates while its mirror lags beyond the readiness thresholds
                 (--max-checkpoint-age, --max-behind, --max-mirror-silence; the note says which)
  skipped        a source connector: not part of DR readiness
With --base REV: the working tree against the merge base of HEAD and REV (three dots, as a forge
shows a pull request: what landed on REV since the branch forked is not the branch's; --tip
compares with REV itself), named in the headline. unchanged, changed, added, removed,
type_changed, class_changed, with a risk per partition (REPROCESSING, DATA LOSS, OFFSET RESET,
...). When the files' cluster can be read
(kco.yaml, --url, --cluster), each risk is what applying the change would do to the live offset,
as `kco apply --commit` plans it; else (unreachable, not configured, --offline, a read that
failed) it compares the files only, and the headline and a warning on stderr say so.

Exit codes:
  0  no differences (with --fail-on drift, the default, `advanced` is not a difference; a
     connector or task FAILED is shown, and is a difference with --fail-on drift,failed)
  1  error: invalid files (nothing was requested), unreachable cluster, unknown revision;
     with --all-clusters, any cluster that failed (named, and in -o json as
     {\"cluster\", \"error\"})
  2  differences found (with --all-clusters: only when every cluster answered)
Against a DR cluster, a readiness alarm: 0 every sink that would be restored translates
  within the thresholds; 2 one does not (no_translation), or its mirror lags (dr_lagging: a
  checkpoint older than 5m while behind the file, a heartbeat copied from the source older
  than 2m, by default); 1 kco could not tell (Connect or Kafka unreachable or silent past
  timeoutSeconds, authentication refused).

Examples:
  kco diff
  kco diff orders-sink snapshots/prod/billing.yaml --fail-on any
  kco diff --base origin/main --output markdown > comment.md";

/// When `diff` exits 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExitOnArg {
    /// Any difference except a running connector's normal progress (advanced)
    Drift,
    /// Any difference at all
    Any,
    /// A connector or task FAILED, or UNASSIGNED still after a 15 s wait for a rebalance,
    /// whatever its offsets (with drift unless `any` is named too)
    Failed,
}

/// Compare snapshot files with live offsets, or with the files at a git revision
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Snapshot files, directories or connector names [default: the cluster's snapshots directory]
    pub paths: Vec<String>,
    /// Compare the files at this git revision with the working tree instead of the cluster;
    /// each changed partition is labelled by what applying the change would do to the live
    /// offsets, when the cluster can be read
    #[arg(long)]
    pub base: Option<String>,
    /// With --base: label the changes by the files only, without reading the cluster
    #[arg(long, requires = "base")]
    pub offline: bool,
    /// With --base: compare with the revision's own files (two dots), not with the merge base
    /// of HEAD and the revision [default: the merge base, as a forge shows a pull request]
    #[arg(long, requires = "base")]
    pub tip: bool,
    /// Which differences make the exit code 2 (comma-separated: `drift,failed`)
    #[arg(long, value_enum, value_delimiter = ',', default_value = "drift")]
    pub fail_on: Vec<ExitOnArg>,
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub read: super::ReadArgs,
    /// Compare every cluster of kco.yaml with its directory, at once
    #[arg(long, conflicts_with_all = ["base", "paths"])]
    pub all_clusters: bool,
    /// List every connector in text and markdown, unchanged ones too [default: those that
    /// differ, and a count of the others]
    #[arg(long)]
    pub all: bool,
    /// Against a DR cluster: how sink files of another Kafka cluster are translated (as
    /// `apply --translate`) [default: file, when the mirror is configured]
    #[arg(long, value_enum, value_name = "MODE")]
    pub translate: Option<super::translate::TranslateArg>,
    #[command(flatten)]
    pub thresholds: super::translate::Thresholds,
    /// Also show how far each sink is behind its topics (records between its committed
    /// offsets and the partitions' ends), read through the cluster's `kafka:` in kco.yaml;
    /// in the text output (the metrics carry it too)
    #[arg(long, conflicts_with_all = ["base", "all_clusters"])]
    pub lag: bool,
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let metrics = super::metrics::Run::start(ctx, "diff", &args.metrics)?;
    super::metrics::refuse(&metrics, "--base", args.base.is_some())?;
    let result = judge(args, ctx, metrics.as_ref());
    super::metrics::finish(metrics, ctx, result)
}

/// The diff itself; its metrics added to `metrics` when asked for.
fn judge(args: Args, ctx: &Context, metrics: Option<&super::metrics::Run>) -> Result<u8> {
    let exit_on = match args.fail_on.contains(&ExitOnArg::Any) {
        true => engine::ExitOn::Any,
        false => engine::ExitOn::Drift,
    };
    let dir = match &args.dir {
        Some(d) => ctx.cwd.join(d),
        None => ctx.snapshots_dir(),
    };
    if args.paths.is_empty() {
        ctx.ensure_cluster_named(&dir)?;
    }
    if args.all_clusters {
        let work = |name: &str| {
            let r = live(&args, ctx, &dir, exit_on, Some(name), metrics).map(|(r, _)| r);
            if let Some(m) = metrics {
                m.cluster_ended(name, &r, |_| false);
            }
            r
        };
        let shown = diff_render::Shown {
            all: args.all,
            cluster_column: true,
        };
        return super::all_clusters::run(ctx, work, |r, s| {
            render(r, s, ctx, shown);
            r.exit_code
        });
    }
    let mut lags = None;
    let report = match &args.base {
        Some(rev) => {
            let cluster = ctx.offline_cluster();
            let paths = resolve_paths(&args.paths, &dir, cluster.as_deref(), ctx, true)?;
            let live = review_cluster(&args, ctx, cluster.as_deref());
            let against = match &live {
                Ok((name, client)) => Against::Live {
                    client: &**client,
                    cluster: name.clone(),
                    freshness: args.read.freshness(&ctx.config, name),
                    leftovers: super::orphaned::leftovers(ctx, name),
                },
                Err(why) => Against::Files { why: why.clone() },
            };
            let report = engine::diff_base(BaseInput {
                rev,
                paths: &paths.paths,
                cluster: paths.whole_dir.then_some(cluster).flatten(),
                against,
                tip: args.tip,
            })?;
            // The cluster was reached but its offsets could not be read (a wrong secret, a
            // gateway): said on stderr too (an unreached cluster was warned about above).
            if live.is_ok() {
                if let Some(w) = diff_render::labels_warning(&report) {
                    ctx.printer.warn(&w);
                }
                for w in diff_render::against_nothing_warnings(&report) {
                    ctx.printer.warn(&w);
                }
            }
            report
        }
        None => {
            let (report, read) = live(&args, ctx, &dir, exit_on, None, metrics)?;
            lags = read;
            report
        }
    };
    let shown = diff_render::Shown {
        all: args.all,
        cluster_column: false,
    };
    render(&report, Structured::Alone, ctx, shown);
    if let (true, Some(lags)) = (args.lag, &lags) {
        if ctx.printer.format == OutputFormat::Text {
            ctx.printer.out(&super::sink_lag::text(lags));
        }
    }
    let code = report.exit_code;
    // The process ends here. A wide connector's report is a million small allocations;
    // freeing them one by one would take longer than everything after the output.
    std::mem::forget(report);
    Ok(code)
}

/// The cluster a review (`--base`) labels against: the files' cluster, reached; else why its
/// labels compare the files only. A cluster that is configured but cannot be read is warned
/// about (a review job's credentials or network), not an error.
fn review_cluster(
    args: &Args,
    ctx: &Context,
    cluster: Option<&str>,
) -> std::result::Result<(String, Box<dyn crate::client::Service>), String> {
    if args.offline {
        return Err("--offline".into());
    }
    let configured = ctx.global.url.is_some()
        || ctx.global.cluster.is_some()
        || !ctx.config.cluster_names().is_empty();
    if !configured {
        return Err("no cluster is configured: no kco.yaml cluster, --url or --cluster".into());
    }
    let target = ctx
        .target_named(cluster)
        .map_err(|e| format!("cluster not configured: {e}"))?;
    match ctx.connect_listing(&target) {
        Ok(client) => Ok((target.name, client)),
        Err(e) => {
            let why = format!("cannot read cluster `{}`: {e}", target.name);
            ctx.printer.warn(&format!(
                "{why}; the labels compare the files only (--offline says so without trying)"
            ));
            Err(why)
        }
    }
}

/// Files against one live cluster (`None`: the one the global flags name).
fn live(
    args: &Args,
    ctx: &Context,
    dir: &Path,
    exit_on: engine::ExitOn,
    cluster: Option<&str>,
    metrics: Option<&super::metrics::Run>,
) -> Result<(DiffReport, Option<Vec<crate::engine::sink_lag::SinkLag>>)> {
    let target = match cluster {
        Some(name) => ctx.target_named(Some(name))?,
        None => ctx.target()?,
    };
    super::recover::drop_left_behind_lock(ctx, &target.name)?;
    if let Some(f) = crate::engine::operation::ensure_finished(&ctx.state_dir(), &target.name)? {
        super::recover::say_finished_elsewhere(ctx, &f);
    }
    let paths = resolve_paths(&args.paths, dir, Some(&target.name), ctx, false)?;
    let (mut files, problems) = load_files(&paths.paths);
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    let named = cluster.is_some() || ctx.global.cluster.is_some();
    store::belongs_to(
        &files,
        &store::TargetCluster {
            name: target.name.clone(),
            named,
        },
    )?;
    files.iter_mut().for_each(store::LoadedFile::forget_text);
    let client = ctx.connect_listing(&target)?;
    ctx.printer.status(&format!(
        "Comparing {} with cluster `{}` at {}",
        super::words::count(files.len(), "file"),
        target.name,
        client.endpoint()
    ));
    let input = LiveInput {
        files: &files,
        cluster: target.name.clone(),
        // Another cluster's directory (a DR readiness check): this cluster's own connectors
        // are not untracked files of it.
        whole_dir: paths.whole_dir && !files.iter().any(|f| f.file.metadata.cluster != target.name),
        exit_on,
        parallel: args.read.parallel,
        cwd: &ctx.cwd,
        freshness: args.read.freshness(&ctx.config, &target.name),
    };
    // Sink files of another Kafka cluster are compared through MM2's checkpoints.
    let dr = super::translate::options(
        ctx,
        &target,
        args.translate.map(Into::into),
        false,
        &args.thresholds,
    );
    let mut report = if cluster.is_some() {
        // Clusters run side by side: one bar each would overwrite the others.
        let quiet = crate::engine::progress::Unheard;
        crate::engine::dr::diff_live(&*client, input, &quiet, &dr)?
    } else {
        let bar = Bar::new(&ctx.printer, "diff");
        crate::engine::dr::diff_live(&*client, input, &bar, &dr)?
    };
    if args.fail_on.contains(&ExitOnArg::Failed) {
        report.fail_on_failed();
    }
    attribute_state_changes(&mut report, ctx, &target.name);
    let lags = if args.lag || metrics.is_some() {
        let positions = || crate::engine::sink_lag::sink_positions(&report, &files);
        super::sink_lag::read(ctx, &target.name, positions, args.lag)?
    } else {
        None
    };
    if let Some(m) = metrics {
        let found = crate::engine::metrics::diff_metrics(&report, &files, &m.partitions);
        m.add(&target.name, found);
        m.add_sink_lag(&target.name, lags.as_deref());
    }
    Ok((report, lags))
}

/// A connector less active than its file is routine (`state_changed`) unless a kco operation
/// holds the cluster's shared lock: then it may be what that operation left (`state_drifted`).
/// The remote is read only when a state changed.
fn attribute_state_changes(report: &mut DiffReport, ctx: &Context, cluster: &str) {
    if report.has_state_changes() {
        if let Some(holder) = crate::engine::operation::shared_holder(&ctx.state_dir(), cluster) {
            report.state_left_by(&holder);
        }
    }
}

fn render(report: &DiffReport, structured: Structured, ctx: &Context, shown: diff_render::Shown) {
    let p = &ctx.printer;
    match p.format {
        OutputFormat::Json | OutputFormat::Yaml if structured == Structured::Together => {}
        OutputFormat::Json | OutputFormat::Yaml => p.structured(report),
        OutputFormat::Markdown => p.out(&diff_render::markdown(report, shown)),
        OutputFormat::Text => {
            diff_render::text_chunks(report, p, shown, &mut |chunk| p.out(&p.fold(chunk)))
        }
        // The run's metrics take the report's place (cli/metrics.rs).
        OutputFormat::Openmetrics => {}
    }
}

/// The files to compare, and whether they are a whole cluster directory.
struct Paths {
    paths: Vec<PathBuf>,
    whole_dir: bool,
}

/// Arguments to paths: files and directories as given, connector names to their file in the
/// cluster's directory; none: the cluster's directory. With `base`, paths that no longer exist
/// are kept (the revision may have them).
fn resolve_paths(
    args: &[String],
    dir: &Path,
    cluster: Option<&str>,
    ctx: &Context,
    base: bool,
) -> Result<Paths> {
    let cluster_dir = cluster.map(|c| {
        store::file_path(dir, c, "x")
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dir.to_path_buf())
    });
    if args.is_empty() {
        let d = cluster_dir.unwrap_or_else(|| dir.to_path_buf());
        if !base && !d.is_dir() {
            return Err(Error::Usage(format!(
                "no snapshots directory {} for cluster `{}` (run `kco snapshot` first, or name files)",
                ctx.display_path(&d),
                cluster.unwrap_or("default")
            )));
        }
        return Ok(Paths {
            paths: vec![PathBuf::from(ctx.display_path(&d))],
            whole_dir: true,
        });
    }
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    let mut out = Paths {
        paths: Vec::new(),
        whole_dir: false,
    };
    for a in args {
        let as_path = ctx.cwd.join(a);
        let looks_like_path =
            a.contains('/') || a.ends_with(".yaml") || a.ends_with(".yml") || a == "." || a == "..";
        let p = if as_path.exists() || looks_like_path {
            as_path
        } else {
            let Some(c) = cluster else {
                return Err(Error::Usage(format!(
                    "`{a}` is neither a file nor a directory, and no cluster is set to find a connector's file"
                )));
            };
            let f = store::file_path(dir, c, a);
            if !base && !f.is_file() {
                return Err(Error::Usage(format!(
                    "`{a}` is not a file, and connector `{a}` has no snapshot file at {}{}",
                    ctx.display_path(&f),
                    store::did_you_mean(&store::cluster_dir(dir, c), a)
                )));
            }
            f
        };
        if !base && !p.exists() {
            return Err(Error::Usage(format!(
                "{}: no such file or directory",
                ctx.display_path(&p)
            )));
        }
        if p.is_dir() && cluster_dir.as_deref().is_some_and(|d| same(d, &p)) {
            out.whole_dir = true;
        }
        out.paths.push(PathBuf::from(ctx.display_path(&p)));
    }
    Ok(out)
}
