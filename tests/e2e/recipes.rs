//! The recipes of `examples/ci/` against the real test bed. The nightly: the first night
//! commits the offsets, a night without movement commits nothing, progress is committed, and a
//! rewind done behind kco's back fails the run (exit 2) without a commit. Apply on merge: a
//! merged rewind is applied to the worker once, recorded (`kco log` shows the apply and what
//! it did), and its own record is never applied.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::harness::{
    append_lines, file_source_config, numbered, output_text, source_position, testbed_alone,
    unique_name,
};
use crate::kco_steps::testbed_env;
use crate::support::git::git;
use crate::support::run::hermetic;

/// Runs the nightly script for cluster `a` in `dir`; its exit code and what it said.
fn nightly(dir: &Path) -> (i32, String) {
    recipe(
        dir,
        "nightly-snapshot.sh",
        Path::new(env!("CARGO_BIN_EXE_kco")),
    )
}

/// Runs `examples/ci/<script> a` in `dir` with `kco`; its exit code and what it said.
fn recipe(dir: &Path, script: &str, kco: &Path) -> (i32, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/ci")
        .join(script);
    let home = tempfile::tempdir().unwrap();
    let mut sh = Command::new("sh");
    let out = hermetic(&mut sh, home.path())
        .arg(script)
        .arg("a")
        .current_dir(dir)
        .env("KCO", kco)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run the recipe");
    (out.status.code().unwrap_or(-1), output_text(&out))
}

fn commits(dir: &Path) -> usize {
    git(dir, &["rev-list", "--count", "HEAD"]).parse().unwrap()
}

#[test]
fn the_nightly_recipe_commits_progress_only_and_fails_on_a_rewind() {
    // Alone: the recipe snapshots the whole cluster, which no other test may change meanwhile.
    let Some(tb) = testbed_alone() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=5));
    let name = unique_name("kco-e2e-nightly");
    let config = file_source_config(&input, &unique_name("kco-e2e-nightly"));
    let _source = a.create(&name, config);
    let at = |n: i64| {
        let file = input.clone();
        move |o: &[serde_json::Value]| source_position(o, &file) == Some(n)
    };
    let len = |p: &Path| std::fs::metadata(p).unwrap().len() as i64;
    a.wait_offsets(&name, "all 5 lines read", at(len(&input)));
    git(env.path(), &["init", "-q", "-b", "main"]);

    let (code, said) = nightly(env.path());
    assert_eq!(code, 0, "{said}");
    assert_eq!(commits(env.path()), 1, "the first night commits: {said}");
    let file = env.path().join(format!("snapshots/a/{name}.yaml"));
    assert!(file.is_file(), "{said}");

    let (code, said) = nightly(env.path());
    assert_eq!((code, commits(env.path())), (0, 1), "nothing moved: {said}");

    append_lines(&input, &numbered("line", 6..=8));
    a.wait_offsets(&name, "all 8 lines read", at(len(&input)));
    let (code, said) = nightly(env.path());
    assert_eq!(
        (code, commits(env.path())),
        (0, 2),
        "progress is committed: {said}"
    );

    // Behind kco's back: stopped and rewound to the start of the file.
    a.stop(&name);
    a.wait_stopped(&name);
    let rewind = json!([{"partition": {"filename": input.to_str().unwrap()},
                         "offset": {"position": 0}}]);
    assert_eq!(a.patch_offsets(&name, rewind).status, 200);
    let (code, said) = nightly(env.path());
    assert_eq!(code, 2, "a rewind is drift: {said}");
    assert!(said.contains("nothing committed"), "{said}");
    assert_eq!(commits(env.path()), 2);
    let committed = std::fs::read_to_string(&file).unwrap();
    assert!(
        committed.contains(&format!("position: {}", len(&input))),
        "{committed}"
    );
}

#[test]
fn apply_on_merge_applies_a_merged_rewind_once_and_records_what_it_did() {
    // Alone: the recipe snapshots the whole cluster, which no other test may change meanwhile.
    let Some(tb) = testbed_alone() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=6));
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let name = unique_name("kco-e2e-merge");
    let _source = a.create(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-merge")),
    );
    let file = input.clone();
    a.wait_offsets(&name, "all 6 lines read", move |o| {
        source_position(o, &file) == Some(len)
    });
    // Stopped, so that nothing moves between the recipe's snapshots: the record shows
    // exactly what the apply did (and the apply keeps it STOPPED).
    a.stop(&name);
    let position = |o: &[serde_json::Value]| source_position(o, &input);
    let kco = std::path::PathBuf::from(env!("CARGO_BIN_EXE_kco"));
    let d = env.path();
    git(d, &["init", "-q", "-b", "main"]);
    let (code, said) = nightly(d);
    assert_eq!(code, 0, "{said}");

    // A pull request rewinds the source to byte 7: its file edited by hand, capture time
    // kept, which makes it a change (a file kco rewrote from live would be an observation).
    git(d, &["checkout", "-qb", "rewind"]);
    let at = |pos: i64| json!([{"partition": {"filename": input.to_str().unwrap()}, "offset": {"position": pos}}]);
    crate::support::data::hand_edit(&d.join(format!("snapshots/a/{name}.yaml")), at(7));
    git(d, &["commit", "-qam", "replay from line 2"]);
    git(d, &["checkout", "-q", "main"]);
    git(
        d,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge pull request #9",
            "rewind",
        ],
    );
    let merge = git(d, &["rev-parse", "HEAD"]);

    let (code, said) = recipe(d, "apply-on-merge.sh", &kco);
    assert_eq!(code, 0, "{said}");
    assert_eq!(position(&a.offsets(&name)), Some(7), "{said}");
    assert!(
        git(d, &["log", "-1", "--format=%B"])
            .ends_with(&format!("Kco-Apply: a\nKco-Commit: {merge}")),
        "{said}"
    );
    let r = env.kco(&["--cluster", "a", "log", &name, "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.all());
    let log: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let commits = log["connectors"][0]["commits"].as_array().unwrap();
    let kinds: Vec<&str> = commits
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["apply", "snapshot", "change", "snapshot"]);
    // What the apply did to the worker: back from the end of the file to byte 7.
    let moved = &commits[0]["partitions"][0];
    assert_eq!(moved["direction"], "backward", "{moved}");
    assert_eq!(moved["distance"], len - 7, "{moved}");
    assert_eq!(moved["label"], "reprocessing");

    // The record's own push: nothing to apply, the worker untouched.
    let (code, said) = recipe(d, "apply-on-merge.sh", &kco);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("nothing to apply on cluster a"), "{said}");
    assert_eq!(position(&a.offsets(&name)), Some(7));
}
