//! Crash safety on the real test bed: `kill -9` of kco at several points of the transaction
//! (after the stop, after the PATCH, after the resume), then recovery (`kco recover`, or the
//! next apply); and `kill -9` of one of cluster a's workers during an apply of 10
//! connectors, then a second apply: every connector converges and runs.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{
    append_lines, file_source_config, get, local_connect, numbered, testbed, testbed_alone,
    unique_name, wait_for, Connect, ConnectorGuard,
};
use crate::kco_steps::{set_offsets, testbed_env, write_snapshot};
use crate::support::env::TestEnv;
use crate::support::run::kill_when_seen;

// Every test here runs `kco --cluster a ...`: the files are cluster a's.

fn position(file: &str, pos: u64) -> Value {
    json!({"partition": {"filename": file}, "offset": {"position": pos}})
}

/// `n` FileStreamSources on `a`, each at the end of its own 20-line file, and for each a
/// snapshot under `<dir>/snaps/a/` with one extra partition (so that applying changes it).
fn sources(a: &Connect, dir: &Path, prefix: &str, n: usize) -> Vec<ConnectorGuard> {
    let guards: Vec<ConnectorGuard> = (0..n)
        .map(|_| {
            let name = unique_name(prefix);
            let input = dir.join(format!("{name}.txt"));
            append_lines(&input, &numbered("line", 1..=20));
            a.create(
                &name,
                file_source_config(&input, &unique_name("kco-e2e-crash")),
            )
        })
        .collect();
    for g in &guards {
        a.wait_running(g.name());
        let file = dir.join(format!("{}.txt", g.name()));
        let len = std::fs::metadata(&file).unwrap().len();
        let file = file.to_string_lossy().into_owned();
        a.wait_offsets(g.name(), "the file read", |o| o == [position(&file, len)]);
        snapshot_with_extra(a, g.name(), dir, 7);
    }
    guards
}

/// The snapshot of `name` under `<dir>/snaps/a/`, its extra partition at `pos`.
fn snapshot_with_extra(a: &Connect, name: &str, dir: &Path, pos: u64) {
    let extra = format!("/kco/crash/{name}");
    let snap = write_snapshot(a, name, "a", &dir.join("snaps"), false);
    let mut offsets: Vec<Value> = a
        .offsets(name)
        .into_iter()
        .filter(|o| o["partition"]["filename"] != extra.as_str())
        .collect();
    offsets.push(position(&extra, pos));
    set_offsets(&snap, offsets);
}

/// Runs `kco --cluster a apply snaps/a --yes -v` and SIGKILLs it as soon as its stderr shows
/// a step `marker` (e.g. ": patch ok"). Returns whether the marker was seen.
fn apply_killed_at(env: &TestEnv, marker: &str, parallel: &str) -> bool {
    killed_at(
        env,
        &["apply", "snaps/a", "--yes", "--parallel", parallel],
        marker,
    )
}

/// Runs `kco --cluster a -v ARGS` and SIGKILLs it as soon as its stderr shows a step
/// `marker`. Returns whether the marker was seen.
fn killed_at(env: &TestEnv, args: &[&str], marker: &str) -> bool {
    let mut child = env
        .cmd()
        .args(["--cluster", "a", "-v"])
        .args(args)
        .discard_stdout()
        .spawn();
    kill_when_seen(&mut child, marker)
}

#[test]
fn kill_9_at_each_point_of_the_transaction_then_recovery_puts_every_state_back() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let guards = sources(&a, env.path(), "kco-e2e-kill", 4);
    let journal = env.path().join(".kco/journal/a.json");
    for (round, (marker, recover_with_apply)) in [
        (": wait_stopped ok", false),
        (": patch ok", true),
        (": restore ok", false),
    ]
    .into_iter()
    .enumerate()
    {
        for g in &guards {
            snapshot_with_extra(&a, g.name(), env.path(), 100 + round as u64);
        }
        assert!(apply_killed_at(&env, marker, "2"), "{marker} never seen");
        assert!(journal.exists(), "killed at {marker}: the journal is left");
        // A snapshot now would record STOPPED connectors: refused.
        let out = env.kco(&["--cluster", "a", "snapshot"]);
        assert_eq!(out.code, 1, "snapshot after a kill at {marker}");
        let next_apply = ["--cluster", "a", "apply", "snaps/a", "--yes"];
        let again = recover_with_apply.then_some(&next_apply[..]);
        recover_after_kill(&a, &env, &guards, marker, again);
    }
    // A last apply converges: every file's offsets, every connector running.
    env.kco(&["--cluster", "a", "apply", "snaps/a", "--yes"])
        .success("the final apply");
    // Every connector RUNNING, as its file records (a rebalance of the two workers may show
    // one UNASSIGNED for a moment: waited for; a stop would never pass).
    all_running(&a, &guards, "the final apply");
    let out = env.kco(&["--cluster", "a", "diff", "snaps/a"]);
    let text = out.success("diff after recovery");
    assert!(!text.contains("state changed"), "{text}");
}

/// What follows a kill at `marker`: `again` (the killed command once more) finishes and says
/// that the last one did not, or without `again`, `kco recover` runs; either way the journal
/// is cleared and every connector of `guards` runs again.
fn recover_after_kill(
    a: &Connect,
    env: &TestEnv,
    guards: &[ConnectorGuard],
    marker: &str,
    again: Option<&[&str]>,
) {
    match again {
        Some(args) => {
            let out = env.kco(args);
            let text = out.success(&format!("{args:?} after a kill at {marker}"));
            let err = &out.stderr;
            assert!(err.contains("did not finish"), "{text}{err}");
        }
        None => {
            env.kco(&["--cluster", "a", "recover"]).success("recover");
        }
    }
    assert!(
        !env.path().join(".kco/journal/a.json").exists(),
        "killed at {marker}: the journal is cleared"
    );
    all_running(a, guards, marker);
}

/// Every connector of `guards` RUNNING again (after a kill at `marker`).
fn all_running(a: &Connect, guards: &[ConnectorGuard], marker: &str) {
    for g in guards {
        wait_for(
            &format!("{} RUNNING after a kill at {marker}", g.name()),
            Duration::from_secs(60),
            || match a.state(g.name()).as_str() {
                "RUNNING" => Ok(()),
                s => Err(s.to_string()),
            },
        );
    }
}

/// `kco reset` killed at each step: the next kco command that changes the cluster (here the
/// same reset again, or `kco recover`) puts every state back first, and reading commands
/// refuse until then.
#[test]
fn kill_9_at_each_point_of_a_reset_then_the_next_command_puts_every_state_back() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let guards = sources(&a, env.path(), "kco-e2e-rkill", 3);
    let names: Vec<&str> = guards.iter().map(|g| g.name()).collect();
    let journal = env.path().join(".kco/journal/a.json");
    for (marker, finish_with_reset) in [
        (": wait_stopped ok", true),
        (": reset ok", false),
        (": restore ok", true),
    ] {
        // Each source has read its file again since the last reset (its offsets are back),
        // so that the reset has something to delete.
        for g in &guards {
            a.wait_offsets(g.name(), "offsets to reset", |o| !o.is_empty());
        }
        let mut args = vec!["reset", "--yes"];
        args.extend(&names);
        assert!(killed_at(&env, &args, marker), "{marker} never seen");
        assert!(
            journal.exists(),
            "reset killed at {marker}: the journal is left"
        );
        let out = env.kco(&["--cluster", "a", "diff", "snaps/a"]);
        assert_eq!(out.code, 1, "diff after a kill at {marker}");
        let mut next_reset = vec!["--cluster", "a", "reset", "--yes"];
        next_reset.extend(&names);
        let again = finish_with_reset.then_some(&next_reset[..]);
        recover_after_kill(&a, &env, &guards, marker, again);
    }
}

/// `kco undo` killed at each step, of two backups: one of an apply that moved a connector
/// (undo: stop, patch, restore) and one of an apply that created a connector (undo: stop,
/// delete its offsets, delete it). The next command (the same undo again) puts every state
/// back first, then finishes: the created connector gone, the moved one's offsets back.
#[test]
fn kill_9_at_each_point_of_an_undo_then_the_next_command_puts_every_state_back() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let guards = sources(&a, env.path(), "kco-e2e-ukill", 1);
    let kept = guards[0].name().to_string();
    let kept_file = format!("snaps/a/{kept}.yaml");
    // `--create` needs Connect 3.7 (a connector created stopped): before, only the move.
    let creates = a.supports_initial_state();
    // (marker, kill the undo of the move, kill the undo of the create)
    for (round, (marker, moved, created)) in [
        (": wait_stopped ok", true, true),
        (": patch ok", true, false),
        (": reset ok", false, true),
        (": restore ok", true, false),
    ]
    .into_iter()
    .enumerate()
    .filter(|(_, (_, moved, _))| creates || *moved)
    {
        let new = unique_name("kco-e2e-ukill-new");
        snapshot_with_extra(&a, &kept, env.path(), 200 + round as u64);
        let copy = write_snapshot(&a, &kept, "a", &env.path().join("copy"), true);
        let bk_move = format!("bk{round}-move");
        let bk_create = format!("bk{round}-create");
        let out = env.kco(&[
            "--cluster",
            "a",
            "apply",
            &kept_file,
            "--yes",
            "--backup-dir",
            &bk_move,
        ]);
        out.success("the apply that moves");
        let mut undos = vec![(&bk_move, moved)];
        let guard = creates.then(|| {
            let out = env.kco(&[
                "--cluster",
                "a",
                "apply",
                copy.to_str().unwrap(),
                "--as",
                &new,
                "--create",
                "--yes",
                "--backup-dir",
                &bk_create,
            ]);
            out.success("the apply that creates");
            a.wait_running(&new);
            a.adopt(&new)
        });
        if creates {
            undos.insert(0, (&bk_create, created));
        }
        for (backup, kill) in undos {
            if kill {
                assert!(
                    killed_at(&env, &["undo", backup, "--yes"], marker),
                    "{marker} never seen undoing {backup}"
                );
                let out = env.kco(&["--cluster", "a", "snapshot", "--dir", "x"]);
                assert_eq!(out.code, 1, "snapshot after a kill at {marker}");
            }
            // The next command puts the states back first, then undoes to the end.
            let out = env.kco(&["undo", backup, "--yes"]);
            let text = out.success("the undo");
            let said = out.stderr.contains("did not finish");
            assert_eq!(said, kill, "{text}{}", out.stderr);
            assert!(!env.path().join(".kco/journal/a.json").exists());
        }
        if creates {
            assert!(!a.has_connector(&new), "undo deleted the created connector");
        }
        drop(guard);
        all_running(&a, &guards, marker);
        let out = env.kco(&["--cluster", "a", "diff", &kept_file]);
        assert_eq!(
            out.code, 2,
            "the undo put the old offsets back: {}",
            out.stdout
        );
    }
}

#[test]
fn kill_9_of_a_worker_during_an_apply_of_ten_then_a_second_apply_converges() {
    let Some(tb) = testbed_alone() else { return };
    if tb.a_urls.len() < 2 {
        eprintln!("skipping: cluster a needs two workers");
        return;
    }
    let a = tb.a();
    let env = testbed_env(&tb);
    let guards = sources(&a, env.path(), "kco-e2e-wkill", 10);
    let pid_file = crate::harness::testbed_dir().join("run/a2.pid");
    let pid = std::fs::read_to_string(&pid_file).expect("a2's pid file");
    let child = env
        .cmd()
        .args([
            "--cluster",
            "a",
            "apply",
            "snaps/a",
            "--yes",
            "--parallel",
            "2",
        ])
        .discard_output()
        .spawn();
    std::thread::sleep(Duration::from_secs(3));
    let killed = Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    let first = child.wait().status;
    eprintln!("the apply during the worker kill exited {first}");
    local_connect(&["start-worker", "a2"]);
    // The killed member's session expires some seconds later, and the group rebalances
    // again: let that happen here, not in the next test.
    settle(&a);
    let out = env.kco(&["--cluster", "a", "apply", "snaps/a", "--yes"]);
    out.success("the second apply");
    for g in &guards {
        let s = a.wait_running(g.name());
        assert_eq!(s["connector"]["state"], "RUNNING", "{s}");
    }
    env.kco(&["--cluster", "a", "diff", "snaps/a"])
        .success("diff after the second apply");
    settle(&a);
}

/// Waits until every connector of the cluster and its tasks have been RUNNING for 12 s in a
/// row (no rebalance under way).
fn settle(a: &Connect) {
    let mut stable = 0;
    wait_for("cluster a to settle", Duration::from_secs(180), || {
        let all = get(&a.url("/connectors?expand=status")).expect(200, "list");
        let running = all.as_object().into_iter().flatten().all(|(_, c)| {
            let s = &c["status"];
            s["connector"]["state"] == "RUNNING"
                && s["tasks"]
                    .as_array()
                    .is_some_and(|t| t.iter().all(|t| t["state"] == "RUNNING"))
        });
        stable = if running { stable + 1 } else { 0 };
        // wait_for polls every 250 ms.
        if stable >= 48 {
            Ok(())
        } else {
            Err(format!("{stable} stable looks: {all}"))
        }
    });
}
