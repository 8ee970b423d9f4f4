//! Waiting for something to hold: poll with exponential backoff until a probe says ready, says
//! it never will be, or a deadline passes. The clock is injectable so that tests do not sleep.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time, as the waits see it.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
    fn sleep(&self, d: Duration);
}

/// The real clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
    }
}

/// A clock whose `sleep` only moves its own time forward: waits finish at once in tests.
pub struct ManualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
        }
    }
}

impl ManualClock {
    /// How much time all sleeps added up to.
    pub fn elapsed(&self) -> Duration {
        *self.elapsed.lock().expect("clock lock")
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }
    fn sleep(&self, d: Duration) {
        *self.elapsed.lock().expect("clock lock") += d;
    }
}

/// How long to wait and how often to look.
#[derive(Debug, Clone, Copy)]
pub struct WaitPolicy {
    pub timeout: Duration,
    /// The first pause between two looks; it doubles up to `max_delay`.
    pub first_delay: Duration,
    pub max_delay: Duration,
}

impl WaitPolicy {
    /// Looks 0.1 s after asking, then backs off to one look every 0.5 s: a stop or resume
    /// takes a real worker 0.1 to 1 s, and each look is one status read of a few ms, so the
    /// wait ends within half a second of the transition (a 2 s back-off overshot a 0.3 s
    /// transition by up to 1.7 s, for every connector of an apply).
    pub fn with_timeout(timeout: Duration) -> Self {
        WaitPolicy {
            timeout,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        }
    }

    /// The same pacing with a shorter deadline.
    pub fn capped(self, max: Duration) -> Self {
        WaitPolicy {
            timeout: self.timeout.min(max),
            ..self
        }
    }
}

/// One look at the thing waited for.
#[derive(Debug)]
pub enum Poll<T> {
    Ready(T),
    /// Not yet; the text says what was seen (for the timeout message).
    Pending(String),
    /// It will not happen (a task failed, say).
    Failed(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    #[error("gave up after {}s; last seen: {last}", waited.as_secs())]
    TimedOut { waited: Duration, last: String },
    #[error("{0}")]
    Failed(String),
}

/// Looks with `probe` until it is ready or failed, or `policy.timeout` has passed (one last
/// look is taken at the deadline).
pub fn until<T>(
    clock: &dyn Clock,
    policy: &WaitPolicy,
    mut probe: impl FnMut() -> Poll<T>,
) -> Result<T, WaitError> {
    let start = clock.now();
    let mut delay = policy.first_delay.max(Duration::from_millis(1));
    loop {
        match probe() {
            Poll::Ready(v) => return Ok(v),
            Poll::Failed(m) => return Err(WaitError::Failed(m)),
            Poll::Pending(last) => {
                let waited = clock.now().saturating_duration_since(start);
                if waited >= policy.timeout {
                    return Err(WaitError::TimedOut { waited, last });
                }
                clock.sleep(delay.min(policy.timeout - waited));
                delay = (delay * 2).min(policy.max_delay.max(delay));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_and_gives_up_at_the_deadline() {
        let clock = ManualClock::default();
        let policy = WaitPolicy::with_timeout(Duration::from_secs(10));
        let mut looks = 0;
        let got: Result<(), _> = until(&clock, &policy, || {
            looks += 1;
            Poll::Pending(format!("look {looks}"))
        });
        match got {
            Err(WaitError::TimedOut { waited, last }) => {
                assert_eq!(waited, Duration::from_secs(10));
                assert_eq!(last, format!("look {looks}"));
            }
            other => panic!("{other:?}"),
        }
        // 0.1 + 0.2 + 0.4, then 18 x 0.5, then 0.3 (cut at the deadline), then a last look.
        assert_eq!(looks, 23);
        assert_eq!(clock.elapsed(), Duration::from_secs(10));
    }

    #[test]
    fn returns_when_ready_or_failed() {
        let clock = ManualClock::default();
        let policy = WaitPolicy::with_timeout(Duration::from_secs(10));
        let mut n = 0;
        let got = until(&clock, &policy, || {
            n += 1;
            if n == 3 {
                Poll::Ready(n)
            } else {
                Poll::Pending(String::new())
            }
        });
        assert_eq!(got, Ok(3));
        let got: Result<(), _> = until(&clock, &policy, || Poll::Failed("task 0 FAILED".into()));
        assert_eq!(got, Err(WaitError::Failed("task 0 FAILED".into())));
    }
}
