//! docs/disaster-recovery.md, run: every ```sh block of its runbook, in order, against the
//! DR test bed (as `tests/cli/getting_started.rs` runs docs/getting-started.md), so the
//! runbook cannot drift from the tool.
//!
//! The page's clusters `east` and `west` are the bed's cluster a and cluster w (a kco.yaml
//! like the page's, written here); `orders` is replaced by a name of this run (cluster a is
//! shared: the page's `'orders-*'` then picks this run's connectors only). A block preceded
//! by `<!-- not run: REASON -->` is skipped, and the reason must be given.
//!
//! Between blocks the test plays the incident: records flow on east, the region is lost (the
//! sink on a is deleted), and after the failover producers write to west's own topic.
//! Before Connect 3.7 (no STOPPED creation, KIP-980) the failover block is a plan error that
//! says so, and the run stops there.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::dr::{dr, dr_lines, sasl, w_url, wait_sink};
use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, temp_dir, unique_name, wait_for,
    write_lines, ConnectorGuard,
};
use crate::support::run::hermetic;

/// One ```sh block, and why it is not run (when it is marked so).
struct Block {
    text: String,
    not_run: Option<String>,
}

fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut marker: Option<String> = None;
    let mut pending: Option<String> = None;
    for line in page.lines() {
        let t = line.trim_end();
        match &mut current {
            None if t == "```sh" => {
                current = Some(String::new());
                pending = marker.take();
            }
            None => {
                marker = t
                    .strip_prefix("<!-- not run:")
                    .and_then(|r| r.strip_suffix("-->"))
                    .map(|r| r.trim().to_string());
            }
            Some(_) if t == "```" => out.push(Block {
                text: current.take().unwrap(),
                not_run: pending.take(),
            }),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    out
}

/// The output of a block run with `sh -e` in `dir`: Ok(stdout+stderr) when it succeeded.
fn run(dir: &Path, password: &str, script: &str) -> Result<String, String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_kco")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut sh = Command::new("sh");
    let out = hermetic(&mut sh, dir)
        .args(["-e", "-c", script])
        .current_dir(dir)
        .env("PATH", &path)
        .env("KCO_DR_KAFKA_PASSWORD", password)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(all)
    } else {
        Err(format!("{script}\n--- exit {:?}\n{all}", out.status.code()))
    }
}

/// A MirrorHeartbeatConnector for the flow east->west, on w (its heartbeats go to west's
/// `heartbeats`), configured like the bed's MM2 connectors.
fn heartbeat(d: &crate::dr::Dr) -> ConnectorGuard {
    let mm2 = d.w.config("mm2-east-source");
    let mut config = json!({
        "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "tasks.max": "1",
        "emit.heartbeats.interval.seconds": "1",
        "heartbeats.topic.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
    });
    for k in [
        "source.cluster.alias",
        "target.cluster.alias",
        "source.cluster.bootstrap.servers",
        "target.cluster.bootstrap.servers",
    ] {
        config[k] = mm2[k].clone();
    }
    d.w.create(&unique_name("kco-rb-heartbeat"), config)
}

#[test]
fn the_disaster_recovery_runbook_runs_on_the_dr_test_bed() {
    let Some(d) = dr() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/disaster-recovery.md")).unwrap();
    let runbook = &page[page.find("## Runbook").expect("a runbook section")..];
    let all = blocks(runbook);
    let skipped: Vec<&Block> = all.iter().filter(|b| b.not_run.is_some()).collect();
    assert!(
        skipped.len() <= 2
            && skipped
                .iter()
                .all(|b| !b.not_run.as_deref().unwrap().is_empty()),
        "few blocks are not run, each with its reason"
    );
    let name = unique_name("kco-rb");
    let steps: Vec<String> = all
        .iter()
        .filter(|b| b.not_run.is_none())
        .map(|b| b.text.replace("orders", &name))
        .collect();
    assert!(steps.len() >= 5, "{} blocks", steps.len());

    // The primary: a source writing records 1..=100 to a topic, a sink copying them.
    let work = temp_dir();
    let dir = work.path();
    for sub in ["data/east", "data/west"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let a = d.tb.a();
    let input = dir.join("in.txt");
    write_lines(&input, &numbered("r", 1..=100));
    let _source = a.create(&format!("{name}-src"), file_source_config(&input, &name));
    let mut east_sink = Some(a.create(
        &format!("{name}-sink"),
        file_sink_config(&dir.join("data/east/out.txt"), &name),
    ));
    wait_sink(&a, &format!("{name}-sink"), &name, 100);
    let _heartbeat = heartbeat(&d);
    std::fs::write(
        dir.join("kco.yaml"),
        format!(
            "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n    kafka:\n      bootstrap: \"{}\"\n      sasl: {{mechanism: SCRAM-SHA-512, username: kco, password: \"${{env:KCO_DR_KAFKA_PASSWORD}}\"}}\n    mirrors:\n      east: {{alias: east, policy: default}}\n",
            d.tb.a_urls.join(", "),
            w_url(),
            sasl()
        ),
    )
    .unwrap();
    // A repository that pushes to a remote, as the page asks.
    let remote_dir = temp_dir();
    let remote = remote_dir.path().join("remote.git");
    run(
        dir,
        "",
        &format!(
            "git init -q --bare {0} && git init -q . && git remote add origin {0}",
            remote.display()
        ),
    )
    .unwrap();
    let pushed = |what: &str| {
        let local = run(dir, "", "git rev-parse HEAD").unwrap();
        let there = run(dir, "", "git ls-remote origin HEAD refs/heads/*").unwrap();
        assert!(
            there.contains(local.trim()),
            "{what}: HEAD not pushed: {there}"
        );
    };
    let mut steps = steps.iter();
    let mut next = |what: &str| -> &String {
        let s = steps
            .next()
            .unwrap_or_else(|| panic!("no block for {what}"));
        assert!(s.contains("kco "), "{what}: {s}");
        s
    };
    let retry = |what: &str, script: &str, ok: &dyn Fn(&str) -> bool| -> String {
        wait_for(what, Duration::from_secs(120), || {
            run(dir, &d.password, script).and_then(|o| if ok(&o) { Ok(o) } else { Err(o) })
        })
    };

    // Rehearse: a dry run, once MM2 has checkpointed the sink's group.
    let rehearse = next("rehearse");
    let plan = if d.w.supports_initial_state() {
        retry("the rehearsal's plan", rehearse, &|_| true)
    } else {
        // Before 3.7 the plan of a create is an error (KIP-980), printed with the rest of the
        // plan: the translation and the config it would change are still shown.
        wait_for(
            "the rehearsal's plan",
            Duration::from_secs(120),
            || match run(dir, &d.password, rehearse) {
                Err(e) if e.contains("KIP-980") && e.contains(" -> east.") => Ok(e),
                Err(e) => Err(e),
                Ok(o) => panic!("a create before 3.7 was planned without an error: {o}"),
            },
        )
    };
    assert!(
        plan.contains(&format!("{name}-src: left out")),
        "the source is left out: {plan}"
    );
    assert!(
        plan.contains(&format!("config topics: {name} -> east.{name},{name}")),
        "{plan}"
    );

    // Detect: the nightly commit commits; the readiness check exits 0, the source skipped,
    // the mirror's heartbeat seen.
    run(dir, &d.password, next("the nightly snapshot")).unwrap();
    let log = run(dir, "", "git log --format=%s").unwrap();
    assert!(log.contains("offsets of east"), "{log}");
    pushed("the nightly");
    let tracked = run(dir, "", "git ls-files snapshots/connector-offsets-v1.json").unwrap();
    assert!(!tracked.trim().is_empty(), "the schema file is committed");
    let readiness = next("the readiness check");
    let report = retry("a heartbeat in the readiness check", readiness, &|o| {
        o.contains("last heartbeat")
    });
    assert!(
        report.contains("dr_ready") && report.contains("skipped"),
        "{report}"
    );
    assert!(
        report.contains("records behind the file")
            && report.contains("the group's last checkpoint was written"),
        "{report}"
    );

    // Region east is lost after records up to 300.
    append_lines(&input, &numbered("r", 101..=300));
    wait_sink(&a, &format!("{name}-sink"), &name, 300);
    drop(east_sink.take());
    // Producers fail over to west's own topic (records 301..310).
    let west_input = dir.join("west-in.txt");
    write_lines(&west_input, &numbered("r", 301..=310));
    let _producer = d.w.create(
        &unique_name("kco-rbprod"),
        file_source_config(&west_input, &name),
    );

    let failover = next("the failover");
    if !d.w.supports_initial_state() {
        let e = run(dir, &d.password, failover).unwrap_err();
        assert!(e.contains("KIP-980"), "{e}");
        return;
    }
    let out = run(dir, &d.password, failover).unwrap();
    let _dr_sink = d.w.adopt(&format!("{name}-sink"));
    // Every file of east edited, the edit committed and pushed.
    let status = run(dir, "", "git status --porcelain --untracked-files=no").unwrap();
    assert!(status.trim().is_empty(), "edits left uncommitted: {status}");
    pushed("the failover's edit");
    let edited = run(dir, "", "grep -l /data/west/ snapshots/east/*.yaml").unwrap();
    assert!(edited.contains(&format!("{name}-sink.yaml")), "{edited}");
    assert!(out.contains(&format!("{name}-src: left out")), "{out}");
    assert_eq!(
        d.w.config(&format!("{name}-sink"))["topics"],
        format!("east.{name},{name}")
    );
    // Producers write to west's own topic: the restored sink reads it too, and the
    // mirrored records after MM2's latest checkpoint of the primary (none when it had
    // checkpointed 300). The region-specific key edited in the file: west writes its own copy.
    let west_out = dir.join("data/west/out.txt");
    let mut lines = wait_for("the DR sink's copy", Duration::from_secs(90), || {
        let l = dr_lines(&west_out);
        if l.contains(&310) && l.len() >= 10 {
            Ok(l)
        } else {
            Err(format!(
                "{} lines, last {:?}; {:?}",
                l.len(),
                l.last(),
                d.w.status(&format!("{name}-sink"))
            ))
        }
    });
    // The two topics are read side by side: their records may interleave.
    lines.sort_unstable();
    let first = lines[0];
    assert!(first as i64 > 100 - d.lag_max, "starts at {first}");
    assert_eq!(
        lines,
        (first..=310).collect::<Vec<_>>(),
        "none lost, none twice"
    );

    // Run in the DR region: its own nightly commit and check.
    let out = run(dir, &d.password, next("the DR region's nightly")).unwrap();
    let log = run(dir, "", "git log --format=%s").unwrap();
    assert!(log.contains("offsets of west"), "{log}\n{out}");
    pushed("the DR region's nightly");
    assert!(steps.next().is_none(), "a block the test does not know");
}
