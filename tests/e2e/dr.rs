//! Disaster recovery across Kafka clusters on the real DR test bed (`scripts/dr-connect.sh`):
//! region east is the test bed's broker with cluster a; region west is broker `west` with
//! Connect cluster w (127.0.0.1:8090), where MirrorMaker 2 mirrors east under alias `east`.
//! A sink on a is captured by `kco snapshot`, the region is "lost", and `kco apply` starts
//! the sink on w from MM2's checkpoints.
//!
//! Skipped when the DR bed is not up, unless `KCO_E2E_DR=required`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{
    append_lines, env_url, file_sink_config, file_source_config, numbered, service_file,
    sink_offset, skip_unless_required, temp_dir, testbed, testbed_dir, unique_name, wait_for,
    write_lines, Connect, ConnectorGuard, Testbed,
};
use crate::support::env::TestEnv;

/// Cluster w (`KCO_E2E_DR_URL`) and west's SASL listener (`KCO_E2E_DR_KAFKA`).
pub(crate) fn w_url() -> String {
    env_url("KCO_E2E_DR_URL", "http://127.0.0.1:8090")
}

/// Cluster e, on east's broker: the mirror back (`KCO_E2E_DR_BACK_URL`).
pub(crate) fn back_url() -> String {
    env_url("KCO_E2E_DR_BACK_URL", "http://127.0.0.1:8091")
}

pub(crate) fn sasl() -> String {
    std::env::var("KCO_E2E_DR_KAFKA").unwrap_or_else(|_| "127.0.0.1:9194".into())
}

pub(crate) struct Dr {
    pub(crate) tb: Testbed,
    pub(crate) w: Connect,
    pub(crate) password: String,
    /// MM2's `offset.lag.max`: how far a translated position may be behind.
    pub(crate) lag_max: i64,
}

pub(crate) fn dr() -> Option<Dr> {
    dr_on(testbed()?)
}

/// [`dr`], the test bed to this test alone (it pauses MirrorMaker 2 for everyone).
fn dr_alone() -> Option<Dr> {
    dr_on(crate::harness::testbed_alone()?)
}

fn dr_on(tb: Testbed) -> Option<Dr> {
    let scram = service_file(
        &testbed_dir().join("dr"),
        "scram",
        "KCO_E2E_DR",
        "dr-connect.sh",
    )?;
    let w = Connect::new(&w_url());
    if !w.answers() {
        skip_unless_required(
            "KCO_E2E_DR",
            &format!(
                "cluster w does not answer at {}; run scripts/dr-connect.sh up",
                w_url()
            ),
        );
        return None;
    }
    let password = scram.lines().nth(1).unwrap_or_default().to_string();
    let lag_max = w.config("mm2-east-source")["offset.lag.max"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    Some(Dr {
        tb,
        w,
        password,
        lag_max,
    })
}

impl Dr {
    /// kco beside a kco.yaml with cluster a (east) and cluster w (west, mirroring a when
    /// `mirror`), west's SASL password in `KCO_DR_KAFKA_PASSWORD`; on the real clock:
    /// MirrorMaker 2's records carry real times, against which checkpoints and heartbeats are
    /// aged.
    fn env(&self, mirror: bool) -> TestEnv {
        let env = TestEnv::new().real_clock();
        let mirrors = if mirror {
            "    mirrors: {a: {alias: east, policy: default}}\n"
        } else {
            ""
        };
        env.config(format!(
            "clusters:\n  a:\n    urls: [{}]\n  w:\n    urls: [{}]\n    kafka:\n      bootstrap: \"{}\"\n      sasl: {{mechanism: SCRAM-SHA-512, username: kco, password: \"${{env:KCO_DR_KAFKA_PASSWORD}}\"}}\n{mirrors}",
            self.tb.a_urls.join(", "),
            w_url(),
            sasl()
        ));
        env.envs(&[("KCO_DR_KAFKA_PASSWORD", &self.password)])
    }
}

/// `kco` in `env` with `password` for west's SASL instead of the right one.
fn with_password(env: &TestEnv, password: &str, args: &[&str]) -> (i32, String, String) {
    let cmd = env.cmd().env("KCO_DR_KAFKA_PASSWORD", password);
    cmd.args(args).run().parts()
}

/// `kco --cluster w diff <snapshots/a> -o json <extra>`, the readiness check (could w take
/// over now?): the exit code and the report.
fn dr_readiness(env: &TestEnv, extra: &[&str]) -> (i32, Value) {
    let snapshots = env.path().join("snapshots/a");
    let diff = [
        "--cluster",
        "w",
        "diff",
        snapshots.to_str().unwrap(),
        "-o",
        "json",
    ];
    let (code, o, e) = env.kco(&[&diff[..], extra].concat()).parts();
    let report: Value = serde_json::from_str(&o).unwrap_or_else(|err| panic!("{err}: {o}{e}"));
    (code, report)
}

/// A FileStream sink on cluster a that has consumed records 1..=`first` of a new topic.
struct Primary {
    topic: String,
    name: String,
    input: PathBuf,
    sink: Option<ConnectorGuard>,
    _source: ConnectorGuard,
    work: tempfile::TempDir,
}

fn primary(d: &Dr, first: usize, group: Option<&str>) -> Primary {
    let a = d.tb.a();
    let work = temp_dir();
    let topic = unique_name("kco-dr-orders");
    let input = work.path().join("in.txt");
    write_lines(&input, &numbered("r", 1..=first));
    let source = a.create(
        &unique_name("kco-dr-src"),
        file_source_config(&input, &topic),
    );
    let name = unique_name("kco-dr-sink");
    let mut config = file_sink_config(&work.path().join("east.out"), &topic);
    if let Some(g) = group {
        config["consumer.override.group.id"] = json!(g);
    }
    let sink = a.create(&name, config);
    wait_sink(&a, &name, &topic, first as i64);
    Primary {
        topic,
        name,
        input,
        sink: Some(sink),
        _source: source,
        work,
    }
}

pub(crate) fn wait_sink(a: &Connect, name: &str, topic: &str, at: i64) {
    a.wait_offsets(name, &format!("sink offset {at}"), |o| {
        sink_offset(o, topic) == Some(at)
    });
}

/// `kco snapshot NAME --with-config` on a, with the sink's output file moved to `out`.
fn snapshot(env: &TestEnv, p: &Primary, out: &Path) -> PathBuf {
    let snapshot = ["--cluster", "a", "snapshot", &p.name, "--with-config"];
    let (code, o, e) = with_password(env, "", &snapshot);
    assert_eq!(code, 0, "snapshot: {o}{e}");
    let path = env.path().join(format!("snapshots/a/{}.yaml", p.name));
    let text = std::fs::read_to_string(&path).unwrap();
    let east_out = p.work.path().join("east.out");
    let text = text.replace(east_out.to_str().unwrap(), out.to_str().unwrap());
    std::fs::write(&path, text).unwrap();
    path
}

/// Waits until the dry-run plan on w translates the file (MM2 has checkpointed the group);
/// returns the plan's JSON.
fn wait_translated(
    d: &Dr,
    env: &TestEnv,
    file: &Path,
    extra: &[&str],
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let mut args = vec![
        "--cluster",
        "w",
        "apply",
        file.to_str().unwrap(),
        "--create",
        "--dry-run",
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    wait_for(
        "a translated plan on cluster w",
        Duration::from_secs(120),
        || {
            let (code, out, err) = env.kco(&args).parts();
            let doc: Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}{err}"))?;
            let c = &doc["plan"]["connectors"][0];
            // Before Connect 3.7 `--create` is a plan error (no STOPPED creation), after the
            // translation.
            if (code == 0 || !d.w.supports_initial_state()) && ok(c) {
                Ok(c.clone())
            } else {
                Err(format!("exit {code}: {c}"))
            }
        },
    )
}

/// Starts the captured sink on w from the file ([`create_from_file`], the sink reading the
/// mirrored topic when the harness creates it); the apply's stdout.
fn start_on_w(
    d: &Dr,
    env: &TestEnv,
    (p, file, out): (&Primary, &Path, &Path),
    extra: &[&str],
) -> (String, ConnectorGuard) {
    let config = file_sink_config(out, &format!("east.{}", p.topic));
    create_from_file(env, &d.w, "w", &p.name, file, config, extra)
}

pub(crate) fn dr_lines(out: &Path) -> Vec<usize> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim_start_matches("r-").parse().expect("r-N"))
        .collect()
}

/// Waits until `out` holds record `last`, then 2 s more (for what a translation re-reads to
/// show too): the records it held when it did.
pub(crate) fn wait_dr_record(what: &str, out: &Path, last: usize) -> Vec<usize> {
    let lines = wait_for(what, Duration::from_secs(90), || {
        let l = dr_lines(out);
        if l.contains(&last) {
            Ok(l)
        } else {
            Err(format!("{} lines, last {:?}", l.len(), l.last()))
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    lines
}

fn wait_dr_output(out: &Path, last: usize) -> Vec<usize> {
    let lines = wait_for("the DR sink's output", Duration::from_secs(90), || {
        let l = dr_lines(out);
        if l.last() == Some(&last) {
            Ok(l)
        } else {
            Err(format!("{} lines, last {:?}", l.len(), l.last()))
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(dr_lines(out), lines, "records after the last one");
    lines
}

/// West's PLAINTEXT listener, as MM2 uses it.
fn mm2_target_bootstrap(d: &Dr) -> String {
    d.w.config("mm2-east-source")["target.cluster.bootstrap.servers"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Records 1..=1000, the sink captured at 600, moved to w through the checkpoints.
#[test]
fn a_lost_regions_sink_resumes_on_the_mirror_from_the_files_position() {
    let Some(d) = dr() else { return };
    let a = d.tb.a();
    let mut p = primary(&d, 600, None);
    let env = d.env(true);
    let out = env.path().join("west.out");
    let file = snapshot(&env, &p, &out);
    let plan = wait_translated(&d, &env, &file, &[], |c| {
        c["translation"]["partitions"][0]["dr_offset"].is_i64()
    });
    let t = &plan["translation"];
    assert_eq!(t["mode"], "file", "{plan}");
    assert_eq!(t["group"], format!("connect-{}", p.name));
    let part = &t["partitions"][0];
    assert_eq!(part["dr_topic"], format!("east.{}", p.topic));
    assert_eq!(part["file_offset"], 600);
    assert!(
        part["checkpoint"]["upstream"].as_i64().unwrap() <= 600,
        "{plan}"
    );

    // Readiness: could w take over now? Not on w is expected there.
    let (code, report) = dr_readiness(&env, &[]);
    let c = &report["connectors"][0];
    assert_eq!(c["status"], "dr_ready", "{report}");
    assert_eq!(code, 0, "{report}");
    assert!(
        c["notes"]
            .to_string()
            .contains(&format!("-> east.{}/0", p.topic)),
        "{report}"
    );

    append_lines(&p.input, &numbered("r", 601..=1000));
    wait_sink(&a, &p.name, &p.topic, 1000);
    // MM2's latest checkpoint of the group at 1000 (checkpoints are emitted on MM2's own
    // schedule, after the group's commit): what the note of the file's age compares with.
    wait_translated(&d, &env, &file, &["--translate", "latest"], |c| {
        c["translation"]["partitions"][0]["checkpoint"]["upstream"] == 1000
    });
    // Region east is lost.
    drop(p.sink.take());
    let (o, _dr_sink) = start_on_w(&d, &env, (&p, &file, &out), &[]);
    assert!(
        o.contains(&format!("{}/0 600 -> east.{}/0", p.topic, p.topic)),
        "{o}"
    );
    // The file at 600, the group since at 1000: said, with the file's age (issue 31).
    assert!(
        o.contains(&format!(
            "and the group has committed past it since: {}/0 by 400 records",
            p.topic
        )),
        "{o}"
    );
    // The mirrored topic, and west's own of the same name (after a failover, producers
    // write there), when kco created the sink (Connect 3.7 and later: before, the test
    // creates it itself, with the mirrored topic only).
    if d.w.supports_initial_state() {
        assert_eq!(
            d.w.config(&p.name)["topics"],
            format!("east.{},{}", p.topic, p.topic)
        );
        // West's own topic did not exist: the plan said so, and what to create (issue 30).
        assert!(
            o.contains(&format!(
                "topic `{}` does not exist on the Kafka of cluster `w`",
                p.topic
            )) && o.contains(&format!("--topic {} --partitions 1", p.topic)),
            "{o}"
        );
    }
    let lines = wait_dr_output(&out, 1000);
    let first = lines[0];
    assert!(
        first <= 601,
        "a record after 600 was skipped: starts at {first}"
    );
    assert!(
        first as i64 > 600 - d.lag_max,
        "more than offset.lag.max ({}) records re-delivered: starts at {first}",
        d.lag_max
    );
    assert_eq!(lines, (first..=1000).collect::<Vec<_>>());
}

/// Resumes a paused connector of w when dropped, the test failing or not.
struct ResumeOnDrop<'a>(&'a Connect, &'static str);

impl Drop for ResumeOnDrop<'_> {
    fn drop(&mut self) {
        self.0.resume(self.1);
    }
}

/// Issue 30: the readiness alarm rings while MirrorMaker 2's checkpoint connector is paused
/// and the sink moves on past what it last checkpointed (exit 2, `dr_lagging`, naming
/// `--max-checkpoint-age`), is quiet under the default bound, and is ready again once the
/// connector runs.
#[test]
fn a_stalled_checkpoint_connector_rings_the_readiness_alarm() {
    let Some(d) = dr_alone() else { return };
    let a = d.tb.a();
    let p = primary(&d, 100, None);
    let env = d.env(true);
    let out = env.path().join("west.out");
    let file = snapshot(&env, &p, &out);
    let readiness = |extra: &[&str]| {
        let (code, report) = dr_readiness(&env, extra);
        (code, report["connectors"][0].clone())
    };
    // Checkpointed at the file's position: ready within a 3 s bound.
    let tight = ["--max-checkpoint-age", "3s"];
    wait_for(
        "dr_ready at the file's position",
        Duration::from_secs(120),
        || match readiness(&tight) {
            (0, c) if c["status"] == "dr_ready" => Ok(()),
            (code, c) => Err(format!("exit {code}: {c}")),
        },
    );
    // The checkpoint connector paused; the sink reads 50 more, the nightly captures them.
    d.w.pause("mm2-east-checkpoint");
    let _resume = ResumeOnDrop(&d.w, "mm2-east-checkpoint");
    wait_for(
        "the checkpoint connector paused",
        Duration::from_secs(30),
        || match d.w.state("mm2-east-checkpoint").as_str() {
            "PAUSED" => Ok(()),
            other => Err(other.to_string()),
        },
    );
    append_lines(&p.input, &numbered("r", 101..=150));
    wait_sink(&a, &p.name, &p.topic, 150);
    snapshot(&env, &p, &out);
    std::thread::sleep(Duration::from_secs(4));
    let (code, c) = readiness(&tight);
    assert_eq!((code, c["status"].as_str()), (2, Some("dr_lagging")), "{c}");
    let notes = c["notes"].to_string();
    assert!(
        notes.contains(&format!("{}/0 150 -> east.{}/0", p.topic, p.topic))
            && notes.contains("records behind the file and the group's last checkpoint is")
            && notes.contains("over the 3s allowed (--max-checkpoint-age)"),
        "{notes}"
    );
    // Quiet under the default bound (5 minutes): the threshold is what rings.
    let (code, c) = readiness(&[]);
    assert_eq!((code, c["status"].as_str()), (0, Some("dr_ready")), "{c}");
    // The connector runs again: checkpointed at 150, ready within the tight bound again.
    drop(_resume);
    wait_for(
        "dr_ready once checkpoints flow",
        Duration::from_secs(120),
        || match readiness(&tight) {
            (0, c) if c["status"] == "dr_ready" => Ok(()),
            (code, c) => Err(format!("exit {code}: {c}")),
        },
    );
    let _ = file;
}

/// Issue 30: the mirror's silence rings from the heartbeats that come through it. The bed's
/// heartbeat connector on east's Kafka (`mm2-west-heartbeat` on e1) writes east's
/// `heartbeats`, copied to west as `east.heartbeats`; the one on west's side
/// (`mm2-east-heartbeat`) goes on writing west's own `heartbeats` throughout, and is never
/// taken for the mirror's. MM2's source connector paused (the mirror stalled): exit 2 past
/// `--max-mirror-silence`, the copy's age said; running again: ready. The source's heartbeat
/// connector paused (east's Connect down, the mirror running): the same.
#[test]
fn a_stalled_mirror_rings_from_the_heartbeats_that_come_through_it() {
    let Some(d) = dr_alone() else { return };
    let p = primary(&d, 20, None);
    let env = d.env(true);
    let out = env.path().join("west.out");
    snapshot(&env, &p, &out);
    let readiness = || dr_readiness(&env, &["--max-mirror-silence", "4s"]);
    let ready = |what: &str| {
        wait_for(what, Duration::from_secs(120), || match readiness() {
            (0, r) if r["connectors"][0]["status"] == "dr_ready" => Ok(r),
            (code, r) => Err(format!("exit {code}: {r}")),
        })
    };
    let r = ready("dr_ready with heartbeats coming through");
    assert_eq!(
        (
            r["mirrors"][0]["topic"].as_str(),
            r["mirrors"][0]["mirrored"].as_bool()
        ),
        (Some("east.heartbeats"), Some(true)),
        "{r}"
    );
    let stalled = |what: &str| {
        let r = wait_for(what, Duration::from_secs(60), || match readiness() {
            (2, r) if r["connectors"][0]["status"] == "dr_lagging" => Ok(r),
            (code, r) => Err(format!("exit {code}: {r}")),
        });
        let notes = r["connectors"][0]["notes"].to_string();
        assert!(
            notes.contains("mirror `east`: no heartbeat has come through from the source for")
                && notes.contains("over the 4s allowed (--max-mirror-silence)"),
            "{notes}"
        );
        assert!(
            r["mirrors"][0]["mirrored"] == true
                && r["mirrors"][0]["seconds_since_last_heartbeat"]
                    .as_i64()
                    .is_some_and(|s| s > 4),
            "{r}"
        );
        // The text says it too (issue 31): the reason under the sink, and a mirror line
        // that no longer says records come through.
        let snapshots = env.path().join("snapshots/a");
        let diff = ["--cluster", "w", "diff", snapshots.to_str().unwrap()];
        let (code, o, e) = env
            .kco(&[&diff[..], &["--max-mirror-silence", "4s"]].concat())
            .parts();
        assert_eq!(code, 2, "{o}{e}");
        assert!(
            o.contains(&format!("{} (dr_lagging)", p.name))
                && o.contains("  mirror `east`: no heartbeat has come through from the source for")
                && o.contains("over --max-mirror-silence 4s")
                && !o.contains("records come through"),
            "{o}{e}"
        );
    };
    for (connector, on) in [
        ("mm2-east-source", &d.w),
        ("mm2-west-heartbeat", &Connect::new(&back_url())),
    ] {
        on.pause(connector);
        let resume = ResumeOnDrop(on, connector);
        on.wait_state(connector, "PAUSED");
        // West's own heartbeat connector runs on: its heartbeats are not the mirror's.
        assert_eq!(d.w.state("mm2-east-heartbeat"), "RUNNING");
        stalled(&format!("the alarm with {connector} paused"));
        drop(resume);
        ready(&format!("dr_ready once {connector} runs"));
    }
}

/// Failover: `--translate latest` resumes near the primary's last position, not the file's.
#[test]
fn translate_latest_resumes_near_the_primarys_last_position() {
    let Some(d) = dr() else { return };
    let a = d.tb.a();
    let mut p = primary(&d, 300, None);
    let env = d.env(true);
    let out = env.path().join("west.out");
    let file = snapshot(&env, &p, &out);
    append_lines(&p.input, &numbered("r", 301..=1000));
    wait_sink(&a, &p.name, &p.topic, 1000);
    // MM2's latest checkpoint of the group at 1000, translated through an offset sync near
    // the end: a checkpoint can be emitted before the last sync (seen on 3.6.2: 810), and
    // later ones catch up.
    let lag_max = d.lag_max;
    wait_translated(&d, &env, &file, &["--translate", "latest"], |c| {
        let cp = &c["translation"]["partitions"][0]["checkpoint"];
        cp["upstream"] == 1000
            && cp["downstream"]
                .as_i64()
                .is_some_and(|o| o > 1000 - lag_max)
    });
    drop(p.sink.take());
    let (_, _dr_sink) = start_on_w(&d, &env, (&p, &file, &out), &["--translate", "latest"]);
    // Nothing new upstream: the sink copies at most the sync gap before record 1000.
    append_lines(&p.input, &numbered("r", 1001..=1001));
    let lines = wait_dr_output(&out, 1001);
    let first = lines[0];
    assert!(
        first > 300,
        "--translate latest started from the file: {first}"
    );
    assert!(first as i64 > 1000 - d.lag_max, "starts at {first}");
    assert_eq!(lines, (first..=1001).collect::<Vec<_>>());
}

/// Refusals: another Kafka cluster without a mirror, a group MM2 does not checkpoint, and a
/// wrong SCRAM password (named by address, never printed).
#[test]
fn without_a_mirror_an_excluded_group_or_the_wrong_password_nothing_is_applied() {
    let Some(d) = dr() else { return };
    let group = unique_name("kco-unmirrored-g");
    let p = primary(&d, 10, Some(&group));
    // A checkpointed group on the same topic: the checkpoints topic exists.
    let reader = crate::harness::TopicReader::start(&d.tb.a(), &p.topic, p.work.path());
    reader.wait_lines(10);
    let env = d.env(true);
    let out = env.path().join("west.out");
    let file = snapshot(&env, &p, &out);
    let file_s = file.to_str().unwrap();
    let apply = ["--cluster", "w", "apply", file_s, "--create", "--yes"];

    let (code, o, e) = wait_for(
        "a plan error naming groups.exclude",
        Duration::from_secs(90),
        || {
            let r = env.kco(&apply).parts();
            if r.1.contains("groups.exclude") {
                Ok(r)
            } else {
                Err(format!("{r:?}"))
            }
        },
    );
    assert_eq!(code, 1, "{o}{e}");
    assert!(o.contains(&group), "{o}");
    let (code, o, e) = env
        .kco(&["--cluster", "w", "diff", file_s, "-o", "json"])
        .parts();
    assert_eq!(code, 2, "no translation is a difference: {o}{e}");
    assert!(
        o.contains("no_translation") && o.contains("groups.exclude"),
        "{o}"
    );

    let bare = d.env(false);
    std::fs::create_dir_all(bare.path().join("snapshots/a")).unwrap();
    let (code, o, e) = bare.kco(&apply).parts();
    assert_eq!(code, 1, "{o}{e}");
    let ids = |c: &Connect| c.info()["kafka_cluster_id"].as_str().unwrap().to_string();
    assert!(o.contains(&ids(&d.tb.a())) && o.contains(&ids(&d.w)), "{o}");

    let wrong = "not-the-password-4711";
    let (code, o, e) = with_password(&env, wrong, &apply);
    assert_eq!(code, 1, "{o}{e}");
    assert!(format!("{o}{e}").contains(&sasl()), "{o}{e}");
    assert!(!format!("{o}{e}").contains(wrong), "{o}{e}");
    assert!(!format!("{o}{e}").contains(&d.password), "{o}{e}");
    // The readiness check cannot tell: exit 1, never no_translation (issue 23).
    let diff = ["--cluster", "w", "diff", file_s];
    let (code, o, e) = with_password(&env, wrong, &diff);
    assert_eq!(code, 1, "a refused password is not a gap: {o}{e}");
    assert!(!o.contains("no_translation"), "{o}{e}");
    assert!(e.contains("authentication failed"), "{e}");
    // West's PLAINTEXT listener given as the SASL bootstrap: named as such.
    let plain = mm2_target_bootstrap(&d);
    let yaml = std::fs::read_to_string(env.path().join("kco.yaml")).unwrap();
    env.config(yaml.replace(&sasl(), &plain));
    let (code, o, e) = env.kco(&diff).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains("does not speak SASL") && e.contains(&plain),
        "{e}"
    );
    assert!(!d.w.has_connector(&p.name), "nothing may be created on w");
}

/// A sink made on `c` (cluster `cluster`) from `file`: `kco apply --create <extra>`; before
/// Connect 3.7 (no STOPPED creation, KIP-980) as the plan error says: created STOPPED by the
/// harness with `config` (never touching its topics until resumed), then `kco apply` without
/// `--create`, and resumed. The apply's stdout and stderr.
fn create_from_file(
    env: &TestEnv,
    c: &Connect,
    cluster: &str,
    name: &str,
    file: &Path,
    config: Value,
    extra: &[&str],
) -> (String, ConnectorGuard) {
    let f = file.to_str().unwrap();
    let mut args = [&["--cluster", cluster, "apply", f, "--yes"], extra].concat();
    let guard = match c.supports_initial_state() {
        true => {
            args.push("--create");
            None
        }
        false => Some(c.create_in_state(name, config, "STOPPED")),
    };
    let (code, o, e) = env.kco(&args).parts();
    assert_eq!(code, 0, "apply on {cluster}: {o}{e}");
    // The plan's own warnings (a topic the DR cluster lacks) are on stderr.
    let o = format!("{o}{e}");
    match guard {
        Some(guard) => {
            c.resume(name);
            (o, guard)
        }
        None => (o, c.adopt(name)),
    }
}

/// Issue 30, "Done when": the incident both ways on the bed. East's sink has read 1..=200
/// when the region is lost; west takes over from MM2's checkpoints and reads what producers
/// then write to west's own topic (201..=230); east comes back, its old sink resuming on its
/// own; the failback refuses while it runs, and once it is stopped and gone, starts east's
/// sink from west's file through both mirrors: `east.T` back to east's `T` through the
/// offset syncs the forward mirror wrote on east (downstream to upstream), west's `T` as
/// `west.T` through the mirror back's checkpoints. Producers move back (231..=240). Every record counted by content across the
/// three output files: none lost, and none written again but what a translation re-reads.
#[test]
fn failover_then_failback_through_both_mirrors_loses_no_record() {
    let Some(d) = dr_alone() else { return };
    let a = d.tb.a();
    let mut p = primary(&d, 200, None);
    let env = d.env(true);
    let east_bootstrap = d.w.config("mm2-east-source")["source.cluster.bootstrap.servers"]
        .as_str()
        .unwrap()
        .to_string();
    // Both mirrors in kco.yaml: east mirrors west back, west mirrors east.
    let config = std::fs::read_to_string(env.path().join("kco.yaml")).unwrap();
    let config = config.replacen(
        "  w:\n",
        &format!(
            "    kafka: {{bootstrap: \"{east_bootstrap}\"}}\n    mirrors: {{w: {{alias: west, targetAlias: east, policy: default}}}}\n  w:\n"
        ),
        1,
    );
    let config = config.replace(
        "mirrors: {a: {alias: east, policy: default}}",
        "mirrors: {a: {alias: east, targetAlias: west, policy: default}}",
    );
    env.config(config);
    let west_out = env.path().join("west.out");
    let file = snapshot(&env, &p, &west_out);
    // Region east is lost: its source and sink stop where they are (their target state stays
    // RUNNING in a real outage: here they are paused, and resumed when east is back).
    a.pause(&p.name);
    a.wait_state(&p.name, "PAUSED");
    // Fail over at MM2's checkpoint of the group at 200: all of it on 4.3; before, MM2
    // translates no further than its last offset sync (within offset.lag.max), and west
    // reads the rest again.
    // MM2 re-translates the group's checkpoint as its offset syncs come in: wait for one
    // within offset.lag.max (a checkpoint written before the syncs were read can be further).
    let plan = wait_translated(&d, &env, &file, &[], |c| {
        let t = &c["translation"]["partitions"][0];
        t["checkpoint"]["upstream"] == 200
            && t["dr_offset"]
                .as_i64()
                .is_some_and(|at| 200 - at <= d.lag_max)
    });
    let failover_at = plan["translation"]["partitions"][0]["dr_offset"]
        .as_i64()
        .unwrap();
    assert!(200 - failover_at <= d.lag_max, "{plan}");
    let west_config = {
        let mut c = file_sink_config(&west_out, &format!("east.{},{}", p.topic, p.topic));
        c["name"] = json!(p.name);
        c
    };
    let (_, west_sink) =
        create_from_file(&env, &d.w, "w", &p.name, &file, west_config.clone(), &[]);
    let _ = west_sink;
    // Producers fail over to west's own topic.
    let west_input = p.work.path().join("west-in.txt");
    write_lines(&west_input, &numbered("r", 201..=230));
    let west_source = d.w.create(
        &unique_name("kco-dr-wsrc"),
        file_source_config(&west_input, &p.topic),
    );
    // West's sink has written what it re-read of east's (after its translated position) and
    // everything producers wrote on west.
    let want: Vec<usize> = ((failover_at as usize + 1)..=230).collect();
    wait_for("west's sink's copy", Duration::from_secs(90), || {
        let mut l = dr_lines(&west_out);
        l.sort_unstable();
        l.dedup();
        if l == want {
            Ok(())
        } else {
            Err(format!("{} lines, last {:?}", l.len(), l.last()))
        }
    });
    // West's nightly, once the sink committed 200 of east.T and 30 of west's T.
    d.w.wait_offsets(&p.name, "200 of east.T and 30 of T committed", |o| {
        sink_offset(o, &format!("east.{}", p.topic)) == Some(200)
            && sink_offset(o, &p.topic) == Some(30)
    });
    let (code, o, e) = env
        .kco(&["--cluster", "w", "snapshot", &p.name, "--with-config"])
        .parts();
    assert_eq!(code, 0, "{o}{e}");
    let west_file = env.path().join(format!("snapshots/w/{}.yaml", p.name));
    let back_out = env.path().join("back.out");
    let text = std::fs::read_to_string(&west_file).unwrap();
    std::fs::write(
        &west_file,
        text.replace(west_out.to_str().unwrap(), back_out.to_str().unwrap()),
    )
    .unwrap();
    drop(west_source);
    // East is back: its old sink resumes on its own. The failback refuses while it runs.
    a.resume(&p.name);
    a.wait_running(&p.name);
    let failback = [
        "--cluster",
        "a",
        "apply",
        west_file.to_str().unwrap(),
        "--create",
        "--dry-run",
    ];
    let plan = wait_for(
        "the failback translated through both mirrors",
        Duration::from_secs(120),
        || {
            let (code, o, e) = env.kco(&failback).parts();
            let all = format!("{o}{e}");
            if all.contains(&format!("`{}` is RUNNING on `a`", p.name)) {
                Ok(all)
            } else {
                Err(format!("exit {code}: {all}"))
            }
        },
    );
    assert!(plan.contains("--allow-running-primary"), "{plan}");
    // Stopped and deleted as the runbook says (its `topics` lack west.T); west's sink stops.
    drop(p.sink.take());
    a.wait_gone(&p.name);
    d.w.stop(&p.name);
    let plan = wait_for(
        "the failback planned through both mirrors",
        Duration::from_secs(120),
        || {
            let (code, o, e) = env.kco(&failback).parts();
            let all = format!("{o}{e}");
            let c = d.w.supports_initial_state();
            if all.contains(&format!("east.{t}/0 200 -> {t}/0 ", t = p.topic))
                && all.contains(&format!("{t}/0 30 -> west.{t}/0", t = p.topic))
                && (code == 0 || !c)
            {
                Ok(all)
            } else {
                Err(format!("exit {code}: {all}"))
            }
        },
    );
    assert!(
        plan.contains(&format!(
            "config topics: east.{t},{t} -> {t},west.{t}",
            t = p.topic
        )) && plan.contains("in `mm2-offset-syncs.west.internal`: the record at"),
        "{plan}"
    );
    // Where east's topic comes back: the offset sync at or below west's 200 (all of it, or
    // within offset.lag.max of it).
    let (_, o, _) = env.kco(&[&failback[..], &["-o", "json"]].concat()).parts();
    let doc: Value = serde_json::from_str(&o).unwrap_or_else(|e| panic!("{e}: {o}"));
    let failback_at = doc["plan"]["connectors"][0]["translation"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == format!("east.{}", p.topic))
        .and_then(|t| t["dr_offset"].as_i64())
        .unwrap_or_else(|| panic!("{doc}"));
    assert!(
        (0..=200).contains(&failback_at) && 200 - failback_at <= d.lag_max,
        "{doc}"
    );
    let back_config = file_sink_config(&back_out, &format!("{t},west.{t}", t = p.topic));
    let (_, _east_sink) = create_from_file(&env, &a, "a", &p.name, &west_file, back_config, &[]);
    // Producers move back to east: 231..=240 on east's T.
    append_lines(&p.input, &numbered("r", 231..=240));
    let lines = wait_dr_record("east's sink after failback", &back_out, 240);
    // Every record 1..=240 written somewhere. More than once only what a translation
    // re-reads, each within MM2's offset.lag.max: east's records after the failover's
    // position and after the failback's (none of either on 4.3), and west's own re-read
    // through the mirror back.
    let mut all: Vec<usize> = dr_lines(&p.work.path().join("east.out"));
    all.extend(dr_lines(&west_out));
    all.extend(dr_lines(&back_out));
    all.sort_unstable();
    let seen = |what: &str| {
        format!(
            "{what}\neast {:?}\nwest {:?}\nback {lines:?}",
            dr_lines(&p.work.path().join("east.out")),
            dr_lines(&west_out)
        )
    };
    let mut distinct = all.clone();
    distinct.dedup();
    assert_eq!(distinct, (1..=240).collect::<Vec<_>>(), "{}", seen("lost"));
    let re_read = |r: usize| {
        (failover_at as usize + 1..=200).contains(&r)
            || (failback_at as usize + 1..=200).contains(&r)
            || (201..=230).contains(&r)
    };
    let extra: Vec<usize> = all
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(
        extra.iter().all(|r| re_read(*r)) && (extra.len() as i64) <= 3 * d.lag_max,
        "{}",
        seen(&format!("written again: {extra:?}"))
    );
    eprintln!(
        "failover at {failover_at} of 200, failback at {failback_at} of 200, records written again: {}",
        extra.len()
    );
    let _ = (file, west_config);
}

/// Issue 31 on the bed. Re-delivery counted where the DR sink reads (4): records 1..=1000
/// on east, east's sink stopped with its group at 445 (set through Connect, so that MM2's
/// checkpoint of it is one past its last offset sync below 445 rather than exact), and the
/// sink started on w from the file delivers again exactly the records kco said it would
/// (`redelivers`, from the checkpoint's downstream offset). The next failover after it (2):
/// w's sink stopped and left there, east reads on to 1050, and `--create --create-state
/// running` onto the leftover sets its offsets and starts it (it stayed STOPPED before), so
/// that it reads on from east's new position.
#[test]
fn a_failover_redelivers_what_kco_counts_and_starts_the_leftover_of_the_last_one() {
    let Some(d) = dr() else { return };
    if !d.w.supports_initial_state() {
        return;
    }
    let a = d.tb.a();
    let work = temp_dir();
    let topic = unique_name("kco-dr-orders");
    let input = work.path().join("in.txt");
    write_lines(&input, &numbered("r", 1..=1000));
    let source = a.create(
        &unique_name("kco-dr-src"),
        file_source_config(&input, &topic),
    );
    // The topic exists once the source has committed a position: offsets of a topic not yet
    // created are refused (UnknownTopicOrPartition, seen on a busy bed right after
    // `stop-region`/`start-region east`).
    a.wait_offsets(source.name(), "a first position", |o| !o.is_empty());
    let name = unique_name("kco-dr-sink");
    let config = file_sink_config(&work.path().join("east.out"), &topic);
    let sink = a.create_in_state(&name, config, "STOPPED");
    let reply = a.patch_offsets(
        &name,
        json!([{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 445}}]),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let p = Primary {
        topic,
        name,
        input,
        sink: Some(sink),
        _source: source,
        work,
    };
    let env = d.env(true);
    let out = env.path().join("west.out");
    let file = snapshot(&env, &p, &out);
    // Once MM2 has mirrored the 1000 records and checkpointed the group at 445.
    let plan = wait_translated(&d, &env, &file, &["--create-state", "running"], |c| {
        c["translation"]["partitions"][0]["checkpoint"]["upstream"] == 445
    });
    let part = &plan["translation"]["partitions"][0];
    let dr_offset = part["dr_offset"].as_i64().unwrap();
    let redelivers = part["redelivers"].as_i64().unwrap();
    let (_, _dr_sink) = start_on_w(&d, &env, (&p, &file, &out), &["--create-state", "running"]);
    let lines = wait_dr_output(&out, 1000);
    let again = lines.iter().filter(|r| **r <= 445).count() as i64;
    eprintln!(
        "file 445, checkpoint 445 -> {dr_offset}: kco said {redelivers}, the sink delivered {again} again"
    );
    assert_eq!(redelivers, again, "{plan}");
    assert_eq!(
        lines.first().copied(),
        Some(dr_offset as usize + 1),
        "{plan}"
    );

    // The region back, w's sink stopped and left there; east reads on to 1050.
    d.w.stop(&p.name);
    d.w.wait_state(&p.name, "STOPPED");
    a.resume(&p.name);
    append_lines(&p.input, &numbered("r", 1001..=1050));
    wait_sink(&a, &p.name, &p.topic, 1050);
    let file = snapshot(&env, &p, &out);
    let plan = wait_translated(&d, &env, &file, &["--create-state", "running"], |c| {
        c["translation"]["partitions"][0]["checkpoint"]["upstream"] == 1050
    });
    let from = plan["translation"]["partitions"][0]["dr_offset"]
        .as_i64()
        .unwrap() as usize;
    let f = file.to_str().unwrap();
    let apply = [
        "--cluster",
        "w",
        "apply",
        f,
        "--create",
        "--create-state",
        "running",
        "--yes",
    ];
    let (code, o, e) = env.kco(&apply).parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(
        o.contains("start RUNNING (--create-state; it is STOPPED now)")
            && o.contains(&format!(
                "ok {}: offsets applied and verified; RUNNING",
                p.name
            )),
        "{o}{e}"
    );
    d.w.wait_running(&p.name);
    // It reads on from the file's position: what east wrote after it, and nothing east's
    // sink had delivered but what the translation re-reads.
    append_lines(&p.input, &numbered("r", 1051..=1055));
    let after = lines.len();
    let lines = wait_dr_record("the leftover's output", &out, 1055);
    assert_eq!(
        lines[after..],
        (from + 1..=1055).collect::<Vec<_>>(),
        "{plan}"
    );
}

/// Region east lost and back with its data, through the bed's own commands
/// (`scripts/dr-connect.sh stop-region east`, `start-region east`): a source and a sink on
/// cluster a stop with the region; records written to the source's file meanwhile are read
/// once it is back, the connectors resuming on their own (their target state RUNNING) from
/// the offsets east's Kafka kept. None lost; written twice only what the sink had not
/// committed when it stopped. It takes the test bed's broker down for everyone: it runs
/// alone, and only with `KCO_E2E_REGION=required` (scripts/test.sh on a bed of its own).
#[test]
fn east_comes_back_with_its_data() {
    if std::env::var("KCO_E2E_REGION").as_deref() != Ok("required") {
        eprintln!(
            "skipping: it stops the test bed's broker; KCO_E2E_REGION=required runs it \
             (scripts/test.sh sets it on a test bed of its own)"
        );
        return;
    }
    let Some(d) = dr_alone() else { return };
    let a = d.tb.a();
    let work = temp_dir();
    let name = unique_name("kco-dr-region");
    let (input, out) = (work.path().join("in.txt"), work.path().join("out.txt"));
    write_lines(&input, &numbered("r", 1..=10));
    let src = format!("{name}-src");
    let sink = format!("{name}-sink");
    let _src = a.create(&src, file_source_config(&input, &name));
    let _sink = a.create(&sink, file_sink_config(&out, &name));
    wait_sink(&a, &sink, &name, 10);
    let region = |command: &str| {
        let out =
            std::process::Command::new(crate::harness::repo_root().join("scripts/dr-connect.sh"))
                .args([command, "east"])
                .output()
                .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{command} east: {err}");
        err
    };
    let err = region("stop-region");
    assert!(err.contains("region east stopped"), "{err}");
    assert!(!a.answers(), "cluster a still answers");
    // Written while east is away: its source reads them once it is back.
    append_lines(&input, &numbered("r", 11..=20));
    let err = region("start-region");
    assert!(err.contains("region east is back"), "{err}");
    a.wait_running(&src);
    a.wait_running(&sink);
    wait_sink(&a, &sink, &name, 20);
    let lines = wait_dr_record("east's sink after east came back", &out, 20);
    let mut distinct = lines.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct, (1..=20).collect::<Vec<_>>(), "lost: {lines:?}");
    assert!(
        lines.len() - distinct.len() <= 10
            && lines[lines.len() - 10..] == (11..=20).collect::<Vec<_>>()[..],
        "written twice beyond what was uncommitted: {lines:?}"
    );
    // MirrorMaker 2 from east runs again on west's worker (start-region waited for it).
    let mm2 = d.w.status("mm2-east-source").expect("mm2-east-source");
    assert_eq!(mm2["tasks"][0]["state"], "RUNNING", "{mm2}");
}
