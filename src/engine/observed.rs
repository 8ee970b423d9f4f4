//! Offsets as the service last observed them: a service that observes offsets periodically
//! instead of reading them live ([`Capabilities::observed_offsets`], Confluent Cloud) says
//! when; an observation older than a bound is read again (with backoff, within a time
//! limit), and one still too old is an error of its own, never taken as current.
//!
//! [`Capabilities::observed_offsets`]: crate::client::Capabilities

use std::time::{Duration, SystemTime};

use crate::client::{ClientError, Service};
use crate::model::OffsetEntry;
use crate::wait::{self, Clock, Poll, WaitPolicy};

/// The default bound on an observation's age: 120 s, as Confluent's CLI.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(120);

/// How long to keep reading for a fresh observation: 30 s, as Confluent's CLI.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// How fresh an observation must be, and how long to keep reading for a fresher one.
#[derive(Debug, Clone, Copy)]
pub struct Freshness {
    pub max_age: Duration,
    /// The re-reads: 30 s in all by default (as Confluent's CLI), from 1 s apart up to 5 s.
    pub wait: WaitPolicy,
}

impl Default for Freshness {
    fn default() -> Self {
        Freshness::with_max_age(DEFAULT_MAX_AGE)
    }
}

impl Freshness {
    pub fn with_max_age(max_age: Duration) -> Self {
        Freshness {
            max_age,
            wait: WaitPolicy {
                timeout: DEFAULT_WAIT,
                first_delay: Duration::from_secs(1),
                max_delay: Duration::from_secs(5),
            },
        }
    }
}

/// One connector's offsets, and when they were observed (`None`: read live).
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub entries: Vec<OffsetEntry>,
    pub observed_at: Option<SystemTime>,
    /// How old the observation was when read (zero when read live).
    pub age: Duration,
}

/// Why offsets could not be read as current.
#[derive(Debug)]
pub enum ReadError {
    Client(ClientError),
    /// Every read within the time limit answered an observation older than the bound.
    Stale {
        observed_at: SystemTime,
        age: Duration,
        max_age: Duration,
        reads: u32,
        waited: Duration,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Client(e) => write!(f, "{e}"),
            ReadError::Stale {
                observed_at,
                age,
                max_age,
                reads,
                waited,
            } => write!(
                f,
                "the offsets were last observed {} ago ({}), longer ago than --max-observed-age {}s, after {} in {}s: not recorded as current",
                age_text(*age),
                crate::clock::rfc3339(*observed_at),
                max_age.as_secs(),
                crate::text::count(*reads as usize, "read"),
                waited.as_secs()
            ),
        }
    }
}

/// `live offsets observed 45s ago by Confluent Cloud (2026-12-01T02:00:00Z)`: what a review
/// says of observed offsets; `None` for offsets read live.
pub fn observed_note(client: &dyn Service, o: &Observed) -> Option<String> {
    o.observed_at.map(|at| {
        format!(
            "live offsets observed {} ago by {} ({})",
            age_text(o.age),
            client.backend().service(),
            crate::clock::rfc3339(at)
        )
    })
}

/// `45s`, `3m05s`, `2h10m`: an observation's age.
pub fn age_text(age: Duration) -> String {
    let s = age.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// [`read_offsets`] with the system's clock, telling `fleet` when it starts and ends (the
/// reads of a fleet's `snapshot` and `diff`).
pub fn read_reporting(
    client: &dyn Service,
    name: &str,
    fresh: &Freshness,
    fleet: &dyn super::progress::Observer,
) -> Result<Observed, ReadError> {
    fleet.started(name);
    let read = read_offsets(
        client,
        name,
        fresh,
        &crate::clock::now,
        &crate::wait::SystemClock,
    );
    fleet.finished(name);
    read
}

/// Reads `name`'s offsets: once from a service that reads them live; from one that observes
/// them, until an observation is at most `fresh.max_age` old (by `now`, the wall clock) or
/// `fresh.wait` runs out.
pub fn read_offsets(
    client: &dyn Service,
    name: &str,
    fresh: &Freshness,
    now: &dyn Fn() -> SystemTime,
    clock: &dyn Clock,
) -> Result<Observed, ReadError> {
    if !client.capabilities().observed_offsets {
        let read = client.offsets_read(name).map_err(ReadError::Client)?;
        return Ok(Observed {
            entries: read.entries,
            observed_at: read.observed_at,
            age: Duration::ZERO,
        });
    }
    let start = clock.now();
    let mut reads = 0u32;
    let mut error = None;
    let mut last = None;
    let got = wait::until(clock, &fresh.wait, || {
        reads += 1;
        match client.offsets_read(name) {
            Err(e) => {
                error = Some(e);
                Poll::Failed(String::new())
            }
            Ok(read) => {
                let Some(at) = read.observed_at else {
                    // No time given: nothing says it is old.
                    return Poll::Ready(Observed {
                        entries: read.entries,
                        observed_at: None,
                        age: Duration::ZERO,
                    });
                };
                let age = now().duration_since(at).unwrap_or(Duration::ZERO);
                if age <= fresh.max_age {
                    Poll::Ready(Observed {
                        entries: read.entries,
                        observed_at: Some(at),
                        age,
                    })
                } else {
                    last = Some((at, age));
                    Poll::Pending(String::new())
                }
            }
        }
    });
    match got {
        Ok(o) => Ok(o),
        Err(_) => match (error, last) {
            (Some(e), _) => Err(ReadError::Client(e)),
            (None, Some((observed_at, age))) => Err(ReadError::Stale {
                observed_at,
                age,
                max_age: fresh.max_age,
                reads,
                waited: clock.now().saturating_duration_since(start),
            }),
            (None, None) => unreachable!("a wait that failed without a read"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{FakeConnect, State};
    use crate::wait::ManualClock;
    use serde_json::json;

    fn cloud() -> crate::fake::FakeConnectBuilder {
        FakeConnect::builder()
            .confluent_cloud("env-a", "lkc-b")
            .clock_at("2026-12-01T02:00:00Z")
            .sink(
                "orders",
                "io.confluent.connect.s3.S3SinkConnector",
                State::Running,
                json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0},
                        "offset": {"kafka_offset": 7}}]),
            )
    }

    fn now() -> SystemTime {
        humantime::parse_rfc3339("2026-12-01T02:00:00Z").unwrap()
    }

    #[test]
    fn a_stale_observation_is_read_again_until_fresh() {
        let fake = cloud().stale_observations(2).in_process();
        let clock = ManualClock::default();
        let got = read_offsets(
            &fake.client(),
            "orders",
            &Freshness::default(),
            &now,
            &clock,
        )
        .unwrap();
        assert_eq!(got.entries.len(), 1);
        assert!(got.observed_at.is_some() && got.age <= DEFAULT_MAX_AGE);
        assert_eq!(fake.count("GET", "*/connectors/orders/offsets"), 3);
        assert!(
            clock.elapsed() >= Duration::from_secs(3),
            "backed off between reads"
        );
    }

    #[test]
    fn an_observation_stale_past_the_time_limit_is_an_error_that_says_how_old() {
        let fake = cloud().stale_observations(1000).in_process();
        let clock = ManualClock::default();
        let e = read_offsets(
            &fake.client(),
            "orders",
            &Freshness::default(),
            &now,
            &clock,
        )
        .unwrap_err();
        let ReadError::Stale { age, reads, .. } = &e else {
            panic!("{e}")
        };
        assert!(*age > DEFAULT_MAX_AGE && *reads > 2, "{e}");
        assert!(clock.elapsed() <= Duration::from_secs(31));
        let text = e.to_string();
        assert!(
            text.contains("longer ago than --max-observed-age 120s")
                && text.contains("not recorded as current"),
            "{text}"
        );
        // A larger bound takes the same observation.
        let lenient = Freshness::with_max_age(Duration::from_secs(3600));
        read_offsets(&fake.client(), "orders", &lenient, &now, &clock).unwrap();
    }

    #[test]
    fn kafka_connect_is_read_once_and_live() {
        let fake = FakeConnect::builder()
            .sink("s", "K", State::Running, json!([]))
            .in_process();
        let got = read_offsets(
            &fake.client(),
            "s",
            &Freshness::default(),
            &now,
            &ManualClock::default(),
        )
        .unwrap();
        assert_eq!((got.observed_at, got.age), (None, Duration::ZERO));
        assert_eq!(fake.count("GET", "/connectors/s/offsets"), 1);
    }

    #[test]
    fn ages_read_as_seconds_minutes_or_hours() {
        assert_eq!(age_text(Duration::from_secs(45)), "45s");
        assert_eq!(age_text(Duration::from_secs(185)), "3m05s");
        assert_eq!(age_text(Duration::from_secs(7800)), "2h10m");
    }
}
