//! The recipes of `examples/`: the CI scripts run against the fake Connect over HTTP in
//! scratch git repositories (with a bare `origin`), and the GitHub workflows, the GitLab jobs
//! and the Kubernetes CronJob that call them are parsed and checked to call them with the
//! arguments these tests run them with.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_yaml::Value;

use crate::fake_connect::{ConnectorSpec, FakeConnect};
use crate::output_snapshots::{billing_and_orders, sink_offsets, SINK};
use crate::support::data::hand_edit;
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::run::{hermetic, Kco};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn yaml(file: &str) -> Value {
    let path = examples().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every string in a YAML document.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Mapping(m) => m.values().for_each(|i| strings(i, out)),
        Value::Tagged(t) => strings(&t.value, out),
        _ => {}
    }
}

/// The arguments the one command line of `doc` that runs `script` passes to it (words up to
/// `&&`, `||`, `;` or the end of the line; double quotes removed).
fn invocation(doc: &Value, script: &str) -> Vec<String> {
    let mut all = Vec::new();
    strings(doc, &mut all);
    let lines: Vec<&str> = all
        .iter()
        .flat_map(|s| s.lines())
        .filter(|l| l.contains(script))
        .collect();
    assert_eq!(lines.len(), 1, "one call of {script}: {lines:?}");
    let rest = lines[0].split(script).nth(1).unwrap();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in rest.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    words.push(word);
    words.retain(|w| !w.is_empty());
    let end = words
        .iter()
        .position(|w| ["&&", "||", ";"].contains(&w.as_str()))
        .unwrap_or(words.len());
    words.truncate(end);
    words
}

fn at<'a>(doc: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(doc, |v, k| match k.parse::<usize>() {
        Ok(i) => &v[i],
        Err(_) => &v[*k],
    })
}

/// Every shell script under examples/ci/ and scripts/ is committed executable (mode 100755 in
/// git's index), as the workflows and the CronJob call them by path (`ci/apply-on-merge.sh`):
/// a script committed 100644 fails there with "Permission denied". The only files of mode
/// 100644 allowed are the libraries scripts source (no `#!` line, and a first line saying
/// `# Sourced by ...`).
#[test]
fn every_script_of_the_recipes_and_of_scripts_is_executable_in_the_git_index() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("git")
        .args(["ls-files", "-s", "--", "examples/ci", "scripts"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git ls-files in {}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = String::from_utf8(out.stdout).unwrap();
    let mut scripts = 0;
    let mut wrong = Vec::new();
    for line in listing.lines() {
        // `<mode> <object> <stage>\t<path>`
        let (meta, path) = line.split_once('\t').unwrap();
        let mode = meta.split(' ').next().unwrap();
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
        let shebang = text.starts_with("#!");
        if !path.ends_with(".sh") && !shebang {
            continue;
        }
        scripts += 1;
        let sourced = !shebang && text.starts_with("# Sourced by");
        if mode != "100755" && !sourced {
            wrong.push(format!("{path} ({mode})"));
        }
        if path.starts_with("examples/ci/") {
            assert!(shebang, "{path}: a recipe starts with its #! line");
        }
    }
    assert!(scripts >= 5, "{listing}");
    assert!(
        wrong.is_empty(),
        "scripts not executable in git's index (git update-index --chmod=+x FILE): {wrong:?}"
    );
}

/// A scratch repository `repo` with one commit on `main`, pushed to a bare `origin`.
struct Repo {
    tmp: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let origin = tmp.path().join("origin.git");
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(
            tmp.path(),
            &["init", "-q", "--bare", "-b", "main", "origin.git"],
        );
        git(&repo, &["init", "-q", "-b", "main"]);
        git(
            &repo,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        std::fs::write(repo.join("README.md"), "offsets\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "start"]);
        git(&repo, &["push", "-q", "origin", "main"]);
        Repo { tmp }
    }

    fn dir(&self) -> PathBuf {
        self.tmp.path().join("repo")
    }

    fn commits(&self) -> usize {
        git(&self.dir(), &["rev-list", "--count", "HEAD"])
            .parse()
            .unwrap()
    }

    /// `examples/ci/<script> <args>` here, run by its path as the CI jobs run it (so by its
    /// `#!` line and its executable bit), with the built kco and a cleared environment (no
    /// git identity: the scripts bring their own); exit code, stdout and stderr.
    fn run(&self, script: &str, args: &[String], vars: &[(&str, &str)]) -> (i32, String) {
        self.run_in(&self.dir(), script, args, vars)
    }

    /// [`Repo::run`] in another checkout `dir` of the same remote (a second CI runner).
    fn run_in(
        &self,
        dir: &Path,
        script: &str,
        args: &[String],
        vars: &[(&str, &str)],
    ) -> (i32, String) {
        let mut cmd = Command::new(examples().join("ci").join(script));
        let out = hermetic(&mut cmd, self.tmp.path())
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("KCO", env!("CARGO_BIN_EXE_kco"))
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        (out.status.code().unwrap_or(-1), text.into_owned())
    }

    /// [`Repo::run`], asserted to exit 0: its output.
    fn run_ok(&self, script: &str, args: &[String], vars: &[(&str, &str)]) -> String {
        let (code, out) = self.run(script, args, vars);
        assert_eq!(code, 0, "{out}");
        out
    }

    /// `kco snapshot <args>` in the repository against `fake` as cluster `prod` (test setup:
    /// must succeed or find differences).
    fn snapshot(&self, fake: &FakeConnect, args: &[&str]) {
        let env = TestEnv::at(self.dir()).args(&["--cluster", "prod"]);
        let out = env.on(fake, &[&["snapshot"], args].concat());
        assert!(matches!(out.code, 0 | 2), "{out:?}");
    }
}

/// The nightly recipes all call the script the same way; the test below runs it so.
fn nightly_args() -> Vec<String> {
    let github = yaml("ci/github/nightly-snapshot.yml");
    assert!(at(&github, &["on", "schedule", "0", "cron"]).is_string());
    assert_eq!(at(&github, &["permissions", "contents"]), "write");
    let args = invocation(&github, "ci/nightly-snapshot.sh");

    let gitlab = yaml("ci/gitlab-ci.yml");
    let job = &gitlab["kco-nightly-snapshot"];
    let rule = at(job, &["rules", "0", "if"]).as_str().unwrap();
    assert!(
        rule.contains(r#"$CI_PIPELINE_SOURCE == "schedule""#),
        "{rule}"
    );
    assert_eq!(invocation(job, "ci/nightly-snapshot.sh"), args);

    let cron = yaml("k8s/nightly-snapshot-cronjob.yaml");
    assert_eq!(cron["kind"], "CronJob");
    assert_eq!(at(&cron, &["spec", "concurrencyPolicy"]), "Forbid");
    let pod = at(&cron, &["spec", "jobTemplate", "spec", "template", "spec"]);
    assert_eq!(invocation(pod, "/scripts/nightly-snapshot.sh"), args);
    assert_eq!(
        at(pod, &["containers", "0", "volumeMounts", "0", "mountPath"]),
        "/scripts"
    );
    assert_eq!(
        at(pod, &["volumes", "0", "configMap", "name"]),
        "kco-nightly-scripts"
    );

    // On a host of one's own: a systemd service and its timer, or a crontab line.
    let lines = |file: &str| {
        let text = std::fs::read_to_string(examples().join(file)).unwrap();
        let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        Value::String(kept.join("\n"))
    };
    let service = lines("host/kco-nightly.service");
    assert_eq!(invocation(&service, "ci/nightly-snapshot.sh"), args);
    let unit = service.as_str().unwrap();
    for line in [
        "Type=oneshot",
        "WorkingDirectory=/srv/kco-offsets",
        "ExecStartPre=/usr/bin/git pull --ff-only -q",
    ] {
        assert!(unit.lines().any(|l| l == line), "{line}: {unit}");
    }
    let timer = lines("host/kco-nightly.timer");
    let timer = timer.as_str().unwrap();
    assert!(
        timer.contains("OnCalendar=*-*-* 02:00:00") && timer.contains("Persistent=true"),
        "{timer}"
    );
    let cron = lines("host/kco.crontab");
    assert_eq!(invocation(&cron, "ci/nightly-snapshot.sh"), args);
    assert!(cron
        .as_str()
        .unwrap()
        .contains("0 2 * * * cd /srv/kco-offsets && git pull --ff-only -q && flock -n"));
    args
}

#[test]
fn nightly_snapshot_commits_only_what_moved_and_fails_on_drift() {
    let args = nightly_args();
    assert_eq!(args, ["--push", "prod"]);
    let fake = billing_and_orders();
    let repo = Repo::new();
    let url = fake.url();
    let env = [("KCO_URL", url.as_str())];
    let pushed = |repo: &Repo| git(&repo.dir(), &["rev-parse", "origin/main"]);

    // First night: every connector gets a file, one commit, pushed.
    let err = repo.run_ok("nightly-snapshot.sh", &args, &env);
    assert!(err.contains("committed 3 files of cluster prod"), "{err}");
    assert_eq!(repo.commits(), 2);
    assert_eq!(pushed(&repo), git(&repo.dir(), &["rev-parse", "HEAD"]));
    // kco's commit: only the cluster's files, marked as an observation by its trailer.
    assert_eq!(
        git(&repo.dir(), &["log", "-1", "--format=%B"]),
        "offsets of prod\n\nKco-Snapshot: prod"
    );
    let files = git(&repo.dir(), &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        files,
        "snapshots/connector-offsets-v1.json\nsnapshots/prod/billing.yaml\nsnapshots/prod/orders.yaml"
    );
    assert_eq!(
        git(&repo.dir(), &["log", "-1", "--format=%an"]),
        "kco nightly"
    );

    // Nothing moved: no commit.
    let err = repo.run_ok("nightly-snapshot.sh", &args, &env);
    assert!(
        err.contains("nothing moved on cluster prod: no commit"),
        "{err}"
    );
    assert_eq!(repo.commits(), 2);

    // Normal progress and a new connector: one commit with just those files.
    fake.set_offsets("orders", sink_offsets("orders", &[(0, 1600), (1, 700)]));
    fake.add_connector(
        ConnectorSpec::sink("payments", SINK).offsets(sink_offsets("pay", &[(0, 3)])),
    );
    repo.run_ok("nightly-snapshot.sh", &args, &env);
    assert_eq!(repo.commits(), 3);
    let files = git(&repo.dir(), &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        files,
        "snapshots/prod/orders.yaml\nsnapshots/prod/payments.yaml"
    );
    assert_eq!(pushed(&repo), git(&repo.dir(), &["rev-parse", "HEAD"]));

    // Its owner pauses a connector: a routine state, not drift; the night records it.
    fake.set_state("billing", crate::fake_connect::State::Paused);
    let (code, err) = repo.run("nightly-snapshot.sh", &args, &env);
    assert_eq!(
        code, 0,
        "a paused connector never breaks the nightly: {err}"
    );
    assert!(err.contains("billing (state_changed)"), "{err}");
    assert_eq!(repo.commits(), 4);
    let files = git(&repo.dir(), &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "snapshots/prod/billing.yaml");
    let billing = std::fs::read_to_string(repo.dir().join("snapshots/prod/billing.yaml")).unwrap();
    assert!(billing.contains("state: PAUSED"), "{billing}");
    let err = repo.run_ok("nightly-snapshot.sh", &args, &env);
    assert_eq!(repo.commits(), 4, "recorded once: {err}");

    // A rewind behind the committed file is drift: exit 2, nothing written or committed.
    fake.set_offsets("orders", sink_offsets("orders", &[(0, 10), (1, 700)]));
    let (code, err) = repo.run("nightly-snapshot.sh", &args, &env);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("orders (drifted)"), "{err}");
    assert!(
        err.contains("cluster prod drifted from the committed files: nothing committed"),
        "{err}"
    );
    // Its hint never suggests an unreviewed `--yes`: a dry run first.
    assert!(!err.contains("--yes"), "{err}");
    assert!(err.contains("--dry-run"), "{err}");
    assert_eq!(repo.commits(), 4);
    assert_eq!(git(&repo.dir(), &["status", "--porcelain"]), "");

    // Unreachable cluster: an error, not "nothing moved".
    fake.down();
    let (code, err) = repo.run("nightly-snapshot.sh", &args, &env);
    assert_eq!(code, 1, "{err}");
    assert_eq!(repo.commits(), 4);
}

/// The first line of the review's body, by which the workflow finds its comment again.
const MARKER: &str = "<!-- kco-offsets-review -->";

/// The pull-request recipes' arguments, with the allowing label the GitHub workflow sets.
fn review_recipes() -> (Vec<String>, String) {
    let github = yaml("ci/github/offsets-review.yml");
    let types = at(&github, &["on", "pull_request", "types"]);
    for t in ["opened", "synchronize", "labeled", "unlabeled"] {
        assert!(types.as_sequence().unwrap().iter().any(|v| v == t), "{t}");
    }
    assert_eq!(at(&github, &["permissions", "pull-requests"]), "write");
    let steps = at(&github, &["jobs", "review", "steps"]);
    assert_eq!(at(steps, &["0", "with", "fetch-depth"]), 0);
    let args = invocation(&github, "ci/pr-review.sh");
    assert_eq!(args, ["origin/${{ github.base_ref }}", "kco-review.md"]);
    let review = steps
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("pr-review.sh"))
        })
        .unwrap();
    let labels = review["env"]["PR_LABELS"].as_str().unwrap();
    assert!(
        labels.contains("github.event.pull_request.labels.*.name"),
        "{labels}"
    );
    let allow = review["env"]["KCO_ALLOW_LABEL"]
        .as_str()
        .unwrap()
        .to_string();
    // One comment, found again by the marker the script writes first, and updated.
    let post = steps.as_sequence().unwrap().last().unwrap();
    assert!(post["if"].as_str().unwrap().contains("always()"));
    let run = post["run"].as_str().unwrap();
    assert!(run.contains(&format!("startswith(\"{MARKER}\")")), "{run}");
    assert!(
        run.contains("-X PATCH") && run.contains("body=@kco-review.md"),
        "{run}"
    );

    let gitlab = yaml("ci/gitlab-ci.yml");
    let job = &gitlab["kco-offsets-review"];
    assert_eq!(
        invocation(job, "ci/pr-review.sh"),
        [
            "origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
            "kco-review.md"
        ]
    );
    assert_eq!(
        at(job, &["variables", "KCO_ALLOW_LABEL"]).as_str(),
        Some(allow.as_str())
    );
    let mut after = Vec::new();
    strings(&job["after_script"], &mut after);
    assert!(after.concat().contains("body@kco-review.md"), "{after:?}");
    (args, allow)
}

#[test]
fn pr_review_posts_the_markdown_diff_and_blocks_risks_without_the_label() {
    let (args, allow) = review_recipes();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("${{ github.base_ref }}", "main"))
        .collect();
    let fake = billing_and_orders();
    let repo = Repo::new();
    repo.snapshot(&fake, &["-q"]);
    git(&repo.dir(), &["add", "-A"]);
    git(&repo.dir(), &["commit", "-qm", "offsets"]);
    git(&repo.dir(), &["push", "-q", "origin", "main"]);
    git(&repo.dir(), &["checkout", "-qb", "rewind"]);
    let body = repo.dir().join("kco-review.md");
    let read_body = || std::fs::read_to_string(&body).unwrap();

    // A pull request that only adds a connector's file: no risk, passes without a label.
    fake.add_connector(
        ConnectorSpec::sink("payments", SINK).offsets(sink_offsets("pay", &[(0, 3)])),
    );
    repo.snapshot(&fake, &["-q", "payments"]);
    repo.run_ok("pr-review.sh", &args, &[("PR_LABELS", "")]);
    assert!(
        read_body().contains("| `payments` | added |"),
        "{}",
        read_body()
    );
    assert!(
        read_body().starts_with(&format!("{MARKER}\n")),
        "{}",
        read_body()
    );
    assert!(
        read_body().ends_with(
            "\n**Verdict:** no blocking risk (reprocessing, data_loss, offset_reset).\n"
        ),
        "{}",
        read_body()
    );

    // A rewind of the sink: REPROCESSING, blocked without the label.
    fake.set_offsets("orders", sink_offsets("orders", &[(0, 1000), (1, 700)]));
    repo.snapshot(&fake, &["-q", "orders"]);
    git(&repo.dir(), &["commit", "-qam", "rewind orders"]);
    // As the recipe runs it: no cluster configured, so its labels compare the files only.
    let markdown = Kco::new(repo.dir())
        .args(["diff", "--base", "origin/main", "-o", "markdown"])
        .run()
        .stdout;
    let (code, err) = repo.run("pr-review.sh", &args, &[("PR_LABELS", "docs")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("blocked: REPROCESSING"), "{err}");
    let text = read_body();
    let text = text.strip_prefix(&format!("{MARKER}\n")).unwrap();
    assert!(
        text.starts_with(&markdown),
        "the body begins with kco's markdown:\n{text}"
    );
    assert!(
        markdown.contains("500 records will be reprocessed"),
        "{markdown}"
    );
    assert_eq!(
        &text[markdown.len()..],
        format!("\n**Verdict: blocked.** This change means REPROCESSING. Add the label `{allow}` to accept it.\n")
    );

    // The same with the allowing label (GitHub's list, or GitLab's variable): passes.
    let labels = format!("docs, {allow}");
    for var in ["PR_LABELS", "CI_MERGE_REQUEST_LABELS"] {
        let (code, err) = repo.run(
            "pr-review.sh",
            &args,
            &[(var, &labels), ("KCO_ALLOW_LABEL", &allow)],
        );
        assert_eq!(code, 0, "{var}: {err}");
        assert_eq!(
            &read_body()[MARKER.len() + 1 + markdown.len()..],
            format!("\n**Verdict:** REPROCESSING accepted by the label `{allow}`.\n")
        );
    }

    // Skipping ahead is DATA LOSS: blocked as well.
    fake.set_offsets("orders", sink_offsets("orders", &[(0, 1500), (1, 900)]));
    repo.snapshot(&fake, &["-q", "orders"]);
    let (code, _) = repo.run("pr-review.sh", &args, &[]);
    assert_eq!(code, 1);
    assert!(
        read_body().contains("This change means DATA LOSS."),
        "{}",
        read_body()
    );

    // A removed partition is OFFSET RESET: blocked by default, as the apply's guard refuses it.
    fake.set_offsets("orders", sink_offsets("orders", &[(0, 1500)]));
    repo.snapshot(&fake, &["-q", "orders"]);
    let (code, err) = repo.run("pr-review.sh", &args, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        read_body().contains("This change means OFFSET RESET."),
        "{}",
        read_body()
    );

    // kco itself failing (an unknown base) fails the review, and says so in the body.
    let (code, _) = repo.run(
        "pr-review.sh",
        &["origin/nope".into(), "kco-review.md".into()],
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        read_body().contains("**kco diff failed** (exit 1)"),
        "{}",
        read_body()
    );
}

/// Cluster `prod`'s sink `orders` at 900 on three partitions (running), and a repository its
/// nightly snapshot (`nightly-snapshot.sh --push prod`) was pushed from.
fn nightly_pushed() -> (FakeConnect, Repo) {
    let fake = FakeConnect::builder()
        .sink(
            "orders",
            SINK,
            crate::fake_connect::State::Running,
            sink_offsets("orders", &[(0, 900), (1, 900), (2, 900)]),
        )
        .start();
    let repo = Repo::new();
    let nightly = ["--push".to_string(), "prod".to_string()];
    repo.run_ok(
        "nightly-snapshot.sh",
        &nightly,
        &[("KCO_URL", fake.url().as_str())],
    );
    (fake, repo)
}

/// The scripts' variables for the built kco on the cluster at `url`.
fn kco_at(url: &str) -> [(&str, &str); 2] {
    [("KCO_URL", url), ("KCO", env!("CARGO_BIN_EXE_kco"))]
}

/// A rewind of orders/0 to 800 in `dir`, committed on `main` (as merged) and pushed.
fn push_a_rewind(dir: &Path) {
    hand_edit(
        &dir.join("snapshots/prod/orders.yaml"),
        sink_offsets("orders", &[(0, 800), (1, 900), (2, 900)]),
    );
    git(dir, &["commit", "-qam", "rewind orders/0"]);
    git(dir, &["push", "-q", "origin", "main"]);
}

/// The apply-on-merge recipes: GitHub on a push to main, one run at a time per cluster;
/// GitLab on a push to the default branch, in one resource group; both call the script alike.
fn apply_on_merge_args() -> Vec<String> {
    let github = yaml("ci/github/apply-on-merge.yml");
    assert_eq!(at(&github, &["on", "push", "branches", "0"]), "main");
    assert_eq!(at(&github, &["concurrency", "group"]), "kco-apply-prod");
    assert_eq!(
        at(&github, &["concurrency", "cancel-in-progress"]).as_bool(),
        Some(false)
    );
    assert_eq!(at(&github, &["permissions", "contents"]), "write");
    let steps = at(&github, &["jobs", "apply", "steps"]);
    assert_eq!(at(steps, &["0", "with", "fetch-depth"]), 0);
    let args = invocation(&github, "ci/apply-on-merge.sh");

    let gitlab = yaml("ci/gitlab-ci.yml");
    let job = &gitlab["kco-apply-on-merge"];
    let rule = at(job, &["rules", "0", "if"]).as_str().unwrap();
    assert!(rule.contains(r#"$CI_PIPELINE_SOURCE == "push""#), "{rule}");
    assert_eq!(job["resource_group"], "kco-prod");
    assert_eq!(invocation(job, "ci/apply-on-merge.sh"), args);
    args
}

/// No recipe builds kco: the GitHub workflows and the GitLab jobs install the release binary
/// with install-kco.sh (checked against SHA256SUMS), and the CronJob does so in an init
/// container.
#[test]
fn recipes_install_the_checked_release_binary() {
    for file in [
        "ci/github/nightly-snapshot.yml",
        "ci/github/offsets-review.yml",
        "ci/github/apply-on-merge.yml",
        "ci/gitlab-ci.yml",
        "k8s/nightly-snapshot-cronjob.yaml",
    ] {
        let mut all = Vec::new();
        strings(&yaml(file), &mut all);
        let text = all.join("\n");
        assert!(!text.contains("cargo install"), "{file}");
        assert!(text.contains("install-kco.sh"), "{file}");
    }
}

/// install-kco.sh against a release laid out as GitHub serves it (`file://` here): installed
/// when the tarball matches SHA256SUMS, refused (nothing installed) when it does not or is not
/// listed.
#[test]
fn install_kco_checks_the_release_against_its_checksums() {
    let t = tempfile::tempdir().unwrap();
    let release = t.path().join("releases/v9.9.9");
    let pkg = t.path().join("pkg/kco-9.9.9-x86_64-unknown-linux-gnu");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("kco"), "#!/bin/sh\necho 'kco 9.9.9'\n").unwrap();
    std::fs::write(pkg.join("LICENSE"), "Apache-2.0\n").unwrap();
    let tar = "kco-9.9.9-x86_64-unknown-linux-gnu.tar.gz";
    let ok = Command::new("tar")
        .args(["-czf", release.join(tar).to_str().unwrap(), "-C"])
        .arg(t.path().join("pkg"))
        .arg("kco-9.9.9-x86_64-unknown-linux-gnu")
        .status()
        .unwrap();
    assert!(ok.success());
    let sum = Command::new("sha256sum")
        .arg(tar)
        .current_dir(&release)
        .output()
        .unwrap();
    let sums = String::from_utf8(sum.stdout).unwrap();
    let install = |sums: &str, dest: &Path| {
        std::fs::write(release.join("SHA256SUMS"), sums).unwrap();
        let mut cmd = Command::new(examples().join("ci/install-kco.sh"));
        let out = hermetic(&mut cmd, t.path())
            .args(["v9.9.9", dest.to_str().unwrap()])
            .env(
                "KCO_RELEASES",
                format!("file://{}", t.path().join("releases").display()),
            )
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), text)
    };

    let other = "0".repeat(64) + "  kco-other.tar.gz\n";
    let dest = t.path().join("bin");
    let (code, err) = install(&format!("{other}{sums}"), &dest);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("kco 9.9.9"), "{err}");
    assert!(dest.join("kco").is_file());

    let bad = t.path().join("bad");
    let tampered = format!("{}{}", "1".repeat(64), &sums[64..]);
    for (sums, refusal) in [
        (&tampered, "does not match the release's SHA256SUMS"),
        (&other, "is not listed in the release's SHA256SUMS"),
    ] {
        let (code, err) = install(sums, &bad);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(refusal), "{err}");
        assert!(!bad.join("kco").exists());
    }
}

#[test]
fn apply_on_merge_applies_each_merged_change_once_and_records_it() {
    let args = apply_on_merge_args();
    assert_eq!(args, ["--push", "prod"]);
    // The nightly's observation, pushed: its push finds nothing to apply.
    let (fake, repo) = nightly_pushed();
    let dir = repo.dir();
    let url = fake.url();
    let env = kco_at(&url);
    let head = || git(&dir, &["rev-parse", "HEAD"]);
    let pushed = || git(&dir, &["rev-parse", "origin/main"]);
    let live = || fake.offsets("orders");
    let err = repo.run_ok("apply-on-merge.sh", &args, &env);
    assert!(err.contains("nothing to apply on cluster prod"), "{err}");
    assert_eq!(repo.commits(), 2);
    assert!(
        fake.requests().iter().all(|r| r.method == "GET"),
        "only reads"
    );

    // A pull request on `branch` sets the orders file to `offsets`, merged into main.
    let pull_request = |branch: &str, offsets: &[(i64, i64)], message: &str, title: &str| {
        git(&dir, &["checkout", "-qb", branch]);
        let file = dir.join("snapshots/prod/orders.yaml");
        hand_edit(&file, sink_offsets("orders", offsets));
        git(&dir, &["commit", "-qam", message]);
        git(&dir, &["checkout", "-q", "main"]);
        git(&dir, &["merge", "-q", "--no-ff", "-m", title, branch]);
    };
    // A pull request rewinds orders/0 to 800; merged while live stays at 900.
    let orders = [(0, 800), (1, 900), (2, 900)];
    pull_request(
        "rewind",
        &orders,
        "rewind orders/0",
        "Merge pull request #7",
    );
    let merge = head();
    git(&dir, &["push", "-q", "origin", "main"]);

    repo.run_ok("apply-on-merge.sh", &args, &env);
    assert_eq!(
        live(),
        sink_offsets("orders", &[(0, 800), (1, 900), (2, 900)])
    );
    // The observation before, the record after, both pushed.
    assert_eq!(pushed(), head());
    assert_eq!(
        git(&dir, &["log", "-1", "--format=%B"]),
        format!(
            "offsets of prod after an apply of {}\n\nKco-Apply: prod\nKco-Commit: {merge}",
            &merge[..12]
        )
    );
    let out = Kco::new(&dir)
        .args(["--cluster", "prod", "log", "orders", "-o", "json"])
        .run();
    let log = crate::support::json::parse_json(&out.stdout);
    let kinds: Vec<&str> = log["connectors"][0]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["apply", "snapshot", "change", "snapshot"]);
    let applied = &log["connectors"][0]["commits"][0]["partitions"];
    assert_eq!(applied.as_array().unwrap().len(), 1, "{applied}");
    assert_eq!(applied[0]["distance"], 100);
    assert_eq!(applied[0]["label"], "reprocessing");

    // Its own push, and the next nightly's: nothing to apply again.
    let commits = repo.commits();
    let err = repo.run_ok("apply-on-merge.sh", &args, &env);
    assert!(err.contains("nothing to apply"), "{err}");
    repo.run_ok(
        "nightly-snapshot.sh",
        &["--push".into(), "prod".into()],
        &env,
    );
    let (code, err) = repo.run("apply-on-merge.sh", &args, &env);
    assert_eq!((code, repo.commits()), (0, commits), "{err}");
    assert_eq!(
        live(),
        sink_offsets("orders", &[(0, 800), (1, 900), (2, 900)])
    );

    // A pull request rewinds orders/2 to 850 and is merged; live moves on and the nightly
    // lands before the apply job runs (its commit at HEAD, committed with a trailer or not):
    // the merge is applied all the same, and the nightly's observation is not.
    let orders = [(0, 800), (1, 900), (2, 850)];
    pull_request(
        "rewind2",
        &orders,
        "rewind orders/2",
        "Merge pull request #8",
    );
    git(&dir, &["push", "-q", "origin", "main"]);
    fake.set_offsets(
        "orders",
        sink_offsets("orders", &[(0, 820), (1, 930), (2, 960)]),
    );
    repo.snapshot(&fake, &["-q"]);
    git(&dir, &["commit", "-qam", "nightly by hand, no trailer"]);
    let err = repo.run_ok("apply-on-merge.sh", &args, &env);
    assert_eq!(
        live(),
        sink_offsets("orders", &[(0, 820), (1, 930), (2, 850)]),
        "the merge under the nightly was applied, the nightly was not: {err}"
    );
    let err = repo.run_ok("apply-on-merge.sh", &args, &env);
    assert!(
        err.contains("nothing to apply"),
        "a rerun applies nothing: {err}"
    );

    // A change that skips orders/1 ahead (DATA LOSS) is refused before any change: exit 1,
    // the cluster as it was, nothing pushed.
    hand_edit(
        &dir.join("snapshots/prod/orders.yaml"),
        sink_offsets("orders", &[(0, 820), (1, 5000), (2, 850)]),
    );
    git(&dir, &["commit", "-qam", "skip orders/1 ahead"]);
    git(&dir, &["push", "-q", "origin", "main"]);
    let tip = pushed();
    let (code, err) = repo.run("apply-on-merge.sh", &args, &env);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused by --fail-on"), "{err}");
    assert_eq!(
        live(),
        sink_offsets("orders", &[(0, 820), (1, 930), (2, 850)])
    );
    assert_eq!(pushed(), tip);
}

/// Another runner's apply killed after it stopped the sink, its (stale) lock and journal left
/// on the remote: the next apply-on-merge run finishes that operation first, saying so (the
/// sink RUNNING again, the journal gone from the remote), then applies the merge and records
/// it, instead of stopping at the journal.
#[test]
fn apply_on_merge_finishes_another_runners_interrupted_operation_first_then_applies() {
    use crate::fake_connect::State;
    let args = apply_on_merge_args();
    let (fake, repo) = nightly_pushed();
    let dir = repo.dir();
    let url = fake.url();
    let env = kco_at(&url);
    // A merged rewind of orders/0 to 800.
    push_a_rewind(&dir);

    // The other runner's apply of it, killed while its PATCH is held: orders left STOPPED.
    kill_an_apply_in_another_clone(&repo, &fake);
    let journals = || {
        git(
            &repo.tmp.path().join("origin.git"),
            &["for-each-ref", "--format=%(refname)", "refs/kco/journals/"],
        )
    };
    assert_eq!(journals(), "refs/kco/journals/prod");

    let err = repo.run_ok("apply-on-merge.sh", &args, &env);
    for part in [
        "did not finish: putting back the states it recorded",
        "orders: RUNNING put back (was STOPPED (no tasks))",
        "apply-on-merge: finished first the interrupted operation recorded for cluster prod",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    assert_eq!(journals(), "", "{err}");
    assert_eq!(fake.state("orders"), Some(State::Running), "{err}");
    assert_eq!(
        fake.offsets("orders"),
        sink_offsets("orders", &[(0, 800), (1, 900), (2, 900)]),
        "{err}"
    );
    assert!(
        git(&dir, &["log", "-1", "--format=%B"]).contains("Kco-Apply: prod"),
        "{err}"
    );
    // Nothing was left to finish the next time: the run says nothing of it.
    let err = repo.run_ok("apply-on-merge.sh", &args, &env);
    assert!(!err.contains("finished first"), "{err}");
}

/// In a clone of `repo`'s origin, an apply of the files at origin's tip to cluster `prod`,
/// killed while its PATCH of `orders` is held: `orders` left STOPPED, the apply's (stale) lock
/// and its journal left on the remote.
fn kill_an_apply_in_another_clone(repo: &Repo, fake: &FakeConnect) {
    use crate::fake_connect::{Fault, State};
    let other = repo.tmp.path().join("other");
    let _ = std::fs::remove_dir_all(&other);
    git(repo.tmp.path(), &["clone", "-q", "origin.git", "other"]);
    fake.fault(Fault::on("PATCH", "/connectors/orders/offsets").delay_ms(30_000));
    let before = fake.count("PATCH", "/connectors/orders/offsets");
    let killed = Kco::new(&other)
        .args(["--url", &fake.url(), "--cluster", "prod"])
        .args(["apply", "snapshots/prod", "--yes"])
        .spawn();
    crate::support::run::wait_until("the other runner's PATCH", || {
        fake.count("PATCH", "/connectors/orders/offsets") > before
    });
    killed.kill9();
    fake.clear_faults();
    assert_eq!(fake.state("orders"), Some(State::Stopped));
}

/// The nightly's hint on a drift a kco operation may have caused (it holds the cluster's lock,
/// its journal on the remote) names the command that works then, `kco recover`, never
/// `snapshot --commit`, which refuses while that journal is there; once recovered, the
/// nightly goes ahead.
#[test]
fn the_nightly_hint_on_a_stop_a_killed_operation_left_is_recover_not_snapshot_commit() {
    use crate::fake_connect::State;
    let (fake, repo) = nightly_pushed();
    let dir = repo.dir();
    let url = fake.url();
    let env = [("KCO_URL", url.as_str())];
    push_a_rewind(&dir);
    git(&dir, &["reset", "-q", "--hard", "HEAD^"]);
    kill_an_apply_in_another_clone(&repo, &fake);

    let (code, err) = repo.run("nightly-snapshot.sh", &["prod".to_string()], &env);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "If it was killed, `kco --cluster prod recover` puts back the states it recorded"
        ),
        "{err}"
    );
    assert!(!err.contains("snapshot --commit"), "{err}");
    // The hint's command works, and then the nightly does.
    let out = Kco::new(&dir)
        .args(["--url", &url, "--cluster", "prod", "recover"])
        .run();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(fake.state("orders"), Some(State::Running));
    repo.run_ok("nightly-snapshot.sh", &["prod".to_string()], &env);
}

/// Issue 46, finding 1: a CI "re-run job" on the original checkout, after another runner
/// applied the merge and pushed its record, applies nothing and records nothing: the shared
/// remote's mark of what was applied is read under the lock, before anything is planned.
#[test]
fn a_rerun_of_apply_on_merge_on_a_stale_checkout_applies_and_records_nothing() {
    let args = apply_on_merge_args();
    let (fake, repo) = nightly_pushed();
    let dir = repo.dir();
    let url = fake.url();
    let env = kco_at(&url);
    push_a_rewind(&dir);
    // Runner B checks out the merge, as runner A does.
    let b = repo.tmp.path().join("b");
    let origin = repo.tmp.path().join("origin.git");
    git(
        repo.tmp.path(),
        &["clone", "-q", origin.to_str().unwrap(), "b"],
    );
    assert_eq!(
        git(&b, &["rev-parse", "HEAD"]),
        git(&dir, &["rev-parse", "HEAD"])
    );
    let merge = git(&dir, &["rev-parse", "HEAD"]);
    // Runner A applies it, records it and pushes the record.
    repo.run_ok("apply-on-merge.sh", &args, &env);
    let applied = sink_offsets("orders", &[(0, 800), (1, 900), (2, 900)]);
    assert_eq!(fake.offsets("orders"), applied);
    let tip = git(&dir, &["rev-parse", "origin/main"]);
    let records = || {
        git(
            &dir,
            &[
                "log",
                "origin/main",
                "--format=%H",
                "--grep=^Kco-Apply: prod$",
            ],
        )
        .lines()
        .count()
    };
    assert_eq!(records(), 1);
    // The sink reads on; then runner B's re-run on its original checkout.
    let moved = sink_offsets("orders", &[(0, 830), (1, 900), (2, 900)]);
    fake.set_offsets("orders", moved.clone());
    let before = fake.mutating_requests().len();
    let (code, out) = repo.run_in(&b, "apply-on-merge.sh", &args, &env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Applied already: the shared remote marks the changes up to "),
        "{out}"
    );
    assert!(out.contains("no record written"), "{out}");
    assert_eq!(
        fake.mutating_requests().len(),
        before,
        "applied twice: {out}"
    );
    assert_eq!(fake.offsets("orders"), moved, "{out}");
    git(&dir, &["fetch", "-q", "origin"]);
    assert_eq!(git(&dir, &["rev-parse", "origin/main"]), tip, "{out}");
    assert_eq!(records(), 1, "a second record: {out}");
    // `kco lock status` shows the mark: the merge, not the snapshot the recipe committed
    // right before its apply (which a rebase on push may rewrite).
    let status = Kco::new(&b)
        .args(["--cluster", "prod", "lock", "status", "-o", "json"])
        .run();
    let v = crate::support::json::parse_json(&status.stdout);
    assert_eq!(
        v["applied"][0]["commit"],
        merge.as_str(),
        "{}",
        status.all()
    );
    let status = Kco::new(&b)
        .args(["--cluster", "prod", "lock", "status"])
        .env("KCO_URL", &url)
        .run();
    assert!(
        status
            .stdout
            .contains("Changes to cluster `prod` applied up to "),
        "{}",
        status.all()
    );
}
