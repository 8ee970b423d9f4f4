//! Cluster g (`scripts/bearer-gateway.sh up`): cluster b's real worker behind an HTTPS gateway
//! (nginx) that passes only requests carrying the right `Authorization: Bearer` token. With a
//! kco.yaml naming the gateway's CA and `auth.bearer` from `${env:VAR}`, snapshot, diff and
//! apply work; a wrong token and no token each fail at the first request (exit 1), naming the
//! cause and the URL, and the token is printed nowhere.
//!
//! Skipped when the gateway is not there, unless `KCO_E2E_GATEWAY=required`.
//! `KCO_E2E_GATEWAY_URL` (default https://127.0.0.1:8444) and `KCO_E2E_G_DIR` (default
//! `<test bed dir>/gateway`) point elsewhere.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::harness::{
    append_lines, env_url, file_source_config, first_contact_only, numbered, service_dir,
    service_file, testbed, unique_name,
};
use crate::kco_steps::set_offsets;
use crate::support::env::TestEnv;
use crate::support::run::Run;

struct Gateway {
    url: String,
    dir: PathBuf,
    token: String,
    /// A token that may only read (GET): anything else gets 403 from the gateway.
    read_only: String,
}

fn gateway() -> Option<Gateway> {
    let dir = service_dir("KCO_E2E_G_DIR", "gateway");
    let token = service_file(&dir, "token", "KCO_E2E_GATEWAY", "bearer-gateway.sh")?;
    Some(Gateway {
        url: env_url("KCO_E2E_GATEWAY_URL", "https://127.0.0.1:8444"),
        read_only: std::fs::read_to_string(dir.join("token-ro"))
            .map(|t| t.trim().to_string())
            .expect("the gateway's token-ro (scripts/bearer-gateway.sh down, then up)"),
        dir,
        token: token.trim().to_string(),
    })
}

impl Gateway {
    /// kco on cluster g (`--cluster g`, `token` in `KCO_G_TOKEN`) beside a kco.yaml for it:
    /// the gateway's CA, the token from `KCO_G_TOKEN`.
    fn env(&self, token: &str) -> TestEnv {
        let env = TestEnv::new().args(&["--cluster", "g"]);
        env.config(format!(
            "clusters:\n  g:\n    urls: [{}]\n    auth:\n      bearer: {{token: \"${{env:KCO_G_TOKEN}}\"}}\n    tls: {{caFile: {}/ca.pem}}\n",
            self.url,
            self.dir.display()
        ));
        env.envs(&[("KCO_G_TOKEN", token)])
    }

    /// [`Gateway::env`] of `token`, and a FileStream source on `b` (cluster g's worker) that
    /// has read its 10-line file: the environment, the source's name, the file's length and
    /// the connector (deleted when dropped).
    fn source_on(
        &self,
        b: &crate::harness::Connect,
        prefix: &str,
        token: &str,
    ) -> (TestEnv, String, i64, crate::harness::ConnectorGuard) {
        let env = self.env(token);
        let input = env.path().join("in.txt");
        append_lines(&input, &numbered("line", 1..=10));
        let len = std::fs::metadata(&input).unwrap().len() as i64;
        let name = unique_name(prefix);
        let guard = b.create(
            &name,
            file_source_config(&input, &unique_name(&format!("{prefix}-topic"))),
        );
        b.wait_read(&name, &input);
        (env, name, len, guard)
    }

    /// Adds a partition `extra` (at position 5) to the live offsets of `name` on `b` in
    /// its snapshot file, and applies that file through the gateway (`-v`).
    fn apply_with_extra(
        b: &crate::harness::Connect,
        env: &TestEnv,
        name: &str,
        extra: &str,
    ) -> Run {
        let file = env.path().join(format!("snapshots/g/{name}.yaml"));
        let mut offsets: Vec<serde_json::Value> = b.offsets(name);
        offsets.push(json!({"partition": {"filename": extra}, "offset": {"position": 5}}));
        set_offsets(&file, offsets);
        env.kco(&["-v", "apply", file.to_str().unwrap(), "--yes"])
    }
}

#[test]
fn snapshot_diff_and_apply_through_a_bearer_token_gateway() {
    let Some(tb) = testbed() else { return };
    let Some(g) = gateway() else { return };
    let b = tb.b();
    let (env, name, len, _c) = g.source_on(&b, "kco-e2e-bearer", &g.token);

    let out = env.kco(&["-v", "snapshot", &name]);
    assert_eq!(out.code, 0, "{out}");
    let file = env.path().join(format!("snapshots/g/{name}.yaml"));
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(&format!("position: {len}")), "{saved}");
    let out = env.kco(&["diff", &name]);
    assert_eq!(out.code, 0, "{out}");

    let out = Gateway::apply_with_extra(&b, &env, &name, "/kco/bearer/extra");
    let t = out.all();
    assert_eq!(out.code, 0, "{t}");
    assert!(!t.contains(&g.token), "the token is printed nowhere: {t}");
    assert!(
        serde_json::to_string(&b.offsets(&name))
            .unwrap()
            .contains("/kco/bearer/extra"),
        "the apply reached the worker behind the gateway"
    );
    assert_eq!(b.state(&name), "RUNNING");
    for f in walk(env.path()) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&g.token),
            "token written into {}",
            f.display()
        );
    }
}

#[test]
fn a_wrong_token_and_no_token_fail_at_the_first_request() {
    let Some(_tb) = testbed() else { return };
    let Some(g) = gateway() else { return };
    let env = g.env("not-the-token");
    let out = env.kco(&["-v", "snapshot"]);
    let t = out.all();
    assert_eq!(out.code, 1, "{t}");
    assert!(t.contains("refused the credentials"), "{t}");
    assert!(t.contains("HTTP 401"), "{t}");
    assert!(t.contains(&format!("{}/", g.url)), "names the URL: {t}");
    assert!(first_contact_only(&t), "first contact only, once: {t}");
    assert!(!env.path().join("snapshots").exists(), "nothing written");

    // The variable the token comes from, unset: named, and nothing is sent.
    let out = env
        .cmd()
        .env_remove("KCO_G_TOKEN")
        .args(["-v", "snapshot"])
        .run();
    let t = out.all();
    assert_eq!(out.code, 1, "{t}");
    assert!(t.contains("KCO_G_TOKEN"), "{t}");
    assert!(!t.lines().any(|l| l.starts_with("GET ")), "{t}");
}

/// A user without write rights: the worker's answer to the stop is 403. The connector never
/// left RUNNING, so nothing is put back, no journal is left, and the nightly snapshot and
/// diff of that user still run.
#[test]
fn a_refused_stop_on_the_real_worker_leaves_nothing_behind() {
    let Some(tb) = testbed() else { return };
    let Some(g) = gateway() else { return };
    let b = tb.b();
    let (env, name, _, _c) = g.source_on(&b, "kco-e2e-ro", &g.read_only);
    let out = env.kco(&["snapshot", &name]);
    assert_eq!(out.code, 0, "{out}");
    let out = Gateway::apply_with_extra(&b, &env, &name, "/kco/ro/extra");
    let t = out.all();
    assert_eq!(out.code, 1, "{t}");
    assert!(t.contains("403"), "{t}");
    assert!(t.contains("PUT /connectors"), "the stop was tried: {t}");
    assert!(!t.contains("/resume"), "nothing to put back: {t}");
    assert!(!t.contains("kco recover"), "{t}");
    assert!(!env.path().join(".kco/journal/g.json").exists());
    assert_eq!(b.state(&name), "RUNNING");
    let out = env.kco(&["diff", &name]);
    assert_eq!(out.code, 2, "drift, not an error: {}", out.all());
    let out = env.kco(&["snapshot", &name]);
    assert_eq!(out.code, 0, "{out}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
