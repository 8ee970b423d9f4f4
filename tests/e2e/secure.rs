//! Cluster s (`scripts/secure-connect.sh up`): a real worker behind HTTPS with client
//! certificates required and basic auth. snapshot, diff and apply work with a kco.yaml naming
//! the CA, the client certificate and `${env:VAR}` credentials; a wrong password, an unknown
//! CA and a missing client certificate each fail at the first request (exit 1), naming the
//! cause and the URL; the insecure switch warns.
//!
//! Skipped when the secure test bed is not there, unless `KCO_E2E_SECURE=required`.
//! `KCO_E2E_SECURE_URL` (default https://127.0.0.1:8443) and `KCO_E2E_S_DIR` (default
//! `<test bed dir>/secure`) point elsewhere.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{
    append_lines, env_url, file_source_config, first_contact_only, numbered, service_dir,
    service_file, skip_unless_required, unique_name, wait_for,
};
use crate::kco_steps::set_offsets;
use crate::support::env::TestEnv;
use crate::support::run::Run;

struct Secure {
    url: String,
    dir: PathBuf,
    password: String,
}

fn secure() -> Option<Secure> {
    let dir = service_dir("KCO_E2E_S_DIR", "secure");
    let credentials = service_file(&dir, "credentials", "KCO_E2E_SECURE", "secure-connect.sh")?;
    let (_, password) = credentials.trim().split_once(':').expect("user:password");
    Some(Secure {
        url: env_url("KCO_E2E_SECURE_URL", "https://127.0.0.1:8443"),
        password: password.to_string(),
        dir,
    })
}

impl Secure {
    /// A kco.yaml for cluster s; `tls` replaces the TLS block.
    fn config(&self, tls: &str) -> String {
        format!(
            "clusters:\n  s:\n    urls: [{}]\n    auth:\n      basic: {{username: kco, password: \"${{env:KCO_S_PASSWORD}}\"}}\n{tls}",
            self.url
        )
    }

    /// kco on cluster s (`--cluster s`, the password in `KCO_S_PASSWORD`), beside
    /// [`Secure::config`] of `tls`.
    fn env(&self, tls: &str) -> TestEnv {
        let env = TestEnv::new().args(&["--cluster", "s"]);
        env.config(self.config(tls));
        env.envs(&[("KCO_S_PASSWORD", &self.password)])
    }

    fn full_tls(&self) -> String {
        let d = self.dir.display();
        format!("    tls: {{caFile: {d}/ca.pem, certFile: {d}/client.pem, keyFile: {d}/client-key.pem}}\n")
    }

    /// A client of the worker for the test's own setup (mutual TLS and basic auth).
    fn http(&self) -> reqwest::blocking::Client {
        let pem = |f: &str| std::fs::read(self.dir.join(f)).unwrap();
        let mut id = pem("client.pem");
        id.extend(pem("client-key.pem"));
        reqwest::blocking::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&pem("ca.pem")).unwrap())
            .identity(reqwest::Identity::from_pem(&id).unwrap())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap()
    }

    fn get(&self, path: &str) -> Option<Value> {
        let r = self
            .http()
            .get(format!("{}{path}", self.url))
            .basic_auth("kco", Some(&self.password))
            .send()
            .ok()?;
        r.status().is_success().then(|| r.json().unwrap())
    }
}

/// Asserts a failure at the first contact: exit 1, `cause` and the URL named, each request
/// tried once (a snapshot asks for its listing beside `GET /`), nothing after it.
fn fails_at_once(s: &Secure, out: &Run, cause: &str) {
    let t = out.all();
    assert_eq!(out.code, 1, "{t}");
    assert!(t.contains(cause), "{t}");
    assert!(t.contains(&format!("{}/", s.url)), "names the URL: {t}");
    assert!(first_contact_only(&t), "first contact only, once: {t}");
    assert!(!t.contains(&s.password), "{t}");
}

#[test]
fn snapshot_diff_and_apply_over_mutual_tls_and_basic_auth() {
    let Some(s) = secure() else { return };
    let env = s.env(&s.full_tls());
    let name = unique_name("kco-e2e-secure");
    let input = env.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=10));
    let config = file_source_config(&input, &unique_name("kco-e2e-secure-topic"));
    let created = s
        .http()
        .post(format!("{}/connectors", s.url))
        .basic_auth("kco", Some(&s.password))
        .json(&json!({"name": name, "config": config}))
        .send()
        .unwrap();
    assert!(created.status().is_success(), "{:?}", created.text());
    wait_for("offsets on cluster s", Duration::from_secs(90), || match s
        .get(&format!("/connectors/{name}/offsets"))
    {
        Some(v) if !v["offsets"].as_array().unwrap().is_empty() => Ok(()),
        other => Err(format!("{other:?}")),
    });
    let out = env.kco(&["snapshot", &name]);
    assert_eq!(out.code, 0, "{out}");
    let file = env.path().join(format!("snapshots/s/{name}.yaml"));
    let out = env.kco(&["diff", &name]);
    assert_eq!(out.code, 0, "{out}");
    let mut offsets = s.get(&format!("/connectors/{name}/offsets")).unwrap()["offsets"]
        .as_array()
        .unwrap()
        .clone();
    offsets
        .push(json!({"partition": {"filename": "/kco/secure/extra"}, "offset": {"position": 3}}));
    set_offsets(&file, offsets);
    let out = env.kco(&["-v", "apply", file.to_str().unwrap(), "--yes"]);
    let t = out.all();
    assert_eq!(out.code, 0, "{t}");
    assert!(!t.contains(&s.password), "{t}");
    let live = s.get(&format!("/connectors/{name}/offsets")).unwrap();
    assert!(live.to_string().contains("/kco/secure/extra"), "{live}");
    assert_eq!(
        s.get(&format!("/connectors/{name}/status")).unwrap()["connector"]["state"],
        "RUNNING"
    );
    let _ = s
        .http()
        .delete(format!("{}/connectors/{name}", s.url))
        .basic_auth("kco", Some(&s.password))
        .send();
}

#[test]
fn wrong_password_unknown_ca_and_missing_client_certificate_fail_at_once() {
    let Some(s) = secure() else { return };
    // "Unknown CA" means unknown to the system too: not while another test installs it.
    let _trust = SYSTEM_TRUST.lock().unwrap_or_else(|p| p.into_inner());
    let env = s.env(&s.full_tls());
    let wrong = env.cmd().env("KCO_S_PASSWORD", "not-the-password");
    let out = wrong.args(["-v", "snapshot"]).run();
    fails_at_once(&s, &out, "Kafka Connect refused the credentials");
    assert!(out.all().contains("HTTP 401"));

    let d = s.dir.display();
    env.config(s.config(&format!(
        "    tls: {{certFile: {d}/client.pem, keyFile: {d}/client-key.pem}}\n"
    )));
    let out = env.kco(&["-v", "snapshot"]);
    fails_at_once(&s, &out, "not signed by a CA kco trusts");
    assert!(out.all().contains("UnknownIssuer"));

    env.config(s.config(&format!("    tls: {{caFile: {d}/ca.pem}}\n")));
    let out = env.kco(&["-v", "snapshot"]);
    fails_at_once(&s, &out, "wants a client certificate");

    // The insecure switch works, and says so on stderr.
    env.config(s.config(&format!("    tls: {{insecureSkipVerify: true, certFile: {d}/client.pem, keyFile: {d}/client-key.pem}}\n")));
    let out = env.kco(&["snapshot"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out
        .stderr
        .contains("warning: TLS certificate checks are OFF for cluster `s`"));
}

/// The operating system's trust store is one for the whole machine: the test that installs
/// cluster s's CA in it and the tests that count on its absence take turns.
static SYSTEM_TRUST: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Where Debian's `update-ca-certificates` takes local CAs from.
const LOCAL_CAS: &str = "/usr/local/share/ca-certificates";

/// Cluster s's CA in the system trust store while it lives.
struct SystemCa(PathBuf);

impl SystemCa {
    fn install(ca: &Path) -> SystemCa {
        let target = Path::new(LOCAL_CAS).join(format!("kco-e2e-{}.crt", std::process::id()));
        std::fs::create_dir_all(LOCAL_CAS).unwrap();
        std::fs::copy(ca, &target).unwrap();
        let installed = SystemCa(target);
        update_ca_certificates();
        installed
    }
}

impl Drop for SystemCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        update_ca_certificates();
    }
}

fn update_ca_certificates() {
    let out = std::process::Command::new("update-ca-certificates")
        .arg("--fresh")
        .output()
        .expect("run update-ca-certificates");
    assert!(out.status.success(), "update-ca-certificates: {out:?}");
}

/// Root, with Debian's trust store tool: what installing a CA system-wide takes.
fn can_change_system_trust() -> bool {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let tool = std::process::Command::new("update-ca-certificates")
        .arg("--help")
        .output()
        .is_ok();
    root && tool && Path::new("/etc/ssl/certs").is_dir()
}

#[test]
fn a_ca_installed_system_wide_is_trusted_without_naming_it() {
    let Some(s) = secure() else { return };
    if !can_change_system_trust() {
        skip_unless_required(
            "KCO_E2E_SECURE",
            "installing a CA system-wide needs root and update-ca-certificates",
        );
        return;
    }
    let _trust = SYSTEM_TRUST.lock().unwrap_or_else(|p| p.into_inner());
    let d = s.dir.display();
    // No caFile: only the system's trust store can vouch for the worker.
    let env = s.env(&format!(
        "    tls: {{certFile: {d}/client.pem, keyFile: {d}/client-key.pem}}\n"
    ));
    let before = env.kco(&["snapshot"]);
    assert_eq!(before.code, 1, "{before}");
    let installed = SystemCa::install(&s.dir.join("ca.pem"));
    let after = env.kco(&["snapshot"]);
    assert_eq!(after.code, 0, "{after}");
    drop(installed);
    let removed = env.kco(&["snapshot"]);
    assert_eq!(removed.code, 1, "{removed}");
}
