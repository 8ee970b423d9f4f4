//! The journal of an operation: before the first connector is stopped, the operation writes
//! the prior state of every connector it is about to change to
//! `<state dir>/journal/<cluster>.json` (atomically). Each connector's entry is removed when its transaction ends, and the file is
//! deleted when the last one is. A journal that outlives its process (kill -9, a lost runner)
//! tells the next kco command on that cluster which connectors may be left stopped, and in
//! which state to put them back (`recover`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::holder::host_name;
use super::state_dir::StateDir;
use crate::engine::apply::report::SentRequest;
use crate::engine::apply::OperationObserver;
use crate::engine::apply::{Action, ApplyPlan, ConnectorApply};
use crate::engine::progress::Observer;
use crate::error::{Error, Result};
use crate::fsutil::write_private;
use crate::model::TargetState;

/// What the journal says about one connector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalEntry {
    /// The state to put back (for a created connector: the state it was to start in).
    pub prior_state: TargetState,
    /// Created by the apply: it held nothing before, so recovery leaves it stopped.
    #[serde(default)]
    pub created: bool,
    /// Its transaction had started (a stop may have been sent): recovery asks for its state
    /// even when status already shows it, as status lags a stop that was accepted. Until
    /// then nothing was sent for it, and recovery only reads it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub started: bool,
    /// On a service that alters asynchronously: the last alter request its transaction sent
    /// (or was about to send). Recovery reads that request's status rather than sending
    /// another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<SentRequest>,
    /// Deleted by the operation, to be created again from this definition (everything the
    /// service's create call takes: [`Op::DeleteKeeping`](crate::client::Op)): written before
    /// the delete is sent. Recovery creates it again from here when it is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<serde_json::Value>,
}

/// The journal file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    pub cluster: String,
    /// The worker URL the apply talked to (credentials never included).
    pub url: String,
    pub pid: u32,
    pub host: String,
    pub started_at: String,
    /// The backup written just before (its files hold the same states).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<PathBuf>,
    pub connectors: BTreeMap<String, JournalEntry>,
}

/// The journal left for `cluster`, if any.
pub fn load(state: &StateDir, cluster: &str) -> Result<Option<Journal>> {
    let p = state.journal_path(cluster);
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Read { path: p, source }),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::Other(format!(
            "{}:{}: not a kco journal ({e}); the backup it names holds the prior states: `kco recover --from-backup DIR`",
            p.display(),
            e.line()
        ))
    })
}

/// The journal of an apply under way: rewritten as each connector's transaction ends.
#[derive(Debug)]
pub struct JournalFile {
    path: PathBuf,
    journal: Mutex<Journal>,
}

impl JournalFile {
    /// Records every connector that `plan` changes, before anything is sent. Returns `None`
    /// when nothing changes.
    pub fn begin(
        state: &StateDir,
        plan: &ApplyPlan,
        backup: Option<&Path>,
        started_at: &str,
    ) -> Result<Option<JournalFile>> {
        let connectors: BTreeMap<String, JournalEntry> = plan
            .connectors
            .iter()
            .filter_map(|c| {
                let entry = match (&c.action, c.live_state) {
                    (Action::Create { start_state, .. }, _) => JournalEntry {
                        prior_state: *start_state,
                        created: true,
                        started: false,
                        request: None,
                        definition: None,
                    },
                    (a, Some(live)) if a.changes() => JournalEntry {
                        prior_state: live.target(),
                        created: false,
                        started: false,
                        request: None,
                        definition: None,
                    },
                    _ => return None,
                };
                Some((c.name.clone(), entry))
            })
            .collect();
        if connectors.is_empty() {
            return Ok(None);
        }
        let journal = Journal {
            cluster: plan.cluster.clone(),
            url: crate::client::redact_url(&plan.url),
            pid: std::process::id(),
            host: host_name(),
            started_at: started_at.to_string(),
            backup: backup.map(Path::to_path_buf),
            connectors,
        };
        let file = JournalFile {
            path: state.journal_path(&plan.cluster),
            journal: Mutex::new(journal),
        };
        file.write(&file.lock())?;
        Ok(Some(file))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The journal as its file holds it.
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(&*self.lock()).expect("a journal serializes")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self, journal: &Journal) -> Result<()> {
        if journal.connectors.is_empty() {
            return clear(&self.path);
        }
        let text = serde_json::to_string_pretty(journal).expect("a journal serializes");
        write_private(&self.path, text.as_bytes()).map_err(|source| Error::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// The transaction of `name` starts: recorded before its first request.
    pub fn started(&self, name: &str) -> Result<()> {
        let mut j = self.lock();
        match j.connectors.get_mut(name) {
            Some(e) if !e.started => e.started = true,
            _ => return Ok(()),
        }
        self.write(&j)
    }

    /// The transaction of `name` read the state it will put back: the plan's listing may have
    /// shown a transient one (UNASSIGNED during a rebalance), so recovery takes this one.
    pub fn recorded(&self, name: &str, prior: TargetState) -> Result<()> {
        let mut j = self.lock();
        match j.connectors.get_mut(name) {
            Some(e) if !e.created && e.prior_state != prior => e.prior_state = prior,
            _ => return Ok(()),
        }
        self.write(&j)
    }

    /// The transaction of `name` is about to send an asynchronous alter request, or learnt
    /// when the service says it was made.
    pub fn requested(&self, name: &str, request: &SentRequest) -> Result<()> {
        let mut j = self.lock();
        match j.connectors.get_mut(name) {
            Some(e) if e.request.as_ref() != Some(request) => e.request = Some(request.clone()),
            _ => return Ok(()),
        }
        self.write(&j)
    }

    /// The transaction of `name` ended (whatever its outcome, its state was dealt with):
    /// drop its entry. A connector whose state could not be put back keeps it.
    pub fn done(&self, report: &ConnectorApply) -> Result<()> {
        let mut j = self.lock();
        let maybe_stopped =
            report.mutating_calls > 0 && !report.state_restored || report.pending_request.is_some();
        if maybe_stopped && !j.connectors.get(&report.name).is_some_and(|e| e.created) {
            return Ok(());
        }
        if j.connectors.remove(&report.name).is_some() {
            self.write(&j)?;
        }
        Ok(())
    }

    /// Connectors still recorded.
    pub fn remaining(&self) -> BTreeMap<String, JournalEntry> {
        self.lock().connectors.clone()
    }

    /// Records, before the first of them is deleted, each connector an operation deletes and
    /// creates again: its state and its definition ([`JournalEntry::definition`]).
    pub fn recreating(
        state: &StateDir,
        (cluster, url): (&str, &str),
        backup: Option<&Path>,
        started_at: &str,
        connectors: BTreeMap<String, (TargetState, serde_json::Value)>,
    ) -> Result<JournalFile> {
        let connectors = connectors
            .into_iter()
            .map(|(name, (prior_state, definition))| {
                let entry = JournalEntry {
                    prior_state,
                    created: false,
                    started: true,
                    request: None,
                    definition: Some(definition),
                };
                (name, entry)
            })
            .collect();
        let journal = Journal {
            cluster: cluster.to_string(),
            url: crate::client::redact_url(url),
            pid: std::process::id(),
            host: host_name(),
            started_at: started_at.to_string(),
            backup: backup.map(Path::to_path_buf),
            connectors,
        };
        let file = JournalFile {
            path: state.journal_path(cluster),
            journal: Mutex::new(journal),
        };
        file.write(&file.lock())?;
        Ok(file)
    }

    /// `name` exists again (created again from its definition): its entry goes.
    pub fn exists_again(&self, name: &str) -> Result<()> {
        let mut j = self.lock();
        if j.connectors.remove(name).is_some() {
            self.write(&j)?;
        }
        Ok(())
    }
}

/// Deletes the journal at `path` (nothing when there is none).
pub fn clear(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Write {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// An [`Observer`] that keeps the journal: each transaction is marked started before its
/// first request and leaves the journal when it ends. Told first, before the run's own
/// progress (`Both(&journaled, progress)`).
pub struct Journaled<'a> {
    pub file: &'a JournalFile,
    /// Set when the journal could not be rewritten (the entry then stays: safe side).
    pub write_error: Mutex<Option<Error>>,
}

impl<'a> Journaled<'a> {
    pub fn new(file: &'a JournalFile) -> Self {
        Journaled {
            file,
            write_error: Mutex::new(None),
        }
    }

    /// The last error rewriting the journal, if any.
    pub fn take_write_error(&self) -> Option<Error> {
        self.write_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn note(&self, written: Result<()>) {
        if let Err(e) = written {
            *self.write_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        }
    }
}

impl Observer for Journaled<'_> {
    fn started(&self, connector: &str) {
        self.note(self.file.started(connector));
    }
}

impl OperationObserver for Journaled<'_> {
    fn recorded(&self, connector: &str, prior: TargetState) {
        self.note(self.file.recorded(connector, prior));
    }

    fn requested(&self, connector: &str, request: &SentRequest) {
        self.note(self.file.requested(connector, request));
    }

    fn transaction(&self, report: &ConnectorApply) {
        self.note(self.file.done(report));
    }
}
