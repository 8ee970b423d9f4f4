//! No credential is ever printed or written: every command runs with -v (and as JSON) with
//! known secrets in a URL, in kco.yaml `${env:VAR}` references (basic, bearer, a header), in a
//! connector's config and in the environment that `--create` resolves; then all output and
//! every file kco wrote (snapshots, backups, the journal of a killed apply) are searched for
//! them, raw and base64-encoded. The fake proves the secrets were used.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::json;

use crate::dr::{on_kafka, sink_of};
use crate::fake_connect::{ConnectorSpec, FakeConnect, Fault};
use crate::support::data::SINK;
use crate::support::env::TestEnv;

const URL_PW: &str = "urlpass-S3CRET1";
const ENV_PW: &str = "envpass-S3CRET2";
const HEADER: &str = "hdr-S3CRET3";
const TOKEN: &str = "bearer-S3CRET4";
const CONN_PW: &str = "connpass-S3CRET5";
const CREATE_PW: &str = "create-S3CRET6";

fn forbidden() -> Vec<String> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut all: Vec<String> = [URL_PW, ENV_PW, HEADER, TOKEN, CONN_PW, CREATE_PW]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.push(b64(&format!("kco:{ENV_PW}")));
    all.push(b64(&format!("ops:{URL_PW}")));
    all
}

/// A test environment with the secrets that kco.yaml and `--create` resolve in its variables.
fn secrets_env() -> TestEnv {
    TestEnv::new().envs(&[
        ("KCO_PW", ENV_PW),
        ("KCO_HDR", HEADER),
        ("KCO_TOKEN", TOKEN),
        ("KCO_SECRET_ORDERS_DATABASE_PASSWORD", CREATE_PW),
    ])
}

/// Runs kco, returns its exit code; stdout and stderr are appended to `seen`.
fn run(dir: &TestEnv, args: &[&str], seen: &mut String) -> i32 {
    let r = dir.kco(args);
    seen.push_str(&r.all());
    r.code
}

fn all_files(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all_files(&p, out);
        } else {
            let bytes = std::fs::read(&p).unwrap();
            out.push((
                p.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

#[test]
fn no_secret_reaches_any_output_or_file() {
    let dir = secrets_env();
    let d = dir.path();
    let fake = FakeConnect::builder()
        .version("4.1.0")
        .connector(
            ConnectorSpec::sink("orders", SINK)
                .config("topics", "t")
                .config("database.password", CONN_PW)
                .offsets(json!([{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 9}}])),
        )
        .start();
    let url = fake.url();
    dir.config(format!(
        "clusters:\n  a:\n    urls: [{url}]\n    auth:\n      basic: {{username: kco, password: \"${{env:KCO_PW}}\"}}\n    headers: {{X-Gateway: \"${{env:KCO_HDR}}\"}}\n  t:\n    urls: [{url}]\n    auth:\n      bearer: {{token: \"${{env:KCO_TOKEN}}\"}}\n"
    ));
    let mut seen = String::new();
    let mut codes = Vec::new();
    let mut go =
        |args: &[&str], seen: &mut String| codes.push((args.join(" "), run(&dir, args, seen)));
    go(
        &["--cluster", "a", "-v", "snapshot", "--with-config"],
        &mut seen,
    );
    go(&["--cluster", "a", "-v", "diff"], &mut seen);
    go(&["--cluster", "a", "-v", "diff", "-o", "json"], &mut seen);
    go(&["--cluster", "a", "-v", "validate"], &mut seen);
    let create = [
        "--cluster",
        "a",
        "-v",
        "apply",
        "snapshots/a/orders.yaml",
        "--as",
        "new",
        "--create",
    ];
    go(&[&create[..], &["--dry-run"]].concat(), &mut seen);
    go(&[&create[..], &["--yes", "-o", "json"]].concat(), &mut seen);
    go(
        &[
            "--cluster",
            "t",
            "-v",
            "reset",
            "new",
            "--yes",
            "-o",
            "yaml",
        ],
        &mut seen,
    );
    let with_pw = url.replace("http://", &format!("http://ops:{URL_PW}@"));
    go(
        &[
            "--url",
            &with_pw,
            "--cluster",
            "a",
            "-v",
            "diff",
            "-o",
            "json",
        ],
        &mut seen,
    );
    go(
        &[
            "--url",
            "http://ops:urlpass-S3CRET1@127.0.0.1:9",
            "-v",
            "snapshot",
        ],
        &mut seen,
    );
    go(&["--cluster", "a", "-v", "recover"], &mut seen);
    // A journal left by a killed apply.
    fake.fault(Fault::on("PATCH", "/connectors/*/offsets").delay_ms(20_000));
    std::fs::write(
        d.join("snapshots/a/orders.yaml"),
        std::fs::read_to_string(d.join("snapshots/a/orders.yaml"))
            .unwrap()
            .replace("kafka_offset: 9", "kafka_offset: 3"),
    )
    .unwrap();
    go(&["fmt", "snapshots/a/orders.yaml"], &mut seen);
    let child = dir
        .cmd()
        .args(["--cluster", "a", "-v", "apply", "snapshots/a", "--yes"])
        .discard_output()
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(20);
    while fake.count("PATCH", "/connectors/orders/offsets") == 0 {
        assert!(Instant::now() < deadline, "the apply never patched");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill9();
    assert!(d.join(".kco/journal/a.json").exists());

    let mut files = Vec::new();
    all_files(d, &mut files);
    assert!(
        files.iter().any(|(p, _)| p.contains(".kco/backups")),
        "{files:?}"
    );
    for secret in forbidden() {
        assert!(!seen.contains(&secret), "{secret} in the output:\n{seen}");
        for (path, text) in &files {
            assert!(!text.contains(&secret), "{secret} in {path}");
        }
    }
    fake.clear_faults();
    go(&["--cluster", "a", "recover"], &mut seen);
    let ok = |c: &str| codes.iter().any(|(a, code)| a.starts_with(c) && *code == 0);
    assert!(
        ok("--cluster a -v snapshot") && ok("--cluster t -v reset"),
        "{codes:?}\n{seen}"
    );

    // The secrets were used: resolved into the created connector, sent as headers.
    assert_eq!(fake.config("new").unwrap()["database.password"], CREATE_PW);
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("kco:{ENV_PW}"));
    let auths: Vec<Option<String>> = fake
        .requests()
        .iter()
        .map(|r| r.authorization.clone())
        .collect();
    assert!(auths.contains(&Some(format!("Basic {b64}"))), "{auths:?}");
    assert!(
        auths.contains(&Some(format!("Bearer {TOKEN}"))),
        "bearer tokens reach the worker: {auths:?}"
    );
}

const KAFKA_PW: &str = "kafkapass-S3CRET7";

/// The Kafka password of a mirror's checkpoints (`kafka.sasl`) appears in no output or file,
/// also when the broker cannot be reached and the error names its address.
#[test]
fn the_kafka_password_reaches_no_output_or_file() {
    let dir = secrets_env();
    let d = dir.path();
    let east = on_kafka("K-EAST")
        .connector(sink_of("orders", "t", 9))
        .start();
    let west = on_kafka("K-WEST").start();
    // Nothing listens on port 9 of the loopback: the read fails at the first request.
    dir.config(format!(
        "clusters:\n  east:\n    urls: [{}]\n  west:\n    urls: [{}]\n    kafka:\n      bootstrap: \"127.0.0.1:9\"\n      timeoutSeconds: 2\n      sasl: {{mechanism: SCRAM-SHA-512, username: kco, password: \"${{env:KCO_KAFKA_PW}}\"}}\n    mirrors: {{east: {{alias: east}}}}\n",
        east.url(),
        west.url()
    ));
    let mut seen = String::new();
    let run_pw = |args: &[&str], seen: &mut String| {
        let r = dir
            .cmd()
            .args(args)
            .envs(&[("KCO_KAFKA_PW", KAFKA_PW)])
            .run();
        seen.push_str(&r.all());
        r.code
    };
    assert_eq!(
        run_pw(
            &["--cluster", "east", "snapshot", "--with-config"],
            &mut seen
        ),
        0,
        "{seen}"
    );
    for output in ["text", "json"] {
        let code = run_pw(
            &[
                "--cluster",
                "west",
                "-v",
                "apply",
                "snapshots/east/orders.yaml",
                "--create",
                "--yes",
                "-o",
                output,
            ],
            &mut seen,
        );
        assert_eq!(code, 1, "{seen}");
    }
    assert!(
        seen.contains("127.0.0.1:9"),
        "the error names the bootstrap address:\n{seen}"
    );
    assert!(west.config("orders").is_none(), "nothing created");
    let mut files = Vec::new();
    all_files(d, &mut files);
    assert!(
        !seen.contains(KAFKA_PW),
        "the Kafka password in the output:\n{seen}"
    );
    for (path, text) in &files {
        assert!(!text.contains(KAFKA_PW), "the Kafka password in {path}");
    }
}
