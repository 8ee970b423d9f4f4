//! One test's environment: the directory kco runs in (a temp directory of its own, or one the
//! test made: a repository, a clone), the arguments and variables every run of the test
//! shares, its `kco.yaml`, and kco run there through the one runner ([`Kco`]): `let r =
//! TestEnv::new().args(&["--cluster", "a"]).kco(&["diff"]);` gives that run's [`Run`].

use std::path::{Path, PathBuf};

use kco::fake::FakeConnect;

use super::run::{Kco, Run};

#[derive(Default)]
pub struct TestEnv {
    dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
    args: Vec<String>,
    vars: Vec<(String, String)>,
    real_clock: bool,
    program: Option<PathBuf>,
}

impl TestEnv {
    /// A fresh temp directory, removed with the environment.
    pub fn new() -> TestEnv {
        let temp = tempfile::tempdir().unwrap();
        let mut env = TestEnv::at(temp.path());
        env._temp = Some(temp);
        env
    }

    /// `dir`, which the test owns.
    pub fn at(dir: impl AsRef<Path>) -> TestEnv {
        TestEnv {
            dir: dir.as_ref().to_path_buf(),
            ..TestEnv::default()
        }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `args` before every run's own (`--cluster a`).
    pub fn args(mut self, args: &[&str]) -> TestEnv {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Variables in every run's environment.
    pub fn envs(mut self, vars: &[(&str, &str)]) -> TestEnv {
        self.vars
            .extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// Every run on the real clock ([`Kco::real_clock`]).
    pub fn real_clock(mut self) -> TestEnv {
        self.real_clock = true;
        self
    }

    /// `program` instead of the kco binary ([`Kco::program`]).
    pub fn program(mut self, program: impl AsRef<Path>) -> TestEnv {
        self.program = Some(program.as_ref().to_path_buf());
        self
    }

    /// Writes `kco.yaml`.
    pub fn config(&self, text: impl AsRef<str>) {
        std::fs::write(self.path().join("kco.yaml"), text.as_ref()).unwrap();
    }

    /// A run being set up here, the environment's arguments given (for stdin, a spawn, more
    /// arguments or variables).
    pub fn cmd(&self) -> Kco {
        let cmd = match &self.program {
            Some(program) => Kco::program(program, self.path()),
            None => Kco::new(self.path()),
        };
        let cmd = cmd.args(&self.args);
        let cmd = self.vars.iter().fold(cmd, |cmd, (k, v)| cmd.env(k, v));
        match self.real_clock {
            true => cmd.real_clock(),
            false => cmd,
        }
    }

    /// Runs `kco <the environment's arguments> <args>` here to its end.
    pub fn kco(&self, args: &[&str]) -> Run {
        self.cmd().args(args).run()
    }

    /// [`TestEnv::kco`] against `fake`: `--url <fake>` first, and `--cluster a` unless the
    /// environment's arguments name a cluster.
    pub fn on(&self, fake: &FakeConnect, args: &[&str]) -> Run {
        let cmd = self.cmd().args(["--url", &fake.url()]);
        let cmd = match self.args.iter().any(|a| a == "--cluster") {
            true => cmd,
            false => cmd.args(["--cluster", "a"]),
        };
        cmd.args(args).run()
    }
}
