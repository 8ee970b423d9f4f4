//! Where output goes: data to stdout, status and errors to stderr, colors when wanted.
//!
//! Each stream decides its own colors: `--color auto` colors a stream only when it is a
//! terminal and neither `NO_COLOR` nor `TERM=dumb` is set; `always` and `never` win over both.
//! Stdout goes through [`write_or_stop`]: a reader that went away (a closed pipe) silences the
//! rest of the output without ending the process, so the exit code stays the command's.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use owo_colors::OwoColorize;
use serde::Serialize;

use super::{ColorChoice, GlobalArgs, OutputFormat};

/// Prints for one run of the binary.
#[derive(Debug, Clone)]
pub struct Printer {
    pub format: OutputFormat,
    /// Colors on stdout.
    pub color: bool,
    /// Colors on stderr.
    pub err_color: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// The width long lines of a report fold at ([`Printer::fold`]): the terminal's, when
    /// stdout is one, else `COLUMNS`; none (one line per item, for grep and CI logs) else.
    /// Status lines on stderr fold at it too.
    pub width: Option<usize>,
}

/// Kinds of colored text.
#[derive(Debug, Clone, Copy)]
pub enum Style {
    Good,
    Bad,
    Warn,
    Dim,
    Bold,
    /// The `error:` label.
    Error,
    /// The `hint:` label.
    Hint,
}

/// What `--color auto` looks at, read once from the process.
#[derive(Debug, Clone, Default)]
pub struct ColorEnv {
    pub no_color: Option<OsString>,
    pub term: Option<OsString>,
}

impl ColorEnv {
    pub fn from_process() -> Self {
        ColorEnv {
            no_color: std::env::var_os("NO_COLOR"),
            term: std::env::var_os("TERM"),
        }
    }
}

/// Whether to color a stream: an explicit choice wins; `auto` wants a terminal, no (non-empty)
/// `NO_COLOR` and a `TERM` other than `dumb`.
pub fn use_color(choice: ColorChoice, env: &ColorEnv, is_terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            env.no_color.as_ref().is_none_or(|v| v.is_empty())
                && env.term.as_ref().is_none_or(|t| t != "dumb")
                && is_terminal
        }
    }
}

/// Set once stdout's reader has gone away; later output is dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` unless `closed`; a broken pipe sets `closed` and is not an error. Other write
/// errors are returned.
pub fn write_or_stop(out: &mut dyn Write, closed: &AtomicBool, text: &str) -> std::io::Result<()> {
    if closed.load(Ordering::Relaxed) {
        return Ok(());
    }
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            closed.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// Narrower than this, folding helps nobody: lines are left as they are.
const MIN_FOLD_WIDTH: usize = 40;

impl Printer {
    pub fn new(g: &GlobalArgs) -> Self {
        let stdout_tty = std::io::stdout().is_terminal();
        let terminal = stdout_tty
            .then(|| terminal_size::terminal_size_of(std::io::stdout()))
            .flatten()
            .map(|(w, _)| usize::from(w.0));
        let columns = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok());
        Printer {
            width: terminal.or(columns).filter(|w| *w >= MIN_FOLD_WIDTH),
            ..Self::for_streams(
                g,
                &ColorEnv::from_process(),
                stdout_tty,
                std::io::stderr().is_terminal(),
            )
        }
    }

    /// `text` with each line longer than [`Printer::width`] folded there (none: as it is).
    pub fn fold(&self, text: &str) -> String {
        match self.width {
            Some(w) => crate::text::fold(text, w),
            None => text.to_string(),
        }
    }

    /// A printer for streams that are (or are not) terminals, in a given environment.
    pub fn for_streams(g: &GlobalArgs, env: &ColorEnv, stdout_tty: bool, stderr_tty: bool) -> Self {
        Printer {
            format: g.output,
            color: use_color(g.color, env, stdout_tty),
            err_color: use_color(g.color, env, stderr_tty),
            quiet: g.quiet,
            verbose: g.verbose,
            width: None,
        }
    }

    /// Whether machine-readable output was asked for.
    pub fn is_structured(&self) -> bool {
        matches!(self.format, OutputFormat::Json | OutputFormat::Yaml)
    }

    /// Writes text to stdout; once the reader has gone away, nothing more is written and the
    /// run goes on to its own exit code.
    pub fn out(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        // Other stdout errors (a full disk) have nowhere better to go than the exit code of a
        // run that already printed; they are ignored as before.
        let _ = write_or_stop(&mut stdout, &STDOUT_CLOSED, text);
    }

    /// Writes a line to stdout, folded at [`Printer::width`].
    pub fn line(&self, text: &str) {
        self.out(&format!("{}\n", self.fold(text)));
    }

    /// A status line on stderr, unless `--quiet`; folded as a report's lines are.
    pub fn status(&self, text: &str) {
        if !self.quiet {
            eprintln!("{}", self.fold(text));
        }
    }

    /// A detail line on stderr, with `--verbose` only.
    pub fn detail(&self, text: &str) {
        if self.verbose && !self.quiet {
            eprintln!("{}", self.paint_err(Style::Dim, text));
        }
    }

    /// A warning on stderr (even with `--quiet`).
    pub fn warn(&self, text: &str) {
        eprintln!("{} {text}", self.paint_err(Style::Warn, "warning:"));
    }

    /// A report as JSON or YAML on stdout, per `--output`, written as it is serialized: a
    /// wide connector's report is tens of megabytes of JSON, never held whole.
    pub fn structured<T: Serialize>(&self, value: &T) {
        let mut out = Chunks {
            printer: self,
            buf: Vec::with_capacity(CHUNK),
        };
        match self.format {
            OutputFormat::Yaml => {
                serde_yaml::to_writer(&mut out, value).expect("reports serialize")
            }
            _ => {
                serde_json::to_writer_pretty(&mut out, value).expect("reports serialize");
                out.buf.push(b'\n');
            }
        }
        out.pass_on(true);
    }

    /// Text for stdout, colored when stdout wants colors.
    pub fn paint(&self, style: Style, text: &str) -> String {
        paint(self.color, style, text)
    }

    /// Text for stderr, colored when stderr wants colors.
    pub fn paint_err(&self, style: Style, text: &str) -> String {
        paint(self.err_color, style, text)
    }
}

/// Above this many bytes, structured output is handed to stdout.
const CHUNK: usize = 1 << 16;

/// Hands serialized output to [`Printer::out`] a chunk at a time, each cut after a whole
/// character.
struct Chunks<'p> {
    printer: &'p Printer,
    buf: Vec<u8>,
}

impl Chunks<'_> {
    fn pass_on(&mut self, all: bool) {
        let whole = match std::str::from_utf8(&self.buf) {
            Ok(text) => text.len(),
            Err(e) => e.valid_up_to(),
        };
        if whole > 0 {
            let text = std::str::from_utf8(&self.buf[..whole]).expect("checked");
            self.printer.out(text);
            self.buf.drain(..whole);
        }
        if all && !self.buf.is_empty() {
            self.printer.out(&String::from_utf8_lossy(&self.buf));
            self.buf.clear();
        }
    }
}

impl Write for Chunks<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= CHUNK {
            self.pass_on(false);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn paint(color: bool, style: Style, text: &str) -> String {
    if !color {
        return text.to_string();
    }
    match style {
        Style::Good => text.green().to_string(),
        Style::Bad => text.red().to_string(),
        Style::Warn => text.yellow().to_string(),
        Style::Dim => text.dimmed().to_string(),
        Style::Bold => text.bold().to_string(),
        Style::Error => text.red().bold().to_string(),
        Style::Hint => text.cyan().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(no_color: Option<&str>, term: Option<&str>) -> ColorEnv {
        ColorEnv {
            no_color: no_color.map(Into::into),
            term: term.map(Into::into),
        }
    }

    #[test]
    fn auto_colors_a_terminal_unless_no_color_or_dumb() {
        assert!(use_color(
            ColorChoice::Auto,
            &env(None, Some("xterm")),
            true
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            &env(None, Some("xterm")),
            false
        ));
        assert!(!use_color(ColorChoice::Auto, &env(Some("1"), None), true));
        assert!(use_color(ColorChoice::Auto, &env(Some(""), None), true));
        assert!(!use_color(
            ColorChoice::Auto,
            &env(None, Some("dumb")),
            true
        ));
    }

    #[test]
    fn an_explicit_choice_wins() {
        let hostile = env(Some("1"), Some("dumb"));
        assert!(use_color(ColorChoice::Always, &hostile, false));
        assert!(!use_color(ColorChoice::Never, &env(None, None), true));
    }

    fn global(color: ColorChoice) -> GlobalArgs {
        use clap::Parser;
        let mut g = super::super::Cli::parse_from(["kco", "validate"]).global;
        g.color = color;
        g
    }

    #[test]
    fn each_stream_is_decided_from_itself() {
        let e = env(None, Some("xterm"));
        let p = Printer::for_streams(&global(ColorChoice::Auto), &e, false, true);
        assert!(!p.color && p.err_color, "stdout piped, stderr a terminal");
        assert_eq!(p.paint(Style::Bad, "x"), "x");
        assert_ne!(p.paint_err(Style::Bad, "x"), "x");
        let p = Printer::for_streams(&global(ColorChoice::Auto), &e, true, false);
        assert!(p.color && !p.err_color, "stdout a terminal, stderr piped");
    }

    /// A reader that left after `room` bytes.
    struct ClosedAfter {
        room: usize,
        got: Vec<u8>,
    }

    impl Write for ClosedAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.got.len() + buf.len() > self.room {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.got.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_broken_pipe_stops_the_output_quietly() {
        let closed = AtomicBool::new(false);
        let mut w = ClosedAfter {
            room: 6,
            got: Vec::new(),
        };
        write_or_stop(&mut w, &closed, "one\n").unwrap();
        write_or_stop(&mut w, &closed, "two\n").unwrap();
        assert!(closed.load(Ordering::Relaxed));
        w.room = 100;
        write_or_stop(&mut w, &closed, "three\n").unwrap();
        assert_eq!(w.got, b"one\n", "nothing is written after the pipe closed");
    }

    #[test]
    fn other_write_errors_are_returned() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let closed = AtomicBool::new(false);
        assert!(write_or_stop(&mut Full, &closed, "x").is_err());
        assert!(!closed.load(Ordering::Relaxed));
    }
}
