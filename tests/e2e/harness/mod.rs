//! Shared helpers for the end-to-end tests that run against the local test bed
//! (`scripts/local-connect.sh up`): where the workers are, whether they answer, unique
//! names, raw Connect REST calls, bounded waits, connector cleanup, reading a topic
//! through a FileStreamSink, and running the `kco` binary.
//!
//! Every test starts with `let Some(tb) = testbed() else { return };` so the suite skips
//! when no test bed runs, unless `KCO_E2E=required` (then it fails). A test that disturbs
//! the test bed for everyone (restarts a worker) uses [`testbed_alone`] instead.
#![allow(dead_code)] // a toolbox for every e2e module; not each module uses each tool

mod connect;
mod filestream;
mod http;
mod run;

pub use connect::*;
pub use filestream::*;
pub use http::*;
pub use run::*;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::blocking::Client;

use crate::support::env::TestEnv;

/// Default REST URLs of Connect cluster "a" (two workers); override with
/// `KCO_E2E_A_URLS` (comma-separated).
pub const DEFAULT_A_URLS: &str = "http://127.0.0.1:8083,http://127.0.0.1:8084";
/// Default REST URL of Connect cluster "b"; override with `KCO_E2E_B_URL`.
pub const DEFAULT_B_URL: &str = "http://127.0.0.1:8085";
/// Default REST URL of the standalone worker; override with `KCO_E2E_S_URL`.
pub const DEFAULT_S_URL: &str = "http://127.0.0.1:8086";
/// Default PostgreSQL port of the test bed; override with `KCO_E2E_PG_PORT`.
pub const DEFAULT_PG_PORT: &str = "5433";
/// The test bed's Kafka broker; override with `KCO_E2E_KAFKA`.
pub const DEFAULT_KAFKA: &str = "127.0.0.1:9092";

/// How long state changes may take. Kafka's own integration tests allow 60 s.
pub const WAIT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);

pub const FILE_SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
pub const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// The running test bed: cluster "a" with two workers, cluster "b" with one. Holds the
/// test's turn on the test bed until dropped (keep it for the whole test).
#[derive(Debug)]
pub struct Testbed {
    pub a_urls: Vec<String>,
    pub b_url: String,
    _turn: Turn,
}

/// Most tests share the test bed; a test holding it alone runs while no other does.
#[derive(Debug)]
enum Turn {
    Shared(RwLockReadGuard<'static, ()>),
    Alone(RwLockWriteGuard<'static, ()>),
}

static TURNS: RwLock<()> = RwLock::new(());

impl Testbed {
    /// First worker of cluster "a".
    pub fn a(&self) -> Connect {
        Connect::new(&self.a_urls[0])
    }

    /// Second worker of cluster "a" (the first one again if only one URL was given).
    pub fn a2(&self) -> Connect {
        Connect::new(self.a_urls.get(1).unwrap_or(&self.a_urls[0]))
    }

    /// The single worker of cluster "b".
    pub fn b(&self) -> Connect {
        Connect::new(&self.b_url)
    }

    /// The standalone worker (`KCO_E2E_S_URL`). Not answering: a panic under
    /// `KCO_E2E=required`, else `None` (the test skips).
    pub fn standalone(&self) -> Option<Connect> {
        let url = std::env::var("KCO_E2E_S_URL").unwrap_or_else(|_| DEFAULT_S_URL.into());
        match probe_root(url.trim_end_matches('/')) {
            Ok(()) => Some(Connect::new(&url)),
            Err(why) => {
                skip_unless_required(
                    "KCO_E2E",
                    &format!(
                        "the standalone worker is not reachable at {why}; \
                         run scripts/local-connect.sh up"
                    ),
                );
                None
            }
        }
    }

    /// `host:port` of the test bed's Kafka broker (`KCO_E2E_KAFKA`).
    pub fn kafka(&self) -> String {
        std::env::var("KCO_E2E_KAFKA").unwrap_or_else(|_| DEFAULT_KAFKA.into())
    }

    /// The test bed's PostgreSQL port (`KCO_E2E_PG_PORT`).
    pub fn pg_port(&self) -> u16 {
        std::env::var("KCO_E2E_PG_PORT")
            .unwrap_or_else(|_| DEFAULT_PG_PORT.into())
            .parse()
            .expect("KCO_E2E_PG_PORT is a port number")
    }

    pub fn all_urls(&self) -> Vec<String> {
        let mut urls = self.a_urls.clone();
        urls.push(self.b_url.clone());
        urls
    }
}

/// The test bed, when every worker answers `GET /`. Checked once per test binary. Shared
/// with the other tests; waits while a [`testbed_alone`] test runs. Call it once per test.
///
/// Unreachable: with `KCO_E2E=required` this panics; otherwise it prints why the test
/// is skipped and returns `None`.
pub fn testbed() -> Option<Testbed> {
    reachable_testbed(|| Turn::Shared(TURNS.read().unwrap_or_else(PoisonError::into_inner)))
}

/// Like [`testbed`], but the test runs alone: it waits until every running e2e test is
/// done, and no other starts before it ends. For tests that restart a worker.
pub fn testbed_alone() -> Option<Testbed> {
    reachable_testbed(|| Turn::Alone(TURNS.write().unwrap_or_else(PoisonError::into_inner)))
}

fn reachable_testbed(turn: impl FnOnce() -> Turn) -> Option<Testbed> {
    static PROBE: OnceLock<Result<(Vec<String>, String), String>> = OnceLock::new();
    let probe = PROBE.get_or_init(probe_testbed);
    match probe {
        Ok((a_urls, b_url)) => Some(Testbed {
            a_urls: a_urls.clone(),
            b_url: b_url.clone(),
            _turn: turn(),
        }),
        Err(why) => {
            skip_unless_required(
                "KCO_E2E",
                &format!(
                    "the test bed is not reachable at {why}; \
                     run scripts/test.sh or scripts/local-connect.sh up"
                ),
            );
            None
        }
    }
}

/// Whether the variable `var` (`KCO_E2E`, `KCO_E2E_DR`, ...) is `required`.
fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v.eq_ignore_ascii_case("required"))
}

/// For a test that cannot run here (`why`): a panic when `var` is `required`, else a note on
/// stderr that it skips. The test returns after it.
pub fn skip_unless_required(var: &str, why: &str) {
    if required(var) {
        panic!("{var}=required but {why}");
    }
    eprintln!("skipping: {why}");
}

fn probe_testbed() -> Result<(Vec<String>, String), String> {
    let split = |s: String| -> Vec<String> {
        s.split(',')
            .map(|u| u.trim().trim_end_matches('/').to_string())
            .filter(|u| !u.is_empty())
            .collect()
    };
    let a_urls = split(std::env::var("KCO_E2E_A_URLS").unwrap_or_else(|_| DEFAULT_A_URLS.into()));
    let b_url = std::env::var("KCO_E2E_B_URL")
        .unwrap_or_else(|_| DEFAULT_B_URL.into())
        .trim_end_matches('/')
        .to_string();
    if a_urls.is_empty() {
        return Err("KCO_E2E_A_URLS (empty)".into());
    }
    for url in a_urls.iter().chain([&b_url]) {
        probe_root(url)?;
    }
    Ok((a_urls, b_url))
}

/// `GET {url}/` with a short timeout: `Ok` on a 2xx, else why not. Never retried.
fn probe_root(url: &str) -> Result<(), String> {
    static PROBE_CLIENT: OnceLock<Client> = OnceLock::new();
    let probe = PROBE_CLIENT.get_or_init(|| {
        Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("HTTP client")
    });
    match probe.get(format!("{url}/")).send() {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("{url} (GET / answered {})", r.status())),
        Err(e) => Err(format!("{url} ({e})")),
    }
}

/// The text of `file` in `dir`, the directory of a service that `scripts/<script> up`
/// fills (see [`service_dir`]). Unreadable: `None` (the test skips), or a panic when `var`
/// is `required`.
pub fn service_file(dir: &Path, file: &str, var: &str, script: &str) -> Option<String> {
    let path = dir.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            skip_unless_required(
                var,
                &format!(
                    "{} is unreadable ({e}); run scripts/{script} up",
                    path.display()
                ),
            );
            None
        }
    }
}

/// The legacy worker (cluster l, `scripts/legacy-connect.sh up`: Kafka Connect 3.4 on the test
/// bed's broker, at `KCO_E2E_LEGACY_URL`), and kco on cluster l through its REST API (the
/// kco.yaml the script wrote in `KCO_E2E_L_DIR`). Not there: `None` (the test skips), or a
/// panic under `KCO_E2E_LEGACY=required`.
pub fn legacy() -> Option<(Connect, TestEnv)> {
    let dir = service_dir("KCO_E2E_L_DIR", "legacy");
    let config = service_file(&dir, "kco.yaml", "KCO_E2E_LEGACY", "legacy-connect.sh")?;
    let env = TestEnv::new().args(&["--cluster", "l"]);
    env.config(config);
    Some((
        Connect::new(&env_url("KCO_E2E_LEGACY_URL", "http://127.0.0.1:8087")),
        env,
    ))
}

/// A name no other test (or earlier run) uses: `{prefix}-{pid}-{counter}-{nanos}`.
/// Valid as a connector name and as a Kafka topic name.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}-{}-{n}-{nanos}", std::process::id())
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("kco-e2e-")
        .tempdir()
        .expect("create temp dir")
}

/// Polls `probe` every 250 ms until it returns `Ok`, or panics after `timeout` with
/// `what` and the last `Err` (the state seen).
pub fn wait_for<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> T {
    let start = Instant::now();
    loop {
        match probe() {
            Ok(v) => return v,
            Err(last) if start.elapsed() >= timeout => {
                panic!("timed out after {timeout:?} waiting for {what}; last seen: {last}")
            }
            Err(_) => thread::sleep(POLL),
        }
    }
}
