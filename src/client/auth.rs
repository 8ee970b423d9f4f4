//! Credentials: a string type that never prints, and the auth schemes.

use std::fmt;

/// A value that must never be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(redacted)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(redacted)")
    }
}

/// Credentials for a cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum Auth {
    Basic { username: String, password: Secret },
    Bearer { token: Secret },
}

impl Auth {
    /// The `Authorization` header value.
    pub fn header_value(&self) -> String {
        match self {
            Auth::Basic { username, password } => {
                use base64::Engine;
                let raw = format!("{username}:{}", password.expose());
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(raw)
                )
            }
            Auth::Bearer { token } => format!("Bearer {}", token.expose()),
        }
    }
}
