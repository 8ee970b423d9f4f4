//! `kill -9` of kco during a snapshot of many connectors: every file is the old one or the new
//! one, never a partial one (writes are atomic: temp files, one flush, renames).

use std::time::Duration;

use serde_json::{json, Value};

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::SOURCE as SRC;
use crate::support::run::{Kco, Running};

fn offsets(n: usize, pos: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"partition": {"filename": format!("/data/file-{i:04}.txt")}, "offset": {"position": pos}}))
            .collect(),
    )
}

/// `kco snapshot --parallel 8` of the fake, started and left running.
fn snapshot(dir: &std::path::Path, fake: &FakeConnect) -> Running {
    Kco::new(dir)
        .on(fake)
        .args(["snapshot", "--parallel", "8"])
        .discard_output()
        .spawn()
}

#[test]
fn sigkill_during_a_snapshot_leaves_every_file_old_or_new() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..80).map(|i| format!("c{i:03}")).collect();
    let mut b = FakeConnect::builder();
    for n in &names {
        b = b.source(n, SRC, State::Running, offsets(200, 1));
    }
    let fake = b.start();
    let started = std::time::Instant::now();
    let first = snapshot(dir.path(), &fake);
    assert!(first.wait().status.success());
    // Kills spread over the time a whole snapshot takes here (reads, then writes).
    let whole = started.elapsed().as_millis() as u64;
    let path = |n: &str| dir.path().join(format!("snapshots/a/{n}.yaml"));
    let old: Vec<String> = names
        .iter()
        .map(|n| std::fs::read_to_string(path(n)).unwrap())
        .collect();
    let mut saw_new = 0;
    let mut saw_old = 0;
    // Kills at points of the reads and writes, then (`None`) as soon as the first file is
    // put in place: the renames come last, after one flush, and a kill among them leaves
    // some files new and the others old.
    let kill_points = [10u64, 40, 60, 75, 85, 90, 95, 98]
        .map(Some)
        .into_iter()
        .chain([None, None]);
    for (round, percent) in kill_points.enumerate() {
        // New offsets, so that a finished write differs from the old file.
        for n in &names {
            fake.set_offsets(n, offsets(200, round + 2));
        }
        let before: Vec<String> = names
            .iter()
            .map(|n| std::fs::read_to_string(path(n)).unwrap())
            .collect();
        let inodes = || -> Vec<u64> {
            use std::os::unix::fs::MetadataExt;
            names
                .iter()
                .map(|n| std::fs::metadata(path(n)).map_or(0, |m| m.ino()))
                .collect()
        };
        let placed = inodes();
        let child = snapshot(dir.path(), &fake);
        match percent {
            Some(percent) => std::thread::sleep(Duration::from_millis(whole * percent / 100)),
            None => {
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                while inodes() == placed && std::time::Instant::now() < deadline {}
            }
        }
        child.kill9();
        for (i, n) in names.iter().enumerate() {
            let text = std::fs::read_to_string(path(n)).unwrap();
            let file = kco::model::file::OffsetsFile::parse(&path(n), &text)
                .unwrap_or_else(|p| panic!("round {round}: {n} is not a valid file: {p}"));
            assert!(file.check(&path(n), &text).is_empty(), "round {round}: {n}");
            let pos = file.offsets[0].offset["position"].as_u64().unwrap();
            if text == before[i] {
                saw_old += 1;
            } else {
                assert_eq!(
                    pos,
                    round as u64 + 2,
                    "round {round}: {n} is neither old nor new"
                );
                saw_new += 1;
            }
        }
        let r = Kco::new(dir.path()).args(["validate", "snapshots/a"]).run();
        assert_eq!(r.code, 0, "round {round}: {}", r.all());
    }
    assert!(
        saw_old > 0 && saw_new > 0,
        "the kills hit before and during the writes: old {saw_old}, new {saw_new}"
    );
    assert_ne!(old[0], "");
}
