//! A `confluentCloud:` cluster of kco.yaml: the reading commands (snapshot, ls, diff, diff
//! --base) against the fake in its Confluent Cloud mode over HTTP, which serves the service's
//! published contract (docs/confluent-cloud.md), not the service itself.

use std::path::Path;
use std::time::{Duration, Instant};

use kco::fake::{FakeConnect, FakeConnectBuilder, Fault, State};
use kco::model::file::OffsetsFile;
use serde_json::{json, Value};

use crate::support::data::sink_offsets;
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::json::{named, parse_json};
use crate::support::run::{Kco, FIXED_NOW};

const ENV: &str = "env-abc123";
const LKC: &str = "lkc-xyz789";
const KEY: &str = "CCKEY4TESTS";
const SECRET: &str = "cc-secret/For+Tests";
const SINK: &str = "io.confluent.connect.s3.S3SinkConnector";
const SOURCE: &str = "io.confluent.connect.jdbc.JdbcSourceConnector";

fn base() -> String {
    format!("/connect/v1/environments/{ENV}/clusters/{LKC}")
}

/// The service with a sink (two partitions) and a JDBC source, its clock at kco's.
fn service() -> FakeConnectBuilder {
    FakeConnect::builder()
        .confluent_cloud(ENV, LKC)
        .api_key(KEY, SECRET)
        .clock_at(FIXED_NOW)
        .sink(
            "orders-s3",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 1500), (1, 700)]),
        )
        .source(
            "pg-source",
            SOURCE,
            State::Running,
            json!([{"partition": {"protocol": "1", "table": "shop.public.orders"},
                    "offset": {"incrementing": 42, "timestamp": 1700000000000i64, "timestamp_nanos": 0}}]),
        )
}

/// A directory with a kco.yaml naming the fake as cluster `cloud`.
fn project(fake: &FakeConnect) -> TestEnv {
    let dir = cloud_env();
    dir.config(format!(
        "clusters:\n  cloud:\n    confluentCloud:\n      environment: {ENV}\n      kafkaCluster: {LKC}\n      apiKey: ${{env:CC_KEY}}\n      apiSecret: ${{env:CC_SECRET}}\n      endpoint: {}\n",
        fake.url()
    ));
    dir
}

/// A test environment with the API key in its variables.
fn cloud_env() -> TestEnv {
    TestEnv::new().envs(&[("CC_KEY", KEY), ("CC_SECRET", SECRET)])
}

/// Every request the fake received is one the contract lists: under the base path, the
/// listing with `?expand=id,info,status`, a connector's offsets or status, and nothing
/// Connect has that the service has not (`GET /`, `/stop`, `PATCH`/`DELETE .../offsets`).
fn assert_only_contract_requests(fake: &FakeConnect) {
    let base = base();
    for r in fake.requests() {
        let rest = r.path.strip_prefix(&base).unwrap_or_else(|| {
            panic!("{} {} is outside the service's base path", r.method, r.path)
        });
        let listed = r.method == "GET"
            && (rest == "/connectors?expand=id,info,status"
                || (rest.starts_with("/connectors/")
                    && (rest.ends_with("/offsets") || rest.ends_with("/status"))));
        assert!(listed, "not in the contract: {} {}", r.method, r.path);
        assert!(!r.path.ends_with("/stop"), "{}", r.path);
    }
}

fn file(dir: &Path, name: &str) -> OffsetsFile {
    let path = dir.join(format!("snapshots/cloud/{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    OffsetsFile::parse(&path, &text).unwrap()
}

#[test]
fn snapshot_writes_files_with_observed_at_sending_only_the_contracts_requests() {
    let fake = service().start();
    let dir = project(&fake);
    let r = dir.kco(&["snapshot"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.all().contains("Confluent") || r.all().contains("cloud"),
        "{}",
        r.all()
    );
    for name in ["orders-s3", "pg-source"] {
        let f = file(dir.path(), name);
        let observed = f.metadata.observed_at.clone().expect("observedAt");
        let at = fake.observed_at(name).unwrap();
        assert_eq!(observed, humantime::format_rfc3339_seconds(at).to_string());
        assert_eq!(f.metadata.captured_at.as_deref(), Some(FIXED_NOW));
        assert_eq!(f.metadata.kafka_cluster_id.as_deref(), Some(LKC));
    }
    assert_eq!(file(dir.path(), "orders-s3").offsets.len(), 2);
    assert_only_contract_requests(&fake);
    // A second snapshot of the same offsets (observed anew) leaves the files byte-identical.
    let path = dir.path().join("snapshots/cloud/orders-s3.yaml");
    let before = std::fs::read(&path).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    let r = dir.kco(&["snapshot", "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(r.stdout.contains("\"unchanged\""), "{}", r.stdout);
    let shown = dir.kco(&["show", "orders-s3"]);
    assert!(
        shown.stdout.contains(&format!(
            "captured {FIXED_NOW}, observed {}",
            file(dir.path(), "orders-s3").metadata.observed_at.unwrap()
        )),
        "{}",
        shown.all()
    );
    // Per snapshot, one listing and one read per connector: no `GET /` probe before them.
    assert_eq!(fake.requests().len(), 6, "{:?}", fake.requests());
    // Every request carried the API key.
    let auth = fake.requests()[0].authorization.clone().unwrap_or_default();
    assert!(auth.starts_with("Basic "), "{auth}");
}

#[test]
fn ls_and_diff_live_read_the_observed_offsets_and_say_how_old_they_are() {
    let fake = service().start();
    let dir = project(&fake);
    assert_eq!(dir.kco(&["snapshot"]).code, 0);
    let r = dir.kco(&["ls"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout.contains("orders-s3") && r.stdout.contains("pg-source"),
        "{}",
        r.all()
    );
    let r = dir.kco(&["diff"]);
    assert_eq!(r.code, 0, "in sync: {}", r.all());
    // The sink moves on; the next observation shows it (an advance: exit 0 unless
    // --fail-on any).
    fake.set_offsets("orders-s3", sink_offsets("orders", &[(0, 1600), (1, 700)]));
    let r = dir.kco(&["diff", "--fail-on", "any"]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        r.stdout
            .contains("live offsets observed 0s ago by Confluent Cloud (2026-12-01T02:00:0"),
        "{}",
        r.all()
    );
    let r = dir.kco(&["diff", "-o", "json"]);
    let report = parse_json(&r.stdout);
    let orders = named(&report, "connectors", "orders-s3");
    assert_eq!(orders["status"], "advanced", "{orders}");
    let notes = orders["notes"].to_string();
    assert!(notes.contains("observed"), "{notes}");
    assert_only_contract_requests(&fake);
}

#[test]
fn diff_base_labels_a_change_against_the_observed_live_offsets() {
    let fake = service().start();
    let dir = project(&fake);
    let root = dir.path();
    assert_eq!(dir.kco(&["snapshot"]).code, 0);
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "snapshot"]);
    // A rewind of orders/0 by 500, as a reviewer would see it in a pull request.
    let path = root.join("snapshots/cloud/orders-s3.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("kafka_offset: 1500", "kafka_offset: 1000"),
    )
    .unwrap();
    assert_eq!(dir.kco(&["fmt", path.to_str().unwrap()]).code, 0);
    let r = dir.kco(&["diff", "--base", "HEAD"]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(r.stdout.contains("REPROCESSING"), "{}", r.all());
    assert!(r.stdout.contains("500"), "{}", r.all());
    let r = dir.kco(&["diff", "--base", "HEAD", "-o", "json"]);
    let report = parse_json(&r.stdout);
    assert_eq!(report["labels"]["against"], "live", "{report}");
    let r = dir.kco(&["diff", "--base", "HEAD", "-o", "markdown"]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        r.stdout.contains("REPROCESSING") && r.stdout.contains("orders-s3"),
        "{}",
        r.stdout
    );
    // Deleted: a connector created anew has a group of its own id, which kco does not read;
    // the review says it compared with nothing.
    assert!(fake.remove_connector("orders-s3"));
    let r = dir.kco(&["diff", "--base", "HEAD", "-o", "json"]);
    assert_eq!(r.code, 2, "{}", r.all());
    let report = parse_json(&r.stdout);
    let gone = &named(&report, "connectors", "orders-s3")["leftovers"];
    assert_eq!(gone["against"], "nothing", "{report}");
    assert!(
        gone["why"]
            .as_str()
            .unwrap()
            .starts_with("Confluent Cloud gives a connector"),
        "{gone}"
    );
    assert_only_contract_requests(&fake);
}

#[test]
fn a_stale_observation_is_read_again_then_recorded() {
    let fake = service().stale_observations(2).start();
    let dir = project(&fake);
    let r = dir.kco(&["snapshot", "orders-s3"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert_eq!(fake.count("GET", "*/connectors/orders-s3/offsets"), 3);
    let f = file(dir.path(), "orders-s3");
    let observed = humantime::parse_rfc3339(&f.metadata.observed_at.unwrap()).unwrap();
    let now = humantime::parse_rfc3339(FIXED_NOW).unwrap();
    assert!(observed >= now, "the file holds the fresh observation");
}

#[test]
fn an_observation_that_stays_stale_is_reported_and_never_written() {
    let fake = service().stale_observations(10_000).start();
    let dir = project(&fake);
    let r = dir.kco(&["snapshot", "--observed-wait", "2"]);
    assert_eq!(r.code, 1, "{}", r.all());
    let text = r.all();
    assert!(
        text.contains("orders-s3")
            && text.contains("last observed 4m")
            && text.contains("longer ago than --max-observed-age 120s")
            && text.contains("not recorded as current"),
        "{text}"
    );
    assert!(!dir.path().join("snapshots/cloud/orders-s3.yaml").exists());
    assert!(fake.count("GET", "*/connectors/orders-s3/offsets") >= 2);
    // A bound wider than its age takes it.
    let r = dir.kco(&["snapshot", "--max-observed-age", "600"]);
    assert_eq!(r.code, 0, "{}", r.all());
    // So does the cluster's bound in kco.yaml (the flag, when given, wins).
    let config = std::fs::read_to_string(dir.path().join("kco.yaml")).unwrap();
    let lenient = format!("{config}      maxObservedAgeSeconds: 600\n");
    dir.config(&lenient);
    let r = dir.kco(&["diff"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let r = dir.kco(&["diff", "--max-observed-age", "120", "--observed-wait", "1"]);
    assert_eq!(r.code, 1, "{}", r.all());
    dir.config(&config);
    // diff refuses to compare with an observation that old under the default bound.
    let r = dir.kco(&["diff", "--observed-wait", "1"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.all().contains("connector `orders-s3` on cluster `cloud`")
            && r.all().contains("not recorded as current"),
        "{}",
        r.all()
    );
}

#[test]
fn a_wrong_secret_fails_at_the_first_request_naming_the_key_and_writes_nothing() {
    let fake = service().start();
    let dir = project(&fake);
    let r = Kco::new(dir.path())
        .env("CC_KEY", KEY)
        .env("CC_SECRET", "not-the-secret")
        .args(["snapshot"])
        .run();
    assert_eq!(r.code, 1, "{}", r.all());
    let text = r.all();
    assert!(text.contains("401"), "{text}");
    assert!(
        text.contains(&format!("Confluent Cloud refused API key `{KEY}`"))
            && text.contains("Cloud API key")
            && text.contains("not a Kafka cluster's API key")
            && text.contains("`apiSecret` in kco.yaml (set from $CC_KEY and $CC_SECRET)"),
        "{text}"
    );
    assert!(
        !text.contains("not-the-secret") && !text.contains(SECRET),
        "{text}"
    );
    assert_eq!(fake.requests().len(), 1, "{:?}", fake.requests());
    assert!(!dir.path().join("snapshots").exists());
    assert_only_contract_requests(&fake);
}

#[test]
fn a_429_is_answered_again_after_its_retry_after() {
    let fake = service().start();
    fake.fault(
        Fault::on("GET", "*/connectors/orders-s3/offsets")
            .nth(1)
            .rate_limited(1),
    );
    let dir = project(&fake);
    let start = Instant::now();
    let r = dir.kco(&["snapshot"]);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(fake.count("GET", "*/connectors/orders-s3/offsets"), 2);
    assert_eq!(file(dir.path(), "orders-s3").offsets.len(), 2);
}

#[test]
fn unknown_fields_of_the_services_answers_are_ignored() {
    let fake = service().start();
    let answer: Value = json!({
        "name": "orders-s3", "id": "lcc-abc", "kind": "future",
        "offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0},
                     "offset": {"kafka_offset": 1500}, "lag": 3}],
        "metadata": {"observed_at": "2026-12-01T02:00:00+0000", "observer": "v2"},
        "next_page": null
    });
    fake.fault(
        Fault::on("GET", "*/connectors/orders-s3/offsets")
            .nth(1)
            .respond_json(200, answer),
    );
    let dir = project(&fake);
    let r = dir.kco(&["snapshot", "orders-s3"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let f = file(dir.path(), "orders-s3");
    assert_eq!(f.offsets.len(), 1);
    assert_eq!(
        f.metadata.observed_at.as_deref(),
        Some("2026-12-01T02:00:00Z")
    );
}

#[test]
fn url_beside_a_confluent_cloud_cluster_is_refused_before_any_request() {
    let fake = service().start();
    let dir = project(&fake);
    let r = dir.kco(&["--cluster", "cloud", "--url", &fake.url(), "snapshot"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.all().contains("is a Confluent Cloud cluster"),
        "{}",
        r.all()
    );
    assert!(fake.requests().is_empty());
}

#[test]
fn an_endpoint_where_nothing_answers_fails_at_once_and_says_what_to_check() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = cloud_env();
    let config = format!(
        "clusters:\n  cloud:\n    confluentCloud:\n      environment: {ENV}\n      kafkaCluster: {LKC}\n      apiKey: K\n      apiSecret: S\n      endpoint: http://127.0.0.1:{port}\n"
    );
    dir.config(config);
    let start = Instant::now();
    let r = dir.kco(&["snapshot"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert!(
        r.all()
            .contains("Confluent Cloud does not answer at the endpoint of cluster `cloud`"),
        "{}",
        r.all()
    );
    assert!(!dir.path().join("snapshots").exists());
}
