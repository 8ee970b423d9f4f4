//! One voice (docs/output.md): errors that blame the right input and say the next step once,
//! and no retired spelling left in anything a pinned output shows.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use crate::support::data::{sink_offset, SnapshotFile, SINK};
use crate::support::env::TestEnv;
use crate::support::git::git;

#[test]
fn a_url_without_a_scheme_is_blamed_on_the_flag_with_the_url_to_use() {
    let t = TestEnv::new();
    let (code, out) = t
        .kco(&["--url", "127.0.0.1:8083", "snapshot"])
        .code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("--url: invalid worker URL `127.0.0.1:8083`")
            && out.contains("did you mean `http://127.0.0.1:8083`?"),
        "{out}"
    );
    assert!(!out.contains("kco.yaml"), "not blamed on kco.yaml: {out}");
    let (code, out) = t.kco(&["--url", "ftp://x", "snapshot"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("kco talks http:// or https://"), "{out}");
    // In kco.yaml, the line of that URL.
    t.config("defaultCluster: b\nclusters:\n  a:\n    url: http://127.0.0.1:1\n  b:\n    url: connect:8085\n");
    let (code, out) = t.kco(&["snapshot"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("kco.yaml:6: cluster `b`"), "{out}");
    assert!(out.contains("did you mean `http://connect:8085`?"), "{out}");
}

#[test]
fn an_unknown_default_cluster_is_reported_on_its_own_line_with_the_likely_one() {
    let t = TestEnv::new();
    t.config("clusters:\n  prod:\n    url: http://127.0.0.1:1\n  staging:\n    url: http://127.0.0.1:2\ndefaultCluster: prood\n");
    let (code, out) = t.kco(&["snapshot"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("kco.yaml:6: defaultCluster `prood` is not a configured cluster"),
        "{out}"
    );
    assert!(out.contains("hint: did you mean `prod`?"), "{out}");
}

/// A page that is not Kafka Connect (a web server's HTML) is named for what it is, not dumped.
#[test]
fn an_endpoint_that_is_not_connect_is_named_without_dumping_its_page() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>{}</body></html>\n",
        "<p>filler</p>\n".repeat(100)
    );
    // Every request gets the page: kco may ask for the listing beside its first `GET /`.
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                page.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(page.as_bytes());
        }
    });
    let t = TestEnv::new();
    let url = format!("http://127.0.0.1:{port}");
    let (code, out) = t.kco(&["--url", &url, "snapshot"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no Kafka Connect answers there")
            && out.contains("an HTML page (\"Welcome to nginx!\"")
            && out.contains("is this a Kafka Connect worker's REST URL?"),
        "{out}"
    );
    assert!(!out.contains("filler") && !out.contains("<html"), "{out}");
}

#[test]
fn a_yaml_syntax_error_is_pointed_at_with_line_and_column() {
    let t = TestEnv::new();
    let text = "apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: x\n  cluster: a\n  type: [sink\n\noffsets: []\n";
    std::fs::write(t.path().join("x.yaml"), text).unwrap();
    let (code, out) = t.kco(&["validate", "x.yaml"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("x.yaml:6:9: not valid YAML"), "{out}");
}

/// The checksum advice is the hint, once.
#[test]
fn the_checksum_advice_is_given_once() {
    let t = TestEnv::new();
    SnapshotFile::sink("s", sink_offset(5))
        .class(SINK)
        .write_in(t.path());
    let path = t.path().join("s.yaml");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("kafka_offset: 5", "kafka_offset: 6");
    std::fs::write(&path, edited).unwrap();
    let (code, out) = t.kco(&["validate", "s.yaml"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("kco fmt").count(), 1, "{out}");
}

/// What the pinned outputs show speaks kco's voice: none of the spellings docs/output.md
/// retired is left in any of them.
#[test]
fn no_pinned_output_uses_a_retired_spelling() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/snapshots");
    let retired = [
        "partition(s)",
        "record(s)",
        "connector(s)",
        "file(s)",
        "problem(s)",
        "error(s)",
        "request(s)",
        "kco apply .kco/backups",
        "[SKIP]",
        "[REWIND]",
        "re-processed",
        "RESTART FROM DEFAULT",
        "cannot be applied",
        "Pass --yes to apply",
        "connector deleted; deleted",
        "run `kco fmt` to accept the edit",
    ];
    let mut found = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "snap") {
            continue;
        }
        read += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for word in retired {
            if text.contains(word) {
                found.push(format!(
                    "{}: {word}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        read > 40,
        "only {read} snapshots read from {}",
        dir.display()
    );
    assert!(found.is_empty(), "retired spellings:\n{}", found.join("\n"));
}

/// Output that no snapshot pins speaks the same voice: no string literal in `src/` writes a
/// `(s)` plural (`crate::text::count` does). The fake of Connect is left out: it speaks as
/// Connect does (`1 error(s)`), to tests.
#[test]
fn no_message_in_the_code_writes_an_s_in_brackets() {
    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with("src/fake") {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 50, "only {} files", files.len());
    let mut found = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.contains("'\"'"))
        {
            // The string literals of the line (good enough for kco's code: no raw strings
            // with quotes in messages).
            let literals = line.split('"').skip(1).step_by(2);
            if literals
                .into_iter()
                .any(|l| l.contains("(s)") && !l.starts_with("(s)"))
            {
                found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "`(s)` plurals:\n{}", found.join("\n"));
}

/// No string literal in `src/` puts a count before a plural noun itself (`{n} records`):
/// `crate::text::count` and `crate::text::quantity` make `1 record` singular. A literal whose
/// `{} records` is a verb says so with a `// not a count` comment on its line.
#[test]
fn no_message_in_the_code_writes_a_count_without_the_helper() {
    const NOUNS: [&str; 14] = [
        "records",
        "partitions",
        "connectors",
        "files",
        "bytes",
        "keys",
        "clusters",
        "tasks",
        "errors",
        "problems",
        "requests",
        "commits",
        "checkpoints",
        "seconds",
    ];
    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() && !path.ends_with("src/fake") {
                rust_files(&path, out);
            } else if name.ends_with(".rs") && !name.starts_with("tests") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("'\"'") || line.contains("// not a count") {
                continue;
            }
            let counted = line.split('"').skip(1).step_by(2).any(|literal| {
                literal.match_indices('}').any(|(at, _)| {
                    let word: String = literal[at + 1..]
                        .trim_start()
                        .chars()
                        .take_while(char::is_ascii_lowercase)
                        .collect();
                    literal[at + 1..].starts_with(' ') && NOUNS.contains(&word.as_str())
                })
            });
            if counted {
                found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "counts without text::count or text::quantity:\n{}",
        found.join("\n")
    );
}

/// A pull request over 5,000 connectors that rewinds one: the comment fits GitHub's 65,536
/// characters, its verdict and table come first, and it names the rewound connector; the
/// 4,999 unchanged are one count.
#[test]
fn the_markdown_of_five_thousand_connectors_fits_a_pull_request_comment() {
    let t = TestEnv::new();
    let dir = t.path().join("snapshots/a");
    for i in 0..5000 {
        SnapshotFile::sink(&format!("connector-{i:04}"), sink_offset(1000))
            .class(SINK)
            .write_in(&dir);
    }
    git(t.path(), &["init", "-q", "-b", "main"]);
    git(t.path(), &["add", "-A"]);
    git(t.path(), &["commit", "-qm", "nightly"]);
    SnapshotFile::sink("connector-2718", sink_offset(400))
        .class(SINK)
        .write_in(&dir);
    let (code, out) = t
        .kco(&["diff", "--base", "HEAD", "-o", "markdown"])
        .code_and_text();
    assert_eq!(code, 2, "{}", &out[..out.len().min(2000)]);
    assert!(out.len() < 65_536, "{} characters", out.len());
    assert!(
        out.contains("**1 of 5000 connectors differ**, 1 partition changed."),
        "{}",
        &out[..out.len().min(2000)]
    );
    assert!(out.contains("| `connector-2718` | changed |"), "{out}");
    assert!(out.contains("**REPROCESSING**: 600 records"), "{out}");
    assert!(out.contains("4999 unchanged (--all lists them)"), "{out}");
    // With --all every connector has its row; the comment is still cut to fit.
    let (_, all) = t
        .kco(&["diff", "--base", "HEAD", "-o", "markdown", "--all"])
        .code_and_text();
    assert!(all.len() < 65_536, "{} characters", all.len());
    assert!(all.contains("| `connector-2718` | changed |"));
    assert!(
        all.contains("more left out of this table"),
        "{}",
        &all[all.len() - 500..]
    );
}

/// Every command that takes a connector name finds its file the same way: `show` as `log`,
/// with `--url` alone (the `default` cluster `snapshot --url` writes), and with no cluster at
/// all when one cluster directory holds the file.
#[test]
fn show_finds_a_connector_file_as_log_does() {
    let t = TestEnv::new();
    SnapshotFile::sink("sink-1", sink_offset(7))
        .cluster("default")
        .class(SINK)
        .captured_at("2026-11-27T02:00:00Z")
        .write_in(&t.path().join("snapshots/default"));
    git(t.path(), &["init", "-q", "-b", "main"]);
    git(t.path(), &["add", "-A"]);
    git(t.path(), &["commit", "-qm", "nightly"]);
    for args in [
        &["log", "sink-1"][..],
        &["show", "sink-1", "--at", "HEAD"],
        &[
            "--url",
            "http://127.0.0.1:9",
            "show",
            "sink-1",
            "--at",
            "HEAD",
        ],
    ] {
        let (code, out) = t.kco(args).code_and_text();
        assert_eq!(code, 0, "{args:?}: {out}");
        assert!(out.contains("sink-1"), "{args:?}: {out}");
    }
    // In two clusters' directories it is ambiguous: named, not guessed.
    SnapshotFile::sink("sink-1", sink_offset(7))
        .cluster("other")
        .class(SINK)
        .write_in(&t.path().join("snapshots/other"));
    let (code, out) = t.kco(&["show", "sink-1"]).code_and_text();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("several clusters (default, other)"), "{out}");
}
