//! A [`Connect`] that counts the mutating calls going through it, so that a report can prove
//! an in-sync connector was left alone.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::client::{ConfigDef, Connect, ConnectorListing, ConnectorStatus, Result, ServerInfo};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

pub struct Counting<'a> {
    inner: &'a dyn Connect,
    mutating: AtomicU32,
}

impl<'a> Counting<'a> {
    pub fn new(inner: &'a dyn Connect) -> Self {
        Counting {
            inner,
            mutating: AtomicU32::new(0),
        }
    }

    /// Mutating requests sent so far (stop, pause, resume, PATCH, DELETE, create).
    pub fn mutating(&self) -> u32 {
        self.mutating.load(Ordering::Relaxed)
    }

    fn count(&self) {
        self.mutating.fetch_add(1, Ordering::Relaxed);
    }
}

impl Connect for Counting<'_> {
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
    fn server_info(&self) -> Result<ServerInfo> {
        self.inner.server_info()
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        self.inner.list_connectors()
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        self.inner.status(name)
    }
    fn config(&self, name: &str) -> Result<BTreeMap<String, String>> {
        self.inner.config(name)
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.inner.offsets(name)
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<String> {
        self.count();
        self.inner.patch_offsets(name, entries)
    }
    fn reset_offsets(&self, name: &str) -> Result<String> {
        self.count();
        self.inner.reset_offsets(name)
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.count();
        self.inner.stop(name)
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.count();
        self.inner.pause(name)
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.count();
        self.inner.resume(name)
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        self.count();
        self.inner.create(name, config, initial_state)
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.count();
        self.inner.delete(name)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        self.inner.plugin_config(class)
    }
}
