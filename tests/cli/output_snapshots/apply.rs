//! `kco apply` (plan, report, no changes, a failure, `--as NEW --create`) and `kco reset`.

use super::{billing_in, sink_offsets, snap, source_offsets, Env, SINK, SOURCE};
use crate::fake_connect::{FakeConnect, Fault, State};

/// Snapshotted connectors that then moved on: `orders` (running sink) and `billing` (paused
/// source) progressed, `audit` (stopped sink) did not.
pub(super) fn moved_on() -> (Env, FakeConnect) {
    let env = Env::new();
    let fake = billing_in(State::Paused)
        .sink(
            "audit",
            SINK,
            State::Stopped,
            sink_offsets("audit", &[(0, 3)]),
        )
        .start();
    env.snapshot(&fake);
    fake.set_offsets("billing", source_offsets(12));
    let orders = sink_offsets("orders", &[(0, 1600), (1, 700), (2, 5)]);
    fake.set_offsets("orders", orders);
    (env, fake)
}

#[test]
fn plan_then_apply_then_nothing_to_do() {
    let (env, fake) = moved_on();
    snap!(
        "apply_dry_run",
        env.text_on(&fake, &["apply", "snapshots/a", "--dry-run"])
    );
    snap!(
        "apply_without_yes",
        env.text_on(&fake, &["apply", "snapshots/a"])
    );
    snap!(
        "apply_yes",
        env.text_on(&fake, &["apply", "snapshots/a", "--yes"])
    );
    snap!(
        "apply_no_changes",
        env.text_on(&fake, &["apply", "snapshots/a", "--yes"])
    );
}

#[test]
fn prune_removes_live_only_partitions() {
    let (env, fake) = moved_on();
    let args = ["apply", "snapshots/a/orders.yaml", "--prune", "--dry-run"];
    snap!("apply_prune_dry_run", env.text_on(&fake, &args));
}

#[test]
fn a_failed_patch_is_reported_and_the_state_put_back() {
    let (env, fake) = moved_on();
    fake.fault(Fault::on("PATCH", "/connectors/orders/offsets").respond(400, "bad offsets"));
    snap!(
        "apply_failure",
        env.text_on(&fake, &["apply", "snapshots/a", "--yes"])
    );
}

#[test]
fn as_new_name_with_create() {
    let env = Env::new();
    let fake = FakeConnect::builder()
        .source("billing", SOURCE, State::Running, source_offsets(9))
        .start();
    let out = env.text_on(&fake, &["snapshot", "--with-config"]);
    assert!(out.starts_with("exit: 0\n"), "{out}");
    let file = "snapshots/a/billing.yaml";
    let args = ["apply", file, "--as", "billing-v2", "--create"];
    snap!(
        "apply_create_dry_run",
        env.text_on(&fake, &[&args[..], &["--dry-run"]].concat())
    );
    snap!(
        "apply_create",
        env.text_on(&fake, &[&args[..], &["--yes"]].concat())
    );
}

#[test]
fn a_missing_connector_without_create() {
    let (env, fake) = moved_on();
    fake.remove_connector("audit");
    snap!(
        "apply_missing",
        env.text_on(&fake, &["apply", "snapshots/a", "--dry-run"])
    );
}

#[test]
fn reset_dry_run_then_yes() {
    let (env, fake) = moved_on();
    snap!(
        "reset_dry_run",
        env.text_on(&fake, &["reset", "orders", "audit", "--dry-run"])
    );
    snap!(
        "reset_yes",
        env.text_on(&fake, &["reset", "orders", "audit", "--yes"])
    );
}

/// `kco undo` of an apply's backup: the plan in undo's words, then the undo; as JSON too.
#[test]
fn undo_dry_run_then_yes_and_as_json() {
    let (env, fake) = moved_on();
    let out = env.text_on(
        &fake,
        &["apply", "snapshots/a", "--yes", "--backup-dir", "bk"],
    );
    assert!(out.starts_with("exit: 0\n"), "{out}");
    snap!(
        "undo_dry_run",
        env.text_on(&fake, &["undo", "bk", "--dry-run"])
    );
    snap!(
        "json_undo_dry_run",
        env.text_on(&fake, &["-o", "json", "undo", "bk", "--dry-run"])
    );
    snap!("undo_yes", env.text_on(&fake, &["undo", "bk", "--yes"]));
}

/// `kco recover`: nothing to do (text and JSON), then a journal left by a run whose resume the
/// worker refused, which recover cannot finish, and `--discard` forgets.
#[test]
fn recover_nothing_then_a_journal_then_discard() {
    let (env, fake) = moved_on();
    snap!("recover_nothing", env.text_on(&fake, &["recover"]));
    snap!(
        "json_recover_nothing",
        env.text_on(&fake, &["-o", "json", "recover"])
    );
    fake.fault(
        Fault::on("PUT", "/connectors/orders/resume")
            .always()
            .respond(403, "may not resume"),
    );
    let out = env.text_on(&fake, &["apply", "snapshots/a/orders.yaml", "--yes"]);
    assert!(out.starts_with("exit: 1\n"), "{out}");
    snap!("recover_failed", env.text_on(&fake, &["recover"]));
    snap!(
        "recover_discard",
        env.text_on(&fake, &["recover", "--discard"])
    );
    fake.clear_faults();
}
