//! kco killed with SIGKILL in the middle of an apply (the fake's delays make the window
//! deterministic): the journal it wrote before the first stop tells the next command which
//! connectors to put back; read-only commands refuse until then. And two applies at once: the
//! second one stops before sending anything, naming the first.

use std::path::Path;

use serde_json::Value;

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::support::data::{sink_offset as offsets, SnapshotFile, SINK};
use crate::support::env::TestEnv;
use crate::support::run::{wait_until, Kco, Running};

fn names() -> Vec<String> {
    (0..12).map(|i| format!("c{i:02}")).collect()
}

/// Twelve running sinks at offset 100, files at 5, and a PATCH that takes 30 s.
fn setup() -> (TestEnv, FakeConnect) {
    let dir = TestEnv::new();
    let mut b = FakeConnect::builder();
    for n in names() {
        SnapshotFile::sink(&n, offsets(5))
            .class(SINK)
            .write_in(&dir.path().join("files"));
        b = b.sink(&n, SINK, State::Running, offsets(100));
    }
    (dir, b.start())
}

/// kco against the fake as cluster `a`, started and left running.
fn spawn(dir: &Path, fake: &FakeConnect, args: &[&str]) -> Running {
    Kco::new(dir).on(fake).args(args).spawn()
}

/// `kco apply files --yes --parallel <parallel> <args>` with every PATCH held 30 s, killed
/// with SIGKILL once `parallel` PATCHes are in flight (each is sent once its connector shows
/// STOPPED): the operation dies mid-way, leaving `parallel` connectors stopped. PATCHes go
/// through again after.
fn kill_mid_apply(dir: &Path, fake: &FakeConnect, parallel: usize, args: &[&str]) {
    let patches = || {
        fake.requests()
            .iter()
            .filter(|r| r.method == "PATCH")
            .count()
    };
    let before = patches();
    fake.fault(Fault::on("PATCH", "/connectors/*/offsets").delay_ms(30_000));
    let n = parallel.to_string();
    let apply = [&["apply", "files", "--yes", "--parallel", &n][..], args].concat();
    let child = spawn(dir, fake, &apply);
    wait_until(&format!("{parallel} PATCHes in flight"), || {
        patches() == before + parallel
    });
    child.kill9();
    assert_eq!(stopped(fake).len(), parallel, "the kill left them stopped");
    fake.clear_faults();
}

fn stopped(fake: &FakeConnect) -> Vec<String> {
    names()
        .into_iter()
        .filter(|n| fake.state(n) == Some(State::Stopped))
        .collect()
}

#[test]
fn sigkill_mid_apply_then_the_next_apply_puts_every_state_back_first() {
    let (dir, fake) = setup();
    kill_mid_apply(dir.path(), &fake, 4, &[]);
    let journal = dir.path().join(".kco/journal/a.json");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&journal).unwrap()).unwrap();
    assert_eq!(j["connectors"].as_object().unwrap().len(), 12, "{j}");
    assert_eq!(j["connectors"]["c00"]["prior_state"], "RUNNING");

    // Read-only commands refuse while the journal is there (a snapshot would record STOPPED).
    fake.clear_requests();
    let r = dir.on(&fake, &["snapshot"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all()
            .contains("an interrupted operation on cluster `a` left 12 connectors"),
        "{r}"
    );
    assert!(r.all().contains("kco recover --cluster a"), "{r}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    let r = dir.on(&fake, &["diff", "files"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(r.all().contains(".kco/journal/a.json"), "{r}");

    // The next apply finishes the interrupted one first, then applies.
    let r = dir.on(&fake, &["apply", "files", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all()
            .contains("did not finish: putting back the states it recorded in .kco/journal/a.json"),
        "{r}"
    );
    assert!(
        r.all()
            .contains("c00: RUNNING put back (was STOPPED (no tasks))"),
        "{r}"
    );
    assert!(!r.all().contains("left STOPPED"), "{r}");
    for n in names() {
        assert_eq!(fake.state(&n), Some(State::Running), "{n}");
        assert_eq!(fake.offsets(&n), offsets(5), "{n}");
    }
    assert!(!journal.exists(), "the journal is cleared");
    let r = dir.on(&fake, &["diff", "files"]);
    assert_eq!(r.code, 0, "{r}");
}

#[test]
fn sigkill_then_kco_recover_and_recover_from_the_backup_when_the_journal_is_lost() {
    let (dir, fake) = setup();
    kill_mid_apply(dir.path(), &fake, 2, &[]);
    let r = dir.on(&fake, &["recover"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(stopped(&fake).is_empty(), "{r}");
    assert!(!dir.path().join(".kco/journal/a.json").exists());
    let r = dir.on(&fake, &["recover"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(r.all().contains("Nothing to recover"), "{r}");

    // Again, and this time the journal is lost with the runner: the backup has the states.
    kill_mid_apply(dir.path(), &fake, 3, &["--backup-dir", "bk"]);
    std::fs::remove_dir_all(dir.path().join(".kco")).unwrap();
    // The nightly diff sees them, with no lock left to blame (this machine's went with the
    // journal): a routine state, as docs/apply.md says of a runner lost without its journal.
    let r = dir.on(&fake, &["diff", "files", "-o", "json", "-q"]);
    assert_eq!(r.code, 0, "the nightly diff sees them: {r}");
    let v: Value = serde_json::from_str(&r.all()).unwrap();
    let left: Vec<&str> = v["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["notes"].to_string().contains("live state STOPPED"))
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(left.len(), 3, "{r}");
    let r = dir.on(&fake, &["recover", "--from-backup", "bk"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(stopped(&fake).is_empty(), "{r}");
}

#[test]
fn a_second_apply_on_the_same_cluster_stops_before_sending_anything() {
    let (dir, fake) = setup();
    fake.fault(
        Fault::on("PATCH", "/connectors/c00/offsets")
            .nth(1)
            .delay_ms(5_000),
    );
    let first = spawn(
        dir.path(),
        &fake,
        &["apply", "files", "--yes", "--parallel", "1"],
    );
    wait_until("the first apply to patch", || {
        fake.count("PATCH", "/connectors/c00/offsets") > 0
    });
    let before = fake.requests().len();
    let (code, out) = dir.on(&fake, &["apply", "files", "--yes"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "cluster `a` is locked by another kco: pid {}",
            first.id()
        )),
        "{out}"
    );
    assert!(out.contains(".kco/locks/a.lock"), "{out}");
    // It sent nothing at all: the first apply is still inside its delayed PATCH.
    let during: Vec<String> = fake.requests()[before..]
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert!(during.is_empty(), "{during:?}");
    let out = first.wait();
    assert_eq!(out.status.code(), Some(0));
    assert!(!dir.path().join(".kco/locks/a.lock").exists());
    for n in names() {
        assert_eq!(fake.state(&n), Some(State::Running), "{n}");
    }
}

/// Recovery puts back only what the interrupted operation may have left: a connector STOPPED
/// by it is resumed, but one its owner paused since (whether its transaction had started or
/// not) is not kco's to undo, and stays PAUSED, saying so.
#[test]
fn recover_leaves_a_connector_its_owner_paused_since_the_kill_as_it_is() {
    let (dir, fake) = setup();
    kill_mid_apply(dir.path(), &fake, 2, &[]);
    let left = stopped(&fake);
    let not_started = names().into_iter().find(|n| !left.contains(n)).unwrap();
    fake.set_state(&left[0], State::Paused);
    fake.set_state(&not_started, State::Paused);
    let r = dir.on(&fake, &["recover"]);
    assert_eq!(r.code, 0, "{r}");
    for n in [&left[0], &not_started] {
        assert_eq!(fake.state(n), Some(State::Paused), "{n}: {r}");
        assert!(
            r.all()
                .contains(&format!("{n}: left as its owner set it (was PAUSED")),
            "{n}: {r}"
        );
    }
    assert!(
        r.all().contains("PAUSED since: the interrupted operation leaves a connector STOPPED or RUNNING, so its owner set it"),
        "{r}"
    );
    assert_eq!(fake.state(&left[1]), Some(State::Running), "{r}");
    assert!(!dir.path().join(".kco/journal/a.json").exists(), "{r}");
}
