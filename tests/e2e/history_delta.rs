//! A merged pull request applied as a delta on the real test bed (issue 26): `apply --commit`
//! rewinds the partition the pull request rewound, resets the one it removed (refused under
//! `--fail-on reset`), and leaves the partition it did not touch where live has it.

use serde_json::Value;

use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, testbed, unique_name,
};
use crate::kco_steps::{apply_snapshots, set_offsets, testbed_env, write_snapshot};
use crate::support::data::sink_entry;
use crate::support::git::git;

/// Offsets as sorted JSON texts, for comparing sets.
fn sorted(offsets: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = offsets
        .iter()
        .filter(|e| !e["offset"].is_null())
        .map(Value::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn apply_of_a_merge_moves_only_what_the_pull_request_changed() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let snaps = env.path().join("snapshots");
    let topics: Vec<String> = (1..=3)
        .map(|i| unique_name(&format!("kco-e2e-delta{i}")))
        .collect();
    let inputs: Vec<_> = (1..=3)
        .map(|i| env.path().join(format!("in{i}.txt")))
        .collect();
    let mut sources = Vec::new();
    for (i, (t, f)) in topics.iter().zip(&inputs).enumerate() {
        append_lines(f, &numbered(&format!("t{i}"), 1..=20));
        sources.push(a.create(
            &unique_name(&format!("kco-e2e-delta-src{i}")),
            file_source_config(f, t),
        ));
    }
    let out = env.path().join("sink.out");
    let sink = a.create(
        &unique_name("kco-e2e-delta-sink"),
        file_sink_config(&out, &topics.join(",")),
    );
    let name = sink.name().to_string();
    let at = |offs: [i64; 3]| -> Vec<String> {
        let entries: Vec<Value> = topics
            .iter()
            .zip(offs)
            .filter(|(_, o)| *o >= 0)
            .map(|(t, o)| sink_entry(t, 0, o))
            .collect();
        sorted(&entries)
    };
    let want = at([20, 20, 20]);
    a.wait_offsets(&name, "20 on each topic", |o| sorted(o) == want);

    // The nightly commits the snapshot; a pull request rewinds topic 1 by 5 and removes
    // topic 3's partition; it is merged.
    git(env.path(), &["init", "-q", "-b", "main"]);
    let file = write_snapshot(&a, &name, "a", &snaps, false);
    git(env.path(), &["add", "-A"]);
    git(
        env.path(),
        &[
            "commit",
            "-q",
            "-m",
            "offsets of a",
            "-m",
            "Kco-Snapshot: a",
        ],
    );
    git(env.path(), &["checkout", "-q", "-b", "pr"]);
    set_offsets(
        &file,
        vec![sink_entry(&topics[0], 0, 15), sink_entry(&topics[1], 0, 20)],
    );
    git(
        env.path(),
        &["commit", "-q", "-am", "rewind topic 1, drop topic 3"],
    );
    git(env.path(), &["checkout", "-q", "main"]);
    git(
        env.path(),
        &["merge", "-q", "--no-ff", "-m", "merge pr", "pr"],
    );

    // Live moves on past the nightly on topics 2 and 3, then the sink is stopped so that
    // what the apply writes can be read back as it is.
    append_lines(&inputs[1], &numbered("t1", 21..=25));
    append_lines(&inputs[2], &numbered("t2", 21..=25));
    let moved = at([20, 25, 25]);
    a.wait_offsets(&name, "25 on topics 2 and 3", |o| sorted(o) == moved);
    a.stop(&name);
    a.wait_stopped(&name);

    let (code, stdout, stderr) = apply_snapshots(&env, &["--commit", "HEAD", "--fail-on", "reset"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{name} {}/0: [OFFSET RESET]", topics[2])),
        "{stderr}"
    );
    assert_eq!(sorted(&a.offsets(&name)), moved, "refused: nothing changed");

    let (code, stdout, stderr) = apply_snapshots(&env, &["--commit", "HEAD"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("1 other partition not in the change, left as live has it"),
        "{stdout}"
    );
    // Topic 1 rewound to 15, topic 3's offset gone, topic 2 still at 25 (the file's 20 was
    // not part of the change).
    let expected = at([15, 25, -1]);
    let got = a.wait_offsets(&name, "the delta applied", |o| sorted(o) == expected);
    assert_eq!(sorted(&got), expected);
    assert_eq!(a.state(&name), "STOPPED", "left STOPPED as it was");
    drop(sources);
}
