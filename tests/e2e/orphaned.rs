//! `kco ls --orphaned` and `kco reset --orphaned` on the real test bed: a deleted FileStream
//! source's offsets stay in the workers' offsets topic, and a deleted FileStream sink's in its
//! consumer group; kco finds them there at the position Connect committed, deletes them so
//! that a connector created under the name starts afresh, and its undo writes them back.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, output_text, sink_offset,
    source_position, testbed, unique_name, wait_for, write_lines, Connect, Testbed, TopicReader,
};
use crate::kco_steps::{count, review, testbed_env, write_snapshot};
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::run::hermetic;

#[test]
fn a_deleted_sources_offsets_are_found_in_the_offsets_topic_at_the_committed_position() {
    let Some(tb) = testbed() else { return };
    let (a, env, input, len) = on_a_with_a_file(&tb, &numbered("left", 0..7));
    let topic = unique_name("kco-e2e-orphaned");
    let reader = TopicReader::start(&a, &topic, env.path());
    let gone = unique_name("kco-e2e-orphaned-src");
    let kept = unique_name("kco-e2e-orphaned-kept");
    let src = a.create(&gone, file_source_config(&input, &topic));
    let _kept = a.create(&kept, file_source_config(&input, &topic));
    for name in [&gone, &kept] {
        a.wait_read(name, &input);
    }
    reader.wait_lines(14);

    let listed = |env: &TestEnv| {
        let (code, out, err) = env
            .kco(&["--cluster", "a", "ls", "--orphaned", "-o", "json"])
            .parts();
        assert_eq!(code, 0, "kco ls --orphaned: {out}{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["topic"], "kco-a-offsets");
        v["sources"].as_array().unwrap().clone()
    };
    let find = |orphans: &[Value], name: &str| orphans.iter().find(|o| o["name"] == name).cloned();
    let before = listed(&env);
    assert!(
        find(&before, &gone).is_none(),
        "a live connector's offsets are its own"
    );
    assert!(find(&before, &kept).is_none());

    drop(src);
    // The other worker may list the connector for a moment after its deletion.
    let (after, left) = wait_for(
        "the deleted source's offsets left over",
        Duration::from_secs(30),
        || {
            let after = listed(&env);
            match find(&after, &gone) {
                Some(left) => Ok((after, left)),
                None => Err(format!("{after:?}")),
            }
        },
    );
    let partitions = left["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 1, "{left}");
    assert_eq!(
        partitions[0]["partition"]["filename"],
        input.to_str().unwrap()
    );
    assert_eq!(
        partitions[0]["offset"]["position"], len,
        "the file's byte count"
    );
    assert!(
        find(&after, &kept).is_none(),
        "the connector still there is not listed"
    );
    let (code, out, err) = env.kco(&["--cluster", "a", "ls", "--orphaned"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&gone) && !out.contains(&kept), "{out}");
}

/// Cluster a, kco with a kco.yaml naming its Kafka and offsets topic, and `in.txt` there
/// holding `lines`: (a, kco, the file, its byte count).
fn on_a_with_a_file(tb: &Testbed, lines: &[String]) -> (Connect, TestEnv, PathBuf, i64) {
    let a = tb.a();
    let env = testbed_env(tb);
    with_offsets_topic(&env, tb);
    let input = env.path().join("in.txt");
    write_lines(&input, lines);
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    (a, env, input, len)
}

/// kco.yaml naming cluster `a`'s Kafka and offsets topic.
fn with_offsets_topic(env: &TestEnv, tb: &Testbed) {
    std::fs::write(env.path().join("kco.yaml"), cluster_a(tb)).unwrap();
}

fn cluster_a(tb: &Testbed) -> String {
    format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{}\"}}\n    connectTopics: {{offsets: kco-a-offsets}}\n",
        tb.a_urls.join(", "),
        tb.kafka()
    )
}

/// The name's leftovers as `kco ls --orphaned -o json` lists them (`None`: nothing left).
fn left_by(env: &TestEnv, name: &str) -> Option<Value> {
    left_in(env, "sources", name)
}

/// The name's leftovers in a sink's consumer group, as `kco ls --orphaned -o json` lists them.
fn sink_left_by(env: &TestEnv, name: &str) -> Option<Value> {
    left_in(env, "sinks", name)
}

fn left_in(env: &TestEnv, list: &str, name: &str) -> Option<Value> {
    let (code, out, err) = env
        .kco(&["--cluster", "a", "ls", "--orphaned", "-o", "json"])
        .parts();
    assert_eq!(code, 0, "kco ls --orphaned: {out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    crate::support::json::find_named(&v, list, name).cloned()
}

/// `kco reset --orphaned NAME --yes -o json`, which must succeed with one write of `writes`
/// (`writes`: the offsets topic's keys, `groupWrites`: a sink's group's offsets); the backup.
fn reset_orphaned(env: &TestEnv, name: &str, writes: &str) -> String {
    let args = [
        "--cluster",
        "a",
        "reset",
        "--orphaned",
        name,
        "--yes",
        "-o",
        "json",
    ];
    let (code, out, err) = env.kco(&args).parts();
    assert_eq!(code, 0, "kco reset --orphaned: {out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["plan"][writes].as_array().unwrap().len(), 1, "{v}");
    v["backup"]["dir"].as_str().unwrap().to_string()
}

/// [`reset_orphaned`] of `name`'s leftovers `left` (in `list`: `sources`, `sinks`): none are
/// left, then the reset's undo puts them back as they were.
fn reset_and_undo(env: &TestEnv, name: &str, list: &str, writes: &str, left: &Value) {
    let backup = reset_orphaned(env, name, writes);
    assert_eq!(
        left_in(env, list, name),
        None,
        "nothing left of {name} in {list}"
    );
    let (code, out, err) = env.kco(&["undo", &backup, "--yes"]).parts();
    assert_eq!(code, 0, "kco undo: {out}{err}");
    let back = left_in(env, list, name).expect("the undo puts the offsets back");
    assert_eq!(back["partitions"], left["partitions"]);
}

/// A deleted FileStream sink's committed offsets stay in its consumer group
/// (`connect-<name>`): kco lists them at the records the sink wrote, deletes them so that a
/// sink created under the name reads its topic from the beginning, and its undo commits them
/// back; while the name's sink runs (its group has members), nothing is listed.
#[test]
fn a_deleted_sinks_group_offsets_are_listed_reset_and_put_back_and_a_sink_of_its_name_starts_over()
{
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    // Cluster b too: its connectors' groups are on the same Kafka.
    std::fs::write(
        env.path().join("kco.yaml"),
        format!("{}  b:\n    urls: [{}]\n", cluster_a(&tb), tb.b_url),
    )
    .unwrap();
    let input = env.path().join("in.txt");
    write_lines(&input, &numbered("sunk", 0..6));
    let topic = unique_name("kco-e2e-orphaned-sink");
    let _source = a.create(
        &unique_name("kco-e2e-orphaned-sink-src"),
        file_source_config(&input, &topic),
    );
    let name = unique_name("kco-e2e-orphaned-sink");
    let first_out = env.path().join("first.out");
    let sink = a.create(&name, file_sink_config(&first_out, &topic));
    a.wait_offsets(&name, "kafka_offset 6", |o| {
        sink_offset(o, &topic) == Some(6)
    });
    // A sink of cluster b, stopped: its group has offsets and no member, and is b's.
    let b = tb.b();
    let on_b = unique_name("kco-e2e-orphaned-sink-b");
    let _on_b = b.create(&on_b, file_sink_config(&env.path().join("b.out"), &topic));
    b.wait_offsets(&on_b, "kafka_offset 6", |o| {
        sink_offset(o, &topic) == Some(6)
    });
    b.stop(&on_b);
    assert_eq!(
        sink_left_by(&env, &name),
        None,
        "a live sink's group is its own"
    );

    drop(sink);
    // Its task leaves the group as it stops.
    let left = wait_for(
        &format!("{name}'s group left over"),
        Duration::from_secs(60),
        || sink_left_by(&env, &name).ok_or_else(|| "not listed".to_string()),
    );
    assert_eq!(left["group"], format!("connect-{name}"), "{left}");
    let partitions = left["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 1, "{left}");
    assert_eq!(partitions[0]["partition"]["kafka_topic"], topic.as_str());
    assert_eq!(
        partitions[0]["offset"]["kafka_offset"], 6,
        "the records written"
    );
    let (code, out, err) = env.kco(&["--cluster", "a", "ls", "--orphaned"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with(&name))
        .unwrap_or_default();
    assert!(
        row.contains("sink") && row.contains(&format!("connect-{name}")),
        "{out}"
    );
    assert_eq!(
        sink_left_by(&env, &on_b),
        None,
        "cluster b's stopped sink's group"
    );
    let (code, out, err) = env
        .kco(&["--cluster", "a", "reset", "--orphaned", &on_b, "--yes"])
        .parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("did not match any connector"), "{err}");
    b.wait_offsets(&on_b, "b's offsets kept", |o| {
        sink_offset(o, &topic) == Some(6)
    });

    // Nothing left in the group; the undo commits the offsets back, as they were.
    reset_and_undo(&env, &name, "sinks", "groupWrites", &left);

    // Reset again: a sink of the same name reads the topic from its first record.
    reset_orphaned(&env, &name, "groupWrites");
    let again_out = env.path().join("again.out");
    let _again = a.create(&name, file_sink_config(&again_out, &topic));
    a.wait_offsets(&name, "kafka_offset 6 again", |o| {
        sink_offset(o, &topic) == Some(6)
    });
    let lines = std::fs::read_to_string(&again_out).unwrap_or_default();
    assert_eq!(
        lines.lines().collect::<Vec<_>>(),
        numbered("sunk", 0..6),
        "the whole topic again, from its beginning"
    );
}

#[test]
fn a_reset_of_a_deleted_sources_leftovers_makes_a_source_of_its_name_start_afresh_and_undo_puts_them_back(
) {
    let Some(tb) = testbed() else { return };
    let (a, env, input, len) = on_a_with_a_file(&tb, &numbered("again", 0..5));
    let topic = unique_name("kco-e2e-reset-orphaned");
    let reader = TopicReader::start(&a, &topic, env.path());
    let name = unique_name("kco-e2e-reset-orphaned-src");
    let src = a.create(&name, file_source_config(&input, &topic));
    a.wait_read(&name, &input);
    reader.wait_lines(5);

    // While the connector exists its offsets are its own: refused, nothing written.
    let (code, out, err) = env
        .kco(&["--cluster", "a", "reset", "--orphaned", &name, "--yes"])
        .parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("exists on cluster `a` now"), "{err}");

    drop(src);
    let left = wait_for(
        &format!("{name}'s offsets left over"),
        Duration::from_secs(30),
        || left_by(&env, &name).ok_or_else(|| "not listed".to_string()),
    );
    assert_eq!(left["partitions"][0]["offset"]["position"], len);

    // A dry run plans the deletion and writes nothing.
    let (code, out, err) = env
        .kco(&["--cluster", "a", "reset", "--orphaned", &name, "--dry-run"])
        .parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&name) && out.contains("(deleted)"), "{out}");
    assert!(left_by(&env, &name).is_some(), "a dry run writes nothing");

    // Nothing left under the name; the undo writes the offsets back, as they were.
    reset_and_undo(&env, &name, "sources", "writes", &left);

    // Reset again, then a source of the same name reads the file from its beginning: the
    // topic gets its five records a second time.
    let backup = reset_orphaned(&env, &name, "writes");
    let again = a.create(&name, file_source_config(&input, &topic));
    let lines = reader.wait_lines_settled(10);
    assert_eq!(lines.len(), 10, "re-delivered exactly once more: {lines:?}");
    a.wait_offsets(&name, "the whole file read again", |o| {
        source_position(o, &input) == Some(len)
    });
    // Where the source stands where the backup has it, its undo has nothing to write.
    let (code, out, err) = env.kco(&["undo", &backup, "--yes"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("No changes."), "{out}");
    // Past it, the undo meets a connector of the name: refused, nothing written.
    let mut more = numbered("again", 0..5);
    more.extend(numbered("more", 0..2));
    write_lines(&input, &more);
    let grown = std::fs::metadata(&input).unwrap().len() as i64;
    a.wait_offsets(&name, "the grown file read", |o| {
        source_position(o, &input) == Some(grown)
    });
    let (code, out, err) = env.kco(&["undo", &backup, "--yes"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("exists on cluster `a` now"), "{err}");
    a.wait_offsets(&name, "the position kept", |o| {
        source_position(o, &input) == Some(grown)
    });
    drop(again);
}

/// A name whose earlier connectors left offsets in the topic: `apply --create` of its file
/// leaves the file's offsets only (a merge would resume the new connector from the old
/// ones), and says what it removed.
#[test]
fn a_connector_created_under_a_name_with_leftovers_gets_the_files_offsets_only() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    if !a.supports_initial_state() {
        // Before 3.7 kco does not create connectors (tests/e2e/apply.rs: the refusal).
        return;
    }
    let env = testbed_env(&tb);
    let (new_in, old_in) = (env.path().join("new.txt"), env.path().join("old.txt"));
    write_lines(&new_in, &numbered("new", 0..4));
    write_lines(&old_in, &numbered("old", 0..3));
    let len = |p: &std::path::Path| std::fs::metadata(p).unwrap().len() as i64;
    let topic = unique_name("kco-e2e-create-left");
    let name = unique_name("kco-e2e-create-left-src");
    // The connector the file records: reading new.txt, captured while running.
    let first = a.create(&name, file_source_config(&new_in, &topic));
    a.wait_offsets(&name, "new.txt read", |o| {
        source_position(o, &new_in) == Some(len(&new_in))
    });
    let snap = write_snapshot(&a, &name, "a", &env.path().join("snapshots"), true);
    a.stop(&name);
    drop(first);
    // A later life of the name, on another file; deleted too, its offsets stay behind.
    let later = a.create(&name, file_source_config(&old_in, &topic));
    a.wait_offsets(&name, "old.txt read", |o| {
        source_position(o, &old_in) == Some(len(&old_in))
    });
    a.stop(&name);
    drop(later);
    a.wait_gone(&name);

    // The plan says so where kco.yaml names the offsets topic (a dry run: nothing made).
    with_offsets_topic(&env, &tb);
    let snap_arg = snap.to_str().unwrap();
    let (code, out, err) = env
        .kco(&["--cluster", "a", "apply", snap_arg, "--create", "--dry-run"])
        .parts();
    assert_eq!(code, 0, "kco apply --create --dry-run: {out}{err}");
    assert!(
        err.contains(&format!(
            "`{name}` (to create) has offsets left in topic `kco-a-offsets`"
        )) && err.contains("2 partitions"),
        "{out}{err}"
    );
    assert!(!a.has_connector(&name), "a dry run creates nothing");

    let _created = a.adopt(&name);
    let (code, out, err) = env
        .kco(&[
            "--cluster",
            "a",
            "apply",
            snap.to_str().unwrap(),
            "--create",
            "--yes",
        ])
        .parts();
    assert_eq!(code, 0, "kco apply --create: {out}{err}");
    assert!(
        format!("{out}{err}").contains("left by an earlier connector of its name"),
        "{out}{err}"
    );
    a.wait_running(&name);
    let live = a.offsets(&name);
    assert_eq!(source_position(&live, &new_in), Some(len(&new_in)));
    assert_eq!(
        source_position(&live, &old_in),
        None,
        "the other file's leftover removed: {live:?}"
    );
    assert_eq!(live.len(), 1, "{live:?}");
}

/// A deleted sink with a consumer group of its own (`consumer.override.group.id`) left its
/// offsets in that group, which no `connect-*` name gives away: its snapshot file names it,
/// so `kco ls --orphaned` lists it there, and `kco reset --orphaned` deletes them.
#[test]
fn a_deleted_sinks_own_group_is_found_through_its_snapshot_file() {
    let Some(tb) = testbed() else { return };
    let (a, env, input, _) = on_a_with_a_file(&tb, &numbered("own", 0..4));
    let topic = unique_name("kco-e2e-orphaned-own");
    let _source = a.create(
        &unique_name("kco-e2e-orphaned-own-src"),
        file_source_config(&input, &topic),
    );
    let name = unique_name("kco-e2e-orphaned-own-sink");
    let group = format!("{name}-group");
    let mut config = file_sink_config(&env.path().join("out.txt"), &topic);
    config["consumer.override.group.id"] = Value::String(group.clone());
    let sink = a.create(&name, config);
    a.wait_offsets(&name, "kafka_offset 4", |o| {
        sink_offset(o, &topic) == Some(4)
    });
    let (code, out, err) = env
        .kco(&["--cluster", "a", "snapshot", &name, "--with-config"])
        .parts();
    assert_eq!(code, 0, "{out}{err}");
    drop(sink);
    let left = wait_for(
        &format!("{name}'s own group left over"),
        Duration::from_secs(60),
        || sink_left_by(&env, &name).ok_or_else(|| "not listed".to_string()),
    );
    assert_eq!(left["group"], group.as_str(), "{left}");
    assert_eq!(left["partitions"][0]["offset"]["kafka_offset"], 4, "{left}");

    // Without its file, nothing names the group.
    let file = env.path().join(format!("snapshots/a/{name}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(sink_left_by(&env, &name), None, "no file, no group");
    // With it, reset deletes what the group holds.
    std::fs::write(&file, text).unwrap();
    reset_orphaned(&env, &name, "groupWrites");
    assert_eq!(sink_left_by(&env, &name), None, "nothing left in its group");
}

/// The review of a pull request that rewinds a deleted sink's file: the sink's consumer group
/// kept the offsets it committed, from which a sink created under its name (`apply
/// --create` on merge) resumes. The file was captured at 20 records; the sink went on to 26
/// before it was deleted; the pull request rewinds the file by 5, to 15. `kco diff --base`
/// labels the change against the group: REPROCESSING 11 records (not NEW PARTITION), and
/// `pr-review.sh` blocks it unless the pull request carries the allowing label. The plan of
/// `apply --create` says the same (`--fail-on reprocessing` refuses it); applied, the sink
/// created under the name writes those 11 records again.
#[test]
fn the_review_of_a_deleted_sinks_rewind_is_labelled_against_its_groups_offsets() {
    let Some(tb) = testbed() else { return };
    let (a, env, input, _) = on_a_with_a_file(&tb, &numbered("rev", 0..20));
    let topic = unique_name("kco-e2e-review-gone");
    let _source = a.create(
        &unique_name("kco-e2e-review-gone-src"),
        file_source_config(&input, &topic),
    );
    let name = unique_name("kco-e2e-review-gone-sink");
    let sink = a.create(&name, file_sink_config(&env.path().join("out.txt"), &topic));
    a.wait_offsets(&name, "kafka_offset 20", |o| {
        sink_offset(o, &topic) == Some(20)
    });
    let d = env.path();
    let file = write_snapshot(&a, &name, "a", &d.join("snapshots"), true);
    git(d, &["init", "-q", "-b", "main"]);
    git(d, &["add", "snapshots"]);
    git(d, &["commit", "-qm", "nightly"]);
    append_lines(&input, &numbered("more", 0..6));
    a.wait_offsets(&name, "kafka_offset 26", |o| {
        sink_offset(o, &topic) == Some(26)
    });
    drop(sink);
    // Once its task has left the group, the group is the deleted sink's leftover.
    let left = wait_for(
        &format!("{name}'s group left over"),
        Duration::from_secs(60),
        || sink_left_by(&env, &name).ok_or_else(|| "not listed".to_string()),
    );
    assert_eq!(
        left["partitions"][0]["offset"]["kafka_offset"], 26,
        "{left}"
    );

    git(d, &["checkout", "-qb", "rewind"]);
    let at = |n: i64| serde_json::json!([{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": n}}]);
    crate::support::data::hand_edit(&file, at(15));
    git(d, &["commit", "-qam", "replay the last 5 records"]);

    let (code, out, err) = env
        .kco(&["--cluster", "a", "diff", "--base", "main", "-o", "json"])
        .parts();
    assert_eq!(code, 2, "kco diff --base: {out}{err}");
    assert_eq!(
        review(&out, &name),
        [(
            topic.clone(),
            "REPROCESSING".to_string(),
            "11 records will be reprocessed (duplicates downstream)".to_string()
        )],
        "{out}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = crate::support::json::named(&v, "connectors", &name);
    assert_eq!(
        c["leftovers"],
        serde_json::json!({"against": "group", "group": format!("connect-{name}"), "partitions": 1}),
        "{out}"
    );
    let (code, text, err) = env
        .kco(&["--cluster", "a", "diff", "--base", "main"])
        .parts();
    assert_eq!(code, 2, "{text}{err}");
    assert!(
        text.contains(&format!(
            "resumes from the offsets its consumer group `connect-{name}` still holds (1 partition)"
        )) && text.contains(&format!(
            "{topic}/0: left {{\"kafka_offset\":26}} -> {{\"kafka_offset\":15}}"
        )),
        "{text}"
    );

    let body = d.join("review.md");
    let (code, said) = pr_review(d, &body, "");
    assert_eq!(code, 1, "blocked without the label: {said}");
    assert!(said.contains("pr-review: blocked: REPROCESSING"), "{said}");
    let (code, said) = pr_review(d, &body, "offsets-risk-accepted");
    assert_eq!(code, 0, "the label accepts it: {said}");
    let comment = std::fs::read_to_string(&body).unwrap();
    assert!(
        comment.contains("REPROCESSING accepted by the label"),
        "{comment}"
    );
    if !a.supports_initial_state() {
        // Before 3.7 kco does not create connectors (tests/e2e/apply.rs: the refusal).
        return;
    }

    // The apply on merge plans the same: `--fail-on reprocessing` refuses it, nothing made.
    let file_arg = file.to_str().unwrap();
    let apply = ["--cluster", "a", "apply", file_arg, "--create"];
    let (code, out, err) = env
        .kco(&[&apply[..], &["--fail-on", "reprocessing", "--yes"]].concat())
        .parts();
    assert_eq!(code, 1, "refused: {out}{err}");
    assert!(
        format!("{out}{err}").contains("11 records will be reprocessed"),
        "{out}{err}"
    );
    assert!(!a.has_connector(&name), "a refused plan creates nothing");
    // Applied, the sink created under the name writes the 11 records again, and only them.
    let _created = a.adopt(&name);
    let (code, out, err) = env.kco(&[&apply[..], &["--yes"]].concat()).parts();
    assert_eq!(code, 0, "kco apply --create: {out}{err}");
    a.wait_offsets(&name, "kafka_offset 26 again", |o| {
        sink_offset(o, &topic) == Some(26)
    });
    let out = env.path().join("out.txt");
    let twice: Vec<String> = numbered("rev", 0..20)
        .into_iter()
        .chain(numbered("more", 0..6))
        .filter(|l| count(&out, l) == 2)
        .collect();
    assert_eq!(
        twice,
        [numbered("rev", 15..20), numbered("more", 0..6)].concat(),
        "the 11 records after 15, each written once more"
    );
}

/// `examples/ci/pr-review.sh main BODY` in `dir` with the pull request's `labels`: its exit
/// code and what it said.
fn pr_review(dir: &Path, body: &Path, labels: &str) -> (i32, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci/pr-review.sh");
    let home = tempfile::tempdir().unwrap();
    let mut sh = Command::new("sh");
    let out = hermetic(&mut sh, home.path())
        .arg(script)
        .args(["main", body.to_str().unwrap()])
        .current_dir(dir)
        .env("KCO", env!("CARGO_BIN_EXE_kco"))
        .env("PR_LABELS", labels)
        .output()
        .expect("run pr-review.sh");
    (out.status.code().unwrap_or(-1), output_text(&out))
}

/// A new topic of `partitions` partitions on the test bed's Kafka (kco creates none).
fn create_topic(tb: &Testbed, topic: &str, partitions: i32) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = rskafka::client::ClientBuilder::new(vec![tb.kafka()])
            .build()
            .await
            .unwrap();
        client
            .controller_client()
            .unwrap()
            .create_topic(topic, partitions, 1, 30_000)
            .await
            .unwrap();
    });
}

/// The plain write `reset --orphaned` and an apply through Kafka fall back to where no
/// transaction can start, on the real broker: each record lands on its partition in order,
/// with its key, value (a tombstone kept as one) and timestamp, as one read back sees them;
/// the end offsets and partition counts kco reads agree; a partition the topic lacks and a
/// topic that does not exist are refused with nothing written, and the missing topic is not
/// created by asking for it.
#[test]
fn a_plain_write_lands_in_order_and_nothing_is_written_where_it_cannot_go() {
    let Some(tb) = testbed() else { return };
    let opts = kco::kafka::KafkaOptions {
        bootstrap: vec![tb.kafka()],
        sasl: None,
        tls: None,
        timeout: Duration::from_secs(15),
    };
    let topic = unique_name("kco-e2e-plain");
    // The topic, made by the test (kco creates none).
    create_topic(&tb, &topic, 2);
    let record = |partition: i32, key: &str, value: Option<&str>| kco::kafka::OutRecord {
        partition,
        key: key.as_bytes().to_vec(),
        value: value.map(|v| v.as_bytes().to_vec()),
    };
    let ts = 1_700_000_000_123;
    let records = [
        record(0, "a", Some("1")),
        record(1, "b", Some("2")),
        record(0, "c", None),
        record(0, "d", Some("4")),
    ];
    // Once: kco waits for the new topic's leaders itself.
    kco::kafka::produce(&opts, &topic, &records, ts).unwrap();
    let mut read = Vec::new();
    let ends = kco::kafka::scan_topic(&opts, &topic, &mut |p, r| {
        let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        read.push((p, r.offset, r.timestamp_ms, text(r.key), text(r.value)));
    })
    .unwrap();
    let s = |t: &str| Some(t.to_string());
    assert_eq!(
        read,
        vec![
            (0, 0, ts, s("a"), s("1")),
            (0, 1, ts, s("c"), None),
            (0, 2, ts, s("d"), s("4")),
            (1, 0, ts, s("b"), s("2")),
        ]
    );
    assert_eq!(ends.iter().map(|e| e.end).collect::<Vec<_>>(), vec![3, 1]);
    let missing = unique_name("kco-e2e-plain-missing");
    let asked = std::collections::BTreeSet::from([
        (topic.clone(), 0),
        (topic.clone(), 1),
        (topic.clone(), 7),
        (missing.clone(), 0),
    ]);
    assert_eq!(
        kco::kafka::end_offsets::end_offsets(&opts, &asked).unwrap(),
        std::collections::BTreeMap::from([((topic.clone(), 0), 3), ((topic.clone(), 1), 1)])
    );

    let e = kco::kafka::produce(&opts, &topic, &[record(7, "x", Some("y"))], ts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("has 2 partitions, not a partition 7: nothing written")
            && e.matches(&tb.kafka()).count() == 1,
        "{e}"
    );
    let e = kco::kafka::produce(&opts, &missing, &records, ts)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "topic `{missing}` does not exist on the Kafka cluster at {}",
            tb.kafka()
        )
    );
    let topics = kco::kafka::topic_partitions(&opts).unwrap();
    assert_eq!(topics.get(&topic), Some(&2));
    assert!(!topics.contains_key(&missing), "asking for it created it");
    // Nothing more was written by the refused writes.
    let mut after = 0;
    kco::kafka::scan_topic(&opts, &topic, &mut |_, _| after += 1).unwrap();
    assert_eq!(after, 4);
}

/// Two writers of one offsets topic at once, on the real broker (two kco projects sharing a
/// Connect cluster's offsets topic): the second one's transaction starts while the first's is
/// open, which fences the first off (its coordinator aborts it). The first waits until the
/// second's has ended and writes again: both land, each record once, and nothing of the
/// aborted attempt is read.
#[test]
fn a_transaction_fenced_off_by_another_writer_of_the_topic_is_written_again_after_it() {
    let Some(tb) = testbed() else { return };
    let opts = kco::kafka::KafkaOptions {
        bootstrap: vec![tb.kafka()],
        sasl: None,
        tls: None,
        timeout: Duration::from_secs(30),
    };
    let topic = unique_name("kco-e2e-fenced");
    create_topic(&tb, &topic, 2);
    let record = |partition: i32, key: &str| kco::kafka::OutRecord {
        partition,
        key: key.as_bytes().to_vec(),
        value: Some(format!("{key}-value").into_bytes()),
    };
    let id = format!("kco-offsets-{topic}");
    let first = [record(0, "first-a"), record(1, "first-b")];
    let second = [record(0, "second")];
    let mut attempts = 0;
    let mut other = None;
    kco::kafka::txn::produce_observed(&opts, &topic, &first, 1, &id, &mut || {
        attempts += 1;
        if attempts == 1 {
            // Written, not committed: the other writer starts now.
            other = Some(
                kco::kafka::txn::produce(&opts, &topic, &second, 2, &id)
                    .map_err(|e| format!("{e:?}")),
            );
        }
    })
    .unwrap_or_else(|e| panic!("the first writer: {e:?}"));
    assert_eq!(other, Some(Ok(())), "the second writer landed");
    assert_eq!(
        attempts, 2,
        "the first writer was fenced off once, then wrote again"
    );
    let mut read = Vec::new();
    kco::kafka::scan_topic(&opts, &topic, &mut |p, r| {
        let key = String::from_utf8_lossy(r.key.unwrap()).into_owned();
        read.push((p, key));
    })
    .unwrap();
    read.sort();
    let s = |p: i32, k: &str| (p, k.to_string());
    assert_eq!(
        read,
        vec![s(0, "first-a"), s(0, "second"), s(1, "first-b")],
        "each record once, the aborted attempt's none"
    );
}
