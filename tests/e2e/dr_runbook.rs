//! docs/disaster-recovery.md, run: every ```sh block of its runbook, in order, against the
//! DR test bed (as `tests/cli/getting_started.rs` runs docs/getting-started.md), so the
//! runbook cannot drift from the tool.
//!
//! The page's clusters `east` and `west` are the bed's cluster a and cluster w (a kco.yaml
//! like the page's, written here); `orders` is replaced by a name of this run (cluster a is
//! shared: the page's `'orders-*'` then picks this run's connectors only). Every block runs.
//!
//! Between blocks the test plays the incident: records flow on east (1..=300), the region is
//! lost (the sink on a paused), after the failover producers write to west's own topic
//! (301..=310), east comes back (its old sink resuming), producers stop on west (a source
//! left STOPPED there, captured with the failback's files) and move back to east after the
//! failback (311..=320), west's stopped sink is deleted; every record is counted by content
//! across both regions' output. Then the second incident, back to back: records 321..=400 on
//! east, the nightly and its check, east lost again, west's stopped source resumed
//! (401..=410), the failover block again: the sink it makes on west RUNNING, reading east's
//! topic and west's own (east's copy of it translated back through the mirror back's offset
//! syncs), re-reading as many records as its plan states, none lost. Both regions' sources
//! read files of the region's path (`data/east/`, `data/west/`), so their sealed offsets name
//! the path that the failover and failback blocks rewrite in the sinks' config. Before Connect 3.7 (no STOPPED creation,
//! KIP-980) the failover block is a plan error that says so, and the run stops there
//! (tests/e2e/dr.rs fails back on 3.6 by hand).

use std::path::Path;
use std::time::Duration;

use crate::dr::{dr, dr_lines, sasl, w_url, wait_dr_record, wait_sink};
use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, sink_offset, temp_dir,
    unique_name, wait_for, write_lines,
};
use crate::support::docs::{page_shell, shell_blocks};

/// The output of a block run with `sh -e` in `dir` with `env` set, on the real clock
/// (MirrorMaker 2's records carry real times): Ok(stdout+stderr) when it succeeded.
fn run(dir: &Path, env: &[(&str, &str)], script: &str) -> Result<String, String> {
    let mut sh = page_shell("sh", dir, dir);
    sh.args(["-e", "-c", script]).envs(env.iter().copied());
    let out = sh.env_remove("KCO_NOW").output().unwrap();
    let all = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    match out.status.success() {
        true => Ok(all.into_owned()),
        false => Err(format!("{script}\n--- exit {:?}\n{all}", out.status.code())),
    }
}

#[test]
fn the_disaster_recovery_runbook_runs_on_the_dr_test_bed() {
    let Some(d) = dr() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/disaster-recovery.md")).unwrap();
    let runbook = &page[page.find("## Runbook").expect("a runbook section")..];
    assert!(
        !runbook.contains("<!-- not run"),
        "every block of the runbook runs"
    );
    let name = unique_name("kco-rb");
    let steps: Vec<String> = shell_blocks(runbook)
        .iter()
        .map(|b| b.replace("orders", &name))
        .collect();
    assert!(steps.len() >= 9, "{} blocks", steps.len());
    // A block that edits files validates them before it commits: it never commits a file
    // kco would refuse.
    for s in steps.iter().filter(|s| s.contains("sed -i")) {
        let (validate, commit) = (s.find("kco validate"), s.find("git commit"));
        assert!(
            validate.is_some() && validate < commit,
            "an edit committed unvalidated: {s}"
        );
    }

    // The primary: a source writing records 1..=100 to a topic, a sink copying them.
    let work = temp_dir();
    let dir = work.path();
    for sub in ["data/east", "data/west"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let a = d.tb.a();
    // The source reads a file of the region's path: its sealed offsets (FileStream's
    // `filename`) name `/data/east/`, which the failover's edit must leave alone.
    let input = dir.join("data/east/in.txt");
    write_lines(&input, &numbered("r", 1..=100));
    let _source = a.create(&format!("{name}-src"), file_source_config(&input, &name));
    let east_sink = a.create(
        &format!("{name}-sink"),
        file_sink_config(&dir.join("data/east/out.txt"), &name),
    );
    wait_sink(&a, &format!("{name}-sink"), &name, 100);
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
    let w = w_url();
    let env = [
        ("KCO_DR_KAFKA_PASSWORD", d.password.as_str()),
        ("EAST", d.tb.a_urls[0].as_str()),
        ("WEST", w.as_str()),
    ];
    // A repository that pushes to a remote, as the page asks.
    let remote_dir = temp_dir();
    let remote = remote_dir.path().join("remote.git");
    run(
        dir,
        &env,
        &format!(
            "git init -q --bare {0} && git init -q . && git remote add origin {0}",
            remote.display()
        ),
    )
    .unwrap();
    let pushed = |what: &str| {
        let local = run(dir, &env, "git rev-parse HEAD").unwrap();
        let there = run(dir, &env, "git ls-remote origin HEAD refs/heads/*").unwrap();
        assert!(
            there.contains(local.trim()),
            "{what}: HEAD not pushed: {there}"
        );
    };
    let mut steps = steps.iter();
    // The next block, which must be the one for `what` (it contains `needle`).
    let mut next = |what: &str, needle: &str| -> &String {
        let s = steps
            .next()
            .unwrap_or_else(|| panic!("no block for {what}"));
        assert!(s.contains(needle), "{what}: {s}");
        s
    };
    let retry = |what: &str, script: &str, ok: &dyn Fn(&str) -> bool| -> String {
        wait_for(what, Duration::from_secs(120), || {
            run(dir, &env, script).and_then(|o| if ok(&o) { Ok(o) } else { Err(o) })
        })
    };

    // Rehearse: a dry run, once MM2 has checkpointed the sink's group.
    let rehearse = next("rehearse", "kco apply");
    let plan = if d.w.supports_initial_state() {
        retry("the rehearsal's plan", rehearse, &|_| true)
    } else {
        // Before 3.7 the plan of a create is an error (KIP-980), printed with the rest of the
        // plan: the translation and the config it would change are still shown.
        wait_for(
            "the rehearsal's plan",
            Duration::from_secs(120),
            || match run(dir, &env, rehearse) {
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
    let nightly = next("the nightly snapshot", "kco snapshot").clone();
    run(dir, &env, &nightly).unwrap();
    let log = run(dir, &env, "git log --format=%s").unwrap();
    assert!(log.contains("offsets of east"), "{log}");
    pushed("the nightly");
    let tracked = run(
        dir,
        &env,
        "git ls-files snapshots/connector-offsets-v1.json",
    )
    .unwrap();
    assert!(!tracked.trim().is_empty(), "the schema file is committed");
    let readiness = next("the readiness check", "kco diff").clone();
    let nightly_readiness = readiness.clone();
    let readiness = readiness.as_str();
    // The mirror is alive by the heartbeats it copies from east (the bed's MM2 writes them).
    let report = retry("a heartbeat in the readiness check", readiness, &|o| {
        o.contains("(`east.heartbeats`, copied from the source cluster: records come through)")
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

    // Region east is lost after records up to 300: its sink no longer runs (its target state
    // stays RUNNING in a real outage: here it is paused, and resumed when east is back).
    let sink = format!("{name}-sink");
    append_lines(&input, &numbered("r", 101..=300));
    wait_sink(&a, &sink, &name, 300);
    a.pause(&sink);
    a.wait_state(&sink, "PAUSED");
    // Producers fail over to west's own topic (records 301..310): a source of west's, of a
    // name the page's `'orders-*'` captures, reading a file of west's path (its offsets name
    // `/data/west/`, which the failback's edit must leave alone).
    let west_input = dir.join("data/west/in.txt");
    write_lines(&west_input, &numbered("r", 301..=310));
    let producer = format!("{name}-west-src");
    let _producer =
        d.w.create(&producer, file_source_config(&west_input, &name));

    let failover = next("the failover", "kco apply").clone();
    if !d.w.supports_initial_state() {
        let e = run(dir, &env, &failover).unwrap_err();
        assert!(e.contains("KIP-980"), "{e}");
        return;
    }
    let out = run(dir, &env, &failover).unwrap();
    let _dr_sink = d.w.adopt(&format!("{name}-sink"));
    // Every file of east edited, the edit committed and pushed.
    let status = run(dir, &env, "git status --porcelain --untracked-files=no").unwrap();
    assert!(status.trim().is_empty(), "edits left uncommitted: {status}");
    pushed("the failover's edit");
    let edited = run(dir, &env, "grep -l /data/west/ snapshots/east/*.yaml").unwrap();
    assert!(edited.contains(&format!("{name}-sink.yaml")), "{edited}");
    // The source's file as captured: its offsets and config still name east's path.
    assert!(!edited.contains(&format!("{name}-src.yaml")), "{edited}");
    let src = std::fs::read_to_string(dir.join(format!("snapshots/east/{name}-src.yaml"))).unwrap();
    assert!(
        src.contains("filename: ") && src.contains("/data/east/in.txt"),
        "{src}"
    );
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
    let out = run(dir, &env, next("the DR region's nightly", "kco snapshot")).unwrap();
    let log = run(dir, &env, "git log --format=%s").unwrap();
    assert!(log.contains("offsets of west"), "{log}\n{out}");
    pushed("the DR region's nightly");

    // Fail back. The mirror back configured under east, as the page says.
    let east_bootstrap = d.w.config("mm2-east-source")["source.cluster.bootstrap.servers"]
        .as_str()
        .unwrap()
        .to_string();
    let config = std::fs::read_to_string(dir.join("kco.yaml")).unwrap();
    std::fs::write(
        dir.join("kco.yaml"),
        config.replacen(
            "  west:\n",
            &format!(
                "    kafka: {{bootstrap: \"{east_bootstrap}\"}}\n    mirrors: {{west: {{alias: west, targetAlias: east}}}}\n  west:\n"
            ),
            1,
        ),
    )
    .unwrap();
    // East is back: its old sink resumes on its own; the block stops and deletes it.
    a.resume(&sink);
    a.wait_running(&sink);
    run(dir, &env, next("east's old sinks stopped", "/stop")).unwrap();
    a.wait_gone(&sink);
    drop(east_sink);
    // Producers stop writing to west once west's sink has read and committed all of it.
    d.w.wait_offsets(&sink, "10 of west's own topic committed", |o| {
        sink_offset(o, &name) == Some(10)
    });
    d.w.stop(&producer);
    // West's sinks stopped and captured, the region's key edited back, committed, pushed.
    run(
        dir,
        &env,
        next("west's sinks stopped and captured", "kco snapshot"),
    )
    .unwrap();
    assert_eq!(d.w.state(&sink), "STOPPED");
    let status = run(dir, &env, "git status --porcelain --untracked-files=no").unwrap();
    assert!(status.trim().is_empty(), "edits left uncommitted: {status}");
    pushed("west's last positions");
    let file = std::fs::read_to_string(dir.join(format!("snapshots/west/{sink}.yaml"))).unwrap();
    assert!(
        file.contains("/data/east/") && !file.contains("/data/west/") && file.contains("STOPPED"),
        "{file}"
    );
    // West's source captured as it was, its offsets naming west's path.
    let src = std::fs::read_to_string(dir.join(format!("snapshots/west/{producer}.yaml"))).unwrap();
    assert!(
        src.contains("filename: ")
            && src.contains("/data/west/in.txt")
            && !src.contains("/data/east/"),
        "{src}"
    );
    // The failback's readiness, once the mirror back has checkpointed west's sink: both
    // crossings, east's topic through the forward mirror's offset syncs.
    let readiness = next("the failback's readiness", "kco diff");
    let report = retry("the failback's readiness", readiness, &|o| {
        o.contains(&format!("{name}/0 10 -> west.{name}/0 10"))
            && o.contains(&format!("east.{name}/0 300 -> {name}/0 "))
    });
    assert!(report.contains("dr_ready"), "{report}");
    let east_out = dir.join("data/east/out.txt");
    let before = dr_lines(&east_out).len();
    let out = run(dir, &env, next("the failback", "kco apply")).unwrap();
    let _back_sink = a.adopt(&sink);
    assert!(out.contains(&format!("{producer}: left out")), "{out}");
    assert!(
        out.contains(&format!(
            "config topics: east.{name},{name} -> {name},west.{name}"
        )),
        "{out}"
    );
    assert_eq!(a.config(&sink)["topics"], format!("{name},west.{name}"));
    a.wait_running(&sink);
    // West's stopped sink deleted: the next nightly check does not compare its old
    // positions (`drifted`), and the next failover creates it afresh.
    run(
        dir,
        &env,
        next("west's sinks deleted", "-X DELETE \"$WEST/connectors/"),
    )
    .unwrap();
    d.w.wait_gone(&sink);
    // The next night: east's new sink captured, and west ready to take over again (exit 0),
    // not `drifted` by the stopped sink the failback left there.
    run(dir, &env, &nightly).unwrap();
    let report = retry(
        "the readiness after the failback",
        &nightly_readiness,
        &|o| o.contains("dr_ready"),
    );
    assert!(!report.contains("drifted"), "{report}");
    // Producers move back to east (records 311..=320).
    append_lines(&input, &numbered("r", 311..=320));
    let back = wait_dr_record("east's sink after failback", &east_out, 320)[before..].to_vec();
    // Every record 1..=320 written somewhere; more than once only what a translation
    // re-reads: east's records from west's first (the failover), and what the failback
    // sink re-reads before 311 (within MM2's offset.lag.max).
    let mut all = dr_lines(&east_out);
    all.extend(dr_lines(&west_out));
    all.sort_unstable();
    let mut distinct = all.clone();
    distinct.dedup();
    assert_eq!(
        distinct,
        (1..=320).collect::<Vec<_>>(),
        "lost: east {:?} west {:?}",
        dr_lines(&east_out),
        dr_lines(&west_out)
    );
    let re_read: Vec<usize> = back.iter().copied().filter(|r| *r < 311).collect();
    let extra: Vec<usize> = all
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(
        extra
            .iter()
            .all(|r| (first..=310).contains(r) || re_read.contains(r))
            && (re_read.len() as i64) <= d.lag_max,
        "written again: {extra:?}; the failback re-read {re_read:?}"
    );
    eprintln!("failover from record {first}; records the failback read again: {re_read:?}");
    assert!(steps.next().is_none(), "a block the test does not know");

    // The second incident, right after the first's failback. Records 321..=400 on east, the
    // nightly and its check as written; east lost again; producers on west's own topic again
    // (west's STOPPED source resumed: its offsets, naming west's path, kept from the first
    // incident: records 401..=410); the failover block as written, again.
    // East's topic holds 390 records: 301..=310 were written on west.
    append_lines(&input, &numbered("r", 321..=400));
    wait_sink(&a, &sink, &name, 390);
    run(dir, &env, &nightly).unwrap();
    pushed("the nightly before the second incident");
    let report = retry(
        "the readiness before the second incident",
        &nightly_readiness,
        &|o| o.contains("dr_ready") && !o.contains("dr_lagging"),
    );
    assert!(!report.contains("drifted"), "{report}");
    a.pause(&sink);
    a.wait_state(&sink, "PAUSED");
    append_lines(&west_input, &numbered("r", 401..=410));
    d.w.resume(&producer);
    let west_before = dr_lines(&west_out).len();
    let out = run(dir, &env, &failover).unwrap();
    let _dr_sink_again = d.w.adopt(&sink);
    pushed("the second failover's edit");
    assert!(out.contains(&format!("{name}-src: left out")), "{out}");
    let src = std::fs::read_to_string(dir.join(format!("snapshots/east/{name}-src.yaml"))).unwrap();
    assert!(src.contains("/data/east/in.txt"), "{src}");
    // The sink read east's topic and west's own (west's copy of it on east is west's own).
    assert_eq!(d.w.config(&sink)["topics"], format!("east.{name},{name}"));
    d.w.wait_running(&sink);
    wait_dr_record("the second DR sink's copy", &west_out, 410);
    let again = dr_lines(&west_out)[west_before..].to_vec();
    let plan: Vec<&str> = out.lines().filter(|l| l.contains(" -> ")).collect();
    eprintln!("the second failover's plan: {plan:#?}\nwrote {again:?}");
    // Every record 1..=410 written somewhere; the second DR sink wrote none twice, all of
    // 401..=410, and before them only what the translation of the primary's last committed
    // positions re-reads (within MirrorMaker 2's offset.lag.max).
    let mut sorted = again.clone();
    sorted.sort_unstable();
    let mut distinct = sorted.clone();
    distinct.dedup();
    assert_eq!(distinct, sorted, "the second failover wrote a record twice");
    assert!((401..=410).all(|r| sorted.contains(&r)), "{sorted:?}");
    let re_read: Vec<usize> = sorted.iter().copied().filter(|r| *r < 401).collect();
    // As many as the plan says: `re-delivers N record(s)` per partition.
    let stated: usize = plan
        .iter()
        .filter_map(|l| l.split("re-delivers ").nth(1))
        .map(|r| r.split(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(
        re_read.len(),
        stated,
        "re-read {re_read:?}; the plan: {plan:#?}"
    );
    assert!(
        (re_read.len() as i64) <= d.lag_max && re_read.iter().all(|r| *r as i64 > 400 - d.lag_max),
        "the second failover re-read {re_read:?}"
    );
    let mut all = dr_lines(&east_out);
    all.extend(dr_lines(&west_out));
    all.sort_unstable();
    all.dedup();
    assert_eq!(all, (1..=410).collect::<Vec<_>>(), "lost");
    eprintln!("records the second failover read again: {re_read:?}");
}
