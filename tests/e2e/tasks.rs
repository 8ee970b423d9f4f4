//! A task that fails after kco resumed its connector, on the real worker: the apply reports
//! the connector as failed, with the task's trace summary, and exits 1 (it was success while
//! kco only waited for the connector's own RUNNING state).

use crate::harness::{
    append_lines, file_sink_config, file_source_config, kco, numbered, output_text, testbed,
    unique_name,
};
use crate::kco_steps::{kco_dir, set_offsets, write_snapshot};
use crate::support::data::sink_entry;

#[test]
fn a_task_that_fails_after_the_resume_fails_the_apply_with_its_trace() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let dir = kco_dir(&tb);
    let topic = unique_name("kco-e2e-taskfail");
    let input = dir.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=5));
    let _source = a.create(
        &unique_name("kco-e2e-taskfail-src"),
        file_source_config(&input, &topic),
    );
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let sink = unique_name("kco-e2e-taskfail-sink");
    let _sink = a.create(&sink, file_sink_config(&out_dir.join("sink.txt"), &topic));
    a.wait_offsets(&sink, "offset 5", |o| o == [sink_entry(&topic, 0, 5)]);
    let file = write_snapshot(&a, &sink, "a", &dir.path().join("snapshots"), false);
    set_offsets(&file, vec![sink_entry(&topic, 0, 2)]);
    // The running task keeps its open file; a new one cannot open it (not even as root):
    // its directory has become a plain file.
    std::fs::remove_dir_all(&out_dir).unwrap();
    std::fs::write(&out_dir, "not a directory").unwrap();

    let args = ["--cluster", "a", "apply", file.to_str().unwrap(), "--yes"];
    let out = kco(&[&args[..], &["--task-timeout", "60"]].concat(), dir.path());
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains(&format!("FAILED {sink}")), "{all}");
    // FileStreamSinkTask's own words, from the task's trace.
    assert!(all.contains("Couldn't find or create file"), "{all}");
    // The offsets were applied before the resume, and the report says the task failed.
    assert_eq!(a.offsets(&sink), vec![sink_entry(&topic, 0, 2)]);
}
