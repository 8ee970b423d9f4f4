//! `kco diff` against the real test bed (cluster a, 127.0.0.1:8083): a FileStream source and
//! sink progress past their snapshot (advanced, exit 0; `--fail-on any`, exit 2), then offsets
//! are changed behind kco's back (drift, exit 2, with partition, direction and distance), a
//! connector is deleted (missing) and one is created without a file (untracked).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kco::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
use kco::model::{ConnectorState, ConnectorType, OffsetEntry};
use serde_json::{json, Value};

const URL: &str = "http://127.0.0.1:8083";

/// Raw HTTP to the test bed, outside kco.
struct Bed {
    http: reqwest::blocking::Client,
}

impl Bed {
    /// `None` (skip) when the test bed is not up, unless KCO_E2E=required.
    fn connect() -> Option<Bed> {
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let up = http.get(format!("{URL}/")).send().is_ok();
        if !up {
            assert!(
                std::env::var("KCO_E2E").as_deref() != Ok("required"),
                "test bed not reachable at {URL}"
            );
            eprintln!("skipped: no test bed at {URL}");
            return None;
        }
        Some(Bed { http })
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.http.request(m, format!("{URL}{path}"));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn create(&self, name: &str, config: Value) -> Guard<'_> {
        let (s, b) = self.call(
            "POST",
            "/connectors",
            Some(json!({"name": name, "config": config})),
        );
        assert_eq!(s, 201, "create {name}: {b}");
        Guard {
            bed: self,
            name: name.to_string(),
        }
    }

    fn offsets(&self, name: &str) -> Vec<OffsetEntry> {
        let (s, b) = self.call("GET", &format!("/connectors/{name}/offsets"), None);
        assert_eq!(s, 200, "{b}");
        serde_json::from_value(b["offsets"].clone()).unwrap()
    }

    fn state(&self, name: &str) -> (String, usize) {
        let (_, b) = self.call("GET", &format!("/connectors/{name}/status"), None);
        (
            b["connector"]["state"].as_str().unwrap_or("").to_string(),
            b["tasks"].as_array().map(Vec::len).unwrap_or(0),
        )
    }

    fn wait(&self, what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// Deletes its connector when dropped.
struct Guard<'a> {
    bed: &'a Bed,
    name: String,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let _ = self
            .bed
            .call("DELETE", &format!("/connectors/{}", self.name), None);
    }
}

fn kco(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kco"))
        .current_dir(dir)
        .args(["--url", URL, "--cluster", "e2e"])
        .args(args)
        .env_remove("KCO_CONFIG")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_diff(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["diff", "-o", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = kco(dir, &all);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, v)
}

fn connector<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {report}"))
}

/// Writes the connector's current offsets as its snapshot file.
fn snapshot(bed: &Bed, dir: &Path, name: &str, kind: ConnectorType, class: &str) -> PathBuf {
    let path = kco::engine::store::file_path(&dir.join("snapshots"), "e2e", name);
    let f = OffsetsFile::new(
        Metadata {
            name: name.into(),
            cluster: "e2e".into(),
            kafka_cluster_id: None,
            connect_version: None,
            connector_class: Some(class.into()),
            connector_type: kind,
            state: Some(ConnectorState::Running),
            captured_at: None,
        },
        bed.offsets(name),
        None,
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, f.render(DEFAULT_SCHEMA_REF)).unwrap();
    path
}

fn sink_offset(bed: &Bed, name: &str) -> Option<i64> {
    bed.offsets(name)
        .first()
        .and_then(|e| e.offset.get("kafka_offset").and_then(Value::as_i64))
}

fn position(bed: &Bed, name: &str) -> Option<i64> {
    bed.offsets(name)
        .first()
        .and_then(|e| e.offset.get("position").and_then(Value::as_i64))
}

#[test]
fn advanced_drift_missing_and_untracked_on_the_test_bed() {
    let Some(bed) = Bed::connect() else { return };
    let id = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
            % 1_000_000
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let input = dir.join("in.txt");
    std::fs::write(&input, "one\ntwo\nthree\nfour\nfive\n").unwrap();
    let topic = format!("kco-diff-{id}");
    let (src, snk) = (format!("kco-diff-src-{id}"), format!("kco-diff-snk-{id}"));
    const SRC: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
    const SNK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
    let _src_guard = bed.create(
        &src,
        json!({"connector.class": SRC, "file": input, "topic": topic, "tasks.max": "1"}),
    );
    let _snk_guard = bed.create(
        &snk,
        json!({"connector.class": SNK, "topics": topic, "file": dir.join("out.txt"), "tasks.max": "1"}),
    );
    bed.wait("the first five records", || {
        position(&bed, &src) == Some(24) && sink_offset(&bed, &snk) == Some(5)
    });
    let src_file = snapshot(&bed, dir, &src, ConnectorType::Source, SRC);
    let snk_file = snapshot(&bed, dir, &snk, ConnectorType::Sink, SNK);
    let files = [src_file.to_str().unwrap(), snk_file.to_str().unwrap()];

    let (code, r) = json_diff(dir, &files);
    assert_eq!(code, 0, "{r}");
    assert_eq!(connector(&r, &snk)["status"], "in_sync");

    // Progress: three more lines (16 bytes) flow through both connectors.
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    f.write_all(b"six\nseven\neight\n").unwrap();
    drop(f);
    bed.wait("three more records", || {
        position(&bed, &src) == Some(40) && sink_offset(&bed, &snk) == Some(8)
    });
    let (code, r) = json_diff(dir, &files);
    assert_eq!(code, 0, "advanced is not drift: {r}");
    let s = connector(&r, &snk);
    assert_eq!(s["status"], "advanced");
    let p = &s["partitions"][0];
    assert_eq!(
        p["partition"],
        json!({"kafka_topic": topic, "kafka_partition": 0})
    );
    assert_eq!(
        (
            &p["kind"],
            &p["direction"],
            &p["distance"],
            &p["unit"],
            &p["class"]
        ),
        (
            &json!("moved"),
            &json!("forward"),
            &json!(3),
            &json!("records"),
            &json!("advanced")
        )
    );
    let s = connector(&r, &src);
    assert_eq!(s["status"], "advanced");
    assert_eq!(s["partitions"][0]["distance"], 16);
    assert_eq!(s["partitions"][0]["unit"], "bytes");
    let (code, out, _) = kco(dir, &["diff", files[0], files[1]]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("{topic}/0: live ahead of file by 3 records")),
        "{out}"
    );
    assert!(out.contains("[ADVANCED]"), "{out}");

    let (code, r) = json_diff(dir, &[files[0], files[1], "--fail-on", "any"]);
    assert_eq!(code, 2, "{r}");
    assert_eq!(r["summary"]["differences"], 2);

    // Behind kco's back: stop the sink and rewind it to 2 (the file says 5).
    let (s, b) = bed.call("PUT", &format!("/connectors/{snk}/stop"), None);
    assert!(s < 300, "{b}");
    bed.wait("the sink to stop", || {
        bed.state(&snk) == ("STOPPED".into(), 0)
    });
    let patch = json!({"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                                     "offset": {"kafka_offset": 2}}]});
    let start = Instant::now();
    loop {
        let (s, b) = bed.call(
            "PATCH",
            &format!("/connectors/{snk}/offsets"),
            Some(patch.clone()),
        );
        if s == 200 {
            break;
        }
        // Zombie group members right after the stop: "can be safely retried".
        assert!(start.elapsed() < Duration::from_secs(60), "PATCH: {s} {b}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let (code, r) = json_diff(dir, &files);
    assert_eq!(code, 2, "{r}");
    let s = connector(&r, &snk);
    assert_eq!(s["status"], "drifted");
    assert_eq!(s["state"], "STOPPED");
    let p = &s["partitions"][0];
    assert_eq!(p["file_offset"], json!({"kafka_offset": 5}));
    assert_eq!(p["live_offset"], json!({"kafka_offset": 2}));
    assert_eq!(
        (&p["direction"], &p["distance"], &p["class"]),
        (&json!("backward"), &json!(3), &json!("drift"))
    );
    let (code, out, _) = kco(dir, &["diff", files[0], files[1]]);
    assert_eq!(code, 2);
    assert!(
        out.contains(&format!("{topic}/0: live behind file by 3 records")),
        "{out}"
    );

    // A connector deleted on the cluster, one created without a file.
    drop(_src_guard);
    let extra = format!("kco-diff-extra-{id}");
    let _extra_guard = bed.create(
        &extra,
        json!({"connector.class": SNK, "topics": topic, "file": dir.join("extra.txt")}),
    );
    let (code, r) = json_diff(dir, &[]);
    assert_eq!(code, 2, "{r}");
    assert_eq!(connector(&r, &src)["status"], "missing");
    assert_eq!(connector(&r, &extra)["status"], "untracked");
    assert_eq!(connector(&r, &snk)["status"], "drifted");

    // Never a mutating request from diff: the sink is still stopped at 2.
    assert_eq!(bed.state(&snk).0, "STOPPED");
    assert_eq!(sink_offset(&bed, &snk), Some(2));
}
