//! The HTTP [`Transport`], with failover across a cluster's worker URLs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::blocking::Client;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};

use super::transport::{decode_response, Body, Method, Request, Transport};
use super::{Auth, ClientError, Result, Secret};

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

/// A construction error: bad TLS material or header.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

/// Whether any worker URL is HTTPS, which needs the system's trusted CAs.
fn needs_trust_store(urls: &[String]) -> bool {
    urls.iter().any(|u| {
        u.trim_start()
            .get(..6)
            .is_some_and(|s| s.eq_ignore_ascii_case("https:"))
    })
}

/// A Connect cluster over HTTP(S).
#[derive(Debug)]
pub struct HttpTransport {
    client: Client,
    urls: Vec<String>,
    current: AtomicUsize,
    /// `timeoutSeconds`: how long one request may take (for messages).
    timeout: Duration,
}

impl HttpTransport {
    pub fn new(mut opts: HttpOptions) -> std::result::Result<Self, BuildError> {
        if opts.urls.is_empty() {
            return Err(BuildError("no worker URL configured".into()));
        }
        opts.move_url_credentials()?;
        let mut builder = Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(Duration::from_secs(5).min(opts.timeout))
            .default_headers(headers(&opts)?)
            .user_agent(concat!("kco/", env!("CARGO_PKG_VERSION")))
            .pool_max_idle_per_host(64);
        if !needs_trust_store(&opts.urls) {
            // Reading the system's CA certificates (over a hundred files) is most of the
            // start-up of a command; plain HTTP has no use for them.
            builder = builder
                .tls_built_in_root_certs(false)
                .tls_built_in_native_certs(false);
        }
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
        let urls = opts.urls.iter();
        Ok(HttpTransport {
            client,
            urls: urls.map(|u| u.trim_end_matches('/').to_string()).collect(),
            current: AtomicUsize::new(0),
            timeout: opts.timeout,
        })
    }

    fn send_to(&self, url: &str, req: &Request) -> std::result::Result<Body, ClientError> {
        let mut builder = self.client.request(reqwest_method(req.method), url);
        if let Some(b) = &req.body {
            builder = builder
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(b.clone());
        }
        let resp = builder
            .send()
            .map_err(|e| transport_error(req, url, &e, self.timeout))?;
        let status = resp.status().as_u16();
        let retry_after = match status {
            429 | 503 => resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, crate::clock::real_now())),
            _ => None,
        };
        // The body as it came, checked as UTF-8 in place (a 10 MB answer is not copied);
        // anything else is decoded lossily, as `text()` would.
        let bytes = resp
            .bytes()
            .map_err(|e| transport_error(req, url, &e, self.timeout))?;
        let text = String::from_utf8(Vec::from(bytes))
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        decode_response(req, url, status, text).map_err(|e| e.with_retry_after(retry_after))
    }
}

impl Transport for HttpTransport {
    /// Sends to the current worker, moving on to the next URL while workers cannot be
    /// reached, or (for an idempotent request, which may be sent twice) give no answer
    /// within `timeoutSeconds` or an answer that is not HTTP.
    fn send(&self, req: &Request) -> Result<Body> {
        let start = self.current.load(Ordering::Relaxed);
        let mut last = None;
        for i in 0..self.urls.len() {
            let idx = (start + i) % self.urls.len();
            let url = format!("{}{}", self.urls[idx], req.path);
            match self.send_to(&url, req) {
                Err(e)
                    if e.is_unreachable()
                        || (req.idempotent && (e.is_silent() || e.is_not_http())) =>
                {
                    last = Some(e)
                }
                answered => {
                    self.current.store(idx, Ordering::Relaxed);
                    return answered;
                }
            }
        }
        Err(last.expect("at least one URL"))
    }

    fn endpoint(&self) -> String {
        self.urls[self.current.load(Ordering::Relaxed) % self.urls.len()].clone()
    }
}

/// The method, as reqwest names it.
pub(super) fn reqwest_method(method: Method) -> reqwest::Method {
    match method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    }
}

/// A `Retry-After` value: delay-seconds, or an HTTP date (RFC 9110: IMF-fixdate; a date in
/// the past is no wait). `None` when it is neither.
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // `Sun, 06 Nov 1994 08:49:37 GMT`, read as the RFC 3339 time it names.
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? + 1;
    let day: u32 = day.parse().ok()?;
    let when = super::parse_time(&format!("{year}-{month:02}-{day:02}T{time}Z"))?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Configured headers and credentials, marked sensitive so that no debug output shows them.
fn headers(opts: &HttpOptions) -> std::result::Result<HeaderMap, BuildError> {
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
    Ok(headers)
}

/// Whether `raw` is a worker URL kco can talk to (see [`worker_url`]).
pub fn check_worker_url(raw: &str) -> std::result::Result<(), BuildError> {
    worker_url(raw).map(|_| ())
}

/// A worker URL: `http://` or `https://`. Without a scheme (`127.0.0.1:8083`,
/// `connect:8083`), the error suggests the URL with `http://`.
fn worker_url(raw: &str) -> std::result::Result<url::Url, BuildError> {
    let shown = redact_url(raw);
    let guess = || format!("; did you mean `http://{shown}`?");
    match url::Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(u),
        Ok(_) if !raw.contains("://") => Err(BuildError(format!(
            "invalid worker URL `{shown}`: no http:// or https://{}",
            guess()
        ))),
        Ok(u) => Err(BuildError(format!(
            "invalid worker URL `{shown}`: the scheme is `{}`; kco talks http:// or https://",
            u.scheme()
        ))),
        Err(url::ParseError::RelativeUrlWithoutBase) => Err(BuildError(format!(
            "invalid worker URL `{shown}`: no http:// or https://{}",
            guess()
        ))),
        Err(e) => Err(BuildError(format!("invalid worker URL `{shown}`: {e}"))),
    }
}

/// Splits `user:password@` off a URL: the URL without it, and the credentials as basic auth.
/// Both are percent-decoded (RFC 3986), so `%40` is `@` and `+` stays `+`.
fn split_userinfo(raw: &str) -> std::result::Result<(String, Option<Auth>), BuildError> {
    let mut url = worker_url(raw)?;
    if url.username().is_empty() && url.password().is_none() {
        return Ok((raw.to_string(), None));
    }
    let decode = |s: &str| -> std::result::Result<String, BuildError> {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| {
                BuildError(format!(
                    "the credentials in worker URL `{}` are not UTF-8 once decoded",
                    redact_url(raw)
                ))
            })
    };
    let auth = Auth::Basic {
        username: decode(url.username())?,
        password: Secret::new(decode(url.password().unwrap_or(""))?),
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

/// A request that got no answer, said as the innermost cause says it.
pub(super) fn transport_error(
    req: &Request,
    url: &str,
    e: &reqwest::Error,
    limit: Duration,
) -> ClientError {
    let timeout = e.is_timeout();
    let connect = e.is_connect();
    let mut reason = if connect {
        "cannot connect".to_string()
    } else if timeout {
        // A listener that accepts and never answers, or a worker stuck: the bound is the
        // user's to change.
        format!(
            "no answer within {} (`timeoutSeconds`)",
            humantime::format_duration(limit)
        )
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
    ClientError::transport(req, url, reason, !connect, timeout)
}

#[cfg(test)]
mod tests;
