//! The errors kco reports, each with the context a user needs: the file and line, the
//! connector, or the URL; and a hint where there is a useful next step.

use std::path::PathBuf;

use crate::client::{ClientError, ConnectVersion};
use crate::config::ConfigError;
use crate::model::file::FileProblem;

/// Exit code: success, no differences.
pub const EXIT_OK: u8 = 0;
/// Exit code: an error, or (apply) something did not converge.
pub const EXIT_ERROR: u8 = 1;
/// Exit code of `diff`: differences found.
pub const EXIT_DIFFERENCES: u8 = 2;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// One or more invalid snapshot files; nothing was sent.
    #[error("{} invalid file(s):\n{}", .0.len(), .0.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Files(Vec<FileProblem>),

    /// A REST call failed; `context` says what kco was doing.
    #[error("{context}: {source}")]
    Client {
        context: String,
        #[source]
        source: ClientError,
    },

    #[error("Kafka Connect at {url} reports version {version}, which kco does not support: {why}")]
    UnsupportedVersion {
        url: String,
        version: String,
        why: String,
    },

    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Arguments that do not fit together.
    #[error("{0}")]
    Usage(String),

    /// Something else that went wrong, already phrased for the user.
    #[error("{0}")]
    Other(String),
}

impl Error {
    pub fn client(context: impl Into<String>, source: ClientError) -> Self {
        Error::Client {
            context: context.into(),
            source,
        }
    }

    /// The exit code for this error.
    pub fn exit_code(&self) -> u8 {
        EXIT_ERROR
    }

    /// A next step for the user, when there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Client { source, .. } if source.is_unreachable() => Some(
                "is the worker running and the URL right? Set it with --url, KCO_URL or a cluster in kco.yaml".into(),
            ),
            Error::Client { source, .. } if source.is_auth_refused() => Some(
                "the worker refused the credentials: check the cluster's `auth` in kco.yaml".into(),
            ),
            Error::Client { source, .. } if source.is_unknown_connector() => {
                Some(
                    "the connector does not exist on this cluster (`kco diff` lists what is there)"
                        .into(),
                )
            }
            Error::UnsupportedVersion { .. } => Some(format!(
                "offsets can be read from Kafka Connect {} and altered from {}",
                ConnectVersion::OFFSETS_READ,
                ConnectVersion::OFFSETS_WRITE
            )),
            Error::Files(problems) if problems.iter().any(|p| p.message.contains("checksum mismatch")) => Some(
                "if the edit is intended, `kco fmt FILE` re-seals it".into(),
            ),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::client::{Method, Request};

    fn not_found(req: Request) -> Error {
        let url = format!("http://h{}", req.path);
        Error::client("x", ClientError::http(&req, &url, 404, "not found"))
    }

    #[test]
    fn not_found_hint_only_for_connector_calls() {
        let offsets = Request::new(Method::Get, "/connectors/c/offsets").about("c");
        let hint = not_found(offsets).hint().unwrap();
        assert!(hint.contains("does not exist"), "{hint}");
        assert!(not_found(Request::new(Method::Get, "/")).hint().is_none());
    }
}
