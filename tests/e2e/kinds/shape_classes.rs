//! A real connector of a class the offset shapes table does not know (Kafka's
//! VerifiableSourceConnector) passes `kco validate` with one notice naming it, and applies as
//! before.

use serde_json::{json, Value};

use super::{apply_converged, on_a};
use crate::harness::{testbed, unique_name};
use crate::kco_steps::set_offsets;

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

#[test]
fn an_unknown_class_passes_with_one_notice_and_applies() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let plugins: Value = reqwest::blocking::get(a.url("/connector-plugins"))
        .and_then(|r| r.json())
        .expect("connector plugins");
    if !plugins
        .as_array()
        .is_some_and(|p| p.iter().any(|p| p["class"] == VERIFIABLE))
    {
        eprintln!("skipping: {VERIFIABLE} is not installed (Kafka's test connectors)");
        return;
    }
    let env = on_a(&tb);
    let name = unique_name("kco-e2e-verifiable");
    let _v = a.create(
        &name,
        json!({
            "connector.class": VERIFIABLE,
            "tasks.max": "1",
            "topic": unique_name("kco-e2e-verifiable"),
            "throughput": "20",
        }),
    );
    let seqno = |o: &[Value]| o.first().and_then(|o| o["offset"]["seqno"].as_i64());
    a.wait_offsets(&name, "a few records' offsets", |o| seqno(o) > Some(5));
    a.stop(&name);
    let live = a.offsets(&name);
    let (code, out, err) = env.kco(&["snapshot", &name]).parts();
    assert_eq!(code, 0, "{out}{err}");
    let file = env.path().join(format!("snapshots/a/{name}.yaml"));
    let (code, out, err) = env.kco(&["validate", file.to_str().unwrap()]).parts();
    assert_eq!(code, 0, "an unknown class is not an error: {out}{err}");
    let notices: Vec<&str> = err.lines().filter(|l| l.starts_with("notice:")).collect();
    assert_eq!(notices.len(), 1, "{err}");
    assert!(notices[0].contains(VERIFIABLE), "{err}");
    // Its offsets apply as before (no shape to check them against).
    let mut rewound = live.clone();
    rewound[0]["offset"]["seqno"] = json!(1);
    set_offsets(&file, rewound.clone());
    apply_converged(&env, &file);
    assert_eq!(a.offsets(&name), rewound);
}
