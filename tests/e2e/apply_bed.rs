//! What the apply end-to-end tests need from the test bed: reachability, raw REST calls,
//! unique names, connectors deleted on drop, a topic reader, snapshot files built from live
//! state, and the `kco` binary. (Small on purpose; the shared harness can replace it.)

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use kco::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{ConnectorState, ConnectorType, OffsetEntry};

pub const A: &str = "http://127.0.0.1:8083";
pub const A2: &str = "http://127.0.0.1:8084";
pub const B: &str = "http://127.0.0.1:8085";
pub const FILE_SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
pub const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// Whether to run: the test bed answers, or `KCO_E2E=required` (then it must).
pub fn up() -> bool {
    let reachable = [A, B]
        .iter()
        .all(|u| try_call("GET", &format!("{u}/"), None).is_ok());
    if std::env::var("KCO_E2E").as_deref() == Ok("required") {
        assert!(reachable, "KCO_E2E=required but the test bed is not up");
    } else if !reachable {
        eprintln!("skipped: the test bed is not up (scripts/local-connect.sh up)");
    }
    reachable
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap()
}

fn try_call(method: &str, url: &str, body: Option<Value>) -> Result<(u16, Value), String> {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = client().request(m, url);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let text = resp.text().unwrap_or_default();
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// One REST call; retries a 409 (rebalance), and a 5xx on a GET, for a while.
pub fn call(method: &str, url: &str, body: Option<Value>) -> (u16, Value) {
    let start = Instant::now();
    loop {
        let got = try_call(method, url, body.clone()).unwrap();
        let again = got.0 == 409 || (method == "GET" && got.0 >= 500);
        if !again || start.elapsed() > Duration::from_secs(60) {
            return got;
        }
        eprintln!("{method} {url}: {} {}; retrying", got.0, got.1);
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A name no other test run uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        % 100_000_000;
    format!(
        "kco-e2e-{prefix}-{}-{t}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A connector that is deleted when dropped.
pub struct Connector {
    pub url: &'static str,
    pub name: String,
}

impl Drop for Connector {
    fn drop(&mut self) {
        let _ = try_call(
            "DELETE",
            &format!("{}/connectors/{}", self.url, self.name),
            None,
        );
    }
}

impl Connector {
    pub fn create(url: &'static str, name: &str, config: Value, initial: Option<&str>) -> Self {
        let mut body = json!({"name": name, "config": config});
        if let Some(s) = initial {
            body["initial_state"] = json!(s);
        }
        let (st, v) = call("POST", &format!("{url}/connectors"), Some(body));
        assert_eq!(st, 201, "create {name}: {v}");
        Connector {
            url,
            name: name.into(),
        }
    }

    /// Takes over the cleanup of a connector something else created.
    pub fn adopt(url: &'static str, name: &str) -> Self {
        Connector {
            url,
            name: name.into(),
        }
    }

    pub fn path(&self, rest: &str) -> String {
        format!("{}/connectors/{}{rest}", self.url, self.name)
    }

    pub fn status(&self) -> Value {
        call("GET", &self.path("/status"), None).1
    }

    /// `RUNNING`, `PAUSED`, `STOPPED`...
    pub fn state(&self) -> String {
        self.status()["connector"]["state"]
            .as_str()
            .unwrap_or("?")
            .into()
    }

    pub fn offsets(&self) -> Vec<OffsetEntry> {
        let (st, v) = call("GET", &self.path("/offsets"), None);
        assert_eq!(st, 200, "{v}");
        serde_json::from_value(v["offsets"].clone()).unwrap()
    }

    pub fn put(&self, what: &str) {
        let (st, v) = call("PUT", &self.path(&format!("/{what}")), None);
        assert!(st < 300, "{what} {}: {st} {v}", self.name);
    }

    /// Waits until the connector is in `state` with every task in it (STOPPED: no tasks).
    pub fn wait_state(&self, state: &str) {
        let start = Instant::now();
        loop {
            let s = self.status();
            let tasks = s["tasks"].as_array().cloned().unwrap_or_default();
            let reached = s["connector"]["state"] == state
                && if state == "STOPPED" {
                    tasks.is_empty()
                } else {
                    tasks.iter().all(|t| t["state"] == state)
                };
            if reached {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "timed out waiting for {} to be {state}; last status: {s}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    pub fn stop(&self) {
        self.put("stop");
        self.wait_state("STOPPED");
    }

    pub fn patch(&self, offsets: Value) {
        let (st, v) = call(
            "PATCH",
            &self.path("/offsets"),
            Some(json!({"offsets": offsets})),
        );
        assert_eq!(st, 200, "{v}");
    }
}

/// Polls `f` every 250 ms for up to 90 s.
pub fn wait(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A FileStreamSource reading `file` into `topic`.
pub fn file_source(file: &Path, topic: &str) -> Value {
    json!({"connector.class": FILE_SOURCE, "file": file, "topic": topic, "tasks.max": "1"})
}

/// Reads a topic from the start into a file, with a FileStreamSink on cluster a.
pub struct TopicReader {
    _sink: Connector,
    out: PathBuf,
}

impl TopicReader {
    pub fn new(dir: &Path, topic: &str) -> Self {
        let out = dir.join(format!("{topic}.out"));
        let sink = Connector::create(
            A,
            &unique("reader"),
            json!({"connector.class": FILE_SINK, "file": out, "topics": topic, "tasks.max": "1",
                   "consumer.override.auto.offset.reset": "earliest"}),
            None,
        );
        TopicReader { _sink: sink, out }
    }

    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Waits for at least `n` lines, then a few seconds more (so that a duplicate would show).
    pub fn wait_lines(&self, n: usize) -> Vec<String> {
        wait(&format!("{n} lines in {}", self.out.display()), || {
            self.lines().len() >= n
        });
        std::thread::sleep(Duration::from_secs(3));
        self.lines()
    }
}

/// `line-<from>` .. `line-<to>` (inclusive), newline-terminated, appended to `file`.
pub fn append_lines(file: &Path, from: usize, to: usize) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    for i in from..=to {
        writeln!(f, "line-{i}").unwrap();
    }
}

pub fn expected_lines(from: usize, to: usize) -> Vec<String> {
    (from..=to).map(|i| format!("line-{i}")).collect()
}

/// A snapshot file of `c` as it is now (offsets, state and, with `with_config`, its config)
/// written to `<dir>/<cluster>/<name>.yaml`.
pub fn snapshot(c: &Connector, cluster: &str, dir: &Path, with_config: bool) -> PathBuf {
    let status = c.status();
    let kind = match status["type"].as_str() {
        Some("sink") => ConnectorType::Sink,
        _ => ConnectorType::Source,
    };
    let config = with_config.then(|| {
        let v = call("GET", &c.path("/config"), None).1;
        serde_json::from_value(v).unwrap()
    });
    let file = OffsetsFile::new(
        Metadata {
            name: c.name.clone(),
            cluster: cluster.into(),
            kafka_cluster_id: None,
            connect_version: None,
            connector_class: None,
            connector_type: kind,
            state: status["connector"]["state"]
                .as_str()
                .and_then(ConnectorState::parse),
            captured_at: None,
        },
        c.offsets(),
        config,
    );
    let path = kco::engine::store::file_path(dir, cluster, &c.name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, file.render(DEFAULT_SCHEMA_REF)).unwrap();
    path
}

/// Runs `kco <args>` in `cwd` (stdin not a terminal).
pub fn kco(cwd: &Path, args: &[&str]) -> Output {
    kco_env(cwd, args, &[])
}

/// [`kco`] with extra environment variables.
pub fn kco_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kco"))
        .current_dir(cwd)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .env_remove("KCO_URL")
        .env_remove("KCO_CLUSTER")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    eprintln!(
        "$ kco {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A kco.yaml with clusters a (both workers) and b.
pub fn write_config(dir: &Path) {
    std::fs::write(
        dir.join("kco.yaml"),
        format!("clusters:\n  a:\n    urls: [{A}, {A2}]\n  b:\n    urls: [{B}]\n"),
    )
    .unwrap();
}
