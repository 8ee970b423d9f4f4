//! `kco diff` against the real test bed (cluster a, 127.0.0.1:8083): a FileStream source and
//! sink progress past their snapshot (advanced, exit 0; `--fail-on any`, exit 2), then offsets
//! are changed behind kco's back (drift, exit 2, with partition, direction and distance), a
//! connector is deleted (missing) and one is created without a file (untracked).

use std::path::Path;

use serde_json::{json, Value};

use crate::harness::{
    append_lines, file_sink_config, file_source_config, sink_offset, source_position, testbed,
    unique_name, wait_for, Connect, WAIT,
};
use crate::kco_steps::on;
use crate::support::env::TestEnv;

fn json_diff(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let (code, out, err) = env.kco(&[&["diff", "-o", "json"], args].concat()).parts();
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, v)
}

fn connector<'a>(report: &'a Value, name: &str) -> &'a Value {
    crate::support::json::named(report, "connectors", name)
}

/// Waits until the source has read `position` bytes and the sink committed `offset`.
fn wait_progress(
    a: &Connect,
    src: &str,
    snk: &str,
    input: &Path,
    topic: &str,
    position: i64,
    offset: i64,
) {
    wait_for(
        &format!("position {position}, offset {offset}"),
        WAIT,
        || {
            let p = source_position(&a.offsets(src), input);
            let o = sink_offset(&a.offsets(snk), topic);
            if p == Some(position) && o == Some(offset) {
                Ok(())
            } else {
                Err(format!("position {p:?}, offset {o:?}"))
            }
        },
    );
}

#[test]
fn advanced_drift_missing_and_untracked_on_the_test_bed() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    // kco against cluster a's first worker, named `e2e` (its snapshots: `snapshots/e2e/`).
    let env = TestEnv::new().args(&on(&a, "e2e"));
    let dir = env.path();
    let input = dir.join("in.txt");
    std::fs::write(&input, "one\ntwo\nthree\nfour\nfive\n").unwrap();
    let topic = unique_name("kco-diff");
    let (src, snk) = (unique_name("kco-diff-src"), unique_name("kco-diff-snk"));
    let src_guard = a.create(&src, file_source_config(&input, &topic));
    let _snk_guard = a.create(&snk, file_sink_config(&dir.join("out.txt"), &topic));
    wait_progress(&a, &src, &snk, &input, &topic, 24, 5);

    let (code, out, err) = env.kco(&["snapshot", &src, &snk]).parts();
    assert_eq!(code, 0, "{out}{err}");
    // The real FileStream connectors' offsets fit their shapes (schemas/shapes.yaml).
    let (code, out, err) = env.kco(&["validate"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("notice"), "both classes are known: {err}");
    let names = [src.as_str(), snk.as_str()];
    let (code, r) = json_diff(&env, &names);
    assert_eq!(code, 0, "{r}");
    assert_eq!(connector(&r, &snk)["status"], "in_sync");
    assert_eq!(connector(&r, &src)["status"], "in_sync");

    // Progress: three more lines (16 bytes) flow through both connectors.
    append_lines(&input, &["six".into(), "seven".into(), "eight".into()]);
    wait_progress(&a, &src, &snk, &input, &topic, 40, 8);
    // "Advanced" is a RUNNING connector's progress: a rebalance under way (another test
    // restarting a worker of cluster a) shows the connectors UNASSIGNED for a moment, and
    // their progress as drift. Read again once they run.
    let mut attempt = 0;
    let (code, r) = loop {
        a.wait_running(&src);
        a.wait_running(&snk);
        let (code, r) = json_diff(&env, &names);
        let running = [&src, &snk]
            .iter()
            .all(|n| connector(&r, n)["state"] == "RUNNING");
        attempt += 1;
        if running || attempt == 5 {
            break (code, r);
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
    };
    assert_eq!(code, 0, "advanced is not drift: {r}");
    let s = connector(&r, &snk);
    assert_eq!(s["status"], "advanced");
    let p = &s["partitions"][0];
    assert_eq!(
        p["partition"],
        json!({"kafka_topic": topic, "kafka_partition": 0})
    );
    assert_eq!(
        (
            &p["kind"],
            &p["direction"],
            &p["distance"],
            &p["unit"],
            &p["class"]
        ),
        (
            &json!("moved"),
            &json!("forward"),
            &json!(3),
            &json!("records"),
            &json!("advanced")
        )
    );
    let s = connector(&r, &src);
    assert_eq!(s["status"], "advanced");
    assert_eq!(s["partitions"][0]["distance"], 16);
    assert_eq!(s["partitions"][0]["unit"], "bytes");
    let (code, out, _) = env.kco(&["diff", &src, &snk]).parts();
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("{topic}/0: live ahead of file by 3 records")),
        "{out}"
    );
    assert!(out.contains("[ADVANCED]"), "{out}");

    let (code, r) = json_diff(&env, &[&src, &snk, "--fail-on", "any"]);
    assert_eq!(code, 2, "{r}");
    assert_eq!(r["summary"]["differences"], 2);

    // Behind kco's back: stop the sink and rewind it to 2 (the file says 5).
    a.stop(&snk);
    let partition = json!({"kafka_topic": topic, "kafka_partition": 0});
    let reply = a.patch_offsets(
        &snk,
        json!([{"partition": partition, "offset": {"kafka_offset": 2}}]),
    );
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let (code, r) = json_diff(&env, &names);
    assert_eq!(code, 2, "{r}");
    let s = connector(&r, &snk);
    assert_eq!(s["status"], "drifted");
    assert_eq!(s["state"], "STOPPED");
    let p = &s["partitions"][0];
    assert_eq!(p["partition"], partition);
    assert_eq!(p["before"], json!({"kafka_offset": 5}));
    assert_eq!(p["after"], json!({"kafka_offset": 2}));
    assert_eq!(
        (&p["direction"], &p["distance"], &p["class"]),
        (&json!("backward"), &json!(3), &json!("drift"))
    );
    let (code, out, _) = env.kco(&["diff", &src, &snk]).parts();
    assert_eq!(code, 2);
    assert!(
        out.contains(&format!("{topic}/0: live behind file by 3 records")),
        "{out}"
    );

    // A connector deleted on the cluster, one created without a file.
    drop(src_guard);
    let extra = unique_name("kco-diff-extra");
    let _extra_guard = a.create(&extra, file_sink_config(&dir.join("extra.txt"), &topic));
    // The create may have been forwarded to the leader: wait until this worker lists it and
    // no longer lists the deleted one. `GET /connectors?expand=status` (kco's listing)
    // leaves out a connector whose status this worker has not read yet, so wait for that
    // status too.
    wait_for("the worker's listing to catch up", WAIT, || {
        match (a.status(&extra).is_some(), a.has_connector(&src)) {
            (true, false) => Ok(()),
            seen => Err(format!("{seen:?}")),
        }
    });
    let (code, r) = json_diff(&env, &[]);
    assert_eq!(code, 2, "{r}");
    assert_eq!(connector(&r, &src)["status"], "missing");
    assert_eq!(connector(&r, &extra)["status"], "untracked");
    assert_eq!(connector(&r, &snk)["status"], "drifted");

    // Never a mutating request from diff: the sink is still stopped at 2.
    assert_eq!(a.status(&snk).unwrap()["connector"]["state"], "STOPPED");
    assert_eq!(sink_offset(&a.offsets(&snk), &topic), Some(2));
}
