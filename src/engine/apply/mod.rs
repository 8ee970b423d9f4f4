//! What apply, reset and undo are made of: check the files ([`check`], which also makes
//! sure each file belongs to the cluster), plan from live state, back up, then one
//! transaction per connector. These steps run inside the guarded
//! [`Operation`](crate::engine::operation::Operation), which holds the lock and keeps the
//! journal; nothing here prints.
//!
//! The [`Service`](crate::client::Service) passed in is the seam for fault injection: every
//! request of every step goes through it.

pub mod backup;

pub mod plan;
pub(crate) mod report;
pub(crate) mod state;
pub mod transaction;
mod tx_error;

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_capabilities;
#[cfg(test)]
pub(crate) mod tests_cloud;
#[cfg(test)]
mod tests_faults;
#[cfg(test)]
mod tests_tasks;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

pub use crate::wait::{Clock, ManualClock, SystemClock, WaitPolicy};
pub use backup::BackupReport;
pub use plan::{Action, ActionKind, ApplyPlan, ConnectorPlan, PlanOptions, Want};
pub use transaction::{ApplyOutcome, ConnectorApply, Step, StepRecord, TxOptions};

use crate::client::Service;
pub use crate::engine::progress::{Observer, Unheard};
use crate::engine::store::belongs_to;
pub use crate::engine::store::TargetCluster;
use crate::engine::{load_files, progress, LoadedFile};
use crate::error::{Error, Result};
use crate::model::file::{FileProblem, ProblemKind};
use crate::model::secrets;
use plan::ResolvedConfig;
pub use report::OperationObserver;

/// What the files-side checks need to know.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// `--as`: the one file's offsets go to this connector.
    pub as_name: Option<String>,
    /// `--create`: configs are needed, and their secrets are resolved now.
    pub create: bool,
    /// The cluster the wants are for: a file captured on another cluster needs it named.
    pub target: TargetCluster,
    /// `--allow-unknown-shape`: connectors whose offsets may miss their class's shape.
    pub allow_unknown_shape: crate::engine::shape_gate::AllowUnknownShape,
}

/// Wants that passed the checks for one cluster: the only input an operation plans from.
#[derive(Debug, Clone)]
pub struct Checked {
    cluster: String,
    wants: Vec<Want>,
}

impl Checked {
    /// `reset`: delete the offsets of `names` (each once) on `cluster`.
    pub fn reset(names: &[String], cluster: &str) -> Checked {
        let mut seen = std::collections::BTreeSet::new();
        let wants = names
            .iter()
            .filter(|n| seen.insert(n.as_str()))
            .map(|n| Want::Reset { name: n.clone() })
            .collect();
        Checked {
            cluster: cluster.to_string(),
            wants,
        }
    }

    /// Scopes each file's want to the change made to it (by the file's label): only the
    /// partitions the change set or removed are planned.
    pub fn scoped(mut self, mut changes: BTreeMap<PathBuf, plan::Change>) -> Checked {
        for w in &mut self.wants {
            if let Want::File { file, change, .. } = w {
                *change = changes.remove(&file.path);
            }
        }
        self
    }

    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    pub fn wants(&self) -> &[Want] {
        &self.wants
    }

    /// The same, without the wants whose target is in `names`.
    pub fn without(&self, names: &std::collections::BTreeSet<String>) -> Checked {
        Checked {
            cluster: self.cluster.clone(),
            wants: self
                .wants
                .iter()
                .filter(|w| !names.contains(w.target()))
                .cloned()
                .collect(),
        }
    }
}

/// Step 1: loads and checks every file (as `validate` does), resolves the secrets of configs
/// when creating, and returns what to apply. Any problem stops here, before any request.
pub fn check(
    paths: &[PathBuf],
    opts: &CheckOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Checked> {
    let (files, problems) = load_files(paths);
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    check_loaded(files, paths, opts, env)
}

/// Step 1 on files already loaded and checked (`apply --at` reads them from git): duplicate
/// targets, `--as`, and the secrets of configs when creating.
pub fn check_loaded(
    files: Vec<LoadedFile>,
    paths: &[PathBuf],
    opts: &CheckOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Checked> {
    let checked = |wants| Checked {
        cluster: opts.target.name.clone(),
        wants,
    };
    belongs_to(&files, &opts.target)?;
    let mut problems = Vec::new();
    let deletes = if opts.as_name.is_none() {
        backup::delete_wants(paths)?
    } else {
        Vec::new()
    };
    if files.is_empty() && !deletes.is_empty() {
        return Ok(checked(deletes));
    }
    if files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::Usage(format!(
            "no snapshot files (*.yaml) under {}",
            shown.join(", ")
        )));
    }
    if opts.as_name.is_some() && files.len() != 1 {
        return Err(Error::Usage(format!(
            "--as takes exactly one file; {} were given",
            files.len()
        )));
    }
    let mut wants = Vec::new();
    let mut targets: BTreeMap<String, PathBuf> = BTreeMap::new();
    for f in files {
        let target = opts
            .as_name
            .clone()
            .unwrap_or_else(|| f.file.metadata.name.clone());
        problems.extend(crate::engine::shape_gate::misfits(
            crate::shapes::registry(),
            &f,
            &target,
            &opts.allow_unknown_shape,
        ));
        if let Some(first) = targets.insert(target.clone(), f.path.clone()) {
            problems.push(FileProblem::new(
                ProblemKind::DuplicateConnector,
                &f.path,
                None,
                format!(
                    "connector `{target}` is also the target of {}",
                    first.display()
                ),
            ));
        }
        let mut config = None;
        let mut secret_vars = Vec::new();
        if let (true, Some(raw)) = (opts.create, &f.file.config) {
            secret_vars = raw
                .values()
                .filter_map(|v| secrets::placeholder_var(v))
                .map(str::to_string)
                .collect();
            match secrets::resolve(raw, env) {
                Ok(mut resolved) => {
                    if resolved.contains_key("name") {
                        resolved.insert("name".into(), target.clone());
                    }
                    config = Some(ResolvedConfig(resolved));
                }
                Err(missing) => {
                    for var in missing {
                        problems.push(FileProblem::new(
                            ProblemKind::MissingEnv,
                            &f.path,
                            line_of(&f.text, &var),
                            format!(
                                "the config needs environment variable {var}, which is not set"
                            ),
                        ));
                    }
                }
            }
        }
        wants.push(Want::File {
            target,
            file: Box::new(f),
            config,
            secret_vars,
            change: None,
        });
    }
    wants.extend(deletes);
    if problems.is_empty() {
        Ok(checked(wants))
    } else {
        Err(Error::Files(problems))
    }
}

fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// How the transactions run.
#[derive(Debug, Clone, Copy)]
pub struct ExecOptions {
    pub parallel: usize,
    pub tx: TxOptions,
    /// Once set (by an interrupt), no further transaction starts; those under way finish,
    /// so that every connector they stopped gets its state back.
    pub interrupted: Option<&'static AtomicBool>,
}

/// How long a resumed connector's tasks may take to run, unless `--task-timeout` says.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(60);

impl ExecOptions {
    pub fn new(prune: bool, parallel: usize, wait_timeout: Duration) -> Self {
        ExecOptions {
            parallel,
            tx: TxOptions {
                prune,
                wait: WaitPolicy::with_timeout(wait_timeout),
                alter_attempts: 3,
                task_timeout: DEFAULT_TASK_TIMEOUT,
            },
            interrupted: None,
        }
    }
}

/// What the transactions did.
#[derive(Debug, Clone, Serialize)]
pub struct ApplyReport {
    /// Every connector converged (or needed nothing).
    pub converged: bool,
    /// The run was interrupted: connectors not yet started were skipped.
    pub interrupted: bool,
    /// Mutating requests sent in all (0 when everything was in sync).
    pub mutating_calls: u32,
    pub connectors: Vec<ConnectorApply>,
}

/// Step 4: one transaction per changing connector, `parallel` at a time. Refuses a plan with
/// errors (nothing is sent then).
pub fn execute(
    client: &dyn Service,
    plan: &ApplyPlan,
    opts: &ExecOptions,
    clock: &dyn Clock,
    progress: &dyn OperationObserver,
) -> Result<ApplyReport> {
    if plan.errors() > 0 {
        return Err(Error::Other(format!(
            "{} cannot be changed; nothing was changed",
            crate::text::count(plan.errors(), "connector")
        )));
    }
    let is_interrupted = || opts.interrupted.is_some_and(|f| f.load(Ordering::SeqCst));
    let connectors = progress::map(
        &plan.connectors,
        opts.parallel,
        progress,
        |c| &c.name,
        |c| {
            let report = if is_interrupted() {
                transaction::skipped(c)
            } else {
                transaction::run(client, c, &opts.tx, clock, progress)
            };
            progress.transaction(&report);
            report
        },
    );
    Ok(ApplyReport {
        interrupted: is_interrupted(),
        converged: connectors.iter().all(ConnectorApply::converged),
        mutating_calls: connectors.iter().map(|c| c.mutating_calls).sum(),
        connectors,
    })
}
