//! Every `--output json` shape of docs/json.md, pinned like the text output (same filters):
//! snapshot, diff (live and `--base`), apply (plan and report), reset, validate, fmt, ls,
//! import, and an error.

use super::apply::moved_on;
use super::diff_base::repo;
use super::{billing_and_orders, snap, Env};

#[test]
fn snapshot_diff_and_ls() {
    let env = Env::new();
    let fake = billing_and_orders();
    snap!(
        "json_snapshot",
        env.text_on(&fake, &["snapshot", "-o", "json"])
    );
    let (env, fake) = moved_on();
    snap!("json_diff", env.text_on(&fake, &["diff", "-o", "json"]));
    snap!("json_ls", env.text_on(&fake, &["ls", "-o", "json"]));
}

#[test]
fn diff_base() {
    let (env, _fake) = repo();
    snap!(
        "json_diff_base",
        env.text(&["diff", "--base", "HEAD~1", "-o", "json"])
    );
}

#[test]
fn apply_plan_report_and_reset() {
    let (env, fake) = moved_on();
    let plan = ["apply", "snapshots/a", "--dry-run", "-o", "json"];
    snap!("json_apply_plan", env.text_on(&fake, &plan));
    let apply = ["apply", "snapshots/a", "--yes", "-o", "json"];
    snap!("json_apply_report", env.text_on(&fake, &apply));
    snap!(
        "json_reset",
        env.text_on(&fake, &["reset", "audit", "--yes", "-o", "json"])
    );
}

#[test]
fn offline_commands_and_an_error() {
    let env = Env::new();
    let fake = billing_and_orders();
    env.snapshot(&fake);
    env.edit(
        "snapshots/a/orders.yaml",
        "kafka_offset: 700",
        "kafka_offset: 701",
    );
    snap!("json_validate", env.text(&["validate", "-o", "json"]));
    snap!(
        "json_fmt",
        env.text(&["fmt", "snapshots/a/orders.yaml", "-o", "json"])
    );
    env.write(
        "orders.json",
        r#"{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":4}}]}"#,
    );
    let import = [
        "import",
        "--from",
        "json",
        "orders.json",
        "--name",
        "pay",
        "--cluster",
        "a",
    ];
    snap!(
        "json_import",
        env.text(&[&import[..], &["-o", "json"]].concat())
    );
    snap!(
        "json_error",
        env.text_on(&fake, &["snapshot", "nope", "-o", "json"])
    );
}
