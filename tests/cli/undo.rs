//! Undo is complete: the backup of an apply with `--create` lists the connectors it created;
//! `kco undo BACKUP` (and `kco apply BACKUP --prune`) deletes them and puts back the offsets
//! it changed, after a plan and --yes.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::{sink_offset as offsets, SnapshotFile, SINK};
use crate::support::env::TestEnv;

fn write_file(dir: &Path, name: &str, offset: i64, with_config: bool) {
    let config: Option<BTreeMap<String, String>> = with_config.then(|| {
        [
            ("connector.class", SINK),
            ("name", name),
            ("topics", "t"),
            ("file", "/tmp/x"),
            ("tasks.max", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    });
    SnapshotFile::sink(name, offsets(offset))
        .class(SINK)
        .config(config)
        .write_in(dir);
}

#[test]
fn undo_deletes_what_apply_created_and_restores_what_it_changed() {
    let t = TestEnv::new();
    let files = t.path().join("files");
    write_file(&files, "old", 5, false);
    write_file(&files, "new", 42, true);
    let fake = FakeConnect::builder()
        .version("4.1.0")
        .sink("old", SINK, State::Running, offsets(100))
        .start();
    let r = t.on(
        &fake,
        &["apply", "files", "--create", "--yes", "--backup-dir", "bk"],
    );
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(fake.state("new"), Some(State::Running));
    let marker: Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("bk/kco-backup.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(marker["created"], json!(["new"]));
    assert_eq!(marker["cluster"], json!("a"));

    // The plan first: nothing changes on a dry run, nor without --yes.
    fake.clear_requests();
    let r = t.on(&fake, &["undo", "bk", "--dry-run"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all().contains("new (sink, RUNNING): created by the operation being undone: stop, delete the offsets of its 1 partition, then delete the connector"),
        "{r}"
    );
    assert!(
        r.all()
            .contains("old (sink, RUNNING): stop, patch 1 partition,"),
        "{r}"
    );
    let r = t.on(&fake, &["undo", "bk"]);
    assert_eq!(r.code, 1, "no terminal, no --yes: refused");
    fake.assert_no_mutations();

    let r = t.on(&fake, &["undo", "bk", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all()
            .contains("ok new: offsets deleted and verified, connector deleted\n"),
        "{r}"
    );
    assert_eq!(fake.state("new"), None, "the created connector is gone");
    assert_eq!(fake.offsets("new"), json!([]), "and its offsets with it");
    assert_eq!(fake.offsets("old"), offsets(100));
    assert_eq!(fake.state("old"), Some(State::Running));

    // Applying the backup directory does the same (a second time: nothing left to do).
    let r = t.on(&fake, &["apply", "bk", "--prune", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(r.all().contains("No changes."), "{r}");
    // Undone again, nothing moves: it says why, and what a rewind that ran since has done.
    let r = t.on(&fake, &["undo", "bk", "--yes"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.all()
            .contains("No changes: every offset already stands where the backup has it.")
            && r.all()
                .contains("delivered twice (an undo cannot take them back)"),
        "{r}"
    );
}
