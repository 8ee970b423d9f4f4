//! The request log and the expectations checked by `FakeConnect::verify`.

use std::fmt;

use serde_json::Value;

use super::faults::Route;

/// One request the fake received, in arrival order.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// Upper-case method, e.g. `"PATCH"`.
    pub method: String,
    /// Request target as sent: path plus `?query`, still percent-encoded.
    pub path: String,
    /// The body parsed as JSON, when it was non-empty valid JSON.
    pub body: Option<Value>,
    /// The raw body as text (empty when there was none).
    pub body_text: String,
    /// The `Authorization` header, as received (`None` in process).
    pub authorization: Option<String>,
    /// The status the fake answered with; `None` while in flight or when the connection was
    /// dropped by a fault.
    pub status: Option<u16>,
}

impl RecordedRequest {
    /// Anything but GET (HEAD and OPTIONS are not used by Connect clients).
    pub fn is_mutating(&self) -> bool {
        self.method != "GET"
    }

    /// Whether this request matches `method` and a path pattern (see [`Route`]).
    pub fn matches(&self, method: &str, path: &str) -> bool {
        Route::new(method, path).matches(&self.method, &self.path)
    }
}

impl fmt::Display for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.body_text.is_empty() {
            write!(f, " {}", self.body_text)?;
        }
        match self.status {
            Some(status) => write!(f, " -> {status}"),
            None => write!(f, " -> (no response)"),
        }
    }
}

/// How many matching requests an expectation wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Times {
    AtLeastOnce,
    Exactly(usize),
}

#[derive(Clone, Debug)]
pub(crate) struct Expectation {
    pub route: Route,
    pub times: Times,
}

impl Expectation {
    /// `None` when met, else a line describing the shortfall.
    pub fn check(&self, log: &[RecordedRequest]) -> Option<String> {
        let seen = log
            .iter()
            .filter(|r| self.route.matches(&r.method, &r.path))
            .count();
        match self.times {
            Times::AtLeastOnce if seen == 0 => {
                Some(format!("expected {} at least once, never came", self.route))
            }
            Times::Exactly(n) if seen != n => Some(format!(
                "expected {} exactly {n} time(s), came {seen} time(s)",
                self.route
            )),
            _ => None,
        }
    }
}

/// A readable dump of the log for failure messages.
pub(crate) fn describe(log: &[RecordedRequest]) -> String {
    if log.is_empty() {
        return "  (no requests)".to_string();
    }
    log.iter()
        .enumerate()
        .map(|(i, r)| format!("  {:>3}. {r}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}
