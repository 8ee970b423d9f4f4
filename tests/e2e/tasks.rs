//! A task that fails after kco resumed its connector, on the real worker: the apply reports
//! the connector as failed, with the task's trace summary, and exits 1 (it was success while
//! kco only waited for the connector's own RUNNING state).

use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, testbed, unique_name,
};
use crate::kco_steps::{set_offsets, testbed_env, write_snapshot};
use crate::support::data::sink_entry;

#[test]
fn a_task_that_fails_after_the_resume_fails_the_apply_with_its_trace() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    let topic = unique_name("kco-e2e-taskfail");
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=5));
    let _source = a.create(
        &unique_name("kco-e2e-taskfail-src"),
        file_source_config(&input, &topic),
    );
    let out_dir = env.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let sink = unique_name("kco-e2e-taskfail-sink");
    let _sink = a.create(&sink, file_sink_config(&out_dir.join("sink.txt"), &topic));
    a.wait_offsets(&sink, "offset 5", |o| o == [sink_entry(&topic, 0, 5)]);
    let file = write_snapshot(&a, &sink, "a", &env.path().join("snapshots"), false);
    set_offsets(&file, vec![sink_entry(&topic, 0, 2)]);
    // The running task keeps its open file; a new one cannot open it (not even as root):
    // its directory has become a plain file.
    std::fs::remove_dir_all(&out_dir).unwrap();
    std::fs::write(&out_dir, "not a directory").unwrap();

    let args = ["--cluster", "a", "apply", file.to_str().unwrap(), "--yes"];
    let out = env.kco(&[&args[..], &["--task-timeout", "60"]].concat());
    let all = out.all();
    assert_eq!(out.code, 1, "{all}");
    assert!(all.contains(&format!("FAILED {sink}")), "{all}");
    // FileStreamSinkTask's own words, from the task's trace.
    assert!(all.contains("Couldn't find or create file"), "{all}");
    // The offsets were applied before the resume, and the report says the task failed.
    assert_eq!(a.offsets(&sink), vec![sink_entry(&topic, 0, 2)]);
}
