//! `kco init` and `kco doctor` through the binary, against the fake Connect: a kco.yaml that
//! the next command works with, never one overwritten, a wrong port refused as every first
//! contact refuses it; each check of doctor `ok`, or failing with its fix and exit 1.

use serde_json::Value;

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::global_flags::{not_connect, NotConnect};
use crate::support::data::SINK;
use crate::support::env::TestEnv;
use crate::support::fakes::sink_s;
use crate::support::git::{git, IDENTITY};
use crate::support::json::{failed_checks, parse_json};
use crate::support::run::unwrapped;

/// A file of the test's directory.
fn read(env: &TestEnv, file: &str) -> String {
    std::fs::read_to_string(env.path().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// From an empty directory: kco.yaml for the fake (the cluster named after the host), a git
/// repository, the schema file the snapshot files point at, the first snapshot; then `kco
/// ls`, with no flag, reads the cluster kco.yaml names and finds the file in sync.
#[test]
fn init_writes_a_config_the_next_command_works_with() {
    let fake = sink_s(State::Running).start();
    let env = TestEnv::new();
    let r = env.kco(&["init", "--url", &fake.url(), "--snapshot"]);
    let out = r.success("init");
    assert!(out.contains("Wrote kco.yaml: cluster `local`"), "{out}");
    assert!(out.contains("Initialized a git repository"), "{out}");
    let config = read(&env, "kco.yaml");
    assert!(
        config.contains(&format!("  local:\n    urls: [{}]\n", fake.url())),
        "{config}"
    );
    assert!(env.path().join(".git").is_dir());
    let schema = read(&env, "snapshots/connector-offsets-v1.json");
    assert_eq!(schema, env.kco(&["schema"]).success("schema"));
    let file = read(&env, "snapshots/local/s.yaml");
    assert!(
        file.starts_with("# yaml-language-server: $schema=../connector-offsets-v1.json\n"),
        "{file}"
    );
    let ls = env.kco(&["ls", "-o", "json"]);
    let listed = parse_json(&ls.success("ls"));
    assert_eq!(listed["cluster"], "local");
    assert_eq!(listed["connectors"][0]["name"], "s");
    assert_eq!(listed["connectors"][0]["status"], "in_sync");
}

/// In a directory under one with a kco.yaml: the parent's file is said to be read no more
/// from here.
#[test]
fn init_below_a_kco_yaml_says_it_takes_its_place() {
    let fake = sink_s(State::Running).start();
    let env = TestEnv::new();
    env.config("clusters: {}\n");
    std::fs::create_dir(env.path().join("sub")).unwrap();
    let sub = TestEnv::at(env.path().join("sub"));
    let r = sub.kco(&["init", "--url", &fake.url(), "--no-git"]);
    r.success("init");
    let parent = env.path().join("kco.yaml");
    assert!(
        r.stderr.contains(&format!(
            "warning: {} is no longer read from this directory: the kco.yaml written there takes its place",
            parent.display()
        )),
        "{}",
        r.stderr
    );
    assert_eq!(read(&env, "kco.yaml"), "clusters: {}\n");
    assert!(read(&sub, "kco.yaml").contains("  local:\n"));
}

/// `-o json`: one document, what was written and the snapshot's report inside it.
#[test]
fn init_as_json_is_one_document() {
    let fake = sink_s(State::Running).start();
    let env = TestEnv::new();
    let r = env.kco(&[
        "init",
        "--url",
        &fake.url(),
        "--cluster",
        "prod",
        "--no-git",
        "--snapshot",
        "-o",
        "json",
    ]);
    let doc = parse_json(&r.success("init"));
    assert_eq!(doc["config"], "kco.yaml");
    assert_eq!(doc["cluster"], "prod");
    assert_eq!(doc["urls"][0], fake.url().as_str());
    assert_eq!(doc["connect_version"], "4.1.0");
    assert_eq!(doc["connectors"], 1);
    assert_eq!(doc["git"], "none");
    assert_eq!(doc["schema"], "snapshots/connector-offsets-v1.json");
    assert_eq!(doc["snapshot"]["cluster"], "prod");
    assert_eq!(doc["snapshot"]["connectors"][0]["name"], "s");
    assert!(
        !env.path().join(".git").exists(),
        "--no-git runs no git init"
    );
}

/// An existing kco.yaml is refused by name, exit 1, and nothing is changed or asked;
/// --force writes the new one.
#[test]
fn init_never_overwrites_kco_yaml_without_force() {
    let fake = sink_s(State::Running).start();
    let env = TestEnv::new();
    let mine = "# mine\nclusters:\n  prod:\n    urls: [http://connect.prod:8083]\n";
    env.config(mine);
    let r = env.kco(&["init", "--url", &fake.url(), "--cluster", "a"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(
            "error: kco.yaml: exists already; kco init never overwrites it without --force"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("hint: `kco doctor`"), "{}", r.stderr);
    assert_eq!(read(&env, "kco.yaml"), mine);
    assert!(!env.path().join(".git").exists());
    assert!(!env.path().join("snapshots").exists());
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    // A broken kco.yaml is no obstacle to --force: it is not read.
    env.config("clusters: [\n");
    let r = env.kco(&["init", "--url", &fake.url(), "--cluster", "a", "--force"]);
    r.success("init --force");
    assert!(
        read(&env, "kco.yaml").contains("  a:\n"),
        "{}",
        read(&env, "kco.yaml")
    );
}

/// The Kafka broker's port given as the Connect URL: the first contact's error and hint,
/// exit 1, nothing written; the same as a document with `-o json`.
#[test]
fn init_refuses_a_kafka_port_with_the_first_contact_hint() {
    let (addr, _) = not_connect(NotConnect::Closes);
    let env = TestEnv::new();
    let r = env.kco(&["init", "--url", &format!("http://{addr}"), "-o", "json"]);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        r.stderr.contains(&format!(
            "error: no HTTP answer from Kafka Connect of cluster `local` (tried http://{addr})"
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "hint: what listens there does not speak HTTP: this looks like a Kafka broker port"
        ),
        "{}",
        r.stderr
    );
    let doc = parse_json(&r.stdout);
    assert_eq!(doc["error"]["exit_code"], 1);
    let entries: Vec<_> = std::fs::read_dir(env.path()).unwrap().collect();
    assert!(entries.is_empty(), "nothing is written: {entries:?}");
}

/// A project as `kco init` leaves it, cluster `a` at `fake`, with a git identity.
fn project(fake: &FakeConnect) -> TestEnv {
    let env = TestEnv::new().envs(IDENTITY);
    env.kco(&["init", "--url", &fake.url(), "--cluster", "a"])
        .success("init");
    env
}

/// Every check ok on a project `kco init` wrote: exit 0, one `ok` line each, and with
/// `-o json` a document of the same checks.
#[test]
fn doctor_says_ok_for_each_check_of_a_fresh_project() {
    let fake = sink_s(State::Running).start();
    let env = project(&fake);
    let r = env.kco(&["doctor"]);
    let out = unwrapped(&r.success("doctor"));
    for line in [
        "Cluster `a`\n",
        "  ok    reachable ",
        "  ok    version   Kafka Connect 4.1.0\n",
        "  ok    offsets   Connect's offsets REST API (read and alter)\n",
        "  ok    auth      no credentials configured, none asked for: 1 connector listed",
        "Project\n",
        "  ok    config    kco.yaml: 1 cluster\n",
        "  ok    git       this directory: a git repository, and an identity to commit with\n",
        "  ok    lock      this machine only: its git repository has no remote\n",
        "  ok    snapshots snapshots: no file of `a` yet (`kco snapshot --cluster a`)\n",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    assert!(!out.contains("FAIL"), "{out}");
    assert!(r.stderr.contains("All 8 checks ok"), "{}", r.stderr);
    let doc = parse_json(&env.kco(&["doctor", "-o", "json"]).success("doctor -o json"));
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["config"], "kco.yaml");
    let checks = doc["checks"].as_array().unwrap();
    let names: Vec<(&str, &str)> = checks
        .iter()
        .map(|c| {
            (
                c["cluster"].as_str().unwrap_or("-"),
                c["check"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("a", "reachable"),
            ("a", "version"),
            ("a", "offsets"),
            ("a", "auth"),
            ("-", "config"),
            ("-", "git"),
            ("-", "lock"),
            ("-", "snapshots"),
        ]
    );
    for c in checks {
        assert_eq!(c["ok"], true, "{c}");
        assert!(c["fix"].is_null(), "{c}");
        let keys: Vec<&String> = c.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["check", "cluster", "elapsed_ms", "fix", "message", "ok"],
            "{c}"
        );
    }
    assert!(checks[0]["elapsed_ms"].is_u64(), "{}", checks[0]);
}

/// A cluster that is down is named with its fix, the others still checked, exit 1; so is
/// a project outside git without an identity.
#[test]
fn doctor_names_a_cluster_down_with_its_fix_and_exits_1() {
    let fake = sink_s(State::Running).start();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let env = TestEnv::new();
    env.config(format!(
        "clusters:\n  a:\n    urls: [{}]\n  b:\n    urls: [http://{down}]\n",
        fake.url()
    ));
    let r = env.kco(&["doctor"]);
    let out = unwrapped(&r.stdout);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(out.contains("  ok    auth "), "{out}");
    let failed = format!(
        "Cluster `b`\n  FAIL  reachable cannot reach Kafka Connect of cluster `b` (tried http://{down}): "
    );
    assert!(out.contains(&failed), "{out}");
    assert!(
        out.contains("fix: is the worker running and the URL right?"),
        "{out}"
    );
    assert!(
        out.contains("  FAIL  git       this directory is not in a git repository"),
        "{out}"
    );
    assert!(r.stderr.contains("2 of 9 checks failed"), "{}", r.stderr);
    let r = env.kco(&["doctor", "-o", "json"]);
    assert_eq!(r.code, 1);
    let doc = parse_json(&r.stdout);
    assert_eq!(doc["ok"], false);
    let failed = failed_checks(&doc);
    assert_eq!(failed.len(), 2, "{doc}");
    assert_eq!(failed[0]["cluster"], "b");
    assert_eq!(failed[0]["check"], "reachable");
    assert!(
        failed[0]["fix"].as_str().unwrap().contains("--url"),
        "{doc}"
    );
    assert_eq!(failed[1]["cluster"], Value::Null);
    assert_eq!(failed[1]["check"], "git");
    assert!(failed[1]["fix"].as_str().unwrap().contains("git init"));
}

/// Credentials refused on the listing: `auth` fails with its fix, and the password (from
/// the environment) is printed nowhere.
#[test]
fn doctor_says_credentials_refused_without_printing_them() {
    let fake = sink_s(State::Running).start();
    let env = project(&fake).envs(&[("PW", "hunter2-secret")]);
    fake.fault(
        Fault::on("GET", "/connectors*")
            .respond(401, "Unauthorized")
            .always(),
    );
    env.config(format!(
        "clusters:\n  a:\n    urls: [{}]\n    auth:\n      basic: {{username: kco, password: \"${{env:PW}}\"}}\n",
        fake.url()
    ));
    for args in [&["doctor"][..], &["doctor", "-o", "json"]] {
        let r = env.kco(args);
        assert_eq!(r.code, 1, "{}", r.all());
        assert!(!r.all().contains("hunter2"), "{}", r.all());
        assert!(r.all().contains("refused the credentials"), "{}", r.all());
    }
    let r = env.kco(&["doctor"]);
    let out = unwrapped(&r.stdout);
    assert!(
        out.contains("  FAIL  auth      cluster `a`: listing the connectors failed"),
        "{out}"
    );
    assert!(
        out.contains(
            "fix: the worker refused the credentials: check the cluster's `auth` in kco.yaml"
        ),
        "{out}"
    );
    // Refused at the first contact already: the worker is reachable, the credentials are not
    // accepted.
    fake.clear_faults();
    fake.fault(Fault::on("GET", "*").respond(401, "Unauthorized").always());
    let r = env.kco(&["doctor"]);
    let out = unwrapped(&r.stdout);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        out.contains("  ok    reachable the worker answered ("),
        "{out}"
    );
    assert!(
        out.contains("  FAIL  auth      Kafka Connect refused the credentials"),
        "{out}"
    );
    assert!(!r.all().contains("hunter2"), "{}", r.all());
}

/// A worker before 3.5 without `kafka:` and `connectTopics`: its offsets cannot be read,
/// and the fix names what kco.yaml needs.
#[test]
fn doctor_says_what_an_old_worker_needs_in_kco_yaml() {
    let fake = FakeConnect::builder()
        .version("3.4.1")
        .sink("s", SINK, State::Running, serde_json::json!([]))
        .start();
    let env = TestEnv::new().envs(IDENTITY);
    let r = env.kco(&["init", "--url", &fake.url(), "--cluster", "a"]);
    r.success("init");
    assert!(
        r.stderr.contains("warning: ") && r.stderr.contains("reading offsets needs Kafka Connect 3.5.0 or newer: kco reads the offsets of cluster `a` through Kafka once kco.yaml gives it `kafka:` and `connectTopics: {offsets: <the workers' offset.storage.topic>}`"),
        "{}",
        r.stderr
    );
    let r = env.kco(&["doctor", "--cluster", "a"]);
    let out = unwrapped(&r.stdout);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        out.contains("  FAIL  offsets   ")
            && out.contains("reading offsets needs Kafka Connect 3.5.0 or newer"),
        "{out}"
    );
    assert!(
        out
            .contains("fix: give cluster `a` `kafka:` and `connectTopics: {offsets: <the workers' offset.storage.topic>}` in kco.yaml"),
        "{out}");
}

/// The git remote the locks are shared through: said to answer, or failing with the fix
/// the lock's own error gives.
#[test]
fn doctor_checks_the_git_remote_the_locks_are_shared_through() {
    let fake = sink_s(State::Running).start();
    let env = project(&fake);
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "--quiet", "--bare", "r.git"]);
    let url = remote.path().join("r.git").display().to_string();
    git(env.path(), &["remote", "add", "origin", &url]);
    let out = unwrapped(&env.kco(&["doctor"]).success("doctor"));
    assert!(
        out.contains(
            "  ok    lock      shared through git remote `origin`, which answers (0 locks held) ("
        ),
        "{out}"
    );
    let gone = remote.path().join("gone.git").display().to_string();
    git(env.path(), &["remote", "set-url", "origin", &gone]);
    let r = env.kco(&["doctor"]);
    let out = unwrapped(&r.stdout);
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(
        out.contains("  FAIL  lock      cannot read the cluster locks on git remote `origin`: "),
        "{out}"
    );
    assert!(
        out.contains("fix: kco shares the lock through the git remote the runners push to: check that `git push origin` works here"),
        "{out}");
}
