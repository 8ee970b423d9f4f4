//! A project under GitOps on the real test bed, as tests that live through its days build it:
//! the checkouts of one bare remote (CI runners, a teammate's clone), each running kco and the
//! recipes of `examples/ci` as a CI job does, and the records that flow through a FileStream
//! sink, counted line by line (`month.rs`, `accidents.rs`).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;

use crate::harness::{
    append_lines, file_sink_config, file_source_config, numbered, source_position, unique_name,
    Connect, ConnectorGuard,
};
use crate::kco_steps::{clone, wait_live, Offs};
use crate::support::env::TestEnv;
use crate::support::git::git;
use crate::support::run::hermetic;
use crate::support::run::kill_when_seen;

/// The recipes the project copies into its own `ci/` directory (examples/README.md).
pub const RECIPES: [&str; 3] = ["nightly-snapshot.sh", "pr-review.sh", "apply-on-merge.sh"];

/// One checkout of the shared remote and how kco runs there: a CI runner, or the teammate's
/// clone.
pub struct Runner {
    pub name: &'static str,
    pub root: PathBuf,
    pub dir: PathBuf,
    /// The program every kco command of this runner runs, directly ([`Runner::env`],
    /// [`Runner::killed_at`]) and in the recipes (their `KCO`): the binary, or for runner B
    /// in the image test a wrapper that runs the image on the checkout and passes its
    /// arguments on. Nothing else of the month changes.
    pub kco: PathBuf,
    /// A throw-away checkout (a cloud runner): each job clones afresh onto a detached HEAD.
    /// Else a kept checkout on `trunk` (a self-hosted runner), brought up to date by each job.
    pub ephemeral: bool,
    /// Environment of every command (`KCO_BRANCH` for a detached checkout).
    pub vars: Vec<(&'static str, String)>,
    /// The day of the month: kco's clock (`KCO_NOW`) is 02:00 UTC of it.
    pub day: Rc<Cell<u32>>,
    pub home: tempfile::TempDir,
}

impl Runner {
    pub fn new(root: &Path, name: &'static str, ephemeral: bool, day: &Rc<Cell<u32>>) -> Runner {
        let r = Runner {
            name,
            root: root.to_path_buf(),
            dir: root.join(name),
            kco: PathBuf::from(env!("CARGO_BIN_EXE_kco")),
            ephemeral,
            vars: if ephemeral {
                vec![("KCO_BRANCH", "trunk".to_string())]
            } else {
                Vec::new()
            },
            day: day.clone(),
            home: tempfile::tempdir().unwrap(),
        };
        clone(root, name);
        r
    }

    /// A CI job starts: a fresh clone on a detached HEAD at trunk's tip, or the kept checkout
    /// pulled (`git pull --rebase`).
    pub fn job(&self) {
        if self.ephemeral {
            std::fs::remove_dir_all(&self.dir).unwrap();
            clone(&self.root, self.name);
            self.git(&["checkout", "-q", "--detach", "origin/trunk"]);
        } else {
            self.git(&["checkout", "-q", "trunk"]);
            self.git(&["pull", "-q", "--rebase"]);
        }
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.dir, args)
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }

    /// The runner's variables and kco's clock at 02:00 of the day.
    pub fn vars(&self) -> Vec<(&str, String)> {
        let now = format!("2026-11-{:02}T02:00:00Z", self.day.get());
        let vars = self.vars.iter().map(|(k, v)| (*k, v.clone()));
        std::iter::once(("KCO_NOW", now)).chain(vars).collect()
    }

    /// `program` in the checkout, hermetic (`support::run::hermetic`), with [`Runner::vars`].
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        hermetic(&mut cmd, self.home.path())
            .current_dir(&self.dir)
            .envs(self.vars())
            .stdin(Stdio::null());
        cmd
    }

    /// kco as this runner runs it (its program) in the checkout, with [`Runner::vars`].
    pub fn env(&self) -> TestEnv {
        let vars = self.vars();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        TestEnv::at(&self.dir).program(&self.kco).envs(&vars)
    }

    /// `./ci/<script> <args>`, executed by path as a CI job does (its `#!/bin/sh`, not
    /// `sh script`), with `KCO` the runner's kco; exit code, stdout then stderr.
    pub fn recipe(&self, script: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let out = self
            .command(&self.dir.join("ci").join(script))
            .env("KCO", &self.kco)
            .envs(env.iter().copied())
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run ci/{script} by path: {e}"));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!(
            "--- {} day {}: ci/{script} {args:?}\n{said}",
            self.name,
            self.day.get()
        );
        (out.status.code().unwrap_or(-1), said)
    }

    /// Runs `kco -v <args>` and SIGKILLs it as soon as its stderr shows `marker` (a step of
    /// its transaction); whether the marker was seen.
    pub fn killed_at(&self, args: &[&str], marker: &str) -> bool {
        let mut child = self
            .env()
            .cmd()
            .arg("-v")
            .args(args)
            .discard_stdout()
            .spawn();
        kill_when_seen(&mut child, marker)
    }
}

/// The records fed to the three topics, and how many times the sink should have written each
/// to its file: once, and once more for each rewind that went back over it.
pub struct Flow {
    pub inputs: Vec<PathBuf>,
    pub lines: [usize; 3],
    pub times: [Vec<usize>; 3],
}

impl Flow {
    /// `n` more lines on each topic (`t<i>-<number>`).
    pub fn feed(&mut self, n: usize) {
        for i in 0..3 {
            let from = self.lines[i] + 1;
            self.lines[i] += n;
            append_lines(
                &self.inputs[i],
                &numbered(&format!("t{i}"), from..=self.lines[i]),
            );
            self.times[i].resize(self.lines[i], 1);
        }
    }

    /// Where the sink is once it has read everything.
    pub fn end(&self) -> Offs {
        self.lines.map(|n| Some(n as i64))
    }

    /// The sink was set back to offset `to` of topic `i`: the records after it are written
    /// once more.
    pub fn rewind(&mut self, i: usize, to: i64) {
        for n in (to.max(0) as usize + 1)..=self.lines[i] {
            self.times[i][n - 1] += 1;
        }
    }
}

/// How many times each line was written to `out`.
pub fn written(out: &Path) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for line in std::fs::read_to_string(out).unwrap_or_default().lines() {
        *seen.entry(line.to_string()).or_insert(0) += 1;
    }
    seen
}

/// A project's remote and checkouts: the bare remote (default branch `trunk`), the teammate's
/// clone (the merge driver registered), runner A (a throw-away checkout) and runner B (a kept
/// one).
pub struct Project {
    pub remote: PathBuf,
    pub mate: Runner,
    pub run_a: Runner,
    pub run_b: Runner,
}

impl Project {
    /// The project under `root` on cluster a at `a_urls`: the teammate commits kco.yaml, the
    /// merge driver's attribute and the recipes, copied into `ci/` as examples/README.md
    /// says, and pushes them to trunk. `runner_b`, when given, makes runner B's kco from the
    /// directory that holds the remote and every checkout (the image's wrapper).
    pub fn new(
        root: &Path,
        a_urls: &[String],
        day: &Rc<Cell<u32>>,
        runner_b: Option<&dyn Fn(&Path) -> PathBuf>,
    ) -> Project {
        git(root, &["init", "-q", "--bare", "-b", "trunk", "remote.git"]);
        let remote = root.join("remote.git");
        let mate = Runner::new(root, "teammate", false, day);
        mate.git(&["symbolic-ref", "HEAD", "refs/heads/trunk"]);
        std::fs::write(
            mate.dir.join("kco.yaml"),
            format!("clusters:\n  a:\n    urls: [{}]\n", a_urls.join(", ")),
        )
        .unwrap();
        std::fs::write(mate.dir.join(".gitignore"), ".kco/\n").unwrap();
        std::fs::write(
            mate.dir.join(".gitattributes"),
            "snapshots/**/*.yaml merge=kco\n",
        )
        .unwrap();
        std::fs::create_dir(mate.dir.join("ci")).unwrap();
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci");
        for script in RECIPES {
            // Committed executable in kco's own repository.
            let staged = git(
                Path::new(env!("CARGO_MANIFEST_DIR")),
                &["ls-files", "-s", &format!("examples/ci/{script}")],
            );
            assert!(staged.starts_with("100755 "), "{script}: {staged}");
            std::fs::copy(examples.join(script), mate.dir.join("ci").join(script)).unwrap();
        }
        mate.git(&["add", "-A"]);
        mate.git(&["commit", "-qm", "kco for cluster a"]);
        mate.git(&["push", "-q", "-u", "origin", "trunk"]);
        register_driver(&mate);
        let run_a = Runner::new(root, "runner-a", true, day);
        let mut run_b = Runner::new(root, "runner-b", false, day);
        if let Some(make) = runner_b {
            run_b.kco = make(root);
        }
        // The copies reach each runner's checkout executable, through git.
        for script in RECIPES {
            let staged = run_b.git(&["ls-files", "-s", &format!("ci/{script}")]);
            assert!(staged.starts_with("100755 "), "{script}: {staged}");
        }
        Project {
            remote,
            mate,
            run_a,
            run_b,
        }
    }

    /// trunk's tip on the remote.
    pub fn tip(&self) -> String {
        git(&self.remote, &["rev-parse", "trunk"])
    }
}

/// kco's merge driver registered in `r`'s clone, as docs/merge.md says.
pub fn register_driver(r: &Runner) {
    let driver = format!(
        "{} merge-file %O %A %B --path %P",
        env!("CARGO_BIN_EXE_kco")
    );
    r.git(&["config", "merge.kco.name", "kco snapshot files"]);
    r.git(&["config", "merge.kco.driver", &driver]);
}

/// Three FileStream sources, each feeding a topic of its own, and a sink reading the three,
/// whose every record is counted in the file it writes.
pub struct Pipes<'a> {
    pub connect: &'a Connect,
    pub sources: Vec<String>,
    pub sink: String,
    pub topics: Vec<String>,
    pub out: PathBuf,
    /// The connectors, deleted when the pipes are dropped.
    pub guards: Vec<ConnectorGuard>,
}

impl<'a> Pipes<'a> {
    /// The pipes on `connect`, named after `prefix`, their files under `root`, with 20 lines
    /// fed to each source; and the flow of records they carry.
    pub fn start(connect: &'a Connect, root: &Path, prefix: &str) -> (Pipes<'a>, Flow) {
        let topics: Vec<String> = (0..3)
            .map(|i| unique_name(&format!("{prefix}-t{i}")))
            .collect();
        let mut flow = Flow {
            inputs: (0..3).map(|i| root.join(format!("in{i}.txt"))).collect(),
            lines: [0; 3],
            times: Default::default(),
        };
        flow.feed(20);
        let mut guards = Vec::new();
        let mut sources = Vec::new();
        for (i, (input, topic)) in flow.inputs.iter().zip(&topics).enumerate() {
            let name = unique_name(&format!("{prefix}-src{i}"));
            guards.push(connect.create(&name, file_source_config(input, topic)));
            sources.push(name);
        }
        let out = root.join("sink.out");
        let sink = unique_name(&format!("{prefix}-sink"));
        guards.push(connect.create(&sink, file_sink_config(&out, &topics.join(","))));
        let pipes = Pipes {
            connect,
            sources,
            sink,
            topics,
            out,
            guards,
        };
        (pipes, flow)
    }
}

impl Pipes<'_> {
    /// The sources have read their whole files, the sink is at the flow's end, and its file
    /// holds each record as many times as the flow says, and nothing else.
    pub fn check(&self, flow: &Flow, what: &str) {
        for (source, input) in self.sources.iter().zip(&flow.inputs) {
            let len = std::fs::metadata(input).unwrap().len() as i64;
            self.connect
                .wait_offsets(source, what, |o| source_position(o, input) == Some(len));
        }
        wait_live(self.connect, &self.sink, &self.topics, flow.end(), what);
        let seen = written(&self.out);
        let got: Vec<Vec<usize>> = (0..3)
            .map(|i| {
                (1..=flow.lines[i])
                    .map(|n| seen.get(&format!("t{i}-{n}")).copied().unwrap_or(0))
                    .collect()
            })
            .collect();
        assert_eq!(
            got, flow.times,
            "{what}: how many times the sink wrote each record of t0, t1, t2"
        );
        let total: usize = seen.values().sum();
        let want: usize = flow.times.iter().flatten().sum();
        assert_eq!(total, want, "{what}: no other line in the sink's file");
    }
}
