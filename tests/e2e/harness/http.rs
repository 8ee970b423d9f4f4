//! Raw HTTP to the Connect REST API, with the retries a busy test bed needs.

use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use reqwest::Method;
use serde_json::Value;

use super::*;

fn client() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        Client::builder()
            .no_proxy()
            // The Connect REST layer gives up after 90 s; wait a little longer than that.
            .timeout(Duration::from_secs(100))
            .build()
            .expect("HTTP client")
    })
}

/// Status and body of one HTTP exchange. The body is the parsed JSON, `Null` when empty,
/// or a JSON string holding the raw text when it is not JSON.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    /// The `message` field of a Connect error or PATCH/DELETE offsets reply ("" if none).
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }

    /// The body, after asserting the status.
    pub fn expect(self, status: u16, what: &str) -> Value {
        assert_eq!(
            self.status, status,
            "{what}: unexpected reply {}",
            self.body
        );
        self.body
    }

    /// Connect's answer to a request it could not serve right now, worth retrying: 409
    /// (rebalance under way), 503 (worker starting), and the 500s that say so, including
    /// "Request cannot be completed because a rebalance is expected" (seen on
    /// `GET /connectors/{name}/tasks` during a rebalance).
    fn is_transient(&self) -> bool {
        match self.status {
            409 | 503 => true,
            500 => {
                let m = self.message();
                m.contains("can be safely retried")
                    || m.contains("Request timed out")
                    || m.contains("a rebalance is expected")
            }
            _ => false,
        }
    }
}

/// One request, no retries. Panics only when the worker cannot be reached at all.
pub fn send_once(method: Method, url: &str, body: Option<&Value>) -> Reply {
    let mut req = client().request(method.clone(), url);
    if let Some(b) = body {
        req = req.json(b);
    }
    let resp = req.send().unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = resp.status().as_u16();
    let text = resp
        .text()
        .unwrap_or_else(|e| panic!("{method} {url}: reading the body: {e}"));
    let body = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Reply { status, body }
}

/// A request retried for up to [`WAIT`] while Connect answers 409 (rebalance in
/// progress), 503 (worker starting) or a 500 it marks as retryable; a GET also on any
/// other 5xx (it changes nothing, and no test expects a GET to fail that way).
pub fn send(method: Method, url: &str, body: Option<&Value>) -> Reply {
    let start = Instant::now();
    loop {
        let reply = send_once(method.clone(), url, body);
        let retry = reply.is_transient() || (method == Method::GET && reply.status >= 500);
        if !retry || start.elapsed() >= WAIT {
            return reply;
        }
        thread::sleep(Duration::from_millis(500));
    }
}

pub fn get(url: &str) -> Reply {
    send(Method::GET, url, None)
}

pub fn put(url: &str, body: Option<&Value>) -> Reply {
    send(Method::PUT, url, body)
}

pub fn post(url: &str, body: &Value) -> Reply {
    send(Method::POST, url, Some(body))
}

pub fn patch(url: &str, body: &Value) -> Reply {
    send(Method::PATCH, url, Some(body))
}

pub fn delete(url: &str) -> Reply {
    send(Method::DELETE, url, None)
}
