//! `kco diff` against the cluster: in sync, advanced, drifted, missing and untracked, for
//! sources and sinks, as text and markdown.

use super::{billing_in, sink_offsets, snap, source_offsets, Env, SINK, SOURCE};
use crate::fake_connect::{ConnectorSpec, FakeConnect, State};

/// Two running connectors (a source and a sink), two stopped ones, and one that will go away;
/// all snapshotted.
fn snapshotted() -> (Env, FakeConnect) {
    let env = Env::new();
    let fake = billing_in(State::Running)
        .source("cdc", SOURCE, State::Stopped, source_offsets(50))
        .sink(
            "audit",
            SINK,
            State::Stopped,
            sink_offsets("audit", &[(0, 300)]),
        )
        .sink(
            "legacy",
            SINK,
            State::Running,
            sink_offsets("old", &[(0, 1)]),
        )
        .start();
    env.snapshot(&fake);
    (env, fake)
}

/// The running connectors moved on; nothing else changed.
fn advance(fake: &FakeConnect) {
    fake.set_offsets("billing", source_offsets(12));
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 1600), (1, 700), (2, 5)]),
    );
}

/// Besides [`advance`]: stopped connectors changed, `legacy` deleted, `newbie` created.
fn drift(fake: &FakeConnect) {
    advance(fake);
    fake.set_offsets("cdc", source_offsets(80));
    fake.set_offsets("audit", sink_offsets("audit", &[(0, 250)]));
    fake.remove_connector("legacy");
    fake.add_connector(ConnectorSpec::sink("newbie", SINK).offsets(sink_offsets("new", &[(0, 3)])));
}

#[test]
fn in_sync() {
    let (env, fake) = snapshotted();
    snap!("diff_in_sync", env.text_on(&fake, &["diff"]));
    snap!(
        "diff_in_sync_markdown",
        env.text_on(&fake, &["diff", "-o", "markdown"])
    );
}

#[test]
fn advanced_is_normal_progress() {
    let (env, fake) = snapshotted();
    advance(&fake);
    snap!("diff_advanced", env.text_on(&fake, &["diff"]));
    snap!(
        "diff_advanced_fail_on_any",
        env.text_on(&fake, &["diff", "--fail-on", "any"])
    );
}

#[test]
fn every_status() {
    let (env, fake) = snapshotted();
    drift(&fake);
    snap!("diff_every_status", env.text_on(&fake, &["diff"]));
    snap!(
        "diff_every_status_markdown",
        env.text_on(&fake, &["diff", "-o", "markdown"])
    );
}

#[test]
fn named_connectors_only() {
    let (env, fake) = snapshotted();
    drift(&fake);
    let file = "snapshots/a/audit.yaml";
    snap!("diff_named", env.text_on(&fake, &["diff", "cdc", file]));
}

#[test]
fn type_and_class_changed() {
    let (env, fake) = snapshotted();
    let audit = ConnectorSpec::source("audit", SOURCE).state(State::Stopped);
    fake.add_connector(audit.offsets(source_offsets(1)));
    let mm2 = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
    fake.add_connector(ConnectorSpec::source("billing", mm2).offsets(source_offsets(9)));
    snap!(
        "diff_type_class_changed",
        env.text_on(&fake, &["diff", "audit", "billing"])
    );
}

/// Where the width is known (a terminal's, or `COLUMNS`), each long line of the diff folds
/// there, the rest indented under it: every line fits in 80 columns and says the same words;
/// piped without it, each partition stays on one line (for grep and CI logs).
#[test]
fn at_80_columns_every_line_fits_and_says_the_same() {
    let (env, fake) = snapshotted();
    drift(&fake);
    let wide = env.on(&fake, &["diff"]);
    assert!(
        wide.stdout.lines().any(|l| l.chars().count() > 80),
        "the fixture has long lines: {}",
        wide.stdout
    );
    let narrow = env
        .cmd()
        .env("COLUMNS", "80")
        .args(["--url", &fake.url(), "--cluster", "a", "diff"])
        .run();
    assert_eq!(narrow.code, wide.code);
    for line in narrow.stdout.lines() {
        let diff_line = line.starts_with(['+', '-', '@']);
        assert!(line.chars().count() <= 80 || diff_line, "{line:?}");
    }
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(words(&narrow.stdout), words(&wide.stdout));
    assert!(
        narrow
            .stdout
            .lines()
            .any(|l| l.starts_with("      {") && l.ends_with("]")),
        "a folded partition line hangs under its start: {}",
        narrow.stdout
    );
}

/// An apply's plan, its summary and its status lines fold at a known width too.
#[test]
fn an_apply_at_80_columns_fits() {
    let (env, fake) = snapshotted();
    let file = env.path().join("snapshots/a/orders.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("kafka_offset: 1500"), "{text}");
    std::fs::write(
        &file,
        text.replace("kafka_offset: 1500", "kafka_offset: 1000"),
    )
    .unwrap();
    assert_eq!(env.kco(&["fmt", "snapshots/a/orders.yaml"]).code, 0);
    let r = env
        .cmd()
        .env("COLUMNS", "80")
        .args([
            "--url",
            &fake.url(),
            "--cluster",
            "a",
            "apply",
            "snapshots/a/orders.yaml",
            "--yes",
        ])
        .run();
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.all().contains("[REPROCESSING]"), "{}", r.all());
    for line in r.all().lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
}
