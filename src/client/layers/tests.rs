//! The layers over the fake's in-process transport, with faults injected.

use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::client::transport::Method;
use crate::fake::{FakeConnect, Fault, State};

fn fast() -> RetryPolicy {
    RetryPolicy(WaitPolicy {
        timeout: Duration::from_secs(5),
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
    })
}

/// Connector `c`, stopped, so that its offsets may be altered.
fn fake() -> FakeConnect {
    let offsets = json!([{"partition": {"f": "x"}, "offset": {"p": 1}}]);
    FakeConnect::builder()
        .source("c", "K", State::Stopped, offsets)
        .in_process()
}

fn patch() -> Request {
    let body = json!({"offsets": [{"partition": {"f": "x"}, "offset": {"p": 2}}]});
    Request::new(Method::Patch, "/connectors/c/offsets")
        .body(body)
        .about("c")
}

#[test]
fn retries_rebalance_conflicts_until_success() {
    let fake = fake();
    fake.fault(
        Fault::on("PATCH", "/connectors/c/offsets")
            .first(2)
            .conflict(),
    );
    let got = Retrying::new(fake.transport(), fast()).send(&patch());
    assert!(got.unwrap().value()["message"]
        .as_str()
        .unwrap()
        .contains("altered"));
    assert_eq!(fake.count("PATCH", "/connectors/c/offsets"), 3);
}

#[test]
fn does_not_retry_client_errors_taken_names_or_mutating_timeouts() {
    for (status, message) in [
        (400, "Connectors must be in the STOPPED state"),
        (409, "Connector c already exists"),
        (500, "Request timed out"),
    ] {
        let fake = fake();
        let rule = Fault::on("PATCH", "/connectors/c/offsets").nth(1);
        fake.fault(rule.respond(status, message));
        let e = Retrying::new(fake.transport(), fast())
            .send(&patch())
            .unwrap_err();
        assert_eq!(e.message(), Some(message));
        assert_eq!(fake.count("PATCH", "*"), 1, "{message}");
    }
    let fake = fake();
    fake.fault(Fault::on("PATCH", "*").nth(1).drop_connection());
    let e = Retrying::new(fake.transport(), fast())
        .send(&patch())
        .unwrap_err();
    assert!(e.outcome_unknown(), "{e}");
    assert_eq!(fake.count("PATCH", "*"), 1);
}

#[test]
fn retries_safe_500_and_idempotent_timeouts() {
    let fake = fake();
    let stop = "/connectors/c/stop";
    fake.fault(Fault::on("PUT", stop).nth(1).timeout());
    fake.fault(Fault::on("PUT", stop).nth(2).drop_connection());
    fake.fault(Fault::on("PUT", stop).nth(3).retriable_500());
    let req = Request::new(Method::Put, stop).about("c");
    Retrying::new(fake.transport(), fast()).send(&req).unwrap();
    assert_eq!(fake.count("PUT", stop), 4);
}

#[test]
fn gives_up_at_the_deadline_with_the_last_error() {
    let p = RetryPolicy(WaitPolicy {
        timeout: Duration::from_millis(30),
        first_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(5),
    });
    let fake = fake();
    fake.fault(Fault::on("PATCH", "*").conflict());
    let e = Retrying::new(fake.transport(), p)
        .send(&patch())
        .unwrap_err();
    assert_eq!(e.status(), Some(409));
    let sent = fake.count("PATCH", "*");
    assert!((2..20).contains(&sent), "{sent}");
    fake.clear_requests();
    Retrying::new(fake.transport(), RetryPolicy::none())
        .send(&patch())
        .unwrap_err();
    assert_eq!(fake.count("PATCH", "*"), 1);
}

#[test]
fn counting_counts_mutating_requests_only_and_tracing_reports_each_attempt() {
    let fake = fake();
    fake.fault(Fault::on("PATCH", "*").nth(1).conflict());
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink_lines = lines.clone();
    let sink: TraceSink = Box::new(move |l| sink_lines.lock().unwrap().push(l.to_string()));
    let counter = Counter::default();
    let traced = Retrying::new(Traced::new(fake.transport(), sink), fast());
    let t = Counting::new(traced, counter.clone());
    t.send(&Request::new(Method::Get, "/connectors/c/offsets"))
        .unwrap();
    t.send(&patch()).unwrap();
    assert_eq!(counter.get(), 1, "one PATCH, however many attempts");
    let lines = lines.lock().unwrap();
    assert!(
        lines[0].starts_with("GET /connectors/c/offsets: ok ("),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("PATCH /connectors/c/offsets: HTTP 409: Cannot complete"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("PATCH /connectors/c/offsets: ok ("),
        "{lines:?}"
    );
}
