//! Fault injection, delays, a down worker and concurrent clients.

use super::*;

#[test]
fn faults_fire_on_the_chosen_occurrences() {
    let fake = two_connectors();
    fake.fault(Fault::on("GET", "/connectors/*/status").nth(2).conflict());
    let statuses: Vec<u16> = (0..3)
        .map(|_| call(&fake, "GET", "/connectors/pg/status", None).0)
        .collect();
    assert_eq!(statuses, [200, 409, 200]);
    let conflict = fake
        .requests()
        .into_iter()
        .find(|r| r.status == Some(409))
        .unwrap();
    assert_eq!(conflict.path, "/connectors/pg/status");

    fake.set_state("s3", State::Stopped);
    fake.fault(
        Fault::on("PATCH", "/connectors/s3/offsets")
            .first(2)
            .retriable_500(),
    );
    let update = json!([{ "partition": { "kafka_topic": "t", "kafka_partition": 0 }, "offset": { "kafka_offset": 9 } }]);
    let first = patch(&fake, "s3", update.clone());
    assert_eq!(first.0, 500);
    assert!(first.1["message"]
        .as_str()
        .unwrap()
        .contains("can be safely retried"));
    assert_eq!(
        fake.offset("s3", &update[0]["partition"]),
        Some(json!({ "kafka_offset": 5 })),
        "not applied"
    );
    assert_eq!(patch(&fake, "s3", update.clone()).0, 500);
    assert_eq!(patch(&fake, "s3", update), altered());

    fake.clear_faults();
    fake.fault(Fault::on("*", "*").respond(503, "busy"));
    assert_eq!(call(&fake, "GET", "/", None), err(503, "busy"));
    assert_eq!(STALE_CONFIG, "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)");
}

#[test]
fn applied_then_timeout_changes_state_but_reports_500() {
    let fake = two_connectors();
    fake.fault(
        Fault::on("PUT", "/connectors/pg/stop")
            .nth(1)
            .applied_then_timeout(),
    );
    assert_eq!(
        call(&fake, "PUT", "/connectors/pg/stop", None),
        err(500, REQUEST_TIMED_OUT)
    );
    assert_eq!(fake.state("pg"), Some(State::Stopped));
}

#[test]
fn dropped_connections_are_transport_errors() {
    let fake = two_connectors();
    fake.fault(
        Fault::on("PUT", "/connectors/pg/stop")
            .nth(1)
            .drop_connection(),
    );
    fake.fault(
        Fault::on("PUT", "/connectors/pg/stop")
            .nth(2)
            .apply_then_drop(),
    );
    let url = format!("{}/connectors/pg/stop", fake.url());
    assert!(client().put(&url).send().is_err());
    assert_eq!(
        fake.state("pg"),
        Some(State::Running),
        "dropped before handling"
    );
    assert!(client().put(&url).send().is_err());
    assert_eq!(
        fake.state("pg"),
        Some(State::Stopped),
        "handled, then dropped"
    );
    let stops: Vec<Option<u16>> = fake.requests().iter().map(|r| r.status).collect();
    assert_eq!(stops, [None, None]);
}

#[test]
fn a_delayed_request_does_not_block_others() {
    let fake = two_connectors();
    fake.fault(Fault::on("GET", "/connectors/pg/status").delay_ms(1500));
    let url = format!("{}/connectors/pg/status", fake.url());
    let slow = thread::spawn(move || {
        let started = Instant::now();
        let status = client().get(url).send().unwrap().status().as_u16();
        (status, started.elapsed())
    });
    thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    assert_eq!(call(&fake, "GET", "/connectors", None).0, 200);
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "served while the slow one waits"
    );
    let (status, elapsed) = slow.join().unwrap();
    assert_eq!(status, 200);
    assert!(elapsed >= Duration::from_millis(1500));
}

#[test]
fn a_down_worker_refuses_connections_until_up() {
    let fake = two_connectors();
    let client = client();
    assert_eq!(send(&client, &fake, "GET", "/", None).0, 200);
    fake.down();
    assert!(!fake.is_up());
    let error = client.get(format!("{}/", fake.url())).send().unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    fake.up();
    assert_eq!(
        send(&client, &fake, "GET", "/", None).0,
        200,
        "same URL, same client"
    );
}

#[test]
fn concurrent_clients_are_all_served() {
    let fake = two_connectors();
    let url = fake.url();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let url = url.clone();
            thread::spawn(move || {
                let client = client();
                (0..20).all(|_| {
                    client
                        .get(format!("{url}/connectors/pg/offsets"))
                        .send()
                        .unwrap()
                        .status()
                        == 200
                })
            })
        })
        .collect();
    assert!(workers.into_iter().all(|w| w.join().unwrap()));
    assert_eq!(fake.count("GET", "/connectors/pg/offsets"), 160);
}

#[test]
fn a_fault_that_never_fires_fails_the_test() {
    // A mistyped route ("offset" for "offsets") matches nothing: the fake must not stay green.
    let fake = two_connectors();
    fake.fault(Fault::on("PATCH", "/connectors/s3/offset").conflict());
    call(&fake, "GET", "/connectors/s3/offsets", None);
    let verdict = catch_unwind(AssertUnwindSafe(|| fake.verify()));
    let message = *verdict.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("fault on PATCH /connectors/s3/offset (Always) never fired"),
        "{message}"
    );
    // Dropping it would panic again: the test ends with the rule removed.
    fake.clear_faults();
}

#[test]
fn in_process_clients_share_the_rules_the_faults_and_the_log() {
    let fake = FakeConnect::builder()
        .source("pg", PG, State::Running, json!([]))
        .in_process();
    let client = fake.client();
    fake.fault(
        Fault::on("PATCH", "/connectors/pg/offsets")
            .nth(2)
            .conflict(),
    );
    let e = client.patch_offsets("pg", &[]).unwrap_err();
    assert_eq!(e.status(), Some(400), "PATCH needs STOPPED: {e}");
    client.stop("pg").unwrap();
    let e = client.patch_offsets("pg", &[]).unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    fake.down();
    assert!(client.status("pg").unwrap_err().is_unreachable());
    fake.up();
    let logged: Vec<String> = fake.requests().iter().map(|r| r.to_string()).collect();
    assert_eq!(logged.len(), 3, "{logged:?}");
}
