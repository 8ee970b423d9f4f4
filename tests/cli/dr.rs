//! Disaster recovery against two fake Connect clusters on different Kafka clusters, where no
//! Kafka is read: `--translate none` (topics renamed, offsets kept) and source files. The
//! translation through MM2's checkpoints is in `engine::mirror`'s tests and tests/e2e/dr.rs.

use serde_json::{json, Value};

use crate::fake_connect::{ConnectorSpec, FakeConnect, FakeConnectBuilder};
use crate::support::data::{sink_offsets, SINK, SOURCE};
use crate::support::env::TestEnv;
use crate::support::run::Kco;

/// A Connect 4.1 (not started) on Kafka cluster `id`.
pub fn on_kafka(id: &str) -> FakeConnectBuilder {
    FakeConnect::builder().version("4.1.0").kafka_cluster_id(id)
}

/// A sink `name` of `topic`, its partition 0 at `offset`.
pub fn sink_of(name: &str, topic: &str, offset: i64) -> ConnectorSpec {
    let offsets = sink_offsets(topic, &[(0, offset)]);
    ConnectorSpec::sink(name, SINK)
        .config("topics", topic)
        .offsets(offsets)
}

/// The arguments of a dry run applying `files` to `cluster` with topics renamed and offsets
/// kept (`--translate none`), `more` before that flag.
fn dry_apply<'a>(cluster: &'a str, files: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let apply = ["--cluster", cluster, "apply", files];
    [&apply[..], more, &["--translate", "none", "--dry-run"]].concat()
}

/// East with a sink `orders-sink` (topic `orders`) and a source `orders-src`, west empty,
/// on Kafka clusters K-EAST and K-WEST; the files of east snapshotted with their configs.
pub fn regions(dir: &TestEnv, mirrors: &str) -> (FakeConnect, FakeConnect) {
    let east = on_kafka("K-EAST")
        .connector(sink_of("orders-sink", "orders", 600))
        .connector(
            ConnectorSpec::source("orders-src", SOURCE)
                .config("topic", "orders")
                .offsets(
                    json!([{"partition": {"filename": "/in.txt"}, "offset": {"position": 892}}]),
                ),
        )
        .start();
    let west = on_kafka("K-WEST").start();
    dir.config(format!(
        "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n{mirrors}",
        east.url(),
        west.url()
    ));
    let r = dir.kco(&["--cluster", "east", "snapshot", "--with-config"]);
    assert_eq!(r.code, 0, "{}", r.all());
    (east, west)
}

/// The readiness check: a source file does not fail it, and the flag the hint suggests,
/// `--translate none`, is accepted (issue 23).
#[test]
fn readiness_skips_sources_and_accepts_the_translate_flag_it_suggests() {
    let dir = TestEnv::new();
    let (_east, west) = regions(&dir, "");
    let r = dir.kco(&["--cluster", "west", "diff", "snapshots/east", "-o", "json"]);
    assert_eq!(
        r.code,
        2,
        "no mirror: the sink cannot be translated\n{}",
        r.all()
    );
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["connectors"][0]["status"], "no_translation", "{doc}");
    assert!(
        doc["connectors"][0]["notes"][0]
            .as_str()
            .unwrap()
            .contains("--translate none"),
        "{doc}"
    );
    assert_eq!(doc["connectors"][1]["name"], "orders-src");
    assert_eq!(doc["connectors"][1]["status"], "skipped", "{doc}");

    let r = dir.kco(&[
        "--cluster",
        "west",
        "diff",
        "snapshots/east",
        "--translate",
        "none",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.all());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let statuses = &doc["summary"]["statuses"];
    assert_eq!(
        (
            statuses["dr_ready"].clone(),
            statuses["skipped"].clone(),
            statuses["no_translation"].clone()
        ),
        (json!(1), json!(1), json!(0)),
        "{doc}"
    );
    let t = &doc["connectors"][0]["translation"]["partitions"][0];
    assert_eq!(
        (t["dr_topic"].clone(), t["dr_offset"].clone()),
        (json!("orders"), json!(600)),
        "{doc}"
    );
    west.assert_no_mutations();
}

/// A cross-Kafka apply: the source is left out (and says why) unless --with-sources; the
/// plan shows the `topics` it sets on create (issue 23).
#[test]
fn a_cross_kafka_apply_leaves_sources_out_and_shows_the_config_it_changes() {
    let dir = TestEnv::new();
    let (_east, west) = regions(&dir, "    mirrors: {east: {alias: east}}\n");
    let apply = dry_apply("west", "snapshots/east", &["--create"]);
    let r = dir.kco(&apply);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout.contains("orders-src: left out: a source connector: its positions belong to the primary's source systems"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("+ orders-src"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("config topics: orders -> east.orders,orders"),
        "{}",
        r.stdout
    );
    let r = dir.kco(&[&apply[..], &["-o", "json"]].concat());
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["plan"]["left_out"][0]["name"], "orders-src", "{doc}");
    let change = &doc["plan"]["connectors"][0]["config_changes"][0];
    assert_eq!(change["key"], "topics", "{doc}");
    assert_eq!(change["after"], "east.orders,orders", "{doc}");

    let r = dir.kco(&[&apply[..], &["--with-sources"]].concat());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("+ orders-src"), "{}", r.stdout);
    west.assert_no_mutations();
}

/// The default cluster, down: the error names it, the URLs tried, and that it was the
/// default (in a DR the default often points at the lost region).
#[test]
fn an_unreachable_default_cluster_is_named_with_its_urls() {
    let dir = TestEnv::new();
    let d = dir.path();
    std::fs::create_dir_all(d.join("snapshots/east")).unwrap();
    dir.config("defaultCluster: east\nclusters:\n  east:\n    urls: [http://127.0.0.1:9, http://127.0.0.1:10]\n  west: {url: http://127.0.0.1:11}\n");
    let r = dir.kco(&["diff"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(
            "cannot reach Kafka Connect of cluster `east` (tried http://127.0.0.1:9, http://127.0.0.1:10; `east` is the default cluster"
        ),
        "{}",
        r.stderr
    );
}

/// The DR cluster's Kafka at a listener that accepts connections and never answers: the
/// readiness check fails within `kafka.timeoutSeconds`, naming the address and the bound,
/// instead of hanging (issue 30), and changes nothing.
#[test]
fn a_kafka_listener_that_never_answers_fails_the_readiness_check_within_its_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for c in listener.incoming() {
            kept.push(c);
        }
    });
    let dir = TestEnv::new();
    let d = dir.path();
    let (_east, west) = regions(
        &dir,
        &format!(
            "    kafka: {{bootstrap: \"{addr}\", timeoutSeconds: 1}}\n    mirrors: {{east: {{alias: east}}}}\n"
        ),
    );
    let r = Kco::new(d)
        .args(["--cluster", "west", "diff", "snapshots/east"])
        .spawn();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(r.finish());
    });
    // Far beyond the bound: a hang, not a slow machine.
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the readiness check returned");
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(&format!("Kafka at {addr}"))
            && r.stderr
                .contains("no answer within 1s while connecting (`kafka.timeoutSeconds`)"),
        "{}",
        r.stderr
    );
    west.assert_no_mutations();
}

/// A failover starts what the primary ran (issue 30): a sink the nightly captured STOPPED is
/// created and left STOPPED only with a warning that names it, the state, where it was
/// captured and `--create-state running`, which starts it.
#[test]
fn a_failover_names_a_sink_it_leaves_stopped_and_the_flag_that_starts_it() {
    let dir = TestEnv::new();
    let (east, west) = regions(&dir, "");
    east.set_state("orders-sink", crate::fake_connect::State::Stopped);
    let r = dir.kco(&["--cluster", "east", "snapshot", "--with-config"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let apply = dry_apply("west", "snapshots/east/orders-sink.yaml", &["--create"]);
    let r = dir.kco(&apply);
    assert_eq!(r.code, 0, "{}", r.all());
    let all = r.all();
    assert!(
        all.contains("records `orders-sink` STOPPED on cluster `east` when it was captured: it is created and left STOPPED on `west`, reading nothing; to start it with the others, apply with --create-state running"),
        "{all}"
    );
    assert!(all.contains("start STOPPED"), "{all}");
    let r = dir.kco(&[&apply[..], &["--create-state", "running"]].concat());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.all().contains("start RUNNING") && !r.all().contains("left STOPPED on `west`"),
        "{}",
        r.all()
    );
    west.assert_no_mutations();
}

/// Failback (issue 30): east is back and its old sink resumed on its own, reading beside
/// west's. Applying west's file onto east refuses while east's runs, naming it and how to
/// stop it; stopped, it is planned; --allow-running-primary moves it running.
#[test]
fn a_failback_refuses_while_the_primarys_old_sink_runs_beside_the_dr_one() {
    let dir = TestEnv::new();
    let sink = |id: &str, topic: &str, offset: i64| {
        on_kafka(id)
            .connector(sink_of("orders-sink", topic, offset))
            .start()
    };
    let east = sink("K-EAST", "orders", 600);
    let west = sink("K-WEST", "east.orders", 900);
    dir.config(format!(
        "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n",
        east.url(),
        west.url()
    ));
    let r = dir.kco(&["--cluster", "west", "snapshot"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let failback = dry_apply("east", "snapshots/west", &[]);
    let r = dir.kco(&failback);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.all().contains("`orders-sink` is RUNNING on `east`, and the file is of cluster `west`, where the sink it was captured from may run too: both read the same records, each delivered twice; stop it on `east` first (PUT /connectors/orders-sink/stop) and apply, or move it while it runs with --allow-running-primary"),
        "{}",
        r.all()
    );
    let r = dir.kco(&[&failback[..], &["--allow-running-primary"]].concat());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("~ orders-sink"), "{}", r.stdout);
    east.set_state("orders-sink", crate::fake_connect::State::Stopped);
    let r = dir.kco(&failback);
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("~ orders-sink"), "{}", r.stdout);
    // East's sink reads `orders`; the file's offsets are of `east.orders`: said, with the fix.
    assert!(
        r.all().contains("`orders-sink` on `east` reads `topics=orders`, not `east.orders`: their offsets are set but it will not read them; delete it and apply with --create"),
        "{}",
        r.all()
    );
    east.assert_no_mutations();
}

/// West with the sink an earlier failback left there STOPPED (`topics` the failover set,
/// `read`; its old position on the mirrored topic): east's file is applied onto it.
fn leftover_on_west(dir: &TestEnv, read: &str) -> (FakeConnect, FakeConnect) {
    let east = on_kafka("K-EAST")
        .connector(sink_of("orders-sink", "orders", 600))
        .start();
    let west = on_kafka("K-WEST")
        .connector(sink_of("orders-sink", "east.orders", 450).config("topics", read))
        .start();
    west.set_state("orders-sink", crate::fake_connect::State::Stopped);
    dir.config(format!(
        "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n    mirrors: {{east: {{alias: east}}}}\n",
        east.url(),
        west.url()
    ));
    let r = dir.kco(&["--cluster", "east", "snapshot", "--with-config"]);
    assert_eq!(r.code, 0, "{}", r.all());
    (east, west)
}

/// The next failover after a failback (issue 31, 2): the sink the failback left STOPPED on
/// west exists, and `--create --create-state running` starts it after setting its offsets,
/// where it was left STOPPED before ("ok ... STOPPED (no tasks)"); the plan says so.
#[test]
fn a_failover_onto_a_stopped_leftover_honours_create_state() {
    let dir = TestEnv::new();
    let (_east, west) = leftover_on_west(&dir, "east.orders,orders");
    let failover = [
        "--cluster",
        "west",
        "apply",
        "snapshots/east/orders-sink.yaml",
        "--create",
        "--create-state",
        "running",
        "--translate",
        "none",
    ];
    let r = dir.kco(&[&failover[..], &["--dry-run"]].concat());
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        r.stdout
            .contains("stop, patch 1 partition, start RUNNING (--create-state; it is STOPPED now)"),
        "{}",
        r.stdout
    );
    let r = dir.kco(&[&failover[..], &["--yes"]].concat());
    assert_eq!(r.code, 0, "{}", r.all());
    assert_eq!(
        west.state("orders-sink"),
        Some(crate::fake_connect::State::Running),
        "{}",
        r.all()
    );
    assert!(
        r.all()
            .contains("ok orders-sink: offsets applied and verified; RUNNING"),
        "{}",
        r.all()
    );
    let offset = west.offset(
        "orders-sink",
        &json!({"kafka_topic": "east.orders", "kafka_partition": 0}),
    );
    assert_eq!(offset, Some(json!({"kafka_offset": 600})));

    // In sync already, still STOPPED: started all the same.
    west.set_state("orders-sink", crate::fake_connect::State::Stopped);
    let r = dir.kco(&[&failover[..], &["--yes"]].concat());
    assert_eq!(r.code, 0, "{}", r.all());
    assert_eq!(
        west.state("orders-sink"),
        Some(crate::fake_connect::State::Running),
        "{}",
        r.all()
    );
}

/// A leftover that does not read the topics the file's offsets are for would run and read
/// nothing of them: `--create-state` on it is refused, naming it and how to delete it, and
/// nothing is changed.
#[test]
fn a_failover_refuses_to_start_a_leftover_that_reads_other_topics() {
    let dir = TestEnv::new();
    let (_east, west) = leftover_on_west(&dir, "orders");
    let r = dir.kco(&[
        "--cluster",
        "west",
        "apply",
        "snapshots/east",
        "--create",
        "--create-state",
        "running",
        "--translate",
        "none",
        "--yes",
    ]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.all().contains("`orders-sink` exists on `west` (STOPPED), a leftover of an earlier failover or failback that reads `topics=orders`, not `east.orders`: started RUNNING (--create-state) it would not read them; delete it on `west` (`curl -X DELETE <west's URL>/connectors/orders-sink`) and apply again"),
        "{}",
        r.all()
    );
    west.assert_no_mutations();
}

/// A ringing alarm says why in text (issue 31, 3): a `dr_lagging` sink's block names the
/// threshold and what was measured, as `-o json`'s notes do.
#[test]
fn a_ringing_alarm_names_its_threshold_in_text() {
    let dir = TestEnv::new();
    let (_east, west) = regions(&dir, "    mirrors: {east: {alias: east}}\n");
    let r = dir.kco(&[
        "--cluster",
        "west",
        "diff",
        "snapshots/east",
        "--translate",
        "none",
        "--max-mirror-silence",
        "10s",
    ]);
    assert_eq!(r.code, 2, "{}", r.all());
    assert!(
        r.stdout.contains("orders-sink (dr_lagging)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  mirror `east`: no heartbeat copied from the source (`east.heartbeats`) to tell whether records come through, and --max-mirror-silence 10s asks for one"),
        "{}",
        r.stdout
    );
    west.assert_no_mutations();
}
