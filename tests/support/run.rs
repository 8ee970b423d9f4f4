//! The one runner of the `kco` binary in tests: a cleared environment (only `PATH` is kept),
//! `HOME` an empty temp directory of its own, `NO_COLOR=1`, `TERM=dumb`, stdin empty unless
//! the test gives some, and the clock fixed at [`FIXED_NOW`] (kco's test-only `KCO_NOW`).
//! Nothing of the developer's environment (`KCO_*`, `HOME`, git config) reaches kco.
//!
//! ```ignore
//! let r = Kco::new(dir).on(&fake).args(["diff", "-o", "json"]).run();
//! assert_eq!(r.code, 2, "{}", r.all());
//! ```

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use kco::fake::FakeConnect;

/// The time kco sees in every test run (snapshots' `capturedAt`, backup directory names,
/// journal and lock times).
pub const FIXED_NOW: &str = "2026-12-01T02:00:00Z";

/// The environment of every run: cleared, then `PATH`, `HOME` = `home`, `NO_COLOR=1`,
/// `TERM=dumb` and the clock fixed at [`FIXED_NOW`]. For [`Kco`], and for the tests that run
/// a script calling kco (the recipes, the getting-started page).
pub fn hermetic<'a>(cmd: &'a mut Command, home: &Path) -> &'a mut Command {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("KCO_NOW", FIXED_NOW)
}

/// One run of kco being set up: arguments, extra environment, stdin.
pub struct Kco {
    cmd: Command,
    home: tempfile::TempDir,
    stdin: Option<Vec<u8>>,
}

/// What a finished run gave: its exit code (-1 when a signal ended it), stdout and stderr.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn of(out: &Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// stdout then stderr, as one text.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// The exit code, and stdout then stderr as one text.
    pub fn code_and_text(&self) -> (i32, String) {
        (self.code, self.all())
    }

    /// stdout, the run asserted to have succeeded (`what`, its code, stdout and stderr, when
    /// not).
    pub fn success(&self, what: &str) -> String {
        assert_eq!(
            self.code, 0,
            "{what} failed\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self.stdout.clone()
    }

    /// Asserts the exit code is `code` and stderr holds each of `parts` (the test fails showing
    /// stdout and stderr when not).
    pub fn assert_stderr(&self, code: i32, parts: &[&str]) {
        assert_eq!(self.code, code, "{}\n{}", self.stdout, self.stderr);
        for part in parts {
            assert!(self.stderr.contains(part), "{part}:\n{}", self.stderr);
        }
    }

    /// The exit code, stdout and stderr.
    pub fn parts(self) -> (i32, String, String) {
        (self.code, self.stdout, self.stderr)
    }
}

/// stdout then stderr, as [`Run::all`] gives them.
impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.stdout, self.stderr)
    }
}

impl Kco {
    /// kco in `dir`, hermetic (see the module).
    pub fn new(dir: impl AsRef<Path>) -> Kco {
        Kco::program(env!("CARGO_BIN_EXE_kco"), dir)
    }

    /// `program` in `dir` instead of the kco binary, as hermetic: a wrapper that runs kco
    /// elsewhere (in the release image).
    pub fn program(program: impl AsRef<OsStr>, dir: impl AsRef<Path>) -> Kco {
        let home = tempfile::Builder::new()
            .prefix("kco-home-")
            .tempdir()
            .unwrap();
        let mut cmd = Command::new(program);
        hermetic(&mut cmd, home.path())
            .current_dir(dir.as_ref())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Kco {
            cmd,
            home,
            stdin: None,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Kco {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Kco
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// `--url <fake> --cluster a`: the fake as cluster `a`.
    pub fn on(self, fake: &FakeConnect) -> Kco {
        self.args(["--url", &fake.url(), "--cluster", "a"])
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Kco {
        self.cmd.env(key, value);
        self
    }

    pub fn envs<'a>(mut self, vars: impl IntoIterator<Item = &'a (&'a str, &'a str)>) -> Kco {
        self.cmd.envs(vars.into_iter().copied());
        self
    }

    /// Takes a variable the runner sets away again (`NO_COLOR`, to test colors).
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Kco {
        self.cmd.env_remove(key);
        self
    }

    /// The real clock instead of [`FIXED_NOW`], for a test of the time kco takes.
    pub fn real_clock(self) -> Kco {
        self.env_remove("KCO_NOW")
    }

    /// `text` on stdin (a pipe, then closed).
    pub fn stdin(mut self, text: &str) -> Kco {
        self.cmd.stdin(Stdio::piped());
        self.stdin = Some(text.as_bytes().to_vec());
        self
    }

    /// stdout and stderr to nowhere, for a spawned run nobody reads (a pipe nobody reads
    /// would block kco once full).
    pub fn discard_output(mut self) -> Kco {
        self.cmd.stdout(Stdio::null()).stderr(Stdio::null());
        self
    }

    /// stdout to nowhere, for a spawned run whose stderr alone is read.
    pub fn discard_stdout(mut self) -> Kco {
        self.cmd.stdout(Stdio::null());
        self
    }

    /// Runs kco to its end.
    pub fn run(self) -> Run {
        Run::of(&self.output())
    }

    /// Runs kco to its end; the raw output.
    pub fn output(self) -> Output {
        self.spawn().wait()
    }

    /// Starts kco and returns at once, for a test that kills or interrupts it.
    pub fn spawn(mut self) -> Running {
        let mut child = self
            .cmd
            .spawn()
            .unwrap_or_else(|e| panic!("start {:?}: {e}", self.cmd.get_program()));
        if let Some(bytes) = self.stdin.take() {
            // kco may exit before reading it all (a usage error): not the test's concern here.
            let _ = child.stdin.take().unwrap().write_all(&bytes);
        }
        Running {
            child,
            _home: self.home,
        }
    }
}

/// A kco process under way (its `HOME` lives as long as it does). Derefs to its [`Child`]
/// for `id`, `kill`, `try_wait` and its pipes.
pub struct Running {
    child: Child,
    _home: tempfile::TempDir,
}

impl Running {
    /// Waits for the end; the raw output (what was not taken of the pipes).
    pub fn wait(self) -> Output {
        self.child.wait_with_output().unwrap()
    }

    /// Waits for the end; exit code, stdout and stderr.
    pub fn finish(self) -> Run {
        Run::of(&self.wait())
    }

    /// Sends SIGINT, as Ctrl-C in a terminal would.
    pub fn interrupt(&self) {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -INT {}", self.child.id());
    }

    /// SIGKILL, then waits for the end.
    pub fn kill9(mut self) {
        // It may have ended already: then there is nothing to kill.
        let _ = self.child.kill();
        self.child.wait().unwrap();
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

/// SIGKILLs `child` (a `kco -v` with its stderr piped) as soon as its stderr shows `marker`
/// (a step of its transaction, e.g. `: stop ok`), and waits for its end; whether the marker
/// was seen (within 120 s; killed all the same when not).
pub fn kill_when_seen(child: &mut std::process::Child, marker: &str) -> bool {
    use std::io::{BufRead, BufReader};
    let stderr = child.stderr.take().expect("kco's stderr piped");
    let (tx, rx) = std::sync::mpsc::channel();
    let marker = marker.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(&marker) {
                let _ = tx.send(());
                return;
            }
        }
    });
    let seen = rx.recv_timeout(std::time::Duration::from_secs(120)).is_ok();
    // It may have ended already: then there is nothing to kill.
    let _ = child.kill();
    child.wait().unwrap();
    seen
}

/// Polls `f` every 20 ms until it holds; fails the test after 20 s (a wait for a step of a
/// running kco, not a timed assertion).
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !f() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Text whose long lines kco wrapped under a column (`kco doctor`'s, at 18) with each such
/// line whole again: a line indented that far and not starting a `fix: ` joins the one
/// before, as it was cut at a space.
pub fn unwrapped(text: &str) -> String {
    let indent = " ".repeat(18);
    let mut out = String::new();
    for line in text.lines() {
        match line.strip_prefix(&indent) {
            Some(rest) if !rest.starts_with("fix: ") && !out.is_empty() => {
                out.pop();
                out.push(' ');
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}
