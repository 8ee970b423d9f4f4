//! Engine tests for `snapshot`, against the fake Connect in process.

use serde_json::{json, Value};

use super::*;
use crate::fake::{ConnectorSpec, FakeConnect, FakeConnectBuilder, Fault, PluginSpec, State};
use crate::model::OffsetEntry;

const SRC: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

fn sink_offsets(n: i64) -> Value {
    json!([
        {"partition": {"kafka_topic": "t", "kafka_partition": 10}, "offset": {"kafka_offset": n}},
        {"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": 7}},
    ])
}

fn source_offsets(pos: i64) -> Value {
    json!([{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": pos}}])
}

/// A FileStream sink of topic `t` at offset `n`.
fn sink(name: &str, n: i64) -> ConnectorSpec {
    ConnectorSpec::sink(name, SINK)
        .config("topics", "t")
        .offsets(sink_offsets(n))
}

fn builder() -> FakeConnectBuilder {
    FakeConnect::builder()
        .kafka_cluster_id("kc-1")
        .connector(sink("orders-sink", 5))
        .connector(
            ConnectorSpec::source("file-src", SRC)
                .config("file", "/tmp/in.txt")
                .offsets(source_offsets(42)),
        )
}

fn cluster() -> FakeConnect {
    builder().in_process()
}

/// Every request so far, as `METHOD path`.
fn calls(m: &FakeConnect) -> Vec<String> {
    let requests = m.requests().into_iter();
    requests
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

fn at(t: &'static str) -> impl Fn() -> String {
    move || t.to_string()
}

fn run(m: &FakeConnect, dir: &Path, opts: &SnapshotOptions) -> SnapshotReport {
    run_at(m, dir, opts, "2026-01-01T00:00:00Z")
}

/// A snapshot of cluster `a` into `dir` taken at `time`.
fn run_at(
    m: &FakeConnect,
    dir: &Path,
    opts: &SnapshotOptions,
    time: &'static str,
) -> SnapshotReport {
    snapshot(&m.client(), "a", dir, opts, &at(time)).unwrap()
}

fn outcomes(r: &SnapshotReport) -> Vec<(String, SnapshotOutcome)> {
    r.connectors
        .iter()
        .map(|c| (c.name.clone(), c.outcome))
        .collect()
}

#[test]
fn writes_one_sealed_file_per_connector_with_the_live_offsets() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(
        outcomes(&r),
        vec![
            ("file-src".into(), SnapshotOutcome::Created),
            ("orders-sink".into(), SnapshotOutcome::Created)
        ]
    );
    let path = dir.path().join("a/orders-sink.yaml");
    let (file, text) = OffsetsFile::load(&path).unwrap();
    assert!(file.check(&path, &text).is_empty());
    assert!(text.starts_with("# yaml-language-server: $schema="));
    let mut want: Vec<OffsetEntry> = serde_json::from_value(sink_offsets(5)).unwrap();
    sort_entries(&mut want);
    assert_eq!(file.offsets, want);
    assert_eq!(file.metadata.kafka_cluster_id.as_deref(), Some("kc-1"));
    assert_eq!(file.metadata.connect_version.as_deref(), Some("4.1.0"));
    assert_eq!(file.metadata.connector_class.as_deref(), Some(SINK));
    assert_eq!(
        file.metadata.state,
        Some(crate::model::ConnectorState::Running)
    );
    assert_eq!(file.config, None);
    // One listing call, one offsets read per connector, nothing else.
    let mut calls = calls(&m);
    calls.sort();
    assert_eq!(
        calls,
        vec![
            "GET /",
            "GET /connectors/file-src/offsets",
            "GET /connectors/orders-sink/offsets",
            "GET /connectors?expand=status&expand=info",
        ]
    );
}

#[test]
fn second_run_without_progress_leaves_files_byte_identical() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let src = dir.path().join("a/file-src.yaml");
    let before = (std::fs::read(&sink).unwrap(), std::fs::read(&src).unwrap());
    let r = run_at(
        &m,
        dir.path(),
        &SnapshotOptions::default(),
        "2027-02-02T00:00:00Z",
    );
    assert_eq!(r.count(SnapshotOutcome::Unchanged), 2);
    assert_eq!(std::fs::read(&sink).unwrap(), before.0);
    assert_eq!(std::fs::read(&src).unwrap(), before.1);

    m.set_offsets("file-src", source_offsets(43));
    let r = run_at(
        &m,
        dir.path(),
        &SnapshotOptions::default(),
        "2027-02-02T00:00:00Z",
    );
    assert_eq!(
        outcomes(&r),
        vec![
            ("file-src".into(), SnapshotOutcome::Updated),
            ("orders-sink".into(), SnapshotOutcome::Unchanged)
        ]
    );
    let text = std::fs::read_to_string(&src).unwrap();
    assert!(
        text.contains("position: 43") && text.contains("2027-02-02"),
        "{text}"
    );
    assert_eq!(std::fs::read(&sink).unwrap(), before.0);
}

#[test]
fn hand_reordered_file_with_same_offsets_is_rewritten_canonically_keeping_schema_ref() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let text = std::fs::read_to_string(&sink).unwrap();
    let edited = text
        .replacen(DEFAULT_SCHEMA_REF, "https://example.test/s.json", 1)
        .replace("cluster: a\n", "cluster: 'a'\n");
    std::fs::write(&sink, &edited).unwrap();
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    let c = r
        .connectors
        .iter()
        .find(|c| c.name == "orders-sink")
        .unwrap();
    assert_eq!(c.outcome, SnapshotOutcome::Updated);
    let now = std::fs::read_to_string(&sink).unwrap();
    assert!(now.starts_with("# yaml-language-server: $schema=https://example.test/s.json\n"));
    assert!(now.contains("cluster: a\n"));
}

/// The `$schema` line of a new file resolves: the schema is written where it points, beside
/// the cluster directories. A file written before, pointing into kco's own repository, keeps
/// its line, loads and is left as it is.
#[test]
fn the_schema_reference_of_a_new_file_resolves_and_old_files_keep_theirs() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let text = std::fs::read_to_string(&sink).unwrap();
    let first = text.lines().next().unwrap();
    let reference = first.strip_prefix(SCHEMA_COMMENT).unwrap();
    assert_eq!(reference, "../connector-offsets-v1.json");
    let schema = sink.parent().unwrap().join(reference);
    assert_eq!(
        std::fs::read_to_string(&schema).unwrap(),
        crate::model::file::schema_json()
    );
    // Older files: the reference into kco's repository, sealed as before (the checksum
    // covers the offsets only).
    let old = text.replacen(DEFAULT_SCHEMA_REF, crate::model::file::REPO_SCHEMA_REF, 1);
    std::fs::write(&sink, &old).unwrap();
    std::fs::remove_file(&schema).unwrap();
    let (file, _) = OffsetsFile::load(&sink).unwrap();
    assert!(file.is_sealed());
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert!(r
        .connectors
        .iter()
        .all(|c| c.outcome == SnapshotOutcome::Unchanged));
    assert_eq!(std::fs::read_to_string(&sink).unwrap(), old);
    assert!(!schema.exists(), "nothing written, no schema either");
}

#[test]
fn filters_by_glob_and_type_and_rejects_unknown_exact_names() {
    let m = builder()
        .source("orders-src", SRC, State::Running, source_offsets(1))
        .in_process();
    let dir = tempfile::tempdir().unwrap();
    let opts = SnapshotOptions {
        selector: Selector::new(&["orders-*".into()], Some(ConnectorType::Source)).unwrap(),
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &opts);
    assert_eq!(
        outcomes(&r),
        vec![("orders-src".into(), SnapshotOutcome::Created)]
    );
    assert!(!dir.path().join("a/orders-sink.yaml").exists());

    let opts = SnapshotOptions {
        selector: Selector::new(&["file-src".into(), "nope".into(), "gone".into()], None).unwrap(),
        ..SnapshotOptions::default()
    };
    let e = snapshot(&m.client(), "a", dir.path(), &opts, &at("t"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`nope`") && e.contains("`gone`") && e.contains("http://in-process:8083"),
        "{e}"
    );
    assert!(
        !dir.path().join("a/file-src.yaml").exists(),
        "nothing written on bad input"
    );
}

#[test]
fn unknown_type_is_skipped_and_a_failed_read_keeps_the_old_file() {
    let m = builder()
        .connector(ConnectorSpec::plugin_missing(
            "ghost",
            "com.example.Missing",
        ))
        .in_process();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let sink = dir.path().join("a/orders-sink.yaml");
    let before = std::fs::read(&sink).unwrap();
    m.fault(Fault::on("GET", "/connectors/orders-sink/offsets").respond(500, "boom"));
    m.set_offsets("file-src", source_offsets(99));
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(
        outcomes(&r),
        vec![
            ("file-src".into(), SnapshotOutcome::Updated),
            ("ghost".into(), SnapshotOutcome::Skipped),
            ("orders-sink".into(), SnapshotOutcome::Failed)
        ]
    );
    let failed = r.failed();
    assert!(failed[0].message.as_deref().unwrap().contains("boom"));
    assert_eq!(std::fs::read(&sink).unwrap(), before);
    assert!(!dir.path().join("a/ghost.yaml").exists());
}

#[test]
fn stale_files_are_reported_and_pruned_only_with_prune() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    m.remove_connector("file-src");
    let src = dir.path().join("a/file-src.yaml");
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(r.stale.len(), 1);
    assert_eq!(
        (r.stale[0].name.as_str(), r.stale[0].pruned),
        ("file-src", false)
    );
    assert!(src.exists());
    // A selection that does not cover the stale connector leaves it alone.
    let only_sinks = SnapshotOptions {
        selector: Selector::new(&[], Some(ConnectorType::Sink)).unwrap(),
        prune: true,
        ..SnapshotOptions::default()
    };
    assert!(run(&m, dir.path(), &only_sinks).stale.is_empty());
    assert!(src.exists());
    let prune = SnapshotOptions {
        prune: true,
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &prune);
    assert!(r.stale[0].pruned);
    assert!(!src.exists());
    assert!(dir.path().join("a/orders-sink.yaml").exists());
}

#[test]
fn with_config_redacts_declared_and_named_secrets_and_keeps_provider_refs() {
    let m = FakeConnect::builder()
        .plugin(PluginSpec::sink("com.example.Jdbc").password("connection.pw"))
        .connector(
            ConnectorSpec::sink("jdbc", "com.example.Jdbc")
                .configs([
                    ("connection.pw", "hunter2"),
                    ("db.secret.thing", "s3cr3t"),
                    (
                        "ssl.key.password",
                        "${file:/etc/kafka/secrets.properties:ssl}",
                    ),
                    ("topics", "t"),
                ])
                .offsets(sink_offsets(1)),
        )
        .in_process();
    let dir = tempfile::tempdir().unwrap();
    let opts = SnapshotOptions {
        with_config: true,
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &opts);
    assert_eq!(
        r.connectors[0].redacted,
        vec!["connection.pw", "db.secret.thing"]
    );
    let text = std::fs::read_to_string(dir.path().join("a/jdbc.yaml")).unwrap();
    assert!(
        !text.contains("hunter2") && !text.contains("s3cr3t"),
        "{text}"
    );
    assert!(text.contains("KCO_SECRET_JDBC_CONNECTION_PW"), "{text}");
    assert!(
        text.contains("${file:/etc/kafka/secrets.properties:ssl}"),
        "{text}"
    );
    assert!(!format!("{r:?}").contains("hunter2"));
    // Plugin definitions are read once per class.
    let defs = calls(&m)
        .iter()
        .filter(|c| c.contains("connector-plugins"))
        .count();
    assert_eq!(defs, 1);
    // A later snapshot without --with-config keeps the captured config.
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(r.connectors[0].outcome, SnapshotOutcome::Unchanged);
    let again = std::fs::read_to_string(dir.path().join("a/jdbc.yaml")).unwrap();
    assert_eq!(again, text);
}

#[test]
fn old_connect_is_a_clear_error_and_writes_nothing() {
    let m = builder().version("3.4.1").in_process();
    let dir = tempfile::tempdir().unwrap();
    let opts = SnapshotOptions::default();
    let e = snapshot(&m.client(), "a", dir.path(), &opts, &at("t")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("3.4.1") && msg.contains("3.5"), "{msg}");
    assert!(!dir.path().join("a").exists());
}

/// Confluent Cloud's managed connectors: one sink.
fn cloud() -> FakeConnectBuilder {
    FakeConnect::builder()
        .confluent_cloud("env-abc123", "lkc-xyz789")
        .sink("orders", SINK, State::Running, sink_offsets(5))
}

/// Re-reads a few milliseconds apart, for half a second at most.
fn quick(max_age_secs: u64) -> SnapshotOptions {
    let mut freshness = crate::engine::observed::Freshness::with_max_age(
        std::time::Duration::from_secs(max_age_secs),
    );
    freshness.wait = crate::wait::WaitPolicy {
        timeout: std::time::Duration::from_millis(500),
        first_delay: std::time::Duration::from_millis(5),
        max_delay: std::time::Duration::from_millis(20),
    };
    SnapshotOptions {
        freshness,
        ..SnapshotOptions::default()
    }
}

#[test]
fn a_confluent_cloud_file_records_when_its_offsets_were_observed_and_no_get_root_is_sent() {
    let m = cloud().in_process();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&m, dir.path(), &quick(120));
    assert_eq!(outcomes(&r), [("orders".into(), SnapshotOutcome::Created)]);
    let text = std::fs::read_to_string(dir.path().join("a/orders.yaml")).unwrap();
    let file = OffsetsFile::parse(Path::new("orders.yaml"), &text).unwrap();
    let observed = file.metadata.observed_at.clone().expect("observedAt");
    let at = m.observed_at("orders").unwrap();
    assert_eq!(observed, crate::clock::rfc3339(at));
    assert_eq!(
        file.metadata.kafka_cluster_id.as_deref(),
        Some("lkc-xyz789")
    );
    assert_eq!(
        file.metadata.connect_version.as_deref(),
        Some("Confluent Cloud")
    );
    assert!(text.contains("\n  observedAt: "), "{text}");
    assert_eq!(
        file.offsets.len(),
        m.offsets("orders").as_array().unwrap().len()
    );
    let base = "/connect/v1/environments/env-abc123/clusters/lkc-xyz789";
    assert_eq!(
        calls(&m),
        [
            format!("GET {base}/connectors?expand=id,info,status"),
            format!("GET {base}/connectors/orders/offsets"),
        ]
    );
}

#[test]
fn a_stale_observation_is_read_again_and_then_recorded_as_current() {
    let m = cloud().stale_observations(2).in_process();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&m, dir.path(), &quick(120));
    assert_eq!(outcomes(&r), [("orders".into(), SnapshotOutcome::Created)]);
    assert_eq!(m.count("GET", "*/connectors/orders/offsets"), 3);
}

#[test]
fn an_observation_that_stays_stale_is_a_failure_and_writes_no_file() {
    let m = cloud().stale_observations(10_000).in_process();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&m, dir.path(), &quick(120));
    let failed = r.failed();
    assert_eq!(failed.len(), 1);
    let message = failed[0].message.clone().unwrap();
    assert!(
        message.contains("longer ago than --max-observed-age 120s")
            && message.contains("not recorded as current"),
        "{message}"
    );
    assert!(!dir.path().join("a/orders.yaml").exists());
    assert!(m.count("GET", "*/connectors/orders/offsets") > 2);
    // A bound wider than the observation's age takes it.
    let r = run(&m, dir.path(), &quick(3600));
    assert!(r.failed().is_empty());
}

#[test]
fn kafka_connect_files_have_no_observed_at() {
    let m = FakeConnect::builder()
        .sink("s", SINK, State::Running, sink_offsets(1))
        .in_process();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let text = std::fs::read_to_string(dir.path().join("a/s.yaml")).unwrap();
    assert!(!text.contains("observedAt"), "{text}");
}

#[test]
fn with_config_where_the_service_masks_secrets_keeps_a_placeholder_for_each() {
    // Confluent Cloud has no config definitions and answers secret values masked: a masked
    // value, or a key that looks secret, becomes a placeholder; no plugin endpoint is asked.
    let m = FakeConnect::builder()
        .confluent_cloud("env-abc123", "lkc-xyz789")
        .connector(
            ConnectorSpec::sink("orders", SINK)
                .config("topics", "t")
                .config("kafka.api.secret", "hunter2")
                .offsets(sink_offsets(5)),
        )
        .in_process();
    let dir = tempfile::tempdir().unwrap();
    let opts = SnapshotOptions {
        with_config: true,
        ..quick(120)
    };
    let r = snapshot(&m.client(), "a", dir.path(), &opts, &at("t")).unwrap();
    assert_eq!(r.connectors[0].redacted, ["kafka.api.secret"]);
    let text = std::fs::read_to_string(dir.path().join("a/orders.yaml")).unwrap();
    assert!(
        text.contains("${kco:env:KCO_SECRET_ORDERS_KAFKA_API_SECRET}"),
        "{text}"
    );
    assert!(
        !text.contains("****") && !text.contains("hunter2"),
        "{text}"
    );
    assert!(
        !calls(&m).iter().any(|c| c.contains("connector-plugins")),
        "{:?}",
        calls(&m)
    );
}

#[test]
fn a_connector_deleted_between_the_listing_and_its_offsets_is_skipped_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let m = cluster();
    // Listed, then its offsets answer 404 and the names no longer hold it: deleted meanwhile.
    m.fault(
        Fault::on("GET", "/connectors/orders-sink/offsets")
            .respond(404, "Connector orders-sink not found"),
    );
    m.fault(Fault::on("GET", "/connectors").respond_json(200, json!(["file-src"])));
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(
        outcomes(&r),
        [
            ("file-src".into(), SnapshotOutcome::Created),
            ("orders-sink".into(), SnapshotOutcome::Skipped)
        ]
    );
    let gone = &r.connectors[1];
    assert!(gone
        .message
        .as_deref()
        .unwrap()
        .contains("deleted while the snapshot ran"));
    assert!(!gone.path.exists());

    // A 404 while the cluster still names the connector is a failure, as before.
    let m = cluster();
    m.fault(
        Fault::on("GET", "/connectors/orders-sink/offsets")
            .respond(404, "Connector orders-sink not found"),
    );
    let r = run(&m, dir.path(), &SnapshotOptions::default());
    assert_eq!(r.connectors[1].outcome, SnapshotOutcome::Failed);
}

#[test]
fn a_rewritten_file_always_gets_a_later_capture_time() {
    let at = |s: &str| Some(s.to_string());
    assert_eq!(
        super::later_capture(Some("2026-12-01T02:00:00Z"), at("2026-12-01T02:00:00Z")),
        at("2026-12-01T02:00:01Z"),
        "a second capture within the same second"
    );
    assert_eq!(
        super::later_capture(Some("2026-12-01T02:00:05Z"), at("2026-12-01T02:00:00Z")),
        at("2026-12-01T02:00:06Z"),
        "a clock behind the file's"
    );
    assert_eq!(
        super::later_capture(Some("2026-12-01T02:00:00Z"), at("2026-12-02T02:00:00Z")),
        at("2026-12-02T02:00:00Z")
    );
    assert_eq!(
        super::later_capture(None, at("2026-12-02T02:00:00Z")),
        at("2026-12-02T02:00:00Z")
    );
}

#[test]
fn snapshot_and_diff_report_each_connector_they_read_to_the_observer() {
    use crate::engine::diff::{diff_live_reporting, ExitOn, LiveInput};
    use crate::engine::progress::tests::Heard;
    let offsets =
        |o: i64| serde_json::json!([{"partition": {"f": "x"}, "offset": {"position": o}}]);
    let fake = FakeConnect::builder()
        .source(
            "a",
            "org.apache.kafka.connect.file.FileStreamSourceConnector",
            State::Running,
            offsets(1),
        )
        .source(
            "b",
            "org.apache.kafka.connect.file.FileStreamSourceConnector",
            State::Running,
            offsets(2),
        )
        .in_process();
    let dir = tempfile::tempdir().unwrap();
    let heard = Heard::default();
    let now = || "2026-01-01T00:00:00Z".to_string();
    let opts = SnapshotOptions::default();
    snapshot_reporting(&fake.client(), "c", dir.path(), &opts, &now, &heard).unwrap();
    let mut log = heard.0.into_inner().unwrap();
    log.sort();
    assert_eq!(log, ["end a", "end b", "start a", "start b", "total 2"]);

    let (files, problems) = crate::engine::load_files(&[dir.path().join("c")]);
    assert!(problems.is_empty(), "{problems:?}");
    let heard = Heard::default();
    let input = LiveInput {
        files: &files,
        cluster: "c".into(),
        whole_dir: true,
        exit_on: ExitOn::Drift,
        parallel: 1,
        cwd: dir.path(),
        freshness: Default::default(),
    };
    diff_live_reporting(&fake.client(), input, &heard).unwrap();
    let log = heard.0.into_inner().unwrap();
    assert_eq!(log, ["total 2", "start a", "end a", "start b", "end b"]);
}

/// The nightly's case: the connectors the directory's files name are read while the cluster
/// is listed, each once; a connector created since is read after the listing, and the file
/// of one deleted since (read for nothing) is reported stale.
#[test]
fn a_nightly_reads_its_files_connectors_beside_the_listing_each_once() {
    let dir = tempfile::tempdir().unwrap();
    run(&cluster(), dir.path(), &SnapshotOptions::default());
    let m = FakeConnect::builder()
        .kafka_cluster_id("kc-1")
        .connector(sink("orders-sink", 6))
        .connector(sink("new-sink", 1))
        .in_process();
    let opts = SnapshotOptions {
        parallel: 4,
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &opts);
    assert_eq!(
        outcomes(&r),
        [
            ("new-sink".into(), SnapshotOutcome::Created),
            ("orders-sink".into(), SnapshotOutcome::Updated)
        ]
    );
    assert_eq!(
        r.stale.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["file-src"]
    );
    let mut calls = calls(&m);
    calls.sort();
    assert_eq!(
        calls,
        [
            "GET /",
            "GET /connectors/file-src/offsets",
            "GET /connectors/new-sink/offsets",
            "GET /connectors/orders-sink/offsets",
            "GET /connectors?expand=status&expand=info",
        ]
    );
}

/// The reads ahead of the listing write nothing when the listing then fails: the files are
/// as they were, and the listing's error is the run's.
#[test]
fn a_listing_that_fails_after_the_reads_ahead_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    run(&cluster(), dir.path(), &SnapshotOptions::default());
    let before = std::fs::read_to_string(dir.path().join("a/orders-sink.yaml")).unwrap();
    let m = FakeConnect::builder()
        .connector(ConnectorSpec::sink("orders-sink", SINK).offsets(sink_offsets(9)))
        .connector(ConnectorSpec::source("file-src", SRC).offsets(source_offsets(50)))
        .in_process();
    // Slow to fail: the reads ahead have long been sent.
    m.fault(
        Fault::on("GET", "/connectors?expand=status&expand=info")
            .delay_ms(500)
            .respond(400, "no listing today"),
    );
    let opts = SnapshotOptions {
        parallel: 4,
        ..SnapshotOptions::default()
    };
    let e = snapshot(
        &m.client(),
        "a",
        dir.path(),
        &opts,
        &at("2026-02-01T00:00:00Z"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("cannot list connectors"), "{e}");
    assert!(e.to_string().contains("no listing today"), "{e}");
    let calls = calls(&m);
    for read in [
        "GET /connectors/orders-sink/offsets",
        "GET /connectors/file-src/offsets",
    ] {
        assert!(calls.iter().any(|c| c == read), "read ahead: {calls:?}");
    }
    let after = std::fs::read_to_string(dir.path().join("a/orders-sink.yaml")).unwrap();
    assert_eq!(before, after, "nothing written");
    m.assert_no_mutations();
}

/// A connector the listing shows in a transient state is read again once it has settled:
/// its offsets read ahead may be older than the state the file records.
#[test]
fn a_connector_listed_in_a_transient_state_is_read_again_after_it_settles() {
    let dir = tempfile::tempdir().unwrap();
    let m = cluster();
    run(&m, dir.path(), &SnapshotOptions::default());
    m.clear_requests();
    let info = |state: &str| {
        json!({
            "info": {"name": "orders-sink", "type": "sink", "tasks": [],
                     "config": {"name": "orders-sink", "connector.class": SINK, "topics": "t"}},
            "status": {"name": "orders-sink", "type": "sink", "tasks": [],
                       "connector": {"state": state, "worker_id": "w:8083"}}
        })
    };
    m.fault(
        Fault::on("GET", "/connectors?expand=status&expand=info")
            .nth(1)
            .respond_json(200, json!({"orders-sink": info("UNASSIGNED")})),
    );
    let opts = SnapshotOptions {
        parallel: 4,
        ..SnapshotOptions::default()
    };
    let r = run(&m, dir.path(), &opts);
    assert_eq!(
        outcomes(&r),
        [("orders-sink".into(), SnapshotOutcome::Unchanged)]
    );
    let reads = calls(&m)
        .into_iter()
        .filter(|c| c == "GET /connectors/orders-sink/offsets")
        .count();
    assert_eq!(reads, 2, "{:?}", calls(&m));
}

/// A cluster that answers with no offsets for a connector whose file holds some (a wrong
/// offsets topic, a wrong cluster, or a reset): the file is kept, the connector reported
/// failed, the others written; `allow_empty` records the empty offsets.
#[test]
fn a_file_the_cluster_answers_with_no_offsets_for_is_kept_unless_allowed_empty() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let src = dir.path().join("a/file-src.yaml");
    let before = std::fs::read(&src).unwrap();
    m.set_offsets("file-src", serde_json::json!([]));
    m.set_offsets("orders-sink", sink_offsets(7));
    let r = run_at(
        &m,
        dir.path(),
        &SnapshotOptions::default(),
        "2026-01-02T00:00:00Z",
    );
    let failed = r.failed();
    assert_eq!(failed.len(), 1, "{:?}", outcomes(&r));
    assert_eq!(failed[0].name, "file-src");
    let why = failed[0].message.as_deref().unwrap();
    assert!(
        why.contains("no offsets for it, and its file holds 1 partition"),
        "{why}"
    );
    assert!(why.contains("--allow-empty"), "{why}");
    assert_eq!(
        std::fs::read(&src).unwrap(),
        before,
        "the file is left as it was"
    );
    assert!(
        std::fs::read_to_string(dir.path().join("a/orders-sink.yaml"))
            .unwrap()
            .contains("kafka_offset: 7"),
        "the others are written"
    );
    assert!(!r.owned_files().contains(&src), "not committed either");
    let allow = SnapshotOptions {
        allow_empty: true,
        ..SnapshotOptions::default()
    };
    let r = run_at(&m, dir.path(), &allow, "2026-01-03T00:00:00Z");
    assert!(r.failed().is_empty(), "{:?}", outcomes(&r));
    let (file, _) = crate::model::file::OffsetsFile::load(&src).unwrap();
    assert!(file.offsets.is_empty());
}

/// `--prune` when the cluster lists none of the connectors its files hold (a wrong URL, topics
/// given in the wrong roles): refused, nothing removed, and the files written for the
/// connectors it does list removed again; `allow_empty` prunes.
#[test]
fn a_prune_of_every_file_the_cluster_had_is_refused_unless_allowed_empty() {
    let m = cluster();
    let dir = tempfile::tempdir().unwrap();
    run(&m, dir.path(), &SnapshotOptions::default());
    let files = ["a/file-src.yaml", "a/orders-sink.yaml"].map(|f| dir.path().join(f));
    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    // Another Connect cluster answers: none of these connectors, one of its own.
    let other = FakeConnect::builder()
        .connector(
            ConnectorSpec::sink(
                "elsewhere",
                "org.apache.kafka.connect.file.FileStreamSinkConnector",
            )
            .configs([("topics", "t")])
            .offsets(sink_offsets(1)),
        )
        .in_process();
    let prune = SnapshotOptions {
        prune: true,
        ..SnapshotOptions::default()
    };
    let err = snapshot(
        &other.client(),
        "a",
        dir.path(),
        &prune,
        &at("2026-01-02T00:00:00Z"),
    )
    .unwrap_err();
    assert!(matches!(err, Error::WouldEmpty { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("lists none of the connectors of its 2 snapshot files"),
        "{err}"
    );
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(f).unwrap(), b, "{f:?} kept as it was");
    }
    assert!(
        !dir.path().join("a/elsewhere.yaml").exists(),
        "what it wrote is removed"
    );
    // Without --prune, the stale files are reported and the other cluster's file written.
    let r = snapshot(
        &other.client(),
        "a",
        dir.path(),
        &SnapshotOptions::default(),
        &at("2026-01-02T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(r.stale.len(), 2);
    // One of them still listed: a prune of the other goes ahead.
    m.remove_connector("file-src");
    let r = run(&m, dir.path(), &prune);
    assert_eq!(
        r.stale.iter().filter(|s| s.pruned).count(),
        2,
        "file-src and elsewhere"
    );
    assert!(!files[0].exists() && files[1].exists());
    // Every one gone: only with allow_empty.
    m.remove_connector("orders-sink");
    assert!(matches!(
        snapshot(
            &m.client(),
            "a",
            dir.path(),
            &prune,
            &at("2026-01-04T00:00:00Z")
        ),
        Err(Error::WouldEmpty { .. })
    ));
    assert!(files[1].exists());
    let allow = SnapshotOptions {
        allow_empty: true,
        ..prune
    };
    let r = run(&m, dir.path(), &allow);
    assert_eq!(r.stale.len(), 1);
    assert!(!files[1].exists());
}
