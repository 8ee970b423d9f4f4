//! `kco init` and `kco doctor` on the real test bed: a kco.yaml for cluster a's workers and
//! the bed's Kafka, checked by doctor line by line; the bed's Kafka port given as the Connect
//! URL (the bootstrap server, the likely newcomer's mistake) refused by both, with the hint
//! that it looks like a Kafka broker's port, nothing written.

use crate::harness::testbed;
use crate::support::env::TestEnv;
use crate::support::git::IDENTITY;
use crate::support::json::{failed_checks, parse_json};
use crate::support::run::unwrapped;

const KAFKA_PORT_HINT: &str =
    "what listens there does not speak HTTP: this looks like a Kafka broker port";

#[test]
fn init_and_doctor_on_cluster_a_and_on_the_kafka_port() {
    let Some(tb) = testbed() else { return };
    let kafka = tb.kafka();
    let version = tb.a().info()["version"].as_str().unwrap().to_string();

    let env = TestEnv::new().envs(IDENTITY);
    let urls = tb.a_urls.join(",");
    let r = env.kco(&["init", "--url", &urls, "--cluster", "a", "--kafka", &kafka]);
    let out = r.success("init");
    assert!(
        out.contains(&format!(
            "Kafka Connect {version} answers at {}",
            tb.a_urls.join(", ")
        )),
        "{out}"
    );
    let config = std::fs::read_to_string(env.path().join("kco.yaml")).unwrap();
    assert!(
        config.contains(&format!("    urls: [{}]\n", tb.a_urls.join(", "))),
        "{config}"
    );
    assert!(
        config.contains(&format!("      bootstrap: \"{kafka}\"\n")),
        "{config}"
    );
    // The workers' offsets topic, as kco.yaml names it for reading through Kafka.
    std::fs::write(
        env.path().join("kco.yaml"),
        format!("{config}    connectTopics: {{offsets: kco-a-offsets}}\n"),
    )
    .unwrap();
    let r = env.kco(&["doctor"]);
    let out = unwrapped(&r.success("doctor"));
    for line in [
        format!("  ok    version   Kafka Connect {version}\n"),
        "  ok    offsets   Connect's offsets REST API (read and alter)\n".to_string(),
        format!("  ok    kafka     {kafka} answered; topics `kco-a-offsets` present ("),
    ] {
        assert!(out.contains(&line), "{line:?} in\n{out}");
    }
    // A topic name mistyped: the check names it and the key.
    std::fs::write(
        env.path().join("kco.yaml"),
        format!("{config}    connectTopics: {{offsets: kco-a-offset}}\n"),
    )
    .unwrap();
    let r = env.kco(&["doctor"]);
    assert_eq!(r.code, 1, "{}", r.all());
    let out = unwrapped(&r.stdout);
    assert!(
        out.contains(&format!(
            "  FAIL  kafka     {kafka} answers, but has no topic `kco-a-offset` (connectTopics.offsets)\n"
        )),
        "{out}"
    );
    let r = env.kco(&["doctor", "-o", "json"]);
    assert_eq!(r.code, 1, "{}", r.all());
    let doc = parse_json(&r.stdout);
    let failed = failed_checks(&doc);
    assert_eq!(failed.len(), 1, "{doc}");
    assert_eq!(
        (&failed[0]["cluster"], &failed[0]["check"]),
        (&"a".into(), &"kafka".into())
    );

    // The Kafka port as the Connect URL: refused at first contact, nothing written.
    let wrong = TestEnv::new().envs(IDENTITY);
    let url = format!("http://{kafka}");
    let r = wrong.kco(&["init", "--url", &url, "--cluster", "a"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(&format!("hint: {KAFKA_PORT_HINT}")),
        "{}",
        r.stderr
    );
    assert!(!wrong.path().join("kco.yaml").exists());
    wrong.config(format!("clusters:\n  a:\n    urls: [{url}]\n"));
    let r = wrong.kco(&["doctor"]);
    let out = unwrapped(&r.stdout);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        out.contains(&format!(
            "  FAIL  reachable no HTTP answer from Kafka Connect of cluster `a` (tried {url}"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("fix: {KAFKA_PORT_HINT}")), "{out}");
}
