//! The one seam to Connect: a [`Request`] in, the decoded JSON body or a [`ClientError`] out.
//!
//! Everything between kco and a worker is a [`Transport`]: HTTP with failover, and the layers
//! that wrap it (retry, trace, count). The typed API in [`super::api`] builds requests and
//! decodes answers; adding an endpoint touches that one file.

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Serialize;
use serde_json::Value;

use super::{ClientError, Result};

/// An HTTP method of the Connect REST API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One REST call.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    /// Path and query, segments already percent-encoded: `/connectors/a%20b/offsets`.
    pub path: String,
    /// The JSON body, serialized once when the request is built.
    pub body: Option<String>,
    /// Sending it twice has the effect of sending it once, so it may be sent again after a
    /// timeout. Reads, stop, pause and resume are; PATCH, DELETE and create are not.
    pub idempotent: bool,
    /// The connector the call is about, for messages and hints.
    pub connector: Option<String>,
}

impl Request {
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        Request {
            method,
            path: path.into(),
            body: None,
            idempotent: matches!(method, Method::Get | Method::Put),
            connector: None,
        }
    }

    pub fn body(mut self, body: impl Serialize) -> Self {
        self.body = Some(serde_json::to_string(&body).expect("a request body serializes"));
        self
    }

    pub fn about(mut self, connector: &str) -> Self {
        self.connector = Some(connector.to_string());
        self
    }

    /// Anything but a read may change the cluster.
    pub fn is_mutating(&self) -> bool {
        self.method != Method::Get
    }
}

/// The JSON body of a 2xx answer (`null` when empty), checked to be JSON but not decoded:
/// the typed API decodes it straight into the type it expects, with no [`Value`] in between.
#[derive(Debug, Clone)]
pub struct Body(String);

impl Body {
    /// The body as text.
    pub fn text(&self) -> &str {
        &self.0
    }

    /// Decodes the body into `T`.
    pub fn json<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(&self.0)
    }

    /// The body as a JSON value.
    pub fn value(&self) -> Value {
        self.json().expect("a body is checked to be JSON")
    }
}

/// Sends requests to one Connect cluster.
pub trait Transport: Send + Sync {
    /// The JSON body of a 2xx answer (`null` when empty), or what went wrong.
    fn send(&self, req: &Request) -> Result<Body>;
    /// The base URL requests currently go to (for messages).
    fn endpoint(&self) -> String;
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        (**self).send(req)
    }
    fn endpoint(&self) -> String {
        (**self).endpoint()
    }
}

impl<T: Transport + ?Sized> Transport for std::sync::Arc<T> {
    fn send(&self, req: &Request) -> Result<Body> {
        (**self).send(req)
    }
    fn endpoint(&self) -> String {
        (**self).endpoint()
    }
}

/// Turns an answer into the result of a call: the JSON body of a 2xx, else Connect's
/// `{"error_code","message"}` as a [`ClientError`]. Every transport decodes through here.
pub fn decode_response(req: &Request, url: &str, status: u16, text: String) -> Result<Body> {
    let empty = text.trim().is_empty();
    if (200..300).contains(&status) {
        if empty {
            return Ok(Body("null".into()));
        }
        // Checked without building anything; decoded once, into its type, by the caller.
        return match serde_json::from_str::<IgnoredAny>(&text) {
            Ok(_) => Ok(Body(text)),
            Err(_) => Err(ClientError::decode(
                req,
                url,
                format!(
                    "the answer is not JSON but {}: is this a Kafka Connect worker's REST URL?",
                    not_json(&text)
                ),
            )),
        };
    }
    let body: Option<Value> = if empty {
        None
    } else {
        serde_json::from_str(&text).ok()
    };
    // Connect says `{"error_code","message"}`; Confluent Cloud `{"error":{"code","message"}}`.
    let message = body
        .as_ref()
        .and_then(|b| b.get("message").or_else(|| b.get("error")?.get("message")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| match truncate(&text) {
            t if t.is_empty() => reason(status).to_string(),
            _ if body.is_none() && looks_like_html(&text) => {
                format!("{} ({})", reason(status), not_json(&text))
            }
            t => t,
        });
    Err(ClientError::http(req, url, status, message))
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "error",
    }
}

/// At most 300 bytes of a body, for a message.
fn looks_like_html(text: &str) -> bool {
    let head = text.trim_start().get(..text.len().min(512)).unwrap_or(text);
    let head = head.to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<body")
}

/// What a body that is not JSON is, in a few words: an HTML page and its title, or its first
/// line (never the whole page).
fn not_json(text: &str) -> String {
    let bytes = text.len();
    if looks_like_html(text) {
        let lower = text.to_ascii_lowercase();
        let title = lower
            .find("<title>")
            .and_then(|i| {
                let start = i + "<title>".len();
                lower[start..]
                    .find("</title>")
                    .map(|j| text[start..start + j].trim())
            })
            .filter(|t| !t.is_empty());
        return match title {
            Some(t) => format!(
                "an HTML page (\"{}\", {})",
                first_line(t, 80),
                crate::text::count(bytes, "byte")
            ),
            None => format!("an HTML page ({})", crate::text::count(bytes, "byte")),
        };
    }
    format!(
        "\"{}\" ({})",
        first_line(text.trim(), 80),
        crate::text::count(bytes, "byte")
    )
}

/// The first line of `s`, at most `max` characters.
fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

pub fn truncate(s: &str) -> String {
    let s = s.trim();
    if s.len() <= 300 {
        return s.to_string();
    }
    let mut end = 300;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}
