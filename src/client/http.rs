//! The HTTP implementation of [`Connect`], with failover across a cluster's worker URLs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use reqwest::Method;
use serde_json::{json, Value};

use super::{
    ClientError, ConfigDef, Connect, ConnectorListing, ConnectorStatus, Result, ServerInfo,
};
use crate::config::{Auth, Secret};
use crate::model::{OffsetEntry, PatchEntry, TargetState};

/// TLS settings for HTTPS workers.
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// PEM bundle of CA certificates to trust, in addition to the system's.
    pub ca_pem: Option<Vec<u8>>,
    /// PEM client certificate followed by its PEM private key, for mutual TLS.
    pub identity_pem: Option<Secret>,
    /// Accept any server certificate. Only when asked for explicitly.
    pub insecure: bool,
}

impl HttpOptions {
    /// Credentials written into a URL (`http://user:pass@host`) become basic auth (unless
    /// auth is configured), and the URLs, which messages show, keep none.
    pub fn move_url_credentials(&mut self) -> std::result::Result<(), BuildError> {
        let mut from_url = None;
        for u in self.urls.iter_mut() {
            let (clean, creds) = split_userinfo(u)?;
            *u = clean;
            from_url = from_url.or(creds);
        }
        if self.auth.is_none() {
            self.auth = from_url;
        }
        Ok(())
    }
}

/// How to reach one cluster.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Worker base URLs; the next is tried when one cannot be reached.
    pub urls: Vec<String>,
    pub auth: Option<Auth>,
    pub headers: BTreeMap<String, Secret>,
    pub timeout: Duration,
    pub tls: TlsOptions,
}

/// A Connect cluster over HTTP(S).
#[derive(Debug)]
pub struct HttpConnect {
    client: Client,
    urls: Vec<String>,
    current: AtomicUsize,
}

/// A construction error: bad TLS material or header.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

impl HttpConnect {
    pub fn new(mut opts: HttpOptions) -> std::result::Result<Self, BuildError> {
        if opts.urls.is_empty() {
            return Err(BuildError("no worker URL configured".into()));
        }
        opts.move_url_credentials()?;
        let mut headers = HeaderMap::new();
        for (k, v) in &opts.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| BuildError(format!("invalid header name `{k}`")))?;
            let mut value = HeaderValue::from_str(v.expose())
                .map_err(|_| BuildError(format!("invalid value for header `{k}`")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        if let Some(auth) = &opts.auth {
            let mut value = HeaderValue::from_str(&auth.header_value()).map_err(|_| {
                BuildError("credentials contain characters not allowed in a header".into())
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let mut builder = Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(Duration::from_secs(5).min(opts.timeout))
            .default_headers(headers)
            .user_agent(concat!("kco/", env!("CARGO_PKG_VERSION")))
            .pool_max_idle_per_host(64);
        if let Some(ca) = &opts.tls.ca_pem {
            for cert in reqwest::Certificate::from_pem_bundle(ca)
                .map_err(|e| BuildError(format!("cannot read the CA file: {e}")))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        if let Some(id) = &opts.tls.identity_pem {
            let identity = reqwest::Identity::from_pem(id.expose().as_bytes()).map_err(|e| {
                BuildError(format!("cannot read the client certificate or key: {e}"))
            })?;
            builder = builder.identity(identity);
        }
        if opts.tls.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let client = builder
            .build()
            .map_err(|e| BuildError(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpConnect {
            client,
            urls: opts
                .urls
                .iter()
                .map(|u| u.trim_end_matches('/').to_string())
                .collect(),
            current: AtomicUsize::new(0),
        })
    }

    /// Sends a request to the current worker, moving on to the next URL while workers cannot
    /// be reached. Returns the response body decoded as JSON (`Null` for an empty body).
    fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value> {
        let start = self.current.load(Ordering::Relaxed);
        let mut last = None;
        for i in 0..self.urls.len() {
            let idx = (start + i) % self.urls.len();
            let url = format!("{}{}", self.urls[idx], path);
            let mut req: RequestBuilder = self.client.request(method.clone(), &url);
            if let Some(b) = body {
                req = req.json(b);
            }
            match req.send() {
                Ok(resp) => {
                    self.current.store(idx, Ordering::Relaxed);
                    return decode(method.as_str(), &url, resp);
                }
                Err(e) => {
                    let err = transport_error(method.as_str(), &url, &e);
                    if !err.is_unreachable() {
                        return Err(err);
                    }
                    last = Some(err);
                }
            }
        }
        Err(last.expect("at least one URL"))
    }

    fn path(name: &str) -> String {
        format!("/connectors/{}", encode(name))
    }
}

/// Splits `user:password@` off a URL: the URL without it, and the credentials as basic auth.
fn split_userinfo(raw: &str) -> std::result::Result<(String, Option<Auth>), BuildError> {
    let mut url = url::Url::parse(raw)
        .map_err(|e| BuildError(format!("invalid worker URL `{}`: {e}", redact_url(raw))))?;
    if url.username().is_empty() && url.password().is_none() {
        return Ok((raw.to_string(), None));
    }
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let auth = Auth::Basic {
        username: decode(url.username()),
        password: Secret::new(decode(url.password().unwrap_or(""))),
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Ok((url.to_string(), Some(auth)))
}

/// A URL fit for a message: anything between `://` and `@` is dropped.
pub fn redact_url(raw: &str) -> String {
    match (raw.find("://"), raw.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}{}", &raw[..s + 3], &raw[at + 1..]),
        _ => raw.to_string(),
    }
}

fn encode(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

fn transport_error(method: &str, url: &str, e: &reqwest::Error) -> ClientError {
    let timeout = e.is_timeout();
    let connect = e.is_connect();
    let mut reason = if connect {
        "cannot connect".to_string()
    } else if timeout {
        "request timed out".to_string()
    } else {
        "request failed".to_string()
    };
    // The innermost cause says what happened ("Connection refused (os error 111)"); the
    // layers above it only repeat that a request failed.
    let mut innermost = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        innermost = Some(s.to_string());
        source = s.source();
    }
    if let Some(cause) = innermost {
        reason.push_str(": ");
        reason.push_str(&cause);
    }
    ClientError::Transport {
        method: method.to_string(),
        url: url.to_string(),
        reason,
        maybe_sent: !connect,
        timeout,
    }
}

fn decode(method: &str, url: &str, resp: Response) -> Result<Value> {
    let status = resp.status();
    let text = resp.text().map_err(|e| transport_error(method, url, &e))?;
    let body: Option<Value> = if text.trim().is_empty() {
        None
    } else {
        serde_json::from_str(&text).ok()
    };
    if status.is_success() {
        return match (body, text.trim().is_empty()) {
            (Some(v), _) => Ok(v),
            (None, true) => Ok(Value::Null),
            (None, false) => Err(ClientError::Decode {
                method: method.into(),
                url: url.into(),
                detail: format!("body is not JSON: {}", truncate(&text)),
            }),
        };
    }
    let message = body
        .as_ref()
        .and_then(|b| b.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            let t = truncate(&text);
            if t.is_empty() {
                status.canonical_reason().unwrap_or("error").to_string()
            } else {
                t
            }
        });
    Err(ClientError::Http {
        method: method.into(),
        url: url.into(),
        status: status.as_u16(),
        message,
    })
}

fn truncate(s: &str) -> String {
    let s = s.trim();
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s.to_string()
    }
}

fn bad(method: &str, url: String, detail: impl Into<String>) -> ClientError {
    ClientError::Decode {
        method: method.into(),
        url,
        detail: detail.into(),
    }
}

impl Connect for HttpConnect {
    fn endpoint(&self) -> String {
        self.urls[self.current.load(Ordering::Relaxed) % self.urls.len()].clone()
    }

    fn server_info(&self) -> Result<ServerInfo> {
        let v = self.call(Method::GET, "/", None)?;
        serde_json::from_value(v)
            .map_err(|e| bad("GET", format!("{}/", self.endpoint()), e.to_string()))
    }

    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        let path = "/connectors?expand=status&expand=info";
        let v = self.call(Method::GET, path, None)?;
        let url = || format!("{}{}", self.endpoint(), path);
        let map = v
            .as_object()
            .ok_or_else(|| bad("GET", url(), "expected an object of connectors"))?;
        map.iter()
            .map(|(name, item)| {
                ConnectorListing::from_json(name, item)
                    .map(|l| (name.clone(), l))
                    .ok_or_else(|| bad("GET", url(), format!("cannot read connector `{name}`")))
            })
            .collect()
    }

    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        let path = format!("{}/status", Self::path(name));
        let v = self.call(Method::GET, &path, None)?;
        ConnectorStatus::from_json(&v).ok_or_else(|| {
            bad(
                "GET",
                format!("{}{}", self.endpoint(), path),
                "cannot read status",
            )
        })
    }

    fn config(&self, name: &str) -> Result<BTreeMap<String, String>> {
        let path = format!("{}/config", Self::path(name));
        let v = self.call(Method::GET, &path, None)?;
        serde_json::from_value(v)
            .map_err(|e| bad("GET", format!("{}{}", self.endpoint(), path), e.to_string()))
    }

    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        let path = format!("{}/offsets", Self::path(name));
        let mut v = self.call(Method::GET, &path, None)?;
        let offsets = v.get_mut("offsets").map(Value::take).unwrap_or(Value::Null);
        // A partition whose removal the worker has not consumed yet is listed with a `null`
        // offset for a moment: it has no offset.
        let entries: Vec<PatchEntry> = serde_json::from_value(offsets)
            .map_err(|e| bad("GET", format!("{}{}", self.endpoint(), path), e.to_string()))?;
        Ok(entries
            .into_iter()
            .filter_map(|e| {
                e.offset.map(|offset| OffsetEntry {
                    partition: e.partition,
                    offset,
                })
            })
            .collect())
    }

    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<String> {
        let path = format!("{}/offsets", Self::path(name));
        let v = self.call(Method::PATCH, &path, Some(&json!({ "offsets": entries })))?;
        Ok(message_of(&v))
    }

    fn reset_offsets(&self, name: &str) -> Result<String> {
        let path = format!("{}/offsets", Self::path(name));
        let v = self.call(Method::DELETE, &path, None)?;
        Ok(message_of(&v))
    }

    fn stop(&self, name: &str) -> Result<()> {
        self.call(Method::PUT, &format!("{}/stop", Self::path(name)), None)
            .map(drop)
    }

    fn pause(&self, name: &str) -> Result<()> {
        self.call(Method::PUT, &format!("{}/pause", Self::path(name)), None)
            .map(drop)
    }

    fn resume(&self, name: &str) -> Result<()> {
        self.call(Method::PUT, &format!("{}/resume", Self::path(name)), None)
            .map(drop)
    }

    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        let mut body = json!({ "name": name, "config": config });
        if let Some(s) = initial_state {
            body["initial_state"] = json!(s.to_string());
        }
        self.call(Method::POST, "/connectors", Some(&body))
            .map(drop)
    }

    fn delete(&self, name: &str) -> Result<()> {
        self.call(Method::DELETE, &Self::path(name), None).map(drop)
    }

    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        let path = format!("/connector-plugins/{}/config", encode(class));
        let v = self.call(Method::GET, &path, None)?;
        serde_json::from_value(v)
            .map_err(|e| bad("GET", format!("{}{}", self.endpoint(), path), e.to_string()))
    }
}

fn message_of(v: &Value) -> String {
    v.get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
