//! Ctrl-C during `kco apply`: the connector under way finishes its transaction and gets its
//! state back; connectors not yet started are skipped and get no request.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::sink_files::{sink_offsets, write_sink_file, SINK};

fn write_file(dir: &Path, name: &str, offset: i64) {
    write_sink_file(dir, name, offset, None);
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_finishes_the_connector_under_way_and_skips_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    write_file(&files, "s1", 5);
    write_file(&files, "s2", 5);
    let fake = FakeConnect::builder()
        .sink("s1", SINK, State::Running, sink_offsets(100))
        .sink("s2", SINK, State::Running, sink_offsets(100))
        .fault(Fault::on("PATCH", "/connectors/s1/offsets").delay_ms(1500))
        .start();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("kco"))
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("NO_COLOR", "1")
        .args(["--url", &fake.url(), "--cluster", "a", "apply", "files"])
        .args(["--yes", "--parallel", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("s1 to be stopped", || {
        fake.count("PUT", "/connectors/s1/stop") > 0
    });
    std::thread::sleep(Duration::from_millis(200));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "kco did not exit after the interrupt"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    // The connector under way finished: patched, verified, running again.
    assert_eq!(fake.offsets("s1"), sink_offsets(5));
    assert_eq!(fake.state("s1"), Some(State::Running));
    // The other was never touched.
    let touched: Vec<String> = fake
        .mutating_requests()
        .iter()
        .filter(|r| r.path.contains("/s2"))
        .map(|r| r.to_string())
        .collect();
    assert!(touched.is_empty(), "{touched:?}");
    assert_eq!(fake.offsets("s2"), sink_offsets(100));
    assert_eq!(fake.state("s2"), Some(State::Running));
    assert!(
        stdout.contains("skipped s2: interrupted before it started"),
        "{stdout}"
    );
}
