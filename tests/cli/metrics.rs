//! Metrics of the commands that judge (docs/metrics.md): `-o openmetrics` and
//! `--metrics-file` from diff, snapshot, ls and log against the fake Connect; healthy,
//! drifted and failed runs; every text checked by `promtool check metrics` where promtool is
//! installed (scripts/test.sh installs it).

use std::path::Path;
use std::process::{Command, Stdio};

use kco::model::ConnectorType;
use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{self, SnapshotFile};
use crate::support::env::TestEnv;
use crate::support::run::Run;

const SINK: &str = "FileStreamSink";

fn sink_offsets(parts: &[(i64, i64)]) -> Value {
    data::sink_offsets("t", parts)
}

/// `promtool check metrics` accepts `text` (where promtool is installed; scripts/test.sh
/// installs it and sets `KCO_PROMTOOL=required`, so CI always checks).
fn promtool_accepts(text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        assert_ne!(
            std::env::var("KCO_PROMTOOL").as_deref(),
            Ok("required"),
            "promtool not found, and KCO_PROMTOOL=required (install Debian's prometheus)"
        );
        eprintln!("promtool not installed: metrics not checked by it");
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics refused:\n{}{}\n---\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The lines of `text` for metric `name`.
fn lines<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
        })
        .collect()
}

/// `run`'s metrics on stdout, its exit code asserted to be `code`; checked by promtool.
fn stdout_metrics(run: Run, code: i32) -> String {
    assert_eq!(run.code, code, "{}", run.stderr);
    promtool_accepts(&run.stdout);
    run.stdout
}

/// The metrics file `kco.prom` in `t` after `run`, whose exit code is asserted to be `code`;
/// checked by promtool.
fn file_metrics(t: &TestEnv, run: &Run, code: i32) -> String {
    assert_eq!(run.code, code, "{}", run.stderr);
    let text = std::fs::read_to_string(t.path().join("kco.prom")).unwrap();
    promtool_accepts(&text);
    text
}

/// A drifted sink (rewound while running), one in sync, and a file whose connector is gone.
fn drifted() -> (TestEnv, FakeConnect) {
    let t = TestEnv::new();
    let dir = t.path().join("snapshots/a");
    let (filed, steady) = (sink_offsets(&[(0, 100), (1, 50)]), sink_offsets(&[(0, 7)]));
    SnapshotFile::captured("orders", ConnectorType::Sink, filed)
        .captured_at("2026-11-30T02:00:00Z")
        .write_in(&dir);
    SnapshotFile::captured("steady", ConnectorType::Sink, steady.clone()).write_in(&dir);
    let live = sink_offsets(&[(0, 40), (1, 50)]);
    let fake = FakeConnect::builder()
        .sink("orders", SINK, State::Running, live)
        .sink("steady", SINK, State::Running, steady)
        .start();
    (t, fake)
}

#[test]
fn a_drifted_diff_as_openmetrics_names_each_verdict_and_how_far() {
    let (t, fake) = drifted();
    // Drift still exits 2.
    let out = stdout_metrics(t.on(&fake, &["diff", "-o", "openmetrics"]), 2);
    assert!(out.ends_with("# EOF\n"), "{out}");
    assert_eq!(
        lines(&out, "kco_connector_status"),
        [
            r#"kco_connector_status{cluster="a",command="diff",connector="orders",type="sink",status="drifted"} 1"#,
            r#"kco_connector_status{cluster="a",command="diff",connector="steady",type="sink",status="in_sync"} 1"#,
        ]
    );
    assert!(out.contains(
        "kco_connector_offset_distance{cluster=\"a\",connector=\"orders\",type=\"sink\",direction=\"backward\",unit=\"records\"} 60\n"
    ), "{out}");
    assert!(out.contains(
        "kco_snapshot_captured_timestamp_seconds{cluster=\"a\",connector=\"orders\",type=\"sink\"} 1796004000\n"
    ), "{out}");
    assert!(out.contains("kco_connectors{cluster=\"a\",command=\"diff\",status=\"drifted\"} 1\n"));
    assert!(out.contains("kco_run_failed{cluster=\"a\",command=\"diff\"} 0\n"));
    assert_eq!(lines(&out, "kco_last_success_timestamp_seconds").len(), 1);
    // No per-partition series unless named; then only for the connector named.
    assert!(lines(&out, "kco_partition_offset_distance").is_empty());
    let out = t
        .on(
            &fake,
            &[
                "diff",
                "-o",
                "openmetrics",
                "--metrics-partitions",
                "orders",
            ],
        )
        .stdout;
    promtool_accepts(&out);
    assert_eq!(
        lines(&out, "kco_partition_offset_distance"),
        [
            r#"kco_partition_offset_distance{cluster="a",connector="orders",type="sink",partition="t/0",direction="backward",unit="records"} 60"#
        ]
    );
}

#[test]
fn a_metrics_file_is_written_beside_the_normal_output_and_a_failed_run_keeps_the_last_success() {
    let (t, fake) = drifted();
    let file = t.path().join("kco.prom");
    let run = t.on(&fake, &["diff", "--metrics-file", "kco.prom"]);
    let healthy = file_metrics(&t, &run, 2);
    assert!(
        run.stdout.contains("orders"),
        "the normal report: {}",
        run.stdout
    );
    assert!(!run.stdout.contains("kco_"), "{}", run.stdout);
    let success = lines(&healthy, "kco_last_success_timestamp_seconds");
    assert_eq!(success.len(), 1, "{healthy}");
    // The worker goes away: the run fails, the file says so and keeps the success it had.
    fake.down();
    let failed = file_metrics(&t, &t.on(&fake, &["diff", "--metrics-file", "kco.prom"]), 1);
    assert_eq!(
        lines(&failed, "kco_last_success_timestamp_seconds"),
        success
    );
    assert!(
        failed.contains("kco_run_failed{cluster=\"a\",command=\"diff\"} 1\n"),
        "{failed}"
    );
    assert!(
        failed.contains("kco_run_error{cluster=\"a\",command=\"diff\",kind=\"client\"} 1\n"),
        "{failed}"
    );
    assert!(
        lines(&failed, "kco_connector_status").is_empty(),
        "{failed}"
    );
    // A first run that fails claims no success at all.
    std::fs::remove_file(&file).unwrap();
    let first = file_metrics(&t, &t.on(&fake, &["diff", "--metrics-file", "kco.prom"]), 1);
    assert!(
        lines(&first, "kco_last_success_timestamp_seconds").is_empty(),
        "{first}"
    );
}

#[test]
fn a_healthy_diff_and_a_failed_one_on_stdout() {
    let (t, fake) = drifted();
    fake.set_offsets("orders", sink_offsets(&[(0, 100), (1, 50)]));
    let out = stdout_metrics(t.on(&fake, &["diff", "-o", "openmetrics"]), 0);
    assert!(
        out.contains("kco_connectors{cluster=\"a\",command=\"diff\",status=\"drifted\"} 0\n"),
        "{out}"
    );
    fake.down();
    let run = t.on(&fake, &["diff", "-o", "openmetrics"]);
    assert!(run.stderr.contains("error:"), "the error on stderr: {run}");
    let out = stdout_metrics(run, 1);
    assert!(
        out.contains("kco_run_failed{cluster=\"a\",command=\"diff\"} 1\n"),
        "{out}"
    );
}

#[test]
fn a_metrics_file_where_it_cannot_be_written_is_an_error_naming_it_with_nothing_half_written() {
    let (t, fake) = drifted();
    let run = t.on(&fake, &["diff", "--metrics-file", "no/such/dir/kco.prom"]);
    run.assert_stderr(1, &["no/such/dir/kco.prom", "no directory"]);
    assert!(!t.path().join("no").exists());
    assert!(
        run.stdout.is_empty(),
        "nothing was compared: {}",
        run.stdout
    );
    // A directory where the file should be: the rename fails, no temporary file is left.
    std::fs::create_dir(t.path().join("taken")).unwrap();
    let run = t.on(&fake, &["diff", "--metrics-file", "taken"]);
    run.assert_stderr(1, &["cannot write", "taken"]);
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        std::fs::read_dir(t.path().join("taken")).unwrap().count(),
        0
    );
}

#[test]
fn openmetrics_is_refused_where_there_are_no_metrics() {
    let (t, fake) = drifted();
    for (args, refusal) in [
        (
            &["apply", "snapshots/a/orders.yaml"][..],
            "--output openmetrics is for",
        ),
        (&["diff", "--base", "HEAD"], "not written with --base"),
    ] {
        let run = t.on(&fake, &[args, &["-o", "openmetrics"]].concat());
        run.assert_stderr(1, &[refusal]);
    }
}

#[test]
fn snapshot_and_ls_metrics() {
    let (t, fake) = drifted();
    let out = stdout_metrics(t.on(&fake, &["snapshot", "-o", "openmetrics"]), 0);
    assert!(
        out.contains("kco_snapshot_connectors{cluster=\"a\",outcome=\"updated\"} 1\n"),
        "{out}"
    );
    assert!(out.contains(
        "kco_connector_snapshot_failed{cluster=\"a\",connector=\"orders\",type=\"sink\"} 0\n"
    ));
    assert!(out
        .contains("kco_snapshot_partitions{cluster=\"a\",connector=\"orders\",type=\"sink\"} 2\n"));
    assert!(out.contains("kco_last_success_timestamp_seconds{cluster=\"a\",command=\"snapshot\"}"));
    let out = stdout_metrics(t.on(&fake, &["ls", "-o", "openmetrics"]), 0);
    assert!(out.contains(
        "kco_connector_status{cluster=\"a\",command=\"ls\",connector=\"orders\",type=\"sink\",status=\"in_sync\"} 1\n"
    ), "{out}");
    assert!(out.contains("kco_connector_tasks{cluster=\"a\",connector=\"orders\",type=\"sink\"}"));
}

#[test]
fn log_stalled_metrics() {
    let (r, _) = crate::history::history();
    let out = stdout_metrics(r.kco(&["log", "--stalled", "2", "-o", "openmetrics"]), 2);
    assert_eq!(
        lines(&out, "kco_connector_stalled"),
        [
            r#"kco_connector_stalled{cluster="a",connector="billing",type="source"} 0"#,
            r#"kco_connector_stalled{cluster="a",connector="newbie",type="sink"} 1"#,
            r#"kco_connector_stalled{cluster="a",connector="orders",type="sink"} 0"#,
        ]
    );
    // orders' last commit: the merge of 2026-12-01T02:00:00Z.
    assert!(out.contains(
        "kco_snapshot_committed_timestamp_seconds{cluster=\"a\",connector=\"orders\",type=\"sink\"} 1796090400\n"
    ), "{out}");
}

/// Every query of the Grafana dashboard (its variables as the dashboard fills them in)
/// parses as PromQL: each becomes a recording rule that `promtool check rules` reads.
#[test]
fn every_query_of_the_dashboard_is_promql() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join("examples/monitoring/kco-dashboard.json")).unwrap();
    let exprs = dashboard_queries(&serde_json::from_str(&text).unwrap());
    assert!(exprs.len() >= 10, "{exprs:?}");
    assert!(exprs.iter().all(|e| e.contains("kco_")), "{exprs:?}");
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        rules.push_str(&format!(
            "      - record: kco:dashboard_query_{i}\n        expr: {}\n",
            serde_json::to_string(e).unwrap()
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.yaml");
    std::fs::write(&file, rules).unwrap();
    let Ok(out) = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
    else {
        eprintln!("promtool not installed: the dashboard's queries not checked by it");
        return;
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The dashboard's queries, `$cluster` filled in as "all".
pub fn dashboard_queries(d: &Value) -> Vec<String> {
    d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().replace("$cluster", ".*"))
        .collect()
}

/// Against a DR cluster: each mirrored sink's readiness; a source is no part of it.
#[test]
fn dr_readiness_metrics() {
    let dir = TestEnv::new();
    let (_east, _west) = crate::dr::regions(&dir, "");
    let args = [
        "--cluster",
        "west",
        "diff",
        "snapshots/east",
        "-o",
        "openmetrics",
    ];
    // No mirror: no translation.
    let out = stdout_metrics(dir.kco(&args), 2);
    assert_eq!(
        lines(&out, "kco_dr_ready"),
        [r#"kco_dr_ready{cluster="west",connector="orders-sink",type="sink"} 0"#]
    );
    assert_eq!(
        lines(&out, "kco_dr_translatable"),
        [r#"kco_dr_translatable{cluster="west",connector="orders-sink",type="sink"} 0"#]
    );
    let out = stdout_metrics(dir.kco(&[&args[..], &["--translate", "none"]].concat()), 0);
    assert_eq!(
        lines(&out, "kco_dr_ready"),
        [r#"kco_dr_ready{cluster="west",connector="orders-sink",type="sink"} 1"#]
    );
    assert!(
        out.contains(
            "kco_dr_behind_records{cluster=\"west\",connector=\"orders-sink\",type=\"sink\"} 0\n"
        ),
        "{out}"
    );
    assert!(out.contains("kco_connector_status{cluster=\"west\",command=\"diff\",connector=\"orders-src\",type=\"source\",status=\"skipped\"} 1\n"), "{out}");
}

#[test]
fn lag_without_kafka_is_an_error_naming_the_setting() {
    let (t, fake) = drifted();
    for cmd in ["diff", "ls"] {
        let run = t.on(&fake, &[cmd, "--lag"]);
        run.assert_stderr(
            1,
            &["--lag reads the sinks' topics through the cluster's `kafka:`"],
        );
    }
}

#[test]
fn a_run_that_fails_before_it_starts_writes_its_failure_too() {
    let (t, fake) = drifted();
    let run = t.on(&fake, &["snapshot", "--metrics-file", "kco.prom"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let before = std::fs::read_to_string(t.path().join("kco.prom")).unwrap();
    let success = lines(&before, "kco_last_success_timestamp_seconds");
    // kco.yaml that cannot be read: no context, yet the metrics say the run failed.
    t.config("clusters: [not, a, map]\n");
    let run = t.on(&fake, &["snapshot", "--metrics-file", "kco.prom"]);
    run.assert_stderr(1, &["kco.yaml"]);
    let after = file_metrics(&t, &run, 1);
    assert_eq!(lines(&after, "kco_last_success_timestamp_seconds"), success);
    assert!(
        after.contains("kco_run_error{cluster=\"a\",command=\"snapshot\",kind=\"config\"} 1\n"),
        "{after}"
    );
}

/// `--all-clusters`: one text, each cluster with its own run metrics; a cluster that fails
/// keeps its own last success while the other reports a new one.
#[test]
fn all_clusters_give_each_cluster_its_run_metrics() {
    let t = TestEnv::new();
    let east = FakeConnect::builder()
        .sink("orders", SINK, State::Running, sink_offsets(&[(0, 5)]))
        .start();
    let west = FakeConnect::builder()
        .sink("billing", SINK, State::Running, sink_offsets(&[(0, 9)]))
        .start();
    t.config(format!(
        "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n",
        east.url(),
        west.url()
    ));
    // The first run earlier than the clock of the runs after it.
    let run = t
        .cmd()
        .env("KCO_NOW", "2026-11-01T00:00:00Z")
        .args(["snapshot", "--all-clusters", "--metrics-file", "kco.prom"])
        .run();
    let first = file_metrics(&t, &run, 0);
    assert_eq!(
        lines(&first, "kco_last_success_timestamp_seconds").len(),
        2,
        "{first}"
    );
    // West goes down: its run failed, east's did not; west keeps the success it had.
    west.down();
    let out = stdout_metrics(t.kco(&["diff", "--all-clusters", "-o", "openmetrics"]), 1);
    for (cluster, failed) in [("east", 0), ("west", 1)] {
        let line = format!("kco_run_failed{{cluster=\"{cluster}\",command=\"diff\"}} {failed}\n");
        assert!(out.contains(&line), "{out}");
    }
    assert!(out.contains(
        "kco_connector_status{cluster=\"east\",command=\"diff\",connector=\"orders\",type=\"sink\",status=\"in_sync\"} 1\n"
    ));
    let run = t.kco(&["snapshot", "--all-clusters", "--metrics-file", "kco.prom"]);
    let after = file_metrics(&t, &run, 1);
    let success = |text: &str, c: &str| {
        lines(text, "kco_last_success_timestamp_seconds")
            .into_iter()
            .find(|l| l.contains(&format!("cluster=\"{c}\"")))
            .map(str::to_string)
    };
    assert_eq!(success(&after, "west"), success(&first, "west"));
    assert!(
        success(&after, "east").is_some_and(|e| Some(e) != success(&first, "east")),
        "{after}"
    );
    assert!(
        after.contains("kco_run_error{cluster=\"west\",command=\"snapshot\",kind=\"client\"} 1\n"),
        "{after}"
    );
}

/// The CronJob of examples/monitoring is YAML whose job writes kco's metrics into the
/// directory it mounts from the node (where node-exporter reads them).
#[test]
fn the_textfile_cronjob_writes_metrics_where_node_exporter_reads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("examples/monitoring/kco-textfile-cronjob.yaml"))
        .unwrap();
    let job: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let pod = &job["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let script = container["args"][0].as_str().unwrap();
    assert!(
        script.contains("diff --metrics-file /textfile/"),
        "{script}"
    );
    assert_eq!(container["volumeMounts"][0]["mountPath"], "/textfile");
    assert_eq!(
        pod["volumes"][0]["hostPath"]["path"],
        "/var/lib/node_exporter/textfile"
    );
}

/// A sink in sync with its file whose task FAILED: diff, ls and snapshot say FAILED with the
/// first line of the worker's trace; diff exits 0 by default and 2 with `--fail-on
/// drift,failed`; every command's metrics count the failed task under its own `command`.
#[test]
fn a_failed_task_is_said_by_diff_ls_and_snapshot_and_counted_in_their_metrics() {
    let (t, fake) = drifted();
    fake.fail_tasks(
        "steady",
        Some("org.apache.kafka.connect.errors.ConnectException: disk full\n\tat a.b(C.java:1)"),
    );
    let said = "steady: task 0 FAILED: org.apache.kafka.connect.errors.ConnectException: disk full";
    let run = t.on(&fake, &["diff", "steady"]);
    assert_eq!(run.code, 0, "in sync: {run}");
    assert!(run.stdout.contains(&format!("FAILED  {said}\n")), "{run}");
    assert!(run.stdout.contains("1 in sync, 1 FAILED"), "{run}");
    let run = t.on(&fake, &["diff", "steady", "--fail-on", "drift,failed"]);
    assert_eq!(run.code, 2, "{run}");
    let run = t.on(&fake, &["ls"]);
    assert!(run.stdout.contains(&format!("FAILED  {said}\n")), "{run}");
    let run = t.on(&fake, &["snapshot", "steady"]);
    assert!(run.stdout.contains("task 0 FAILED: org.apache"), "{run}");
    for (command, args, code) in [
        ("diff", &["diff", "steady"][..], 0),
        ("ls", &["ls"][..], 0),
        ("snapshot", &["snapshot", "steady"][..], 0),
    ] {
        let out = stdout_metrics(t.on(&fake, &[args, &["-o", "openmetrics"]].concat()), code);
        let line = format!(
            "kco_connector_tasks_failed{{cluster=\"a\",command=\"{command}\",connector=\"steady\",type=\"sink\"}} 1\n"
        );
        assert!(out.contains(&line), "{command}: {out}");
    }
}
