//! `kco snapshot` against the fake Connect server.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::fake_connect::{ConnectorSpec, FakeConnect, Fault, PluginSpec, State};
use crate::support::data::{SINK, SOURCE as SRC};
use crate::support::fakes::{orders_sink_offsets as sink_offsets, two_connectors};
use crate::support::run::{Kco, Run, FIXED_NOW};

/// `kco --url <fake> --cluster a snapshot <args>` in `cwd`.
pub(crate) fn snapshot(fake: &FakeConnect, cwd: &Path, args: &[&str]) -> Run {
    Kco::new(cwd).on(fake).arg("snapshot").args(args).run()
}

fn file(dir: &Path, name: &str) -> PathBuf {
    dir.join("snapshots/a").join(format!("{name}.yaml"))
}

/// A file's offsets as JSON, in canonical order.
fn file_offsets(path: &Path) -> Value {
    let (f, _) = kco::model::file::OffsetsFile::load(path).unwrap();
    serde_json::to_value(&f.offsets).unwrap()
}

fn sorted(offsets: Value) -> Value {
    let mut e: Vec<kco::model::OffsetEntry> = serde_json::from_value(offsets).unwrap();
    kco::model::sort_entries(&mut e);
    serde_json::to_value(e).unwrap()
}

#[test]
fn files_hold_the_live_offsets_exactly_and_a_second_run_changes_no_byte() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    let r = snapshot(&fake, dir.path(), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("created") && r.stdout.contains("orders-sink"),
        "{}",
        r.stdout
    );
    for name in ["file-src", "orders-sink"] {
        assert_eq!(
            file_offsets(&file(dir.path(), name)),
            sorted(fake.offsets(name)),
            "{name}"
        );
    }
    let text = std::fs::read_to_string(file(dir.path(), "file-src")).unwrap();
    assert!(text.contains("kafkaClusterId: kc-test") && text.contains("state: RUNNING"));
    assert!(text.contains("connectVersion: \"4.1.0\""), "{text}");
    // One listing call, never one status call per connector.
    assert_eq!(
        fake.count("GET", "/connectors?expand=status&expand=info"),
        1
    );
    assert_eq!(fake.count("GET", "/connectors/*/status"), 0);
    fake.assert_no_mutations();

    let before: Vec<Vec<u8>> = ["file-src", "orders-sink"]
        .iter()
        .map(|n| std::fs::read(file(dir.path(), n)).unwrap())
        .collect();
    let r = snapshot(&fake, dir.path(), &["-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let outcomes: Vec<&str> = report["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, vec!["unchanged", "unchanged"]);
    for (n, b) in ["file-src", "orders-sink"].iter().zip(&before) {
        assert_eq!(&std::fs::read(file(dir.path(), n)).unwrap(), b, "{n}");
    }

    fake.set_offsets("orders-sink", sink_offsets(6));
    let r = snapshot(&fake, dir.path(), &["-o", "json"]);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["connectors"][1]["outcome"], "updated");
    assert_eq!(report["connectors"][1]["partitions"], 2);
    assert_eq!(
        file_offsets(&file(dir.path(), "orders-sink")),
        sorted(sink_offsets(6))
    );
    assert_eq!(
        std::fs::read(file(dir.path(), "file-src")).unwrap(),
        before[0]
    );
}

#[test]
fn globs_and_type_select_and_an_unknown_exact_name_is_an_error() {
    let fake = FakeConnect::builder()
        .source("orders-src", SRC, State::Running, json!([]))
        .sink("orders-sink", SINK, State::Running, sink_offsets(1))
        .sink("billing-sink", SINK, State::Running, sink_offsets(1))
        .start();
    let dir = tempfile::tempdir().unwrap();
    let r = snapshot(&fake, dir.path(), &["orders-*", "--type", "sink"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let names: Vec<_> = std::fs::read_dir(dir.path().join("snapshots/a"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["orders-sink.yaml"]);

    let other = tempfile::tempdir().unwrap();
    let r = snapshot(&fake, other.path(), &["orders-src", "nope"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("`nope`") && r.stderr.contains(&fake.url()),
        "{}",
        r.stderr
    );
    assert!(!other.path().join("snapshots").exists(), "nothing written");
}

#[test]
fn stale_files_are_reported_and_removed_only_with_prune() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(snapshot(&fake, dir.path(), &[]).code, 0);
    assert!(fake.remove_connector("file-src"));
    let r = snapshot(&fake, dir.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("stale") && r.stdout.contains("file-src"),
        "{}",
        r.stdout
    );
    assert!(file(dir.path(), "file-src").exists());
    let r = snapshot(&fake, dir.path(), &["--prune"]);
    assert!(r.stdout.contains("pruned"), "{}", r.stdout);
    assert!(!file(dir.path(), "file-src").exists());
    assert!(file(dir.path(), "orders-sink").exists());
}

#[test]
fn with_config_never_writes_or_prints_a_secret() {
    let jdbc = "io.confluent.connect.jdbc.JdbcSinkConnector";
    let fake = FakeConnect::builder()
        .plugin(PluginSpec::sink(jdbc).password("connection.pw"))
        .connector(
            ConnectorSpec::sink("jdbc-sink", jdbc)
                .config("connection.pw", "hunter2-declared")
                .config("db.api.key", "hunter3-by-name")
                .config(
                    "ssl.truststore.password",
                    "${file:/etc/kafka/s.properties:pw}",
                )
                .config("topics", "orders")
                .offsets(sink_offsets(9)),
        )
        .start();
    let dir = tempfile::tempdir().unwrap();
    let r = snapshot(&fake, dir.path(), &["--with-config", "-v"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("connection.pw") && r.stdout.contains("db.api.key"),
        "{}",
        r.stdout
    );
    let text = std::fs::read_to_string(file(dir.path(), "jdbc-sink")).unwrap();
    assert!(
        text.contains("${kco:env:KCO_SECRET_JDBC_SINK_CONNECTION_PW}"),
        "{text}"
    );
    assert!(
        text.contains("${file:/etc/kafka/s.properties:pw}"),
        "{text}"
    );
    assert!(text.contains("topics: orders"), "{text}");
    let json = snapshot(&fake, dir.path(), &["--with-config", "-o", "json"]);
    for out in [&r.stdout, &r.stderr, &json.stdout, &json.stderr] {
        assert!(!out.contains("hunter"), "{out}");
    }
    for e in walk(dir.path()) {
        let bytes = std::fs::read(&e).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("hunter"),
            "{}",
            e.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn unreachable_url_is_named_exits_1_and_writes_nothing() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path()).args(["--url", &url, "snapshot"]).run();
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains(&url), "{}", r.stderr);
    assert!(r.stderr.contains("hint:"), "{}", r.stderr);
    assert!(!dir.path().join("snapshots").exists());
}

#[test]
fn connect_3_4_is_refused_with_the_version_it_needs() {
    let fake = FakeConnect::builder()
        .version("3.4.1")
        .source("s", SRC, State::Running, json!([]))
        .start();
    let dir = tempfile::tempdir().unwrap();
    let r = snapshot(&fake, dir.path(), &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("3.4.1") && r.stderr.contains("3.5"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("snapshots").exists());
    // Confluent Platform 7.5 is Kafka 3.5: accepted.
    let cp = FakeConnect::builder()
        .version("7.5.0-ccs")
        .source("s", SRC, State::Running, json!([]))
        .start();
    assert_eq!(snapshot(&cp, dir.path(), &[]).code, 0);
}

#[test]
fn a_connector_that_cannot_be_read_fails_the_run_but_not_the_others() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    fake.fault(
        Fault::on("GET", "/connectors/orders-sink/offsets")
            .always()
            .respond(500, "kaput"),
    );
    let r = snapshot(&fake, dir.path(), &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("failed") && r.stdout.contains("kaput"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("`orders-sink`"), "{}", r.stderr);
    assert!(file(dir.path(), "file-src").exists());
    assert!(!file(dir.path(), "orders-sink").exists());
    let leftovers: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".kco-")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let j = snapshot(&fake, dir.path(), &["-o", "json"]);
    assert_eq!(j.code, 1);
    let report: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(report["connectors"][1]["outcome"], "failed");
}

#[test]
fn a_partition_listed_with_a_null_offset_has_no_offset() {
    // Right after a removal, a worker may still list the partition with `"offset": null`.
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"offsets": [
        {"partition": {"filename": "/gone"}, "offset": null},
        {"partition": {"filename": "/f"}, "offset": {"position": 3}}
    ]});
    let fake = FakeConnect::builder()
        .source("c", SRC, State::Running, json!([]))
        .fault(Fault::on("GET", "/connectors/c/offsets").respond_json(200, body))
        .start();
    let r = Kco::new(dir.path()).on(&fake).args(["snapshot"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(dir.path().join("snapshots/a/c.yaml")).unwrap();
    assert!(
        text.contains("filename: /f") && !text.contains("/gone"),
        "{text}"
    );
}

#[test]
fn all_clusters_snapshots_and_diffs_every_configured_cluster_with_one_exit_code() {
    let (east, west) = (two_connectors(), two_connectors());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kco.yaml"),
        format!(
            "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n",
            east.url(),
            west.url()
        ),
    )
    .unwrap();
    let r = Kco::new(dir.path())
        .args(["snapshot", "--all-clusters"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    for c in ["east", "west"] {
        let f = dir.path().join(format!("snapshots/{c}/orders-sink.yaml"));
        assert!(f.is_file(), "{}", f.display());
        // Every row names its cluster, and so does each cluster's count.
        let row = format!("created   {c}  orders-sink");
        assert!(r.stdout.contains(&row), "{row}\n{}", r.stdout);
        assert!(
            r.stderr.contains(&format!("cluster `{c}`: 2 connectors")),
            "{}",
            r.stderr
        );
    }
    let r = Kco::new(dir.path())
        .args(["diff", "--all-clusters", "-o", "json"])
        .run();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let reports: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(reports.as_array().map(Vec::len), Some(2), "{}", r.stdout);
    let r = Kco::new(dir.path())
        .args(["ls", "--all-clusters", "-o", "json"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listed: Value = serde_json::from_str(&r.stdout).unwrap();
    let clusters: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["cluster"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, ["east", "west"], "{}", r.stdout);
    // One cluster drifts: the exit code over all is the diff's 2.
    west.set_offsets("orders-sink", sink_offsets(1));
    let r = Kco::new(dir.path()).args(["diff", "--all-clusters"]).run();
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let r = Kco::new(dir.path())
        .args(["--cluster", "east", "snapshot", "--all-clusters"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("drop --cluster"), "{}", r.stderr);
}

/// kco reads the time from one clock: `KCO_NOW` fixes it for tests (a snapshot's `capturedAt`,
/// the backup directory of an apply); without it the time is the real one.
#[test]
fn captured_at_and_backup_names_come_from_the_clock() {
    let fake = two_connectors();
    let fixed = tempfile::tempdir().unwrap();
    assert_eq!(snapshot(&fake, fixed.path(), &[]).code, 0);
    let text = std::fs::read_to_string(file(fixed.path(), "orders-sink")).unwrap();
    assert!(
        text.contains(&format!("capturedAt: \"{FIXED_NOW}\"")),
        "{text}"
    );
    fake.set_offsets("orders-sink", sink_offsets(9));
    let r = Kco::new(fixed.path())
        .on(&fake)
        .args(["apply", "snapshots/a/orders-sink.yaml", "--yes"])
        .run();
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        fixed
            .path()
            .join(".kco/backups/20261201T020000Z/a")
            .is_dir(),
        "{}",
        r.all()
    );

    let real = tempfile::tempdir().unwrap();
    let secs =
        |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let before = secs(std::time::SystemTime::now());
    let r = Kco::new(real.path())
        .on(&fake)
        .arg("snapshot")
        .real_clock()
        .run();
    let after = secs(std::time::SystemTime::now());
    assert_eq!(r.code, 0, "{}", r.all());
    let (f, _) = kco::model::file::OffsetsFile::load(&file(real.path(), "orders-sink")).unwrap();
    let at = f.metadata.captured_at.expect("capturedAt");
    let at = secs(humantime::parse_rfc3339(&at).unwrap());
    assert!(
        (before..=after).contains(&at),
        "{at} not in {before}..={after}"
    );
}
