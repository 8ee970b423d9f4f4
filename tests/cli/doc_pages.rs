//! The command blocks of the flow's pages, run: every ```sh block of docs/time-travel.md,
//! docs/apply.md, docs/merge.md and examples/README.md (docs/getting-started.md has its own file), with `kco`
//! on PATH, in a scratch git repository whose kco.yaml names cluster `prod` at a fake Connect.
//! Each test builds the state its page's blocks need (snapshot files made by kco, dated
//! commits, a tag, a bare remote), runs each block under `bash -e -o pipefail` (a command
//! that fails, a flag renamed, fails the test), and checks where the fake ends. The few
//! placeholders a page keeps (a commit id, a backup's name, a secret's value) are replaced
//! explicitly, after checking that the page still has them. Of docs/disaster-recovery.md,
//! whose blocks run whole on the DR test bed (tests/e2e/dr_runbook.rs), the file edits run
//! here too, on files of both regions.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::fake_connect::{ConnectorSpec, FakeConnect, State};
use crate::support::data::{sink_offsets, source_offsets, SINK, SOURCE};
use crate::support::docs::{page, page_shell, shell_blocks, succeeded};
use crate::support::git::{git, git_at};

/// A scratch directory with a git repository `repo` in it, and the way to run a page's block.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A repository on branch `main` whose kco.yaml lists `clusters` (name, URL), the first
    /// one the default.
    fn new(clusters: &[(&str, String)]) -> Scratch {
        assert!(
            Command::new("jq").arg("--version").output().is_ok(),
            "the pages pipe to jq: install it (scripts/test.sh does)"
        );
        let scratch = Scratch {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(scratch.repo()).unwrap();
        git(&scratch.repo(), &["init", "-q", "-b", "main"]);
        let mut yaml = String::from("clusters:\n");
        for (name, url) in clusters {
            yaml.push_str(&format!("  {name}:\n    urls: [{url}]\n"));
        }
        yaml.push_str(&format!("defaultCluster: {}\n", clusters[0].0));
        std::fs::write(scratch.repo().join("kco.yaml"), yaml).unwrap();
        scratch
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// `script` in the repository, with `kco` on PATH, a git identity and `env`; it must
    /// succeed. Its stdout then stderr.
    fn run(&self, script: &str, env: &[(&str, &str)]) -> String {
        let mut bash = page_shell("bash", self.dir.path(), &self.repo());
        bash.args(["-e", "-o", "pipefail", "-c", script])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .envs(env.iter().copied());
        succeeded(script, &bash.output().unwrap())
    }

    /// A commit of snapshot files written by `kco snapshot` while `connector` of `fake` held
    /// `offsets` (then its live offsets are put back): `message`, with `trailer` if any, at
    /// `date` if any. Its commit id.
    fn commit_offsets(
        &self,
        fake: &FakeConnect,
        connector: &str,
        offsets: Value,
        message: &str,
        trailer: Option<&str>,
        date: Option<&str>,
    ) -> String {
        let live = fake.offsets(connector);
        fake.set_offsets(connector, offsets);
        self.run("kco snapshot", &[]);
        fake.set_offsets(connector, live);
        let repo = self.repo();
        if trailer.is_none() {
            // A change someone made: the offsets edited by hand, capturedAt kept as it was
            // committed, re-sealed.
            let rel = format!("snapshots/prod/{connector}.yaml");
            let committed = git(&repo, &["show", &format!("HEAD:{rel}")]);
            let kept = committed
                .lines()
                .find(|l| l.trim_start().starts_with("capturedAt:"))
                .expect("a committed capturedAt");
            let path = repo.join(&rel);
            let text = std::fs::read_to_string(&path).unwrap();
            let edited: Vec<&str> = text
                .lines()
                .map(|l| {
                    if l.trim_start().starts_with("capturedAt:") {
                        kept
                    } else {
                        l
                    }
                })
                .collect();
            std::fs::write(&path, edited.join("\n") + "\n").unwrap();
            self.run("kco fmt -q snapshots", &[]);
        }
        let mut args = vec!["commit", "-q", "-m", message];
        if let Some(trailer) = trailer {
            args.extend(["-m", trailer]);
        }
        match date {
            Some(date) => {
                git_at(&repo, date, &["add", "kco.yaml", "snapshots"]);
                git_at(&repo, date, &args);
            }
            None => {
                git(&repo, &["add", "kco.yaml", "snapshots"]);
                git(&repo, &args);
            }
        }
        git(&repo, &["rev-parse", "HEAD"])
    }
}

/// `block` with `placeholder` replaced by `value`; the block must hold the placeholder.
fn replaced(block: &str, placeholder: &str, value: &str) -> String {
    assert!(
        block.contains(placeholder),
        "the page no longer has `{placeholder}`:\n{block}"
    );
    block.replace(placeholder, value)
}

/// The live offset of a sink's partition `orders/p`.
fn at(fake: &FakeConnect, name: &str, p: i64) -> Option<i64> {
    fake.offset(
        name,
        &json!({"kafka_topic": "orders", "kafka_partition": p}),
    )
    .map(|o| o["kafka_offset"].as_i64().unwrap())
}

#[test]
fn every_command_block_of_the_time_travel_page_runs_against_a_history_of_nightlies() {
    let blocks = shell_blocks(&page("docs/time-travel.md"));
    assert_eq!(blocks.len(), 7, "{blocks:#?}");
    let fake = FakeConnect::builder()
        .sink(
            "orders-sink",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 1000), (1, 1000)]),
        )
        .start();
    let t = Scratch::new(&[("prod", fake.url())]);
    let sink = |parts: &[(i64, i64)]| sink_offsets("orders", parts);
    let nightly = Some("Kco-Snapshot: prod");
    let c = |offsets, message, trailer, date| {
        t.commit_offsets(&fake, "orders-sink", offsets, message, trailer, Some(date))
    };
    c(
        sink(&[(0, 900), (1, 900)]),
        "offsets of prod",
        nightly,
        "2026-11-27T02:00:00Z",
    );
    c(
        sink(&[(0, 950), (1, 950)]),
        "offsets of prod",
        nightly,
        "2026-11-28T02:00:00Z",
    );
    let deploy = c(
        sink(&[(0, 800), (1, 950)]),
        "deploy: rewind orders/0",
        None,
        "2026-11-28T12:00:00Z",
    );
    c(
        sink(&[(0, 1000), (1, 1000)]),
        "offsets of prod",
        nightly,
        "2026-11-29T02:00:00Z",
    );
    git(&t.repo(), &["tag", "v41"]);
    let pr = c(
        sink(&[(0, 900), (1, 1000)]),
        "Merge pull request: orders/0 to 900",
        None,
        "2026-11-30T12:00:00Z",
    );

    // Records: observe, apply the merge at HEAD, record.
    let out = t.run(&blocks[0], &[]);
    assert_eq!(
        (at(&fake, "orders-sink", 0), at(&fake, "orders-sink", 1)),
        (Some(900), Some(1000)),
        "{out}"
    );
    let body = git(&t.repo(), &["log", "-1", "--format=%B"]);
    assert!(
        body.contains("Kco-Apply: prod") && body.contains(&format!("Kco-Commit: {pr}")),
        "{body}"
    );
    assert_eq!(
        git(&t.repo(), &["log", "-1", "--format=%s", "HEAD~1"]),
        "offsets of prod"
    );

    // Where was it at 02:00 on the 29th: the nightly's 1000s.
    let out = t.run(&blocks[1], &[]);
    assert!(out.contains("1000") && out.contains("\"offsets\""), "{out}");

    // When did it stop advancing: jq gets log's JSON.
    let out = t.run(&blocks[2], &[]);
    assert!(
        out.contains("1 connector moved forward over the last 3 commits; none stalled."),
        "{out}"
    );
    assert!(out.contains("\"direction\": \"backward\""), "{out}");

    // What did the apply do: the record's real movement, orders/0 1000 -> 900.
    let out = t.run(&blocks[3], &[]);
    assert!(
        out.contains("applied") && out.contains("Kco-Apply"),
        "{out}"
    );
    assert!(out.contains("\"reprocessing\""), "{out}");

    // Back to before the deploy (a real commit id for the page's example one).
    let short = git(&t.repo(), &["rev-parse", "--short", &deploy]);
    let out = t.run(&replaced(&blocks[4], "a1b2c3d", &short), &[]);
    assert_eq!(
        (at(&fake, "orders-sink", 0), at(&fake, "orders-sink", 1)),
        (Some(950), Some(950)),
        "{out}"
    );

    // Apply exactly what a merge changed: orders/1 back to 900, orders/0 left at 950.
    t.commit_offsets(
        &fake,
        "orders-sink",
        sink(&[(0, 900), (1, 900)]),
        "Merge pull request: orders/1 to 900",
        None,
        None,
    );
    let out = t.run(&blocks[5], &[]);
    assert!(out.contains("Changes of commit"), "{out}");
    assert_eq!(
        (at(&fake, "orders-sink", 0), at(&fake, "orders-sink", 1)),
        (Some(950), Some(900)),
        "{out}"
    );

    // Changed since the tag v41 the test made: a dry run, the record commits skipped.
    let before = fake.mutating_requests().len();
    let out = t.run(&blocks[6], &[]);
    assert!(out.contains("Changes since `v41`"), "{out}");
    assert!(
        out.contains("not applied (observations only; Kco-Apply: prod)"),
        "{out}"
    );
    assert_eq!(
        fake.mutating_requests().len(),
        before,
        "a dry run changed the cluster"
    );
    assert_eq!(fake.state("orders-sink"), Some(State::Running));
}

#[test]
fn the_command_block_of_the_recipes_page_applies_a_refused_change_by_hand_and_pushes_its_record() {
    let blocks = shell_blocks(&page("examples/README.md"));
    assert_eq!(blocks.len(), 1, "{blocks:#?}");
    let fake = FakeConnect::builder()
        .sink(
            "orders-sink",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 100), (1, 100)]),
        )
        .start();
    let t = Scratch::new(&[("prod", fake.url())]);
    let origin = t.dir.path().join("origin.git");
    git(
        t.dir.path(),
        &["init", "-q", "--bare", "-b", "main", "origin.git"],
    );
    git(
        &t.repo(),
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    let sink = |parts: &[(i64, i64)]| sink_offsets("orders", parts);
    t.commit_offsets(
        &fake,
        "orders-sink",
        sink(&[(0, 100), (1, 100)]),
        "offsets of prod",
        Some("Kco-Snapshot: prod"),
        None,
    );
    git(&t.repo(), &["push", "-q", "-u", "origin", "main"]);
    // The change the job refused: orders/0 skipped ahead (DATA LOSS).
    let sha = t.commit_offsets(
        &fake,
        "orders-sink",
        sink(&[(0, 150), (1, 100)]),
        "Merge pull request: skip orders/0",
        None,
        None,
    );
    let out = t.run(&replaced(&blocks[0], "SHA", &sha), &[]);
    assert_eq!(
        (at(&fake, "orders-sink", 0), at(&fake, "orders-sink", 1)),
        (Some(150), Some(100)),
        "{out}"
    );
    let pushed = git(&origin, &["log", "-1", "--format=%B", "main"]);
    assert!(
        pushed.contains("Kco-Apply: prod") && pushed.contains(&format!("Kco-Commit: {sha}")),
        "{pushed}"
    );
    assert_eq!(fake.state("orders-sink"), Some(State::Running));
}

#[test]
fn every_command_block_of_the_apply_page_runs_apply_undo_move_and_recovery() {
    let blocks = shell_blocks(&page("docs/apply.md"));
    assert_eq!(blocks.len(), 4, "{blocks:#?}");
    let fake = FakeConnect::builder()
        .connector(
            ConnectorSpec::source("orders", SOURCE)
                .configs([
                    ("file", "/data/in.txt"),
                    ("topic", "orders"),
                    ("db.password", "hunter2"),
                ])
                .offsets(source_offsets(40)),
        )
        .sink(
            "orders-sink",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 10), (1, 20)]),
        )
        .start();
    let dr = FakeConnect::start();
    let t = Scratch::new(&[("prod", fake.url()), ("dr", dr.url())]);
    t.run("kco snapshot --with-config", &[]);
    assert!(t.repo().join("snapshots/prod/orders.yaml").is_file());
    // Live moved on since: the source advanced, the sink too, on a partition the file lacks.
    fake.set_offsets("orders", source_offsets(55));
    fake.set_offsets(
        "orders-sink",
        sink_offsets("orders", &[(0, 15), (1, 25), (2, 5)]),
    );
    // The environment a CI job gives the page's summary: the secret the `orders` file names.
    let secret = [("KCO_SECRET_ORDERS_DB_PASSWORD", "hunter2")];

    // The summary: dry run, one file, exact restore, a move, a recovery, a reset, run line
    // by line: the recovery is what one does when prod's Connect cluster is lost, so prod is
    // down for that line (up, it would be refused: its `orders-sink` shares the consumer
    // group of dr's on the one Kafka cluster, docs/apply.md#a-sinks-consumer-group-is-shared-across-connect-clusters).
    let mut out = String::new();
    let mut recovered = false;
    for line in blocks[0].lines().filter(|l| !l.trim().is_empty()) {
        assert!(!line.ends_with('\\'), "one command a line: {line}");
        let recovery = line.contains("# recover a whole cluster");
        if recovery {
            fake.down();
            recovered = true;
        }
        out.push_str(&t.run(line, &secret));
        if recovery {
            fake.up();
            // The recovered sink, where prod's was; then the drill is over (dr's copy deleted)
            // so that prod's own sink, sharing its group, can be reset.
            let recovered = dr.offsets("orders-sink");
            assert_eq!(
                recovered,
                sink_offsets("orders", &[(0, 10), (1, 20)]),
                "{out}"
            );
            assert!(dr.remove_connector("orders-sink"));
        }
    }
    assert!(
        recovered,
        "the summary recovers a whole cluster:\n{}",
        blocks[0]
    );
    assert_eq!(fake.offsets("orders"), source_offsets(40), "{out}");
    assert_eq!(fake.offsets("orders-sink"), json!([]), "{out}");
    let mut on_dr = dr.connector_names();
    on_dr.sort();
    assert_eq!(on_dr, ["orders", "orders-v2"], "{out}");
    assert_eq!(dr.config("orders-v2").unwrap()["db.password"], "hunter2");
    assert_eq!(dr.offsets("orders-v2"), source_offsets(40));

    // Undo the reset, the last backup of prod (the page's example name replaced by it).
    let backups = t.repo().join(".kco/backups");
    let last = std::fs::read_dir(&backups)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| backups.join(name).join("prod").is_dir())
        .max_by_key(|name| {
            let n = name
                .rsplit_once('-')
                .map_or(1, |(_, n)| n.parse::<u32>().unwrap());
            n
        })
        .unwrap();
    let out = t.run(&replaced(&blocks[1], "20240131T120000Z", &last), &[]);
    assert_eq!(
        fake.offsets("orders-sink"),
        sink_offsets("orders", &[(0, 10), (1, 20)]),
        "{out}"
    );

    // The move, onto a dr where orders-v2 is gone again; the page's `...` is the secret.
    assert!(dr.remove_connector("orders-v2"));
    fake.set_offsets("orders", source_offsets(70));
    let out = t.run(&replaced(&blocks[2], "=...", "=s3cret"), &[]);
    assert_eq!(
        dr.config("orders-v2").unwrap()["db.password"],
        "s3cret",
        "{out}"
    );
    assert_eq!(dr.offsets("orders-v2"), source_offsets(70), "{out}");
    assert_eq!(dr.state("orders-v2"), Some(State::Running));

    // The recovery, onto a dr that lost the connectors, prod lost too.
    assert!(dr.remove_connector("orders"));
    fake.down();
    let out = t.run(&blocks[3], &secret);
    fake.up();
    assert_eq!(dr.offsets("orders"), source_offsets(70), "{out}");
    assert_eq!(
        dr.offsets("orders-sink"),
        sink_offsets("orders", &[(0, 10), (1, 20)]),
        "{out}"
    );
    assert_eq!(dr.state("orders"), Some(State::Running));
    assert_eq!(fake.state("orders-sink"), Some(State::Running));
}

#[test]
fn the_command_blocks_of_the_merge_page_register_the_driver_and_merge_a_nightly_into_a_pr() {
    let blocks = shell_blocks(&page("docs/merge.md"));
    assert_eq!(blocks.len(), 2, "{blocks:#?}");
    let fake = FakeConnect::builder()
        .sink(
            "orders-sink",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 900), (1, 900)]),
        )
        .start();
    let t = Scratch::new(&[("prod", fake.url())]);
    let repo = t.repo();
    git(
        t.dir.path(),
        &["init", "-q", "--bare", "-b", "main", "origin.git"],
    );
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            t.dir.path().join("origin.git").to_str().unwrap(),
        ],
    );
    // The .gitattributes line of the page, committed with the first snapshot.
    let attributes = "snapshots/**/*.yaml merge=kco";
    assert!(page("docs/merge.md").contains(attributes));
    std::fs::write(repo.join(".gitattributes"), format!("{attributes}\n")).unwrap();
    git(&repo, &["add", ".gitattributes"]);
    t.run("kco snapshot", &[]);
    git(&repo, &["add", "kco.yaml", "snapshots"]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-m",
            "offsets of prod",
            "-m",
            "Kco-Snapshot: prod",
        ],
    );
    git(&repo, &["push", "-q", "-u", "origin", "main"]);
    // The pull request: orders/0 rewound by hand to 800, re-sealed with kco fmt.
    git(&repo, &["checkout", "-q", "-b", "my-pr"]);
    let file = repo.join("snapshots/prod/orders-sink.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches("kafka_offset: 900").count(), 2, "{text}");
    std::fs::write(
        &file,
        text.replacen("kafka_offset: 900", "kafka_offset: 800", 1),
    )
    .unwrap();
    t.run("kco fmt snapshots/prod/orders-sink.yaml", &[]);
    git(&repo, &["commit", "-q", "-am", "rewind orders/0 to 800"]);
    git(&repo, &["push", "-q", "-u", "origin", "my-pr"]);
    // Meanwhile a nightly on main: both partitions advanced, the file rewritten.
    git(&repo, &["checkout", "-q", "main"]);
    fake.set_offsets(
        "orders-sink",
        sink_offsets("orders", &[(0, 1000), (1, 1000)]),
    );
    t.run("kco snapshot", &[("KCO_NOW", "2026-12-02T02:00:00Z")]);
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-am",
            "offsets of prod",
            "-m",
            "Kco-Snapshot: prod",
        ],
    );
    git(&repo, &["push", "-q", "origin", "main"]);
    git(&repo, &["checkout", "-q", "my-pr"]);

    // Register the driver (this clone), then the page's local merge and push.
    t.run(&blocks[0], &[]);
    let out = t.run(&blocks[1], &[]);
    assert!(out.contains("kept our change"), "{out}");
    let merged = std::fs::read_to_string(&file).unwrap();
    assert!(
        merged.contains("kafka_offset: 800") && merged.contains("kafka_offset: 1000"),
        "{merged}"
    );
    assert!(!merged.contains("<<<<<<<"), "{merged}");
    t.run("kco validate snapshots/prod/orders-sink.yaml", &[]);
    let origin = t.dir.path().join("origin.git");
    assert_eq!(
        git(&origin, &["rev-parse", "my-pr"]),
        git(&repo, &["rev-parse", "HEAD"])
    );
    assert_eq!(
        git(&repo, &["rev-list", "--parents", "-1", "HEAD"])
            .split(' ')
            .count(),
        3
    );
}

/// The block `<!-- kco:words ... -->` to `<!-- /kco:words -->` of `text`, if it has one.
fn words_block(text: &str) -> Option<&str> {
    let start = text.find("<!-- kco:words")?;
    let end = text[start..].find("<!-- /kco:words -->")? + start;
    Some(&text[start..end])
}

#[test]
fn the_four_pages_of_the_flow_define_change_observation_and_apply_record_in_one_identical_block() {
    let pages = [
        "docs/time-travel.md",
        "docs/apply.md",
        "docs/merge.md",
        "examples/README.md",
    ];
    let blocks: Vec<(&str, String)> = pages
        .iter()
        .map(|p| {
            let text = page(p);
            let block = words_block(&text)
                .unwrap_or_else(|| panic!("{p} has no <!-- kco:words --> block"))
                .to_string();
            (*p, block)
        })
        .collect();
    for word in ["**observation**", "**change**", "**apply record**"] {
        assert!(blocks[0].1.contains(word), "the block defines {word}");
    }
    for (p, b) in &blocks[1..] {
        assert_eq!(
            b, &blocks[0].1,
            "{p}'s block differs from {}'s",
            blocks[0].0
        );
    }
}

/// The files of a region in `repo`'s `snapshots/<region>`: `orders-sink` writing to
/// `/data/<region>/out.txt` and `orders-src` reading `/data/<region>/in.txt` (its sealed
/// offsets name the path too), made from the demo files and sealed by `kco fmt`.
fn region_files(t: &Scratch, region: &str) {
    let dir = t.repo().join("snapshots").join(region);
    std::fs::create_dir_all(&dir).unwrap();
    for (demo, name, path) in [
        (
            "demo-file-sink",
            "orders-sink",
            "/tmp/kco-demo/orders-copy.txt",
        ),
        ("demo-file-source", "orders-src", "/tmp/kco-demo/orders.txt"),
    ] {
        let file = page(&format!("snapshots/a/{demo}.yaml"))
            .replace(demo, name)
            .replace("cluster: a\n", &format!("cluster: {region}\n"));
        let io = if name.ends_with("sink") { "out" } else { "in" };
        let file = replaced(&file, path, &format!("/data/{region}/{io}.txt"));
        std::fs::write(dir.join(format!("{name}.yaml")), file).unwrap();
    }
    t.run(&format!("kco fmt -q snapshots/{region}"), &[]);
}

#[test]
fn the_dr_runbooks_edits_change_only_the_sinks_config_and_are_validated_before_a_commit() {
    // The lines of each block of docs/disaster-recovery.md that edits files, from the edit
    // to the validation (the blocks run whole on the DR test bed: tests/e2e/dr_runbook.rs).
    let blocks = shell_blocks(&page("docs/disaster-recovery.md"));
    let edits: Vec<String> = blocks
        .iter()
        .filter(|b| b.contains("sed -i"))
        .map(|b| {
            let from = b.find("grep -lx").expect("the sinks picked by their type");
            let to = b.find("kco validate").expect("the edit validated");
            let end = to + b[to..].find('\n').unwrap();
            assert!(
                to < b.find("git commit").unwrap(),
                "validated before the commit: {b}"
            );
            b[from..end].to_string()
        })
        .collect();
    assert_eq!(
        edits.len(),
        2,
        "the failover's and the failback's: {edits:#?}"
    );
    let t = Scratch::new(&[("east", "http://127.0.0.1:9".into())]);
    for (edit, from, to) in [(&edits[0], "east", "west"), (&edits[1], "west", "east")] {
        region_files(&t, from);
        let dir = t.repo().join("snapshots").join(from);
        let source = std::fs::read_to_string(dir.join("orders-src.yaml")).unwrap();
        assert!(
            source.contains(&format!("filename: /data/{from}/in.txt")),
            "{source}"
        );
        t.run(edit, &[]);
        // The sink's config names the other region; the source's file is as captured.
        let sink = std::fs::read_to_string(dir.join("orders-sink.yaml")).unwrap();
        assert!(
            sink.contains(&format!("file: /data/{to}/out.txt")),
            "{edit}\n{sink}"
        );
        let after = std::fs::read_to_string(dir.join("orders-src.yaml")).unwrap();
        assert_eq!(after, source, "{edit}");
        // The whole-file edit the page once had rewrites the source's sealed offsets: the
        // validation line stops the block there.
        let validate = edit.lines().last().unwrap();
        let mut bash = page_shell("bash", t.dir.path(), &t.repo());
        bash.args(["-e", "-c"]).arg(format!(
            "sed -i 's#/data/{from}/#/data/{to}/#' snapshots/{from}/orders-*.yaml\n{validate}"
        ));
        let out = bash.output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("orders-src.yaml:") && said.contains("checksum mismatch"),
            "{said}"
        );
    }
}
