//! The checks of which cluster a change lands on, on the real test bed, where clusters a
//! and b are two Connect groups on one Kafka cluster: a `--url` of cluster b's worker given for cluster a is refused (the Kafka
//! cluster id is the same, the Connect group is not), a worker of cluster a that kco.yaml
//! does not list passes, and a sink with the same name on a and b (one consumer group,
//! `connect-<name>`) is not changed without `--allow-shared-group`.

use crate::harness::{
    file_sink_config, file_source_config, testbed, unique_name, write_lines, FILE_SINK,
};
use crate::kco_steps::testbed_env;
use crate::support::data::{sink_offsets, SnapshotFile};
use crate::support::env::TestEnv;

#[test]
fn a_url_of_cluster_b_given_for_cluster_a_is_refused() {
    let Some(tb) = testbed() else { return };
    let env = testbed_env(&tb);
    // Something on b, so that its Connect group shows (two empty groups look alike).
    let input = env.path().join("in.txt");
    write_lines(&input, &["x".to_string()]);
    let name = unique_name("kco-e2e-guard-url");
    let _on_b = tb.b().create_in_state(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-guard-url")),
        "STOPPED",
    );
    let (code, out, err) = env
        .kco(&["--url", &tb.b_url, "--cluster", "a", "ls"])
        .parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "error: {} (--url) is not a worker of cluster `a`: it is on the same Kafka cluster but in another Connect group than cluster `a`",
            tb.b_url
        )),
        "{err}"
    );
    let (code, out, err) = env
        .cmd()
        .env("KCO_URL", &tb.b_url)
        .args(["--cluster", "a", "snapshot"])
        .run()
        .parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains(&format!("{} (KCO_URL)", tb.b_url)), "{err}");
    assert!(!env.path().join("snapshots").exists(), "nothing written");

    // A worker of a that kco.yaml does not list is one of a's: same connectors, same workers.
    if tb.a_urls.len() > 1 {
        let one = TestEnv::new();
        one.config(format!("clusters:\n  a:\n    urls: [{}]\n", tb.a_urls[0]));
        let (code, out, err) = one
            .kco(&["--url", &tb.a_urls[1], "--cluster", "a", "ls"])
            .parts();
        assert_eq!(code, 0, "{out}{err}");
        assert!(!err.contains("is not a worker"), "{err}");
    }
}

#[test]
fn a_sink_of_the_same_name_on_a_and_b_is_not_changed_without_allow_shared_group() {
    let Some(tb) = testbed() else { return };
    let (a, b) = (tb.a(), tb.b());
    let env = testbed_env(&tb);
    let name = unique_name("kco-e2e-guard-group");
    let topic = unique_name("kco-e2e-guard-group");
    let _on_a = a.create(&name, file_sink_config(&env.path().join("a.out"), &topic));
    let _on_b = b.create(&name, file_sink_config(&env.path().join("b.out"), &topic));
    a.wait_running(&name);
    b.wait_running(&name);
    let before = b.offsets(&name);
    SnapshotFile::sink(&name, sink_offsets(&topic, &[(0, 0)]))
        .class(FILE_SINK)
        .cluster("b")
        .write_in(&env.path().join("snapshots/b"));

    let (code, out, err) = env
        .kco(&["--cluster", "b", "apply", "snapshots/b", "--yes"])
        .parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "`{name}` on cluster `b` and `{name}` on cluster `a`: consumer group `connect-{name}`"
        )),
        "{err}"
    );
    assert!(err.contains("nothing was changed"), "{err}");
    assert_eq!(b.state(&name), "RUNNING", "never stopped");
    assert_eq!(b.offsets(&name), before, "offsets untouched");

    let (code, out, err) = env
        .kco(&[
            "--cluster",
            "b",
            "apply",
            "snapshots/b",
            "--dry-run",
            "--allow-shared-group",
            &name,
        ])
        .parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "warning: consumer group `connect-{name}` is also the group of sink `{name}` on cluster `a`"
        )),
        "{out}"
    );
}
