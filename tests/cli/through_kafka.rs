//! A cluster whose offsets kco reads through Kafka, when that Kafka cannot be read: its address
//! said once, a TLS client against a plaintext listener told so with the fix, `ls` failing
//! rather than listing nothing; and an offsets topic of AWS MSK Connect's own per-connector
//! naming warned of before anything is planned there.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;

use serde_json::json;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::SOURCE;
use crate::support::run::Kco;

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A listener that reads what a client sends and closes the connection without a word, as a
/// Kafka PLAINTEXT listener does with a TLS ClientHello (read as an oversized request).
fn closing_listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
        }
    });
    port
}

/// kco.yaml of cluster `a`: `kafka:` at `bootstrap` (with `extra` in it) and its topics;
/// with `url`, the worker there (offsets through Kafka when it is older than 3.5), else read
/// from its three topics.
fn config(dir: &Path, url: Option<&str>, bootstrap: &str, extra: &str) {
    let (urls, topics) = match url {
        Some(u) => (format!("    urls: [{u}]\n"), "{offsets: connect-offsets}"),
        None => (
            String::new(),
            "{offsets: connect-offsets, configs: connect-configs, status: connect-status}",
        ),
    };
    let text = format!(
        "clusters:\n  a:\n{urls}    kafka: {{bootstrap: \"{bootstrap}\"{extra}}}\n    connectTopics: {topics}\n"
    );
    std::fs::write(dir.join("kco.yaml"), text).unwrap();
}

/// A worker without the offsets endpoints (3.4), one source on it.
fn legacy() -> FakeConnect {
    FakeConnect::builder()
        .version("3.4.1")
        .source("file-src", SOURCE, State::Running, json!([]))
        .start()
}

#[test]
fn a_kafka_that_cannot_be_reached_is_named_once() {
    let fake = legacy();
    let port = closed_port();
    let addr = format!("127.0.0.1:{port}");
    for url in [Some(fake.url()), None] {
        let dir = tempfile::tempdir().unwrap();
        config(dir.path(), url.as_deref(), &addr, "");
        let r = Kco::new(dir.path()).args(["snapshot"]).run();
        assert_eq!(r.code, 1, "{url:?}: {}\n{}", r.stdout, r.stderr);
        // A connector that failed is said on stdout, an error that stops the run on stderr.
        let said = format!("{}{}", r.stdout, r.stderr);
        assert_eq!(
            said.matches(&addr).count(),
            1,
            "{url:?}: the address once: {said}"
        );
        assert!(said.contains("cannot connect"), "{said}");
    }
}

#[test]
fn ls_of_a_cluster_read_through_a_kafka_that_cannot_be_reached_says_so() {
    let fake = legacy();
    let addr = format!("127.0.0.1:{}", closed_port());
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), Some(&fake.url()), &addr, "");
    let r = Kco::new(dir.path()).args(["ls"]).run();
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("`file-src`") && r.stderr.contains(&addr),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("0 connectors"), "{}", r.stdout);
}

#[test]
fn tls_against_a_plaintext_listener_says_so_with_the_fix() {
    let port = closing_listener();
    let fake = legacy();
    for url in [Some(fake.url()), None] {
        let dir = tempfile::tempdir().unwrap();
        config(
            dir.path(),
            url.as_deref(),
            &format!("127.0.0.1:{port}"),
            ", tls: {}",
        );
        let r = Kco::new(dir.path()).args(["snapshot"]).run();
        assert_eq!(r.code, 1, "{url:?}: {}\n{}", r.stdout, r.stderr);
        let said = format!("{}{}", r.stdout, r.stderr);
        assert!(
            said.contains("TLS handshake with a plaintext listener?")
                && said.contains("remove `kafka.tls`")
                && said.contains("TLS listener's port"),
            "{url:?}: {said}"
        );
    }
}

/// An offsets topic named as MSK Connect names a connector deployment's own: a reset (its
/// dry run too) warns that a connector created again will not read it, and how to pin one,
/// before Kafka is read.
#[test]
fn an_msk_per_connector_offsets_topic_is_warned_of_before_a_write_is_planned() {
    let fake = legacy();
    let addr = format!("127.0.0.1:{}", closed_port());
    let topic = "__amazon_msk_connect_offsets_file-src_0a1b2c3d-4e5f-6789-abcd-ef0123456789-2";
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{addr}\"}}\n    connectTopics: {{offsets: {topic}}}\n",
        fake.url()
    );
    std::fs::write(dir.path().join("kco.yaml"), text).unwrap();
    for dry in [true, false] {
        let mut args = vec!["reset", "file-src", "--yes"];
        if dry {
            args.push("--dry-run");
        }
        let r = Kco::new(dir.path()).args(args).run();
        assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "offsets topic `{topic}` is one AWS MSK Connect created"
            )) && r.stderr.contains("does not read the offsets written here")
                && r.stderr
                    .contains("`offset.storage.topic` in the MSK worker configuration"),
            "{}",
            r.stderr
        );
    }
    fake.assert_no_mutations();
    // A pinned topic of any other name: no such warning.
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), Some(&fake.url()), &addr, "");
    let r = Kco::new(dir.path())
        .args(["reset", "file-src", "--yes", "--dry-run"])
        .run();
    assert!(
        !r.stderr.contains("AWS MSK Connect created"),
        "{}",
        r.stderr
    );
}
