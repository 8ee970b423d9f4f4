//! A wrong setting or a topic shared with another Connect cluster never costs a backup or
//! another cluster's offsets, on the test bed's real workers and topics:
//! - on the legacy worker (cluster l, Kafka Connect 3.4, offsets through Kafka; and read from
//!   its topics alone, as AWS MSK Connect is): the config and status topics given the other
//!   way round, or a data topic given as the offsets topic, are refused naming what they hold,
//!   and no snapshot file is emptied or pruned; a URL of another Connect cluster prunes
//!   nothing; `--allow-empty` prunes what the user deleted on purpose;
//! - on cluster a: a source of cluster b keeping its offsets in a's offsets topic (its own
//!   `offsets.storage.topic`) is neither listed nor reset as a leftover of a, and a broken
//!   entry of kco.yaml leaves `ls --orphaned` a warning and makes `reset --orphaned` refuse.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    file_source_config, legacy, numbered, testbed, unique_name, wait_for, write_lines, FilePipe,
};
use crate::support::env::TestEnv;

/// `kco <args> -o json`: its exit code and its document (a run that failed prints its error
/// as one too).
fn json(env: &TestEnv, args: &[&str]) -> (i32, Value, String) {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let (code, out, err) = env.kco(&all).parts();
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("kco {all:?}: {e}: {out}{err}"));
    (code, v, err)
}

/// The bytes of each file.
fn bytes(files: &[PathBuf]) -> Vec<Vec<u8>> {
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

#[test]
fn a_wrong_topic_or_url_empties_no_backup_file_and_prunes_none() {
    let Some(tb) = testbed() else { return };
    let Some((l, env)) = legacy() else { return };
    let kafka = tb.kafka();
    let p = FilePipe::start(&l, env.path(), "kco-e2e-wrong", &numbered("wrong", 0..5));
    let (src, sink) = (p.src.clone(), p.sink.clone());
    let len = p.input_len();
    let right = std::fs::read_to_string(env.path().join("kco.yaml")).unwrap();
    let url = l.base.clone();
    let files: Vec<PathBuf> = [&src, &sink]
        .iter()
        .map(|n| env.path().join(format!("snapshots/l/{n}.yaml")))
        .collect();
    // The backup, through the REST API and Kafka, once both have committed what they did.
    wait_for(
        &format!("{src} at {len} and {sink} at 5"),
        Duration::from_secs(60),
        || {
            let (code, v, err) = json(&env, &["snapshot", &src, &sink]);
            if code != 0 {
                return Err(format!("{v}{err}"));
            }
            let at = |i: usize, k: &str| {
                let f: Value =
                    serde_yaml::from_str(&std::fs::read_to_string(&files[i]).unwrap()).unwrap();
                f["offsets"][0]["offset"][k].clone()
            };
            match (at(0, "position"), at(1, "kafka_offset")) {
                (p, o) if p == len && o == 5 => Ok(()),
                got => Err(format!("{got:?}")),
            }
        },
    );
    let backup = bytes(&files);
    let intact = |what: &str| assert_eq!(bytes(&files), backup, "{what}: the files as they were");

    // Read from its topics alone, the config and status topics swapped: refused, naming
    // what the topic holds; nothing pruned.
    env.config(format!(
        "clusters:\n  l:\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: kco-l-offsets, configs: kco-l-status, status: kco-l-configs}}\n"
    ));
    let (code, v, _) = json(&env, &["snapshot", "--prune"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["error"]["kind"], "client", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("given as the workers' config topic (`config.storage.topic`), but holds the status topic's records"),
        "{message}"
    );
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("`connectTopics.configs` and `connectTopics.status` swapped?"),
        "{v}"
    );
    intact("topics swapped");

    // A data topic given as the offsets topic, read from the topics alone, then through the
    // worker's REST API: the source's file is kept, not emptied, and the run fails.
    for config in [
        format!(
            "clusters:\n  l:\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: {}, configs: kco-l-configs, status: kco-l-status}}\n",
            p.topic
        ),
        format!(
            "clusters:\n  l:\n    urls: [{url}]\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: {}}}\n",
            p.topic
        ),
    ] {
        env.config(&config);
        let (code, v, err) = json(&env, &["snapshot", &src, &sink]);
        assert_eq!(code, 1, "{config}: {v}{err}");
        let of = |n: &str| crate::support::json::named(&v, "connectors", n);
        assert_eq!(of(&src)["outcome"], "failed", "{v}");
        let why = of(&src)["message"].as_str().unwrap().to_string();
        assert!(
            why.contains("given as the workers' offsets topic") && why.contains("a data topic?"),
            "{why}"
        );
        assert_ne!(of(&sink)["outcome"], "failed", "{v}");
        intact(&config);
    }
    // ... and `ls --orphaned` reads it as no offsets topic either.
    let (code, v, _) = json(&env, &["ls", "--orphaned"]);
    assert_eq!((code, &v["error"]["kind"]), (1, &"kafka".into()), "{v}");

    // The URL of another Connect cluster (cluster b, on the same Kafka): it lists none of
    // these connectors, and `--prune` removes nothing, nor leaves files of b's own.
    env.config(right.replace(&url, &tb.b_url));
    let (code, v, _) = json(&env, &["snapshot", "--prune"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["error"]["kind"], "would_empty", "{v}");
    intact("a wrong URL");
    let left: Vec<_> = std::fs::read_dir(env.path().join("snapshots/l"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".yaml") && !n.starts_with('.'))
        .collect();
    assert_eq!(left.len(), 2, "only the two files: {left:?}");

    // Deleted on purpose: refused the same, then pruned with --allow-empty.
    env.config(&right);
    drop(p.src_guard);
    drop(p.sink_guard);
    l.wait_gone(&src);
    l.wait_gone(&sink);
    let (code, v, _) = json(&env, &["snapshot", "--prune"]);
    assert_eq!(
        (code, &v["error"]["kind"]),
        (1, &"would_empty".into()),
        "{v}"
    );
    intact("deleted connectors, without --allow-empty");
    let (code, v, err) = json(&env, &["snapshot", "--prune", "--allow-empty"]);
    assert_eq!(code, 0, "{v}{err}");
    assert!(files.iter().all(|f| !f.exists()), "pruned: {v}");
}

#[test]
fn a_source_of_another_cluster_keeping_its_offsets_in_this_topic_is_no_leftover() {
    let Some(tb) = testbed() else { return };
    let kafka = tb.kafka();
    let env = TestEnv::new();
    let clusters = format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: kco-a-offsets}}\n  b:\n    urls: [{}]\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: kco-b-offsets}}\n",
        tb.a_urls.join(", "),
        tb.b_url
    );
    // A cluster read from its topics whose status topic does not exist: a broken entry.
    let broken = format!(
        "{clusters}  m:\n    kafka: {{bootstrap: \"{kafka}\"}}\n    connectTopics: {{offsets: kco-a-offsets, configs: kco-a-configs, status: {}}}\n",
        unique_name("kco-e2e-no-such-status")
    );
    env.config(&broken);

    // A source of cluster b whose own offsets topic is cluster a's workers' topic.
    let b = tb.b();
    let input = env.path().join("in.txt");
    write_lines(&input, &numbered("shared", 0..4));
    let name = unique_name("kco-e2e-shared-src");
    let mut config = file_source_config(&input, &unique_name("kco-e2e-shared"));
    config["offsets.storage.topic"] = "kco-a-offsets".into();
    let _src = b.create(&name, config);
    let before = b.wait_read(&name, &input);

    // Listed as no leftover of a; the broken entry is a warning, not a's failure.
    let (code, v, err) = json(&env, &["ls", "--orphaned", "--cluster", "a"]);
    assert_eq!(code, 0, "{v}{err}");
    assert!(
        err.contains("cannot look at cluster `m`") && err.contains("does not exist"),
        "{err}"
    );
    assert!(
        !v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["name"] == name.as_str()),
        "{v}"
    );
    assert_eq!(v["liveElsewhere"][&name], "b", "{v}");

    // A reset is refused while a neighbour cannot be looked at...
    let (code, v, _) = json(
        &env,
        &["reset", "--orphaned", &name, "--cluster", "a", "--yes"],
    );
    assert_eq!(
        (code, &v["error"]["kind"]),
        (1, &"not_looked_at".into()),
        "{v}"
    );
    // ... and, every neighbour looked at, finds nothing of the name to delete.
    env.config(&clusters);
    let (code, out, err) = env
        .kco(&["reset", "--orphaned", &name, "--cluster", "a", "--yes"])
        .parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("`{name}` in topic `kco-a-offsets` is left out: a source of that name runs on cluster `b`")),
        "{err}"
    );
    assert!(
        err.contains("did not match any connector with offsets left"),
        "{err}"
    );
    // Its offsets as they were: in a's topic (read by a kco.yaml without cluster b, to
    // which they look left behind), and as its worker answers.
    let alone = TestEnv::new();
    alone.config(clusters.split("  b:\n").next().unwrap());
    let (code, v, err) = json(&alone, &["ls", "--orphaned", "--cluster", "a"]);
    assert_eq!(code, 0, "{v}{err}");
    let kept = crate::support::json::named(&v, "sources", &name);
    let position = crate::harness::source_position(&before, &input);
    assert_eq!(
        kept["partitions"][0]["offset"]["position"],
        position.unwrap(),
        "{kept}"
    );
    assert_eq!(b.offsets(&name), before);
}
