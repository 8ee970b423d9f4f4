//! `kco ls --orphaned` on the real test bed: a deleted FileStream source's offsets stay in the
//! workers' offsets topic, and kco finds them there, at the position Connect committed.

use crate::harness::{
    file_source_config, numbered, source_position, testbed, unique_name, write_lines, TopicReader,
};
use crate::kco_steps::testbed_env;

#[test]
fn a_deleted_sources_offsets_are_found_in_the_offsets_topic_at_the_committed_position() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let env = testbed_env(&tb);
    std::fs::write(
        env.path().join("kco.yaml"),
        format!(
            "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{}\"}}\n    connectTopics: {{offsets: kco-a-offsets}}\n",
            tb.a_urls.join(", "),
            tb.kafka()
        ),
    )
    .unwrap();
    let input = env.path().join("in.txt");
    write_lines(&input, &numbered("left", 0..7));
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let topic = unique_name("kco-e2e-orphaned");
    let reader = TopicReader::start(&a, &topic, env.path());
    let gone = unique_name("kco-e2e-orphaned-src");
    let kept = unique_name("kco-e2e-orphaned-kept");
    let src = a.create(&gone, file_source_config(&input, &topic));
    let _kept = a.create(&kept, file_source_config(&input, &topic));
    for name in [&gone, &kept] {
        a.wait_offsets(name, "the whole file read", |o| {
            source_position(o, &input) == Some(len)
        });
    }
    reader.wait_lines(14);

    let listed = |env: &crate::support::env::TestEnv| {
        let (code, out, err) = env
            .kco(&["--cluster", "a", "ls", "--orphaned", "-o", "json"])
            .parts();
        assert_eq!(code, 0, "kco ls --orphaned: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["topic"], "kco-a-offsets");
        v["orphans"].as_array().unwrap().clone()
    };
    let find = |orphans: &[serde_json::Value], name: &str| {
        orphans.iter().find(|o| o["name"] == name).cloned()
    };
    let before = listed(&env);
    assert!(
        find(&before, &gone).is_none(),
        "a live connector's offsets are its own"
    );
    assert!(find(&before, &kept).is_none());

    drop(src);
    // The other worker may list the connector for a moment after its deletion.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let (after, left) = loop {
        let after = listed(&env);
        if let Some(left) = find(&after, &gone) {
            break (after, left);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the deleted source's offsets are left over: {after:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
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
