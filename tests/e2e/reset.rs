//! `kco reset` on the real test bed: a running FileStreamSource loses its offsets (backed
//! up first), is put back to RUNNING, and reads its file again from the start.

use crate::harness::{
    file_source_config, numbered, source_position, testbed, unique_name, write_lines, TopicReader,
};
use crate::kco_steps::{on, testbed_env};

#[test]
fn reset_of_a_running_source_rereads_its_file() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb).args(&on(&a, "a"));
    let input = env.path().join("in.txt");
    let lines = numbered("again", 0..5);
    write_lines(&input, &lines);
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let topic = unique_name("kco-e2e-reset");
    let reader = TopicReader::start(&a, &topic, env.path());
    let name = unique_name("kco-e2e-kco-reset");
    let _src = a.create(&name, file_source_config(&input, &topic));
    a.wait_read(&name, &input);
    assert_eq!(reader.wait_lines(5), lines);

    let (code, out, err) = env.kco(&["reset", &name, "--yes"]).parts();
    assert_eq!(code, 0, "kco reset: {out}{err}");
    let backups = env.path().join(".kco/backups");
    assert!(backups.is_dir(), "a backup before the reset: {out}{err}");
    a.wait_running(&name);
    let seen = reader.wait_lines_settled(10);
    assert_eq!(seen.len(), 10, "the file read twice: {seen:?}");
    assert_eq!(&seen[5..], &lines[..]);
    a.wait_offsets(&name, "back at the end", |o| {
        source_position(o, &input) == Some(len)
    });
}
