//! Problems found in snapshot files: where (file and line), what, and of which kind.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// A problem in a file, with the line it is on (1-based) when known, and the column where
/// one is meaningful (a YAML syntax error): `path:line:column: message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), column.map(|c| format!(":{c}")).unwrap_or_default())]
pub struct FileProblem {
    pub kind: ProblemKind,
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub path: PathBuf,
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub message: String,
}

/// What kind of problem a [`FileProblem`] is: hints and control flow go by this, never by the
/// message's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// No such file or directory.
    NotFound,
    /// The file or directory could not be read or listed.
    Unreadable,
    /// Not YAML, or not a mapping.
    Syntax,
    /// `apiVersion` or `kind` missing or not the ones this kco reads.
    Version,
    /// A field the format lacks, a required one missing, or a value of the wrong type.
    Schema,
    /// A value the format allows but kco cannot use: an empty name, a partition of the wrong
    /// shape for the connector type.
    Invalid,
    /// The same partition twice in one file.
    DuplicatePartition,
    /// Two files for one connector.
    DuplicateConnector,
    /// A config value that looks secret but is stored in plain text.
    PlainSecret,
    /// A `${kco:env:VAR}` placeholder whose variable is not set.
    MissingEnv,
    /// The offsets do not match the stored checksum: a hand edit.
    ChecksumMismatch,
    /// Lines of git's conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`): a merge left
    /// unresolved.
    MergeConflict,
    /// An offset that does not fit its connector class's shape (schemas/shapes.yaml): an
    /// unknown key, a required one missing, a wrong type, a value out of range.
    Shape,
}

impl FileProblem {
    /// A file that is not UTF-8, with the line of the first bad byte.
    pub fn not_utf8(path: &Path, bytes: &[u8], e: &std::string::FromUtf8Error) -> FileProblem {
        let at = e.utf8_error().valid_up_to();
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        let utf16 = bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]);
        let message = if utf16 {
            "the file is UTF-16 (it starts with a UTF-16 byte order mark); kco files are UTF-8"
                .to_string()
        } else {
            format!(
                "not UTF-8: byte 0x{:02x} at offset {at} (kco files are UTF-8)",
                bytes[at]
            )
        };
        FileProblem::new(ProblemKind::Syntax, path, Some(line), message)
    }

    pub fn new(
        kind: ProblemKind,
        path: impl Into<PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        FileProblem {
            kind,
            path: path.into(),
            line,
            column: None,
            message: message.into(),
        }
    }

    /// A YAML syntax error of `text`, at the line and column a reader would fix
    /// ([`syntax_position`]).
    pub fn syntax(path: &Path, text: &str, e: &serde_yaml::Error, message: String) -> Self {
        let at = syntax_position(text, e);
        FileProblem {
            kind: ProblemKind::Syntax,
            path: path.to_path_buf(),
            line: at.map(|a| a.0),
            column: at.map(|a| a.1),
            message,
        }
    }
}

/// Where a YAML syntax error is, as a reader points at it (1-based line and column). libyaml
/// reports an unclosed bracket or brace where it gave up, often lines later: such an error is
/// moved to the bracket that is not closed. An unexpected end of the text (an unclosed quote)
/// is moved back to the end of the last non-blank line.
pub fn syntax_position(text: &str, e: &serde_yaml::Error) -> Option<(usize, usize)> {
    let loc = e.location()?;
    let (line, column) = (loc.line(), loc.column());
    let message = e.to_string();
    let close = if message.contains("did not find expected ',' or ']'") {
        Some(('[', ']'))
    } else if message.contains("did not find expected ',' or '}'") {
        Some(('{', '}'))
    } else {
        None
    };
    if let Some((open, close)) = close {
        return Some(unclosed(text, loc.index(), open, close).unwrap_or((line, column)));
    }
    if !message.contains("unexpected end of stream") || line <= 1 {
        return Some((line, column));
    }
    let lines: Vec<&str> = text.lines().collect();
    (1..line.min(lines.len() + 1))
        .rev()
        .find(|l| !lines[l - 1].trim().is_empty())
        .map(|l| (l, lines[l - 1].trim_end().chars().count() + 1))
        .or(Some((line, column)))
}

/// The line and column of the last `open` before byte `end` that no `close` matches
/// (brackets inside quotes and comments are not counted).
fn unclosed(text: &str, end: usize, open: char, close: char) -> Option<(usize, usize)> {
    let mut stack = Vec::new();
    let (mut line, mut column) = (1, 0);
    let mut quote: Option<char> = None;
    let mut comment = false;
    for (i, c) in text.char_indices() {
        if i >= end {
            break;
        }
        column += 1;
        match c {
            '\n' => {
                line += 1;
                column = 0;
                comment = false;
                quote = None;
            }
            _ if comment => {}
            '"' | '\'' if quote == Some(c) => quote = None,
            '"' | '\'' if quote.is_none() => quote = Some(c),
            '#' if quote.is_none() => comment = true,
            _ if quote.is_some() => {}
            c if c == open => stack.push((line, column)),
            c if c == close => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.pop()
}
