//! Exit codes never lie: an error is never reported as drift, a selection that matches
//! nothing is an error, and kco never guesses which of several clusters was meant.

use std::path::Path;

use kco::model::ConnectorType::Sink;
use serde_json::Value;

use crate::fake_connect::{FakeConnect, State};
use crate::history::{orders, Repo};
use crate::support::data::{sink_offset, SnapshotFile, SOURCE};
use crate::support::fakes::{orders_sink_offsets as sink_offsets, two_connectors};
use crate::support::json::parse_json;
use crate::support::run::Kco;

/// A port nothing listens on.
const NOWHERE: &str = "http://127.0.0.1:9";

fn config(dir: &Path, clusters: &[(&str, &str)]) {
    let mut text = String::from("clusters:\n");
    for (name, url) in clusters {
        text.push_str(&format!("  {name}:\n    urls: [{url}]\n"));
    }
    std::fs::write(dir.join("kco.yaml"), text).unwrap();
}

/// kco.yaml of cluster `a` at `fake`, its offsets topic `connect-offsets` on the Kafka at
/// `bootstrap`.
fn with_kafka(dir: &Path, fake: &FakeConnect, bootstrap: &str) {
    let text = format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{bootstrap}\"}}\n    connectTopics: {{offsets: connect-offsets}}\n",
        fake.url()
    );
    std::fs::write(dir.join("kco.yaml"), text).unwrap();
}

/// The item of an `--all-clusters` document for cluster `name`.
fn item<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc.as_array()
        .unwrap_or_else(|| panic!("an array: {doc}"))
        .iter()
        .find(|i| i["cluster"] == name)
        .unwrap_or_else(|| panic!("no item for {name}: {doc}"))
}

#[test]
fn all_clusters_an_unreachable_cluster_is_an_error_not_drift() {
    let east = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), &[("east", &east.url()), ("west", NOWHERE)]);
    let r = Kco::new(dir.path())
        .args(["--cluster", "east", "snapshot"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::create_dir_all(dir.path().join("snapshots/west")).unwrap();
    // East drifts, west cannot be reached: that is an error (1), not drift (2).
    east.set_offsets("orders-sink", sink_offsets(1));
    let r = Kco::new(dir.path()).args(["diff", "--all-clusters"]).run();
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("orders-sink"),
        "east's report: {}",
        r.stdout
    );
    assert!(
        r.stderr.contains("1 of 2 clusters failed: `west`"),
        "{}",
        r.stderr
    );
    for cmd in ["diff", "snapshot", "ls"] {
        let r = Kco::new(dir.path())
            .args([cmd, "--all-clusters", "-o", "json"])
            .run();
        assert_eq!(r.code, 1, "{cmd}: {}\n{}", r.stdout, r.stderr);
        let doc = parse_json(&r.stdout);
        assert!(item(&doc, "east").get("error").is_none(), "{cmd}: {doc}");
        let west = &item(&doc, "west")["error"];
        assert_eq!(west["kind"], "client", "{cmd}: {doc}");
        assert_eq!(west["exit_code"], 1, "{cmd}: {doc}");
        assert!(
            west["message"].as_str().unwrap().contains("127.0.0.1:9"),
            "{cmd}: {doc}"
        );
    }
    let r = Kco::new(dir.path())
        .args(["diff", "--all-clusters", "-o", "yaml"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("cluster: west\n  error:"), "{}", r.stdout);
}

#[test]
fn a_glob_that_matches_nothing_is_an_error_naming_what_exists() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path())
        .on(&fake)
        .args(["snapshot", "zzz*"])
        .run();
    r.assert_stderr(
        1,
        &[
            "error: `zzz*` did not match any connector on cluster `a`",
            "hint:",
            "`file-src`, `orders-sink`",
        ],
    );
    assert!(!dir.path().join("snapshots").exists(), "nothing written");
    // One pattern that matches and one that does not: still an error, nothing written.
    let r = Kco::new(dir.path())
        .on(&fake)
        .args(["-o", "json", "snapshot", "orders-*", "nope"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = parse_json(&r.stdout);
    assert_eq!(doc["error"]["kind"], "no_match", "{doc}");
    assert!(!dir.path().join("snapshots").exists(), "nothing written");
}

/// `reset` of a name that is not on the cluster is the same `no_match` as a glob's: the names
/// that are there, the closest first, in the JSON `error` too; nothing sent (issue 34).
#[test]
fn reset_of_a_name_that_is_not_there_names_those_that_are() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeConnect::builder()
        .source("orders-src", SOURCE, State::Running, serde_json::json!([]))
        .source("orders-sink", SOURCE, State::Running, serde_json::json!([]))
        .start();
    let r = Kco::new(dir.path())
        .on(&fake)
        .args(["reset", "orders-snk", "--yes"])
        .run();
    r.assert_stderr(
        1,
        &[
            "error: `orders-snk` did not match any connector on cluster `a`",
            "hint: did you mean `orders-sink`? (the connectors there: `orders-sink`, `orders-src`)",
        ],
    );
    let r = Kco::new(dir.path())
        .on(&fake)
        .args(["-o", "json", "reset", "nosuch", "--yes"])
        .run();
    assert_eq!(r.code, 1, "{}", r.all());
    let doc = parse_json(&r.stdout);
    assert_eq!(doc["error"]["kind"], "no_match", "{doc}");
    fake.assert_no_mutations();
}

/// A connector's name typed wrong where its snapshot file is looked for (`show`, `diff`), or
/// given to `apply`, which takes files: the file of the name meant, nothing sent.
#[test]
fn a_name_typed_wrong_where_a_file_is_looked_for_is_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("snapshots/a");
    SnapshotFile::captured("orders-sink", Sink, sink_offset(5)).write_in(&files);
    let fake = FakeConnect::builder()
        .sink(
            "orders-sink",
            "FileStreamSink",
            State::Running,
            sink_offset(5),
        )
        .start();
    let run = |args: &[&str]| Kco::new(dir.path()).on(&fake).args(args).run();
    let r = run(&["show", "orders-snik"]);
    r.assert_stderr(
        1,
        &["has no snapshot file at snapshots/a/orders-snik.yaml; did you mean `orders-sink`?"],
    );
    let r = run(&["diff", "orders-snik"]);
    r.assert_stderr(1, &["did you mean `orders-sink`?"]);
    for typed in ["orders-snik", "orders-sink"] {
        let r = run(&["apply", typed, "--yes"]);
        r.assert_stderr(
            1,
            &["`kco apply` takes snapshot files; did you mean `kco apply snapshots/a/orders-sink.yaml`?"],
        );
    }
    // Nothing close: no guess.
    let r = run(&["show", "billing"]);
    assert!(!r.stderr.contains("did you mean"), "{}", r.stderr);
    fake.assert_no_mutations();
}

#[test]
fn log_of_a_glob_that_matches_nothing_is_an_error() {
    let r = Repo::new();
    r.write("snapshots/a/orders.yaml", "orders", Sink, orders(&[(0, 1)]));
    r.commit("2026-11-27T02:00:00Z", "nightly");
    let (code, _, err) = r.kco(&["log", "zzz*"]).parts();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("`zzz*` did not match any connector"), "{err}");
    assert!(err.contains("`orders`"), "the names that exist: {err}");
    let (code, out, err) = r.kco(&["log", "ord*"]).parts();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("orders"), "{out}");
}

#[test]
fn reset_takes_globs_resolved_against_the_cluster() {
    let fake = FakeConnect::builder()
        .sink(
            "orders-a",
            "FileStreamSink",
            State::Stopped,
            sink_offsets(2),
        )
        .sink(
            "orders-b",
            "FileStreamSink",
            State::Stopped,
            sink_offsets(3),
        )
        .sink("billing", "FileStreamSink", State::Stopped, sink_offsets(4))
        .start();
    let dir = tempfile::tempdir().unwrap();
    let url = fake.url();
    let base = ["--url", url.as_str(), "--cluster", "a", "reset"];
    let r = Kco::new(dir.path())
        .args(base)
        .args(["orders-*", "--dry-run"])
        .run();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("- orders-a (") && r.stdout.contains("- orders-b ("),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("billing"), "{}", r.stdout);
    let r = Kco::new(dir.path())
        .args(base)
        .args(["zzz*", "--dry-run"])
        .run();
    r.assert_stderr(1, &["`zzz*` did not match any connector on cluster `a`"]);
    fake.assert_no_mutations();
}

#[test]
fn several_clusters_and_none_chosen_is_an_error_not_localhost() {
    let (east, west) = (two_connectors(), two_connectors());
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), &[("east", &east.url()), ("west", &west.url())]);
    let r = Kco::new(dir.path()).args(["ls"]).run();
    r.assert_stderr(
        1,
        &[
            "2 clusters are configured (east, west) and none is chosen",
            "hint: pass `--cluster NAME`",
            "defaultCluster:",
        ],
    );
    assert!(!r.stderr.contains("8083"), "{}", r.stderr);
    // Chosen, it works; `defaultCluster:` chooses too.
    let r = Kco::new(dir.path()).args(["--cluster", "west", "ls"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(dir.path().join("kco.yaml")).unwrap();
    std::fs::write(
        dir.path().join("kco.yaml"),
        format!("defaultCluster: east\n{text}"),
    )
    .unwrap();
    let r = Kco::new(dir.path()).args(["ls", "-o", "json"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(parse_json(&r.stdout)["cluster"], "east");
}

#[test]
fn commands_that_read_only_files_need_no_cluster_chosen() {
    let r = Repo::new();
    r.write(
        "snapshots/east/orders.yaml",
        "orders",
        Sink,
        orders(&[(0, 1)]),
    );
    r.commit("2026-11-27T02:00:00Z", "nightly");
    config(r.path(), &[("east", NOWHERE), ("west", NOWHERE)]);
    for args in [&["log"][..], &["validate"], &["diff", "--base", "HEAD"]] {
        let out = Kco::new(r.path()).args(args).run();
        assert_eq!(out.code, 0, "{args:?}: {}\n{}", out.stdout, out.stderr);
    }
    // The whole snapshots directory, not that of a guessed cluster `default`.
    let out = Kco::new(r.path()).args(["log"]).run();
    assert!(out.stdout.contains("orders"), "{}", out.stdout);
}

#[test]
fn ls_and_reset_orphaned_without_the_offsets_topic_or_its_kafka_are_errors_naming_what_to_set() {
    let fake = two_connectors();
    for cmd in [
        &["ls", "--orphaned"][..],
        &["reset", "--orphaned", "gone", "--yes"][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        config(dir.path(), &[("a", &fake.url())]);
        let args = [&["--cluster", "a"][..], cmd].concat();
        let r = Kco::new(dir.path()).args(args.clone()).run();
        assert_eq!(r.code, 1, "{cmd:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("cluster `a`")
                && r.stderr.contains("`kafka:`")
                && r.stderr.contains("connectTopics")
                && r.stderr.contains("offset.storage.topic"),
            "{cmd:?}: {}",
            r.stderr
        );
        // A Kafka that nothing serves: named, nothing changed.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        with_kafka(dir.path(), &fake, &format!("127.0.0.1:{port}"));
        let r = Kco::new(dir.path()).args(args).run();
        assert_eq!(r.code, 1, "{cmd:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!("127.0.0.1:{port}")) && r.stderr.contains("connect-offsets"),
            "{cmd:?}: {}",
            r.stderr
        );
        assert!(
            !dir.path().join(".kco/backups").exists(),
            "{cmd:?}: no backup of nothing"
        );
    }
    fake.assert_no_mutations();
}

/// A name a connector of the cluster has is that connector's: `reset --orphaned` of it is
/// refused before Kafka is even read, with the command that resets the connector.
#[test]
fn reset_orphaned_of_a_live_connectors_name_is_refused_with_what_to_run() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    let live = "orders-sink".to_string();
    with_kafka(dir.path(), &fake, "127.0.0.1:9");
    let r = Kco::new(dir.path())
        .args([
            "--cluster",
            "a",
            "reset",
            "--orphaned",
            &live,
            "--yes",
            "-o",
            "json",
        ])
        .run();
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "connectors_exist", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(&live),
        "{v}"
    );
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("kco reset NAME"),
        "{v}"
    );
    fake.assert_no_mutations();
}
