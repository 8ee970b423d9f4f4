//! `--verbose` traces every REST call on stderr; credentials never appear.

use serde_json::json;

use crate::fake_connect::{FakeConnect, State};
use crate::snapshot::{kco, run, SRC};

#[test]
fn verbose_traces_each_call_and_quiet_runs_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeConnect::builder()
        .source(
            "c",
            SRC,
            State::Running,
            json!([{"partition": {"filename": "/f"}, "offset": {"position": 3}}]),
        )
        .start();
    std::fs::write(
        dir.path().join("kco.yaml"),
        format!(
            "clusters:\n  a:\n    urls: [{}]\n    auth:\n      basic: {{username: u, password: '${{env:PW}}'}}\n",
            fake.url()
        ),
    )
    .unwrap();
    let r = run(kco(dir.path())
        .env("PW", "pa55word-xyz")
        .args(["-v", "snapshot"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in [
        "GET /: ok",
        "GET /connectors?expand=status&expand=info: ok",
        "GET c offsets: ok",
    ] {
        assert!(
            r.stderr.contains(line),
            "missing `{line}` in:\n{}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("pa55word") && !r.stdout.contains("pa55word"));
    let r = run(kco(dir.path()).env("PW", "pa55word-xyz").args(["snapshot"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("GET c offsets"), "{}", r.stderr);
}
