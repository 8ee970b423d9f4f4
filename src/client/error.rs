//! Client errors: each names the request (method and URL) it came from, and says in types
//! what kind of failure it was. Connect's message text is read once, here, into [`Problem`].

use super::transport::{Method, Request};

/// A failed REST call.
#[derive(Debug, thiserror::Error)]
#[error("{method} {url}: {kind}")]
pub struct ClientError {
    pub method: Method,
    pub url: String,
    /// The connector the call was about.
    pub connector: Option<String>,
    pub kind: ErrorKind,
    /// What this failure means on the service it came from (a refusal of the credentials
    /// naming the API key, never a secret; an endpoint that does not answer), said by the
    /// layer that knows the service ([`crate::client::layers::ServiceHints`]).
    pub hint: Option<Box<String>>,
}

/// What went wrong with a call.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// Connect answered with an error status and its `{"error_code","message"}` body (said in
    /// kco's words where kco knows what it means: [`Problem::said`]).
    #[error("HTTP {status}: {}", problem.said().unwrap_or(message))]
    Http {
        status: u16,
        message: String,
        problem: Problem,
        /// How long the service asked to be left alone (`Retry-After` of a 429 or 503).
        retry_after: Option<u16>,
    },
    /// The request did not get an answer: connection refused, TLS failure, timeout.
    #[error("{reason}")]
    Transport {
        reason: String,
        /// The request may have reached the server (a timeout after sending).
        maybe_sent: bool,
        timeout: bool,
        /// The TLS handshake failed, and why.
        tls: Option<TlsProblem>,
    },
    /// The answer was not what Connect sends.
    #[error("unexpected response: {detail}")]
    Decode { detail: String },
    /// The service has no such call (Confluent Cloud has no STOPPED state, Kafka Connect no
    /// asynchronous offsets request): nothing was sent.
    #[error("{what}")]
    Unsupported { what: String },
    /// Reading or writing Kafka itself, for a service that keeps offsets there
    /// (`kafka::through`): the bootstrap address and the topic or group are named.
    #[error("{message}")]
    Kafka { message: String },
}

/// Why a TLS handshake failed, as far as kco can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsProblem {
    /// The worker's certificate is not signed by a trusted CA (or not for this host).
    UntrustedServer,
    /// The worker refused kco's client certificate, or wanted one and got none.
    ClientCertRefused,
    /// What answered is not TLS: an `https://` URL naming a plain-HTTP worker.
    NotTls,
}

impl TlsProblem {
    /// Reads the TLS library's message (rustls): the one place that knows its words.
    pub fn classify(cause: &str) -> Option<TlsProblem> {
        if cause.contains("invalid peer certificate") {
            Some(TlsProblem::UntrustedServer)
        } else if cause.contains("fatal alert: BadCertificate")
            || cause.contains("fatal alert: CertificateRequired")
            || cause.contains("fatal alert: UnknownCA")
        {
            Some(TlsProblem::ClientCertRefused)
        } else if cause.contains("InvalidContentType") {
            // rustls: "received corrupt message of type InvalidContentType", the first bytes
            // of an HTTP answer read as a TLS record.
            Some(TlsProblem::NotTls)
        } else {
            None
        }
    }
}

/// What an error answer means for the caller, as far as Connect's answers tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// 409 during a rebalance or a concurrent config change: nothing happened; send again.
    Rebalance,
    /// 409 on create: the name is taken.
    AlreadyExists,
    /// A 500 that Connect itself calls safe to retry (or MSK Connect's 503
    /// `ServiceUnavailableException`): nothing happened.
    SafeToRetry,
    /// A worker could not forward the request to its leader, and the request never reached
    /// the leader's herder: the leader refused the connection (it is down or restarting), or
    /// answered with an empty error before its REST resources were up (Connect starts its
    /// HTTP server before it registers the resources, and the forwarding worker then fails to
    /// read the empty body). Both seen on the test bed while one of two workers restarts.
    LeaderUnreachable,
    /// 500 "Request timed out": the worker gave up waiting; the request may still take effect.
    RequestTimedOut,
    /// Any other failure of a worker to forward the request to its leader (a connection reset,
    /// a timeout of the forward, an answer it could not read): the leader may have received
    /// it, so the request may still take effect, as after "Request timed out".
    ForwardLost,
    /// 400 on an offsets change: the connector was not STOPPED when the change arrived.
    /// kco stops a connector before it changes its offsets, so something started or resumed
    /// it in between: another kco (another clone, another runner) or someone by hand.
    NotStopped,
    /// 429: too many requests; nothing happened. Sent again after the service's
    /// `Retry-After`.
    RateLimited,
    /// 409 on an asynchronous alter: the connector already has a request pending (Confluent
    /// Cloud takes one at a time per connector). Sending it again changes nothing until that
    /// one is over, so it is not retried.
    RequestPending,
    /// 405: the method is not allowed on that path: the release has no such call, or
    /// something in front of the service refuses it (a proxy or gateway that lets reads
    /// through only); nothing happened.
    MethodNotAllowed,
    Other,
}

/// Phrases of Connect's error messages, and what they mean. The only place that reads them.
const PHRASES: &[(u16, &[&str], Problem)] = &[
    (400, &["must be in the STOPPED state"], Problem::NotStopped),
    (409, &["already exists"], Problem::AlreadyExists),
    (500, &["can be safely retried"], Problem::SafeToRetry),
    (
        500,
        &[
            "IO Error trying to forward REST request",
            "ConnectException",
        ],
        Problem::LeaderUnreachable,
    ),
    (
        500,
        &[
            "IO Error trying to forward REST request",
            "Connection refused",
        ],
        Problem::LeaderUnreachable,
    ),
    (
        500,
        &[
            "IO Error trying to forward REST request",
            "No content to map due to end-of-input",
        ],
        Problem::LeaderUnreachable,
    ),
    (500, &["Request timed out"], Problem::RequestTimedOut),
    // After the forward errors above that never reached the leader: the first match wins.
    // Connect's RestClient words a failed forward "IO Error trying to", "Error trying to" or
    // "Thread was interrupted trying to forward REST request", or "Unexpected status code
    // when handling forwarded request" (3.6 to 4.3).
    (
        500,
        &["trying to forward REST request"],
        Problem::ForwardLost,
    ),
    (
        500,
        &["when handling forwarded request"],
        Problem::ForwardLost,
    ),
];

impl Problem {
    /// What the answer means, in kco's words, where Connect's own would mislead.
    pub fn said(self) -> Option<&'static str> {
        match self {
            Problem::NotStopped => Some(
                "the connector was no longer STOPPED when its offsets were sent, so Connect changed nothing: something started or resumed it after kco stopped it (another kco applying to this cluster at once, or someone by hand)",
            ),
            Problem::MethodNotAllowed => Some(
                "the method is not allowed there (405 Method Not Allowed): this release of the service has no such call, or something in front of it refuses it (a proxy or gateway that lets reads through only); nothing was changed",
            ),
            Problem::RequestPending => Some(
                "the connector already has an offsets request pending, and the service takes one at a time: nothing was sent; wait for it to finish (its status is `GET .../offsets/request/status`), then run again",
            ),
            _ => None,
        }
    }

    /// What an error answer to a request at `path` means. A 409 to an asynchronous alter
    /// (`.../offsets/request`, a path only Confluent Cloud has) is a request already pending,
    /// whatever its words: the service takes one at a time per connector.
    pub fn classify(status: u16, path: &str, message: &str) -> Problem {
        if status == 409 && path.ends_with("/offsets/request") {
            return Problem::RequestPending;
        }
        // Amazon MSK Connect's API (its paths start with `/v1/`, which no Connect path does):
        // a 409 is a `ConflictException` (the name is taken), a 503 a
        // `ServiceUnavailableException`, which asks to be sent again later.
        if path.starts_with("/v1/") {
            match status {
                409 => return Problem::AlreadyExists,
                503 => return Problem::SafeToRetry,
                _ => {}
            }
        }
        let known = PHRASES.iter().find(|(s, phrases, _)| {
            *s == status && phrases.iter().all(|phrase| message.contains(phrase))
        });
        match known {
            Some((_, _, p)) => *p,
            None if status == 409 => Problem::Rebalance,
            None if status == 429 => Problem::RateLimited,
            None if status == 405 => Problem::MethodNotAllowed,
            None => Problem::Other,
        }
    }
}

impl ClientError {
    fn of(req: &Request, url: &str, kind: ErrorKind) -> Self {
        ClientError {
            method: req.method,
            url: url.to_string(),
            connector: req.connector.clone(),
            kind,
            hint: None,
        }
    }

    /// An error answer from Connect.
    pub fn http(req: &Request, url: &str, status: u16, message: impl Into<String>) -> Self {
        let message = message.into();
        let problem = Problem::classify(status, &req.path, &message);
        Self::of(
            req,
            url,
            ErrorKind::Http {
                status,
                message,
                problem,
                retry_after: None,
            },
        )
    }

    /// The same error, with the answer's `Retry-After`.
    pub fn with_retry_after(mut self, after: Option<std::time::Duration>) -> Self {
        if let ErrorKind::Http { retry_after, .. } = &mut self.kind {
            // Whole seconds, rounded up (the error stays small).
            *retry_after = after.map(|d| {
                let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
                u16::try_from(secs).unwrap_or(u16::MAX)
            });
        }
        self
    }

    /// How long the service asked to wait before the next request (`Retry-After`).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match &self.kind {
            ErrorKind::Http { retry_after, .. } => {
                retry_after.map(|s| std::time::Duration::from_secs(s.into()))
            }
            _ => None,
        }
    }

    /// No answer. `maybe_sent`: the request may have reached the worker.
    pub fn transport(
        req: &Request,
        url: &str,
        reason: impl Into<String>,
        maybe_sent: bool,
        timeout: bool,
    ) -> Self {
        let reason = reason.into();
        let tls = TlsProblem::classify(&reason);
        let kind = ErrorKind::Transport {
            reason,
            // A failed handshake never delivered the request.
            maybe_sent: maybe_sent && tls.is_none(),
            timeout,
            tls,
        };
        Self::of(req, url, kind)
    }

    /// A call that `service` does not have (`what` says which); nothing was sent.
    pub fn unsupported(req: &Request, url: &str, service: &'static str, what: &str) -> Self {
        let what = format!("{service} has no such call: {what}");
        Self::of(req, url, ErrorKind::Unsupported { what })
    }

    /// A change the service cannot make as asked, said by kco before anything is sent
    /// (`why`, with what to change).
    pub fn refused_here(req: &Request, url: &str, why: impl Into<String>) -> Self {
        Self::of(req, url, ErrorKind::Unsupported { what: why.into() })
    }

    /// A failed read or write of Kafka itself, standing for the call `req` (`url` says
    /// where: the bootstrap address, the topic or the group).
    pub fn kafka(req: &Request, url: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::of(req, url, ErrorKind::Kafka { message })
    }

    /// An answer that is not what Connect sends.
    pub fn decode(req: &Request, url: &str, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        Self::of(req, url, ErrorKind::Decode { detail })
    }

    /// The HTTP status, when Connect answered.
    pub fn status(&self) -> Option<u16> {
        match &self.kind {
            ErrorKind::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Connect's message, when it answered with one.
    pub fn message(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Http { message, .. } => Some(message),
            _ => None,
        }
    }

    pub fn problem(&self) -> Option<Problem> {
        match &self.kind {
            ErrorKind::Http { problem, .. } => Some(*problem),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// The connector the failed call was about does not exist.
    pub fn is_unknown_connector(&self) -> bool {
        self.is_not_found() && self.connector.is_some()
    }

    /// Nothing happened and the same request may be sent again: a rebalance, a 500 that
    /// Connect calls safe to retry, a leader that could not be reached, or a worker that
    /// could not be reached at all.
    pub fn is_retryable(&self) -> bool {
        match &self.kind {
            ErrorKind::Http { problem, .. } => matches!(
                problem,
                Problem::Rebalance
                    | Problem::SafeToRetry
                    | Problem::LeaderUnreachable
                    | Problem::RateLimited
            ),
            ErrorKind::Transport { maybe_sent, .. } => !maybe_sent,
            ErrorKind::Decode { .. } | ErrorKind::Unsupported { .. } | ErrorKind::Kafka { .. } => {
                false
            }
        }
    }

    /// A timeout after the request was sent: it may still have taken effect, so state must be
    /// read again before anything is retried.
    pub fn is_timeout(&self) -> bool {
        match &self.kind {
            ErrorKind::Transport { timeout, .. } => *timeout,
            ErrorKind::Http { problem, .. } => *problem == Problem::RequestTimedOut,
            ErrorKind::Decode { .. } | ErrorKind::Unsupported { .. } | ErrorKind::Kafka { .. } => {
                false
            }
        }
    }

    /// Connect answered with an error that says the request was not carried out (a refusal or
    /// a failure, not a timeout or a lost connection): it had no effect.
    pub fn had_no_effect(&self) -> bool {
        matches!(self.kind, ErrorKind::Unsupported { .. })
            || self.status().is_some() && !self.outcome_unknown()
    }

    /// Whether the request may or may not have taken effect: it timed out, or the connection
    /// broke after it was sent (between kco and the worker, or between the worker and its
    /// leader). The caller must read state again before deciding to resend.
    pub fn outcome_unknown(&self) -> bool {
        self.is_timeout()
            || matches!(
                self.kind,
                ErrorKind::Transport {
                    maybe_sent: true,
                    ..
                } | ErrorKind::Http {
                    problem: Problem::ForwardLost,
                    ..
                }
            )
    }

    /// The worker could not be reached at all (try the next URL).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Transport {
                maybe_sent: false,
                ..
            }
        )
    }

    /// No answer within the request's timeout, not even an HTTP status: a listener that
    /// accepted the connection and never answered, or a worker stuck.
    pub fn is_silent(&self) -> bool {
        matches!(self.kind, ErrorKind::Transport { timeout: true, .. })
    }

    /// The listener accepted the connection, then closed it or answered with something that
    /// is not HTTP, without waiting out the timeout: a Kafka broker's port (the bootstrap
    /// server given as the Connect URL), a TLS port named with `http://`. Asking again will
    /// not change it.
    pub fn is_not_http(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Transport {
                maybe_sent: true,
                timeout: false,
                tls: None,
                ..
            }
        )
    }

    /// The worker refused the credentials.
    pub fn is_auth_refused(&self) -> bool {
        matches!(self.status(), Some(401) | Some(403))
    }

    /// The TLS handshake failed, and why.
    pub fn tls_problem(&self) -> Option<TlsProblem> {
        match self.kind {
            ErrorKind::Transport { tls, .. } => tls,
            _ => None,
        }
    }

    /// What the first call to a cluster failing this way means, for an error's context.
    /// The answer was not Kafka Connect's: not JSON, or no such path (a web server, a
    /// gateway's own page). Asking again will not change it.
    pub fn is_not_connect(&self) -> bool {
        matches!(self.kind, ErrorKind::Decode { .. }) || self.is_not_found()
    }

    pub fn first_contact(&self) -> &'static str {
        if self.tls_problem().is_some() {
            "TLS handshake with Kafka Connect failed"
        } else if self.is_auth_refused() {
            "Kafka Connect refused the credentials"
        } else if self.is_not_connect() {
            "no Kafka Connect answers there"
        } else if self.is_not_http() {
            "no HTTP answer from Kafka Connect"
        } else {
            "cannot reach Kafka Connect"
        }
    }

    /// The URL of the failed request.
    pub fn url(&self) -> &str {
        &self.url
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At first contact: what accepted and then closed, or answered with bytes that are not
    /// HTTP, is told apart from what never answered and from an HTTP answer; a TLS
    /// handshake that read an HTTP answer is an `https://` URL of a plain-HTTP worker.
    #[test]
    fn a_listener_that_does_not_speak_http_or_tls_is_named() {
        let req = Request::new(Method::Get, "/");
        let closed = ClientError::transport(
            &req,
            "http://k:9092/",
            "request failed: connection closed before message completed",
            true,
            false,
        );
        assert!(closed.is_not_http() && !closed.is_unreachable() && !closed.is_silent());
        assert_eq!(closed.first_contact(), "no HTTP answer from Kafka Connect");
        let silent = ClientError::transport(&req, "http://k:9092/", "no answer", true, true);
        assert!(!silent.is_not_http());
        let https = ClientError::transport(
            &req,
            "https://w:8083/",
            "cannot connect: received corrupt message of type InvalidContentType",
            false,
            false,
        );
        assert_eq!(https.tls_problem(), Some(TlsProblem::NotTls));
        assert!(!https.is_not_http() && https.is_unreachable());
    }

    #[test]
    fn a_405_says_what_it_means_instead_of_the_raw_answer() {
        let req = Request::new(Method::Post, "/connectors").about("c");
        let e = ClientError::http(
            &req,
            "http://w/connectors",
            405,
            "HTTP 405 Method Not Allowed",
        );
        assert_eq!(e.problem(), Some(Problem::MethodNotAllowed));
        let shown = e.to_string();
        assert!(
            shown
                .starts_with("POST http://w/connectors: HTTP 405: the method is not allowed there")
                && shown.contains("nothing was changed")
                && !shown.contains("HTTP 405 Method Not Allowed"),
            "{shown}"
        );
        assert!(e.had_no_effect() && !e.is_retryable());
    }

    fn http(status: u16, message: &str) -> ClientError {
        let req = Request::new(Method::Put, "/connectors/c/stop").about("c");
        ClientError::http(&req, "http://w/connectors/c/stop", status, message)
    }

    #[test]
    fn a_forward_that_never_reached_the_leader_is_retryable_but_other_forward_errors_are_not() {
        let refused = "IO Error trying to forward REST request: java.net.ConnectException: Connection refused";
        assert!(http(500, refused).is_retryable());
        let starting = "IO Error trying to forward REST request: No content to map due to \
             end-of-input\n at [Source: (String)\"\"; line: 1, column: 0]";
        assert!(http(500, starting).is_retryable());
        assert!(!http(500, "No content to map due to end-of-input").is_retryable());
        let reset =
            "IO Error trying to forward REST request: java.net.SocketException: Connection reset";
        assert!(!http(500, reset).is_retryable());
        assert!(http(500, reset).outcome_unknown() && !http(500, reset).had_no_effect());
        assert!(!http(500, refused).outcome_unknown() && http(500, refused).had_no_effect());
        for lost in [
            "Error trying to forward REST request: java.lang.IllegalStateException: x",
            "Thread was interrupted trying to forward REST request: null",
            "Unexpected status code when handling forwarded request: 302",
        ] {
            assert!(http(500, lost).outcome_unknown(), "{lost}");
        }
        assert!(!http(500, "Request timed out").is_retryable());
        assert!(http(500, "Request timed out").is_timeout());
    }

    #[test]
    fn a_conflict_is_a_rebalance_unless_the_name_is_taken() {
        let stale = "Cannot complete request momentarily due to stale configuration";
        assert_eq!(http(409, stale).problem(), Some(Problem::Rebalance));
        assert!(http(409, stale).is_retryable());
        let taken = http(409, "Connector c already exists");
        assert_eq!(taken.problem(), Some(Problem::AlreadyExists));
        assert!(!taken.is_retryable());
        assert_eq!(
            taken.to_string(),
            "PUT http://w/connectors/c/stop: HTTP 409: Connector c already exists"
        );
    }

    #[test]
    fn an_offsets_change_on_a_connector_not_stopped_is_said_in_kcos_words() {
        let raw = "Connectors must be in the STOPPED state before their offsets can be modified. \
                   This can be done for the specified connector by issuing a 'PUT' request to \
                   the '/connectors/c/stop' endpoint";
        let e = http(400, raw);
        assert_eq!(e.problem(), Some(Problem::NotStopped));
        assert!(e.had_no_effect() && !e.is_retryable());
        let text = e.to_string();
        assert!(!text.contains("must be in the STOPPED state"), "{text}");
        assert!(
            text.contains(
                "HTTP 400: the connector was no longer STOPPED when its offsets were sent"
            ) && text.contains("another kco applying to this cluster at once"),
            "{text}"
        );
        // The message stays Connect's for anyone who asks for it.
        assert_eq!(e.message(), Some(raw));
    }

    #[test]
    fn not_found_names_a_connector_only_for_connector_calls() {
        assert!(http(404, "Connector c not found").is_unknown_connector());
        let root = ClientError::http(&Request::new(Method::Get, "/"), "http://w/", 404, "x");
        assert!(root.is_not_found() && !root.is_unknown_connector());
    }
}
