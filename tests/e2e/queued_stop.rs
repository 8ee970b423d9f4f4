//! What the fake's `queue_stop` claims, on the real worker: Connect handles `PUT /stop` in its
//! herder's request queue, but writes `PUT /resume` to the config topic at once, so a stop
//! still waiting lands after a resume sent later. And kco's recovery fences such a stop off:
//! it stops a connector whose transaction had started before it resumes it.
//!
//! To hold the stop, the test bed's broker is frozen (SIGSTOP) for two seconds: the herder
//! cannot read its config topic, and the stop waits. That freezes every cluster of the test
//! bed, so the test runs alone.
//!
//! A hold this short lands the stop within a second of the broker's return, which recovery's
//! second look (`recover::SETTLE`, 2 s) would also catch: this test checks Connect's
//! behaviour and that the fence works on the real worker, while
//! `operation::tests::a_stop_still_queued_in_the_worker_lands_before_the_state_is_put_back`
//! is the one that fails without the fence (a rebalance held CI's stop for longer).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{
    append_lines, file_source_config, numbered, put, testbed_alone, testbed_dir, unique_name,
    Connect,
};
use crate::kco_steps::testbed_env;

/// The broker frozen until dropped (then it runs again, even when the test panics).
struct Frozen(String);

impl Frozen {
    fn broker() -> Frozen {
        let pid_file = testbed_dir().join("run/broker.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_else(|e| panic!("{}: {e}", pid_file.display()))
            .trim()
            .to_string();
        signal("STOP", &pid);
        Frozen(pid)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal("CONT", &self.0);
    }
}

fn signal(sig: &str, pid: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), pid])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

/// `PUT /connectors/{name}/{verb}` on another thread: its status and when it was answered.
fn send_later(b: &Connect, name: &str, verb: &str) -> thread::JoinHandle<(u16, Instant)> {
    let url = b.url(&format!("/connectors/{name}/{verb}"));
    thread::spawn(move || {
        let reply = put(&url, None);
        (reply.status, Instant::now())
    })
}

/// The connector's state now and three seconds later (a late stop would show by then).
fn settled_state(b: &Connect, name: &str) -> (String, String) {
    let now = b.state(name);
    thread::sleep(Duration::from_secs(3));
    (now, b.state(name))
}

fn journal(dir: &Path, b: &Connect, name: &str) -> PathBuf {
    let path = dir.join(".kco/journal/b.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let j = json!({
        "cluster": "b", "url": b.url(""), "pid": 999_999, "host": "gone",
        "started_at": "2026-12-01T00:00:00Z",
        "connectors": {name: {"prior_state": "RUNNING", "started": true}},
    });
    std::fs::write(&path, j.to_string()).unwrap();
    path
}

#[test]
fn a_queued_stop_lands_after_a_later_resume_and_recovery_fences_it_off() {
    let Some(tb) = testbed_alone() else { return };
    let b = tb.b();
    let env = testbed_env(&tb);
    let name = unique_name("kco-e2e-qstop");
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=5));
    let _guard = b.create(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-qstop")),
    );
    b.wait_running(&name);

    // Connect: the stop, sent first, is answered after the resume sent a second later, and
    // the connector ends STOPPED.
    let frozen = Frozen::broker();
    let stop = send_later(&b, &name, "stop");
    thread::sleep(Duration::from_secs(1));
    let resume = send_later(&b, &name, "resume");
    thread::sleep(Duration::from_secs(1));
    drop(frozen);
    let (stop, resume) = (stop.join().unwrap(), resume.join().unwrap());
    assert_eq!((stop.0, resume.0), (204, 202));
    assert!(resume.1 <= stop.1, "the resume was answered first");
    b.wait_stopped(&name);
    assert_eq!(
        settled_state(&b, &name),
        ("STOPPED".into(), "STOPPED".into())
    );
    b.resume(&name);

    // kco: a dead run's stop waits in the queue while `kco recover` puts RUNNING back.
    let path = journal(env.path(), &b, &name);
    let frozen = Frozen::broker();
    let stop = send_later(&b, &name, "stop");
    thread::sleep(Duration::from_secs(1));
    let cmd = env.cmd().args(["--cluster", "b", "recover"]);
    let recover = thread::spawn(move || cmd.run());
    thread::sleep(Duration::from_secs(1));
    drop(frozen);
    assert_eq!(stop.join().unwrap().0, 204);
    let out = recover.join().unwrap();
    let text = out.success("recover");
    assert!(text.contains("stopped first"), "{text}");
    assert!(!path.exists(), "the journal is cleared");
    assert_eq!(
        settled_state(&b, &name),
        ("RUNNING".into(), "RUNNING".into())
    );
}
