//! Ctrl-C during `kco apply`: the connector under way finishes its transaction and gets its
//! state back; connectors not yet started are skipped and get no request.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::support::data::{sink_offset as sink_offsets, SnapshotFile, SINK};
use crate::support::run::{wait_until, Kco};

fn write_file(dir: &Path, name: &str, offset: i64) {
    SnapshotFile::sink(name, sink_offsets(offset))
        .class(SINK)
        .write_in(dir);
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
    let mut child = Kco::new(dir.path())
        .on(&fake)
        .args(["apply", "files", "--yes", "--parallel", "1"])
        .spawn();
    wait_until("s1 to be stopped", || {
        fake.count("PUT", "/connectors/s1/stop") > 0
    });
    std::thread::sleep(Duration::from_millis(200));
    child.interrupt();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "kco did not exit after the interrupt"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.finish();
    let (stdout, stderr) = (&out.stdout, &out.stderr);
    assert_eq!(out.code, 1, "{stdout}{stderr}");
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
