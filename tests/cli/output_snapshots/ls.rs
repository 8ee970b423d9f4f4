//! `kco ls`: every connector with its file's status, as a table; and its JSON shape.

use super::{billing_in, sink_offsets, snap, source_offsets, Env, SINK, SOURCE};
use crate::fake_connect::{ConnectorSpec, FakeConnect, State};
use crate::support::run::Kco;

/// In sync, advanced, drifted, missing and untracked, on one cluster.
fn cluster() -> (Env, FakeConnect) {
    let env = Env::new();
    let fake = billing_in(State::Running)
        .source("cdc", SOURCE, State::Stopped, source_offsets(50))
        .sink(
            "legacy",
            SINK,
            State::Paused,
            sink_offsets("old", &[(0, 1)]),
        )
        .start();
    env.snapshot(&fake);
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 1600), (1, 700), (2, 5)]),
    );
    fake.set_offsets("cdc", source_offsets(40));
    fake.remove_connector("legacy");
    fake.add_connector(ConnectorSpec::sink("fresh", SINK).state(State::Paused));
    (env, fake)
}

#[test]
fn ls_table() {
    let (env, fake) = cluster();
    snap!("ls", env.text_on(&fake, &["ls"]));
    fake.assert_no_mutations();
}

#[test]
fn ls_json_shape() {
    let (env, fake) = cluster();
    let out = Kco::new(env.path())
        .on(&fake)
        .args(["ls", "-o", "json"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["cluster"], "a");
    let orders = &v["connectors"][4];
    assert_eq!(
        orders,
        &serde_json::json!({"name": "orders", "type": "sink", "state": "RUNNING", "tasks": 1,
            "tasks_running": 1, "partitions": 3, "file": "snapshots/a/orders.yaml",
            "status": "advanced"})
    );
    let statuses: Vec<&str> = v["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["in_sync", "drifted", "untracked", "missing", "advanced"]
    );
}
