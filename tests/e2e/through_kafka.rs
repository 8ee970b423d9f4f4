//! Cluster l (`scripts/legacy-connect.sh up`): a real Kafka Connect 3.4 worker, which has no
//! offsets REST endpoints, on the test bed's broker. With `kafka:` and the workers' offsets
//! topic in kco.yaml, kco reads its offsets through Kafka: a snapshot holds what Connect
//! committed (a FileStream source's position is its file's byte count, a FileStream sink's
//! offset the records it wrote; the files say `offsetsFrom: kafka`), a diff of it is in sync, an edited file is reported, and a
//! change is refused with nothing changed.
//!
//! Skipped when the legacy worker is not there, unless `KCO_E2E_LEGACY=required`.
//! `KCO_E2E_LEGACY_URL` (default http://127.0.0.1:8087) and `KCO_E2E_L_DIR` (default
//! `<test bed dir>/legacy`) point elsewhere.

use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    file_source_config, legacy, numbered, testbed, unique_name, wait_for, write_lines, FilePipe,
};
use crate::kco_steps::edit_and_fmt;
use crate::support::env::TestEnv;

/// The offsets `kco snapshot NAME` writes (into a scratch directory), as JSON.
fn snapshot_of(env: &TestEnv, name: &str) -> Vec<Value> {
    let (code, out, err) = env.kco(&["snapshot", name, "--dir", "scratch"]).parts();
    assert_eq!(code, 0, "kco snapshot {name}: {out}{err}");
    let file = env.path().join(format!("scratch/l/{name}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    v["offsets"].as_array().cloned().unwrap_or_default()
}

/// Waits until `kco snapshot NAME` holds one offset, its `key` at `want` (read through
/// Kafka); those offsets.
fn wait_snapshot_at(env: &TestEnv, name: &str, key: &str, want: i64) -> Vec<Value> {
    wait_for(
        &format!("{name} at {key} {want} through Kafka"),
        Duration::from_secs(60),
        || {
            let o = snapshot_of(env, name);
            match o.first().map(|e| e["offset"][key].clone()) {
                Some(at) if at == want && o.len() == 1 => Ok(o),
                _ => Err(format!("{o:?}")),
            }
        },
    )
}

#[test]
fn a_worker_without_the_offsets_endpoints_is_snapshotted_and_diffed_through_kafka() {
    let Some(_tb) = testbed() else { return };
    let Some((l, env)) = legacy() else { return };
    let version = l.version();
    assert!(version < (3, 5, 0), "a worker before 3.5: {version:?}");
    let version = format!("{}.{}.{}", version.0, version.1, version.2);

    let p = FilePipe::start(&l, env.path(), "kco-e2e-legacy", &numbered("old", 0..9));
    let (input, out, topic) = (p.input.clone(), p.out.clone(), p.topic.clone());
    let (src, sink) = (p.src.clone(), p.sink.clone());
    let len = p.input_len();
    l.wait_running(&src);
    l.wait_running(&sink);
    let reply = crate::harness::get(&format!("{}/connectors/{src}/offsets", l.base));
    assert_eq!(reply.status, 404, "no offsets endpoint: {}", reply.body);

    // What Connect committed, read through Kafka: the file's byte count, the records written.
    let source = wait_snapshot_at(&env, &src, "position", len);
    assert_eq!(source[0]["partition"]["filename"], input.to_str().unwrap());
    let sunk = wait_snapshot_at(&env, &sink, "kafka_offset", 9);
    assert_eq!(sunk[0]["partition"]["kafka_topic"], topic.as_str());
    assert_eq!(sunk[0]["partition"]["kafka_partition"], 0);
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.lines().count(), 9, "{written}");

    // The files, written and diffed: in sync.
    let (code, o, e) = env.kco(&["snapshot", &src, &sink]).parts();
    assert_eq!(code, 0, "{o}{e}");
    let (code, o, e) = env.kco(&["diff", &src, &sink]).parts();
    assert_eq!(code, 0, "kco diff: {o}{e}");
    assert!(o.contains("2 in sync"), "{o}{e}");

    // The file says where it came from: the worker's release, and Kafka.
    let from =
        std::fs::read_to_string(env.path().join(format!("snapshots/l/{sink}.yaml"))).unwrap();
    assert!(from.contains("\n  offsetsFrom: kafka\n"), "{from}");
    let file = env.path().join(format!("snapshots/l/{src}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(&format!("connectVersion: \"{version}\"")),
        "{text}"
    );

    // A rewind of the sink in its file is a change: diffed, and refused as an apply, with
    // nothing changed.
    let sink_file = env.path().join(format!("snapshots/l/{sink}.yaml"));
    edit_and_fmt(&env, &sink_file, "kafka_offset: 9", "kafka_offset: 4");
    let (code, o, e) = env.kco(&["diff", &sink]).parts();
    assert_eq!(code, 0, "the live sink ahead of its file: {o}{e}");
    assert!(o.contains("live ahead of file by 5 records"), "{o}{e}");
    let (code, o, e) = env
        .kco(&["apply", sink_file.to_str().unwrap(), "--yes"])
        .parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains(&format!("`{sink}` is RUNNING")) && e.contains("nothing was written"),
        "{e}"
    );
    assert_eq!(l.state(&sink), "RUNNING", "never stopped");
    assert_eq!(snapshot_of(&env, &sink), sunk, "nothing written");
}

/// `kco ls --orphaned -o json`'s sink entry for `name`: its offset of partition 0.
fn left_sink_offset(env: &TestEnv, name: &str) -> Option<i64> {
    let (code, out, err) = env.kco(&["ls", "--orphaned", "-o", "json"]).parts();
    assert_eq!(code, 0, "kco ls --orphaned: {out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let sink = v["sinks"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)?
        .clone();
    sink["partitions"][0]["offset"]["kafka_offset"].as_i64()
}

/// The offsets topic's partitions that hold records of connector `name`.
fn partitions_of(bootstrap: &str, name: &str) -> Vec<i32> {
    let opts = kco::kafka::KafkaOptions {
        bootstrap: vec![bootstrap.to_string()],
        sasl: None,
        tls: None,
        timeout: Duration::from_secs(15),
    };
    let mut found = Vec::new();
    kco::kafka::scan_topic(&opts, "kco-l-offsets", &mut |p, r| {
        if let Some((n, _, _)) = kco::kafka::connect_offsets::decode(r.key, r.value) {
            if n == name {
                found.push(p);
            }
        }
    })
    .unwrap();
    found
}

/// The MSK Connect way, on a worker without the offsets endpoints: delete the connector,
/// apply its file (written through Kafka), create it again. A sink rewound by 5 records
/// re-delivers exactly those 5; a source applied under a new name starts at the file's
/// position, its key written where the worker's own commits then go. The undo of the apply
/// puts back what the deleted sink left.
#[test]
fn a_connector_applied_while_deleted_then_created_again_starts_from_the_file() {
    let Some(tb) = testbed() else { return };
    let Some((l, env)) = legacy() else { return };
    let lines = numbered("rec", 0..9);
    let p = FilePipe::start(&l, env.path(), "kco-e2e-legacy-apply", &lines);
    let (input, out) = (p.input.clone(), p.out.clone());
    let (src, sink) = (p.src.clone(), p.sink.clone());
    let len = p.input_len();
    wait_for(
        "the file read and its 9 records written",
        Duration::from_secs(60),
        || {
            let read = snapshot_of(&env, &src);
            let written = snapshot_of(&env, &sink);
            match (read.first(), written.first()) {
                (Some(r), Some(w))
                    if r["offset"]["position"] == len && w["offset"]["kafka_offset"] == 9 =>
                {
                    Ok(())
                }
                other => Err(format!("{other:?}")),
            }
        },
    );
    let (code, o, e) = env.kco(&["snapshot", &src, &sink, "--with-config"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    let sink_file = env.path().join(format!("snapshots/l/{sink}.yaml"));
    edit_and_fmt(&env, &sink_file, "kafka_offset: 9", "kafka_offset: 4");
    let sink_path = sink_file.to_str().unwrap();

    // Deleted, the sink's group keeps offset 9; the apply writes 4 there.
    drop(p.sink_guard);
    l.wait_gone(&sink);
    assert_eq!(left_sink_offset(&env, &sink), Some(9));
    let (code, o, e) = env.kco(&["apply", sink_path, "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains("no connector of that name"), "{o}");
    assert!(o.contains("9 -> 4"), "{o}");
    assert_eq!(left_sink_offset(&env, &sink), Some(4), "written, read back");

    // Its undo puts 9 back; applied again, 4.
    let backup = e
        .lines()
        .find_map(|l| l.split("(undo: kco undo ").nth(1))
        .map(|d| d.trim_end_matches(')').to_string())
        .unwrap_or_else(|| panic!("no backup named: {e}"));
    let (code, o, e) = env.kco(&["undo", &backup, "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    // The plan names where it writes: the sink's group, not the offsets topic.
    assert!(
        o.contains(&format!("(consumer group `connect-{sink}`):")),
        "{o}"
    );
    assert_eq!(left_sink_offset(&env, &sink), Some(9), "undone");
    let (code, o, e) = env.kco(&["apply", sink_path, "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");

    // Created again (from the file's config): exactly the 5 rewound records, once more.
    let (code, o, e) = env.kco(&["apply", sink_path, "--create", "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains(&format!("Created `{sink}`")), "{o}");
    let _sink_again = l.adopt(&sink);
    l.wait_running(&sink);
    let again = wait_for("14 lines", Duration::from_secs(60), || {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let got: Vec<String> = text.lines().map(str::to_string).collect();
        if got.len() >= 14 {
            Ok(got)
        } else {
            Err(format!("{got:?}"))
        }
    });
    std::thread::sleep(Duration::from_secs(3));
    let settled: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(settled.len(), 14, "no record a sixth time: {settled:?}");
    assert_eq!(&again[9..14], &lines[4..9], "records 5 to 9, once more");

    // A source under a new name: a key the topic never had, at the 4th line's end.
    drop(p.src_guard);
    l.wait_gone(&src);
    let src_file = env.path().join(format!("snapshots/l/{src}.yaml"));
    let at = lines[..4].iter().map(|l| l.len() as i64 + 1).sum::<i64>();
    edit_and_fmt(
        &env,
        &src_file,
        &format!("position: {len}"),
        &format!("position: {at}"),
    );
    let renamed = unique_name("kco-e2e-legacy-asrc2");
    let (code, o, e) = env
        .kco(&[
            "apply",
            src_file.to_str().unwrap(),
            "--as",
            &renamed,
            "--create",
            "--yes",
        ])
        .parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains("(the topic's in one transaction)"), "{o}");
    let _renamed = l.adopt(&renamed);
    l.wait_running(&renamed);
    // It read lines 5 to 9 again, and the sink wrote them: 19 lines.
    wait_for("19 lines", Duration::from_secs(60), || {
        let n = std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .count();
        if n >= 19 {
            Ok(())
        } else {
            Err(format!("{n} lines"))
        }
    });
    // Its own commits land in the partition kco wrote its key to: one partition holds them.
    crate::harness::append_lines(&input, &numbered("more", 0..2));
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    wait_for(
        &format!("{renamed} at {len}"),
        Duration::from_secs(60),
        || match snapshot_of(&env, &renamed).first() {
            Some(e) if e["offset"]["position"] == len => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    let partitions = partitions_of(&tb.kafka(), &renamed);
    assert!(
        partitions.len() >= 2,
        "kco's record and the worker's: {partitions:?}"
    );
    assert!(
        partitions.iter().all(|p| *p == partitions[0]),
        "every record of the key in one partition: {partitions:?}"
    );
}

/// A source with an offsets topic of its own (`offsets.storage.topic`, KIP-618, from Kafka
/// 3.3): its offsets are read from that topic, over the workers'; an apply to it is refused
/// with nothing written (kco writes the workers' topic only).
#[test]
fn a_source_with_its_own_offsets_topic_is_read_from_it_and_not_written() {
    let Some(_tb) = testbed() else { return };
    let Some((l, env)) = legacy() else { return };
    let input = env.path().join("in.txt");
    write_lines(&input, &numbered("own", 0..5));
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let src = unique_name("kco-e2e-legacy-own");
    let mut config = file_source_config(&input, &unique_name("kco-e2e-legacy-own"));
    let own = format!("{src}-offsets");
    config["offsets.storage.topic"] = Value::String(own.clone());
    let guard = l.create(&src, config);
    l.wait_running(&src);
    let read = wait_for(
        &format!("{src} at {len} through Kafka"),
        Duration::from_secs(60),
        || match snapshot_of(&env, &src).first() {
            Some(e) if e["offset"]["position"] == len => Ok(e.clone()),
            other => Err(format!("{other:?}")),
        },
    );
    assert_eq!(read["partition"]["filename"], input.to_str().unwrap());

    let (code, o, e) = env.kco(&["snapshot", &src, "--with-config"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    drop(guard);
    l.wait_gone(&src);
    let file = env.path().join(format!("snapshots/l/{src}.yaml"));
    edit_and_fmt(&env, &file, &format!("position: {len}"), "position: 0");
    let (code, o, e) = env
        .kco(&["apply", file.to_str().unwrap(), "--yes", "-o", "json"])
        .parts();
    assert_eq!(code, 1, "{o}{e}");
    let v: Value = serde_json::from_str(&o).unwrap_or_else(|_| panic!("{o}{e}"));
    assert_eq!(v["error"]["kind"], "not_writable", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("offsets.storage.topic={own}")),
        "{v}"
    );
}
