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
use crate::kco_steps::{kco_dir, set_offsets};
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
/// back to its owner.
fn git(dir: &Path, args: &[&str]) {
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
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        output_parts(&out).2
    );
    chown_all(dir, OWNER);
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
    let repo = kco_dir(&tb);
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
