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
    append_lines, get, numbered, sink_offset, skip_unless_required, source_position, testbed,
    testbed_dir, unique_name, wait_for, Connect, FilePipe, Testbed, WAIT,
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
            "kco_sink_lag_records{{cluster=\"{}\",connector=\"{snk}\",type=\"sink\"}} {N}\n",
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
