//! apply, reset, undo and recover on a `confluentCloud:` cluster, against the fake in
//! Confluent Cloud mode over HTTP: the plan says the service pauses and resumes the connector
//! itself, no stop is sent, each change is one alter request whose status is read, and a
//! request left pending is recovered by reading its status, not by sending another.

use std::path::Path;

use serde_json::json;

use crate::fake_connect::{FakeConnect, FakeConnectBuilder, State};
use crate::support::data::{sink_offset as offsets, SnapshotFile, SINK};
use crate::support::env::TestEnv;
use crate::support::run::{Kco, FIXED_NOW};

const ENV: &str = "env-abc123";
const LKC: &str = "lkc-xyz789";

/// The fake as Confluent Cloud, with sink `c` RUNNING at offset 100 of `t-0`.
fn cloud(tune: impl FnOnce(FakeConnectBuilder) -> FakeConnectBuilder) -> FakeConnect {
    let b = FakeConnect::builder()
        .confluent_cloud(ENV, LKC)
        .clock_at(FIXED_NOW)
        .api_key("KEY", "SECRET")
        .sink("c", SINK, State::Running, offsets(100));
    tune(b).start()
}

/// A project in `dir`: kco.yaml naming the fake as cluster `a`, and `files/c.yaml` at `offset`.
fn project(dir: &Path, fake: &FakeConnect, offset: i64) {
    let yaml = format!(
        "clusters:\n  a:\n    confluentCloud:\n      environment: {ENV}\n      kafkaCluster: {LKC}\n      apiKey: ${{env:CC_KEY}}\n      apiSecret: ${{env:CC_SECRET}}\n      endpoint: {}\n",
        fake.url()
    );
    std::fs::write(dir.join("kco.yaml"), yaml).unwrap();
    SnapshotFile::sink("c", offsets(offset))
        .class(SINK)
        .write_in(&dir.join("files"));
}

/// A test environment with the API key in its variables, on cluster `a`.
fn cloud_env() -> TestEnv {
    TestEnv::new()
        .envs(&[("CC_KEY", "KEY"), ("CC_SECRET", "SECRET")])
        .args(&["--cluster", "a"])
}

/// The non-GET requests the fake got, as `METHOD /connectors/...`.
fn mutating(fake: &FakeConnect) -> Vec<String> {
    let base = format!("/connect/v1/environments/{ENV}/clusters/{LKC}");
    fake.mutating_requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path.trim_start_matches(&base)))
        .collect()
}

fn offset_of(fake: &FakeConnect) -> serde_json::Value {
    fake.offset("c", &json!({"kafka_topic": "t", "kafka_partition": 0}))
        .unwrap_or(serde_json::Value::Null)
}

#[test]
fn apply_plans_sends_one_request_and_never_a_stop_then_undo_puts_it_back() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);

    let (code, out) = t.kco(&["apply", "files", "--dry-run"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    let header = format!(
        "Plan for cluster a ({}/connect/v1/environments/{ENV}/clusters/{LKC}, Confluent Cloud):",
        fake.url()
    );
    assert!(out.contains(&header), "{out}");
    assert!(
        out.contains(
            "c (sink, RUNNING): patch 1 partition; Confluent Cloud pauses and resumes it itself while the offsets change"
        ),
        "{out}"
    );
    fake.assert_no_mutations();

    let (code, out) = t
        .kco(&["apply", "files", "--yes", "--backup-dir", "bk"])
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ok c: offsets applied and verified; RUNNING"),
        "{out}"
    );
    assert_eq!(mutating(&fake), ["POST /connectors/c/offsets/request"]);
    assert_eq!(offset_of(&fake), json!({"kafka_offset": 40}));
    assert_eq!(fake.state("c"), Some(State::Running));

    fake.clear_requests();
    let (code, out) = t.kco(&["undo", "bk", "--yes"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert_eq!(mutating(&fake), ["POST /connectors/c/offsets/request"]);
    assert_eq!(offset_of(&fake), json!({"kafka_offset": 100}));
    assert_eq!(fake.state("c"), Some(State::Running));
}

/// The undo goes to the endpoint kco.yaml configures now, not to the one the backup was
/// taken through: Confluent Cloud's environment and cluster ids name the connectors
/// (issue 34).
#[test]
fn undo_goes_to_the_configured_endpoint_whichever_the_backup_was_taken_through() {
    let t = cloud_env();
    let before = cloud(|b| b);
    project(t.path(), &before, 40);
    let (code, out) = t
        .kco(&["apply", "files", "--yes", "--backup-dir", "bk"])
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    // The service is now reached through another endpoint (where the connector is at 40).
    let now = FakeConnect::builder()
        .confluent_cloud(ENV, LKC)
        .clock_at(FIXED_NOW)
        .api_key("KEY", "SECRET")
        .sink("c", SINK, State::Running, offsets(40))
        .start();
    project(t.path(), &now, 40);
    before.clear_requests();
    let (code, out) = t.kco(&["undo", "bk", "--yes"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "The backup was taken through {}/connect/v1/environments/{ENV}/clusters/{LKC}; the undo goes to cluster `a`'s Confluent Cloud endpoint in kco.yaml, {}/connect/",
            before.url(),
            now.url()
        )),
        "{out}"
    );
    assert_eq!(mutating(&now), ["POST /connectors/c/offsets/request"]);
    assert_eq!(
        now.offset("c", &json!({"kafka_topic": "t", "kafka_partition": 0})),
        Some(json!({"kafka_offset": 100}))
    );
    assert!(before.requests().is_empty(), "{:?}", before.requests());
}

#[test]
fn reset_is_one_delete_request() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    let (code, out) = t.kco(&["reset", "c", "--yes", "-v"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("c: reset ok: request DELETE of ")
            && out.contains("(DELETE of every partition) sent"),
        "{out}"
    );
    assert_eq!(mutating(&fake), ["POST /connectors/c/offsets/request"]);
    let body = fake
        .mutating_requests()
        .into_iter()
        .next()
        .and_then(|r| r.body);
    assert_eq!(body, Some(json!({"type": "DELETE"})));
    assert_eq!(fake.offsets("c"), json!([]));
}

#[test]
fn a_failed_request_fails_with_the_services_message_and_changes_nothing() {
    let t = cloud_env();
    let fake = cloud(|b| b.alter_fails("c", "offset 40 is below the log start"));
    project(t.path(), &fake, 40);
    let (code, out) = t.kco(&["apply", "files", "--yes"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "FAILED c: failed at wait_applied: Confluent Cloud answered FAILED for request PATCH of "
        ) && out.contains("offset 40 is below the log start; the offsets were not changed"),
        "{out}"
    );
    assert!(out.contains("offsets: unchanged"), "{out}");
    assert_eq!(offset_of(&fake), json!({"kafka_offset": 100}));
    assert_eq!(fake.state("c"), Some(State::Running));
}

#[test]
fn a_request_left_pending_is_recovered_by_reading_its_status() {
    let t = cloud_env();
    let fake = cloud(|b| b.alter_stuck("c"));
    project(t.path(), &fake, 40);
    let (code, out) = t
        .kco(&["apply", "files", "--yes", "--wait-timeout", "1"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("was still PENDING after 1s; kco sent nothing more: Confluent Cloud may still apply it (`kco recover` reads its status)"),
        "{out}"
    );
    assert_eq!(fake.alter_requests("c"), 1);
    // The service gets to it; recover reads the request's status, sends no other request.
    fake.clear_alter_faults("c");
    fake.clear_requests();
    let (code, out) = t.kco(&["recover"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("APPLIED at") && out.contains("its offsets read back as requested"),
        "{out}"
    );
    assert_eq!(fake.alter_requests("c"), 1);
    assert!(mutating(&fake).is_empty(), "{:?}", mutating(&fake));
    assert_eq!(offset_of(&fake), json!({"kafka_offset": 40}));
    assert_eq!(fake.state("c"), Some(State::Running));
    let (code, out) = t.kco(&["recover"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Nothing to recover"), "{out}");
}

/// A second runner's nightly, while the first runner's request is pending and the service
/// shows the connector PAUSED around it: the diff names the request instead of a change of
/// state, and the snapshot keeps the file's RUNNING (the service puts it back), sending nothing.
#[test]
fn a_connector_paused_around_a_pending_request_is_neither_a_state_change_nor_recorded_paused() {
    let fake = cloud(|b| b.alter_stuck("c"));
    let nightly = cloud_env();
    project(nightly.path(), &fake, 100);
    let (code, out) = nightly.kco(&["snapshot"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    let file = nightly.path().join("snapshots/a/c.yaml");
    let recorded = std::fs::read_to_string(&file).unwrap();
    assert!(recorded.contains("state: RUNNING"), "{recorded}");
    // The first runner's apply leaves its request pending: the service shows PAUSED.
    let t = cloud_env();
    project(t.path(), &fake, 40);
    let (code, out) = t
        .kco(&["apply", "files", "--yes", "--wait-timeout", "1"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert_eq!(fake.state("c"), Some(State::Paused));
    fake.clear_requests();
    // Its offsets have not moved: in sync, the pause named as the service's.
    let run = Kco::new(nightly.path())
        .env("CC_KEY", "KEY")
        .env("CC_SECRET", "SECRET")
        .args(["--cluster", "a", "diff", "snapshots/a", "-o", "json"])
        .run();
    assert_eq!(run.code, 0, "{}", run.all());
    let report = crate::support::json::parse_json(&run.stdout);
    let c = &report["connectors"][0];
    assert_eq!(c["status"], "in_sync", "{out}");
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("PAUSED by Confluent Cloud around its pending PATCH of ")
            && notes.contains("(PENDING): the service puts back the state it had when the request ends; the file's state RUNNING stands"),
        "{notes}"
    );
    assert!(!notes.contains("outside kco"), "{notes}");
    let (code, out) = nightly.kco(&["snapshot"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("PAUSED by Confluent Cloud around its pending PATCH of ")
            && out.contains("the file's state RUNNING kept"),
        "{out}"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.contains("state: RUNNING"), "{after}");
    assert!(mutating(&fake).is_empty(), "{:?}", mutating(&fake));
    // Once the request is over, a PAUSED shown is its owner's, recorded as such.
    fake.clear_alter_faults("c");
    let (code, out) = t.kco(&["recover"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.state("c"), Some(State::Running));
    let (code, out) = nightly.kco(&["snapshot"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    fake.set_state("c", State::Paused);
    let (code, out) = nightly.kco(&["diff", "snapshots/a"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("paused or stopped outside kco"), "{out}");
    let (code, out) = nightly.kco(&["snapshot"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.contains("state: PAUSED"), "{after}");
}

#[test]
fn as_new_create_makes_the_connector_at_its_position_in_one_request() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    let config = [
        ("connector.class", SINK),
        ("name", "c"),
        ("topics", "t"),
        ("tasks.max", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    SnapshotFile::sink("c", offsets(40))
        .class(SINK)
        .config(Some(config))
        .write_in(&t.path().join("files"));
    let (code, out) = t
        .kco(&["apply", "files/c.yaml", "--as", "n", "--create", "--yes"])
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("n (sink, from a/c): create from the file's config (4 keys) with the offsets of 1 partition, start RUNNING; Confluent Cloud creates it at its position in one request"),
        "{out}"
    );
    assert!(
        out.contains("ok n: created, offsets applied and verified; RUNNING"),
        "{out}"
    );
    let posts = fake.mutating_requests();
    assert_eq!(mutating(&fake), ["POST /connectors"]);
    let body = posts[0].body.clone().unwrap();
    assert_eq!(
        body["offsets"],
        json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 40}}])
    );
    assert_eq!(body["config"]["name"], json!("n"));
    assert_eq!(
        fake.offset("n", &json!({"kafka_topic": "t", "kafka_partition": 0})),
        Some(json!({"kafka_offset": 40}))
    );
    assert_eq!(fake.state("n"), Some(State::Running));
}

#[test]
fn the_plan_reads_an_old_observation_again_before_planning_and_backing_up() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    fake.stale_for("c", 1);
    let (code, out) = t.kco(&["apply", "files", "--dry-run"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("t/0: {\"kafka_offset\":100} -> {\"kafka_offset\":40}"),
        "{out}"
    );
    assert_eq!(fake.count("GET", "*/connectors/c/offsets"), 2);
}

#[test]
fn the_json_plan_says_what_the_service_does_itself() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    let (code, out) = t
        .kco(&["apply", "files", "--dry-run", "--output", "json"])
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["plan"]["connectors"][0]["by_service"],
        json!("Confluent Cloud pauses and resumes it itself while the offsets change")
    );
    fake.assert_no_mutations();
}

#[test]
fn a_wrong_secret_fails_at_the_first_request_and_writes_nothing() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    let run = Kco::new(t.path())
        .env("CC_KEY", "KEY")
        .env("CC_SECRET", "WRONG-SECRET")
        .args(["--cluster", "a", "apply", "files", "--yes"])
        .run();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.all().contains("KEY"), "{}", run.all());
    assert!(!run.all().contains("WRONG-SECRET"), "{}", run.all());
    assert_eq!(fake.requests().len(), 1, "{:?}", fake.requests());
    fake.assert_no_mutations();
    let kco_dir = t.path().join(".kco");
    let written: Vec<_> = ["backups", "journal"]
        .iter()
        .filter(|d| {
            std::fs::read_dir(kco_dir.join(d)).is_ok_and(|mut entries| entries.next().is_some())
        })
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn a_pending_request_is_waited_for_once_not_retried_in_a_loop() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    // Someone else's request, pending when kco sends its own.
    let theirs = fake
        .client()
        .request_alter(
            "c",
            kco::client::AlterKind::Patch,
            &[serde_json::from_value(json!(
                {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 70}}
            ))
            .unwrap()],
        )
        .unwrap();
    fake.clear_requests();
    let (code, out) = t.kco(&["apply", "files", "--yes", "-v"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    let at = humantime::format_rfc3339_seconds(theirs.requested_at.unwrap());
    assert!(
        out.contains(&format!(
            "waited for request PATCH of {at} to be APPLIED, then sent it again"
        )),
        "{out}"
    );
    // The refused one and the one sent again: no retry in between.
    assert_eq!(fake.count("POST", "*/offsets/request"), 2);
    assert_eq!(fake.alter_requests("c"), 2);
    assert_eq!(offset_of(&fake), json!({"kafka_offset": 40}));
    assert_eq!(fake.state("c"), Some(State::Running));
}

#[test]
fn the_plan_takes_the_clusters_bound_on_an_observations_age() {
    let t = cloud_env();
    let fake = cloud(|b| b);
    project(t.path(), &fake, 40);
    let yaml = std::fs::read_to_string(t.path().join("kco.yaml")).unwrap();
    let yaml = format!("{yaml}      maxObservedAgeSeconds: 600\n");
    t.config(yaml);
    // 300 s old: within the cluster's 600 s, so read once.
    fake.stale_for("c", 1);
    let (code, out) = t.kco(&["apply", "files", "--dry-run"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.count("GET", "*/connectors/c/offsets"), 1);
}

#[test]
fn a_snapshot_with_config_recreates_the_connector_under_a_new_name_with_its_secret_from_the_environment(
) {
    // The service masks secret values; the snapshot keeps a placeholder for each, and the
    // create takes the value from the environment.
    let fake = cloud(|b| {
        b.connector(
            crate::fake_connect::ConnectorSpec::sink("src-sink", SINK)
                .config("topics", "t")
                .config("kafka.api.secret", "the-real-secret")
                .config("kafka.api.key", "AKEY")
                .state(State::Running)
                .offsets(offsets(250)),
        )
    });
    let t = cloud_env();
    project(t.path(), &fake, 100);
    let (code, out) = t
        .kco(&["snapshot", "--with-config", "src-sink"])
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    let file = std::fs::read_to_string(t.path().join("snapshots/a/src-sink.yaml")).unwrap();
    assert!(
        file.contains("kafka.api.secret: \"${kco:env:KCO_SECRET_SRC_SINK_KAFKA_API_SECRET}\""),
        "{file}"
    );
    assert!(
        !file.contains("****") && !file.contains("the-real-secret"),
        "{file}"
    );
    assert!(file.contains("topics: t"), "{file}");
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.path.contains("connector-plugins")),
        "no plugin endpoint on the service"
    );

    fake.clear_requests();
    let (code, out) = Kco::new(t.path())
        .env("CC_KEY", "KEY")
        .env("CC_SECRET", "SECRET")
        .env("KCO_SECRET_SRC_SINK_KAFKA_API_SECRET", "the-real-secret")
        .env("KCO_SECRET_SRC_SINK_KAFKA_API_KEY", "AKEY")
        .args(["--cluster", "a"])
        .args([
            "apply",
            "snapshots/a/src-sink.yaml",
            "--as",
            "moved-sink",
            "--create",
            "--yes",
        ])
        .run()
        .code_and_text();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok moved-sink: created"), "{out}");
    let config = fake.config("moved-sink").expect("created");
    assert_eq!(config["kafka.api.secret"], "the-real-secret");
    assert_eq!(
        fake.offset(
            "moved-sink",
            &json!({"kafka_topic": "t", "kafka_partition": 0})
        ),
        Some(json!({"kafka_offset": 250}))
    );
    assert_eq!(mutating(&fake), ["POST /connectors"], "one request");
}

#[test]
fn with_v_an_apply_shows_each_phase_of_its_request_once() {
    let t = cloud_env();
    let fake = cloud(|b| b.alter_phase_reads(2));
    project(t.path(), &fake, 40);
    let (code, out) = t.kco(&["-v", "apply", "files", "--yes"]).code_and_text();
    assert_eq!(code, 0, "{out}");
    // Read five times (two PENDING, two PENDING_VALIDATION, then APPLIED), told once each.
    let request = format!("c: request PATCH of {FIXED_NOW}");
    for phase in ["PENDING", "PENDING_VALIDATION", "APPLIED"] {
        let line = format!("{request}: {phase}\n");
        assert_eq!(out.matches(&line).count(), 1, "{line} once in {out}");
    }
    assert_eq!(
        out.matches("/offsets/request/status: ok").count(),
        5,
        "{out}"
    );
    // The verify step says where the partition it sent is now.
    let verified = r#"as wanted: {"kafka_partition":0,"kafka_topic":"t"} at {"kafka_offset":40}"#;
    assert!(out.contains(verified), "{out}");
}
