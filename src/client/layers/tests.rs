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

/// Answers each request with the next of `answers` (status, message, Retry-After), then 200.
struct Scripted {
    answers: Mutex<Vec<(u16, &'static str, Option<Duration>)>>,
    sent: Mutex<u32>,
}

impl Scripted {
    fn new(mut answers: Vec<(u16, &'static str, Option<Duration>)>) -> Self {
        answers.reverse();
        Scripted {
            answers: Mutex::new(answers),
            sent: Mutex::new(0),
        }
    }
    fn sent(&self) -> u32 {
        *self.sent.lock().unwrap()
    }
}

impl Transport for Scripted {
    fn send(&self, req: &Request) -> Result<Body> {
        *self.sent.lock().unwrap() += 1;
        let url = format!("http://svc{}", req.path);
        match self.answers.lock().unwrap().pop() {
            // Status 0: nobody answers there.
            Some((0, reason, _)) => Err(crate::client::ClientError::transport(
                req, &url, reason, false, false,
            )),
            Some((status, message, after)) => {
                Err(crate::client::ClientError::http(req, &url, status, message)
                    .with_retry_after(after))
            }
            None => crate::client::transport::decode_response(req, &url, 200, "{}".into()),
        }
    }
    fn endpoint(&self) -> String {
        "http://svc".into()
    }
}

#[test]
fn a_429_is_sent_again_no_sooner_than_its_retry_after() {
    let clock = crate::wait::ManualClock::default();
    let svc = Scripted::new(vec![(
        429,
        "Too Many Requests",
        Some(Duration::from_secs(3)),
    )]);
    let req = Request::new(Method::Get, "/connectors/c/offsets");
    fast()
        .run_on(&clock, true, &|_| false, || svc.send(&req))
        .expect("the second attempt succeeds");
    assert_eq!(svc.sent(), 2);
    assert!(
        clock.elapsed() >= Duration::from_secs(3),
        "{:?}",
        clock.elapsed()
    );
    assert!(
        clock.elapsed() < Duration::from_secs(4),
        "{:?}",
        clock.elapsed()
    );
}

#[test]
fn a_retry_after_past_the_deadline_fails_at_once_with_the_429() {
    let clock = crate::wait::ManualClock::default();
    let svc = Scripted::new(vec![(429, "slow down", Some(Duration::from_secs(60)))]);
    let req = Request::new(Method::Get, "/connectors");
    let e = fast()
        .run_on(&clock, true, &|_| false, || svc.send(&req))
        .unwrap_err();
    assert_eq!(e.status(), Some(429));
    assert_eq!(svc.sent(), 1);
    assert_eq!(clock.elapsed(), Duration::ZERO);
}

#[test]
fn a_second_alter_while_one_is_pending_is_not_retried_and_says_why() {
    let clock = crate::wait::ManualClock::default();
    let svc = Scripted::new(vec![(409, "Conflict", None)]);
    let req = Request::new(Method::Post, "/connectors/c/offsets/request").about("c");
    let e = fast()
        .run_on(&clock, false, &|_| false, || svc.send(&req))
        .unwrap_err();
    assert_eq!(svc.sent(), 1, "no retry storm");
    assert_eq!(e.problem(), Some(crate::client::Problem::RequestPending));
    assert!(
        e.to_string()
            .contains("already has an offsets request pending"),
        "{e}"
    );
    // A rebalance's 409 elsewhere is still retried.
    let svc = Scripted::new(vec![(409, "Cannot complete request momentarily", None)]);
    let elsewhere = Request::new(Method::Put, "/connectors/c/stop").about("c");
    fast()
        .run_on(&clock, false, &|_| false, || svc.send(&elsewhere))
        .unwrap();
    assert_eq!(svc.sent(), 2);
}

#[test]
fn a_refused_key_is_named_by_the_credentials_layer_and_other_errors_are_left_alone() {
    let svc = Scripted::new(vec![
        (401, "Unauthorized", None),
        (404, "no such connector", None),
    ]);
    let layer = ServiceHints::new(svc, "Confluent Cloud refused API key `K1`", "unreachable");
    let req = Request::new(Method::Get, "/connectors");
    let e = layer.send(&req).unwrap_err();
    assert_eq!(
        e.hint.as_deref().map(String::as_str),
        Some("Confluent Cloud refused API key `K1`")
    );
    let e = layer.send(&req).unwrap_err();
    assert_eq!(e.hint, None);
}

#[test]
fn an_endpoint_that_never_answered_fails_at_once_then_is_retried_once_it_has() {
    let svc = Scripted::new(vec![(0, "connection refused", None)]);
    let layer = Retrying::new(svc, fast()).unreachable_fails_first();
    let req = Request::new(Method::Get, "/connectors");
    let e = layer.send(&req).unwrap_err();
    assert!(e.is_unreachable());
    assert_eq!(layer.inner.sent(), 1, "not waited for");
    // It answered (200) at the next request; a later blip is retried as usual.
    layer.send(&req).unwrap();
    let svc = Scripted::new(vec![(401, "Unauthorized", None), (0, "reset", None)]);
    let layer = Retrying::new(svc, fast()).unreachable_fails_first();
    assert_eq!(layer.send(&req).unwrap_err().status(), Some(401));
    layer
        .send(&req)
        .expect("the blip after an answer is retried");
    assert_eq!(layer.inner.sent(), 3);
    let hinted = ServiceHints::new(
        Scripted::new(vec![(0, "connection refused", None)]),
        "refused",
        "nobody at the endpoint",
    );
    let e = hinted.send(&req).unwrap_err();
    assert_eq!(
        e.hint.as_deref().map(String::as_str),
        Some("nobody at the endpoint")
    );
}
