//! What shipping kco relies on outside one person's shell: a checkout another user owns (a CI
//! workspace, a volume mounted into the image) and the GitHub Action at the repository's root.

use kco::model::ConnectorType::Sink;

use crate::history::{orders, Repo};
use crate::support::json::parse_json;
use crate::support::run::Kco;

/// A uid that owns nothing on the machine.
const OTHER_UID: u32 = 4321;

/// Gives `dir` and everything under it to `uid`.
#[cfg(unix)]
fn chown_all(dir: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    if dir.is_dir() && !dir.is_symlink() {
        for entry in std::fs::read_dir(dir).unwrap() {
            chown_all(&entry.unwrap().path(), uid);
        }
    }
}

/// Whether this process may give files away (root).
#[cfg(unix)]
fn may_chown() -> bool {
    let probe = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(probe.path(), Some(OTHER_UID), None).is_ok()
}

/// git distrusts a repository another user owns; kco says so, names the owner and both fixes
/// (never "not in a git repository"), and honours `safe.directory` in the global git config.
#[cfg(unix)]
#[test]
fn a_repository_another_user_owns_names_the_owner_and_both_fixes() {
    if !may_chown() {
        eprintln!("skipped: giving a repository to another uid needs root");
        return;
    }
    let r = Repo::new();
    r.write("snapshots/a/orders.yaml", "orders", Sink, orders(&[(0, 1)]));
    r.commit("2026-11-27T02:00:00Z", "nightly 1");
    chown_all(r.path(), OTHER_UID);
    let top = r.path().canonicalize().unwrap();

    let run = Kco::new(r.path()).args(["log"]).run();
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        !run.stderr.contains("not in a git repository"),
        "{}",
        run.stderr
    );
    for part in [
        format!("the git repository {}", top.display()),
        format!("another user (uid {OTHER_UID}) owns"),
        format!("run kco as the owner of {}", top.display()),
        format!("git config --global --add safe.directory {}", top.display()),
    ] {
        assert!(run.stderr.contains(&part), "{part:?} in {}", run.stderr);
    }
    let json = Kco::new(r.path()).args(["log", "-o", "json"]).run();
    assert_eq!(parse_json(&json.stdout)["error"]["kind"], "not_trusted");

    // Marked safe the way git does, in the global config of the user running kco.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        format!("[safe]\n\tdirectory = {}\n", top.display()),
    )
    .unwrap();
    let run = Kco::new(r.path())
        .env("HOME", home.path())
        .args(["log"])
        .run();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.contains("nightly 1"), "{}", run.stdout);
}

/// `--version` names the version, the commit and its date, and the target, as ripgrep and
/// cargo do; `-V` stays the version alone (the man pages print it).
#[test]
fn version_names_the_commit_its_date_and_the_target() {
    let run = Kco::new(".").arg("--version").run();
    assert_eq!(run.code, 0, "{}", run.all());
    let line = run.stdout.trim_end();
    let rest = line
        .strip_prefix(&format!("kco {} (commit ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, rest) = rest.split_once(' ').unwrap();
    let (date, target) = rest.split_once(", ").unwrap();
    // Built from this checkout: its commit and the commit's date, from git.
    if std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".git")
        .exists()
    {
        assert!(
            commit.len() == 9 && commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{line}"
        );
        let digits = date.replace('-', "");
        assert!(date.len() == 10 && digits.len() == 8, "{line}");
        assert!(digits.chars().all(|c| c.is_ascii_digit()), "{line}");
    }
    let target = target.strip_suffix(')').unwrap();
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "{line}"
    );
    let short = Kco::new(".").arg("-V").run();
    assert_eq!(
        short.stdout.trim_end(),
        format!("kco {}", env!("CARGO_PKG_VERSION"))
    );
}

/// The GitHub Action at the repository's root (`action.yml`), its steps run here with bash
/// as a runner would run them: `${{ }}` expressions evaluated from the inputs (an unknown one
/// fails the test), `curl` and `gh` replaced by scripts that serve a local release and record
/// the API calls.
mod action {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use kco::model::ConnectorType::Sink;
    use serde_yaml::Value;

    use crate::history::{orders, Repo};

    fn action() -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml");
        serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn step<'a>(action: &'a Value, name: &str) -> &'a Value {
        action["runs"]["steps"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no step {name:?}"))
    }

    /// What the runner knows while the action runs.
    struct Context {
        inputs: BTreeMap<String, String>,
        outputs: BTreeMap<String, String>,
    }

    impl Context {
        fn new(action: &Value, given: &[(&str, &str)]) -> Context {
            let mut inputs = BTreeMap::new();
            for (name, spec) in action["inputs"].as_mapping().unwrap() {
                let name = name.as_str().unwrap().to_string();
                let default = spec["default"].as_str().unwrap_or("").to_string();
                inputs.insert(name, default);
            }
            for (k, v) in given {
                assert!(inputs.contains_key(*k), "the action has no input {k}");
                inputs.insert(k.to_string(), v.to_string());
            }
            Context {
                inputs,
                outputs: BTreeMap::new(),
            }
        }

        /// `${{ expr }}` as the runner evaluates it, for the expressions the action uses.
        fn eval(&self, text: &str) -> String {
            let Some(expr) = text
                .trim()
                .strip_prefix("${{")
                .and_then(|t| t.strip_suffix("}}"))
            else {
                return text.to_string();
            };
            let expr = expr.trim();
            if let Some(input) = expr.strip_prefix("inputs.") {
                return self
                    .inputs
                    .get(input)
                    .cloned()
                    .unwrap_or_else(|| panic!("no input {input}"));
            }
            if let Some(out) = expr.strip_prefix("steps.run.outputs.") {
                return self.outputs.get(out).cloned().unwrap_or_default();
            }
            match expr {
                "github.event.pull_request.number" => "7".into(),
                "github.action_repository" => "example/kco".into(),
                "github.token" => "token".into(),
                "runner.os" => "Linux".into(),
                "runner.arch" => "X64".into(),
                other => panic!("an expression this test does not know: {other}"),
            }
        }

        /// Runs one `run:` step with bash in `dir`; its exit code and output. `GITHUB_OUTPUT`
        /// lines become `steps.run.outputs`.
        fn run(&mut self, step: &Value, dir: &Path, env: &Env) -> (i32, String) {
            let output = env.temp.join("github-output");
            std::fs::write(&output, "").unwrap();
            let mut cmd = Command::new("bash");
            cmd.arg("-c")
                .arg(step["run"].as_str().unwrap())
                .current_dir(dir)
                .env_clear()
                .env("PATH", &env.path)
                .env("HOME", &env.temp)
                .env("NO_COLOR", "1")
                .env("RUNNER_TEMP", &env.temp)
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_PATH", env.temp.join("github-path"))
                .env("GITHUB_REPOSITORY", "example/pipelines")
                .env("GITHUB_RUN_ID", "1")
                .env("GITHUB_RUN_ATTEMPT", "1")
                .env("FAKE_RELEASE", &env.release)
                .env("FAKE_GH_LOG", env.temp.join("gh.log"));
            if let Some(vars) = step["env"].as_mapping() {
                for (k, v) in vars {
                    cmd.env(k.as_str().unwrap(), self.eval(v.as_str().unwrap()));
                }
            }
            let out = cmd.output().unwrap();
            for line in std::fs::read_to_string(&output).unwrap().lines() {
                let (k, v) = line.split_once('=').unwrap();
                self.outputs.insert(k.into(), v.into());
            }
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            (out.status.code().unwrap_or(-1), text)
        }
    }

    /// The fake tools on PATH (first), kco's build, and a release to download.
    struct Env {
        _dir: tempfile::TempDir,
        temp: PathBuf,
        release: PathBuf,
        path: String,
    }

    const FAKE_CURL: &str = r#"#!/bin/sh
# curl -fsSL --retry 3 -o FILE URL: the file of that name in $FAKE_RELEASE
while [ $# -gt 1 ]; do [ "$1" = -o ] && out=$2; shift; done
cp "$FAKE_RELEASE/$(basename "$1")" "$out"
"#;

    /// gh api: the latest release is v0.1.0; the comments of PR 7 are those of
    /// $FAKE_RELEASE/comments.json; every call is logged.
    const FAKE_GH: &str = r#"#!/bin/sh
echo "$*" >>"$FAKE_GH_LOG"
case "$*" in
  *releases/latest*) echo v0.1.0 ;;
  *"issues/7/comments --paginate"*) cat "$FAKE_RELEASE/comment-ids" 2>/dev/null || true ;;
esac
"#;

    fn env() -> Env {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (temp, bin, release) = (
            dir.path().join("runner-temp"),
            dir.path().join("bin"),
            dir.path().join("release"),
        );
        for d in [&temp, &bin, &release] {
            std::fs::create_dir_all(d).unwrap();
        }
        for (name, text) in [("curl", FAKE_CURL), ("gh", FAKE_GH)] {
            std::fs::write(bin.join(name), text).unwrap();
            std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        // The release archive as scripts/release.sh lays it out; its kco runs this build (a
        // debug binary is too big to pack in every test).
        let name = "kco-0.1.0-x86_64-unknown-linux-gnu";
        let kco = dir.path().join(name).join("kco");
        std::fs::create_dir_all(dir.path().join(name)).unwrap();
        std::fs::write(
            &kco,
            format!("#!/bin/sh\nexec '{}' \"$@\"\n", env!("CARGO_BIN_EXE_kco")),
        )
        .unwrap();
        std::fs::set_permissions(&kco, std::fs::Permissions::from_mode(0o755)).unwrap();
        let tar = Command::new("tar")
            .arg("-czf")
            .arg(release.join(format!("{name}.tar.gz")))
            .arg("-C")
            .arg(dir.path())
            .arg(name)
            .status()
            .unwrap();
        assert!(tar.success());
        let sums = Command::new("sha256sum")
            .arg(format!("{name}.tar.gz"))
            .current_dir(&release)
            .output()
            .unwrap();
        std::fs::write(release.join("SHA256SUMS"), sums.stdout).unwrap();
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
        Env {
            temp,
            release,
            path,
            _dir: dir,
        }
    }

    #[test]
    fn its_inputs_and_outputs_are_the_documented_ones() {
        let a = action();
        assert_eq!(a["runs"]["using"], "composite");
        for input in [
            "command",
            "args",
            "version",
            "comment",
            "fail",
            "working-directory",
        ] {
            assert!(
                a["inputs"][input]["description"].is_string(),
                "input {input}"
            );
        }
        assert_eq!(
            a["outputs"]["exit-code"]["value"],
            "${{ steps.run.outputs.exit-code }}"
        );
        // The flags the action adds to `kco diff` are kco's.
        let run = step(&a, "Run kco")["run"].as_str().unwrap();
        assert!(run.contains("args+=(--output markdown)"), "{run}");
        let diff = {
            use clap::CommandFactory;
            kco::cli::Cli::command()
                .find_subcommand("diff")
                .unwrap()
                .clone()
        };
        // --base is diff's own; --output a global flag, with `markdown` among its values.
        assert!(diff.get_arguments().any(|a| a.get_long() == Some("base")));
        let root = {
            use clap::CommandFactory;
            kco::cli::Cli::command()
        };
        let output = root
            .get_arguments()
            .find(|a| a.get_long() == Some("output"))
            .expect("a global --output");
        assert!(output
            .get_possible_values()
            .iter()
            .any(|v| v.get_name() == "markdown"));
    }

    #[test]
    fn installs_the_checked_release_and_refuses_a_tampered_one() {
        let a = action();
        let env = env();
        let mut cx = Context::new(&a, &[("command", "validate")]);
        let here = tempfile::tempdir().unwrap();
        let (code, out) = cx.run(step(&a, "Install kco"), here.path(), &env);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains(": OK"), "sha256sum checked it: {out}");
        assert!(out.contains("kco 0.1.0 (commit"), "it runs: {out}");
        let path = std::fs::read_to_string(env.temp.join("github-path")).unwrap();
        assert!(Path::new(path.trim()).join("kco").is_file(), "{path}");
        assert!(std::fs::read_to_string(env.temp.join("gh.log"))
            .unwrap()
            .contains("repos/example/kco/releases/latest"));

        // An archive that is not the one SHA256SUMS names is refused.
        let archive = env
            .release
            .join("kco-0.1.0-x86_64-unknown-linux-gnu.tar.gz");
        let mut bytes = std::fs::read(&archive).unwrap();
        bytes.push(0);
        std::fs::write(&archive, bytes).unwrap();
        let (code, out) = cx.run(step(&a, "Install kco"), here.path(), &env);
        assert_ne!(code, 0, "{out}");
        assert!(out.contains("FAILED"), "{out}");
    }

    #[test]
    fn diff_base_reports_its_exit_code_and_posts_then_updates_one_comment() {
        let a = action();
        let env = env();
        let r = Repo::new();
        r.write(
            "snapshots/a/orders.yaml",
            "orders",
            Sink,
            orders(&[(0, 100)]),
        );
        r.commit("2026-11-27T02:00:00Z", "nightly");
        r.write(
            "snapshots/a/orders.yaml",
            "orders",
            Sink,
            orders(&[(0, 60)]),
        );
        r.commit("2026-11-28T02:00:00Z", "rewind");
        let kco_dir = Path::new(env!("CARGO_BIN_EXE_kco")).parent().unwrap();
        let env = Env {
            path: format!("{}:{}", env.path, kco_dir.display()),
            ..env
        };
        let mut cx = Context::new(&a, &[("command", "diff"), ("args", "--base HEAD~1")]);
        let (code, out) = cx.run(step(&a, "Run kco"), r.path(), &env);
        assert_eq!(code, 0, "the step itself succeeds: {out}");
        assert_eq!(cx.outputs["exit-code"], "2", "differences: {out}");
        assert_eq!(cx.outputs["comment"], "true");
        let report = std::fs::read_to_string(&cx.outputs["report"]).unwrap();
        assert!(report.contains("orders"), "{report}");

        // No comment of the action yet: one is posted, with the marker and the report.
        let post = step(&a, "Post or update the pull-request comment");
        assert_eq!(post["if"], "steps.run.outputs.comment == 'true'");
        let (code, out) = cx.run(post, r.path(), &env);
        assert_eq!(code, 0, "{out}");
        let log = std::fs::read_to_string(env.temp.join("gh.log")).unwrap();
        assert!(
            log.contains("-X POST repos/example/pipelines/issues/7/comments"),
            "{log}"
        );
        let body = std::fs::read_to_string(env.temp.join("kco-comment.md")).unwrap();
        assert!(
            body.starts_with("<!-- kco-action: diff --base -->\n"),
            "{body}"
        );
        assert!(body.contains(&report), "{body}");

        // The next run finds it by its marker and updates it instead.
        std::fs::write(env.release.join("comment-ids"), "4242\n").unwrap();
        std::fs::remove_file(env.temp.join("gh.log")).unwrap();
        let (code, out) = cx.run(post, r.path(), &env);
        assert_eq!(code, 0, "{out}");
        let log = std::fs::read_to_string(env.temp.join("gh.log")).unwrap();
        assert!(
            log.contains("-X PATCH repos/example/pipelines/issues/comments/4242"),
            "{log}"
        );
        assert!(!log.contains("POST"), "{log}");

        // fail: true (the default) fails on exit 2; the step's condition says when it runs.
        let fail = step(&a, "Fail on kco's exit code");
        assert_eq!(
            fail["if"],
            "inputs.fail == 'true' && steps.run.outputs.exit-code != '0'"
        );
        let (code, _) = cx.run(fail, r.path(), &env);
        assert_eq!(code, 2);
    }
}
