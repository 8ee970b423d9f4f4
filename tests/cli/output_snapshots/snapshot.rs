//! `kco snapshot`: first run, an unchanged second run, a connector that cannot be read, and
//! stale files.

use super::{billing_and_orders, snap, Env};
use crate::fake_connect::Fault;

#[test]
fn first_run_then_unchanged() {
    let env = Env::new();
    let fake = billing_and_orders();
    snap!("snapshot_first_run", env.text_on(&fake, &["snapshot"]));
    snap!("snapshot_unchanged", env.text_on(&fake, &["snapshot"]));
}

#[test]
fn a_connector_that_cannot_be_read() {
    let env = Env::new();
    let fake = billing_and_orders();
    fake.fault(Fault::on("GET", "/connectors/orders/offsets").respond(500, "kaput"));
    snap!("snapshot_with_failure", env.text_on(&fake, &["snapshot"]));
}

#[test]
fn stale_files_then_prune() {
    let env = Env::new();
    let fake = billing_and_orders();
    env.snapshot(&fake);
    fake.remove_connector("billing");
    snap!("snapshot_stale", env.text_on(&fake, &["snapshot"]));
    snap!(
        "snapshot_prune",
        env.text_on(&fake, &["snapshot", "--prune"])
    );
}
