//! The checks of which cluster a change lands on: a sink whose consumer group a sink of
//! another cluster of the same Kafka cluster uses; a `--url` that is not a worker of the
//! cluster it is given for; an undo that goes back to the worker its backup was taken from
//! (with `--fail-on`); and errors that name KCO_URL and KCO_CLUSTER when those caused them.

use std::path::Path;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{sink_offset as offsets, SnapshotFile, SINK};
use crate::support::env::TestEnv;
use crate::support::run::Kco;

/// A fake on Kafka cluster `kafka` with running sinks `names` at 100.
fn connect(kafka: &str, names: &[&str]) -> FakeConnect {
    let mut b = FakeConnect::builder().kafka_cluster_id(kafka);
    for n in names {
        b = b.sink(n, SINK, State::Running, offsets(100));
    }
    b.start()
}

fn config(dir: &Path, clusters: &[(&str, &str)]) {
    let mut text = String::from("clusters:\n");
    for (name, url) in clusters {
        text.push_str(&format!("  {name}:\n    urls: [{url}]\n"));
    }
    std::fs::write(dir.join("kco.yaml"), text).unwrap();
}

#[test]
fn a_sink_whose_group_a_sink_of_another_cluster_uses_is_refused_unless_named() {
    let t = TestEnv::new();
    let a = connect("k1", &["orders", "clicks"]);
    let b = connect("k1", &["orders"]);
    let elsewhere = connect("k2", &["orders"]);
    config(
        t.path(),
        &[
            ("a", &a.url()),
            ("b", &b.url()),
            ("x", &elsewhere.url()),
            ("down", "http://127.0.0.1:9"),
        ],
    );
    SnapshotFile::sink("orders", offsets(5))
        .class(SINK)
        .cluster("b")
        .write_in(&t.path().join("snapshots/b"));
    let r = t.kco(&["--cluster", "b", "apply", "snapshots/b", "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all().contains("1 sink on cluster `b` shares a consumer group with a sink of another Connect cluster on the same Kafka cluster; nothing was changed:\n  `orders` on cluster `b` and `orders` on cluster `a`: consumer group `connect-orders`"),
        "{r}"
    );
    assert!(r.all().contains("--allow-shared-group orders"), "{r}");
    assert!(
        r.all()
            .contains("cannot look for sinks sharing a consumer group on cluster `down`"),
        "an unreachable cluster is a warning: {r}"
    );
    assert!(
        !r.all().contains("cluster `x`"),
        "another Kafka cluster: {r}"
    );
    for f in [&a, &b, &elsewhere] {
        f.assert_no_mutations();
    }

    let r = t.kco(&[
        "--cluster",
        "b",
        "apply",
        "snapshots/b",
        "--yes",
        "--allow-shared-group",
        "orders",
    ]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all().contains("warning: consumer group `connect-orders` is also the group of sink `orders` on cluster `a` (the same Kafka cluster)"),
        "the plan warns: {r}"
    );
    assert_eq!(b.offsets("orders"), offsets(5));
}

#[test]
fn a_group_override_is_the_group_and_a_plan_without_a_changing_sink_looks_nowhere() {
    let t = TestEnv::new();
    let a = FakeConnect::builder()
        .kafka_cluster_id("k1")
        .connector(
            kco::fake::ConnectorSpec::sink("archiver", SINK)
                .config("consumer.override.group.id", "connect-orders")
                .offsets(offsets(1)),
        )
        .start();
    let b = connect("k1", &["orders"]);
    config(t.path(), &[("a", &a.url()), ("b", &b.url())]);
    let dir = t.path().join("snapshots/b");
    SnapshotFile::sink("orders", offsets(100))
        .class(SINK)
        .cluster("b")
        .write_in(&dir);
    let r = t.kco(&["--cluster", "b", "apply", "snapshots/b", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        a.requests().is_empty(),
        "no sink changes, no look: {:?}",
        a.requests()
    );
    SnapshotFile::sink("orders", offsets(7))
        .class(SINK)
        .cluster("b")
        .write_in(&dir);
    let r = t.kco(&["--cluster", "b", "apply", "snapshots/b", "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all().contains("`orders` on cluster `b` and `archiver` on cluster `a`: consumer group `connect-orders`"),
        "{r}"
    );
}

#[test]
fn a_url_that_is_not_a_worker_of_the_named_cluster_is_refused_naming_where_it_came_from() {
    let t = TestEnv::new();
    let a = connect("k1", &["orders", "clicks"]);
    let b = connect("k1", &["orders"]);
    let elsewhere = connect("k2", &["orders", "clicks"]);
    config(t.path(), &[("a", &a.url())]);
    let (code, out) = t
        .kco(&["--url", &b.url(), "--cluster", "a", "ls"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "error: {} (--url) is not a worker of cluster `a`: it is on the same Kafka cluster but in another Connect group than cluster `a` ({})",
            b.url(),
            a.url()
        )),
        "{out}"
    );
    let r = Kco::new(t.path())
        .env("KCO_URL", elsewhere.url())
        .env("KCO_CLUSTER", "a")
        .args(["snapshot"])
        .run();
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(&format!(
            "{} (KCO_URL) is not a worker of cluster `a`: it works on Kafka cluster `k2`",
            elsewhere.url()
        )),
        "{}",
        r.stderr
    );
    assert!(!t.path().join("snapshots").exists(), "nothing written");
    // The cluster's own worker, however spelled, passes without a look at the others.
    let r = t.kco(&["--url", &format!("{}/", a.url()), "--cluster", "a", "ls"]);
    assert_eq!(r.code, 0, "{r}");
}

#[test]
fn errors_caused_by_kco_url_and_kco_cluster_name_the_variable() {
    let t = TestEnv::new();
    config(t.path(), &[("a", "http://127.0.0.1:9")]);
    let r = Kco::new(t.path())
        .env("KCO_URL", "http://127.0.0.1:9")
        .args(["ls"])
        .run();
    r.assert_stderr(1, &["error: cannot reach Kafka Connect of cluster `a` (tried http://127.0.0.1:9, the URL from KCO_URL): GET http://127.0.0.1:9/"]);
    let r = Kco::new(t.path())
        .env("KCO_CLUSTER", "zz")
        .args(["ls"])
        .run();
    r.assert_stderr(1, &["no cluster `zz` (KCO_CLUSTER) in the config"]);
    let r = t.kco(&["--cluster", "zz", "ls"]);
    assert!(r.all().contains("no cluster `zz` (--cluster)"), "{r}");
}

#[test]
fn undo_goes_to_the_worker_its_backup_was_taken_from() {
    let t = TestEnv::new();
    let configured = connect("k1", &["s"]);
    let used = connect("k2", &["s"]);
    SnapshotFile::sink("s", offsets(5))
        .class(SINK)
        .write_in(&t.path().join("files"));
    // Applied with --url on a project without kco.yaml: the backup records that worker.
    let r = t.kco(&[
        "--url",
        &used.url(),
        "--cluster",
        "a",
        "apply",
        "files",
        "--yes",
        "--backup-dir",
        "bk",
    ]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(used.offsets("s"), offsets(5));
    // Then kco.yaml names cluster `a` with another worker.
    config(t.path(), &[("a", &configured.url())]);
    let r = t.kco(&["undo", "bk", "--url", &configured.url(), "--yes"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all().contains(&format!(
            "the backup bk was taken from {} (cluster `a`), not from {} (--url)",
            used.url(),
            configured.url()
        )),
        "{r}"
    );
    let r = t.kco(&["undo", "bk", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all()
            .contains(&format!("The backup was taken from {}", used.url())),
        "{r}"
    );
    assert_eq!(used.offsets("s"), offsets(100));
    configured.assert_no_mutations();
}

#[test]
fn undo_takes_fail_on() {
    let t = TestEnv::new();
    let fake = connect("k1", &["s"]);
    SnapshotFile::sink("s", offsets(5))
        .class(SINK)
        .write_in(&t.path().join("files"));
    let on = |args: &[&str]| {
        Kco::new(t.path())
            .on(&fake)
            .args(args)
            .run()
            .code_and_text()
    };
    let (code, out) = on(&["apply", "files", "--yes", "--backup-dir", "bk"]);
    assert_eq!(code, 0, "{out}");
    fake.clear_requests();
    // Undoing a rewind of 95 records skips them again: DATA LOSS.
    let (code, out) = on(&["undo", "bk", "--fail-on", "data-loss", "--yes"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("refused by --fail-on: 1 partition at risk; nothing was changed"),
        "{out}"
    );
    assert!(out.contains("[DATA LOSS]"), "{out}");
    fake.assert_no_mutations();
    let (code, out) = on(&["undo", "bk", "--fail-on", "reprocessing", "--yes"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(fake.offsets("s"), offsets(100));
}

#[test]
fn fmt_without_paths_says_where_it_reseals_and_how_many() {
    let t = TestEnv::new();
    let file = SnapshotFile::sink("s", offsets(5))
        .class(SINK)
        .write_in(&t.path().join("snapshots/a"));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("kafka_offset: 5", "kafka_offset: 6")).unwrap();
    let r = t.kco(&["fmt"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all().contains("No path given: formatting and re-sealing every file of snapshots/ (name files or directories to format only those)."),
        "{r}"
    );
    assert!(
        r.all()
            .contains("formatted: snapshots/a/s.yaml (checksum re-sealed)"),
        "{r}"
    );
    assert!(
        r.all()
            .contains("1 file formatted (1 checksum re-sealed), 0 unchanged, 0 invalid"),
        "{r}"
    );
    let r = t.kco(&["fmt", "snapshots/a/s.yaml"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(!r.all().contains("No path given"), "{r}");
}

#[test]
fn at_lists_the_times_it_takes_and_that_a_date_alone_is_midnight_utc() {
    let t = TestEnv::new();
    for cmd in ["apply", "show"] {
        let r = t.kco(&[cmd, "--help"]);
        assert_eq!(r.code, 0, "{r}");
        let flat = r.all().split_whitespace().collect::<Vec<_>>().join(" ");
        for form in [
            "YYYY-MM-DD (a date alone means 00:00 UTC)",
            "YYYY-MM-DD HH:MM:SS",
            "Z, UTC, +HH:MM or -HHMM",
        ] {
            assert!(flat.contains(form), "{cmd}: {form}: {r}");
        }
    }
}

#[test]
fn creating_a_sink_whose_group_a_sink_of_another_cluster_uses_is_refused() {
    let t = TestEnv::new();
    let a = connect("k1", &["orders"]);
    let b = FakeConnect::builder()
        .kafka_cluster_id("k1")
        .version("4.1.0")
        .start();
    config(t.path(), &[("a", &a.url()), ("b", &b.url())]);
    let config: std::collections::BTreeMap<String, String> = [
        ("connector.class", SINK),
        ("name", "orders"),
        ("topics", "t"),
        ("file", "/tmp/x"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    SnapshotFile::sink("orders", offsets(5))
        .class(SINK)
        .cluster("b")
        .config(Some(config))
        .write_in(&t.path().join("snapshots/b"));
    let r = t.kco(&[
        "--cluster",
        "b",
        "apply",
        "snapshots/b",
        "--create",
        "--yes",
    ]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.all().contains(
            "`orders` on cluster `b` and `orders` on cluster `a`: consumer group `connect-orders`"
        ),
        "{r}"
    );
    assert_eq!(b.state("orders"), None, "not created");
}

/// KCO_URL without KCO_CLUSTER in a project whose files are another cluster's: a URL alone
/// stands for cluster `default`, which has no files here. A review (`diff --base`) would
/// compare nothing and pass; instead it fails naming what is missing (KCO_CLUSTER) and the
/// clusters the files are of, and `diff`, `snapshot` and `apply` say the same, before any
/// request and writing nothing. With KCO_CLUSTER named, the review reviews.
#[test]
fn url_in_kco_url_without_kco_cluster_fails_every_command_naming_it_instead_of_reviewing_nothing() {
    let fake = connect("kafka", &["s"]);
    let t = TestEnv::new();
    let dir = t.path();
    crate::support::git::git(dir, &["init", "-q", "-b", "main"]);
    let file = SnapshotFile::sink("s", offsets(100))
        .class(SINK)
        .cluster("prod")
        .write_in(&dir.join("snapshots/prod"));
    crate::support::git::git(dir, &["add", "-A"]);
    crate::support::git::git(dir, &["commit", "-qm", "nightly"]);
    crate::support::data::hand_edit(&file, offsets(40));
    crate::support::git::git(dir, &["commit", "-qam", "rewind s"]);
    fake.clear_requests();

    let run = |args: &[&str]| {
        Kco::new(dir)
            .env("KCO_URL", fake.url())
            .args(args)
            .run()
            .code_and_text()
    };
    for args in [
        &["diff", "--base", "HEAD^"][..],
        &["diff"],
        &["snapshot"],
        &["apply", "snapshots/prod", "--dry-run"],
        &["ls"],
        &["reset", "s", "--yes"],
        &["recover"],
    ] {
        let (code, out) = run(args);
        assert_eq!(code, 1, "{args:?}: {out}");
        let found = match args[0] {
            "apply" => "snapshots/prod/s.yaml is a file of cluster `prod`",
            _ => "snapshots holds no files of `default` (it holds those of `prod`)",
        };
        for part in [
            "error: KCO_URL: names a worker but not its cluster: a URL alone stands for cluster `default`, and ",
            found,
            "hint: name the cluster this worker belongs to: KCO_CLUSTER=prod (or --cluster prod)",
        ] {
            assert!(out.contains(part), "{args:?}: {part}: {out}");
        }
    }
    assert!(!dir.join("snapshots/default").exists(), "nothing written");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());

    // Named, the review reviews: the rewind of s, against live.
    let r = Kco::new(dir)
        .env("KCO_URL", fake.url())
        .env("KCO_CLUSTER", "prod")
        .args(["diff", "--base", "HEAD^"])
        .run();
    assert_eq!(r.code, 2, "{r}");
    assert!(r.all().contains("REPROCESSING"), "{r}");
}
