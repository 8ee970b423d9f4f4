//! Layers around a [`Transport`]: each wraps the one seam, so that every endpoint gets them.
//!
//! - [`Retrying`]: backoff and an overall deadline. A 409 during a rebalance, a 500 that
//!   Connect calls safe to retry and a worker that could not be reached are retried; an
//!   idempotent request also after a timeout or a connection lost after sending. Any other
//!   request whose outcome is unknown is not, because it may have taken effect: the caller
//!   reads state again instead.
//! - [`Traced`]: reports every attempt, its outcome and duration, to a callback (`--verbose`).
//! - [`Counting`]: counts the mutating requests, so a report can prove a connector was left
//!   alone.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::transport::{Body, Request, Transport};
use super::Result;
use crate::wait::{self, Clock, Poll, SystemClock, WaitPolicy};

/// How long and how often to retry: a [`WaitPolicy`] whose deadline runs from the first
/// attempt.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy(pub WaitPolicy);

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy(WaitPolicy {
            timeout: Duration::from_secs(60),
            first_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
        })
    }
}

impl RetryPolicy {
    /// One attempt, no retries.
    pub fn none() -> Self {
        RetryPolicy(WaitPolicy {
            timeout: Duration::ZERO,
            first_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        })
    }

    /// Runs `op` until it succeeds, fails for good, or the deadline passes; then returns the
    /// last error.
    pub fn run<T>(&self, idempotent: bool, op: impl FnMut() -> Result<T>) -> Result<T> {
        self.run_on(&SystemClock, idempotent, op)
    }

    /// [`run`](Self::run) on `clock`. An answer with `Retry-After` (a 429) is sent again
    /// no sooner than it asks; when that is past the deadline, the error is returned at once.
    pub(crate) fn run_on<T>(
        &self,
        clock: &dyn Clock,
        idempotent: bool,
        mut op: impl FnMut() -> Result<T>,
    ) -> Result<T> {
        let start = clock.now();
        let mut last = None;
        let outcome = wait::until(clock, &self.0, || match op() {
            Ok(v) => Poll::Ready(v),
            Err(e) => {
                let mut again = e.is_retryable() || (idempotent && e.outcome_unknown());
                if let (true, Some(after)) = (again, e.retry_after()) {
                    let waited = clock.now().saturating_duration_since(start);
                    if waited + after > self.0.timeout {
                        again = false;
                    } else {
                        clock.sleep(after);
                    }
                }
                last = Some(e);
                if again {
                    Poll::Pending(String::new())
                } else {
                    Poll::Failed(String::new())
                }
            }
        });
        outcome.map_err(|_| last.take().expect("a failed attempt"))
    }
}

/// Retries the requests of the transport it wraps.
pub struct Retrying<T> {
    inner: T,
    policy: RetryPolicy,
}

impl<T: Transport> Retrying<T> {
    pub fn new(inner: T, policy: RetryPolicy) -> Self {
        Retrying { inner, policy }
    }
}

impl<T: Transport> Transport for Retrying<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        self.policy.run(req.idempotent, || self.inner.send(req))
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
}

/// Says what a refusal of the credentials means: on a 401 or 403 from the transport it
/// wraps, the error carries `refusal` (which key, what to check), so that whoever reports it
/// names the credentials without knowing where they came from. The text must hold no secret.
pub struct Credentials<T> {
    inner: T,
    refusal: String,
}

impl<T: Transport> Credentials<T> {
    pub fn new(inner: T, refusal: impl Into<String>) -> Self {
        Credentials {
            inner,
            refusal: refusal.into(),
        }
    }
}

impl<T: Transport> Transport for Credentials<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        self.inner.send(req).map_err(|mut e| {
            if e.is_auth_refused() {
                e.refusal = Some(Box::new(self.refusal.clone()));
            }
            e
        })
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
}

/// Receives one line per attempt, e.g. `PATCH /connectors/orders/offsets: ok (12 ms)`.
pub type TraceSink = Box<dyn Fn(&str) + Send + Sync>;

/// Traces the requests of the transport it wraps.
pub struct Traced<T> {
    inner: T,
    sink: TraceSink,
}

impl<T: Transport> Traced<T> {
    pub fn new(inner: T, sink: TraceSink) -> Self {
        Traced { inner, sink }
    }
}

impl<T: Transport> Transport for Traced<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        let start = Instant::now();
        let r = self.inner.send(req);
        let ms = start.elapsed().as_millis();
        let what = format!("{} {}", req.method, req.path);
        match &r {
            Ok(_) => (self.sink)(&format!("{what}: ok ({ms} ms)")),
            Err(e) => (self.sink)(&format!("{what}: {} ({ms} ms)", e.kind)),
        }
        r
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
}

/// How many mutating requests went through a [`Counting`] layer.
#[derive(Debug, Clone, Default)]
pub struct Counter(Arc<AtomicU32>);

impl Counter {
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Counts the mutating requests (anything but GET) passed to the transport it wraps.
pub struct Counting<T> {
    inner: T,
    counter: Counter,
}

impl<T: Transport> Counting<T> {
    pub fn new(inner: T, counter: Counter) -> Self {
        Counting { inner, counter }
    }
}

impl<T: Transport> Transport for Counting<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        if req.is_mutating() {
            self.counter.0.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.send(req)
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
}

#[cfg(test)]
mod tests;
