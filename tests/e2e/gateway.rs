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
use std::process::Output;

use serde_json::json;

use crate::harness::{
    append_lines, env_url, file_source_config, kco_with_env, numbered, output_text as text,
    service_dir, service_file, source_position, temp_dir, testbed, unique_name,
};
use crate::kco_steps::set_offsets;

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
    /// A kco.yaml for cluster g: the gateway's CA, the token from `KCO_G_TOKEN`.
    fn config(&self, dir: &Path) {
        let yaml = format!(
            "clusters:\n  g:\n    urls: [{}]\n    auth:\n      bearer: {{token: \"${{env:KCO_G_TOKEN}}\"}}\n    tls: {{caFile: {}/ca.pem}}\n",
            self.url,
            self.dir.display()
        );
        std::fs::write(dir.join("kco.yaml"), yaml).unwrap();
    }

    fn kco(&self, dir: &Path, args: &[&str], token: Option<&str>) -> Output {
        let mut all = vec!["--cluster", "g"];
        all.extend_from_slice(args);
        let mut env = vec![("NO_COLOR", "1")];
        if let Some(t) = token {
            env.push(("KCO_G_TOKEN", t));
        }
        kco_with_env(&all, dir, &env)
    }
}

impl Gateway {
    /// A temp dir with the gateway's kco.yaml, and a FileStream source on `b` (cluster g's
    /// worker) that has read its 10-line file: the dir, the source's name, the file's length
    /// and the connector (deleted when dropped).
    fn source_on(
        &self,
        b: &crate::harness::Connect,
        prefix: &str,
    ) -> (
        tempfile::TempDir,
        String,
        i64,
        crate::harness::ConnectorGuard,
    ) {
        let dir = temp_dir();
        self.config(dir.path());
        let input = dir.path().join("in.txt");
        append_lines(&input, &numbered("line", 1..=10));
        let len = std::fs::metadata(&input).unwrap().len() as i64;
        let name = unique_name(prefix);
        let guard = b.create(
            &name,
            file_source_config(&input, &unique_name(&format!("{prefix}-topic"))),
        );
        b.wait_offsets(&name, "the whole file read", |o| {
            source_position(o, &input) == Some(len)
        });
        (dir, name, len, guard)
    }

    /// Adds a partition `extra` (at position 5) to the live offsets of `name` on `b` in
    /// its snapshot file, and applies that file through the gateway with `token` (`-v`).
    fn apply_with_extra(
        &self,
        b: &crate::harness::Connect,
        dir: &Path,
        name: &str,
        extra: &str,
        token: &str,
    ) -> Output {
        let file = dir.join(format!("snapshots/g/{name}.yaml"));
        let mut offsets: Vec<serde_json::Value> = b.offsets(name);
        offsets.push(json!({"partition": {"filename": extra}, "offset": {"position": 5}}));
        set_offsets(&file, offsets);
        self.kco(
            dir,
            &["-v", "apply", file.to_str().unwrap(), "--yes"],
            Some(token),
        )
    }
}

#[test]
fn snapshot_diff_and_apply_through_a_bearer_token_gateway() {
    let Some(tb) = testbed() else { return };
    let Some(g) = gateway() else { return };
    let b = tb.b();
    let (dir, name, len, _c) = g.source_on(&b, "kco-e2e-bearer");

    let out = g.kco(dir.path(), &["-v", "snapshot", &name], Some(&g.token));
    assert!(out.status.success(), "{}", text(&out));
    let file = dir.path().join(format!("snapshots/g/{name}.yaml"));
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(&format!("position: {len}")), "{saved}");
    let out = g.kco(dir.path(), &["diff", &name], Some(&g.token));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let out = g.apply_with_extra(&b, dir.path(), &name, "/kco/bearer/extra", &g.token);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(!t.contains(&g.token), "the token is printed nowhere: {t}");
    assert!(
        serde_json::to_string(&b.offsets(&name))
            .unwrap()
            .contains("/kco/bearer/extra"),
        "the apply reached the worker behind the gateway"
    );
    assert_eq!(b.state(&name), "RUNNING");
    for f in walk(dir.path()) {
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
    let dir = temp_dir();
    g.config(dir.path());
    let out = g.kco(dir.path(), &["-v", "snapshot"], Some("not-the-token"));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("refused the credentials"), "{t}");
    assert!(t.contains("HTTP 401"), "{t}");
    assert!(t.contains(&format!("{}/", g.url)), "names the URL: {t}");
    let requests = t.lines().filter(|l| l.starts_with("GET ")).count();
    assert_eq!(requests, 1, "one request, nothing else: {t}");
    assert!(!dir.path().join("snapshots").exists(), "nothing written");

    // The variable the token comes from, unset: named, and nothing is sent.
    let out = g.kco(dir.path(), &["-v", "snapshot"], None);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
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
    let (dir, name, _, _c) = g.source_on(&b, "kco-e2e-ro");
    let out = g.kco(dir.path(), &["snapshot", &name], Some(&g.read_only));
    assert!(out.status.success(), "{}", text(&out));
    let out = g.apply_with_extra(&b, dir.path(), &name, "/kco/ro/extra", &g.read_only);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("403"), "{t}");
    assert!(t.contains("PUT /connectors"), "the stop was tried: {t}");
    assert!(!t.contains("/resume"), "nothing to put back: {t}");
    assert!(!t.contains("kco recover"), "{t}");
    assert!(!dir.path().join(".kco/journal/g.json").exists());
    assert_eq!(b.state(&name), "RUNNING");
    let out = g.kco(dir.path(), &["diff", &name], Some(&g.read_only));
    assert_eq!(
        out.status.code(),
        Some(2),
        "drift, not an error: {}",
        text(&out)
    );
    let out = g.kco(dir.path(), &["snapshot", &name], Some(&g.read_only));
    assert!(out.status.success(), "{}", text(&out));
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
