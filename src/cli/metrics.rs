//! Metrics of the commands that judge (snapshot, diff, ls, log): `-o openmetrics` prints them
//! instead of the report; `--metrics-file PATH` writes them atomically while the command does
//! its normal job. A failed run writes them too: `kco_run_failed 1`, its error's kind, and the
//! previous success time read back from PATH (never a success of its own). The metrics are
//! worked out only when asked for. docs/metrics.md lists them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, UNIX_EPOCH};

use super::{Context, OutputFormat};
use crate::engine::metrics::{self, exposition, Metrics, Outcome, PartitionSeries, RunInfo};
use crate::error::{Error, Result, EXIT_ERROR};

/// The metrics flags of the commands that judge.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MetricsArgs {
    /// Also write this run's metrics (OpenMetrics text, as `-o openmetrics` prints them) to
    /// PATH, atomically (for node-exporter's textfile collector); a failed run writes them
    /// too, keeping the last success time PATH held. The directory must exist
    #[arg(long, value_name = "PATH")]
    pub metrics_file: Option<PathBuf>,
    /// Add per-partition series to the metrics for these connectors (comma-separated names):
    /// one series per partition, so only for the connectors worth it [default: none]
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub metrics_partitions: Vec<String>,
}

/// One run's metrics, while it runs: what the command adds, for the cluster it names.
pub struct Run {
    command: &'static str,
    started: Instant,
    file: Option<PathBuf>,
    stdout: bool,
    pub partitions: PartitionSeries,
    collected: Mutex<(Option<String>, Metrics)>,
    /// With `--all-clusters`: how each cluster's part ended.
    ended: Mutex<Vec<(String, Outcome)>>,
}

impl Run {
    /// The run's metrics when asked for (`-o openmetrics` or `--metrics-file`), else `None`.
    /// A metrics file whose directory does not exist is an error before any work.
    pub fn start(ctx: &Context, command: &'static str, args: &MetricsArgs) -> Result<Option<Run>> {
        let stdout = ctx.printer.format == OutputFormat::Openmetrics;
        let file = args.metrics_file.as_ref().map(|f| ctx.cwd.join(f));
        if let Some(f) = &file {
            let dir = match f.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            if !dir.is_dir() {
                return Err(Error::Write {
                    path: f.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("--metrics-file: no directory {}", ctx.display_path(dir)),
                    ),
                });
            }
        }
        if !stdout && file.is_none() {
            return Ok(None);
        }
        Ok(Some(Run {
            command,
            started: Instant::now(),
            file,
            stdout,
            partitions: PartitionSeries {
                connectors: args.metrics_partitions.clone(),
            },
            collected: Mutex::default(),
            ended: Mutex::default(),
        }))
    }

    /// With `--all-clusters`: `cluster`'s part ended with `result` (`failed`: its report says
    /// the run failed, a snapshot's unread connectors). Each cluster gets its run's metrics.
    pub fn cluster_ended<R>(&self, cluster: &str, result: &Result<R>, failed: impl Fn(&R) -> bool) {
        let outcome = match result {
            Ok(r) if failed(r) => Outcome::Failed {
                kind: "connectors_failed".into(),
            },
            Ok(_) => Outcome::Succeeded,
            Err(e) => Outcome::Failed { kind: kind_of(e) },
        };
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        ended.push((cluster.to_string(), outcome));
    }

    /// Adds what the command found about `cluster`.
    pub fn add(&self, cluster: &str, m: Metrics) {
        let mut c = self.collected.lock().unwrap_or_else(|e| e.into_inner());
        if !cluster.is_empty() {
            c.0.get_or_insert_with(|| cluster.to_string());
        }
        c.1.merge(m);
    }
}

impl Run {
    /// Adds the sinks' lag of cluster `cluster` (none when it was not read).
    pub fn add_sink_lag(&self, cluster: &str, lags: Option<&[crate::engine::sink_lag::SinkLag]>) {
        if let Some(lags) = lags {
            self.add(
                cluster,
                metrics::sink_lag_metrics(cluster, self.command, lags, &self.partitions),
            );
        }
    }
}

/// Ends a command that may have metrics: with none asked for, its result as it is; else the
/// run's metrics printed (`-o openmetrics`) and written (`--metrics-file`), then its result.
/// An exit code of 1 (snapshot: some connectors could not be read) is a failed run.
pub fn finish(run: Option<Run>, ctx: &Context, result: Result<u8>) -> Result<u8> {
    let Some(run) = run else { return result };
    let (cluster, m) = run
        .collected
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let mut ended = run.ended.into_inner().unwrap_or_else(|e| e.into_inner());
    ended.sort_by(|a, b| a.0.cmp(&b.0));
    let cluster = cluster
        .or_else(|| ctx.global.cluster.clone())
        .or_else(|| ctx.target().ok().map(|t| t.name));
    let end = End {
        command: run.command,
        started: run.started,
        file: run.file,
        stdout: run.stdout,
        cluster,
        ended,
    };
    end.emit(&ctx.printer, m, result)
}

/// A run that failed before its context was made (kco.yaml unreadable, a bad flag value):
/// its metrics, when asked for, say so and keep the last success.
pub fn failed_early(
    printer: &super::Printer,
    global: &super::GlobalArgs,
    command: &'static str,
    args: &MetricsArgs,
    error: Error,
) -> Result<u8> {
    let stdout = printer.format == OutputFormat::Openmetrics;
    let file = args
        .metrics_file
        .as_ref()
        .map(|f| match std::env::current_dir() {
            Ok(cwd) => cwd.join(f),
            Err(_) => f.clone(),
        });
    if !stdout
        && file
            .as_ref()
            .is_none_or(|f| !f.parent().is_some_and(Path::is_dir))
    {
        return Err(error);
    }
    let end = End {
        command,
        started: Instant::now(),
        file,
        stdout,
        cluster: global.cluster.clone(),
        ended: Vec::new(),
    };
    end.emit(printer, Metrics::default(), Err(error))
}

/// What ends a run's metrics.
struct End {
    command: &'static str,
    started: Instant,
    file: Option<PathBuf>,
    stdout: bool,
    cluster: Option<String>,
    /// With `--all-clusters`: each cluster's outcome (else the run is one cluster's).
    ended: Vec<(String, Outcome)>,
}

/// An error's kind as `--output json` names it.
fn kind_of(e: &Error) -> String {
    serde_json::to_value(e.kind())
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "other".into())
}

impl End {
    fn emit(self, printer: &super::Printer, mut m: Metrics, result: Result<u8>) -> Result<u8> {
        let previous = self
            .file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|t| exposition::read_success(&t))
            .unwrap_or_default();
        let ended_unix = crate::clock::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default()
            .floor();
        let duration_seconds = self.started.elapsed().as_secs_f64();
        let parts = if self.ended.is_empty() {
            let cluster = self
                .cluster
                .or_else(|| {
                    previous.iter().find_map(|s| {
                        s.labels
                            .iter()
                            .find(|(k, _)| *k == "cluster")
                            .map(|(_, v)| v.clone())
                    })
                })
                .unwrap_or_default();
            let outcome = match &result {
                Ok(code) if *code == EXIT_ERROR => Outcome::Failed {
                    kind: "connectors_failed".into(),
                },
                Ok(_) => Outcome::Succeeded,
                Err(e) => Outcome::Failed { kind: kind_of(e) },
            };
            vec![(cluster, outcome)]
        } else {
            self.ended
        };
        let several = parts.len() > 1;
        for (cluster, outcome) in parts {
            metrics::run_metrics(
                &mut m,
                RunInfo {
                    cluster: &cluster,
                    command: self.command,
                    outcome,
                    ended_unix,
                    duration_seconds,
                    previous_success: previous.clone(),
                },
            );
        }
        if several {
            m.sort_samples();
        }
        let text = exposition::render(&m);
        if self.stdout {
            printer.out(&text);
        }
        if let Some(f) = &self.file {
            let written =
                crate::fsutil::replace(f, text.as_bytes()).map_err(|source| Error::Write {
                    path: f.clone(),
                    source,
                });
            match (written, &result) {
                (Err(e), Ok(_)) => return Err(e),
                // The command's own error is the one to report.
                (Err(e), Err(_)) => printer.warn(&e.to_string()),
                (Ok(()), _) => {}
            }
        }
        result
    }
}

/// The command's name and metrics flags, for the commands that have them.
pub fn of(command: &super::Command) -> Option<(&'static str, &MetricsArgs)> {
    use super::Command;
    match command {
        Command::Snapshot(a) => Some(("snapshot", &a.metrics)),
        Command::Diff(a) => Some(("diff", &a.metrics)),
        // `ls --orphaned` writes other metrics: its own command, so that both files of a
        // cluster can sit in one textfile directory.
        Command::Ls(a) if a.orphaned => Some(("ls --orphaned", &a.metrics)),
        Command::Ls(a) => Some(("ls", &a.metrics)),
        Command::Log(a) => Some(("log", &a.metrics)),
        _ => None,
    }
}

/// Refuses a flag that the metrics do not cover: a review (`--base`) judges a change, not a
/// cluster.
pub fn refuse(run: &Option<Run>, what: &str, given: bool) -> Result<()> {
    if run.is_some() && given {
        return Err(Error::Usage(format!(
            "metrics (-o openmetrics, --metrics-file) are not written with {what}"
        )));
    }
    Ok(())
}
