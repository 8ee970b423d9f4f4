//! Problems found in snapshot files: where (file and line), what, and of which kind.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// A problem in a file, with the line it is on (1-based) when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct FileProblem {
    pub kind: ProblemKind,
    pub path: PathBuf,
    pub line: Option<usize>,
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
            message: message.into(),
        }
    }
}
