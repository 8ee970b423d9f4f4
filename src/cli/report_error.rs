//! The one place errors are printed. Text: `error:` and the message, one `caused by:` line per
//! cause not already in the message, then `hint:` when there is a next step; always on stderr.
//! With `--output json` (or `yaml`) the error is also a document on stdout, in place of the
//! report the command would have printed: stdout holds exactly one document either way.

use serde::Serialize;

use super::output::{Printer, Style};
use crate::error::{Error, ErrorKind};

/// An error as `--output json` prints it: `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorDocument {
    pub error: ErrorBody,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
    /// The causes below the message, outermost first.
    pub causes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    pub exit_code: u8,
}

impl ErrorBody {
    pub fn of(e: &Error) -> Self {
        let message = e.to_string();
        let mut causes = Vec::new();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            let text = s.to_string();
            if !message.contains(&text) {
                causes.push(text);
            }
            src = s.source();
        }
        ErrorBody {
            kind: e.kind(),
            message,
            causes,
            hint: e.hint(),
            exit_code: e.exit_code(),
        }
    }
}

/// The text of an error: `error:` lines, causes, hint; `paint` colors the labels.
pub fn error_text(paint: &dyn Fn(Style, &str) -> String, body: &ErrorBody) -> String {
    let mut out = error_line(paint, &body.message);
    out.push('\n');
    for c in &body.causes {
        out.push_str(&format!("  caused by: {c}\n"));
    }
    if let Some(h) = &body.hint {
        out.push_str(&hint_line(paint, h));
        out.push('\n');
    }
    out
}

/// `hint: next step` (no newline).
pub fn hint_line(paint: &dyn Fn(Style, &str) -> String, hint: &str) -> String {
    format!("{} {hint}", paint(Style::Hint, "hint:"))
}

/// `error: message` (no newline), the way every error line of kco looks: the reporter's, a
/// command's closing failure line, and a failed connector's line inside a plan.
pub fn error_line(paint: &dyn Fn(Style, &str) -> String, message: &str) -> String {
    format!("{} {message}", paint(Style::Error, "error:"))
}

/// Reports an error that ended the command.
pub fn report(p: &Printer, e: &Error) {
    let body = ErrorBody::of(e);
    if p.is_structured() {
        p.structured(&ErrorDocument {
            error: body.clone(),
        });
    }
    eprint!("{}", error_text(&|s, t| p.paint_err(s, t), &body));
}

/// A usage error clap found (an unknown flag, a bad value): clap prints it on stderr; with
/// `--output json` (or `yaml`) among `args` it is also a document on stdout, kind `usage`,
/// its hint clap's tip (else where to read the usage).
pub fn usage(e: &clap::Error, args: &[std::ffi::OsString]) {
    let _ = e.print();
    let Some(output) = output_asked(args) else {
        return;
    };
    let text = e.render().to_string();
    let mut paragraphs = text.split("\n\n").map(str::trim);
    let first = paragraphs.next().unwrap_or_default();
    let message = first.strip_prefix("error:").unwrap_or(first).trim();
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let rest: Vec<&str> = paragraphs.collect();
    let hint = rest
        .iter()
        .find_map(|p| p.strip_prefix("tip:"))
        .or_else(|| rest.iter().find(|p| p.contains("--help")).copied())
        .map(|h| h.trim().to_string());
    let mut body = ErrorBody::of(&Error::Usage(message));
    body.hint = hint;
    let global = super::GlobalArgs {
        cluster: None,
        url: None,
        config: None,
        output,
        color: super::ColorChoice::Never,
        quiet: false,
        verbose: false,
        cluster_from: super::Origin::Flag,
        url_from: super::Origin::Flag,
    };
    Printer::new(&global).structured(&ErrorDocument { error: body });
}

/// `json` or `yaml` when the command line asks for it (`-o json`, `-ojson`, `--output json`,
/// `--output=json`; the last one given), read from the raw arguments clap could not parse.
fn output_asked(args: &[std::ffi::OsString]) -> Option<super::OutputFormat> {
    let mut asked = None;
    let mut args = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(a) = args.next() {
        let value = match a.as_ref() {
            "--" => break,
            "-o" | "--output" => args.next().map(|v| v.into_owned()),
            _ => a
                .strip_prefix("--output=")
                .or_else(|| a.strip_prefix("-o"))
                .map(str::to_string),
        };
        if let Some(v) = value {
            asked = Some(v);
        }
    }
    match asked.as_deref() {
        Some("json") => Some(super::OutputFormat::Json),
        Some("yaml") => Some(super::OutputFormat::Yaml),
        _ => None,
    }
}

/// The error that stopped one cluster of an `--all-clusters` run, on stderr, its message led
/// by the cluster's name; the others go on (their structured output holds it as data).
pub fn cluster_error(p: &Printer, cluster: &str, body: &ErrorBody) {
    let body = ErrorBody {
        message: format!("cluster `{cluster}`: {}", body.message),
        ..body.clone()
    };
    eprint!("{}", error_text(&|s, t| p.paint_err(s, t), &body));
}

/// A command's closing failure line on stderr, when its report (already printed) holds the
/// details: connectors that failed are data in the report, not errors of the run.
pub fn failure(p: &Printer, message: &str) {
    eprintln!("{}", error_line(&|s, t| p.paint_err(s, t), message));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::{FileProblem, ProblemKind};

    fn plain(_: Style, t: &str) -> String {
        t.to_string()
    }

    #[test]
    fn the_json_shape_of_an_error() {
        let e = Error::Files(vec![FileProblem::new(
            ProblemKind::ChecksumMismatch,
            "s/a.yaml",
            Some(9),
            "checksum mismatch",
        )]);
        let v = serde_json::to_value(ErrorDocument {
            error: ErrorBody::of(&e),
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"error": {
                "kind": "files",
                "message": "1 invalid file:\n  s/a.yaml:9: checksum mismatch",
                "causes": [],
                "hint": "if the edit is intended, `kco fmt FILE` re-seals it",
                "exit_code": 1
            }})
        );
        let v = serde_json::to_value(ErrorBody::of(&Error::Usage("u".into()))).unwrap();
        assert!(v.get("hint").is_none(), "no hint, no field: {v}");
    }

    #[test]
    fn causes_not_in_the_message_get_their_own_line() {
        let e = Error::Write {
            path: "out.yaml".into(),
            source: std::io::Error::other("disk full"),
        };
        let body = ErrorBody::of(&e);
        assert!(
            body.causes.is_empty(),
            "the cause is in the message already"
        );
        let body = ErrorBody {
            causes: vec!["deeper".into()],
            ..body
        };
        assert_eq!(
            error_text(&plain, &body),
            "error: cannot write out.yaml: disk full\n  caused by: deeper\n"
        );
    }

    #[test]
    fn a_hint_closes_the_text() {
        let body = ErrorBody::of(&Error::Files(vec![FileProblem::new(
            ProblemKind::ChecksumMismatch,
            "a.yaml",
            None,
            "edited",
        )]));
        let text = error_text(&plain, &body);
        assert!(text.starts_with("error: 1 invalid file:\n  a.yaml: edited\n"));
        assert!(text.ends_with("hint: if the edit is intended, `kco fmt FILE` re-seals it\n"));
    }
}
