//! Retries with exponential backoff and an overall deadline, around any [`Connect`].
//!
//! What is retried: a 409 during a rebalance, a 500 that Connect calls safe to retry, and a
//! worker that could not be reached at all. Idempotent calls (reads, stop, pause, resume) are
//! also retried after a timeout; a mutating call that timed out is not, because it may have
//! taken effect: the caller reads state again instead.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{
    ClientError, ConfigDef, Connect, ConnectorListing, ConnectorStatus, Result, ServerInfo,
};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// How long and how often to retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Give up once this much time has passed since the first attempt.
    pub deadline: Duration,
    /// The first wait; it doubles up to `max_delay`.
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            deadline: Duration::from_secs(60),
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            deadline: Duration::ZERO,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        }
    }

    /// Runs `op` until it succeeds, fails for good, or the deadline passes.
    pub fn run<T>(&self, idempotent: bool, mut op: impl FnMut() -> Result<T>) -> Result<T> {
        let start = Instant::now();
        let mut delay = self.base_delay;
        loop {
            match op() {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let again = should_retry(&e, idempotent);
                    if !again || start.elapsed() + delay > self.deadline {
                        return Err(e);
                    }
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(self.max_delay);
                }
            }
        }
    }
}

fn should_retry(e: &ClientError, idempotent: bool) -> bool {
    if e.message().is_some_and(|m| m.contains("already exists")) {
        return false;
    }
    e.is_retryable() || (idempotent && e.is_timeout())
}

/// A [`Connect`] that retries the calls of the one it wraps.
pub struct Retrying<C> {
    inner: C,
    policy: RetryPolicy,
}

impl<C: Connect> Retrying<C> {
    pub fn new(inner: C, policy: RetryPolicy) -> Self {
        Retrying { inner, policy }
    }

    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: Connect> Connect for Retrying<C> {
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
    fn server_info(&self) -> Result<ServerInfo> {
        self.policy.run(true, || self.inner.server_info())
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        self.policy.run(true, || self.inner.list_connectors())
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        self.policy.run(true, || self.inner.status(name))
    }
    fn config(&self, name: &str) -> Result<BTreeMap<String, String>> {
        self.policy.run(true, || self.inner.config(name))
    }
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.policy.run(true, || self.inner.offsets(name))
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<String> {
        self.policy
            .run(false, || self.inner.patch_offsets(name, entries))
    }
    fn reset_offsets(&self, name: &str) -> Result<String> {
        self.policy.run(false, || self.inner.reset_offsets(name))
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.policy.run(true, || self.inner.stop(name))
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.policy.run(true, || self.inner.pause(name))
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.policy.run(true, || self.inner.resume(name))
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        self.policy
            .run(false, || self.inner.create(name, config, initial_state))
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.policy.run(false, || self.inner.delete(name))
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        self.policy.run(true, || self.inner.plugin_config(class))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn http(status: u16, message: &str) -> ClientError {
        ClientError::Http {
            method: "PATCH".into(),
            url: "http://x/connectors/c/offsets".into(),
            status,
            message: message.into(),
        }
    }

    fn fast() -> RetryPolicy {
        RetryPolicy {
            deadline: Duration::from_secs(5),
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        }
    }

    #[test]
    fn retries_rebalance_conflicts_until_success() {
        let n = Cell::new(0);
        let got = fast().run(false, || {
            n.set(n.get() + 1);
            if n.get() < 3 {
                Err(http(
                    409,
                    "Cannot complete request momentarily due to stale configuration",
                ))
            } else {
                Ok(7)
            }
        });
        assert_eq!(got.unwrap(), 7);
        assert_eq!(n.get(), 3);
    }

    #[test]
    fn does_not_retry_client_errors_or_mutating_timeouts() {
        for e in [
            http(400, "Connectors must be in the STOPPED state"),
            http(409, "Connector c already exists"),
            http(500, "Request timed out"),
        ] {
            let n = Cell::new(0);
            let msg = e.to_string();
            let mut once = Some(e);
            let got: Result<()> = fast().run(false, || {
                n.set(n.get() + 1);
                Err(once.take().unwrap_or_else(|| http(418, "again")))
            });
            assert!(got.is_err());
            assert_eq!(n.get(), 1, "{msg}");
        }
    }

    #[test]
    fn retries_safe_500_and_idempotent_timeouts() {
        let n = Cell::new(0);
        let _ = fast().run(true, || -> Result<()> {
            n.set(n.get() + 1);
            if n.get() == 1 {
                Err(http(500, "Request timed out"))
            } else if n.get() == 2 {
                Err(http(
                    500,
                    "zombie members; the request can be safely retried",
                ))
            } else {
                Ok(())
            }
        });
        assert_eq!(n.get(), 3);
    }

    #[test]
    fn gives_up_at_the_deadline() {
        let p = RetryPolicy {
            deadline: Duration::from_millis(30),
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(5),
        };
        let n = Cell::new(0);
        let got: Result<()> = p.run(true, || {
            n.set(n.get() + 1);
            Err(http(409, "rebalance"))
        });
        assert!(got.is_err());
        assert!(n.get() >= 2 && n.get() < 20, "{}", n.get());
    }
}
