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
            } => message.contains("can be safely retried"),
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
