//! A fault at every step of an apply, through the real binary and HTTP: whatever fails,
//! the connector ends in the state it was in before (or the report says it could not), and
//! the exit code says whether the apply converged.

use std::path::Path;

use crate::fake_connect::{Fault, State, LEADER_REFUSED, LEADER_RESET, LEADER_STARTING};
use crate::support::data::{sink_offset as offsets, SnapshotFile, SINK};
use crate::support::fakes::sink_s;
use crate::support::run::Kco;

fn write_file(dir: &Path) -> String {
    let path = SnapshotFile::sink("s", offsets(5))
        .class(SINK)
        .write_in(dir);
    path.to_string_lossy().into_owned()
}

/// What the apply must end with: exit code, state, the offset the connector holds afterwards
/// (100 untouched, 5 applied), and text the output must contain.
struct Expect(i32, State, i64, &'static str);

fn case(prior: State, fault: Fault, want: Expect) {
    case_of_faults(prior, vec![fault], want)
}

fn case_of_faults(prior: State, faults: Vec<Fault>, want: Expect) {
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path());
    let fake = faults
        .into_iter()
        .fold(sink_s(prior), |fake, fault| fake.fault(fault))
        .start();
    let r = Kco::new(dir.path())
        .on(&fake)
        .args(["apply", &file, "--yes", "--wait-timeout", "3", "-v"])
        .run();
    let all = format!("{}{}", r.stdout, r.stderr);
    let Expect(exit, state, offset, says) = want;
    assert_eq!(r.code, exit, "{all}");
    assert_eq!(fake.state("s"), Some(state), "{all}");
    assert_eq!(fake.offsets("s"), offsets(offset), "{all}");
    assert!(all.contains(says), "missing `{says}` in:\n{all}");
}

const FAIL: &str = "boom: not retryable";

#[test]
fn stop_fails() {
    let fault = Fault::on("PUT", "/connectors/s/stop").respond(500, FAIL);
    let says = "failed at stop";
    case(State::Running, fault, Expect(1, State::Running, 100, says));
}

#[test]
fn stop_conflicts_during_a_rebalance_then_succeeds() {
    let fault = Fault::on("PUT", "/connectors/s/stop").first(2).conflict();
    let says = "offsets applied and verified";
    case(State::Running, fault, Expect(0, State::Running, 5, says));
}

#[test]
fn stop_is_forwarded_to_a_leader_that_is_down_then_starting_then_succeeds() {
    let stop = || Fault::on("PUT", "/connectors/s/stop");
    let faults = vec![
        stop().first(2).respond(500, LEADER_REFUSED),
        stop().nth(3).respond(500, LEADER_STARTING),
    ];
    let says = "offsets applied and verified";
    case_of_faults(State::Running, faults, Expect(0, State::Running, 5, says));
}

#[test]
fn stop_reaches_the_leader_but_the_forward_breaks_and_the_state_is_put_back() {
    let fault = Fault::on("PUT", "/connectors/s/stop")
        .nth(1)
        .apply_then_respond(500, LEADER_RESET);
    let says = "offsets applied and verified";
    case(State::Running, fault, Expect(0, State::Running, 5, says));
}

#[test]
fn patch_is_rejected() {
    let fault = Fault::on("PATCH", "/connectors/s/offsets").respond(400, FAIL);
    let says = "failed at patch";
    case(State::Running, fault, Expect(1, State::Running, 100, says));
}

#[test]
fn patch_times_out_after_taking_effect() {
    let fault = Fault::on("PATCH", "/connectors/s/offsets")
        .nth(1)
        .apply_then_respond(500, "Request timed out");
    let says = "offsets applied and verified";
    case(State::Running, fault, Expect(0, State::Running, 5, says));
}

#[test]
fn patch_connection_drops_before_taking_effect() {
    let fault = Fault::on("PATCH", "/connectors/s/offsets")
        .nth(1)
        .drop_connection();
    let says = "offsets applied and verified";
    case(State::Running, fault, Expect(0, State::Running, 5, says));
}

#[test]
fn patch_safely_retried_500() {
    let fault = Fault::on("PATCH", "/connectors/s/offsets")
        .first(2)
        .retriable_500();
    let says = "offsets applied and verified";
    case(State::Paused, fault, Expect(0, State::Paused, 5, says));
}

#[test]
fn verify_read_fails_and_the_state_is_still_put_back() {
    // Offsets are read by the plan, again once stopped, then to verify.
    let fault = Fault::on("GET", "/connectors/s/offsets")
        .nth_and_later(3)
        .respond(500, FAIL);
    let says = "failed at verify";
    case(State::Running, fault, Expect(1, State::Running, 5, says));
}

#[test]
fn pause_back_fails_for_a_paused_connector() {
    let fault = Fault::on("PUT", "/connectors/s/pause").respond(500, FAIL);
    let says = "could not be put back";
    case(State::Paused, fault, Expect(1, State::Stopped, 5, says));
}

#[test]
fn resume_fails_and_the_report_says_the_connector_is_stopped() {
    let fault = Fault::on("PUT", "/connectors/s/resume").respond(500, FAIL);
    let says = "could not be put back";
    case(State::Running, fault, Expect(1, State::Stopped, 5, says));
}

#[test]
fn a_stopped_connector_stays_stopped_when_patch_fails() {
    let fault = Fault::on("PATCH", "/connectors/s/offsets").respond(400, FAIL);
    let says = "failed at patch";
    case(State::Stopped, fault, Expect(1, State::Stopped, 100, says));
}

#[test]
fn patch_connection_drops_after_taking_effect() {
    let fault = Fault::on("PATCH", "/connectors/s/offsets")
        .nth(1)
        .apply_then_drop();
    let says = "read back: already applied";
    case(State::Running, fault, Expect(0, State::Running, 5, says));
}
