//! Metrics as data: what the judging commands (snapshot, live diff, ls, log --stalled) found,
//! as Prometheus gauges, and their OpenMetrics text ([`exposition`]). Nothing here prints or
//! writes a file; `cli/metrics.rs` prints the text or writes it atomically.
//!
//! Every metric is a gauge: a run's result is a reading, not a count that grows, and a gauge is
//! what the OpenMetrics and the Prometheus 0.0.4 text formats (node-exporter's textfile
//! collector, the Pushgateway, `promtool check metrics`) all read the same way. Names follow
//! Prometheus' rules: the `kco_` prefix, base units (`_seconds`, `_records`), times as
//! `_timestamp_seconds`. docs/metrics.md lists each one.

pub mod exposition;
mod from_reports;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use crate::engine::sink_lag::SinkLag;
pub use from_reports::{
    diff_metrics, log_metrics, ls_metrics, orphaned_metrics, sink_lag_metrics, snapshot_metrics,
};

/// One metric family: its name, help and what its labels are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Def {
    pub name: &'static str,
    pub help: &'static str,
}

/// One sample: its labels in order, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

/// The metrics of one run, family by family (in name order, so the text is stable).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    families: BTreeMap<&'static str, (Def, Vec<Sample>)>,
}

impl Metrics {
    /// Adds a sample of `def`.
    pub fn add(&mut self, def: Def, labels: Vec<(&'static str, String)>, value: f64) {
        self.families
            .entry(def.name)
            .or_insert_with(|| (def, Vec::new()))
            .1
            .push(Sample { labels, value });
    }

    /// The families with at least one sample, in name order.
    pub fn families(&self) -> impl Iterator<Item = (&Def, &[Sample])> {
        self.families
            .values()
            .filter(|(_, s)| !s.is_empty())
            .map(|(d, s)| (d, s.as_slice()))
    }

    /// The samples of the family named `name` (empty when it has none).
    pub fn samples(&self, name: &str) -> &[Sample] {
        self.families
            .get(name)
            .map(|(_, s)| s.as_slice())
            .unwrap_or_default()
    }

    /// Puts each family's samples in the order of their labels' values (clusters read at
    /// once add theirs in the order they finish).
    pub fn sort_samples(&mut self) {
        for (_, samples) in self.families.values_mut() {
            samples.sort_by(|a, b| {
                let key = |s: &Sample| s.labels.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>();
                key(a).cmp(&key(b))
            });
        }
    }

    /// Adds every sample of `other` (another cluster's run of the same command).
    pub fn merge(&mut self, other: Metrics) {
        for (def, samples) in other.families.into_values() {
            for s in samples {
                self.add(def, s.labels, s.value);
            }
        }
    }
}

/// Which connectors get per-partition series (none by default: a wide connector would add a
/// series per partition).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionSeries {
    pub connectors: Vec<String>,
}

impl PartitionSeries {
    pub fn wants(&self, connector: &str) -> bool {
        self.connectors.iter().any(|c| c == connector)
    }
}

/// How a run ended, for the run's own metrics.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It did its job: its end is the new success timestamp.
    Succeeded,
    /// It failed with an error of this kind (`--output json`'s `kind`); the success
    /// timestamp is the previous one, when known.
    Failed { kind: String },
}

/// The run's own metrics: when it ended, how long it took, whether it failed, and the last
/// success. `previous_success` is what the metrics file held before (read back by
/// [`exposition::read_success`]): a failed run repeats it and never claims success.
pub struct RunInfo<'a> {
    pub cluster: &'a str,
    pub command: &'static str,
    pub outcome: Outcome,
    pub ended_unix: f64,
    pub duration_seconds: f64,
    pub previous_success: Vec<Sample>,
}

pub const LAST_SUCCESS: Def = Def {
    name: "kco_last_success_timestamp_seconds",
    help: "When this command last ran to completion against the cluster (Unix time); a failed run repeats the previous value",
};
pub const RUN_TIMESTAMP: Def = Def {
    name: "kco_run_timestamp_seconds",
    help: "When this run of the command ended, successful or not (Unix time)",
};
pub const RUN_DURATION: Def = Def {
    name: "kco_run_duration_seconds",
    help: "How long this run of the command took",
};
pub const RUN_FAILED: Def = Def {
    name: "kco_run_failed",
    help: "1 when this run of the command failed (its error is kco_run_error), else 0",
};
pub const RUN_ERROR: Def = Def {
    name: "kco_run_error",
    help: "The kind of error this run failed with (value 1; only on a failed run)",
};

/// Adds the run's own metrics to `m`.
pub fn run_metrics(m: &mut Metrics, run: RunInfo<'_>) {
    let labels = || {
        vec![
            ("cluster", run.cluster.to_string()),
            ("command", run.command.to_string()),
        ]
    };
    m.add(RUN_TIMESTAMP, labels(), run.ended_unix);
    m.add(RUN_DURATION, labels(), run.duration_seconds);
    match &run.outcome {
        Outcome::Succeeded => {
            m.add(RUN_FAILED, labels(), 0.0);
            m.add(LAST_SUCCESS, labels(), run.ended_unix);
        }
        Outcome::Failed { kind } => {
            m.add(RUN_FAILED, labels(), 1.0);
            let mut l = labels();
            l.push(("kind", kind.clone()));
            m.add(RUN_ERROR, l, 1.0);
            // This command's on this cluster (a file may hold several clusters' runs).
            let label = |s: &Sample, name: &str| {
                s.labels
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            };
            for s in run.previous_success.into_iter().filter(|s| {
                label(s, "command").as_deref() == Some(run.command)
                    && (run.cluster.is_empty()
                        || label(s, "cluster").is_none_or(|c| c == run.cluster))
            }) {
                m.add(LAST_SUCCESS, s.labels, s.value);
            }
        }
    }
}
