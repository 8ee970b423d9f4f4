//! Where output goes: data to stdout, status and errors to stderr, colors when wanted.

use std::io::{IsTerminal, Write};

use owo_colors::OwoColorize;
use serde::Serialize;

use super::{ColorChoice, GlobalArgs, OutputFormat};
use crate::error::Error;

/// Prints for one run of the binary.
#[derive(Debug, Clone)]
pub struct Printer {
    pub format: OutputFormat,
    pub color: bool,
    pub quiet: bool,
    pub verbose: bool,
}

/// Kinds of colored text.
#[derive(Debug, Clone, Copy)]
pub enum Style {
    Good,
    Bad,
    Warn,
    Dim,
    Bold,
}

impl Printer {
    pub fn new(g: &GlobalArgs) -> Self {
        let color = match g.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
                    && std::io::stdout().is_terminal()
            }
        };
        Printer {
            format: g.output,
            color,
            quiet: g.quiet,
            verbose: g.verbose,
        }
    }

    /// Whether machine-readable output was asked for.
    pub fn is_structured(&self) -> bool {
        matches!(self.format, OutputFormat::Json | OutputFormat::Yaml)
    }

    /// Writes text to stdout; a closed pipe ends the process quietly.
    pub fn out(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(text.as_bytes())
            .and_then(|_| stdout.flush())
        {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }

    /// Writes a line to stdout.
    pub fn line(&self, text: &str) {
        self.out(&format!("{text}\n"));
    }

    /// A status line on stderr, unless `--quiet`.
    pub fn status(&self, text: &str) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    /// A detail line on stderr, with `--verbose` only.
    pub fn detail(&self, text: &str) {
        if self.verbose && !self.quiet {
            eprintln!("{}", self.paint(Style::Dim, text));
        }
    }

    /// A warning on stderr (even with `--quiet`).
    pub fn warn(&self, text: &str) {
        eprintln!("{} {text}", self.paint(Style::Warn, "warning:"));
    }

    /// A report as JSON or YAML on stdout, per `--output`.
    pub fn structured<T: Serialize>(&self, value: &T) {
        let text = match self.format {
            OutputFormat::Yaml => serde_yaml::to_string(value).expect("reports serialize"),
            _ => {
                let mut s = serde_json::to_string_pretty(value).expect("reports serialize");
                s.push('\n');
                s
            }
        };
        self.out(&text);
    }

    pub fn paint(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        match style {
            Style::Good => text.green().to_string(),
            Style::Bad => text.red().to_string(),
            Style::Warn => text.yellow().to_string(),
            Style::Dim => text.dimmed().to_string(),
            Style::Bold => text.bold().to_string(),
        }
    }

    /// Reports an error: `error:`, the cause chain, and a `hint:`. In JSON/YAML mode the error
    /// is also a document on stdout.
    pub fn error(&self, e: &Error) {
        let mut causes = Vec::new();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            let text = s.to_string();
            if !e.to_string().contains(&text) {
                causes.push(text);
            }
            src = s.source();
        }
        let hint = e.hint();
        if self.is_structured() {
            #[derive(Serialize)]
            struct ErrorDoc<'a> {
                error: ErrorBody<'a>,
            }
            #[derive(Serialize)]
            struct ErrorBody<'a> {
                message: String,
                causes: &'a [String],
                #[serde(skip_serializing_if = "Option::is_none")]
                hint: Option<&'a str>,
                exit_code: u8,
            }
            self.structured(&ErrorDoc {
                error: ErrorBody {
                    message: e.to_string(),
                    causes: &causes,
                    hint: hint.as_deref(),
                    exit_code: e.exit_code(),
                },
            });
        }
        let color = self.color && std::io::stderr().is_terminal();
        let label = if color {
            "error:".red().bold().to_string()
        } else {
            "error:".to_string()
        };
        eprintln!("{label} {e}");
        for c in causes {
            eprintln!("  caused by: {c}");
        }
        if let Some(h) = hint {
            let label = if color {
                "hint:".cyan().to_string()
            } else {
                "hint:".to_string()
            };
            eprintln!("{label} {h}");
        }
    }
}
