//! `kco export` and `kco import`: Connect's REST body and Strimzi ConfigMaps, both ways, byte
//! for byte; bad input names file and line and writes nothing.

use std::path::Path;

use crate::fake_connect::{FakeConnect, State};
use crate::snapshot::snapshot;
use crate::support::data::SINK;
use crate::support::fakes::two_connectors;
use crate::support::run::{Kco, Run};

/// Runs kco in `cwd` with `stdin` piped in.
pub(crate) fn piped(cwd: &Path, args: &[&str], stdin: &str) -> Run {
    Kco::new(cwd).args(args).stdin(stdin).run()
}

fn ok(r: Run) -> Run {
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    r
}

/// `kco import --from json - --name <name> <args>` with `body` on stdin, which must succeed.
fn import_json(cwd: &Path, name: &str, args: &[&str], body: &str) -> Run {
    let head = ["import", "--from", "json", "-", "--name", name];
    ok(piped(cwd, &[&head[..], args].concat(), body))
}

/// `kco export <args>`, which must succeed: its stdout.
fn export(cwd: &Path, args: &[&str]) -> String {
    ok(Kco::new(cwd).arg("export").args(args).run()).stdout
}

/// The part of a kco file `import` reproduces: the offsets and their checksum.
fn offsets_part(text: &str) -> &str {
    &text[text.find("offsets:").unwrap()..]
}

#[test]
fn rest_body_round_trips_byte_for_byte() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    ok(snapshot(&fake, dir.path(), &[]));
    for (name, kind) in [("file-src", "source"), ("orders-sink", "sink")] {
        let file = format!("snapshots/a/{name}.yaml");
        let original = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        let body = export(dir.path(), &[&file]);
        // The body Connect itself served reads to the same offsets and checksum.
        let live = serde_json::json!({ "offsets": fake.offsets(name) }).to_string();
        for input in [&body, &live] {
            let r = import_json(dir.path(), name, &["--cluster", "a", "--out", "-"], input);
            assert_eq!(offsets_part(&r.stdout), offsets_part(&original), "{name}");
            assert!(
                r.stdout.contains(&format!("type: {kind}")),
                "inferred: {}",
                r.stdout
            );
        }
        // import then export gives back the body exactly.
        import_json(dir.path(), name, &["--cluster", "b"], &body);
        let again = export(dir.path(), &[&format!("snapshots/b/{name}.yaml")]);
        assert_eq!(again, body, "{name}");
    }
}

#[test]
fn strimzi_round_trips_byte_for_byte() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    ok(snapshot(&fake, dir.path(), &[]));
    for name in ["file-src", "orders-sink"] {
        let file = format!("snapshots/a/{name}.yaml");
        let body = export(dir.path(), &[&file]);
        let minimal =
            import_json(dir.path(), name, &["--cluster", "a", "--out", "-"], &body).stdout;
        let cm = export(
            dir.path(),
            &["--format", "strimzi", &file, "--namespace", "kafka"],
        );
        assert!(
            cm.contains("kind: KafkaConnector") && cm.contains("state: stopped"),
            "{cm}"
        );
        // Name and cluster come back from the ConfigMap itself.
        let back = ok(piped(
            dir.path(),
            &["import", "--from", "strimzi", "-", "--out", "-"],
            &cm,
        ));
        assert_eq!(back.stdout, minimal, "{name}");
    }
    // Both files into one stream, imported into a new tree: every connector comes back.
    let all = export(dir.path(), &["--format", "strimzi", "snapshots/a"]);
    ok(piped(
        dir.path(),
        &["import", "--from", "strimzi", "-", "--dir", "copy"],
        &all,
    ));
    for name in ["file-src", "orders-sink"] {
        let a =
            std::fs::read_to_string(dir.path().join(format!("snapshots/a/{name}.yaml"))).unwrap();
        let b = std::fs::read_to_string(dir.path().join(format!("copy/a/{name}.yaml"))).unwrap();
        assert_eq!(offsets_part(&a), offsets_part(&b));
    }
    fake.assert_no_mutations();
}

#[test]
fn an_existing_file_keeps_its_metadata() {
    let fake = two_connectors();
    let dir = tempfile::tempdir().unwrap();
    ok(snapshot(&fake, dir.path(), &[]));
    let path = dir.path().join("snapshots/a/orders-sink.yaml");
    let before = std::fs::read_to_string(&path).unwrap();
    let body = ok(Kco::new(dir.path())
        .args(["export", "snapshots/a/orders-sink.yaml"])
        .run())
    .stdout;
    let import = [
        "import",
        "--from",
        "json",
        "-",
        "--name",
        "orders-sink",
        "--cluster",
        "a",
    ];
    let r = ok(piped(dir.path(), &import, &body));
    assert!(r.stdout.contains("unchanged:"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    let moved = body.replace("\"kafka_offset\":5", "\"kafka_offset\":6");
    let r = ok(piped(dir.path(), &import, &moved));
    assert!(
        r.stdout.contains("updated: snapshots/a/orders-sink.yaml"),
        "{}",
        r.stdout
    );
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("kafkaClusterId: kc-test") && after.contains("kafka_offset: 6"));
    ok(Kco::new(dir.path()).arg("validate").run());
}

#[test]
fn bad_input_names_the_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.json"),
        "{\"offsets\": [\n  {\"partition\": {\"kafka_topic\": \"t\", \"kafka_partition\": 0}, \"offset\": {\"kafka_offset\": 1}},\n  {\"partition\": {\"kafka_topic\": \"t\", \"kafka_partition\": -1}, \"offset\": {\"kafka_offset\": 1}}\n]}\n",
    )
    .unwrap();
    // `kco import --from <from> <file> <name> --cluster a`.
    let import = |from: &str, file: &str, name: &[&str]| {
        let args = [&["import", "--from", from, file], name, &["--cluster", "a"]].concat();
        Kco::new(dir.path()).args(args).run()
    };
    let r = import("json", "in.json", &["--name", "c"]);
    r.assert_stderr(1, &["in.json:3: sink partition needs `kafka_partition`"]);
    let r = import("json", "in.json", &[]);
    r.assert_stderr(1, &["needs --name"]);
    std::fs::write(
        dir.path().join("cm.yaml"),
        "kind: ConfigMap\ndata:\n  offsets.json: |\n    {\"offsets\": [}\n",
    )
    .unwrap();
    let r = import("strimzi", "cm.yaml", &["--name", "c"]);
    r.assert_stderr(1, &["cm.yaml:4:"]);
    assert!(!dir.path().join("snapshots").exists(), "nothing written");
    // An invalid snapshot is not exported.
    std::fs::write(dir.path().join("bad.yaml"), "apiVersion: kco/v1\n").unwrap();
    let r = Kco::new(dir.path()).args(["export", "bad.yaml"]).run();
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{}", r.stderr);
}

#[test]
fn apply_warns_about_a_strimzi_managed_connector() {
    let name = "east->west.MirrorSourceConnector";
    let offsets = serde_json::json!([{"partition": {"cluster": "east", "partition": 0, "topic": "t"}, "offset": {"offset": 3}}]);
    let fake = FakeConnect::builder()
        .source(
            name,
            "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            State::Running,
            offsets,
        )
        .sink(
            "plain",
            SINK,
            State::Running,
            crate::support::fakes::orders_sink_offsets(1),
        )
        .start();
    let dir = tempfile::tempdir().unwrap();
    ok(snapshot(&fake, dir.path(), &[]));
    let r = ok(Kco::new(dir.path())
        .on(&fake)
        .args(["apply", "snapshots/a", "--dry-run"])
        .run());
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains(&format!("`{name}` looks managed by the Strimzi operator")),
        "{all}"
    );
    assert!(all.contains("kco export --format strimzi"), "{all}");
    assert!(!all.contains("`plain` looks managed"), "{all}");
}

#[test]
fn import_json_report_shape() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"{"offsets":[{"partition":{"kafka_topic":"o","kafka_partition":0},"offset":{"kafka_offset":1}}]}"#;
    let args = [
        "-o",
        "json",
        "import",
        "--from",
        "json",
        "-",
        "--name",
        "orders",
        "--cluster",
        "prod",
    ];
    let r = ok(piped(dir.path(), &args, body));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    // Written inside the current directory: the path as text shows it, relative.
    assert_eq!(
        v,
        serde_json::json!([{"name": "orders", "cluster": "prod", "type": "sink", "partitions": 1,
            "path": "snapshots/prod/orders.yaml", "outcome": "created"}])
    );
    let again: serde_json::Value =
        serde_json::from_str(&ok(piped(dir.path(), &args, body)).stdout).unwrap();
    assert_eq!(again[0]["outcome"], "unchanged");
}
