//! The test bed gives real offsets: raw REST calls against real Connect workers, no kco.
//! What these tests pin down is written up in docs/connect-behaviour.md.

use serde_json::{json, Value};

use crate::harness::{
    file_source_config, numbered, parse_version, sink_offset, source_position, temp_dir, testbed,
    unique_name, write_lines, Connect, TopicReader,
};

const NOT_STOPPED: &str =
    "Connectors must be in the STOPPED state before their offsets can be modified";
// Connect's answers to an alter and a reset of offsets (testbed_sink.rs checks them too).
pub(crate) const ALTERED: &str = "The offsets for this connector have been altered successfully";
pub(crate) const RESET: &str = "The offsets for this connector have been reset successfully";

#[test]
fn workers_report_version_and_kafka_cluster() {
    let Some(tb) = testbed() else { return };
    let mut cluster_ids = Vec::new();
    for url in tb.all_urls() {
        let info = Connect::new(&url).info();
        let version = info["version"].as_str().expect("version");
        let parsed = parse_version(version).unwrap_or_else(|| panic!("{url}: version {version}"));
        assert!(
            parsed >= (3, 6, 0),
            "{url}: Connect {version} is older than 3.6"
        );
        let id = info["kafka_cluster_id"].as_str().unwrap_or_default();
        assert!(!id.is_empty(), "{url}: no kafka_cluster_id in {info}");
        cluster_ids.push(id.to_string());
    }
    cluster_ids.dedup();
    assert_eq!(cluster_ids.len(), 1, "all workers share one Kafka cluster");
}

#[test]
fn cluster_a_shares_connectors_and_cluster_b_does_not() {
    let Some(tb) = testbed() else { return };
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("shared", 0..1));
    let (a1, a2, b) = (tb.a(), tb.a2(), tb.b());
    let name = unique_name("kco-e2e-shared");
    let _guard = a1.create_in_state(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-shared")),
        "STOPPED",
    );
    crate::harness::wait_for(
        "the connector on the second worker",
        crate::harness::WAIT,
        || {
            a2.has_connector(&name)
                .then_some(())
                .ok_or_else(|| "not yet".to_string())
        },
    );
    assert!(
        !b.has_connector(&name),
        "cluster b must not see cluster a's connector"
    );
}

/// FileStreamSource: offsets track the byte position; a PATCH while stopped rewinds it
/// and the lines from there reach the topic again.
#[test]
fn file_source_rewind_replays_lines() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let lines = numbered("src", 0..10);
    let starts = write_lines(&input, &lines);
    let file_len = std::fs::metadata(&input).expect("input").len() as i64;
    let topic = unique_name("kco-e2e-src");
    let reader = TopicReader::start(&a, &topic, dir.path());

    let name = unique_name("kco-e2e-src");
    let _source = a.create(&name, file_source_config(&input, &topic));
    a.wait_running(&name);
    let offsets = a.wait_offsets(&name, "position at end of file", |o| {
        source_position(o, &input) == Some(file_len)
    });
    assert_eq!(offsets.len(), 1, "one partition per file: {offsets:?}");
    assert_eq!(
        offsets[0]["partition"],
        json!({ "filename": input.to_str().unwrap() })
    );
    assert_eq!(reader.wait_lines(10), lines);

    a.stop(&name);
    let k = 4;
    let reply = a.patch_offsets(
        &name,
        json!([{ "partition": { "filename": input.to_str().unwrap() },
                 "offset": { "position": starts[k] } }]),
    );
    assert_eq!(reply.status, 200, "PATCH: {}", reply.body);
    assert_eq!(reply.message(), ALTERED);
    // Source offsets are read from the worker's view of the offsets topic, which may
    // trail a write by a moment: poll instead of asserting on the first GET.
    a.wait_offsets(&name, "the patched position", |o| {
        source_position(o, &input) == Some(starts[k] as i64)
    });

    a.resume(&name);
    a.wait_offsets(&name, "position back at end of file", |o| {
        source_position(o, &input) == Some(file_len)
    });
    let seen = reader.wait_lines(10 + (10 - k));
    assert_eq!(
        seen.len(),
        10 + (10 - k),
        "no more than one replay: {seen:?}"
    );
    assert_eq!(&seen[..10], &lines[..]);
    assert_eq!(&seen[10..], &lines[k..]);
}

/// FileStreamSink: offsets are the consumer group's; a PATCH while stopped makes the
/// sink consume again from the given record.
#[test]
fn file_sink_rewind_reconsumes_records() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let lines = numbered("sink", 0..6);
    write_lines(&input, &lines);
    let topic = unique_name("kco-e2e-sink");

    let source = unique_name("kco-e2e-sink-src");
    let _source = a.create(&source, file_source_config(&input, &topic));
    let reader = TopicReader::start(&a, &topic, dir.path());
    let sink = reader.sink.name().to_string();
    assert_eq!(reader.wait_lines(6), lines);

    let offsets = a.wait_offsets(&sink, "kafka_offset 6", |o| {
        sink_offset(o, &topic) == Some(6)
    });
    assert_eq!(
        offsets,
        vec![
            json!({ "partition": { "kafka_topic": topic, "kafka_partition": 0 },
                     "offset": { "kafka_offset": 6 } })
        ],
        "sink offsets are the committed consumer offsets, one entry per topic partition"
    );

    a.stop(&sink);
    let reply = a.patch_offsets(
        &sink,
        json!([{ "partition": { "kafka_topic": topic, "kafka_partition": 0 },
                 "offset": { "kafka_offset": 2 } }]),
    );
    assert_eq!(reply.status, 200, "PATCH: {}", reply.body);
    assert_eq!(reply.message(), ALTERED);
    assert_eq!(sink_offset(&a.offsets(&sink), &topic), Some(2));

    a.resume(&sink);
    let seen = reader.wait_lines(6 + 4);
    a.wait_offsets(&sink, "kafka_offset 6 again", |o| {
        sink_offset(o, &topic) == Some(6)
    });
    assert_eq!(seen.len(), 10, "records 2.. once more: {seen:?}");
    assert_eq!(&seen[..6], &lines[..]);
    assert_eq!(&seen[6..], &lines[2..]);
}

/// PATCH needs STOPPED: a running or a paused connector gets 400 and a fixed message;
/// stop answers 204, pause and resume 202.
#[test]
fn patch_requires_stopped_connector() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("state", 0..3));
    let name = unique_name("kco-e2e-state");
    let _guard = a.create(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-state")),
    );
    a.wait_running(&name);
    let body = json!([{ "partition": { "filename": input.to_str().unwrap() },
                        "offset": { "position": 0 } }]);

    let running = a.patch_offsets(&name, body.clone());
    assert_eq!(running.status, 400, "running: {}", running.body);
    assert!(
        running.message().starts_with(NOT_STOPPED),
        "{}",
        running.body
    );
    assert!(
        running
            .message()
            .contains(&format!("'/connectors/{name}/stop'")),
        "the message names the stop endpoint: {}",
        running.body
    );
    assert_eq!(running.body["error_code"], 400);

    a.pause(&name); // asserts 202
    let paused = a.patch_offsets(&name, body.clone());
    assert_eq!(paused.status, 400, "paused: {}", paused.body);
    assert!(paused.message().starts_with(NOT_STOPPED), "{}", paused.body);

    a.stop(&name); // asserts 204
    let stopped = a.patch_offsets(&name, body);
    assert_eq!(stopped.status, 200, "stopped: {}", stopped.body);
    a.resume(&name); // asserts 202
}

/// Request validation: an empty list is the framework's 400; values the FileStreamSource
/// rejects come back as 500 with the connector's message; unknown connectors are 404.
#[test]
fn patch_validation_errors() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("valid", 0..3));
    let file = input.to_str().unwrap();
    let name = unique_name("kco-e2e-valid");
    let _guard = a.create_in_state(&name, file_source_config(&input, "unused"), "STOPPED");
    a.wait_stopped(&name);

    let empty = a.patch_offsets(&name, json!([]));
    assert_eq!(empty.status, 400, "{}", empty.body);
    assert_eq!(
        empty.message(),
        "Partitions / offsets need to be provided for an alter offsets request"
    );

    let cases: [(Value, &str); 3] = [
        (json!({ "position": -1 }), "should be a non-negative value"),
        (json!({ "position": "7" }), "is expected to be a Long value"),
        (
            json!({ "pos": 7 }),
            "should either be null or contain the key 'position'",
        ),
    ];
    for (offset, expected) in cases {
        let r = a.patch_offsets(
            &name,
            json!([{ "partition": { "filename": file }, "offset": offset }]),
        );
        assert_eq!(r.status, 500, "{offset}: {}", r.body);
        assert!(r.message().contains(expected), "{offset}: {}", r.body);
    }
    let nested = a.patch_offsets(
        &name,
        json!([{ "partition": { "filename": file }, "offset": { "position": { "a": 1 } } }]),
    );
    assert_eq!(nested.status, 500, "{}", nested.body);
    assert!(
        nested.message().contains("primitive types"),
        "{}",
        nested.body
    );
    assert!(
        a.offsets(&name).is_empty(),
        "rejected PATCHes change nothing"
    );

    let missing = unique_name("kco-e2e-missing");
    let r = a.patch_offsets(
        &missing,
        json!([{ "partition": { "filename": file }, "offset": null }]),
    );
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(r.message(), format!("Connector {missing} not found"));
}

/// PATCH adds or overwrites the listed partitions only; `offset: null` removes one; the
/// last duplicate wins; DELETE resets everything.
#[test]
fn source_partitions_added_removed_and_reset() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("null", 0..3));
    let file = input.to_str().unwrap();
    let other = dir.path().join("other.txt");
    let other = other.to_str().unwrap();
    let name = unique_name("kco-e2e-null");
    let _guard = a.create_in_state(&name, file_source_config(&input, "unused"), "STOPPED");
    a.wait_stopped(&name);
    assert!(
        a.offsets(&name).is_empty(),
        "a new connector has no offsets"
    );

    let r = a.patch_offsets(
        &name,
        json!([{ "partition": { "filename": file }, "offset": { "position": 7 } },
               { "partition": { "filename": other }, "offset": { "position": 3 } },
               { "partition": { "filename": file }, "offset": { "position": 14 } }]),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.message(), ALTERED);
    let offsets = a.wait_offsets(&name, "two partitions", |o| o.len() == 2);
    assert_eq!(
        source_position(&offsets, &input),
        Some(14),
        "last duplicate wins"
    );

    let r = a.patch_offsets(
        &name,
        json!([{ "partition": { "filename": other }, "offset": null }]),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.message(), ALTERED);
    // Right after the write a GET can still list the removed partition, with
    // `"offset": null`; it disappears once the worker has read the tombstone.
    let expected = vec![json!({ "partition": { "filename": file }, "offset": { "position": 14 } })];
    a.wait_offsets(
        &name,
        "a null offset removes the partition, the other one is untouched",
        |o| o == expected.as_slice(),
    );

    for _ in 0..2 {
        let r = a.reset_offsets(&name);
        assert_eq!(r.status, 200, "DELETE offsets: {}", r.body);
        assert_eq!(r.message(), RESET);
        a.wait_offsets(&name, "no partitions after DELETE", <[Value]>::is_empty);
    }
}

/// A connector created STOPPED accepts offsets before it ever ran, starts from them,
/// and a deleted connector's offsets pass on to a new one with the same name.
#[test]
fn stopped_creation_and_offsets_outliving_the_connector() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let lines = numbered("born", 0..5);
    let starts = write_lines(&input, &lines);
    let file = input.to_str().unwrap();
    let topic = unique_name("kco-e2e-born");
    let reader = TopicReader::start(&a, &topic, dir.path());
    let name = unique_name("kco-e2e-born");

    {
        let _first = a.create_in_state(&name, file_source_config(&input, &topic), "STOPPED");
        let status = a.wait_stopped(&name);
        assert_eq!(status["tasks"], json!([]));
        let r = a.patch_offsets(
            &name,
            json!([{ "partition": { "filename": file }, "offset": { "position": starts[3] } }]),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        a.resume(&name);
        assert_eq!(reader.wait_lines(2), &lines[3..]);
        let end = starts[4] as i64 + lines[4].len() as i64 + 1;
        a.wait_offsets(&name, "end of file", |o| {
            source_position(o, &input) == Some(end)
        });
    } // deleted here

    a.wait_gone(&name);
    let _second = a.create_in_state(&name, file_source_config(&input, &topic), "STOPPED");
    a.wait_stopped(&name);
    let end = std::fs::metadata(&input).unwrap().len() as i64;
    assert_eq!(
        source_position(&a.offsets(&name), &input),
        Some(end),
        "the new connector inherits the deleted one's offsets"
    );
    // Stopped per its task configs even if /status still shows a stale task: PATCH works.
    let r = a.patch_offsets(
        &name,
        json!([{ "partition": { "filename": file }, "offset": { "position": 0 } }]),
    );
    assert_eq!(r.status, 200, "{}", r.body);
}

/// No service of the test bed holds the lock that `local-connect.sh` takes on its state
/// directory: one that did (cluster s's worker and the gateway once inherited it from
/// `up --secure`) made every later `local-connect.sh up` wait 600 s and fail.
#[test]
fn no_service_of_the_test_bed_holds_its_lock() {
    let Some(_tb) = testbed() else { return };
    let state = crate::harness::testbed_dir();
    let lock = state.join(".lock");
    let mut pid_files: Vec<std::path::PathBuf> = std::fs::read_dir(state.join("run"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    pid_files.push(state.join("gateway/nginx.pid"));
    pid_files.push(state.join("msk-connect/standin.pid"));
    let mut seen = 0;
    for f in pid_files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "pid"))
    {
        let Ok(pid) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", pid.trim())) else {
            continue;
        };
        seen += 1;
        for fd in fds.flatten() {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            assert_ne!(
                target,
                lock,
                "{} (pid {}) holds the lock",
                f.display(),
                pid.trim()
            );
        }
    }
    assert!(
        seen >= 3,
        "only {seen} live services found under {}",
        state.display()
    );
}

/// `local-connect.sh status` lists the DR region (broker west, worker w1) of the running bed
/// beside the rest, with their addresses. Read-only: it runs `status` only.
#[test]
fn status_lists_the_dr_region() {
    let Some(_tb) = testbed() else { return };
    if !crate::harness::testbed_dir().join("dr").is_dir() {
        crate::harness::skip_unless_required(
            "KCO_E2E_DR",
            "the DR region is not up; run scripts/dr-connect.sh up",
        );
        return;
    }
    let out = crate::harness::local_connect(&["status"]);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name}:\n{out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let west = row("west");
    assert_eq!(west[2], "running", "{out}");
    assert!(west[3].contains(':'), "{out}");
    assert!(out.contains("(SASL "), "{out}");
    for worker in ["w1", "e1"] {
        let w = row(worker);
        assert_eq!(w[2], "running", "{out}");
        assert!(w[3].starts_with("http://"), "{out}");
    }
}

/// A DR region in a state directory of its own (no real service: two stand-in processes
/// named as the scripts name theirs): `status` lists it, `down` stops it with a line saying
/// so, and `status` no longer lists it. The shared bed is not touched.
#[test]
fn down_stops_the_dr_region_with_a_line_and_status_follows() {
    let state = temp_dir();
    let dir = state.path();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    std::fs::create_dir_all(dir.join("dr")).unwrap();
    let mut procs = Vec::new();
    for name in ["west", "w1", "e1"] {
        // Matched by `live_pid` through `-Dkco.testbed.process=NAME -Dkco.testbed.dir=STATE`.
        let child = std::process::Command::new("sh")
            .args(["-c", "while :; do sleep 1; done"])
            .arg(format!("-Dkco.testbed.process={name}"))
            .arg(format!("-Dkco.testbed.dir={}", dir.display()))
            .spawn()
            .unwrap();
        let pid = child.id();
        std::fs::write(dir.join(format!("run/{name}.pid")), pid.to_string()).unwrap();
        // Reaped as soon as it ends: a zombie would still answer `kill -0`, and the scripts
        // would wait for it forever.
        let mut child = child;
        procs.push((pid, std::thread::spawn(move || child.wait().unwrap())));
    }
    let script = |args: &[&str]| {
        let out = std::process::Command::new(
            crate::harness::repo_root().join(format!("scripts/{}", args[0])),
        )
        .args(&args[1..])
        .env("KCO_TESTBED_DIR", dir)
        // Ports nothing listens on: the shared bed's are never asked.
        .env("KCO_DR_CONNECT_PORT", "1")
        .env("KCO_DR_BACK_PORT", "1")
        .env("KCO_TESTBED_A1_PORT", "1")
        .env("KCO_TESTBED_A2_PORT", "1")
        .env("KCO_TESTBED_B_PORT", "1")
        .env("KCO_TESTBED_S_PORT", "1")
        .output()
        .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, _) = script(&["local-connect.sh", "status"]);
    assert_eq!(code, Some(1), "the rest is down: {out}");
    let pid = |i: usize| procs[i].0.to_string();
    assert!(
        out.lines()
            .any(|l| l.starts_with("west ") && l.contains(&pid(0)) && l.contains("running")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("w1 ") && l.contains(&pid(1)) && l.contains("starting")),
        "w1 does not serve on port 1: {out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("e1 ") && l.contains(&pid(2)) && l.contains("starting")),
        "e1 does not serve on port 1: {out}"
    );
    let (code, _, err) = script(&["local-connect.sh", "down"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("dr-connect: DR region west stopped (broker west, workers w1 and e1)"),
        "{err}"
    );
    for (_, ended) in procs {
        let status = ended.join().unwrap();
        assert!(!status.success(), "stopped by a signal: {status}");
    }
    let (_, out, _) = script(&["local-connect.sh", "status"]);
    assert!(
        !out.contains("west ") && !out.contains("w1 ") && !out.contains("e1 "),
        "{out}"
    );
    assert!(out.contains("test bed is down"), "{out}");
    // Nothing to stop: no line.
    let (code, _, err) = script(&["dr-connect.sh", "down"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("stopped"), "{err}");
}

/// `dr-connect.sh stop-region east` in a state directory of its own (stand-in processes
/// named as the scripts name theirs): it stops the broker, east's workers and e1, leaves
/// region west running and east's data in place (`up` would wipe it), and writes down which
/// workers `start-region east` starts again. Any other region is refused. The shared bed is
/// not touched.
#[test]
fn stop_region_east_stops_its_processes_and_keeps_its_data() {
    let state = temp_dir();
    let dir = state.path();
    for sub in ["run", "dr", "data/kafka"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("data/kafka/meta.properties"), "kept\n").unwrap();
    let mut procs = Vec::new();
    for name in ["broker", "a1", "a2", "e1", "west", "w1"] {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do sleep 1; done"])
            .arg(format!("-Dkco.testbed.process={name}"))
            .arg(format!("-Dkco.testbed.dir={}", dir.display()))
            .spawn()
            .unwrap();
        std::fs::write(dir.join(format!("run/{name}.pid")), child.id().to_string()).unwrap();
        let pid = child.id();
        procs.push((name, pid, std::thread::spawn(move || child.wait().unwrap())));
    }
    let script = |args: &[&str]| {
        let out =
            std::process::Command::new(crate::harness::repo_root().join("scripts/dr-connect.sh"))
                .args(args)
                .env("KCO_TESTBED_DIR", dir)
                .env("KCO_DR_CONNECT_PORT", "1")
                .env("KCO_DR_BACK_PORT", "1")
                .output()
                .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, err) = script(&["stop-region", "west"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("only region east"), "{err}");
    let (code, err) = script(&["stop-region", "east"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("region east stopped (broker, workers a1 a2 e1)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("run/east-stopped")).unwrap(),
        "a1\na2\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("data/kafka/meta.properties")).unwrap(),
        "kept\n"
    );
    let mut west = Vec::new();
    for (name, pid, ended) in procs {
        if matches!(name, "west" | "w1") {
            assert!(
                std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "{name} runs on"
            );
            west.push((pid, ended));
        } else {
            let status = ended.join().unwrap();
            assert!(!status.success(), "{name} stopped by a signal: {status}");
        }
    }
    for (pid, ended) in west {
        std::process::Command::new("kill")
            .arg(pid.to_string())
            .status()
            .unwrap();
        ended.join().unwrap();
    }
}
