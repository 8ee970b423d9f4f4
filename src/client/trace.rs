//! A [`Connect`] that reports every call it passes on, with its outcome and duration, to a
//! callback: the CLI prints these lines with `--verbose`. The core stays silent.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{ConfigDef, Connect, ConnectorListing, ConnectorStatus, Result, ServerInfo};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// Receives one line per call, e.g. `PATCH orders offsets: ok (12 ms)`.
pub type TraceSink = Box<dyn Fn(&str) + Send + Sync>;

/// Wraps a [`Connect`] and traces its calls.
pub struct Traced<C> {
    inner: C,
    sink: TraceSink,
}

impl<C: Connect> Traced<C> {
    pub fn new(inner: C, sink: TraceSink) -> Self {
        Traced { inner, sink }
    }

    fn call<T>(&self, what: &str, op: impl FnOnce() -> Result<T>) -> Result<T> {
        let start = Instant::now();
        let r = op();
        let ms = start.elapsed().as_millis();
        match &r {
            Ok(_) => (self.sink)(&format!("{what}: ok ({ms} ms)")),
            Err(e) => (self.sink)(&format!("{what}: {e} ({ms} ms)")),
        }
        r
    }
}

impl<C: Connect> Connect for Traced<C> {
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
    fn server_info(&self) -> Result<ServerInfo> {
        self.call("GET /", || self.inner.server_info())
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        self.call("GET /connectors?expand=status&expand=info", || {
            self.inner.list_connectors()
        })
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        self.call(&format!("GET {name} status"), || self.inner.status(name))
    }
    fn config(&self, name: &str) -> Result<BTreeMap<String, String>> {
        self.call(&format!("GET {name} config"), || self.inner.config(name))
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.call(&format!("GET {name} offsets"), || self.inner.offsets(name))
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<String> {
        let what = format!("PATCH {name} offsets ({} partition(s))", entries.len());
        self.call(&what, || self.inner.patch_offsets(name, entries))
    }
    fn reset_offsets(&self, name: &str) -> Result<String> {
        self.call(&format!("DELETE {name} offsets"), || {
            self.inner.reset_offsets(name)
        })
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.call(&format!("PUT {name} stop"), || self.inner.stop(name))
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.call(&format!("PUT {name} pause"), || self.inner.pause(name))
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.call(&format!("PUT {name} resume"), || self.inner.resume(name))
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        let state = initial_state.map(|s| format!(" {s}")).unwrap_or_default();
        self.call(&format!("POST {name} (create{state})"), || {
            self.inner.create(name, config, initial_state)
        })
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.call(&format!("DELETE {name}"), || self.inner.delete(name))
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        self.call(&format!("GET plugin {class} config"), || {
            self.inner.plugin_config(class)
        })
    }
}
