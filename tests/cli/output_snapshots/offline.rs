//! The offline commands: `kco validate`, `kco fmt` and `kco schema`.

use super::{billing_and_orders, snap, Env};

const SINK: &str = "snapshots/a/orders.yaml";
const SOURCE: &str = "snapshots/a/billing.yaml";

/// Snapshot files of [`billing_and_orders`], written by kco.
fn files() -> Env {
    let env = Env::new();
    env.snapshot(&billing_and_orders());
    env
}

#[test]
fn validate_valid_files() {
    let env = files();
    snap!("validate_ok", env.text(&["validate"]));
}

#[test]
fn validate_one_file_with_several_problems() {
    let env = files();
    env.edit(SINK, "kafka_partition: 1", "kafka_partition: 0");
    env.edit(SINK, "kafka_offset: 700", "kafka_offset: -7");
    env.edit(
        SINK,
        "checksum:",
        "config:\n  db.password: hunter2\nchecksum:",
    );
    snap!("validate_several_problems", env.text(&["validate", SINK]));
}

#[test]
fn validate_a_directory_of_bad_files() {
    let env = files();
    let (src, sink) = (env.read(SOURCE), env.read(SINK));
    let bad = [
        (
            "syntax",
            src.replace("kind: ConnectorOffsets", "kind: [Oops"),
        ),
        (
            "unknown-field",
            src.replace("checksum:", "extra: 1\nchecksum:"),
        ),
        (
            "api-version",
            src.replace("apiVersion: kco/v1", "apiVersion: kco/v2"),
        ),
        (
            "checksum",
            sink.replace("kafka_offset: 700", "kafka_offset: 701"),
        ),
        ("nested", src.replace("position: 9", "position: {a: 1}")),
        // A typo in an offset key of a class with a known shape.
        ("shape", src.replace("position: 9", "posiiton: 9")),
    ];
    for (name, text) in &bad {
        env.write(&format!("bad/{name}.yaml"), text);
    }
    snap!("validate_bad_dir", env.text(&["validate", "bad"]));
}

#[test]
fn validate_without_a_snapshots_dir() {
    snap!("validate_no_dir", Env::new().text(&["validate"]));
}

#[test]
fn fmt_check_then_fix() {
    let env = files();
    snap!("fmt_check_clean", env.text(&["fmt", "--check"]));
    env.edit(SINK, "kafka_offset: 700", "kafka_offset: 600");
    snap!("fmt_check_edited", env.text(&["fmt", "--check"]));
    snap!("fmt_fix", env.text(&["fmt"]));
    snap!("fmt_fixed", env.text(&["fmt"]));
}

#[test]
fn fmt_leaves_a_broken_file_alone() {
    let env = files();
    env.edit(SOURCE, "offsets:\n", "offsets: [\n");
    snap!("fmt_broken", env.text(&["fmt"]));
}

#[test]
fn schema_prints_json_schema() {
    let out = Env::new().text(&["schema"]);
    let head: Vec<&str> = out.lines().take(8).collect();
    snap!("schema_head", head.join("\n") + "\n...\n");
}
