//! Fault injection rules: which requests misbehave, and how.

use std::time::Duration;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::{json, Value};

/// 409 a worker returns on forwarded calls during a rebalance. Retryable.
pub const STALE_CONFIG: &str = "Cannot complete request momentarily due to stale configuration \
     (typically caused by a concurrent config change)";
/// 500 a worker returns while a sink's consumer group still has zombie members. Retryable.
pub const SAFELY_RETRIED: &str = "Failed to alter consumer group offsets for connector either \
     because its tasks haven't stopped completely yet or the connector was resumed before the \
     request to alter its offsets could be successfully completed. If the connector is in a \
     stopped state, this operation can be safely retried";
/// 500 a worker returns when it cannot connect to its leader to forward a request (the
/// leader is down or restarting). Retryable: the request never reached the leader.
pub const LEADER_REFUSED: &str =
    "IO Error trying to forward REST request: java.net.ConnectException: Connection refused";
/// 500 a worker returns when its leader, restarting, answers before its REST resources are
/// up (an empty error body). Retryable: the request never reached the leader's herder.
pub const LEADER_STARTING: &str = "IO Error trying to forward REST request: No content to map \
     due to end-of-input\n at [Source: (String)\"\"; line: 1, column: 0]";
/// 500 a worker returns when the connection to its leader broke during a forward. Not
/// retryable blindly: the leader may have carried the request out.
pub const LEADER_RESET: &str =
    "IO Error trying to forward REST request: java.net.SocketException: Connection reset";
/// 500 the REST layer returns after waiting 90 s; the operation may still complete.
pub const REQUEST_TIMED_OUT: &str = "Request timed out";

/// A method + path pattern.
///
/// The method is matched case-insensitively; `"*"` matches any method. The path is matched
/// against the request target as sent (path and query, percent-encoded): a pattern without `*`
/// must equal it exactly; `*` matches any run of characters, including `/` and `?` (so
/// `"/connectors/*/offsets"` matches every connector's offsets, `"/connectors*"` everything
/// under `/connectors`, `"*"` every path).
#[derive(Clone, Debug)]
pub struct Route {
    /// HTTP method, or `"*"` for any.
    pub method: String,
    /// Path pattern (with query); `*` is a wildcard.
    pub path: String,
    /// `path` as a glob: its `*`s, every other character literal.
    matcher: GlobMatcher,
}

impl Route {
    /// A route for `method` (or `"*"`) and a path pattern.
    pub fn new(method: &str, path: &str) -> Route {
        Route {
            method: method.to_string(),
            path: path.to_string(),
            matcher: path_glob(path),
        }
    }

    /// Whether a request with this method and target matches.
    pub fn matches(&self, method: &str, target: &str) -> bool {
        (self.method == "*" || self.method.eq_ignore_ascii_case(method))
            && self.matcher.is_match(target)
    }
}

impl PartialEq for Route {
    fn eq(&self, other: &Route) -> bool {
        (&self.method, &self.path) == (&other.method, &other.path)
    }
}

impl Eq for Route {}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// A route's path pattern as a glob: `*` matches any (possibly empty) run of characters,
/// `/` and `?` included; everything else (`?`, `[`, `{`, `\` too) is literal.
fn path_glob(pattern: &str) -> GlobMatcher {
    let pieces: Vec<String> = pattern.split('*').map(globset::escape).collect();
    GlobBuilder::new(&pieces.join("*"))
        .literal_separator(false)
        .backslash_escape(false)
        .build()
        .expect("an escaped pattern is a glob")
        .compile_matcher()
}

/// Which of the requests matching a fault's route it applies to (counted from 1, per fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence {
    /// Every matching request.
    Always,
    /// Only the n-th matching request.
    Nth(usize),
    /// The first n matching requests.
    First(usize),
    /// The n-th matching request and every one after it.
    FromNth(usize),
}

impl Occurrence {
    fn holds(self, count: usize) -> bool {
        match self {
            Occurrence::Always => true,
            Occurrence::Nth(n) => count == n,
            Occurrence::First(n) => count <= n,
            Occurrence::FromNth(n) => count >= n,
        }
    }
}

/// What a fault does once it fires (after its delay, if any).
#[derive(Clone, Debug, PartialEq)]
pub enum FaultAction {
    /// Handle the request normally (useful with a delay).
    Proceed,
    /// Do not handle the request; answer with this status and body.
    Respond { status: u16, body: Value },
    /// Handle the request (its effects happen), then answer with this status and body instead
    /// of the real response: the "timed out, but the first attempt may have worked" case.
    ApplyThenRespond { status: u16, body: Value },
    /// Close the connection without answering; the request has no effect.
    DropConnection,
    /// Handle the request (its effects happen), then close the connection without answering.
    ApplyThenDrop,
}

/// One fault injection rule. Build with [`Fault::on`], then pick an occurrence and an action.
///
/// ```ignore
/// fake.fault(Fault::on("PATCH", "/connectors/pg/offsets").nth(1).conflict());
/// fake.fault(Fault::on("GET", "/connectors/*/status").delay_ms(300));
/// fake.fault(Fault::on("PUT", "/connectors/pg/stop").applied_then_timeout());
/// ```
#[derive(Clone, Debug)]
pub struct Fault {
    /// Which requests the rule looks at.
    pub route: Route,
    /// Which of those it fires on.
    pub occurrence: Occurrence,
    /// Wait before acting, if set.
    pub delay: Option<Duration>,
    /// What to do when it fires.
    pub action: FaultAction,
    /// A `Retry-After` header (seconds) on the answer it gives, if set.
    pub retry_after: Option<u64>,
}

impl Fault {
    /// A rule for requests matching `method` and `path` (see [`Route`] for the pattern
    /// syntax). Defaults: fires on every matching request, no delay, handles normally.
    pub fn on(method: &str, path: &str) -> Fault {
        Fault {
            route: Route::new(method, path),
            occurrence: Occurrence::Always,
            delay: None,
            action: FaultAction::Proceed,
            retry_after: None,
        }
    }

    /// Fire only on the n-th matching request (1-based).
    pub fn nth(mut self, n: usize) -> Fault {
        self.occurrence = Occurrence::Nth(n);
        self
    }

    /// Fire on the first `n` matching requests.
    pub fn first(mut self, n: usize) -> Fault {
        self.occurrence = Occurrence::First(n);
        self
    }

    /// Fire on the n-th matching request and all later ones.
    pub fn nth_and_later(mut self, n: usize) -> Fault {
        self.occurrence = Occurrence::FromNth(n);
        self
    }

    /// Fire on every matching request (the default).
    pub fn always(mut self) -> Fault {
        self.occurrence = Occurrence::Always;
        self
    }

    /// Wait this long before acting.
    pub fn delay(mut self, delay: Duration) -> Fault {
        self.delay = Some(delay);
        self
    }

    /// Wait this many milliseconds before acting.
    pub fn delay_ms(self, ms: u64) -> Fault {
        self.delay(Duration::from_millis(ms))
    }

    /// Answer `{"error_code": status, "message": message}` without handling the request.
    pub fn respond(self, status: u16, message: &str) -> Fault {
        self.respond_json(status, error_body(status, message))
    }

    /// Answer with this status and JSON body without handling the request.
    pub fn respond_json(mut self, status: u16, body: Value) -> Fault {
        self.action = FaultAction::Respond { status, body };
        self
    }

    /// Handle the request, then answer `{"error_code": status, "message": message}`.
    pub fn apply_then_respond(mut self, status: u16, message: &str) -> Fault {
        self.action = FaultAction::ApplyThenRespond {
            status,
            body: error_body(status, message),
        };
        self
    }

    /// Close the connection without answering or handling the request.
    pub fn drop_connection(mut self) -> Fault {
        self.action = FaultAction::DropConnection;
        self
    }

    /// Handle the request, then close the connection without answering.
    pub fn apply_then_drop(mut self) -> Fault {
        self.action = FaultAction::ApplyThenDrop;
        self
    }

    /// Answer `status` (with its reason as the message) without handling the request. In
    /// Confluent Cloud mode the body takes the service's error shape.
    pub fn status(self, status: u16) -> Fault {
        let message = match status {
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            409 => "Conflict",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            _ => "Error",
        };
        self.respond(status, message)
    }

    /// Send a `Retry-After: {seconds}` header with the answer (with [`Fault::status`] or
    /// [`Fault::respond`]).
    pub fn retry_after(mut self, seconds: u64) -> Fault {
        self.retry_after = Some(seconds);
        self
    }

    /// 429 Too Many Requests with `Retry-After: {seconds}`, request not handled.
    pub fn rate_limited(self, seconds: u64) -> Fault {
        self.status(429).retry_after(seconds)
    }

    /// 409 [`STALE_CONFIG`] (rebalance in progress), request not handled.
    pub fn conflict(self) -> Fault {
        self.respond(409, STALE_CONFIG)
    }

    /// 500 [`SAFELY_RETRIED`], request not handled.
    pub fn retriable_500(self) -> Fault {
        self.respond(500, SAFELY_RETRIED)
    }

    /// 500 [`REQUEST_TIMED_OUT`], request not handled.
    pub fn timeout(self) -> Fault {
        self.respond(500, REQUEST_TIMED_OUT)
    }

    /// Handle the request, then answer 500 [`REQUEST_TIMED_OUT`].
    pub fn applied_then_timeout(self) -> Fault {
        self.apply_then_respond(500, REQUEST_TIMED_OUT)
    }
}

/// The body of every Connect error response.
pub fn error_body(status: u16, message: &str) -> Value {
    json!({ "error_code": status, "message": message })
}

/// The fault list, with per-rule match counters and whether each rule fired.
#[derive(Default)]
pub(crate) struct Faults {
    rules: Vec<(Fault, usize, bool)>,
}

impl Faults {
    pub fn add(&mut self, fault: Fault) {
        self.rules.push((fault, 0, false));
    }

    /// A line for every rule that never fired: a fault that was injected but never happened
    /// tests nothing (a mistyped route, an occurrence never reached).
    pub fn never_fired(&self) -> Vec<String> {
        let unfired = self.rules.iter().filter(|(_, _, fired)| !fired);
        unfired
            .map(|(f, seen, _)| {
                format!(
                    "fault on {} ({:?}) never fired; {seen} request(s) matched its route",
                    f.route, f.occurrence
                )
            })
            .collect()
    }

    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// Counts the request against every rule whose route matches, and returns the first rule
    /// (in insertion order) whose occurrence holds.
    pub fn fire(&mut self, method: &str, target: &str) -> Option<Fault> {
        let mut fired = None;
        for (fault, count, has_fired) in &mut self.rules {
            if fault.route.matches(method, target) {
                *count += 1;
                if fired.is_none() && fault.occurrence.holds(*count) {
                    *has_fired = true;
                    fired = Some(fault.clone());
                }
            }
        }
        fired
    }
}

#[cfg(test)]
mod tests {
    use super::Route;

    #[test]
    fn a_star_matches_any_run_and_the_rest_is_literal() {
        let any_offsets = Route::new("*", "/connectors/*/offsets");
        assert!(any_offsets.matches("PATCH", "/connectors/pg/offsets"));
        assert!(
            any_offsets.matches("get", "/connectors/a/b/offsets"),
            "`/` too"
        );
        assert!(!any_offsets.matches("GET", "/connectors/pg/offsets?x=1"));
        assert!(!any_offsets.matches("GET", "/connectors/offsets"));
        let listing = Route::new("GET", "/connectors?*");
        assert!(listing.matches("GET", "/connectors?expand=status"));
        assert!(listing.matches("GET", "/connectors?"));
        assert!(!listing.matches("GET", "/connectorsX"), "`?` is literal");
        assert!(!listing.matches("POST", "/connectors?expand=status"));
        let exact = Route::new("GET", "/connectors/[a]{b}\\c");
        assert!(exact.matches("GET", "/connectors/[a]{b}\\c"));
        assert!(!exact.matches("GET", "/connectors/a{b}\\c"));
        assert!(!exact.matches("GET", "/connectors/[a]b\\c"));
        let middle = Route::new("PUT", "/connectors/*/st*p");
        assert!(middle.matches("PUT", "/connectors/x/stop"));
        assert!(middle.matches("PUT", "/connectors/x/stp"));
        assert!(!middle.matches("PUT", "/connectors/x/stops"));
        assert!(Route::new("*", "*").matches("DELETE", "/anything?at=all"));
    }
}
