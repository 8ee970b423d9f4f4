//! The bad-input corpus: every file under `tests/corpus/files/` (snapshot files) and
//! `tests/corpus/config/` (kco.yaml), plus cases made at test time (a 50 MB file, a symbolic
//! link loop, a file rewritten while kco reads it). Each is a clear error naming the file (and
//! its line, where the file has lines), exit 1, and not one request to Connect.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::SINK;
use crate::support::env::TestEnv;

/// Cases whose problem has no line to point at (the error names the file).
const NO_LINE: &[&str] = &["two-documents.yaml", "yaml-bomb-in-offset.yaml"];

fn corpus(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn fake() -> FakeConnect {
    FakeConnect::builder()
        .sink("c", SINK, State::Running, serde_json::json!([]))
        .sink(
            "demo-file-sink",
            SINK,
            State::Running,
            serde_json::json!([]),
        )
        .start()
}

/// `apply` and `diff` of `target` (in `dir`) fail with exit 1, naming `name` (with a line
/// unless `line` is false), and send nothing.
fn refused(dir: &Path, fake: &FakeConnect, target: &str, name: &str, line: bool) {
    let url = fake.url();
    for cmd in [
        vec!["--url", &url, "--cluster", "a", "apply", target, "--yes"],
        vec!["--url", &url, "--cluster", "a", "diff", target],
    ] {
        let r = TestEnv::at(dir).kco(&cmd);
        assert_eq!(r.code, 1, "{name}: {cmd:?}\n{r}");
        assert!(r.all().contains(name), "{name}: the file is named\n{r}");
        if line {
            let pattern = format!("{name}:");
            let has_line = r.all().match_indices(&pattern).any(|(i, _)| {
                r.all()[i + pattern.len()..].starts_with(|c: char| c.is_ascii_digit())
            });
            assert!(has_line, "{name}: a line is named\n{r}");
        }
        assert!(!r.all().contains("panicked"), "{r}");
    }
    assert!(fake.requests().is_empty(), "{name}: {:?}", fake.requests());
}

#[test]
fn every_bad_snapshot_file_is_a_clear_error_with_no_request() {
    let files = corpus("files");
    assert!(files.len() >= 60, "{}", files.len());
    let fake = fake();
    let dir = TestEnv::new();
    let snaps = dir.path().join("snapshots/a");
    std::fs::create_dir_all(&snaps).unwrap();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        std::fs::copy(f, snaps.join(name)).unwrap();
        let target = format!("snapshots/a/{name}");
        refused(dir.path(), &fake, &target, name, !NO_LINE.contains(&name));
        std::fs::remove_file(snaps.join(name)).unwrap();
    }
}

#[test]
fn every_bad_config_is_a_clear_error_with_no_request() {
    let files = corpus("config");
    let fake = fake();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let dir = TestEnv::new();
        let text = std::fs::read_to_string(f)
            .unwrap()
            .replace("{URL}", &fake.url());
        dir.config(text);
        for cmd in [["--cluster", "a", "snapshot"], ["--cluster", "a", "diff"]] {
            let r = dir.kco(&cmd);
            assert_eq!(r.code, 1, "{name}: {cmd:?}\n{r}");
            assert!(r.all().contains("kco.yaml"), "{name}: names the file\n{r}");
            assert!(!r.all().contains("panicked"), "{r}");
        }
        assert!(fake.requests().is_empty(), "{name}: {:?}", fake.requests());
    }
}

#[test]
fn a_50_mb_file_a_symlink_loop_and_a_file_rewritten_while_read() {
    let fake = fake();
    let dir = TestEnv::new();
    let snaps = dir.path().join("snapshots/a");
    std::fs::create_dir_all(&snaps).unwrap();

    // 50 MB: a valid start, then a broken last line.
    let mut big = String::from("apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: c\n  cluster: a\n  type: source\noffsets:\n");
    let mut i = 0;
    while big.len() < 50 * 1024 * 1024 {
        big.push_str(&format!(
            "- partition: {{filename: /data/{i:09}.txt}}\n  offset: {{position: {i}}}\n"
        ));
        i += 1;
    }
    big.push_str("- partition: {filename: [unclosed\n");
    std::fs::write(snaps.join("big.yaml"), &big).unwrap();
    let lines = big.lines().count();
    drop(big);
    let started = std::time::Instant::now();
    let url = fake.url();
    let target = "snapshots/a/big.yaml";
    let r = dir.kco(&["--url", &url, "--cluster", "a", "apply", target, "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    let at: usize = r
        .all()
        .split("big.yaml:")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line: {r}"));
    assert!(
        at + 5 > lines,
        "the error is at the end ({lines} lines): {r}"
    );
    assert!(fake.requests().is_empty());
    eprintln!("50 MB file refused in {:?}", started.elapsed());
    std::fs::remove_file(snaps.join("big.yaml")).unwrap();

    // A symbolic link loop inside the snapshots directory.
    std::fs::copy(
        corpus("files")[0]
            .parent()
            .unwrap()
            .join("../../../snapshots/a/demo-file-sink.yaml"),
        snaps.join("ok.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink("..", snaps.join("loop")).unwrap();
    refused(
        dir.path(),
        &fake,
        "snapshots/a",
        "symbolic link loop",
        false,
    );
    std::fs::remove_file(snaps.join("loop")).unwrap();
    std::fs::remove_file(snaps.join("ok.yaml")).unwrap();

    // A file rewritten (in place, not atomically) while kco reads it: whatever kco reads is
    // one of two broken versions, each refused.
    let path = snaps.join("moving.yaml");
    let good = std::fs::read_to_string(
        corpus("files")[0]
            .parent()
            .unwrap()
            .join("../../../snapshots/a/demo-file-sink.yaml"),
    )
    .unwrap();
    let a = good.replace("kafka_offset: 100", "kafka_offset: 101");
    let b = good.replace("  type: sink\n", "  type: sink\n  tipe: x\n");
    std::fs::write(&path, &a).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let text = if n.is_multiple_of(2) { &a } else { &b };
                let _ = std::fs::write(&path, text);
                n += 1;
            }
        })
    };
    for _ in 0..5 {
        refused(
            dir.path(),
            &fake,
            "snapshots/a/moving.yaml",
            "moving.yaml",
            false,
        );
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
}
