//! The progress bar on stderr: how many connectors of a snapshot, diff or apply are done, and
//! which are in flight. Drawn only where someone watches it: stderr a terminal (not
//! `TERM=dumb`), text output (never with JSON or YAML), no `-q`, no `-v` (whose lines it would
//! break). It appears once a run has lasted [`DELAY`], so a quick run prints nothing, and it
//! is cleared when the run ends. The engines only call an [`Observer`]; the drawing is here.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::apply_render::StepPrinter;
use super::{OutputFormat, Printer};
use crate::engine::apply::OperationObserver;
use crate::engine::progress::{Both, Observer};

/// How long a run goes before its bar appears.
pub const DELAY: Duration = Duration::from_millis(300);

/// Whether to draw a bar, from the settings and the stream.
pub fn wanted(
    format: OutputFormat,
    quiet: bool,
    verbose: bool,
    stderr_tty: bool,
    term: Option<&OsStr>,
) -> bool {
    matches!(format, OutputFormat::Text | OutputFormat::Markdown)
        && !quiet
        && !verbose
        && stderr_tty
        && term.is_none_or(|t| t != "dumb")
}

/// A bar for one run; an [`Observer`] for the engines. Draws nothing unless [`wanted`].
pub struct Bar {
    bar: Option<ProgressBar>,
    since: Instant,
    visible: AtomicBool,
    /// Connectors in flight, with how many runs of each (a name may be read twice).
    in_flight: Mutex<BTreeMap<String, usize>>,
}

impl Bar {
    /// A bar labelled `verb` (`snapshot`, `diff`, `apply`) for this process's stderr.
    pub fn new(printer: &Printer, verb: &str) -> Bar {
        let term = std::env::var_os("TERM");
        let on = wanted(
            printer.format,
            printer.quiet,
            printer.verbose,
            std::io::stderr().is_terminal(),
            term.as_deref(),
        );
        Bar::drawn(on.then(|| verb.to_string()))
    }

    fn drawn(verb: Option<String>) -> Bar {
        let bar = verb.map(|verb| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            bar.set_style(style(0));
            bar.set_prefix(verb);
            bar
        });
        Bar {
            bar,
            since: Instant::now(),
            visible: AtomicBool::new(false),
            in_flight: Mutex::new(BTreeMap::new()),
        }
    }

    /// The message: the first connector in flight, and how many more.
    fn message(in_flight: &BTreeMap<String, usize>) -> String {
        let mut names = in_flight.keys();
        match (names.next(), in_flight.len()) {
            (None, _) => String::new(),
            (Some(first), 1) => first.clone(),
            (Some(first), n) => format!("{first} (+{} more)", n - 1),
        }
    }

    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, usize>)) {
        let Some(bar) = &self.bar else { return };
        let mut in_flight = self.in_flight.lock().expect("no panic while updating");
        change(&mut in_flight);
        bar.set_message(Bar::message(&in_flight));
        if !self.visible.load(Ordering::Relaxed) && self.since.elapsed() >= DELAY {
            self.visible.store(true, Ordering::Relaxed);
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

/// The bar's look: `[=====>    ] 3/12 connectors`, the noun agreeing with the total.
fn style(total: usize) -> ProgressStyle {
    let of = crate::text::count(total, "connector");
    ProgressStyle::with_template(&format!(
        "{{prefix}} [{{bar:30}}] {{pos}}/{of}  {{wide_msg}}"
    ))
    .expect("a valid template")
    .progress_chars("=> ")
}

/// An operation's bar counts connectors; its steps are not drawn.
impl OperationObserver for Bar {}

impl Observer for Bar {
    fn total(&self, connectors: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(connectors as u64);
            bar.set_style(style(connectors));
        }
    }

    fn started(&self, connector: &str) {
        self.update(|m| *m.entry(connector.to_string()).or_default() += 1);
    }

    fn finished(&self, connector: &str) {
        self.update(|m| {
            if let Some(n) = m.get_mut(connector) {
                *n -= 1;
                if *n == 0 {
                    m.remove(connector);
                }
            }
        });
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// An apply's progress: each step for `-v`, the bar otherwise.
pub type ApplyProgress<'a> = Both<Bar, StepPrinter<'a>>;

/// The progress of an apply printed by `printer`.
pub fn apply_progress(printer: &Printer) -> ApplyProgress<'_> {
    Both(Bar::new(printer, "apply"), StepPrinter(printer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_only_for_people_watching_text_on_a_terminal() {
        use OutputFormat::*;
        let xterm = Some(OsStr::new("xterm-256color"));
        assert!(wanted(Text, false, false, true, xterm));
        assert!(wanted(Markdown, false, false, true, None));
        assert!(
            !wanted(Text, false, false, false, xterm),
            "stderr not a terminal"
        );
        assert!(!wanted(Text, true, false, true, xterm), "-q");
        assert!(
            !wanted(Text, false, true, true, xterm),
            "-v prints its own lines"
        );
        assert!(!wanted(Json, false, false, true, xterm), "JSON output");
        assert!(!wanted(Yaml, false, false, true, xterm), "YAML output");
        assert!(!wanted(Text, false, false, true, Some(OsStr::new("dumb"))));
    }

    #[test]
    fn counts_and_names_the_connectors_in_flight() {
        let bar = Bar::drawn(Some("snapshot".into()));
        let pb = bar.bar.clone().unwrap();
        bar.total(3);
        bar.started("orders");
        bar.started("billing");
        assert_eq!(pb.message(), "billing (+1 more)");
        bar.finished("billing");
        assert_eq!((pb.position(), pb.length()), (1, Some(3)));
        assert_eq!(pb.message(), "orders");
        bar.finished("orders");
        assert_eq!(pb.message(), "");
        assert_eq!(pb.position(), 2);
        assert!(
            !bar.visible.load(Ordering::Relaxed),
            "a quick run shows nothing"
        );
    }

    #[test]
    fn appears_once_the_run_lasts() {
        let mut bar = Bar::drawn(Some("diff".into()));
        bar.since = Instant::now() - DELAY;
        bar.started("orders");
        assert!(bar.visible.load(Ordering::Relaxed));
        let off = Bar::drawn(None);
        off.total(2);
        off.started("orders");
        off.finished("orders");
        assert!(off.bar.is_none() && !off.visible.load(Ordering::Relaxed));
    }
}
