//! What users read, pinned by insta snapshots: every command's text output (and `diff`'s
//! markdown), with stdout, stderr and the exit code in one snapshot per run. The files live in
//! `tests/cli/snapshots/`; docs/testing.md says how to review and update them.
//!
//! Each test runs the binary in a temp dir through the hermetic runner (`support::run`: a
//! cleared environment, a temp `HOME`, `NO_COLOR`, stdin not a terminal, a fixed clock), with
//! `--color never`, against the in-process fake Connect, used only through its public API.
//! Unstable parts are replaced before comparing: the temp dir by `[TMP]`, ports of 127.0.0.1
//! by `[PORT]`, durations by `[DURATION]` and git commit ids by `[COMMIT]`. Times need no
//! filter: the runner fixes the clock, so backup directories read `20261201T020000Z`.
//! Trailing spaces are cut from every line.

mod apply;
mod diff;
mod diff_base;
mod errors;
mod help;
mod history;
mod json;
mod ls;
mod offline;
mod snapshot;

use crate::fake_connect::FakeConnect;
use crate::support::env::TestEnv;
use crate::support::run::Run;

pub use crate::support::data::{sink_offsets, source_offsets, SINK, SOURCE};
pub use crate::support::fakes::{billing_and_orders, billing_in};

/// A test environment ([`TestEnv`]: a temp dir, `--color never`) whose runs are rendered as
/// the text of a snapshot.
pub struct Env(TestEnv);

impl std::ops::Deref for Env {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        &self.0
    }
}

impl Env {
    pub fn new() -> Env {
        Env(TestEnv::new().args(&["--color", "never"]))
    }

    /// Runs `kco --color never <args>` here; returns exit code, stdout and stderr as one text.
    pub fn text(&self, args: &[&str]) -> String {
        self.render(self.kco(args))
    }

    /// [`Env::text`] of `kco --url <fake> --cluster a <args>`.
    pub fn text_on(&self, fake: &FakeConnect, args: &[&str]) -> String {
        self.render(self.on(fake, args))
    }

    fn render(&self, r: Run) -> String {
        let text = format!(
            "exit: {}\n[stdout]\n{}[stderr]\n{}",
            r.code,
            section(&r.stdout),
            section(&r.stderr),
        );
        self.scrub(text)
    }

    /// Runs `kco snapshot` against the fake and panics unless it succeeds (test setup).
    pub fn snapshot(&self, fake: &FakeConnect) {
        let out = self.text_on(fake, &["snapshot"]);
        assert!(out.starts_with("exit: 0\n"), "{out}");
    }

    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path().join(file)).unwrap()
    }

    pub fn write(&self, file: &str, text: &str) {
        let path = self.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Replaces `from` by `to` in `file`, which must contain it.
    pub fn edit(&self, file: &str, from: &str, to: &str) {
        let text = self.read(file);
        assert!(text.contains(from), "{file} lacks {from:?}:\n{text}");
        self.write(file, &text.replace(from, to));
    }

    /// The temp dir as `[TMP]` (also its canonical form, as git reports it).
    fn scrub(&self, text: String) -> String {
        let mut text = text;
        let canonical = self.path().canonicalize().unwrap();
        for p in [canonical.as_path(), self.path()] {
            text = text.replace(p.to_str().unwrap(), "[TMP]");
        }
        text
    }
}

/// A stream's text with trailing spaces cut (clap pads blank help lines; editors strip them),
/// ending in a newline; one that the program did not end is marked.
fn section(text: &str) -> String {
    let mut out: String = text
        .lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect();
    if !text.is_empty() && !text.ends_with('\n') {
        out.push_str("(no newline at end)\n");
    }
    out
}

/// Settings for every output snapshot: where the files go, and filters for what varies.
pub fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    s.add_filter(r"\(\d+(\.\d+)? ?(ns|µs|us|ms|s)\)", "([DURATION])");
    // Git commit ids, full or abbreviated in parentheses (`HEAD~1` (a8c42255a56b)).
    s.add_filter(r"\b[0-9a-f]{40}\b", "[COMMIT]");
    s.add_filter(r"\([0-9a-f]{7,39}\)", "([COMMIT])");
    // The process and the machine that wrote a journal.
    s.add_filter(r"pid \d+ on [^ ,)]+", "pid [PID] on [HOST]");
    s
}

/// `snap!("name", output)`: an insta snapshot `output_<name>.snap` with [`settings`].
macro_rules! snap {
    ($name:expr, $output:expr) => {{
        let output: String = $output;
        $crate::output_snapshots::settings()
            .bind(|| insta::assert_snapshot!(concat!("output_", $name), output));
    }};
}
pub(crate) use snap;
