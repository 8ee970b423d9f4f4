//! `kco merge-file`, git's merge driver for snapshot files: registered in a real repository
//! and run by `git merge` between a pull request's deliberate rewind and a nightly snapshot;
//! and files that still hold conflict markers, reported as such.

use std::path::Path;

use kco::model::file::OffsetsFile;
use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{sink_offsets, SINK};
use crate::support::git::{git, git_may_fail};
use crate::support::run::Kco;

const FILE: &str = "snapshots/a/orders-sink.yaml";

/// The offsets of `FILE` in `repo`, by partition, as kco's model reads them.
fn offsets(repo: &Path) -> Vec<(i64, i64)> {
    let (file, _) = OffsetsFile::load(&repo.join(FILE)).unwrap();
    file.offsets
        .iter()
        .map(|e| {
            let n = |v: Option<&Value>| v.and_then(Value::as_i64).unwrap();
            (
                n(e.partition.get("kafka_partition")),
                n(e.offset.get("kafka_offset")),
            )
        })
        .collect()
}

/// A repository where `main` took last night's snapshot (900 on three partitions), a branch
/// `pr` rewound partition 0 to 800 by hand (`kco fmt`), and `main` then took tonight's
/// snapshot (every partition advanced). `HEAD` is `pr`.
fn pr_and_nightly() -> tempfile::TempDir {
    let fake = FakeConnect::builder()
        .sink(
            "orders-sink",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 900), (1, 900), (2, 900)]),
        )
        .start();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let snapshot = |now: &str| {
        let r = Kco::new(repo)
            .on(&fake)
            .env("KCO_NOW", now)
            .arg("snapshot")
            .run();
        assert_eq!(r.code, 0, "{}", r.all());
    };
    git(repo, &["init", "-q", "-b", "main"]);
    snapshot("2026-12-01T02:00:00Z");
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "nightly"]);
    git(repo, &["checkout", "-q", "-b", "pr"]);
    let path = repo.join(FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("kafka_offset: 900", "kafka_offset: 800", 1);
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    let r = Kco::new(repo).args(["fmt", FILE]).run();
    assert_eq!(r.code, 0, "{}", r.all());
    git(repo, &["commit", "-q", "-am", "rewind orders/0"]);
    git(repo, &["checkout", "-q", "main"]);
    fake.set_offsets(
        "orders-sink",
        sink_offsets("orders", &[(0, 1000), (1, 1003), (2, 1006)]),
    );
    snapshot("2026-12-02T02:00:00Z");
    git(repo, &["commit", "-q", "-am", "nightly"]);
    git(repo, &["checkout", "-q", "pr"]);
    fake.assert_no_mutations();
    dir
}

#[test]
fn git_merge_with_the_driver_keeps_the_rewind_and_takes_the_nightly_advance() {
    let dir = pr_and_nightly();
    let repo = dir.path();
    assert_eq!(offsets(repo), [(0, 800), (1, 900), (2, 900)]);

    // Without the driver, git's line merge conflicts.
    let (merged, out) = git_may_fail(repo, &["merge", "--no-edit", "main"]);
    assert!(!merged, "{out}");
    assert!(
        out.contains(&format!("CONFLICT (content): Merge conflict in {FILE}")),
        "{out}"
    );
    let r = Kco::new(repo).args(["validate", FILE]).run();
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.all().contains("unresolved merge conflict"), "{}", r.all());
    git(repo, &["merge", "--abort"]);

    // Registered as the docs say, the driver merges partition by partition.
    register_driver(repo);
    let (merged, out) = git_may_fail(repo, &["merge", "--no-edit", "main"]);
    assert!(merged, "{out}");
    // The PR's rewind of partition 0; the nightly's advance of the others.
    assert_eq!(offsets(repo), [(0, 800), (1, 1003), (2, 1006)]);
    assert!(
        out.contains(&format!(
            "{FILE}: orders/0: kept our change to {{\"kafka_offset\":800}} over the snapshot's {{\"kafka_offset\":1000}} (captured 2026-12-02T02:00:00Z)"
        )),
        "{out}"
    );
    let r = Kco::new(repo).args(["validate", FILE]).run();
    assert_eq!(r.code, 0, "{}", r.all());
    let text = std::fs::read_to_string(repo.join(FILE)).unwrap();
    assert!(
        text.contains("capturedAt: \"2026-12-02T02:00:00Z\""),
        "{text}"
    );
    let r = Kco::new(repo).args(["fmt", "--check", FILE]).run();
    assert_eq!(r.code, 0, "canonical and sealed: {}", r.all());
}

#[test]
fn two_changes_by_hand_of_one_partition_are_left_between_markers_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = crate::support::data::SnapshotFile::sink(
        "orders-sink",
        sink_offsets("orders", &[(0, 900), (1, 900)]),
    )
    .text();
    let edit = |from: &str, to: &str, name: &str| {
        std::fs::write(d.join(name), base.replacen(from, to, 1)).unwrap();
        let r = Kco::new(d).args(["fmt", name]).run();
        assert_eq!(r.code, 0, "{}", r.all());
    };
    std::fs::write(d.join("base.yaml"), &base).unwrap();
    edit("kafka_offset: 900", "kafka_offset: 800", "ours.yaml");
    edit("kafka_offset: 900", "kafka_offset: 700", "theirs.yaml");
    // kco.yaml in the middle of the same merge: the driver does not read it.
    std::fs::write(
        d.join("kco.yaml"),
        "<<<<<<< ours\nclusters: {}\n=======\n>>>>>>> theirs\n",
    )
    .unwrap();
    let r = Kco::new(d)
        .args(["merge-file", "base.yaml", "ours.yaml", "theirs.yaml"])
        .args(["--path", FILE])
        .run();
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(&format!(
            "error: {FILE}: both sides changed orders/0 by hand, differently (left between conflict markers)"
        )),
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(d.join("ours.yaml")).unwrap();
    assert!(
        text.contains(
            "<<<<<<< ours\n    kafka_offset: 800\n=======\n    kafka_offset: 700\n>>>>>>> theirs\n"
        ),
        "{text}"
    );
    std::fs::remove_file(d.join("kco.yaml")).unwrap();
    let r = Kco::new(d).args(["validate", "ours.yaml"]).run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains(
            "ours.yaml:14: unresolved merge conflict: conflict markers on lines 14, 16, 18"
        ),
        "{}",
        r.all()
    );
    // Resolved as the hint says: one side kept, re-sealed with `kco fmt`.
    let resolved = text.replace(
        "<<<<<<< ours\n    kafka_offset: 800\n=======\n    kafka_offset: 700\n>>>>>>> theirs\n",
        "    kafka_offset: 700\n",
    );
    std::fs::write(d.join("ours.yaml"), resolved).unwrap();
    let r = Kco::new(d).args(["fmt", "ours.yaml"]).run();
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("checksum re-sealed"), "{}", r.all());
    let r = Kco::new(d).args(["validate", "ours.yaml"]).run();
    assert_eq!(r.code, 0, "{}", r.all());
}

#[test]
fn a_file_with_conflict_markers_is_an_unresolved_merge_in_every_command_that_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = crate::support::data::SnapshotFile::sink(
        "orders-sink",
        sink_offsets("orders", &[(0, 900)]),
    )
    .text()
    .replace(
        "    kafka_offset: 900\n",
        "<<<<<<< HEAD\n    kafka_offset: 800\n=======\n    kafka_offset: 1000\n>>>>>>> main\n",
    );
    std::fs::create_dir_all(d.join("snapshots/a")).unwrap();
    std::fs::write(d.join(FILE), &text).unwrap();
    let line = text.lines().position(|l| l.starts_with("<<<<<<<")).unwrap() + 1;
    let expected = format!(
        "{FILE}:{line}: unresolved merge conflict: conflict markers on lines {line}, {}, {}",
        line + 2,
        line + 4
    );
    for args in [
        &["validate"][..],
        &["fmt", FILE],
        &["diff", "--url", "http://127.0.0.1:9", FILE],
        &["apply", "--url", "http://127.0.0.1:9", FILE, "--dry-run"],
    ] {
        let r = Kco::new(d).args(args).run();
        assert_eq!(r.code, 1, "{args:?}: {}", r.all());
        assert!(r.all().contains(&expected), "{args:?}: {}", r.all());
        assert!(!r.all().contains("not valid YAML"), "{args:?}: {}", r.all());
        if args[0] != "fmt" {
            assert!(
                r.stderr.contains("hint:") && r.stderr.contains("kco merge-file"),
                "{args:?}: {}",
                r.stderr
            );
        }
    }
    assert_eq!(std::fs::read_to_string(d.join(FILE)).unwrap(), text);
}

/// Registers kco's merge driver in `repo`, as docs/merge.md says.
fn register_driver(repo: &Path) {
    std::fs::write(
        repo.join(".gitattributes"),
        "snapshots/**/*.yaml merge=kco\n",
    )
    .unwrap();
    git(repo, &["config", "merge.kco.name", "kco snapshot files"]);
    let driver = format!(
        "{} merge-file %O %A %B --path %P",
        env!("CARGO_BIN_EXE_kco")
    );
    git(repo, &["config", "merge.kco.driver", &driver]);
}

/// Issue 46, finding 2: `git revert -m 1` of an applied rewind's merge, after a nightly moved
/// the file past the offset the revert restores, rewinds nothing: the revert moves the
/// partition forward (350 back to 555), the snapshot is already at 602, so the driver keeps
/// 602 and says why; the revert brings no change for an apply to make.
#[test]
fn the_revert_of_an_applied_rewind_after_a_nightly_keeps_the_nightly_and_says_why() {
    let dir = pr_and_nightly();
    let repo = dir.path();
    git(repo, &["checkout", "-q", "main"]);
    register_driver(repo);
    git(repo, &["add", ".gitattributes"]);
    git(repo, &["commit", "-q", "-m", "the driver"]);
    // The rewind (partition 0 to 800) merged, then a nightly past the offset it replaced.
    let (merged, out) = git_may_fail(repo, &["merge", "-q", "--no-ff", "--no-edit", "pr"]);
    assert!(merged, "{out}");
    let merge = git(repo, &["rev-parse", "HEAD"]);
    assert_eq!(offsets(repo)[0], (0, 800));
    let path = repo.join(FILE);
    let fake = FakeConnect::builder()
        .sink(
            "orders-sink",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 1050), (1, 1020), (2, 1030)]),
        )
        .start();
    let r = Kco::new(repo)
        .on(&fake)
        .env("KCO_NOW", "2026-12-03T02:00:00Z")
        .arg("snapshot")
        .run();
    assert_eq!(r.code, 0, "{}", r.all());
    git(repo, &["commit", "-q", "-am", "nightly"]);
    let nightly = std::fs::read_to_string(&path).unwrap();

    let (reverted, out) = git_may_fail(repo, &["revert", "--no-edit", "-m", "1", merge.trim()]);
    assert!(
        out.contains(&format!(
            "{FILE}: orders/0: kept the snapshot's {{\"kafka_offset\":1050}} (captured 2026-12-03T02:00:00Z): their change to {{\"kafka_offset\":1000}} moves it forward and the snapshot is already past it"
        )),
        "{reverted} {out}"
    );
    // Nothing to revert in the file: the snapshot is what the cluster has, and git says so.
    assert!(!reverted && out.contains("nothing to commit"), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), nightly);
    let _ = git_may_fail(repo, &["revert", "--abort"]);
    fake.assert_no_mutations();
}
