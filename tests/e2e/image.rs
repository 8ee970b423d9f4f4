//! The image `scripts/image.sh` builds, run with podman against the test bed as CI runners and
//! Kubernetes run it: `--network host`, a git checkout mounted at the working directory.
//! As the checkout's owner: snapshot, diff, apply, `diff --base` and log. As another uid: a
//! live diff reads the files (they follow the umask), and what reads git names the ownership
//! and both fixes, then works once the repository is marked safe the way git does.
//!
//! Skips unless `KCO_E2E_IMAGE` names the image (scripts/test.sh builds it and sets it).
//! podman's global options: `KCO_PODMAN_OPTS`, as scripts/lib/podman.sh reads it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use crate::harness::{
    append_lines, file_source_config, numbered, output_parts, temp_dir, testbed, unique_name,
    TopicReader,
};
use crate::kco_steps::{set_offsets, testbed_env};
use crate::support::data::sink_entry;

/// The image's user (Containerfile), who owns the checkout here.
const OWNER: u32 = 10001;
/// Another user, as a CI runner's step may run.
const OTHER: u32 = 20002;

/// Gives `dir` and everything under it to `uid`.
fn chown_all(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    if dir.is_dir() && !dir.is_symlink() {
        for entry in std::fs::read_dir(dir).unwrap() {
            chown_all(&entry.unwrap().path(), uid);
        }
    }
}

/// git in the checkout as this process's user (which owns nothing there), then the checkout
/// back to its owner; its stdout, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let (ok, out, err) = git_may_fail(dir, args);
    assert!(ok, "git {args:?}: {err}");
    out
}

/// [`git`], which may fail: whether it did, its stdout (trimmed) and stderr.
fn git_may_fail(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    chown_all(dir, OWNER);
    let (code, stdout, stderr) = output_parts(&out);
    (code == 0, stdout.trim().to_string(), stderr)
}

struct Image {
    name: String,
    podman: Vec<String>,
}

impl Image {
    /// `podman run` of the image as `user` (the image's own when `None`), the checkout at
    /// /work; its exit code, stdout and stderr.
    fn run(
        &self,
        dir: &Path,
        user: Option<u32>,
        extra: &[&str],
        args: &[&str],
    ) -> (i32, String, String) {
        let mut cmd = Command::new(&self.podman[0]);
        cmd.args(&self.podman[1..]).args([
            "run",
            "--rm",
            "--network",
            "host",
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=4096:4096",
            "-e",
            "NO_COLOR=1",
            "-v",
        ]);
        cmd.arg(format!("{}:/work", dir.display()));
        if let Some(uid) = user {
            cmd.args(["--user", &format!("{uid}:{uid}")]);
        }
        cmd.args(extra).arg(&self.name).args(args);
        output_parts(&cmd.output().expect("run podman"))
    }
}

impl Image {
    /// A program that runs kco in the image as a CI runner's step does: `--network host`,
    /// `root` (the remote and every checkout) mounted at the same path, the working
    /// directory the caller's, as the caller's uid, with the caller's `KCO_*` and `GIT_*`
    /// environment; written in `root`. Each call's arguments are appended to `calls`.
    fn wrapper(&self, root: &Path, calls: &Path) -> std::path::PathBuf {
        let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let podman: Vec<String> = self.podman.iter().map(|p| quote(p)).collect();
        let root_text = root.display().to_string();
        let uid = caller_ids();
        let script = format!(
            r#"#!/bin/sh
# kco in the image, on the checkout at the caller's working directory
set -eu
printf '%s\n' "$*" >>{calls}
pass=''
for v in $(env | sed -n 's/^\(KCO_[A-Za-z0-9_]*\|GIT_[A-Za-z0-9_]*\)=.*/\1/p'); do
  pass="$pass -e $v"
done
# shellcheck disable=SC2086
exec {podman} run --rm --network host --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
  -e NO_COLOR=1 -e TERM=dumb -e HOME=/tmp $pass --user {uid} -v {root}:{root} -w "$PWD" \
  {image} "$@"
"#,
            podman = podman.join(" "),
            root = quote(&root_text),
            image = quote(&self.name),
            calls = quote(&calls.display().to_string()),
        );
        let path = root.join("kco-in-image");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

/// This process's `uid:gid`, as podman's `--user` takes it.
fn caller_ids() -> String {
    let meta = std::fs::metadata("/proc/self").unwrap();
    format!("{}:{}", meta.uid(), meta.gid())
}

fn image() -> Option<Image> {
    let Some(name) = std::env::var("KCO_E2E_IMAGE")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        eprintln!("skipping: KCO_E2E_IMAGE names no image (scripts/image.sh builds one)");
        return None;
    };
    let opts = std::env::var("KCO_PODMAN_OPTS")
        .unwrap_or_else(|_| "--storage-driver vfs --runtime runc --cgroup-manager cgroupfs".into());
    let podman = std::iter::once("podman".to_string())
        .chain(opts.split_whitespace().map(str::to_string))
        .collect();
    Some(Image { name, podman })
}

#[test]
fn the_image_works_on_a_mounted_checkout_as_its_owner_and_says_why_not_as_another_uid() {
    let Some(image) = image() else { return };
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    // The connectors' files live outside the checkout (the workers read and write them).
    let data = temp_dir();
    let topic = unique_name("kco-e2e-image");
    let input = data.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=20));
    let _src = a.create(
        &unique_name("kco-e2e-image-src"),
        file_source_config(&input, &topic),
    );
    let reader = TopicReader::start(&a, &topic, data.path());
    let sink = reader.sink.name().to_string();
    reader.wait_lines(20);
    a.wait_offsets(&sink, "offset 20", |o| o == [sink_entry(&topic, 0, 20)]);

    // A checkout as CI mounts one: the owner's, readable by others (0755).
    let repo = testbed_env(&tb);
    let dir = repo.path();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "kco.yaml"]);
    git(dir, &["commit", "-q", "-m", "kco.yaml"]);

    // As the owner (the image's user): snapshot, commit, diff in sync.
    let (code, out, err) = image.run(dir, None, &[], &["--cluster", "a", "snapshot", &sink]);
    assert_eq!(code, 0, "{out}{err}");
    let file = dir.join(format!("snapshots/a/{sink}.yaml"));
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.uid(), OWNER, "written as the image's user");
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o644,
        "0666 less the umask 022"
    );
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "nightly"]);
    let (code, out, err) = image.run(dir, None, &[], &["--cluster", "a", "diff", &sink]);
    assert_eq!(code, 0, "in sync: {out}{err}");

    // A reviewed rewind: diff --base shows it, diff shows the drift, apply makes it so.
    set_offsets(&file, vec![sink_entry(&topic, 0, 15)]);
    git(dir, &["commit", "-q", "-am", "rewind the reader by 5"]);
    let (code, out, err) = image.run(
        dir,
        None,
        &[],
        &["--cluster", "a", "diff", "--base", "HEAD~1"],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains(&sink) && out.contains("15"), "{out}{err}");
    // Live, the running sink is ahead of the file: normal progress, which fails only with
    // --fail-on any.
    let (code, out, err) = image.run(
        dir,
        None,
        &[],
        &["--cluster", "a", "diff", &sink, "--fail-on", "any"],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("advanced"), "{out}{err}");
    let (code, out, err) = image.run(
        dir,
        None,
        &[],
        &[
            "--cluster",
            "a",
            "apply",
            &format!("snapshots/a/{sink}.yaml"),
            "--yes",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines = reader.wait_lines_settled(25);
    assert_eq!(lines[20..], numbered("line", 16..=20)[..]);
    assert_eq!(a.state(&sink), "RUNNING");
    let (code, out, err) = image.run(dir, None, &[], &["log"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("rewind the reader by 5"), "{out}");

    // As another uid: the files are readable, so a live diff works.
    let (code, out, err) = image.run(dir, Some(OTHER), &[], &["--cluster", "a", "diff", &sink]);
    assert!(code == 0 || code == 2, "{out}{err}");
    assert!(!err.contains("error:"), "{err}");
    // git distrusts the checkout: what reads git says why and how, never "not a repository".
    for args in [
        &["log"][..],
        &["--cluster", "a", "diff", "--base", "HEAD~1"][..],
    ] {
        let (code, out, err) = image.run(dir, Some(OTHER), &[], args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(!err.contains("not in a git repository"), "{err}");
        for part in [
            format!("the git repository /work, which another user (uid {OWNER}) owns"),
            "run kco as the owner of /work".to_string(),
            "git config --global --add safe.directory /work".to_string(),
        ] {
            assert!(err.contains(&part), "{args:?}: {part:?} in {err}");
        }
    }
    // Marked safe in that user's global git config, as the hint says: kco honours it.
    let home = temp_dir();
    std::fs::write(
        home.path().join(".gitconfig"),
        "[safe]\n\tdirectory = /work\n",
    )
    .unwrap();
    chown_all(home.path(), OTHER);
    let mount = format!("{}:/home/other", home.path().display());
    let safe = ["-v", &mount, "-e", "HOME=/home/other"];
    let (code, out, err) = image.run(dir, Some(OTHER), &safe, &["log"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("rewind the reader by 5"), "{out}");
}

/// A source feeding a topic and a FileStream sink reading it (files outside the checkout),
/// the sink at offset `lines`.
struct Reading {
    _data: tempfile::TempDir,
    _source: crate::harness::ConnectorGuard,
    input: std::path::PathBuf,
    reader: TopicReader,
    sink: String,
    topic: String,
}

fn reading(a: &crate::harness::Connect, lines: usize) -> Reading {
    let data = temp_dir();
    let topic = unique_name("kco-e2e-image");
    let input = data.path().join("in.txt");
    append_lines(&input, &numbered("line", 1..=lines));
    let source = a.create(
        &unique_name("kco-e2e-image-src"),
        file_source_config(&input, &topic),
    );
    let reader = TopicReader::start(a, &topic, data.path());
    let sink = reader.sink.name().to_string();
    reader.wait_lines(lines);
    a.wait_offsets(&sink, "all read", |o| {
        o == [sink_entry(&topic, 0, lines as i64)]
    });
    Reading {
        _data: data,
        _source: source,
        input,
        reader,
        sink,
        topic,
    }
}

/// Every entry under `dir` (itself included) whose owner is not `uid`.
fn not_owned_by(dir: &Path, uid: u32) -> Vec<String> {
    let mut out = Vec::new();
    let meta = std::fs::symlink_metadata(dir).unwrap();
    if meta.uid() != uid {
        out.push(format!("{} (uid {})", dir.display(), meta.uid()));
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap() {
            out.extend(not_owned_by(&entry.unwrap().path(), uid));
        }
    }
    out
}

#[test]
fn the_image_takes_the_shared_lock_with_the_runners_git_credentials_and_leaves_the_checkout_its_owners(
) {
    use crate::remotes::{Bare, Http, Ssh};
    use base64::Engine as _;

    let Some(image) = image() else { return };
    let Some(tb) = testbed() else { return };
    let Some(ssh) = Ssh::start(OWNER) else { return };
    let a = tb.a();
    let r = reading(&a, 20);
    let (sink, topic) = (r.sink.as_str(), r.topic.as_str());

    // The remote every runner pushes to, over HTTP (a token in a header, or a credential
    // helper's user and password) and over SSH (a key in an agent).
    let bare = Bare::new();
    let token = "s3cr3t-token";
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("runner:{token}"));
    let http = Http::serve(&bare, &format!("Basic {basic}"));

    let repo = testbed_env(&tb);
    let dir = repo.path();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    let (code, out, err) = image.run(dir, None, &[], &["--cluster", "a", "snapshot", sink]);
    assert_eq!(code, 0, "{out}{err}");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "first night"]);
    git(dir, &["push", "-q", bare.path.to_str().unwrap(), "main"]);
    let file = format!("snapshots/a/{sink}.yaml");

    let header_key = format!("http.{}.extraheader", http.base);
    let helper_file = dir.join(".git/kco-credentials");
    let agent = format!("{}:/agent", ssh.agent_dir.display());
    let ssh_opts = "GIT_SSH_COMMAND=ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR";
    let with_agent: Vec<&str> = vec![
        "-v",
        &agent,
        "-e",
        "SSH_AUTH_SOCK=/agent/agent.sock",
        "-e",
        ssh_opts,
    ];
    let no_agent: Vec<&str> = vec!["-e", ssh_opts];

    struct Way<'a> {
        name: &'a str,
        url: String,
        /// Sets the checkout's git config (nothing of another way's is left): `true` with the
        /// runner's credential, `false` without.
        setup: Box<dyn Fn(bool) + 'a>,
        podman: [Vec<&'a str>; 2],
    }
    let ways = [
        Way {
            // actions/checkout: the token as a header in the repository's own config.
            name: "http.<url>.extraheader",
            url: http.url(),
            setup: Box::new(|with| {
                if with {
                    git(
                        dir,
                        &[
                            "config",
                            &header_key,
                            &format!("AUTHORIZATION: basic {basic}"),
                        ],
                    );
                }
            }),
            podman: [vec![], vec![]],
        },
        Way {
            // A credential helper (git's own store) the runner configured.
            name: "credential.helper",
            url: http.url(),
            setup: Box::new(|with| {
                let secret = if with { token } else { "a-revoked-token" };
                let at = http.base.trim_start_matches("http://");
                std::fs::write(&helper_file, format!("http://runner:{secret}@{at}\n")).unwrap();
                git(
                    dir,
                    &[
                        "config",
                        "credential.helper",
                        "store --file=/work/.git/kco-credentials",
                    ],
                );
            }),
            podman: [vec![], vec![]],
        },
        Way {
            // An SSH key the runner loaded into its agent, the socket mounted.
            name: "ssh agent",
            url: ssh.url(&bare),
            setup: Box::new(|_| {}),
            podman: [no_agent.clone(), with_agent.clone()],
        },
    ];

    let only = |way: &Way, with: bool| {
        for key in [header_key.as_str(), "credential.helper"] {
            let _ = git_may_fail(dir, &["config", "--unset-all", key]);
        }
        (way.setup)(with);
    };
    let mut lines = 20;
    for way in &ways {
        let _ = git_may_fail(dir, &["remote", "remove", "origin"]);
        git(dir, &["remote", "add", "origin", &way.url]);
        set_offsets(&dir.join(&file), vec![sink_entry(topic, 0, 15)]);
        let apply = ["--cluster", "a", "apply", file.as_str(), "--yes"];

        // Without the credential: refused before any change, and says why.
        only(way, false);
        let before = bare.updates().len();
        let (code, out, err) = image.run(dir, None, &way.podman[0], &apply);
        assert_eq!(
            code, 1,
            "{}: refused without the credential: {out}{err}",
            way.name
        );
        assert!(
            err.contains("origin") && err.contains("lock"),
            "{}: names the remote and the lock: {err}",
            way.name
        );
        assert!(
            !err.contains(token),
            "{}: no credential printed: {err}",
            way.name
        );
        assert_eq!(bare.updates().len(), before, "{}: nothing pushed", way.name);
        assert_eq!(
            a.offsets(sink),
            vec![sink_entry(topic, 0, 20)],
            "{}: nothing changed on the worker",
            way.name
        );
        assert_eq!(a.state(sink), "RUNNING");

        // With it: the lock (and the journal) pushed to the remote, the rewind applied, the
        // lock released.
        only(way, true);
        let (code, out, err) = image.run(dir, None, &way.podman[1], &apply);
        assert_eq!(code, 0, "{}: {out}{err}", way.name);
        assert!(
            !format!("{out}{err}").contains(token),
            "{}: no credential printed",
            way.name
        );
        let locks: Vec<(String, bool)> = bare.updates()[before..]
            .iter()
            .filter(|l| l.starts_with("refs/kco/locks/"))
            .map(|l| {
                let created = l.split(' ').nth(1).unwrap().bytes().all(|b| b == b'0');
                (l.split(' ').next().unwrap().to_string(), created)
            })
            .collect();
        assert_eq!(
            locks,
            [
                ("refs/kco/locks/a".to_string(), true),
                ("refs/kco/locks/a".to_string(), false)
            ],
            "{}: taken on the remote, then released: {:?}",
            way.name,
            bare.updates()
        );
        lines += 5;
        let got = r.reader.wait_lines_settled(lines);
        assert_eq!(
            got[lines - 5..],
            numbered("line", 16..=20)[..],
            "{}",
            way.name
        );
        assert_eq!(a.state(sink), "RUNNING", "{}", way.name);
    }
    assert!(
        http.requests()
            .iter()
            .any(|q| q.authorized && q.method == "POST" && q.target.ends_with("/git-receive-pack")),
        "pushed over HTTP with the credential: {:?}",
        http.requests()
    );
    assert!(bare
        .updates_of("refs/kco/journals/")
        .iter()
        .any(|(_, c)| *c));

    // As root (a runner's step without --user) on the owner's checkout, trusted the way git
    // is told to: a snapshot committed, the lock's journal read through the remote (the header
    // way again), and nothing left in the checkout that its owner cannot write.
    git(dir, &["remote", "set-url", "origin", &http.url()]);
    only(&ways[0], true);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the applied rewinds"]);
    let home = temp_dir();
    std::fs::write(
        home.path().join(".gitconfig"),
        "[safe]\n\tdirectory = /work\n",
    )
    .unwrap();
    let mount = format!("{}:/root-home", home.path().display());
    let root = [
        "-v",
        &mount,
        "-e",
        "HOME=/root-home",
        "-e",
        "GIT_AUTHOR_NAME=ci",
        "-e",
        "GIT_AUTHOR_EMAIL=ci@example.com",
        "-e",
        "GIT_COMMITTER_NAME=ci",
        "-e",
        "GIT_COMMITTER_EMAIL=ci@example.com",
    ];
    let commits = git(dir, &["rev-list", "--count", "HEAD"]);
    append_lines(&r.input, &numbered("line", 21..=23));
    r.reader.wait_lines(lines + 3);
    a.wait_offsets(sink, "23 read", |o| o == [sink_entry(topic, 0, 23)]);
    let (code, out, err) = image.run(
        dir,
        Some(0),
        &root,
        &["--cluster", "a", "snapshot", sink, "--commit"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        git(dir, &["rev-list", "--count", "HEAD"])
            .parse::<u32>()
            .unwrap(),
        commits.parse::<u32>().unwrap() + 1,
        "root committed the snapshot"
    );
    assert_eq!(not_owned_by(dir, OWNER), Vec::<String>::new());
}

/// Issue 33's month (tests/e2e/month.rs) with runner B's kco the image: the lock it takes and
/// the journal it finishes from the shared remote, its nightly's and its apply's
/// `snapshot --commit`, through the image's git, each step read back on the worker.
#[test]
fn a_month_of_gitops_with_runner_b_in_the_image() {
    let Some(image) = image() else { return };
    let calls = tempfile::NamedTempFile::new().unwrap();
    crate::month::live_the_month(Some(&|root: &Path| image.wrapper(root, calls.path())));
    // Runner B's commands went through the image: its nightlies' snapshots and commits,
    // its applies on merge, and the recovery of runner A's journal.
    let calls = std::fs::read_to_string(calls.path()).unwrap();
    for call in [
        "snapshot --dir snapshots --commit",
        "recover",
        "apply snapshots/a",
    ] {
        assert!(
            calls.contains(call),
            "`{call}` not run in the image:\n{calls}"
        );
    }
}
