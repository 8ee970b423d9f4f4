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
use super::{ClientError, Result};
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
        self.run_on(&SystemClock, idempotent, &|_| false, op)
    }

    /// [`run`](Self::run) on `clock`. An answer with `Retry-After` (a 429) is sent again
    /// no sooner than it asks; when that is past the deadline, the error is returned at once.
    pub(crate) fn run_on<T>(
        &self,
        clock: &dyn Clock,
        idempotent: bool,
        give_up: &dyn Fn(&ClientError) -> bool,
        mut op: impl FnMut() -> Result<T>,
    ) -> Result<T> {
        let start = clock.now();
        let mut last = None;
        let outcome = wait::until(clock, &self.0, || match op() {
            Ok(v) => Poll::Ready(v),
            Err(e) => {
                let mut again =
                    (e.is_retryable() || (idempotent && e.outcome_unknown())) && !give_up(&e);
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
    /// Until the service has answered once, a service that cannot be reached is not waited
    /// for ([`Retrying::unreachable_fails_first`]); `None`: always retried.
    answered: Option<std::sync::atomic::AtomicBool>,
}

impl<T: Transport> Retrying<T> {
    pub fn new(inner: T, policy: RetryPolicy) -> Self {
        Retrying {
            inner,
            policy,
            answered: None,
        }
    }

    /// Fails at once while nothing has answered yet and the service cannot be reached, or
    /// accepted the connection and gave no answer within `timeoutSeconds`: the first request
    /// of a command is its first contact (a service without `GET /`), and a wrong endpoint
    /// should not wait out the retry deadline. Once anything has answered, such failures are
    /// retried as usual.
    pub fn unreachable_fails_first(self) -> Self {
        Retrying {
            answered: Some(std::sync::atomic::AtomicBool::new(false)),
            ..self
        }
    }
}

impl<T: Transport> Transport for Retrying<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        let Some(answered) = &self.answered else {
            return self.policy.run(req.idempotent, || self.inner.send(req));
        };
        // Nothing reached, or a listener that accepted the connection and never answered:
        // at first contact, either is a wrong or dead endpoint, not a busy worker.
        let give_up = |e: &ClientError| {
            (e.is_unreachable() || e.is_silent()) && !answered.load(Ordering::Relaxed)
        };
        self.policy
            .run_on(&SystemClock, req.idempotent, &give_up, || {
                let r = self.inner.send(req);
                if !matches!(&r, Err(e) if e.is_unreachable() || e.is_silent()) {
                    answered.store(true, Ordering::Relaxed);
                }
                r
            })
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
}

/// Says what a failure means on the service behind the transport it wraps: a refused key
/// (401, 403: which key, what to check) or an endpoint that does not answer. The error then
/// carries that `hint`, so that whoever reports it need not know the service. The texts must
/// hold no secret.
pub struct ServiceHints<T> {
    inner: T,
    refused: String,
    unreachable: String,
}

impl<T: Transport> ServiceHints<T> {
    pub fn new(inner: T, refused: impl Into<String>, unreachable: impl Into<String>) -> Self {
        ServiceHints {
            inner,
            refused: refused.into(),
            unreachable: unreachable.into(),
        }
    }
}

impl<T: Transport> Transport for ServiceHints<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        self.inner.send(req).map_err(|mut e| {
            if e.is_auth_refused() {
                e.hint = Some(Box::new(self.refused.clone()));
            } else if e.is_unreachable() && e.tls_problem().is_none() {
                e.hint = Some(Box::new(self.unreachable.clone()));
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
