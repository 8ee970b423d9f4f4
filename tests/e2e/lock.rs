//! One lock every runner shares, on the real test bed: two clones of one git remote apply to
//! cluster a at once. Exactly one goes ahead; the other fails at once naming it; the worker
//! ends exactly where the applied files say, every connector running.

use serde_json::{json, Value};

use crate::harness::{
    append_lines, file_source_config, numbered, testbed, unique_name, ConnectorGuard,
};
use crate::kco_steps::{one_goes_ahead, set_offsets, write_config, write_snapshot};
use crate::support::env::TestEnv;
use crate::support::git::git;

fn position(file: &str, pos: u64) -> Value {
    json!({"partition": {"filename": file}, "offset": {"position": pos}})
}

#[test]
fn two_clones_applying_to_cluster_a_at_once_through_one_remote_one_goes_ahead() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "--quiet", "--bare", "remote.git"]);
    let clones: Vec<_> = (0..2)
        .map(|i| {
            let name = format!("runner{i}");
            git(dir.path(), &["clone", "--quiet", "remote.git", &name]);
            let clone = dir.path().join(name);
            write_config(&clone, &tb);
            clone
        })
        .collect();
    // Three FileStream sources, each at the end of its 20-line file; the files to apply add
    // a partition to each, in both clones alike.
    let guards: Vec<ConnectorGuard> = (0..3)
        .map(|_| {
            let name = unique_name("kco-e2e-lock");
            let input = dir.path().join(format!("{name}.txt"));
            append_lines(&input, &numbered("line", 1..=20));
            a.create(
                &name,
                file_source_config(&input, &unique_name("kco-e2e-lock")),
            )
        })
        .collect();
    let mut wanted = Vec::new();
    for g in &guards {
        a.wait_running(g.name());
        let file = dir.path().join(format!("{}.txt", g.name()));
        let len = std::fs::metadata(&file).unwrap().len();
        let file = file.to_string_lossy().into_owned();
        a.wait_offsets(g.name(), "the file read", |o| o == [position(&file, len)]);
        let offsets = vec![
            position(&file, len),
            position(&format!("/kco/lock/{}", g.name()), 42),
        ];
        for clone in &clones {
            let snap = write_snapshot(&a, g.name(), "a", &clone.join("snaps"), false);
            set_offsets(&snap, offsets.clone());
        }
        wanted.push((g.name().to_string(), offsets));
    }
    let apply = ["apply", "snaps/a", "--yes", "--parallel", "1"];
    one_goes_ahead(&clones, &apply, &dir.path().join("remote.git"));
    // The worker is exactly where the files say, every connector running.
    for (name, offsets) in &wanted {
        let mut live = a.offsets(name);
        let mut want = offsets.clone();
        live.sort_by_key(|v| v.to_string());
        want.sort_by_key(|v| v.to_string());
        assert_eq!(live, want, "{name}");
        a.wait_running(name);
    }
    // Both clones now agree with the worker.
    for clone in &clones {
        let out = TestEnv::at(clone).kco(&["--cluster", "a", "diff", "snaps/a"]);
        assert_eq!(out.code, 0, "{out:?}");
    }
}
