//! Global flags: `--verbose` traces every REST call on stderr (credentials never appear);
//! `--output markdown` is refused outside `diff`; usage errors exit 1.

use serde_json::json;

use crate::fake_connect::{FakeConnect, State};
use crate::support::data::SOURCE as SRC;
use crate::support::run::Kco;

/// A worker with one running FileStream source, `c`, at position 3.
fn one_source() -> FakeConnect {
    FakeConnect::builder()
        .source(
            "c",
            SRC,
            State::Running,
            json!([{"partition": {"filename": "/f"}, "offset": {"position": 3}}]),
        )
        .start()
}

#[test]
fn verbose_traces_each_call_and_quiet_runs_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let fake = one_source();
    std::fs::write(
        dir.path().join("kco.yaml"),
        format!(
            "clusters:\n  a:\n    urls: [{}]\n    auth:\n      basic: {{username: u, password: '${{env:PW}}'}}\n",
            fake.url()
        ),
    )
    .unwrap();
    let r = Kco::new(dir.path())
        .env("PW", "pa55word-xyz")
        .args(["-v", "snapshot"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in [
        "GET /: ok",
        "GET /connectors?expand=status&expand=info: ok",
        "GET /connectors/c/offsets: ok",
    ] {
        assert!(
            r.stderr.contains(line),
            "missing `{line}` in:\n{}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("pa55word") && !r.stdout.contains("pa55word"));
    // The first contact's `GET /` serves the command's version check too: one round trip.
    for args in [
        &["-v", "snapshot"][..],
        &["-v", "diff"],
        &["-v", "apply", "snapshots/a", "--dry-run"],
    ] {
        let r = Kco::new(dir.path())
            .env("PW", "pa55word-xyz")
            .args(args)
            .run();
        assert_eq!(
            r.stderr.matches("GET /: ok").count(),
            1,
            "{args:?}:\n{}",
            r.stderr
        );
    }
    let r = Kco::new(dir.path())
        .env("PW", "pa55word-xyz")
        .args(["snapshot"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("GET /connectors/c/offsets"),
        "{}",
        r.stderr
    );
}

#[test]
fn markdown_outside_diff_and_bad_flags_are_usage_errors_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path())
        .args(["-o", "markdown", "validate"])
        .run();
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--output markdown is for `kco diff`"),
        "{}",
        r.stderr
    );
    let r = Kco::new(dir.path())
        .args(["snapshot", "--no-such-flag"])
        .run();
    assert_eq!(
        r.code, 1,
        "clap's usage errors must not exit 2 (diff's differences)"
    );
    let r = Kco::new(dir.path()).args(["--help"]).run();
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("2  diff only: differences found"),
        "{}",
        r.stdout
    );
}

#[test]
fn an_unreachable_worker_is_named_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path())
        .args(["--url", "http://127.0.0.1:9", "snapshot"])
        .run();
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("GET http://127.0.0.1:9/: cannot connect"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("hint:"), "{}", r.stderr);
    assert!(!dir.path().join("snapshots").exists(), "nothing written");
}

#[test]
fn credentials_in_a_url_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let r = Kco::new(dir.path())
        .args([
            "--url",
            "http://kco:t0psecret@127.0.0.1:9",
            "-v",
            "snapshot",
        ])
        .run();
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("http://127.0.0.1:9/"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("t0psecret") && !r.stdout.contains("t0psecret"),
        "{}",
        r.stderr
    );
    let r = Kco::new(dir.path())
        .args(["--url", "http://kco:t0psecret@[bad", "snapshot"])
        .run();
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains("t0psecret"), "{}", r.stderr);
}

#[test]
fn a_url_password_reaches_the_worker_intact() {
    // `+`, `&`, `%` and `@` written percent-encoded in the URL, as RFC 3986 wants them; a
    // form decoder would turn `+` into a space and cut the password at `&`.
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeConnect::builder()
        .source("c", SRC, State::Running, json!([]))
        .start();
    let url = fake
        .url()
        .replace("http://", "http://ops%2Bteam:a+b&c%25d%40e@");
    let r = Kco::new(dir.path()).args(["--url", &url, "snapshot"]).run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    use base64::Engine;
    let expected = base64::engine::general_purpose::STANDARD.encode("ops+team:a+b&c%d@e");
    let requests = fake.requests();
    assert!(!requests.is_empty());
    for request in requests {
        let header = request.authorization.as_deref();
        assert_eq!(
            header,
            Some(format!("Basic {expected}").as_str()),
            "{request}"
        );
    }
    assert!(!r.stderr.contains("a+b") && !r.stdout.contains("a+b"));
}

#[test]
fn an_unreachable_worker_fails_every_command_at_once_without_retrying() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("snapshots/a")).unwrap();
    for args in [
        vec!["snapshot"],
        vec!["diff", "snapshots/a"],
        vec!["reset", "c", "--yes"],
    ] {
        let mut all = vec!["--url", "http://127.0.0.1:9", "--cluster", "a", "-v"];
        all.extend(args.iter().copied());
        let r = Kco::new(dir.path()).args(&all).run();
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        let attempts = r.stderr.matches("GET /: cannot connect").count();
        assert_eq!(attempts, 1, "{args:?} retried:\n{}", r.stderr);
        assert!(r.stderr.contains("hint:"), "{}", r.stderr);
    }
}

/// A listener that accepts connections and never answers (issue 30): every worker URL is
/// tried once, within `timeoutSeconds` each, then the command fails naming them and the
/// bound, instead of waiting out the retry deadline; the next URL is tried after a silent one.
#[test]
fn a_worker_that_never_answers_fails_every_command_after_its_timeout_once_per_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for c in listener.incoming() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            kept.push(c);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("snapshots/a")).unwrap();
    std::fs::write(
        dir.path().join("kco.yaml"),
        format!(
            "clusters:\n  a:\n    urls: [http://{addr}, http://{addr}/]\n    timeoutSeconds: 1\n"
        ),
    )
    .unwrap();
    // snapshot and diff ask for the listing beside the first contact's `GET /`: two requests
    // at first contact, each tried once per URL.
    for (args, per_url) in [
        (vec!["snapshot"], 2),
        (vec!["diff", "snapshots/a"], 2),
        (vec!["reset", "c", "--yes"], 1),
    ] {
        let mut all = vec!["--cluster", "a", "-v"];
        all.extend(args.iter().copied());
        let before = accepted.load(std::sync::atomic::Ordering::SeqCst);
        let run = Kco::new(dir.path()).args(&all).spawn();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(run.finish());
        });
        // Far beyond the bound: a hang or the 60 s retry deadline, not a slow machine.
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(45))
            .unwrap_or_else(|_| panic!("{args:?} did not return"));
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        let attempts = accepted.load(std::sync::atomic::Ordering::SeqCst) - before;
        assert_eq!(
            attempts,
            2 * per_url,
            "{args:?}: one attempt per URL:\n{}",
            r.stderr
        );
        assert!(
            r.stderr.contains(&format!(
                "cannot reach Kafka Connect of cluster `a` (tried http://{addr}, http://{addr}/)"
            )) && r.stderr.contains("no answer within 1s (`timeoutSeconds`)"),
            "{}",
            r.stderr
        );
    }
}

/// How a loopback listener that is not a Connect worker treats each connection it accepts,
/// once it has read what kco sent.
#[derive(Clone, Copy, Debug)]
pub(crate) enum NotConnect {
    /// A Kafka broker given an HTTP request: it reads `GET ` as a request size far above its
    /// limit and closes the connection.
    Closes,
    /// Bytes that are not HTTP (a Kafka response's size and correlation id).
    Garbage,
    /// Accepts and never answers.
    Silent,
}

/// Starts `mode`'s listener; the first line of each request it accepted goes to the list.
pub(crate) fn not_connect(
    mode: NotConnect,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for c in listener.incoming() {
            let Ok(mut c) = c else { continue };
            let mut buf = [0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            let text = String::from_utf8_lossy(&buf[..n]).to_string();
            log.lock()
                .unwrap()
                .push(text.lines().next().unwrap_or("").to_string());
            match mode {
                NotConnect::Closes => drop(c),
                NotConnect::Garbage => {
                    let _ = c.write_all(
                        b"\x00\x00\x00\x0c\x00\x00\x00\x01\x00\x23\xff\xfe\x01\x02\x03\x04",
                    );
                }
                NotConnect::Silent => kept.push(c),
            }
        }
    });
    (addr, seen)
}

/// The Kafka broker's port given as the Connect URL (the bootstrap server), and a listener
/// that never answers: with `timeoutSeconds: 2`, `diff` and `reset` fail within the bound
/// plus a second, having asked the cluster nothing after its first contact (`GET /`, and the
/// listing asked beside it): no connector's offsets. What does not speak HTTP is said so,
/// with Connect's usual port.
#[test]
fn a_first_contact_that_fails_ends_the_command_within_timeout_seconds() {
    use std::time::{Duration, Instant};
    for mode in [NotConnect::Closes, NotConnect::Garbage, NotConnect::Silent] {
        for args in [&["diff"][..], &["reset", "c", "--yes"]] {
            // A listener of its own per run: nothing of another run is counted.
            let (addr, seen) = not_connect(mode);
            let dir = tempfile::tempdir().unwrap();
            crate::support::data::SnapshotFile::source(
                "c",
                crate::support::data::source_offsets(3),
            )
            .write_in(&dir.path().join("snapshots/a"));
            std::fs::write(
                dir.path().join("kco.yaml"),
                format!("clusters:\n  a:\n    urls: [http://{addr}]\n    timeoutSeconds: 2\n"),
            )
            .unwrap();
            let started = Instant::now();
            let r = Kco::new(dir.path()).args(args).run();
            let took = started.elapsed();
            // The listener reads each connection kco opened before it exited.
            std::thread::sleep(Duration::from_millis(300));
            assert_eq!(r.code, 1, "{mode:?} {args:?}: {}", r.stderr);
            assert!(
                took < Duration::from_secs(3),
                "{mode:?} {args:?} took {took:?}: {}",
                r.stderr
            );
            // A connection kco opened and left before sending on it (the listing beside
            // `GET /`, once that failed) is no request.
            let requests: Vec<String> = seen
                .lock()
                .unwrap()
                .iter()
                .filter(|l| !l.is_empty())
                .cloned()
                .collect();
            assert_eq!(
                requests.iter().filter(|l| l.starts_with("GET / ")).count(),
                1,
                "{mode:?} {args:?}: {requests:?}"
            );
            assert!(
                requests
                    .iter()
                    .all(|l| l.starts_with("GET / ") || l.starts_with("GET /connectors?")),
                "{mode:?} {args:?}: more was asked after the first contact: {requests:?}"
            );
            let said = match mode {
                NotConnect::Silent => "no answer within 2s (`timeoutSeconds`)",
                _ => "hint: what listens there does not speak HTTP: this looks like a Kafka broker port (a bootstrap server's); Connect's REST port is usually 8083",
            };
            assert!(r.stderr.contains(said), "{mode:?} {args:?}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains(&format!("of cluster `a` (tried http://{addr}")),
                "{}",
                r.stderr
            );
        }
    }
}

/// Help fits the terminal it is printed on. Here no stream is a terminal and `COLUMNS` is
/// unset (the runner clears the environment), as for help piped into a file or a pager, or a
/// CI log: every line of every command's help fits 80 columns, where clap's own fallback is
/// 100. A width that is known (`COLUMNS`, as clap reads it when no stream is a terminal; on a
/// terminal clap asks the terminal) is followed. A command's own options come before the
/// global ones.
#[test]
fn help_fits_80_columns_where_the_width_is_unknown_and_follows_a_known_one() {
    let dir = tempfile::tempdir().unwrap();
    let commands = [
        "snapshot",
        "diff",
        "apply",
        "reset",
        "log",
        "show",
        "recover",
        "undo",
        "validate",
        "fmt",
        "merge-file",
        "schema",
        "completions",
        "import",
        "export",
        "ls",
        "lock",
    ];
    let mut runs = vec![vec!["--help"], vec!["-h"]];
    runs.extend(commands.iter().map(|c| vec![*c, "--help"]));
    for args in &runs {
        let r = Kco::new(dir.path()).args(args).run();
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let long: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.chars().count() > 80)
            .collect();
        assert!(
            long.is_empty(),
            "kco {args:?}: lines over 80:\n{}",
            long.join("\n")
        );
    }
    let wide = Kco::new(dir.path())
        .env("COLUMNS", "160")
        .args(["--help"])
        .run();
    assert!(
        wide.stdout.lines().any(|l| l.chars().count() > 80),
        "COLUMNS=160 is followed:\n{}",
        wide.stdout
    );
    let narrow = Kco::new(dir.path())
        .env("COLUMNS", "60")
        .args(["ls", "--help"])
        .run();
    assert!(
        narrow.stdout.lines().all(|l| l.chars().count() <= 60),
        "{}",
        narrow.stdout
    );
    let ls = Kco::new(dir.path()).args(["ls", "--help"]).run().stdout;
    let own = ls.find("\nOptions:\n").expect("Options:");
    let global = ls.find("\nGlobal options:\n").expect("Global options:");
    assert!(own < global, "{ls}");
    assert!(ls[own..global].contains("--parallel"), "{ls}");
    assert!(!ls[own..global].contains("--cluster"), "{ls}");
    assert!(
        ls[global..].contains("--cluster") && ls[global..].contains("--output"),
        "{ls}"
    );
}

/// A worker URL with a path (`http://host:8083/connectors`, copied from a REST call) finds no
/// Kafka Connect at first contact; the hint names the path and the URL to give instead, and
/// nothing else is asked.
#[test]
fn a_worker_url_with_a_path_says_to_give_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeConnect::builder().start();
    let url = format!("{}/connectors", fake.url());
    let r = Kco::new(dir.path())
        .args(["--cluster", "a", "--url", &url, "ls"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "hint: the worker URL `{url}` has the path `/connectors`: Connect's REST API is at the root of its port; give `{}`",
            fake.url().trim_end_matches('/')
        )),
        "{}",
        r.stderr
    );
    let asked: Vec<String> = fake.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        asked.iter().all(|p| p.starts_with("/connectors/")),
        "only the first contact (and the listing beside it): {asked:?}"
    );
    assert!(!asked.iter().any(|p| p.contains("offsets")), "{asked:?}");
}

/// `https://` naming a worker that serves plain HTTP: the TLS handshake fails at first
/// contact, and the hint says to write `http://`; nothing else is asked.
#[test]
fn https_to_a_plain_http_worker_says_to_write_http() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeConnect::builder().start();
    let url = fake.url().replacen("http://", "https://", 1);
    let r = Kco::new(dir.path())
        .args(["--cluster", "a", "--url", &url, "ls"])
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("TLS handshake with Kafka Connect failed")
            && r.stderr.contains(
                "hint: the worker answers plain HTTP, not TLS: write its URL with http:// instead of https://"
            ),
        "{}",
        r.stderr
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

/// The completion script of `kco completions bash`, sourced by a real bash: at each <TAB> it
/// asks kco, which answers with the clusters of kco.yaml after `--cluster`, the connectors of
/// the snapshot files after `show`, and the subcommands.
#[test]
fn completions_complete_cluster_and_connector_names_of_the_project() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kco.yaml"),
        "clusters:\n  prod:\n    url: http://127.0.0.1:1\n  staging:\n    url: http://127.0.0.1:2\n",
    )
    .unwrap();
    for (cluster, name) in [
        ("prod", "orders-sink"),
        ("staging", "orders-src"),
        ("prod", "billing"),
    ] {
        crate::support::data::SnapshotFile::captured(
            name,
            kco::model::ConnectorType::Sink,
            crate::support::data::sink_offset(1),
        )
        .write_in(&dir.path().join("snapshots").join(cluster));
    }
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_kco"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let complete = |words: &str| {
        let script = format!(
            "source <(kco completions bash); COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9; _clap_complete_kco kco \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("KCO_CONFIG")
            .output()
            .unwrap();
        let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        got.sort();
        got
    };
    assert_eq!(complete("kco --cluster ''"), ["prod", "staging"]);
    assert_eq!(complete("kco --cluster st"), ["staging"]);
    assert_eq!(complete("kco show ord"), ["orders-sink", "orders-src"]);
    assert_eq!(complete("kco reset b"), ["billing"]);
    assert!(complete("kco sna").contains(&"snapshot".to_string()));
}

/// `--url` replaces the URLs of the cluster that would be used without it: kco.yaml's only
/// cluster (its name, its lock and its snapshot directory), not a cluster `default` of its
/// own; with several clusters and no default, a URL alone is cluster `default`.
#[test]
fn a_url_alone_overrides_the_urls_of_the_cluster_kco_yaml_uses() {
    let dir = tempfile::tempdir().unwrap();
    let fake = one_source();
    std::fs::write(
        dir.path().join("kco.yaml"),
        "clusters:\n  prod:\n    urls: [http://127.0.0.1:9]\n",
    )
    .unwrap();
    let r = Kco::new(dir.path())
        .args(["--url", &fake.url(), "snapshot"])
        .run();
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        dir.path().join("snapshots/prod/c.yaml").is_file(),
        "{}",
        r.all()
    );
    assert!(!dir.path().join("snapshots/default").exists());
    std::fs::write(
        dir.path().join("kco.yaml"),
        "clusters:\n  prod:\n    urls: [http://127.0.0.1:9]\n  staging:\n    urls: [http://127.0.0.1:9]\n",
    )
    .unwrap();
    let r = Kco::new(dir.path())
        .args(["--url", &fake.url(), "snapshot", "--dir", "other"])
        .run();
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(
        dir.path().join("other/default/c.yaml").is_file(),
        "{}",
        r.all()
    );
}
