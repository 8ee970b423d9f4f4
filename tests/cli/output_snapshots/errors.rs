//! What a user sees when something is wrong: an unreachable cluster, an old Connect, unknown
//! connectors and clusters, bad files, bad flags.

use super::{billing_and_orders, snap, Env};
use crate::fake_connect::{FakeConnect, State};

/// A URL on which nothing listens.
fn nowhere() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

#[test]
fn unreachable_cluster() {
    // Only `snapshot` fails fast; `diff` and `apply` retry for about a minute first.
    let env = Env::new();
    let url = nowhere();
    snap!(
        "error_unreachable_snapshot",
        env.text(&["--url", &url, "snapshot"])
    );
}

#[test]
fn connect_too_old() {
    let env = Env::new();
    let fake = FakeConnect::builder()
        .version("3.4.1")
        .source("c", super::SOURCE, State::Running, serde_json::json!([]))
        .start();
    snap!("error_connect_too_old", env.text_on(&fake, &["snapshot"]));
}

#[test]
fn unknown_connector() {
    let env = Env::new();
    let fake = billing_and_orders();
    snap!(
        "error_unknown_connector_snapshot",
        env.text_on(&fake, &["snapshot", "nope"])
    );
    snap!(
        "error_unknown_connector_reset",
        env.text_on(&fake, &["reset", "nope", "--yes"])
    );
    env.snapshot(&fake);
    snap!(
        "error_unknown_connector_diff",
        env.text_on(&fake, &["diff", "nope"])
    );
}

#[test]
fn unknown_cluster_and_bad_config() {
    // (No cluster at all means http://localhost:8083, which another program on the machine
    // may answer: that case is left to tests with a URL of their own.)
    let env = Env::new();
    env.write(
        "kco.yaml",
        "clusters:\n  a:\n    urls: [http://localhost:1]\n",
    );
    snap!(
        "error_unknown_cluster",
        env.text(&["--cluster", "prod", "snapshot"])
    );
    env.write(
        "kco.yaml",
        "clusters:\n  a:\n    urlz: [http://localhost:1]\n",
    );
    snap!("error_bad_config", env.text(&["snapshot"]));
}

#[test]
fn bad_files() {
    let env = Env::new();
    let fake = billing_and_orders();
    env.snapshot(&fake);
    let two = ["apply", "snapshots/a", "--as", "z", "--yes"];
    snap!("error_as_with_two_files", env.text_on(&fake, &two));
    env.edit(
        "snapshots/a/orders.yaml",
        "kafka_offset: 700",
        "kafka_offset: 7",
    );
    let bad = "snapshots/a/orders.yaml";
    snap!(
        "error_bad_file_apply",
        env.text_on(&fake, &["apply", bad, "--yes"])
    );
    snap!("error_bad_file_diff", env.text_on(&fake, &["diff", bad]));
    snap!(
        "error_no_such_file",
        env.text_on(&fake, &["apply", "nope.yaml", "--yes"])
    );
}

#[test]
fn usage_errors() {
    let env = Env::new();
    snap!(
        "error_unknown_flag",
        env.text(&["snapshot", "--no-such-flag"])
    );
    snap!(
        "error_markdown_outside_diff",
        env.text(&["-o", "markdown", "validate"])
    );
    snap!("error_apply_without_paths", env.text(&["apply"]));
}
