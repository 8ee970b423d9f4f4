//! The nightly recipe of `examples/ci/` against the real test bed: the first night commits
//! the offsets, a night without movement commits nothing, progress is committed, and a
//! rewind done behind kco's back fails the run (exit 2) without a commit.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::harness::{
    append_lines, file_source_config, numbered, output_text, source_position, testbed_alone,
    unique_name,
};
use crate::kco_steps::kco_dir;
use crate::support::git::git;
use crate::support::run::hermetic;

/// Runs the nightly script for cluster `a` in `dir`; its exit code and what it said.
fn nightly(dir: &Path) -> (i32, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci/nightly-snapshot.sh");
    let home = tempfile::tempdir().unwrap();
    let mut sh = Command::new("sh");
    let out = hermetic(&mut sh, home.path())
        .arg(script)
        .arg("a")
        .current_dir(dir)
        .env("KCO", env!("CARGO_BIN_EXE_kco"))
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run nightly-snapshot.sh");
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
    let dir = kco_dir(&tb);
    let input = dir.path().join("in.txt");
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
    git(dir.path(), &["init", "-q", "-b", "main"]);

    let (code, said) = nightly(dir.path());
    assert_eq!(code, 0, "{said}");
    assert_eq!(commits(dir.path()), 1, "the first night commits: {said}");
    let file = dir.path().join(format!("snapshots/a/{name}.yaml"));
    assert!(file.is_file(), "{said}");

    let (code, said) = nightly(dir.path());
    assert_eq!((code, commits(dir.path())), (0, 1), "nothing moved: {said}");

    append_lines(&input, &numbered("line", 6..=8));
    a.wait_offsets(&name, "all 8 lines read", at(len(&input)));
    let (code, said) = nightly(dir.path());
    assert_eq!(
        (code, commits(dir.path())),
        (0, 2),
        "progress is committed: {said}"
    );

    // Behind kco's back: stopped and rewound to the start of the file.
    a.stop(&name);
    a.wait_stopped(&name);
    let rewind = json!([{"partition": {"filename": input.to_str().unwrap()},
                         "offset": {"position": 0}}]);
    assert_eq!(a.patch_offsets(&name, rewind).status, 200);
    let (code, said) = nightly(dir.path());
    assert_eq!(code, 2, "a rewind is drift: {said}");
    assert!(said.contains("nothing committed"), "{said}");
    assert_eq!(commits(dir.path()), 2);
    let committed = std::fs::read_to_string(&file).unwrap();
    assert!(
        committed.contains(&format!("position: {}", len(&input))),
        "{committed}"
    );
}
