//! Request recording and expectations.

use super::*;

#[test]
fn requests_are_recorded_with_bodies_and_statuses() {
    let fake = two_connectors();
    call(&fake, "GET", "/connectors?expand=status&expand=info", None);
    call(&fake, "PUT", "/connectors/pg/stop", None);
    let body = json!([{ "partition": { "server": "a" }, "offset": null }]);
    patch(&fake, "pg", body.clone());
    let log = fake.requests();
    assert_eq!(log.len(), 3);
    assert_eq!(
        (log[0].method.as_str(), log[0].path.as_str()),
        ("GET", "/connectors?expand=status&expand=info")
    );
    assert_eq!(log[0].body, None);
    assert_eq!(log[2].body, Some(json!({ "offsets": body })));
    assert_eq!(log[2].status, Some(400));
    let mutating: Vec<String> = fake
        .mutating_requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        mutating,
        ["PUT /connectors/pg/stop", "PATCH /connectors/pg/offsets"]
    );
    assert_eq!(fake.count("*", "/connectors/pg/*"), 2);
    assert_eq!(
        fake.count("GET", "/connectors"),
        0,
        "exact match includes the query"
    );
    assert_eq!(fake.count("GET", "/connectors?*"), 1);
    fake.clear_requests();
    fake.assert_no_mutations();
}

#[test]
fn verify_reports_unmet_expectations() {
    let fake = two_connectors();
    fake.expect("PUT", "/connectors/pg/stop");
    fake.expect_times("PATCH", "*", 0);
    let failure = catch_unwind(AssertUnwindSafe(|| fake.verify())).unwrap_err();
    let message = failure.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("expected PUT /connectors/pg/stop at least once"),
        "{message}"
    );
    call(&fake, "PUT", "/connectors/pg/stop", None);
    fake.verify();
    let mutations = catch_unwind(AssertUnwindSafe(|| fake.assert_no_mutations()));
    assert!(mutations.is_err());
}

#[test]
#[should_panic(expected = "unmet expectations")]
fn dropping_the_fake_checks_expectations() {
    let fake = FakeConnect::start();
    fake.expect_times("GET", "/", 1);
}
