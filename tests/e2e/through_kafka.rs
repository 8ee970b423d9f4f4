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
    env_url, file_sink_config, file_source_config, numbered, service_dir, service_file, testbed,
    unique_name, wait_for, write_lines, Connect,
};
use crate::support::env::TestEnv;

/// The legacy worker and kco on cluster l (its kco.yaml as the script wrote it).
fn legacy() -> Option<(Connect, TestEnv)> {
    let dir = service_dir("KCO_E2E_L_DIR", "legacy");
    let config = service_file(&dir, "kco.yaml", "KCO_E2E_LEGACY", "legacy-connect.sh")?;
    let env = TestEnv::new().args(&["--cluster", "l"]);
    env.config(config);
    Some((
        Connect::new(&env_url("KCO_E2E_LEGACY_URL", "http://127.0.0.1:8087")),
        env,
    ))
}

/// The offsets `kco snapshot NAME` writes (into a scratch directory), as JSON.
fn snapshot_of(env: &TestEnv, name: &str) -> Vec<Value> {
    let (code, out, err) = env.kco(&["snapshot", name, "--dir", "scratch"]).parts();
    assert_eq!(code, 0, "kco snapshot {name}: {out}{err}");
    let file = env.path().join(format!("scratch/l/{name}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    v["offsets"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_worker_without_the_offsets_endpoints_is_snapshotted_and_diffed_through_kafka() {
    let Some(_tb) = testbed() else { return };
    let Some((l, env)) = legacy() else { return };
    let version = l.version();
    assert!(version < (3, 5, 0), "a worker before 3.5: {version:?}");
    let version = format!("{}.{}.{}", version.0, version.1, version.2);

    let input = env.path().join("in.txt");
    write_lines(&input, &numbered("old", 0..9));
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let topic = unique_name("kco-e2e-legacy");
    let src = unique_name("kco-e2e-legacy-src");
    let sink = unique_name("kco-e2e-legacy-sink");
    let _src = l.create(&src, file_source_config(&input, &topic));
    let out = env.path().join("out.txt");
    let _sink = l.create(&sink, file_sink_config(&out, &topic));
    l.wait_running(&src);
    l.wait_running(&sink);
    let reply = crate::harness::get(&format!("{}/connectors/{src}/offsets", l.base));
    assert_eq!(reply.status, 404, "no offsets endpoint: {}", reply.body);

    // What Connect committed, read through Kafka: the file's byte count, the records written.
    let source = wait_for(
        &format!("{src} at position {len} through Kafka"),
        Duration::from_secs(60),
        || {
            let o = snapshot_of(&env, &src);
            match o.first().map(|e| e["offset"]["position"].clone()) {
                Some(p) if p == len && o.len() == 1 => Ok(o),
                _ => Err(format!("{o:?}")),
            }
        },
    );
    assert_eq!(source[0]["partition"]["filename"], input.to_str().unwrap());
    let sunk = wait_for(
        &format!("{sink} at offset 9 through Kafka"),
        Duration::from_secs(60),
        || {
            let o = snapshot_of(&env, &sink);
            match o.first().map(|e| e["offset"]["kafka_offset"].clone()) {
                Some(n) if n == 9 && o.len() == 1 => Ok(o),
                _ => Err(format!("{o:?}")),
            }
        },
    );
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
    let rewound = std::fs::read_to_string(&sink_file)
        .unwrap()
        .replace("kafka_offset: 9", "kafka_offset: 4");
    std::fs::write(&sink_file, rewound).unwrap();
    let (code, o, e) = env.kco(&["fmt", sink_file.to_str().unwrap()]).parts();
    assert_eq!(code, 0, "{o}{e}");
    let (code, o, e) = env.kco(&["diff", &sink]).parts();
    assert_eq!(code, 0, "the live sink ahead of its file: {o}{e}");
    assert!(o.contains("live ahead of file by 5 records"), "{o}{e}");
    let (code, o, e) = env
        .kco(&["apply", sink_file.to_str().unwrap(), "--yes"])
        .parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(e.contains("3.4") && e.contains("through Kafka"), "{e}");
    assert_eq!(l.state(&sink), "RUNNING", "never stopped");
    assert_eq!(snapshot_of(&env, &sink), sunk, "nothing written");
}
