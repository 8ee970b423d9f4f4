//! Client errors: each names the request (method and URL) it came from.

/// A failed REST call.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Connect answered with an error status and its `{"error_code","message"}` body.
    #[error("{method} {url}: HTTP {status}: {message}")]
    Http {
        method: String,
        url: String,
        status: u16,
        message: String,
    },
    /// The request did not get an answer: connection refused, TLS failure, timeout.
    #[error("{method} {url}: {reason}")]
    Transport {
        method: String,
        url: String,
        reason: String,
        /// The request may have reached the server (a timeout after sending).
        maybe_sent: bool,
        timeout: bool,
    },
    /// The answer was not what Connect sends.
    #[error("{method} {url}: unexpected response: {detail}")]
    Decode {
        method: String,
        url: String,
        detail: String,
    },
}

/// A worker that could not forward a request to the leader because the leader refused the
/// connection (it is down or restarting): the request never reached it, so it may be sent
/// again once a leader answers. Seen on the test bed while one of two workers restarts.
fn is_forward_refused(message: &str) -> bool {
    message.contains("IO Error trying to forward REST request")
        && (message.contains("ConnectException") || message.contains("Connection refused"))
}

impl ClientError {
    /// The HTTP status, when Connect answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Connect's message, when it answered with one.
    pub fn message(&self) -> Option<&str> {
        match self {
            ClientError::Http { message, .. } => Some(message),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// A rebalance (409), or a 500 that Connect itself calls safe to retry: nothing happened
    /// and the same request may be sent again.
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Http { status: 409, .. } => true,
            ClientError::Http {
                status: 500,
                message,
                ..
            } => message.contains("can be safely retried") || is_forward_refused(message),
            ClientError::Transport { maybe_sent, .. } => !maybe_sent,
            _ => false,
        }
    }

    /// A timeout after the request was sent: it may still have taken effect, so state must be
    /// read again before anything is retried.
    pub fn is_timeout(&self) -> bool {
        match self {
            ClientError::Transport { timeout, .. } => *timeout,
            ClientError::Http {
                status: 500,
                message,
                ..
            } => message.contains("Request timed out"),
            _ => false,
        }
    }

    /// Whether the request may or may not have taken effect: it timed out, or the connection
    /// broke after it was sent. The caller must read state again before deciding to resend.
    pub fn outcome_unknown(&self) -> bool {
        self.is_timeout()
            || matches!(
                self,
                ClientError::Transport {
                    maybe_sent: true,
                    ..
                }
            )
    }

    /// The worker could not be reached at all (try the next URL).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            ClientError::Transport {
                maybe_sent: false,
                ..
            }
        )
    }

    /// The URL of the failed request.
    pub fn url(&self) -> &str {
        match self {
            ClientError::Http { url, .. }
            | ClientError::Transport { url, .. }
            | ClientError::Decode { url, .. } => url,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, message: &str) -> ClientError {
        ClientError::Http {
            method: "PUT".into(),
            url: "http://w/connectors/c/stop".into(),
            status,
            message: message.into(),
        }
    }

    #[test]
    fn a_refused_forward_to_the_leader_is_retryable_but_other_forward_errors_are_not() {
        let refused = "IO Error trying to forward REST request: java.net.ConnectException: Connection refused";
        assert!(http(500, refused).is_retryable());
        let reset =
            "IO Error trying to forward REST request: java.net.SocketException: Connection reset";
        assert!(!http(500, reset).is_retryable());
        assert!(!http(500, "Request timed out").is_retryable());
    }
}
