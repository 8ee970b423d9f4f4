//! kco against the test bed's standalone worker (`s1`), whose source offsets live in a
//! file (`offset.storage.file.filename`): snapshot, diff and apply work as on a
//! distributed cluster, through the same REST calls.

use std::path::Path;

use crate::harness::{
    file_source_config, numbered, source_position, testbed, unique_name, write_lines, TopicReader,
};
use crate::kco_steps::on;
use crate::support::env::TestEnv;

#[test]
fn standalone_source_snapshot_diff_apply_replays() {
    let Some(tb) = testbed() else { return };
    let Some(s) = tb.standalone() else { return };
    let a = tb.a();
    let env = TestEnv::new();
    let input = env.path().join("in.txt");
    let lines = numbered("solo", 0..10);
    let starts = write_lines(&input, &lines);
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let topic = unique_name("kco-e2e-solo");
    // Both clusters share the broker: cluster a reads what the standalone worker writes.
    let reader = TopicReader::start(&a, &topic, env.path());
    let name = unique_name("kco-e2e-solo");
    let _src = s.create(&name, file_source_config(&input, &topic));
    s.wait_read(&name, &input);
    assert_eq!(reader.wait_lines(10), lines);

    let env = env.args(&on(&s, "solo"));
    let (code, out, err) = env.kco(&["snapshot", &name]).parts();
    assert_eq!(code, 0, "snapshot: {out}{err}");
    let file = env.path().join(format!("snapshots/solo/{name}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(&format!("position: {len}")), "{text}");
    let (code, out, err) = env.kco(&["diff", &name]).parts();
    assert_eq!(code, 0, "in sync: {out}{err}");

    // The change: rewind to line 4 in the file, as a pull request would.
    let rewound = text.replace(
        &format!("position: {len}"),
        &format!("position: {}", starts[4]),
    );
    std::fs::write(&file, rewound).unwrap();
    let (code, out, err) = env.kco(&["fmt", file.to_str().unwrap()]).parts();
    assert_eq!(code, 0, "fmt: {out}{err}");
    // Live is ahead of the file: normal progress for a running connector (exit 0), a
    // difference under --fail-on any.
    let (code, out, err) = env.kco(&["diff", &name]).parts();
    assert_eq!(code, 0, "advanced: {out}{err}");
    let (code, out, err) = env.kco(&["diff", &name, "--fail-on", "any"]).parts();
    assert_eq!(code, 2, "a difference: {out}{err}");
    let ahead = len as u64 - starts[4];
    assert!(
        out.contains(&format!("live ahead of file by {ahead} bytes")),
        "{out}"
    );

    let (code, out, err) = env.kco(&["apply", file.to_str().unwrap(), "--yes"]).parts();
    assert_eq!(code, 0, "apply: {out}{err}");
    s.wait_running(&name);
    let seen = reader.wait_lines_settled(10 + 6);
    assert_eq!(seen.len(), 16, "lines 4.. once more: {seen:?}");
    assert_eq!(&seen[10..], &lines[4..]);
    s.wait_offsets(&name, "back at the end", |o| {
        source_position(o, &input) == Some(len)
    });
    assert_offsets_file_names(&input);
}

/// The standalone worker wrote the partition to its offsets file (when the test bed's
/// state directory is known, as under scripts/test.sh).
fn assert_offsets_file_names(input: &Path) {
    let Ok(state) = std::env::var("KCO_TESTBED_DIR") else {
        return;
    };
    let path = Path::new(&state).join("data/s1.offsets");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let needle = input.to_str().unwrap().as_bytes();
    assert!(
        bytes.windows(needle.len()).any(|w| w == needle),
        "{} names {}",
        path.display(),
        input.display()
    );
}
