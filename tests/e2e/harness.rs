//! Shared helpers for the end-to-end tests that run against the local test bed
//! (`scripts/local-connect.sh up`): where the workers are, whether they answer, unique
//! names, raw Connect REST calls, bounded waits, connector cleanup, reading a topic
//! through a FileStreamSink, and running the `kco` binary.
//!
//! Every test starts with `let Some(tb) = testbed() else { return };` so the suite skips
//! when no test bed runs, unless `KCO_E2E=required` (then it fails). A test that disturbs
//! the test bed for everyone (restarts a worker) uses [`testbed_alone`] instead.
#![allow(dead_code)] // a toolbox for every e2e module; not each module uses each tool

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::blocking::Client;
use reqwest::Method;
use serde_json::{json, Value};

/// Default REST URLs of Connect cluster "a" (two workers); override with
/// `KCO_E2E_A_URLS` (comma-separated).
pub const DEFAULT_A_URLS: &str = "http://127.0.0.1:8083,http://127.0.0.1:8084";
/// Default REST URL of Connect cluster "b"; override with `KCO_E2E_B_URL`.
pub const DEFAULT_B_URL: &str = "http://127.0.0.1:8085";

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
        Err(why) if e2e_required() => panic!(
            "KCO_E2E=required but the test bed is not reachable: {why}; \
             run scripts/local-connect.sh up"
        ),
        Err(why) => {
            eprintln!(
                "skipping e2e: test bed not reachable at {why}; \
                 run scripts/test.sh or scripts/local-connect.sh up"
            );
            None
        }
    }
}

fn e2e_required() -> bool {
    std::env::var("KCO_E2E").is_ok_and(|v| v.eq_ignore_ascii_case("required"))
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

// --- raw HTTP ---------------------------------------------------------------------

fn client() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        Client::builder()
            .no_proxy()
            // The Connect REST layer gives up after 90 s; wait a little longer than that.
            .timeout(Duration::from_secs(100))
            .build()
            .expect("HTTP client")
    })
}

/// Status and body of one HTTP exchange. The body is the parsed JSON, `Null` when empty,
/// or a JSON string holding the raw text when it is not JSON.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    /// The `message` field of a Connect error or PATCH/DELETE offsets reply ("" if none).
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }

    /// The body, after asserting the status.
    pub fn expect(self, status: u16, what: &str) -> Value {
        assert_eq!(
            self.status, status,
            "{what}: unexpected reply {}",
            self.body
        );
        self.body
    }

    /// Connect's answer to a request it could not serve right now, worth retrying: 409
    /// (rebalance under way), 503 (worker starting), and the 500s that say so, including
    /// "Request cannot be completed because a rebalance is expected" (seen on
    /// `GET /connectors/{name}/tasks` during a rebalance).
    fn is_transient(&self) -> bool {
        match self.status {
            409 | 503 => true,
            500 => {
                let m = self.message();
                m.contains("can be safely retried")
                    || m.contains("Request timed out")
                    || m.contains("a rebalance is expected")
            }
            _ => false,
        }
    }
}

/// One request, no retries. Panics only when the worker cannot be reached at all.
pub fn send_once(method: Method, url: &str, body: Option<&Value>) -> Reply {
    let mut req = client().request(method.clone(), url);
    if let Some(b) = body {
        req = req.json(b);
    }
    let resp = req.send().unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = resp.status().as_u16();
    let text = resp
        .text()
        .unwrap_or_else(|e| panic!("{method} {url}: reading the body: {e}"));
    let body = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Reply { status, body }
}

/// A request retried for up to [`WAIT`] while Connect answers 409 (rebalance in
/// progress), 503 (worker starting) or a 500 it marks as retryable; a GET also on any
/// other 5xx (it changes nothing, and no test expects a GET to fail that way).
pub fn send(method: Method, url: &str, body: Option<&Value>) -> Reply {
    let start = Instant::now();
    loop {
        let reply = send_once(method.clone(), url, body);
        let retry = reply.is_transient() || (method == Method::GET && reply.status >= 500);
        if !retry || start.elapsed() >= WAIT {
            return reply;
        }
        thread::sleep(Duration::from_millis(500));
    }
}

pub fn get(url: &str) -> Reply {
    send(Method::GET, url, None)
}

pub fn put(url: &str, body: Option<&Value>) -> Reply {
    send(Method::PUT, url, body)
}

pub fn post(url: &str, body: &Value) -> Reply {
    send(Method::POST, url, Some(body))
}

pub fn patch(url: &str, body: &Value) -> Reply {
    send(Method::PATCH, url, Some(body))
}

pub fn delete(url: &str) -> Reply {
    send(Method::DELETE, url, None)
}

// --- one Connect worker -------------------------------------------------------------

/// A Connect worker's REST API, with the calls the tests need.
#[derive(Clone, Debug)]
pub struct Connect {
    pub base: String,
}

impl Connect {
    pub fn new(base: &str) -> Self {
        Connect {
            base: base.trim_end_matches('/').to_string(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn connector_url(&self, name: &str, tail: &str) -> String {
        self.url(&format!("/connectors/{name}{tail}"))
    }

    /// `GET /`: version, commit, kafka_cluster_id.
    pub fn info(&self) -> Value {
        get(&self.url("/")).expect(200, "GET /")
    }

    /// `POST /connectors`; the returned guard deletes the connector when dropped.
    pub fn create(&self, name: &str, config: Value) -> ConnectorGuard {
        self.create_with(json!({ "name": name, "config": config }))
    }

    /// `POST /connectors` with `initial_state` (Connect 3.7+).
    pub fn create_in_state(&self, name: &str, config: Value, state: &str) -> ConnectorGuard {
        self.create_with(json!({ "name": name, "config": config, "initial_state": state }))
    }

    /// Takes over the cleanup of a connector that something else (kco) creates here.
    pub fn adopt(&self, name: &str) -> ConnectorGuard {
        ConnectorGuard {
            connect: self.clone(),
            name: name.to_string(),
        }
    }

    /// Whether the worker answers `GET /` now (one try, short timeout).
    pub fn answers(&self) -> bool {
        probe_root(&self.base).is_ok()
    }

    fn create_with(&self, request: Value) -> ConnectorGuard {
        let name = request["name"].as_str().expect("name").to_string();
        let reply = post(&self.url("/connectors"), &request);
        assert_eq!(reply.status, 201, "create connector {name}: {}", reply.body);
        ConnectorGuard {
            connect: self.clone(),
            name,
        }
    }

    /// `GET /connectors/{name}/status`, or `None` on 404.
    pub fn status(&self, name: &str) -> Option<Value> {
        let reply = get(&self.connector_url(name, "/status"));
        match reply.status {
            200 => Some(reply.body),
            404 => None,
            _ => panic!("GET status of {name}: {} {}", reply.status, reply.body),
        }
    }

    /// The connector's state (`RUNNING`, `PAUSED`, `STOPPED`...) from its status.
    pub fn state(&self, name: &str) -> String {
        let st = self
            .status(name)
            .unwrap_or_else(|| panic!("{name}: no such connector"));
        st["connector"]["state"].as_str().unwrap_or("?").to_string()
    }

    /// `GET /connectors/{name}/config`.
    pub fn config(&self, name: &str) -> Value {
        get(&self.connector_url(name, "/config")).expect(200, "GET config")
    }

    /// `GET /connectors/{name}/offsets`: the `offsets` list, as the worker sees it now.
    ///
    /// Source offsets come from the worker's copy of the offsets topic, which may trail a
    /// PATCH or DELETE by a moment (a removed partition can still be listed, with
    /// `"offset": null`). After a write, use [`Connect::wait_offsets`].
    pub fn offsets(&self, name: &str) -> Vec<Value> {
        let body = get(&self.connector_url(name, "/offsets")).expect(200, "GET offsets");
        body["offsets"].as_array().cloned().unwrap_or_default()
    }

    /// `PATCH /connectors/{name}/offsets` with `{"offsets": offsets}` (transient errors
    /// retried; the reply is returned whatever it is).
    pub fn patch_offsets(&self, name: &str, offsets: Value) -> Reply {
        patch(
            &self.connector_url(name, "/offsets"),
            &json!({ "offsets": offsets }),
        )
    }

    /// `DELETE /connectors/{name}/offsets`.
    pub fn reset_offsets(&self, name: &str) -> Reply {
        delete(&self.connector_url(name, "/offsets"))
    }

    /// `PUT /connectors/{name}/stop` (asserts 204), then waits until STOPPED with no tasks.
    pub fn stop(&self, name: &str) {
        let reply = put(&self.connector_url(name, "/stop"), None);
        assert_eq!(reply.status, 204, "stop {name}: {}", reply.body);
        self.wait_stopped(name);
    }

    /// `PUT /connectors/{name}/pause` (asserts 202), then waits until the connector and
    /// every task are PAUSED.
    pub fn pause(&self, name: &str) {
        let reply = put(&self.connector_url(name, "/pause"), None);
        assert_eq!(reply.status, 202, "pause {name}: {}", reply.body);
        wait_for(&format!("{name} and its tasks PAUSED"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            let tasks = st["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            if st["connector"]["state"] == "PAUSED" && tasks.iter().all(|t| t["state"] == "PAUSED")
            {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        });
    }

    /// `PUT /connectors/{name}/resume` (asserts 202), then waits until RUNNING.
    pub fn resume(&self, name: &str) {
        let reply = put(&self.connector_url(name, "/resume"), None);
        assert_eq!(reply.status, 202, "resume {name}: {}", reply.body);
        self.wait_running(name);
    }

    /// Waits until the connector and at least one task are RUNNING and no task is in
    /// another state. Panics at once when a task FAILED, with its trace.
    pub fn wait_running(&self, name: &str) -> Value {
        wait_for(&format!("{name} RUNNING"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            if let Some(failed) = st["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["state"] == "FAILED")
            {
                panic!("{name}: a task FAILED: {}", failed["trace"]);
            }
            let tasks = st["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let running = st["connector"]["state"] == "RUNNING"
                && !tasks.is_empty()
                && tasks.iter().all(|t| t["state"] == "RUNNING");
            if running {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        })
    }

    /// Waits until the connector is STOPPED and has no tasks (what PATCH requires).
    ///
    /// Normally `/status` then lists no tasks. A connector deleted while its task was
    /// being (re)started and created again under the same name can keep a stale
    /// `UNASSIGNED` task status from its previous life until it runs again; that counts
    /// as stopped when `GET /connectors/{name}/tasks` is empty too.
    pub fn wait_stopped(&self, name: &str) -> Value {
        wait_for(&format!("{name} STOPPED with no tasks"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            let tasks = st["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let no_tasks = tasks.is_empty()
                || (tasks.iter().all(|t| t["state"] == "UNASSIGNED")
                    && self.task_configs(name).is_empty());
            if st["connector"]["state"] == "STOPPED" && no_tasks {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        })
    }

    /// `GET /connectors/{name}/tasks`: the task configurations (empty when stopped).
    pub fn task_configs(&self, name: &str) -> Vec<Value> {
        let body = get(&self.connector_url(name, "/tasks")).expect(200, "GET tasks");
        body.as_array().cloned().unwrap_or_default()
    }

    /// Waits until the connector (not necessarily its tasks) reports `state`.
    pub fn wait_state(&self, name: &str, state: &str) -> Value {
        wait_for(&format!("{name} {state}"), WAIT, || {
            let st = self.status(name).ok_or("no such connector")?;
            if st["connector"]["state"] == state {
                Ok(st)
            } else {
                Err(st.to_string())
            }
        })
    }

    /// Waits until `GET offsets` satisfies `pred`; returns that offsets list.
    pub fn wait_offsets(
        &self,
        name: &str,
        what: &str,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        wait_for(&format!("offsets of {name}: {what}"), WAIT, || {
            let offsets = self.offsets(name);
            if pred(&offsets) {
                Ok(offsets)
            } else {
                Err(Value::Array(offsets).to_string())
            }
        })
    }

    /// Whether this worker knows the connector (`GET /connectors/{name}` is 200).
    pub fn has_connector(&self, name: &str) -> bool {
        get(&self.connector_url(name, "")).status == 200
    }
}

/// Deletes its connector when dropped, also when the test panics. Offsets survive the
/// delete (Connect keeps them), which is harmless because names are unique.
#[derive(Debug)]
pub struct ConnectorGuard {
    pub connect: Connect,
    pub name: String,
}

impl ConnectorGuard {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ConnectorGuard {
    fn drop(&mut self) {
        let url = self.connect.connector_url(&self.name, "");
        // Never panic here: a panic while unwinding aborts the whole test binary.
        let result = std::panic::catch_unwind(|| send(Method::DELETE, &url, None));
        match result {
            Ok(r) if r.status == 204 || r.status == 404 => {}
            Ok(r) => eprintln!("cleanup: DELETE {url}: {} {}", r.status, r.body),
            Err(_) => eprintln!("cleanup: DELETE {url} failed"),
        }
    }
}

// --- FileStream connectors ----------------------------------------------------------

/// Config of a FileStreamSource reading `file` (absolute) into `topic`.
pub fn file_source_config(file: &Path, topic: &str) -> Value {
    assert!(
        file.is_absolute(),
        "FileStreamSource needs an absolute path"
    );
    json!({
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": file.to_str().expect("UTF-8 path"),
        "topic": topic,
    })
}

/// Config of a FileStreamSink writing `topic` to `file` (absolute).
pub fn file_sink_config(file: &Path, topic: &str) -> Value {
    assert!(file.is_absolute(), "FileStreamSink needs an absolute path");
    json!({
        "connector.class": FILE_SINK,
        "tasks.max": "1",
        "file": file.to_str().expect("UTF-8 path"),
        "topics": topic,
    })
}

/// `{prefix}-{i}` for each `i` in `range`: `numbered("line", 1..=3)` is line-1..line-3.
pub fn numbered(prefix: &str, range: impl IntoIterator<Item = usize>) -> Vec<String> {
    range.into_iter().map(|i| format!("{prefix}-{i}")).collect()
}

/// Writes `lines` to `path`, one per line, and returns the byte offset at which each
/// line starts (the FileStreamSource `position` that replays from that line).
pub fn write_lines(path: &Path, lines: &[String]) -> Vec<u64> {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines {
        starts.push(text.len() as u64);
        text.push_str(line);
        text.push('\n');
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    starts
}

/// Appends `lines` to `path` (created if missing), one per line.
pub fn append_lines(path: &Path, lines: &[String]) {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    file.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("append to {}: {e}", path.display()));
}

/// The FileStreamSource position recorded for `file`, if any.
pub fn source_position(offsets: &[Value], file: &Path) -> Option<i64> {
    let file = file.to_str()?;
    offsets
        .iter()
        .find(|o| o["partition"]["filename"] == file)
        .and_then(|o| o["offset"]["position"].as_i64())
}

/// The committed sink offset for partition 0 of `topic`, if any.
pub fn sink_offset(offsets: &[Value], topic: &str) -> Option<i64> {
    offsets
        .iter()
        .find(|o| o["partition"]["kafka_topic"] == topic && o["partition"]["kafka_partition"] == 0)
        .and_then(|o| o["offset"]["kafka_offset"].as_i64())
}

/// What reached a topic, read back through a FileStreamSink into a file. Deletes the
/// sink connector when dropped.
pub struct TopicReader {
    pub sink: ConnectorGuard,
    pub file: PathBuf,
}

impl TopicReader {
    /// Starts a sink connector on `connect` copying `topic` (from its beginning) to a file
    /// in `dir`, and waits until it runs.
    pub fn start(connect: &Connect, topic: &str, dir: &Path) -> TopicReader {
        let file = dir.join(format!("{topic}.out"));
        let name = unique_name("reader");
        let sink = connect.create(&name, file_sink_config(&file, topic));
        connect.wait_running(&name);
        TopicReader { sink, file }
    }

    /// The complete lines written so far (a trailing partial line is left out).
    pub fn lines(&self) -> Vec<String> {
        let text = fs::read_to_string(&self.file).unwrap_or_default();
        let complete = match text.rfind('\n') {
            Some(end) => &text[..end],
            None => return Vec::new(),
        };
        complete.split('\n').map(str::to_string).collect()
    }

    /// Waits until at least `n` lines arrived; returns all lines seen.
    pub fn wait_lines(&self, n: usize) -> Vec<String> {
        wait_for(
            &format!("{n} lines in {}", self.file.display()),
            WAIT,
            || {
                let lines = self.lines();
                if lines.len() >= n {
                    Ok(lines)
                } else {
                    Err(format!("{} lines: {lines:?}", lines.len()))
                }
            },
        )
    }

    /// Like [`TopicReader::wait_lines`], then waits 3 s more so that a line too many (a
    /// duplicate) would show; returns all lines seen by then.
    pub fn wait_lines_settled(&self, n: usize) -> Vec<String> {
        self.wait_lines(n);
        thread::sleep(Duration::from_secs(3));
        self.lines()
    }
}

// --- the kco binary and the test bed script ---------------------------------------

/// Runs the `kco` binary in `cwd` with a cleared environment (only PATH and HOME kept).
pub fn kco(args: &[&str], cwd: &Path) -> Output {
    kco_with_env(args, cwd, &[])
}

/// Like [`kco`], with extra environment variables.
pub fn kco_with_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kco"));
    cmd.args(args).current_dir(cwd).env_clear();
    for key in ["PATH", "HOME"] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.output()
        .unwrap_or_else(|e| panic!("run kco {args:?}: {e}"))
}

/// Asserts a process succeeded, showing its stdout and stderr otherwise; returns stdout.
pub fn assert_success(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The repository root (where `scripts/` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `scripts/local-connect.sh <args>` (e.g. `["restart-worker", "a2"]`), asserting
/// success. The script honours `KCO_TESTBED_DIR` and the port variables it inherits.
pub fn local_connect(args: &[&str]) -> String {
    let out = Command::new(repo_root().join("scripts/local-connect.sh"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run scripts/local-connect.sh {args:?}: {e}"));
    assert_success(
        &out,
        &format!("scripts/local-connect.sh {}", args.join(" ")),
    )
}

/// `major.minor.patch` of a Connect `version` such as "4.3.1", "3.7.0-SNAPSHOT" or
/// "7.6.0-ccs".
pub fn parse_version(version: &str) -> Option<(u32, u32, u32)> {
    let core = version.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}
