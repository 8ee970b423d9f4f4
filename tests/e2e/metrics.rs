//! kco's metrics on a real Prometheus (scripts/monitoring.sh: node-exporter's textfile
//! collector and Prometheus, scraping and evaluating examples/monitoring/kco-alerts.yaml
//! every second): a drifted sink's series and its KcoOffsetsDrifted alert appear after
//! `kco diff --metrics-file`, and both clear after `kco apply`; a sink stopped while its topic
//! grows by N records shows a lag of N.
//!
//! `KCO_E2E_PROMETHEUS_URL` (default http://127.0.0.1:9090) and `KCO_E2E_TEXTFILE_DIR`
//! (default <test bed>/monitoring/textfile); without a Prometheus there the tests skip,
//! unless `KCO_E2E_PROMETHEUS=required` (scripts/test.sh sets it).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    append_lines, file_sink_config, get, numbered, sink_offset, skip_unless_required,
    source_position, testbed, testbed_dir, unique_name, wait_for, Connect, FilePipe, Testbed, WAIT,
};
use crate::support::data::sink_offsets;
use crate::support::env::TestEnv;

fn prometheus() -> String {
    std::env::var("KCO_E2E_PROMETHEUS_URL").unwrap_or_else(|_| "http://127.0.0.1:9090".into())
}

fn textfile_dir() -> PathBuf {
    std::env::var_os("KCO_E2E_TEXTFILE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| testbed_dir().join("monitoring/textfile"))
}

/// The test bed and its monitoring, or `None` (skipped) without them.
fn monitored() -> Option<Testbed> {
    let tb = testbed()?;
    let addr = prometheus()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let listening = addr
        .parse()
        .is_ok_and(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok());
    if !(listening && textfile_dir().is_dir()) {
        skip_unless_required(
            "KCO_E2E_PROMETHEUS",
            "no Prometheus with a textfile directory (scripts/monitoring.sh up)",
        );
        return None;
    }
    Some(tb)
}

/// The result of an instant query.
fn query(q: &str) -> Vec<Value> {
    let url = format!("{}/api/v1/query?query={}", prometheus(), percent_encode(q));
    let r = get(&url);
    assert_eq!(r.status, 200, "{q}: {}", r.body);
    r.body["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Waits until `q` has `want` series (Prometheus scrapes and evaluates every second).
fn wait_series(q: &str, want: usize) -> Vec<Value> {
    wait_for(&format!("{want} series for {q}"), WAIT, || {
        let r = query(q);
        if r.len() == want {
            Ok(r)
        } else {
            Err(format!("{r:?}"))
        }
    })
}

/// A kco.yaml cluster `name` on cluster a's workers and the test bed's Kafka; the metrics
/// file in the textfile directory, removed when dropped.
struct Monitored {
    env: TestEnv,
    cluster: String,
    file: PathBuf,
}

impl Drop for Monitored {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn monitored_env(tb: &Testbed) -> Monitored {
    let cluster = unique_name("kco-metrics");
    let env = TestEnv::new().args(&["--cluster", &cluster]);
    env.config(format!(
        "clusters:\n  {cluster}:\n    urls: [{}]\n    kafka: {{bootstrap: \"{}\"}}\n",
        tb.a_urls.join(", "),
        tb.kafka()
    ));
    let file = textfile_dir().join(format!("{cluster}.prom"));
    Monitored { env, cluster, file }
}

/// On cluster a, a FileStream source copying `lines` into a new topic and a sink reading it,
/// once the sink has committed them all; kco as [`monitored_env`] sets it up.
fn pipeline(tb: &Testbed, lines: usize) -> (Connect, Monitored, FilePipe) {
    let a = tb.a();
    let m = monitored_env(tb);
    let p = FilePipe::start(&a, m.env.path(), "kco-metrics", &numbered("m", 0..lines));
    a.wait_offsets(&p.sink, &format!("kafka_offset {lines}"), |o| {
        sink_offset(o, &p.topic) == Some(lines as i64)
    });
    (a, m, p)
}

#[test]
fn a_drift_fires_the_alert_on_prometheus_and_apply_clears_it() {
    let Some(tb) = monitored() else { return };
    let (a, m, p) = pipeline(&tb, 3);
    let snk = p.sink.clone();
    m.env.kco(&["snapshot", &snk]).success("kco snapshot");
    // Behind kco's back: the sink stopped and rewound to 1.
    a.stop(&snk);
    a.wait_stopped(&snk);
    let r = a.patch_offsets(&snk, sink_offsets(&p.topic, &[(0, 1)]));
    assert_eq!(r.status, 200, "{}", r.body);
    let file = m.file.to_str().unwrap();
    let run = m.env.kco(&["diff", &snk, "--metrics-file", file]);
    assert_eq!(run.code, 2, "drift: {}{}", run.stdout, run.stderr);

    let c = &m.cluster;
    let drifted = format!(
        "kco_connector_status{{cluster=\"{c}\",connector=\"{snk}\",status=\"drifted\"}} == 1"
    );
    wait_series(&drifted, 1);
    let moved = query(&format!(
        "kco_connector_offset_distance{{cluster=\"{c}\",connector=\"{snk}\",direction=\"backward\"}}"
    ));
    assert_eq!(moved[0]["value"][1], "2", "{moved:?}");
    let firing = format!(
        "ALERTS{{alertname=\"KcoOffsetsDrifted\",alertstate=\"firing\",cluster=\"{c}\",connector=\"{snk}\"}}"
    );
    wait_series(&firing, 1);

    // The file put back: the next diff's metrics say in sync, and the alert resolves.
    let snap = m.env.path().join(format!("snapshots/{c}/{snk}.yaml"));
    m.env
        .kco(&["apply", snap.to_str().unwrap(), "--yes"])
        .success("kco apply");
    // apply leaves the sink as it found it (STOPPED); running again, it is as its file says.
    a.resume(&snk);
    a.wait_running(&snk);
    let run = m.env.kco(&["diff", &snk, "--metrics-file", file]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    wait_series(
        &format!(
            "kco_connector_status{{cluster=\"{c}\",connector=\"{snk}\",status=\"in_sync\"}} == 1"
        ),
        1,
    );
    wait_series(&drifted, 0);
    wait_series(&firing, 0);
}

#[test]
fn a_stopped_sink_shows_the_records_its_topic_grew_by_as_lag() {
    let Some(tb) = monitored() else { return };
    let (a, m, p) = pipeline(&tb, 3);
    let (snk, input) = (p.sink.clone(), &p.input);
    a.stop(&snk);
    a.wait_stopped(&snk);
    // N records more in the topic while the sink is stopped.
    const N: usize = 7;
    append_lines(input, &numbered("late", 0..N));
    let size = p.input_len();
    wait_for(
        "the source read every line",
        WAIT,
        || match source_position(&a.offsets(&p.src), input) {
            Some(p) if p == size => Ok(()),
            p => Err(format!("{p:?} of {size}")),
        },
    );
    // The source's position is committed after its records are written (flushed).
    std::thread::sleep(Duration::from_secs(1));
    m.env.kco(&["snapshot", &snk]).success("kco snapshot");
    let file = m.file.to_str().unwrap();
    let run = m.env.kco(&["diff", &snk, "--metrics-file", file]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(&m.file).unwrap();
    assert!(
        text.contains(&format!(
            "kco_sink_lag_records{{cluster=\"{}\",command=\"diff\",connector=\"{snk}\",type=\"sink\",group=\"connect-{snk}\"}} {N}\n",
            m.cluster
        )),
        "{text}"
    );
    // The same lag in diff's and ls's own output.
    let out = m
        .env
        .kco(&["diff", &snk, "--lag"])
        .success("kco diff --lag");
    assert!(out.contains(&format!("  {snk}  {N} records\n")), "{out}");
    let out = m.env.kco(&["ls", "--lag"]).success("kco ls --lag");
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    let lag = header.iter().position(|h| *h == "LAG");
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with(&format!("{snk} ")))
        .unwrap_or_else(|| panic!("{out}"))
        .split_whitespace()
        .collect();
    assert_eq!(lag.map(|c| row[c]), Some(N.to_string().as_str()), "{out}");
    let out = m
        .env
        .kco(&["ls", "--lag", "-o", "json"])
        .success("kco ls --lag");
    let v: Value = serde_json::from_str(&out).unwrap();
    let entry = crate::support::json::named(&v, "connectors", &snk);
    assert_eq!(entry["lag"], N, "{entry}");
    let lag = wait_series(
        &format!(
            "kco_sink_lag_records{{cluster=\"{}\",connector=\"{snk}\"}} == {N}",
            m.cluster
        ),
        1,
    );
    assert_eq!(lag[0]["metric"]["type"], "sink", "{lag:?} ({})", p.topic);
}

/// Every query of the Grafana dashboard is one Prometheus' API accepts (its `$cluster`
/// variable as "all").
#[test]
fn prometheus_accepts_every_query_of_the_dashboard() {
    let Some(_tb) = monitored() else { return };
    let path = crate::harness::repo_root().join("examples/monitoring/kco-dashboard.json");
    let d: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let exprs: Vec<String> = d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().replace("$cluster", ".*"))
        .collect();
    assert!(exprs.len() >= 10);
    for e in exprs {
        query(&e); // asserts a 200 with a result
    }
}

/// `promtool check metrics` accepts a file kco wrote (promtool comes with the monitoring of
/// scripts/monitoring.sh); with `KCO_E2E_METRICS_COPY`, the file is copied there too, for
/// scripts/test.sh's own `promtool check metrics` step.
fn promtool_accepts(file: &std::path::Path) {
    if let Some(dir) = std::env::var_os("KCO_E2E_METRICS_COPY") {
        let to = PathBuf::from(dir).join(file.file_name().unwrap());
        std::fs::copy(file, &to)
            .unwrap_or_else(|e| panic!("{} -> {}: {e}", file.display(), to.display()));
    }
    let Ok(out) = std::process::Command::new("sh")
        .arg("-c")
        .arg("promtool check metrics < \"$1\"")
        .arg("sh")
        .arg(file)
        .output()
    else {
        return;
    };
    assert!(
        out.status.success(),
        "promtool check metrics {}: {}{}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A sink whose only task FAILED, its offsets in sync with its file: diff and snapshot say
/// FAILED with the worker's why, `--fail-on drift,failed` exits 2, and KcoConnectorFailed
/// fires on Prometheus; once its config is fixed and it runs again, the next runs clear it.
/// Then the snapshot's metrics file removed (its job stopped): KcoJobMissing fires for the
/// snapshot of that cluster.
#[test]
fn a_failed_task_fires_its_alert_the_fix_clears_it_and_a_stopped_snapshot_job_rings() {
    let Some(tb) = monitored() else { return };
    let a = tb.a();
    let m = monitored_env(&tb);
    let c = m.cluster.clone();
    let snk = unique_name("kco-metrics-failing");
    // Its file's directory is a plain file: the task cannot open it and FAILs at start.
    let blocker = m.env.path().join("not-a-dir");
    std::fs::write(&blocker, "a file").unwrap();
    let topic = unique_name("kco-metrics-failing-t");
    let _sink = a.create(&snk, file_sink_config(&blocker.join("out.txt"), &topic));
    wait_for(&format!("a task of {snk} FAILED"), WAIT, || {
        let st = a.status(&snk).ok_or("no status")?;
        match st["tasks"][0]["state"] == "FAILED" {
            true => Ok(()),
            false => Err(st.to_string()),
        }
    });
    let snapshot_file = textfile_dir().join(format!("{c}_snapshot.prom"));
    let _gone = Removed(snapshot_file.clone());
    let (diff_file, snap) = (m.file.to_str().unwrap(), snapshot_file.to_str().unwrap());
    let out = m
        .env
        .kco(&["snapshot", &snk, "--metrics-file", snap])
        .success("kco snapshot");
    assert!(out.contains("task 0 FAILED: "), "{out}");
    let run = m.env.kco(&["diff", &snk, "--metrics-file", diff_file]);
    assert_eq!(run.code, 0, "in sync: {}", run.all());
    assert!(
        run.stdout
            .contains(&format!("FAILED  {snk}: task 0 FAILED: ")),
        "{}",
        run.all()
    );
    let run = m.env.kco(&["diff", &snk, "--fail-on", "drift,failed"]);
    assert_eq!(run.code, 2, "--fail-on failed: {}", run.all());
    for f in [&m.file, &snapshot_file] {
        promtool_accepts(f);
    }
    let firing = format!(
        "ALERTS{{alertname=\"KcoConnectorFailed\",alertstate=\"firing\",cluster=\"{c}\",connector=\"{snk}\"}}"
    );
    wait_series(&firing, 1);

    // Fixed: a directory it can write; a config update restarts its task.
    let dir = m.env.path().join("out");
    std::fs::create_dir(&dir).unwrap();
    let fixed = file_sink_config(&dir.join("out.txt"), &topic);
    let r = crate::harness::put(&a.url(&format!("/connectors/{snk}/config")), Some(&fixed));
    assert!(r.status == 200 || r.status == 201, "{}", r.body);
    // The update restarts the task; until it has, the old task's FAILED may still show.
    wait_for(&format!("the task of {snk} RUNNING"), WAIT, || {
        let st = a.status(&snk).ok_or("no status")?;
        match st["tasks"][0]["state"] == "RUNNING" {
            true => Ok(()),
            false => Err(st.to_string()),
        }
    });
    m.env
        .kco(&["snapshot", &snk, "--metrics-file", snap])
        .success("kco snapshot");
    let run = m.env.kco(&[
        "diff",
        &snk,
        "--fail-on",
        "drift,failed",
        "--metrics-file",
        diff_file,
    ]);
    assert_eq!(run.code, 0, "{}", run.all());
    wait_series(
        &format!("max by (command) (kco_connector_tasks_failed{{cluster=\"{c}\",connector=\"{snk}\"}}) == 0"),
        2,
    );
    wait_series(&firing, 0);

    // The snapshot job stops: its file is gone, and the alert names it.
    wait_series(
        &format!("kco_last_success_timestamp_seconds{{cluster=\"{c}\",command=\"snapshot\"}}"),
        1,
    );
    std::fs::remove_file(&snapshot_file).unwrap();
    wait_series(
        &format!(
            "ALERTS{{alertname=\"KcoJobMissing\",alertstate=\"firing\",cluster=\"{c}\",command=\"snapshot\"}}"
        ),
        1,
    );
}

/// A file removed when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Every command's metrics file (snapshot, diff, ls, ls --orphaned) of two clusters in one
/// textfile directory: node-exporter serves every series (no "collected before with the
/// same name and label values" in its log for them, `node_textfile_scrape_error` 0), and
/// every family of the files is in Prometheus.
#[test]
fn every_command_s_file_of_two_clusters_shares_one_textfile_directory() {
    let Some(tb) = monitored() else { return };
    let one = unique_name("kco-metrics-one");
    let two = unique_name("kco-metrics-two");
    let env = TestEnv::new();
    let kafka = tb.kafka();
    env.config(format!(
        "clusters:\n  {one}:\n    urls: [{}]\n    kafka: {{bootstrap: \"{kafka}\"}}\n  {two}:\n    urls: [{}]\n    kafka: {{bootstrap: \"{kafka}\"}}\n",
        tb.a_urls.join(", "),
        tb.b_url
    ));
    // A sink of each cluster's own (the bed may have no other connector now).
    let mut sinks = Vec::new();
    for connect in [tb.a(), tb.b()] {
        let name = unique_name("kco-metrics-dir");
        let out = env.path().join(format!("{name}.txt"));
        let config = file_sink_config(&out, &unique_name("kco-metrics-dir-t"));
        sinks.push(connect.create(&name, config));
        connect.wait_running(&name);
    }
    let mut files = Vec::new();
    let mut families = std::collections::BTreeSet::new();
    for cluster in [&one, &two] {
        for (name, args) in [
            ("snapshot", &["snapshot"][..]),
            ("diff", &["diff"][..]),
            ("ls", &["ls"][..]),
            ("ls_orphaned", &["ls", "--orphaned"][..]),
        ] {
            let file = textfile_dir().join(format!("{cluster}_{name}.prom"));
            files.push(Removed(file.clone()));
            let f = file.to_str().unwrap();
            let run = env.kco(
                &[
                    &["--cluster", cluster.as_str()],
                    args,
                    &["--metrics-file", f],
                ]
                .concat(),
            );
            // Drift (2) and a connector another test deleted meanwhile (1) write metrics too.
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{name} of {cluster}: {e}: {}", run.all()));
            families.extend(
                text.lines()
                    .filter_map(|l| l.strip_prefix("# TYPE "))
                    .map(|l| l.split(' ').next().unwrap().to_string()),
            );
            promtool_accepts(&file);
        }
    }
    let q = format!("count by (__name__) ({{cluster=~\"{one}|{two}\"}})");
    let present = wait_for(
        &format!("every family in Prometheus: {families:?}"),
        WAIT,
        || {
            let got: std::collections::BTreeSet<String> = query(&q)
                .iter()
                .filter_map(|s| s["metric"]["__name__"].as_str().map(str::to_string))
                .collect();
            match families.is_subset(&got) {
                true => Ok(got),
                false => Err(format!("{got:?}")),
            }
        },
    );
    assert!(present.contains("kco_connector_status"), "{present:?}");
    assert!(
        present.contains("kco_connector_tasks_failed"),
        "{present:?}"
    );
    let errors = query("node_textfile_scrape_error");
    assert!(errors.iter().all(|s| s["value"][1] == "0"), "{errors:?}");
    let log = std::fs::read_to_string(testbed_dir().join("monitoring/node-exporter.log"))
        .unwrap_or_default();
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(one.as_str()) || l.contains(two.as_str()))
        .collect();
    assert!(refused.is_empty(), "node-exporter refused: {refused:?}");
}
