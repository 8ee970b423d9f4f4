//! A Connect cluster without a REST API (AWS MSK Connect's case), stood in for by cluster l
//! (`scripts/legacy-connect.sh up`: a Kafka Connect 3.4 worker on the test bed's broker,
//! internal topics kco-l-configs, kco-l-offsets and kco-l-status). The same connectors are
//! snapshotted twice: through the worker's REST API (cluster l as the script configures it,
//! offsets through Kafka), and with a kco.yaml whose cluster l has no `urls`, only `kafka:`
//! and the three topics, so that kco reads the connectors, configs and states from the config
//! and status topics. The two snapshots hold the same offsets, types, classes and states;
//! `kco ls` and `kco diff` work without the REST API, a missing topic is a `kafka` error
//! naming it; `kco apply` of a paused connector is refused with nothing changed, and once it
//! is deleted its offsets are applied from the topics alone; `kco reset --orphaned` is
//! refused. On the test bed's own
//! release (cluster a, 3.6 or newer), STOPPED connectors (`state.v2` in the config topic),
//! one created STOPPED among them (a sink whose consumer group never existed), are listed
//! and snapshotted as the REST API shows them. And the MSK Connect flow of
//! docs/through-kafka.md, with the offsets topic pinned (`offset.storage.topic` of the worker
//! configuration: cluster a's `kco-a-offsets`), on cluster a read from its topics, the test
//! creating and deleting the connector through the REST API as MSK's console would: a dry run
//! while it runs shows the rewind's plan and refuses it, it is deleted, `reset NAME` points at
//! what deletes a deleted name's offsets, the rewound file is applied through Kafka, and the
//! connector created again under the same name re-delivers exactly the rewound lines.
//!
//! Skipped when the legacy worker is not there, unless `KCO_E2E_LEGACY=required`.
//! `KCO_E2E_LEGACY_URL` (default http://127.0.0.1:8087) and `KCO_E2E_L_DIR` (default
//! `<test bed dir>/legacy`) point elsewhere.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    file_sink_config, file_source_config, legacy, numbered, temp_dir, testbed, unique_name,
    wait_for, write_lines, FilePipe, TopicReader,
};
use crate::kco_steps::edit_and_fmt;
use crate::support::env::TestEnv;

/// kco on test bed cluster `c` (`l`, `a`) without a REST API: `kafka:` and its workers' three
/// topics, `kco-<c>-offsets`, `kco-<c>-configs` and `status`.
pub(crate) fn without_rest(kafka: &str, c: &str, status: &str) -> TestEnv {
    let env = TestEnv::new().args(&["--cluster", c]);
    env.config(format!(
        "clusters:\n  {c}:\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: kco-{c}-offsets, configs: kco-{c}-configs, status: {status}}}\n"
    ));
    env
}

/// The file `kco snapshot` wrote for `name` of cluster l under `dir`, as JSON.
fn file(env: &TestEnv, dir: &str, name: &str) -> Value {
    file_of(env, dir, "l", name)
}

/// The file `kco snapshot` wrote for `name` of cluster `c` under `dir`, as JSON.
fn file_of(env: &TestEnv, dir: &str, c: &str, name: &str) -> Value {
    let path = env.path().join(format!("{dir}/{c}/{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `kco snapshot NAMES --dir DIR`, asserted to succeed; its stderr.
fn snapshot(env: &TestEnv, dir: &str, names: &[&str]) -> String {
    let mut args = vec!["snapshot"];
    args.extend(names);
    args.extend(["--dir", dir]);
    let (code, out, err) = env.kco(&args).parts();
    assert_eq!(code, 0, "kco {args:?}: {out}{err}");
    err
}

/// `kco ls -o json`'s entries of `names`, without what depends on the snapshot files.
fn listed(env: &TestEnv, names: &[&str]) -> Vec<Value> {
    let (code, out, err) = env.kco(&["ls", "-o", "json"]).parts();
    assert_eq!(code, 0, "kco ls: {out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let mut entries: Vec<Value> = v["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| names.contains(&c["name"].as_str().unwrap()))
        .cloned()
        .collect();
    for e in &mut entries {
        let e = e.as_object_mut().unwrap();
        e.remove("file");
        e.remove("status");
    }
    entries
}

/// What `kco ls` says of `names` from the topics, once it agrees with what it says through
/// the REST API. A rebalance (a connector stopped, a task moved) writes UNASSIGNED and then
/// RUNNING again, so two reads a moment apart can differ while it lasts; a disagreement that
/// outlasts a minute is kco's.
fn listed_alike(topics: &TestEnv, rest: &TestEnv, names: &[&str]) -> Vec<Value> {
    wait_for(
        "kco ls from the topics to agree with kco ls through the REST API",
        Duration::from_secs(60),
        || {
            let t = listed(topics, names);
            let r = listed(rest, names);
            if t == r {
                Ok(t)
            } else {
                Err(format!("from the topics {t:?}, through the REST API {r:?}"))
            }
        },
    )
}

fn exists(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some())
}

#[test]
fn a_cluster_without_a_rest_api_is_read_from_its_topics_as_its_rest_api_shows_it() {
    let Some(tb) = testbed() else { return };
    let Some((l, rest)) = legacy() else { return };
    let kafka = tb.kafka();

    let p = FilePipe::start(&l, rest.path(), "kco-e2e-msk", &numbered("msk", 0..9));
    let (src, sink) = (p.src.clone(), p.sink.clone());
    let len = p.input_len();
    l.wait_running(&src);
    l.wait_running(&sink);
    // Both have committed what they did (read through Kafka), then the sink is paused: the
    // states compared are RUNNING and PAUSED.
    wait_for(
        &format!("{src} at {len} and {sink} at 9"),
        Duration::from_secs(60),
        || {
            snapshot(&rest, "scratch", &[&src, &sink]);
            let at =
                |n: &str, k: &str| file(&rest, "scratch", n)["offsets"][0]["offset"][k].clone();
            match (at(&src, "position"), at(&sink, "kafka_offset")) {
                (p, o) if p == len && o == 9 => Ok(()),
                got => Err(format!("{got:?}")),
            }
        },
    );
    l.pause(&sink);
    let names = [src.as_str(), sink.as_str()];

    // The same connectors, read both ways.
    let msk = without_rest(&kafka, "l", "kco-l-status");
    snapshot(&rest, "from-rest", &names);
    let said = snapshot(&msk, "from-topics", &names);
    assert!(
        said.contains(&format!("Snapshotting cluster `l` (kafka://{kafka})")),
        "{said}"
    );
    for name in names {
        let mut a = file(&rest, "from-rest", name);
        let mut b = file(&msk, "from-topics", name);
        // Only what names where they were read from differs: the worker's release from its
        // `GET /`, against the service's name where there is none; and when.
        assert_eq!(a["metadata"]["connectVersion"], "3.4.1", "{a}");
        assert_eq!(
            b["metadata"]["connectVersion"], "Kafka Connect internal topics",
            "{b}"
        );
        for f in [&mut a, &mut b] {
            let m = f["metadata"].as_object_mut().unwrap();
            m.remove("connectVersion");
            m.remove("capturedAt");
        }
        assert_eq!(a, b, "{name}: through the REST API, then from the topics");
        assert_eq!(b["metadata"]["offsetsFrom"], "kafka");
    }
    let sunk = file(&msk, "from-topics", &sink);
    assert_eq!(sunk["metadata"]["state"], "PAUSED");
    assert_eq!(sunk["metadata"]["type"], "sink");
    assert_eq!(
        file(&msk, "from-topics", &src)["metadata"]["connectorClass"],
        "org.apache.kafka.connect.file.FileStreamSourceConnector"
    );

    // kco ls: the same types, states, tasks and partitions.
    let from_topics = listed_alike(&msk, &rest, &names);
    assert_eq!(from_topics.len(), 2, "{from_topics:?}");

    // kco diff of the files just written: in sync.
    snapshot(&msk, "snapshots", &names);
    let (code, o, e) = msk.kco(&["diff", &src, &sink]).parts();
    assert_eq!(code, 0, "kco diff: {o}{e}");
    assert!(o.contains("2 in sync"), "{o}{e}");

    // kco apply of the paused sink is refused, with nothing changed: it stays PAUSED at 9.
    let sink_file = msk.path().join(format!("snapshots/l/{sink}.yaml"));
    edit_and_fmt(&msk, &sink_file, "kafka_offset: 9", "kafka_offset: 4");
    let sink_path = sink_file.to_str().unwrap();
    let (code, o, e) = msk.kco(&["apply", sink_path, "--yes"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains(&format!("`{sink}` is PAUSED")) && e.contains("nothing was written"),
        "{e}"
    );
    // Deleted and created again with the service's own tools: it has no REST API for kco.
    assert!(
        e.contains("delete it with the service's own console") && !e.contains("DELETE /connectors"),
        "{e}"
    );
    assert!(!exists(&msk.path().join(".kco/backups")), "no backup taken");
    assert_eq!(l.state(&sink), "PAUSED", "never resumed or stopped");
    snapshot(&rest, "after", &[&sink]);
    assert_eq!(file(&rest, "after", &sink)["offsets"], sunk["offsets"]);
    // Nor is it created: the cluster has no API to create connectors with.
    let (code, o, e) = msk.kco(&["apply", sink_path, "--create", "--yes"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains(
            "without an API to change its connectors through: creating connectors is refused"
        ),
        "{e}"
    );

    // The MSK Connect way: the connector deleted (with the service's own API), its offsets
    // applied from the topics alone.
    drop(p.sink_guard);
    l.wait_gone(&sink);
    let (code, o, applied) = msk.kco(&["apply", sink_path, "--yes"]).parts();
    assert_eq!(code, 0, "{o}{applied}");
    assert!(o.contains("9 -> 4"), "{o}");
    let (code, o, e) = rest.kco(&["ls", "--orphaned", "-o", "json"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    let v: Value = serde_json::from_str(&o).unwrap();
    let left = crate::support::json::named(&v, "sinks", &sink);
    assert_eq!(left["partitions"][0]["offset"]["kafka_offset"], 4, "{left}");
    // Its undo goes to the same Kafka, without a word about another endpoint, and puts 9 back.
    let backup = applied
        .split("(undo: kco undo ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no backup named: {applied}"));
    let (code, o, e) = msk.kco(&["undo", backup, "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains("4 -> 9"), "{o}{e}");
    assert!(!e.contains("The backup was taken through"), "{e}");
    let (_, o, _) = rest.kco(&["ls", "--orphaned", "-o", "json"]).parts();
    let v: Value = serde_json::from_str(&o).unwrap();
    let left = crate::support::json::named(&v, "sinks", &sink);
    assert_eq!(left["partitions"][0]["offset"]["kafka_offset"], 9, "{left}");

    // Nor does it delete offsets left in the offsets topic (which other Connect clusters may
    // share).
    let (code, o, e) = msk
        .kco(&["reset", "--orphaned", &format!("{src}-gone"), "--yes"])
        .parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains("cluster `l` is read from Kafka Connect internal topics")
            && e.contains("deleting offsets left in its offsets topic is refused")
            && e.contains("may be shared with other Connect clusters"),
        "{e}"
    );

    // A topic the cluster does not have: a `kafka` error naming it and the broker.
    let wrong = without_rest(&kafka, "l", "kco-l-no-such-status");
    let (code, o, e) = wrong.kco(&["ls", "-o", "json"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    let v: Value = serde_json::from_str(&o).unwrap_or_else(|err| panic!("{err}: {o}{e}"));
    assert_eq!(v["error"]["kind"], "kafka", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "topic `kco-l-no-such-status` does not exist on the Kafka cluster at {kafka}"
        )),
        "{message}"
    );
}

#[test]
fn stopped_connectors_of_a_newer_worker_are_read_from_its_topics_as_its_rest_api_shows_them() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let input = tempfile::NamedTempFile::new().unwrap();
    write_lines(input.path(), &numbered("msk-a", 0..5));
    let topic = unique_name("kco-e2e-msk-a");
    let running = unique_name("kco-e2e-msk-a-src");
    let stopped = unique_name("kco-e2e-msk-a-stopped");
    let created = unique_name("kco-e2e-msk-a-sink");
    let _running = a.create(&running, file_source_config(input.path(), &topic));
    let _stopped = a.create(&stopped, file_source_config(input.path(), &topic));
    let out = tempfile::NamedTempFile::new().unwrap();
    let _created = a.create_in_state(&created, file_sink_config(out.path(), &topic), "STOPPED");
    a.wait_running(&running);
    a.wait_running(&stopped);
    wait_for(
        &format!("{stopped}'s offset"),
        Duration::from_secs(60),
        || match a.offsets(&stopped).as_slice() {
            [one] if !one["offset"].is_null() => Ok(()),
            o => Err(format!("{o:?}")),
        },
    );
    a.stop(&stopped);
    // Stopping one connector rebalances the group, which may move the other's task.
    a.wait_running(&running);
    let names = [running.as_str(), stopped.as_str(), created.as_str()];

    let rest = TestEnv::new().args(&["--cluster", "a"]);
    rest.config(format!(
        "clusters:\n  a:\n    urls: [{}]\n",
        tb.a_urls.join(", ")
    ));
    let msk = without_rest(&tb.kafka(), "a", "kco-a-status");
    let from_topics = listed_alike(&msk, &rest, &names);
    let states: Vec<&str> = from_topics
        .iter()
        .map(|e| e["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["STOPPED", "RUNNING", "STOPPED"], "{from_topics:?}");

    snapshot(&rest, "from-rest", &names);
    snapshot(&msk, "from-topics", &names);
    for name in names {
        let mut r = file_of(&rest, "from-rest", "a", name);
        let mut t = file_of(&msk, "from-topics", "a", name);
        assert_eq!(t["metadata"]["offsetsFrom"], "kafka", "{t}");
        // Where and when they were read: the worker's release (and the REST API's offsets),
        // against the service's name and Kafka.
        for f in [&mut r, &mut t] {
            let m = f["metadata"].as_object_mut().unwrap();
            for k in ["connectVersion", "capturedAt", "offsetsFrom"] {
                m.remove(k);
            }
        }
        assert_eq!(r, t, "{name}: through the REST API, then from the topics");
    }
}

/// The MSK Connect flow of docs/through-kafka.md, on cluster a standing in for an MSK Connect
/// connector whose worker configuration pins `offset.storage.topic` (the workers' own
/// `kco-a-offsets`): kco reads the cluster from its three topics only, the test creates and
/// deletes the connector through the REST API (MSK's console). A FileStream source that
/// delivered 9 lines is rewound to its 5th: reviewed by a dry run while it runs (the plan, and
/// the refusal), deleted, written through Kafka, created again under its name; lines 5 to 9
/// arrive once more, the first 4 do not.
#[test]
fn the_msk_flow_rewinds_a_source_through_its_pinned_offsets_topic() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let lines = numbered("msk-flow", 0..9);
    let starts = write_lines(&input, &lines);
    let len = std::fs::metadata(&input).unwrap().len();
    let topic = unique_name("kco-e2e-msk-flow");
    let src = unique_name("kco-e2e-msk-flow-src");
    let config = file_source_config(&input, &topic);
    let created = a.create(&src, config.clone());
    a.wait_running(&src);
    a.wait_read(&src, &input);
    let reader = TopicReader::start(&a, &topic, dir.path());
    assert_eq!(reader.wait_lines(9), lines);

    let msk = without_rest(&tb.kafka(), "a", "kco-a-status");
    snapshot(&msk, "snapshots", &[&src]);
    let file = msk.path().join(format!("snapshots/a/{src}.yaml"));
    let rewound = starts[4];
    edit_and_fmt(
        &msk,
        &file,
        &format!("position: {len}"),
        &format!("position: {rewound}"),
    );
    let path = file.to_str().unwrap();

    // Reviewed while it runs: the plan as it would be written once deleted, the refusal
    // under it, exit 1, nothing written.
    let (code, o, e) = msk.kco(&["apply", path, "--dry-run"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        // RUNNING, or UNASSIGNED in the status topic while another test's connector
        // rebalances cluster a: refused alike.
        ["RUNNING", "UNASSIGNED"]
            .iter()
            .any(|state| o.contains(&format!(
                "{src}  ({state}: refused; planned as once deleted)"
            )))
            && o.contains(&format!(
                "{{\"position\":{len}}} -> {{\"position\":{rewound}}}"
            ))
            && o.contains("refused: ")
            && o.contains("delete it with the service's own console, CLI or API"),
        "{o}"
    );
    assert!(
        e.contains("1 connector cannot take offsets through Kafka now (see the plan)"),
        "{e}"
    );
    // As a document: the plan and the refusals.
    let (code, o, e) = msk.kco(&["apply", path, "--dry-run", "-o", "json"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    let v: Value = serde_json::from_str(&o).unwrap_or_else(|err| panic!("{err}: {o}{e}"));
    assert_eq!(v["dry_run"], true, "{v}");
    assert_eq!(v["refused"][0]["connector"], src.as_str(), "{v}");
    assert_eq!(v["plan"]["writes"][0]["to"]["position"], rewound, "{v}");
    // A reset of it says the way there: the service's tools and a file with `offsets: []`.
    let (code, o, e) = msk.kco(&["reset", &src, "--dry-run"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        o.contains(&format!("{{\"position\":{len}}} -> (deleted)"))
            && o.contains("`offsets: []`")
            && !o.contains("--orphaned"),
        "{o}"
    );
    a.wait_running(&src);
    let at = |n: &str| crate::harness::source_position(&a.offsets(n), &input);
    assert_eq!(at(&src), Some(len as i64), "nothing written");

    // Deleted, as MSK's console would; `reset NAME` then points at what deletes what the name
    // left: from the topics, a file with `offsets: []`; through the REST API, `reset --orphaned`.
    drop(created);
    a.wait_gone(&src);
    let (code, o, e) = msk.kco(&["reset", &src, "--yes"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains("did not match any connector")
            && e.contains(&format!("a file of `{src}` with `offsets: []`")),
        "{e}"
    );
    let rest = TestEnv::new().args(&["--cluster", "a"]);
    rest.config(format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{}\"}}\n    connectTopics: {{offsets: kco-a-offsets}}\n",
        tb.a_urls.join(", "),
        tb.kafka()
    ));
    let (code, o, e) = rest.kco(&["reset", &src, "--yes"]).parts();
    assert_eq!(code, 1, "{o}{e}");
    assert!(
        e.contains(&format!("`kco reset --orphaned {src} --cluster a`")),
        "{e}"
    );

    // Applied through Kafka to the pinned topic, then created again under the same name.
    let (code, o, e) = msk.kco(&["apply", path, "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(
        o.contains(&format!("{src}  (no connector of that name"))
            && o.contains("written in topic `kco-a-offsets`"),
        "{o}"
    );
    assert!(
        !e.contains("AWS MSK Connect created"),
        "a pinned topic: {e}"
    );
    let _again = a.create(&src, config);
    a.wait_running(&src);
    a.wait_read(&src, &input);
    // Exactly the rewound lines again, counted by content.
    let got = reader.wait_lines_settled(9 + 5);
    for (i, line) in lines.iter().enumerate() {
        let want = if i < 4 { 1 } else { 2 };
        let n = got.iter().filter(|l| *l == line).count();
        assert_eq!(n, want, "{line}: {got:?}");
    }
    assert_eq!(got.len(), 14, "{got:?}");
}
