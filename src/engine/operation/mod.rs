//! The one guarded operation that every command changing a cluster goes through (apply in all
//! its forms, reset, undo, recover). Its steps, in order:
//!
//! 1. **open**: take the cluster's lock (in the project's state directory, and on its git
//!    remote when it has one: `remote_lock`) and finish an interrupted operation that the
//!    journal records (a dry run takes no lock and refuses while one is left, here or on the
//!    shared remote, or another operation runs);
//! 2. **plan**: from [`Checked`] wants (files checked, and belonging to this cluster) and
//!    live state, reads only;
//! 3. **run**: refuse a plan with errors or with a `--fail-on` risk, stop for a dry run, ask
//!    the caller's confirmation, then back up the live offsets, write the journal and execute
//!    the transactions, keeping the journal as each ends.
//!
//! Backup and journal happen inside [`Operation::run`], whatever the caller: no command can
//! change a cluster without them. Nothing here prints; the CLI renders what each step returns.

pub mod applied_mark;
pub mod holder;
pub mod journal;
pub mod lock;
pub mod recover;
mod recover_request;
mod remote_git;
pub mod remote_journal;
pub mod remote_lock;
pub mod state_dir;
mod topic;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_cloud;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use journal::{Journal, JournalEntry};
pub use recover::{RecoverOutcome, RecoverReport, RecoveredConnector};
pub use state_dir::StateDir;
pub use topic::{TopicDone, TopicRan};

use crate::client::Service;
use crate::engine::apply::OperationObserver;
use crate::engine::apply::{
    self, backup, plan, ApplyPlan, ApplyReport, BackupReport, Checked, ExecOptions, PlanOptions,
};
use crate::engine::dr::{Crossing, DrOptions};
use crate::engine::fail_on::{refusals, Refusal, Refuse};
use crate::engine::neighbours::Neighbour;
use crate::engine::orphaned::OffsetsTopic;
use crate::engine::progress::Both;
use crate::engine::shared_group;
use crate::error::{Error, Result};
use crate::wait::{Clock, WaitPolicy};
use journal::{JournalFile, Journaled};
use lock::ClusterLock;

/// What an apply, reset or undo plans from, resolved once by the caller.
pub struct PlanInput<'a> {
    pub wants: &'a Checked,
    pub opts: &'a PlanOptions,
    /// Files of another Kafka cluster: translated, their sources left out (`engine::dr`).
    pub dr: &'a DrOptions,
    /// The other clusters of kco.yaml, looked at for sinks sharing a consumer group.
    pub neighbours: &'a [Neighbour],
    /// `--allow-shared-group`: sinks whose shared group is a warning, not a refusal.
    pub allow_shared_group: &'a [String],
    /// The workers' offsets topic, where kco.yaml says how to reach it: looked at for the
    /// offsets earlier connectors left under the names the plan creates.
    pub offsets_topic: Option<(&'a dyn OffsetsTopic, &'a str)>,
    /// Where what deleted connectors left is read (the cluster's Kafka), for the connectors
    /// the plan creates: their partitions are labelled against it (`plan::label_creates`).
    pub leftovers: &'a crate::engine::orphaned::of_name::Leftovers<'a>,
}

/// How an operation runs, once planned.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Stop after the plan: nothing is sent, nothing written.
    pub dry_run: bool,
    /// Risks that refuse the whole plan before any change.
    pub refuse: Vec<Refuse>,
    pub exec: ExecOptions,
    /// Where the backup goes; `None`: a new directory under the state directory's `backups/`.
    pub backup_dir: Option<PathBuf>,
}

/// What [`Operation::run`] did.
#[derive(Debug)]
pub enum Ran {
    /// Connectors that cannot be changed are in the plan: nothing was done.
    PlanErrors(usize),
    /// `--fail-on` refused these partitions: nothing was done.
    Refused(Vec<Refusal>),
    /// Nothing to change. The report of the (empty) transactions shows no mutating call.
    NoChanges(ApplyReport),
    /// A dry run: the plan only.
    DryRun,
    /// The confirmation said no: nothing was done.
    Declined,
    /// Backed up, journaled and executed.
    Done(Box<Done>),
}

/// An executed operation.
#[derive(Debug)]
pub struct Done {
    pub backup: BackupReport,
    pub report: ApplyReport,
    /// The journal, while it still records connectors (their state could not be put back).
    pub journal: PathBuf,
    /// Connectors the journal still records.
    pub left: BTreeMap<String, JournalEntry>,
    /// The journal could not be rewritten as a transaction ended (its entry stayed: safe).
    pub journal_error: Option<Error>,
}

/// An operation on one cluster, holding its lock (but for a dry run) until dropped.
pub struct Operation {
    client: Box<dyn Service>,
    state: StateDir,
    cluster: String,
    _lock: Option<ClusterLock>,
    dry_run: bool,
    recovered: Option<RecoverReport>,
    finished_elsewhere: Option<FinishedElsewhere>,
}

/// This checkout's journal of an operation that another runner finished since, from the
/// journal it found on the shared remote (the remote's record of finished journals names the
/// operation): dropped, as nothing it records is left to do here.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FinishedElsewhere {
    pub cluster: String,
    /// This checkout's copy, now deleted.
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub journal: PathBuf,
    /// Where the record says so: `refs/kco/finished/C on git remote `origin``.
    pub record: String,
    pub finished: remote_journal::Finished,
}

impl Operation {
    /// Opens an operation that changes `cluster`: takes the lock before anything is sent (an
    /// error naming its holder when another process has it), then `connect`s and finishes an
    /// interrupted operation its journal records ([`Operation::recovered`]). A journal that
    /// could not be finished stays, and [`Operation::plan`] refuses.
    pub fn open(
        state: &StateDir,
        cluster: &str,
        connect: &dyn Fn() -> Result<Box<dyn Service>>,
        wait: &WaitPolicy,
        clock: &dyn Clock,
    ) -> Result<Self> {
        let lock = ClusterLock::acquire(state, cluster, &crate::clock::now_rfc3339())?;
        // The journal travels with the shared lock: one another runner left (killed, or its
        // lock force-unlocked) is finished here first. This checkout's own journal of an
        // operation another runner finished since is dropped, not finished a second time.
        let mut finished_elsewhere = None;
        // Where the journal came from, when it is the remote's: the report names it there.
        let mut from_remote = None;
        if let Some(remote) = lock.remote() {
            if let Some(j) = journal::load(state, cluster)? {
                finished_elsewhere = drop_finished(state, cluster, remote, &j)?;
            }
            if journal::load(state, cluster)?.is_none() {
                if let Some(text) = remote_journal::read_journal(remote, cluster)? {
                    remote_journal::adopt(state, cluster, &text)?;
                    from_remote = Some(PathBuf::from(remote_journal::shown(remote, cluster)));
                }
            }
        }
        let client = connect()?;
        let finished = finish_journal(&*client, state, cluster, from_remote, wait, clock)?;
        if let (Some(remote), Some((j, r))) = (lock.remote(), &finished) {
            if r.ok {
                let at = crate::clock::now_rfc3339();
                remote_journal::record_finished(remote, cluster, j, lock.holder(), &at, false)?;
                remote_journal::delete_journal(remote, cluster)?;
            }
        }
        Ok(Operation {
            client,
            state: state.clone(),
            cluster: cluster.to_string(),
            _lock: Some(lock),
            dry_run: false,
            recovered: finished.map(|(_, r)| r),
            finished_elsewhere,
        })
    }

    /// Opens a dry run: no lock, nothing sent but reads; refused while another operation runs
    /// on the cluster or an interrupted one is left, in this checkout or on the shared remote
    /// (its plan would be built on connectors stopped half-way, where the real run finishes
    /// that operation first).
    pub fn dry_run(
        state: &StateDir,
        cluster: &str,
        connect: &dyn Fn() -> Result<Box<dyn Service>>,
    ) -> Result<Self> {
        let finished_elsewhere = ensure_finished_shared(state, cluster)?;
        let client = connect()?;
        Ok(Operation {
            client,
            state: state.clone(),
            cluster: cluster.to_string(),
            _lock: None,
            dry_run: true,
            recovered: None,
            finished_elsewhere,
        })
    }

    /// Why the operation's lock is kept on this machine only, where the project has no git
    /// remote to share it through (`None`: it is shared, or this is a dry run, which takes
    /// no lock).
    pub fn local_only(&self) -> Option<remote_lock::LocalOnly> {
        self._lock.as_ref().and_then(ClusterLock::local_only)
    }

    /// The git remote the operation's lock is shared through (`None`: a dry run, or a lock
    /// on this machine only).
    pub fn shared_remote(&self) -> Option<&remote_lock::Remote> {
        self._lock.as_ref().and_then(ClusterLock::remote)
    }

    /// Who holds the operation's lock (`None`: a dry run).
    pub fn holder(&self) -> Option<&holder::Holder> {
        self._lock.as_ref().map(ClusterLock::holder)
    }

    /// This checkout's journal that opening dropped, another runner having finished its
    /// operation (`None`: there was none).
    pub fn finished_elsewhere(&self) -> Option<&FinishedElsewhere> {
        self.finished_elsewhere.as_ref()
    }

    /// What opening finished of an interrupted operation (`None`: there was none).
    pub fn recovered(&self) -> Option<&RecoverReport> {
        self.recovered.as_ref()
    }

    /// What `kco recover` reports: what opening finished, or that there was nothing to do
    /// (no journal at its path).
    pub fn recovery(&self) -> RecoverReport {
        self.recovered.clone().unwrap_or_else(|| {
            RecoverReport::nothing(&self.cluster, &self.state.journal_path(&self.cluster))
        })
    }

    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// The client the operation talks to the cluster with.
    pub fn client(&self) -> &dyn Service {
        &*self.client
    }

    /// Puts back the states a backup records (when the journal is lost).
    pub fn recover_from_backup(
        &self,
        dir: &Path,
        wait: &WaitPolicy,
        clock: &dyn Clock,
    ) -> Result<RecoverReport> {
        self.refuse_unfinished()?;
        let entries = recover::entries_from_backup(dir)?;
        Ok(recover::recover(
            &*self.client,
            &self.cluster,
            dir,
            &entries,
            wait,
            clock,
        ))
    }

    /// The plan, from live state (reads only).
    pub fn plan(&self, wants: &Checked, opts: &PlanOptions) -> Result<ApplyPlan> {
        self.plan_translated(wants, opts, &plan::Translations::new())
    }

    /// The whole plan of `input`: the files of another Kafka cluster translated through
    /// MirrorMaker 2 and their sources left out (`engine::dr`), then the look for sinks that
    /// share a consumer group with a neighbour's (`engine::shared_group`): a refusal is an
    /// error, nothing changed; warnings are the plan's.
    pub fn plan_all(&self, input: &PlanInput) -> Result<ApplyPlan> {
        let mut plan =
            match Crossing::of(&*self.client, &self.cluster, input.wants.wants(), input.dr)? {
                None => self.plan(input.wants, input.opts)?,
                Some(crossing) => {
                    let wants = input.wants.without(&crossing.left_out);
                    let mut plan =
                        self.plan_translated(&wants, input.opts, &crossing.translations)?;
                    crossing.complete(&mut plan);
                    plan
                }
            };
        shared_group::refuse_shared(
            &mut plan,
            &*self.client,
            input.neighbours,
            input.allow_shared_group,
        )?;
        if let Some((topic, name)) = input.offsets_topic {
            warn_leftovers(&mut plan, topic, name);
        }
        crate::engine::apply::plan::label_creates(&mut plan, &*self.client, input.leftovers);
        Ok(plan)
    }

    /// [`Operation::plan`], with sink files of another Kafka cluster translated
    /// (`engine::mirror`).
    pub fn plan_translated(
        &self,
        wants: &Checked,
        opts: &PlanOptions,
        translations: &plan::Translations,
    ) -> Result<ApplyPlan> {
        if wants.cluster() != self.cluster {
            return Err(Error::Other(format!(
                "the wants were checked for cluster `{}`, not `{}`",
                wants.cluster(),
                self.cluster
            )));
        }
        self.refuse_unfinished()?;
        plan::build_translated(
            &*self.client,
            &self.cluster,
            wants.wants(),
            opts,
            translations,
        )
    }

    /// Refuses, confirms, backs up, journals and executes `plan`. `confirm` is asked once,
    /// just before the first change (not for a dry run or an empty plan).
    pub fn run(
        &self,
        plan: &ApplyPlan,
        settings: &Settings,
        confirm: &mut dyn FnMut(&ApplyPlan) -> Result<bool>,
        progress: &dyn OperationObserver,
        clock: &dyn Clock,
    ) -> Result<Ran> {
        if plan.cluster != self.cluster {
            return Err(Error::Other(format!(
                "a plan for cluster `{}` cannot run on `{}`",
                plan.cluster, self.cluster
            )));
        }
        if plan.errors() > 0 {
            return Ok(Ran::PlanErrors(plan.errors()));
        }
        let refused = refusals(plan, &settings.refuse);
        if !refused.is_empty() {
            return Ok(Ran::Refused(refused));
        }
        if plan.changes() == 0 {
            // The (empty) transactions run, so that the report shows zero mutating calls.
            let report = apply::execute(&*self.client, plan, &settings.exec, clock, progress)?;
            return Ok(Ran::NoChanges(report));
        }
        if self.dry_run || settings.dry_run {
            return Ok(Ran::DryRun);
        }
        if !confirm(plan)? {
            return Ok(Ran::Declined);
        }
        let now = crate::clock::now();
        let stamp = crate::clock::rfc3339(now);
        let dir = match &settings.backup_dir {
            Some(d) => d.clone(),
            None => self.state.new_backup_dir(&self.cluster, now),
        };
        let backup = backup::write(plan, &dir, &stamp)?;
        progress.backed_up(&backup);
        let journal = JournalFile::begin(&self.state, plan, Some(&backup.dir), &stamp)?;
        let Some(journal) = journal else {
            let report = apply::execute(&*self.client, plan, &settings.exec, clock, progress)?;
            return Ok(Ran::Done(Box::new(Done {
                backup,
                report,
                journal: self.state.journal_path(&self.cluster),
                left: BTreeMap::new(),
                journal_error: None,
            })));
        };
        // Before anything is sent, the journal is on the shared remote too.
        let remote = self._lock.as_ref().and_then(ClusterLock::remote);
        if let Some(remote) = remote {
            remote_journal::push_journal(remote, &self.cluster, &journal.text())?;
        }
        let journaled = Journaled::new(&journal);
        let both = Both(&journaled, progress);
        let report = apply::execute(&*self.client, plan, &settings.exec, clock, &both)?;
        let mut journal_error = journaled.take_write_error();
        if let Some(remote) = remote {
            // What is left of it travels on; nothing left, nothing travels.
            let left = match journal.path().exists() {
                true => remote_journal::push_journal(remote, &self.cluster, &journal.text()),
                false => remote_journal::delete_journal(remote, &self.cluster),
            };
            if let Err(e) = left {
                journal_error.get_or_insert(e);
            }
        }
        Ok(Ran::Done(Box::new(Done {
            backup,
            report,
            journal: journal.path().to_path_buf(),
            left: journal.remaining(),
            journal_error,
        })))
    }

    fn refuse_unfinished(&self) -> Result<()> {
        match &self.recovered {
            Some(r) if !r.ok => Err(Error::Unfinished {
                cluster: self.cluster.clone(),
                journal: self.state.journal_path(&self.cluster),
                connectors: r
                    .connectors
                    .iter()
                    .filter(|c| c.outcome == RecoverOutcome::Failed)
                    .count(),
            }),
            _ => Ok(()),
        }
    }
}

/// Warns, in `plan`, of the offsets that earlier connectors left in the offsets topic `name`
/// under the names the plan creates: the created connector's PATCH removes them, so that the
/// file's offsets replace them (`apply::transaction`). A topic that cannot be read is a
/// warning too: the transaction still removes them.
fn warn_leftovers(plan: &mut ApplyPlan, topic: &dyn OffsetsTopic, name: &str) {
    let created: std::collections::BTreeSet<String> = plan
        .connectors
        .iter()
        .filter(|c| matches!(c.action, plan::Action::Create { .. }))
        .map(|c| c.name.clone())
        .collect();
    if created.is_empty() {
        return;
    }
    let found = match crate::engine::orphaned::find(topic, name, &Default::default()) {
        Ok(found) => found,
        Err(e) => {
            plan.warnings.push(format!(
                "could not look in topic `{name}` for offsets left under the names to create: {e}"
            ));
            return;
        }
    };
    for o in found.sources.iter().filter(|o| created.contains(&o.name)) {
        plan.warnings.push(format!(
            "`{}` (to create) has offsets left in topic `{name}` by an earlier connector of its name ({}, last written {}): the file's offsets replace them; `kco reset --orphaned {}` first keeps a backup of them",
            o.name,
            crate::text::count(o.partitions.len(), "partition"),
            crate::clock::rfc3339(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_millis(o.last_commit_ms.max(0) as u64)
            ),
            o.name
        ));
    }
}

/// For commands that only read a cluster (`snapshot`, `diff`): an error while another kco
/// changes it (its connectors may be stopped half-way) or while an interrupted operation's
/// journal says connectors may be left out of their state (a snapshot would record them so).
/// A journal of this checkout whose operation another runner finished since (the shared
/// remote records it, read only when there is such a journal) is dropped, and returned to be
/// said.
pub fn ensure_finished(state: &StateDir, cluster: &str) -> Result<Option<FinishedElsewhere>> {
    if let Some(holder) = lock::live_holder(state, cluster) {
        if holder.pid != std::process::id() {
            return Err(Error::InProgress {
                cluster: cluster.to_string(),
                lock: state.lock_path(cluster),
                holder: holder.to_string(),
            });
        }
    }
    let Some(j) = journal::load(state, cluster)? else {
        return Ok(None);
    };
    if let Ok(remote_lock::Store::Remote(remote)) = state.lock_store(cluster) {
        // A remote that cannot be read says nothing: the journal stands.
        if let Ok(Some(f)) = drop_finished(state, cluster, &remote, &j) {
            return Ok(Some(f));
        }
    }
    Err(Error::Unfinished {
        cluster: cluster.to_string(),
        journal: state.journal_path(cluster),
        connectors: j.connectors.len(),
    })
}

/// [`ensure_finished`], and on the shared remote too: refused while another runner's
/// operation on `cluster` left a journal there (killed, or its lock force-unlocked), so that
/// what a snapshot records is never a state that operation caused. Reads the remote once
/// (twice when this checkout has a journal of its own).
pub fn ensure_finished_shared(
    state: &StateDir,
    cluster: &str,
) -> Result<Option<FinishedElsewhere>> {
    let finished = ensure_finished(state, cluster)?;
    let Ok(remote_lock::Store::Remote(remote)) = state.lock_store(cluster) else {
        return Ok(finished);
    };
    if let Some(text) = remote_journal::read_journal(&remote, cluster)? {
        let connectors = serde_json::from_str::<Journal>(&text)
            .map(|j| j.connectors.len())
            .unwrap_or(0);
        return Err(Error::Unfinished {
            cluster: cluster.to_string(),
            journal: PathBuf::from(remote_journal::shown(&remote, cluster)),
            connectors,
        });
    }
    Ok(finished)
}

/// Drops `journal`, this checkout's journal of `cluster`, when `remote` records its operation
/// as finished (or discarded) by another runner; says who did.
fn drop_finished(
    state: &StateDir,
    cluster: &str,
    remote: &remote_lock::Remote,
    journal: &Journal,
) -> Result<Option<FinishedElsewhere>> {
    let Some(finished) = remote_journal::finished_elsewhere(remote, cluster, journal)? else {
        return Ok(None);
    };
    let path = state.journal_path(cluster);
    journal::clear(&path)?;
    Ok(Some(FinishedElsewhere {
        cluster: cluster.to_string(),
        journal: path,
        record: format!(
            "{} on git remote `{}`",
            remote_journal::finished_ref(cluster),
            remote.name
        ),
        finished,
    }))
}

/// Who holds `cluster`'s shared lock on the git remote, if anyone: a kco operation running,
/// or killed and never recovered, on any runner. `None` with a lock on this machine only
/// ([`ensure_finished`] speaks for this machine) or when the remote cannot be read.
pub fn shared_holder(state: &StateDir, cluster: &str) -> Option<String> {
    match state.lock_store(cluster).ok()? {
        remote_lock::Store::Remote(r) => remote_lock::read(&r, cluster).ok().flatten().map(|h| {
            format!(
                "{} on git remote `{}`, {}",
                remote_lock::lock_ref(cluster),
                r.name,
                h.holder
            )
        }),
        remote_lock::Store::Local(_) => None,
    }
}

/// Forgets the journal of `cluster` without putting anything back (for connectors that
/// cannot be recovered: no rights, or deleted since). Holds the lock while it does; returns
/// what was forgotten (`None`: there was no journal).
pub fn discard(state: &StateDir, cluster: &str) -> Result<Option<Journal>> {
    let lock = ClusterLock::acquire(state, cluster, &crate::clock::now_rfc3339())?;
    let mut found = journal::load(state, cluster)?;
    if let Some(remote) = lock.remote() {
        if found.is_none() {
            if let Some(text) = remote_journal::read_journal(remote, cluster)? {
                found = Some(remote_journal::adopt(state, cluster, &text)?);
            }
        }
        if let Some(j) = &found {
            let at = crate::clock::now_rfc3339();
            remote_journal::record_finished(remote, cluster, j, lock.holder(), &at, true)?;
        }
        remote_journal::delete_journal(remote, cluster)?;
    }
    let Some(j) = found else {
        return Ok(None);
    };
    journal::clear(&state.journal_path(cluster))?;
    Ok(Some(j))
}

/// Recovers what the journal of `cluster` records, if there is one; clears it when every
/// state is back. `from`: where the journal came from when not this checkout's (the shared
/// remote's ref it was adopted from), as the report names it. The caller holds the cluster's
/// lock.
fn finish_journal(
    client: &dyn Service,
    state: &StateDir,
    cluster: &str,
    from: Option<PathBuf>,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> Result<Option<(Journal, RecoverReport)>> {
    let Some(j) = journal::load(state, cluster)? else {
        return Ok(None);
    };
    let path = state.journal_path(cluster);
    let source = from.unwrap_or_else(|| path.clone());
    let mut report = recover::recover(client, cluster, &source, &j.connectors, wait, clock);
    report.interrupted = Some(recover::Interrupted {
        pid: j.pid,
        host: j.host.clone(),
        started_at: j.started_at.clone(),
    });
    if report.ok {
        journal::clear(&path)?;
    }
    Ok(Some((j, report)))
}
