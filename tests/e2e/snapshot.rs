//! `kco snapshot` against the real test bed (cluster a on 127.0.0.1:8083/8084): a
//! FileStreamSource and a FileStreamSink with real progress.
//!
//! Skipped when the test bed is not up, unless `KCO_E2E=required`.

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{json, Value};

const A: &str = "http://127.0.0.1:8083";

/// Whether to run: the test bed answers, or `KCO_E2E=required` (then it must answer).
fn testbed_up() -> bool {
    let up = http()
        .get(format!("{A}/connectors"))
        .send()
        .is_ok_and(|r| r.status().is_success());
    if !up && std::env::var("KCO_E2E").as_deref() == Ok("required") {
        panic!("KCO_E2E=required but the test bed does not answer at {A}");
    }
    up
}

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

fn call(method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut req = http().request(method.clone(), format!("{A}{path}"));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().unwrap();
    let status = resp.status();
    let text = resp.text().unwrap();
    assert!(status.is_success(), "{method} {path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A connector that is deleted when dropped.
struct Guard(String);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = http().delete(format!("{A}/connectors/{}", self.0)).send();
    }
}

fn create(name: &str, config: Value) -> Guard {
    call(
        reqwest::Method::POST,
        "/connectors",
        Some(json!({"name": name, "config": config})),
    );
    Guard(name.to_string())
}

fn offsets(name: &str) -> Value {
    call(
        reqwest::Method::GET,
        &format!("/connectors/{name}/offsets"),
        None,
    )["offsets"]
        .clone()
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn sorted(offsets: &Value) -> Value {
    let mut e: Vec<kco::model::OffsetEntry> = serde_json::from_value(offsets.clone()).unwrap();
    kco::model::sort_entries(&mut e);
    serde_json::to_value(e).unwrap()
}

fn kco(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("kco")
        .unwrap()
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["--url", A, "--cluster", "a"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn snapshot_of_real_source_and_sink_matches_get_offsets_and_is_idempotent() {
    if !testbed_up() {
        eprintln!("skipped: the test bed is not up at {A}");
        return;
    }
    let id = format!(
        "{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    );
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("in.txt");
    let output = work.path().join("out.txt");
    let lines: String = (0..50).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&input, &lines).unwrap();
    let topic = format!("kco-e2e-snap-{id}");
    let src = format!("kco-e2e-snap-src-{id}");
    let sink = format!("kco-e2e-snap-sink-{id}");
    let _g1 = create(
        &src,
        json!({"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
               "tasks.max": "1", "file": input.to_str().unwrap(), "topic": topic}),
    );
    let _g2 = create(
        &sink,
        json!({"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
               "tasks.max": "1", "file": output.to_str().unwrap(), "topics": topic}),
    );
    let total = lines.len() as u64;
    wait_until("the source offset to reach the end of the file", || {
        offsets(&src)[0]["offset"]["position"].as_u64() == Some(total)
    });
    wait_until("the sink to commit every record", || {
        offsets(&sink)[0]["offset"]["kafka_offset"].as_u64() == Some(50)
    });
    for name in [&src, &sink] {
        call(
            reqwest::Method::PUT,
            &format!("/connectors/{name}/stop"),
            None,
        );
    }
    wait_until("both connectors to stop", || {
        [&src, &sink].iter().all(|n| {
            let s = call(
                reqwest::Method::GET,
                &format!("/connectors/{n}/status"),
                None,
            );
            s["connector"]["state"] == "STOPPED" && s["tasks"].as_array().is_some_and(Vec::is_empty)
        })
    });

    let dir = tempfile::tempdir().unwrap();
    let glob = format!("kco-e2e-snap-*-{id}");
    let (code, stdout, stderr) = kco(dir.path(), &["snapshot", &glob]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let mut before = Vec::new();
    for name in [&src, &sink] {
        let path = dir.path().join(format!("snapshots/a/{name}.yaml"));
        let (file, text) = kco::model::file::OffsetsFile::load(&path).unwrap();
        assert!(file.check(&path, &text).is_empty());
        assert_eq!(
            serde_json::to_value(&file.offsets).unwrap(),
            sorted(&offsets(name)),
            "{name}"
        );
        assert_eq!(
            file.metadata.state,
            Some(kco::model::ConnectorState::Stopped)
        );
        assert!(file.metadata.kafka_cluster_id.is_some());
        before.push(std::fs::read(&path).unwrap());
    }
    let (code, stdout, stderr) = kco(dir.path(), &["snapshot", &glob]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout.matches("unchanged").count(), 2, "{stdout}");
    for (name, b) in [&src, &sink].iter().zip(&before) {
        let path = dir.path().join(format!("snapshots/a/{name}.yaml"));
        assert_eq!(&std::fs::read(&path).unwrap(), b, "{name} changed");
    }
    let (code, stdout, _) = kco(dir.path(), &["validate"]);
    assert_eq!(code, 0, "{stdout}");
}
