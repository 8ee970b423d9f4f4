//! Safe by construction, through the binary: a file belongs to its cluster; undo takes only a
//! kco backup and puts it back on its own cluster; the state directory is the project's,
//! wherever kco runs in it; a refused stop leaves nothing behind; a running operation is "in
//! progress", not "interrupted"; a journal that cannot be finished can be discarded.

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::support::data::{sink_offset as offsets, SnapshotFile, SINK};
use crate::support::env::TestEnv;
use crate::support::fakes::sink_s;
use crate::support::run::{wait_until, Kco};

/// A project: kco.yaml with clusters `a` and `b` (the default), each a fake with sink `s`
/// at 100 (on Kafka clusters of their own), and `snapshots/a/s.yaml` at 5, captured on `a`.
struct Project {
    dir: TestEnv,
    a: FakeConnect,
    b: FakeConnect,
}

fn project() -> Project {
    let dir = TestEnv::new();
    // Two Kafka clusters: on one, sink `s` of both would share its consumer group, which
    // every change refuses (tests/cli/target_cluster.rs).
    let a = sink_s(State::Running).kafka_cluster_id("kafka-a").start();
    let b = sink_s(State::Running).kafka_cluster_id("kafka-b").start();
    dir.config(format!(
        "defaultCluster: b\nclusters:\n  a:\n    url: {}\n  b:\n    url: {}\n",
        a.url(),
        b.url()
    ));
    SnapshotFile::sink("s", offsets(5))
        .class(SINK)
        .write_in(&dir.path().join("snapshots/a"));
    Project { dir, a, b }
}

#[test]
fn a_file_of_another_cluster_is_refused_unless_that_cluster_is_named() {
    let p = project();
    let file = "snapshots/a/s.yaml";
    let r = p.dir.kco(&["apply", file, "--create", "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all()
            .contains("snapshots/a/s.yaml was captured on cluster `a`, not on `b`"),
        "{r}"
    );
    assert!(r.all().contains("--cluster b"), "{r}");
    let r = p.dir.kco(&["apply", file, "--as", "s2", "--dry-run"]);
    assert_eq!(r.code, 1, "--as without --cluster: {r}");
    let r = p.dir.kco(&["diff", "snapshots/a"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all().contains("captured on cluster `a`, not on `b`"),
        "{r}"
    );
    assert!(p.b.requests().is_empty(), "{:?}", p.b.requests());
    assert!(p.a.requests().is_empty(), "{:?}", p.a.requests());
    // Named, it goes where it is told.
    let r = p.dir.kco(&["--cluster", "b", "apply", file, "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(p.b.offsets("s"), offsets(5));
    // On its own cluster nothing needs naming.
    let r = p.dir.kco(&["--cluster", "a", "diff", "snapshots/a"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(r.all().contains("1 advanced"), "{r}");
}

#[test]
fn undo_takes_only_a_kco_backup_and_puts_it_back_on_its_own_cluster() {
    let p = project();
    // Not a backup: refused, nothing read.
    let (code, out) = p
        .dir
        .kco(&["undo", "snapshots/a", "--dry-run"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("snapshots/a is not a kco backup"), "{out}");
    assert!(out.contains("kco-backup.json"), "{out}");
    // A backup of cluster a (written by an apply there).
    let (code, out) = p
        .dir
        .kco(&[
            "--cluster",
            "a",
            "apply",
            "snapshots/a",
            "--yes",
            "--backup-dir",
            "bk",
        ])
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(undo: kco undo bk)"), "{out}");
    assert_eq!(p.a.offsets("s"), offsets(5));
    p.b.clear_requests();
    let (code, out) = p
        .dir
        .kco(&["--cluster", "b", "undo", "bk", "--dry-run"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the backup bk was taken on cluster `a`, not on `b`"),
        "{out}"
    );
    // No --cluster: the backup's own cluster, not the default b.
    let (code, out) = p.dir.kco(&["undo", "bk", "--yes"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Plan for cluster a"), "{out}");
    assert_eq!(p.a.offsets("s"), offsets(100));
    // b is only asked which Kafka cluster it is on (the look for a sink sharing the group).
    assert!(
        p.b.requests()
            .iter()
            .all(|r| r.method == "GET" && r.path == "/"),
        "{:?}",
        p.b.requests()
    );
}

#[test]
fn the_state_directory_is_next_to_kco_yaml_wherever_kco_runs() {
    let p = project();
    let deep = p.dir.path().join("snapshots/a");
    p.a.fault(
        Fault::on("PATCH", "/connectors/s/offsets")
            .nth(1)
            .delay_ms(3_000),
    );
    let first = Kco::new(&deep)
        .args(["--cluster", "a", "apply", "s.yaml", "--yes"])
        .spawn();
    wait_until("the first apply to patch", || {
        p.a.count("PATCH", "/connectors/s/offsets") > 0
    });
    assert!(p.dir.path().join(".kco/locks/a.lock").exists());
    assert!(
        !deep.join(".kco").exists(),
        "nothing in the working directory"
    );
    // From the project's root, the second apply sees the first one's lock.
    let r = p
        .dir
        .kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all()
            .contains(&format!("is locked by another kco: pid {}", first.id())),
        "{r}"
    );
    // A reader hears that an operation is in progress, not that one was interrupted.
    let r = p.dir.kco(&["--cluster", "a", "diff"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all()
            .contains("an operation on cluster `a` is in progress"),
        "{r}"
    );
    assert!(!r.all().contains("interrupted"), "{r}");
    let out = first.wait();
    assert_eq!(out.status.code(), Some(0));
    let backups: Vec<_> = std::fs::read_dir(p.dir.path().join(".kco/backups"))
        .unwrap()
        .collect();
    assert_eq!(backups.len(), 1, "the backup is in the project's state dir");
    assert!(!deep.join(".kco").exists());
}

#[test]
fn a_refused_stop_leaves_no_journal_and_later_commands_run() {
    let p = project();
    p.a.fault(
        Fault::on("PUT", "/connectors/s/stop")
            .always()
            .respond(403, "User kco may not stop connectors"),
    );
    let r = p
        .dir
        .kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(r.all().contains("may not stop connectors"), "{r}");
    assert!(!r.all().contains("kco recover"), "{r}");
    assert!(!p.dir.path().join(".kco/journal/a.json").exists());
    assert_eq!(p.a.count("PUT", "/connectors/s/resume"), 0);
    assert_eq!(p.a.state("s"), Some(State::Running));
    // The nightly snapshot and diff are not blocked.
    let r = p.dir.kco(&["--cluster", "a", "diff"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(r.all().contains("1 advanced"), "{r}");
    let r = p.dir.kco(&["--cluster", "a", "snapshot", "--dir", "snaps"]);
    assert_eq!(r.code, 0, "{r}");
    p.a.clear_faults();
}

#[test]
fn a_journal_that_cannot_be_finished_is_discarded_by_a_documented_command() {
    let p = project();
    // The resume after the patch is refused: the connector is left STOPPED, journaled.
    p.a.fault(
        Fault::on("PUT", "/connectors/s/resume")
            .always()
            .respond(403, "User kco may not resume connectors"),
    );
    let r = p
        .dir
        .kco(&["--cluster", "a", "apply", "snapshots/a", "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(p.dir.path().join(".kco/journal/a.json").exists());
    let r = p.dir.kco(&["--cluster", "a", "snapshot", "--dir", "snaps"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all().contains("kco recover --discard --cluster a"),
        "the refusal says how to get out: {r}"
    );
    let r = p.dir.kco(&["--cluster", "a", "recover"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(r.all().contains("RUNNING NOT put back"), "{r}");
    assert!(p.dir.path().join(".kco/journal/a.json").exists());
    let r = p.dir.kco(&["--cluster", "a", "recover", "--discard"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all().contains("Discarded the journal of cluster `a`")
            && r.all().contains("s: was RUNNING"),
        "{r}"
    );
    assert!(r.all().contains("Nothing was put back"), "{r}");
    assert!(!p.dir.path().join(".kco/journal/a.json").exists());
    let r = p.dir.kco(&["--cluster", "a", "snapshot", "--dir", "snaps"]);
    assert_eq!(r.code, 0, "{r}");
    p.a.clear_faults();
}
