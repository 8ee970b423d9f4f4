use super::*;
use crate::engine::interchange::{import_body, ImportMeta};
use crate::model::ConnectorType;

fn imported(body: &str, t: Option<ConnectorType>) -> OffsetsFile {
    let meta = ImportMeta {
        name: "orders".into(),
        cluster: "a".into(),
        connector_type: t,
    };
    import_body(Path::new("in.json"), body, 0, &meta).unwrap()
}

const ONE: &str = r#"{"offsets":[{"partition":{"kafka_topic":"o","kafka_partition":0},"offset":{"kafka_offset":1}}]}"#;
const TWO: &str = r#"{"offsets":[{"partition":{"kafka_topic":"o","kafka_partition":0},"offset":{"kafka_offset":2}}]}"#;

#[test]
fn creates_then_keeps_metadata_and_reports_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        vec![imported(ONE, None)],
        Destination::Snapshots(dir.path()),
    )
    .unwrap();
    assert_eq!(r[0].outcome, ImportOutcome::Created);
    let path = dir.path().join("a/orders.yaml");
    // A file captured by `snapshot` has a class and a config: an import keeps them.
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "  type: sink\n",
        "  connectorClass: K\n  type: sink\n  state: RUNNING\n",
    );
    let text = text.replace("checksum:", "config:\n  topics: o\nchecksum:");
    std::fs::write(&path, &text).unwrap();
    let r = write(
        vec![imported(ONE, None)],
        Destination::Snapshots(dir.path()),
    )
    .unwrap();
    assert_eq!(r[0].outcome, ImportOutcome::Unchanged);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let r = write(
        vec![imported(TWO, None)],
        Destination::Snapshots(dir.path()),
    )
    .unwrap();
    assert_eq!(r[0].outcome, ImportOutcome::Updated);
    let now = std::fs::read_to_string(&path).unwrap();
    assert!(
        now.contains("connectorClass: K") && now.contains("topics: o"),
        "{now}"
    );
    assert!(
        now.contains("kafka_offset: 2") && !now.contains("state:"),
        "{now}"
    );
}

#[test]
fn refuses_a_file_of_another_type_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        vec![imported(ONE, None)],
        Destination::Snapshots(dir.path()),
    )
    .unwrap();
    let before = std::fs::read(dir.path().join("a/orders.yaml")).unwrap();
    let e = write(
        vec![imported(ONE, Some(ConnectorType::Source))],
        Destination::Snapshots(dir.path()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("already holds sink"), "{e}");
    assert_eq!(
        std::fs::read(dir.path().join("a/orders.yaml")).unwrap(),
        before
    );
}

#[test]
fn one_file_only_for_out() {
    let two = vec![imported(ONE, None), imported(TWO, None)];
    assert!(matches!(
        write(two, Destination::Stdout),
        Err(Error::Usage(_))
    ));
    let r = write(vec![imported(ONE, None)], Destination::Stdout).unwrap();
    assert_eq!(
        (r[0].outcome, r[0].path.is_none()),
        (ImportOutcome::Printed, true)
    );
    assert!(r[0].text.starts_with("# yaml-language-server"));
}

/// An import into the snapshots directory writes the schema its files' `$schema` line points
/// at; one to a file of the user's choosing (`--out`) writes nothing else.
#[test]
fn the_schema_goes_where_the_imported_files_point() {
    let dir = tempfile::tempdir().unwrap();
    write(
        vec![imported(ONE, None)],
        Destination::Snapshots(dir.path()),
    )
    .unwrap();
    let text = std::fs::read_to_string(dir.path().join("a/orders.yaml")).unwrap();
    assert!(text.starts_with("# yaml-language-server: $schema=../connector-offsets-v1.json\n"));
    let schema = dir.path().join("connector-offsets-v1.json");
    assert_eq!(
        std::fs::read_to_string(schema).unwrap(),
        crate::model::file::schema_json()
    );
    let other = tempfile::tempdir().unwrap();
    let out = other.path().join("x/orders.yaml");
    write(vec![imported(ONE, None)], Destination::File(&out)).unwrap();
    let listed: Vec<_> = std::fs::read_dir(other.path().join("x")).unwrap().collect();
    assert_eq!(listed.len(), 1);
}
