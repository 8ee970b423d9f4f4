//! `kco snapshot` against the real test bed (cluster a's first worker): a
//! FileStreamSource and a FileStreamSink with real progress.
//!
//! Skipped when the test bed is not up, unless `KCO_E2E=required`.

use serde_json::Value;

use crate::harness::{
    file_sink_config, file_source_config, numbered, sink_offset, source_position, temp_dir,
    testbed, unique_name, write_lines,
};
use crate::kco_steps::on;
use crate::support::env::TestEnv;

fn sorted(offsets: &[Value]) -> Value {
    let mut e: Vec<kco::model::OffsetEntry> =
        serde_json::from_value(Value::Array(offsets.to_vec())).unwrap();
    kco::model::sort_entries(&mut e);
    serde_json::to_value(e).unwrap()
}

#[test]
fn snapshot_of_real_source_and_sink_matches_get_offsets_and_is_idempotent() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let work = temp_dir();
    let input = work.path().join("in.txt");
    let output = work.path().join("out.txt");
    write_lines(&input, &numbered("line", 0..50));
    let id = unique_name("kco-e2e-snap");
    let topic = format!("{id}-topic");
    let src = format!("{id}-src");
    let sink = format!("{id}-sink");
    let _g1 = a.create(&src, file_source_config(&input, &topic));
    let _g2 = a.create(&sink, file_sink_config(&output, &topic));
    let total = std::fs::metadata(&input).unwrap().len() as i64;
    a.wait_offsets(&src, "the source offset at the end of the file", |o| {
        source_position(o, &input) == Some(total)
    });
    a.wait_offsets(&sink, "the sink to commit every record", |o| {
        sink_offset(o, &topic) == Some(50)
    });
    a.stop(&src);
    a.stop(&sink);

    let env = TestEnv::new().args(&on(&a, "a"));
    let glob = format!("{id}-*");
    let (code, stdout, stderr) = env.kco(&["snapshot", &glob]).parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    let mut before = Vec::new();
    for name in [&src, &sink] {
        let path = env.path().join(format!("snapshots/a/{name}.yaml"));
        let (file, text) = kco::model::file::OffsetsFile::load(&path).unwrap();
        assert!(file.check(&path, &text).is_empty());
        assert_eq!(
            serde_json::to_value(&file.offsets).unwrap(),
            sorted(&a.offsets(name)),
            "{name}"
        );
        assert_eq!(
            file.metadata.state,
            Some(kco::model::ConnectorState::Stopped)
        );
        assert!(file.metadata.kafka_cluster_id.is_some());
        before.push(std::fs::read(&path).unwrap());
    }
    let (code, stdout, stderr) = env.kco(&["snapshot", "--all", &glob]).parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout.matches("unchanged").count(), 2, "{stdout}");
    assert!(stderr.contains("2 connectors: 2 unchanged"), "{stderr}");
    for (name, b) in [&src, &sink].iter().zip(&before) {
        let path = env.path().join(format!("snapshots/a/{name}.yaml"));
        assert_eq!(&std::fs::read(&path).unwrap(), b, "{name} changed");
    }
    let (code, stdout, _) = env.kco(&["validate"]).parts();
    assert_eq!(code, 0, "{stdout}");
}
