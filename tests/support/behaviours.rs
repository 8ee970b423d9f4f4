//! What the engine achieves through the `kco` binary, as a user would, asked alike of every
//! kind of service kco drives: one list of behaviours ([`run`]), each a function taking the
//! service under test ([`Kind`]) and asserting outcomes on the service (its offsets and the
//! connector's state, read without kco where the service allows), never which requests were
//! sent. tests/cli runs it on the fake (Kafka Connect and Confluent Cloud over HTTP),
//! tests/e2e on the real workers (Kafka Connect over REST, and Connect 3.4.1 through Kafka with
//! and without its REST API).
//!
//! A kind that lacks a behaviour says so once, in its own entry ([`Kind::lacks`]), with why;
//! the suite then prints that it skips it. Where [`support::conformance`](super::conformance)
//! asks a `Service` implementation for verbs, this suite asks the whole engine for results.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::data::hand_edit;
use super::env::TestEnv;
use super::run::{kill_when_seen, Run};

/// One behaviour of the list, as a kind names what it lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    Snapshot,
    Diff,
    Apply,
    Undo,
    Reset,
    RefusesRunning,
    Kill,
    Orphaned,
    ResetOrphaned,
}

/// A service under test: its kco.yaml entry, its connector, how its offsets and state are read
/// without kco, and what it lacks.
pub trait Kind {
    /// The kind, in failure messages (`Kafka Connect over REST`).
    fn name(&self) -> &str;
    /// kco in the project: kco.yaml written, `--cluster <cluster>` given to every run.
    fn env(&self) -> &TestEnv;
    /// The cluster of kco.yaml the kind is (the files' directory under `snaps/`).
    fn cluster(&self) -> &str;
    /// The connector the behaviours change: a source, RUNNING, with offsets. It is left
    /// RUNNING by every behaviour but the last ([`orphaned`]), which deletes it.
    fn connector(&self) -> &str;
    /// The connector's offsets as the service holds them (as Connect lists them), read without
    /// the kind's kco.yaml where the service allows it.
    fn offsets(&self) -> Vec<Value>;
    /// The connector's state as the service says it (`RUNNING`...); `None`: no such connector.
    fn state(&self) -> Option<String>;
    /// Another position of the connector (round `n` of the suite gives another): offsets the
    /// service accepts, as Connect lists them.
    fn moved(&self, n: u64) -> Vec<Value>;
    /// What of `offsets` a behaviour compares: on a real worker, the partitions its running
    /// task does not move (a FileStream source re-reads its file from a rewound position and
    /// commits its end again); every partition by default.
    fn stable(&self, offsets: &[Value]) -> Vec<Value> {
        offsets.to_vec()
    }
    /// Asserts the service holds `want` (of [`Kind::stable`]'s partitions); a real worker's
    /// entry waits for it, its change showing a moment later.
    fn wait_offsets(&self, what: &str, want: &[Value]) {
        let got = canonical(&self.stable(&self.offsets()));
        assert_eq!(
            got,
            canonical(&self.stable(want)),
            "{}: {what}",
            self.name()
        );
    }
    /// Asserts the connector shows `state` (a real worker's entry waits for it: a rebalance may
    /// show it UNASSIGNED a moment).
    fn wait_state(&self, what: &str, state: &str) {
        assert_eq!(
            self.state().as_deref(),
            Some(state),
            "{}: {what}",
            self.name()
        );
    }
    /// What the service's user does before kco writes the connector's offsets: on a service
    /// that cannot stop a connector, delete it (with the service's own tools: its offsets
    /// stay).
    fn before_write(&self) {}
    /// ... and after: create it again, under its name, from its config.
    fn after_write(&self) {}
    /// Deletes the connector with the service's own tools (its offsets stay), for good.
    fn delete(&self);
    /// Why the kind does not do `b`, when it does not.
    fn lacks(&self, b: Behaviour) -> Option<&str>;
    /// The step markers `kco -v apply` prints on stderr (`: patch ok`), each a point to kill
    /// it at.
    fn steps(&self) -> Vec<&str>;
    /// Makes the moment after `step` last until [`Kind::release`] (the fake delays the next
    /// request): a kill there lands there. A real worker's steps last long enough.
    fn hold(&self, _step: &str) {}
    fn release(&self) {}
}

/// Every behaviour, in turn, on one connector; a failure names the kind and the behaviour.
pub fn run(k: &dyn Kind) {
    let started = std::time::Instant::now();
    let file = snapshot(k);
    diff(k, &file);
    apply(k, &file);
    undo(k, &file);
    reset(k, &file);
    refuses_running(k, &file);
    kill(k, &file);
    orphaned(k);
    eprintln!("{}: the suite took {:?}", k.name(), started.elapsed());
}

/// Whether `k` does `b`; when not, says on stderr that the behaviour is skipped, and why.
fn does(k: &dyn Kind, b: Behaviour) -> bool {
    match k.lacks(b) {
        Some(why) => {
            eprintln!("{}: {b:?} skipped: {why}", k.name());
            false
        }
        None => true,
    }
}

/// `kco <args>` of the kind, asserted to succeed; the run.
fn kco(k: &dyn Kind, args: &[&str]) -> Run {
    let run = k.env().kco(args);
    run.success(&format!("{}: kco {}", k.name(), args.join(" ")));
    run
}

/// JSON with every object's keys sorted and offsets sorted by partition: what two lists of
/// offsets are compared as.
pub fn canonical(offsets: &[Value]) -> Vec<String> {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            v => v.clone(),
        }
    }
    // A partition listed with a null offset is one Connect has deleted.
    let mut out: Vec<String> = offsets
        .iter()
        .filter(|e| !e["offset"].is_null())
        .map(|e| sorted(e).to_string())
        .collect();
    out.sort();
    out
}

/// The offsets a snapshot file holds, as Connect lists them.
pub fn file_offsets(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let offsets: Value = serde_json::to_value(&doc["offsets"]).unwrap();
    offsets.as_array().cloned().unwrap_or_default()
}

/// The value of `key` in a snapshot file's `metadata`.
fn metadata(path: &Path, key: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    serde_json::to_value(&doc["metadata"][key]).unwrap()
}

/// The file moved to round `n`'s position ([`Kind::moved`]); its offsets.
fn move_file(k: &dyn Kind, file: &Path, n: u64) -> Vec<Value> {
    let moved = k.moved(n);
    hand_edit(file, Value::Array(moved.clone()));
    moved
}

/// The backup an apply, reset or undo printed (`(undo: kco undo DIR)`).
fn backup_of(run: &Run) -> String {
    let text = run.all();
    text.split("(undo: kco undo ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no backup named: {text}"))
        .to_string()
}

/// `kco snapshot NAME` writes the connector's offsets as the service holds them, and its state.
pub fn snapshot(k: &dyn Kind) -> PathBuf {
    let name = k.connector();
    let file = k
        .env()
        .path()
        .join(format!("snaps/{}/{name}.yaml", k.cluster()));
    if does(k, Behaviour::Snapshot) {
        kco(k, &["snapshot", name, "--dir", "snaps"]);
        let live = k.offsets();
        assert!(!live.is_empty(), "{}: the connector has offsets", k.name());
        assert_eq!(
            canonical(&file_offsets(&file)),
            canonical(&live),
            "{}: the file holds the service's offsets",
            k.name()
        );
        assert_eq!(metadata(&file, "state"), "RUNNING", "{}", k.name());
    }
    file
}

/// `kco diff FILE` of a file moved elsewhere than the service: exit 2, naming the connector
/// and the offsets it would move to; the file as the service holds it again: exit 0.
pub fn diff(k: &dyn Kind, file: &Path) {
    if !does(k, Behaviour::Diff) {
        return;
    }
    let path = file.to_str().unwrap();
    let moved = move_file(k, file, 1);
    let run = k
        .env()
        .kco(&["diff", path, "--fail-on", "any", "-o", "json"]);
    assert_eq!(run.code, 2, "{}: a difference: {run}", k.name());
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run}"));
    let text = v.to_string();
    assert!(text.contains(k.connector()), "{}: {v}", k.name());
    for entry in k.stable(&moved) {
        assert!(
            text.contains(&entry["offset"].to_string()),
            "{}: the file's {} in the diff: {v}",
            k.name(),
            entry["offset"]
        );
    }
    hand_edit(file, Value::Array(k.offsets()));
    let run = k.env().kco(&["diff", path, "--fail-on", "any"]);
    assert_eq!(run.code, 0, "{}: in sync: {run}", k.name());
}

/// `kco apply FILE --yes` moves the connector to exactly the file's offsets, and leaves it in
/// the state it had.
pub fn apply(k: &dyn Kind, file: &Path) {
    if !does(k, Behaviour::Apply) {
        return;
    }
    let moved = move_file(k, file, 2);
    let state = k.state().expect("the connector exists");
    k.before_write();
    kco(k, &["apply", file.to_str().unwrap(), "--yes"]);
    k.after_write();
    k.wait_offsets("the file's offsets, applied", &moved);
    k.wait_state("back in its state after the apply", &state);
}

/// `kco undo` of the last apply puts back the offsets it replaced.
pub fn undo(k: &dyn Kind, file: &Path) {
    if !does(k, Behaviour::Undo) {
        return;
    }
    let before = k.offsets();
    move_file(k, file, 3);
    k.before_write();
    let applied = kco(k, &["apply", file.to_str().unwrap(), "--yes"]);
    k.after_write();
    k.wait_offsets("the file's offsets, applied", &k.moved(3));
    k.before_write();
    kco(k, &["undo", &backup_of(&applied), "--yes"]);
    k.after_write();
    k.wait_offsets("the offsets before the apply, by its undo", &before);
    k.wait_state("RUNNING after the undo", "RUNNING");
}

/// `kco reset NAME --yes` deletes the connector's offsets; its undo writes them back.
pub fn reset(k: &dyn Kind, _file: &Path) {
    if !does(k, Behaviour::Reset) {
        return;
    }
    let before = k.offsets();
    k.before_write();
    let done = kco(k, &["reset", k.connector(), "--yes"]);
    k.after_write();
    k.wait_offsets("no offsets after the reset", &[]);
    k.wait_state("RUNNING after the reset", "RUNNING");
    k.before_write();
    kco(k, &["undo", &backup_of(&done), "--yes"]);
    k.after_write();
    k.wait_offsets("the offsets back, by the reset's undo", &before);
    k.wait_state("RUNNING after the undo", "RUNNING");
}

/// On a service that cannot stop a connector (its offsets are written through Kafka), an apply
/// of a running one is refused with nothing changed: same offsets, still RUNNING, no backup.
pub fn refuses_running(k: &dyn Kind, file: &Path) {
    if !does(k, Behaviour::RefusesRunning) {
        return;
    }
    let before = k.offsets();
    move_file(k, file, 4);
    let run = k.env().kco(&["apply", file.to_str().unwrap(), "--yes"]);
    assert_eq!(run.code, 1, "{}: refused: {run}", k.name());
    assert!(
        run.stderr.contains("nothing was written")
            && run
                .stderr
                .contains(&format!("`{}` is RUNNING", k.connector())),
        "{}: {run}",
        k.name()
    );
    k.wait_offsets("nothing changed by a refused apply", &before);
    k.wait_state("still RUNNING after a refused apply", "RUNNING");
}

/// `kill -9` of `kco -v apply FILE --yes` at each step it prints, then `kco recover`: the
/// connector in the state it had, at the old offsets or the new ones, never between; the
/// journal cleared. A run that ended before the kill landed (a real worker's answer came
/// first) is tried again, twice at most.
pub fn kill(k: &dyn Kind, file: &Path) {
    if !does(k, Behaviour::Kill) {
        return;
    }
    for (n, step) in (1..).zip(k.steps()) {
        let killed = (0..3).any(|attempt| killed_at(k, file, 10 * n + attempt, step));
        assert!(killed, "{}: never killed at `{step}`", k.name());
    }
}

/// One kill at `step` of an apply to round `n`'s position, and the recovery; whether the kill
/// landed before kco ended.
fn killed_at(k: &dyn Kind, file: &Path, n: u64, step: &str) -> bool {
    let journal = k
        .env()
        .path()
        .join(format!(".kco/journal/{}.json", k.cluster()));
    let old = k.offsets();
    let new = move_file(k, file, n);
    k.before_write();
    k.hold(step);
    let mut child = k
        .env()
        .cmd()
        .args(["-v", "apply", file.to_str().unwrap(), "--yes"])
        .discard_stdout()
        .spawn();
    let seen = kill_when_seen(&mut child, step);
    k.release();
    assert!(seen, "{}: `{step}` never printed", k.name());
    let status = child.try_wait().unwrap().expect("ended");
    let killed = std::os::unix::process::ExitStatusExt::signal(&status) == Some(9);
    if !killed {
        eprintln!("{}: ended before the kill at `{step}`: {status}", k.name());
    }
    kco(k, &["recover"]);
    assert!(
        !journal.exists(),
        "{}: killed at `{step}`: journal cleared",
        k.name()
    );
    k.after_write();
    k.wait_state(&format!("killed at `{step}`, then recovered"), "RUNNING");
    let got = canonical(&k.stable(&k.offsets()));
    let (was, is) = (canonical(&k.stable(&old)), canonical(&k.stable(&new)));
    assert!(
        got == was || got == is,
        "{}: killed at `{step}`: the old offsets {was:?} or the new {is:?}, not {got:?}",
        k.name()
    );
    killed
}

/// Once the connector is deleted (its offsets stay), `kco ls --orphaned` lists its offsets, and
/// `kco reset --orphaned NAME` deletes them: listed no more ([`Behaviour::ResetOrphaned`]).
pub fn orphaned(k: &dyn Kind) {
    if !does(k, Behaviour::Orphaned) {
        return;
    }
    let name = k.connector();
    let left = k.offsets();
    k.delete();
    let listed = || {
        let run = kco(k, &["ls", "--orphaned", "-o", "json"]);
        let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run}"));
        super::json::find_named(&v, "sources", name).map(|o| o["partitions"].clone())
    };
    let found = listed().unwrap_or_else(|| panic!("{}: `{name}` left offsets", k.name()));
    let found: Vec<Value> = serde_json::from_value(found).unwrap();
    assert_eq!(
        canonical(&k.stable(&found)),
        canonical(&k.stable(&left)),
        "{}: the deleted connector's offsets",
        k.name()
    );
    if !does(k, Behaviour::ResetOrphaned) {
        return;
    }
    kco(k, &["reset", "--orphaned", name, "--yes"]);
    assert_eq!(listed(), None, "{}: nothing left of `{name}`", k.name());
}
