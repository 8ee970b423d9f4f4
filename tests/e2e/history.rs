//! `kco apply --changed-since`, `--fail-on` and `--at` on the real test bed, with the snapshot
//! files committed to a git repository as a nightly job would.

use std::path::Path;

use serde_json::json;

use crate::harness::{
    append_lines, file_source_config, numbered, testbed, unique_name, TopicReader,
};
use crate::kco_steps::{apply_snapshots, set_offsets, testbed_env, write_snapshot};
use crate::support::data::sink_entry;
use crate::support::git::git;

fn commit(dir: &Path, msg: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", msg]);
}

#[test]
fn changed_since_moves_only_the_rewound_sink_and_fail_on_refuses_it() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let snaps = env.path().join("snapshots");
    let (t1, t2) = (unique_name("kco-e2e-cs1"), unique_name("kco-e2e-cs2"));
    let (in1, in2) = (env.path().join("in1.txt"), env.path().join("in2.txt"));
    append_lines(&in1, &numbered("one", 1..=20));
    append_lines(&in2, &numbered("two", 1..=20));
    let _s1 = a.create(
        &unique_name("kco-e2e-cs-src1"),
        file_source_config(&in1, &t1),
    );
    let _s2 = a.create(
        &unique_name("kco-e2e-cs-src2"),
        file_source_config(&in2, &t2),
    );
    let r1 = TopicReader::start(&a, &t1, env.path());
    let r2 = TopicReader::start(&a, &t2, env.path());
    let (k1, k2) = (r1.sink.name().to_string(), r2.sink.name().to_string());
    r1.wait_lines(20);
    r2.wait_lines(20);
    a.wait_offsets(&k1, "offset 20", |o| o == [sink_entry(&t1, 0, 20)]);
    a.wait_offsets(&k2, "offset 20", |o| o == [sink_entry(&t2, 0, 20)]);
    git(env.path(), &["init", "-q", "-b", "main"]);
    write_snapshot(&a, &k1, "a", &snaps, false);
    let f2 = write_snapshot(&a, &k2, "a", &snaps, false);
    commit(env.path(), "nightly");
    set_offsets(&f2, vec![sink_entry(&t2, 0, 15)]);
    commit(env.path(), "rewind the second sink");
    // The first sink moves on after the commits: --changed-since must leave it alone.
    append_lines(&in1, &numbered("one", 21..=25));
    r1.wait_lines(25);
    a.wait_offsets(&k1, "offset 25", |o| o == [sink_entry(&t1, 0, 25)]);

    let refused = apply_snapshots(
        &env,
        &["--changed-since", "HEAD~1", "--fail-on", "reprocessing"],
    );
    assert_eq!(refused.0, 1, "{refused:?}");
    assert!(
        refused.2.contains("5 records will be reprocessed"),
        "{refused:?}"
    );
    assert_eq!(a.offsets(&k2), vec![sink_entry(&t2, 0, 20)]);
    assert_eq!(a.state(&k2), "RUNNING");

    let done = apply_snapshots(&env, &["--changed-since", "HEAD~1"]);
    assert_eq!(done.0, 0, "{done:?}");
    assert!(done.1.contains("1 of 2 connectors"), "{}", done.1);
    let got = r2.wait_lines_settled(25);
    assert_eq!(got[20..], numbered("two", 16..=20)[..]);
    assert_eq!(a.offsets(&k1), vec![sink_entry(&t1, 0, 25)]);
    assert_eq!(r1.lines().len(), 25);
}

#[test]
fn apply_at_the_first_nightly_commit_undoes_a_bad_manual_rewind() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let snaps = env.path().join("snapshots");
    let topic = unique_name("kco-e2e-at");
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=10));
    let _src = a.create(
        &unique_name("kco-e2e-at-src"),
        file_source_config(&input, &topic),
    );
    let reader = TopicReader::start(&a, &topic, env.path());
    let sink = reader.sink.name().to_string();
    reader.wait_lines(10);
    a.wait_offsets(&sink, "offset 10", |o| o == [sink_entry(&topic, 0, 10)]);
    git(env.path(), &["init", "-q", "-b", "main"]);
    write_snapshot(&a, &sink, "a", &snaps, false);
    commit(env.path(), "nightly 1");
    // Traffic, then the next nightly snapshot.
    append_lines(&input, &numbered("line", 11..=30));
    reader.wait_lines(30);
    a.wait_offsets(&sink, "offset 30", |o| o == [sink_entry(&topic, 0, 30)]);
    write_snapshot(&a, &sink, "a", &snaps, false);
    commit(env.path(), "nightly 2");
    // A bad manual rewind to 0 on the cluster: everything is consumed again.
    a.stop(&sink);
    a.wait_stopped(&sink);
    assert_eq!(
        a.patch_offsets(&sink, json!([sink_entry(&topic, 0, 0)]))
            .status,
        200
    );
    a.resume(&sink);
    reader.wait_lines_settled(60);

    // Back to where the first nightly commit says: offset 10, so lines 11..30 once more.
    let out = apply_snapshots(&env, &["--at", "HEAD~1"]);
    assert_eq!(out.0, 0, "{out:?}");
    assert!(out.1.contains("Files as of `HEAD~1`"), "{}", out.1);
    let got = reader.wait_lines_settled(80);
    assert_eq!(got.len(), 80, "{got:?}");
    assert_eq!(got[60..], numbered("line", 11..=30)[..]);
    let changed = git(env.path(), &["status", "--porcelain", "--", "snapshots"]);
    assert!(
        changed.is_empty(),
        "the snapshot files are untouched: {changed}"
    );
}
