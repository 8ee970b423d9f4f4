//! SASL/OAUTHBEARER with a token from an OAuth 2 / OIDC token endpoint (`kafka.sasl.mechanism:
//! OAUTHBEARER`): the client credentials grant (RFC 6749, 4.4: `POST` of
//! `grant_type=client_credentials` and the optional `scope`, the client's id and secret in an
//! HTTP Basic `Authorization` header, 2.3.1), the answer's `access_token` sent as the
//! OAUTHBEARER client message (`msk_iam::initial_response`), kept until a fifth of its
//! `expires_in` is left (an answer without `expires_in`: one hour).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::client::Secret;

/// How long a token without `expires_in` is taken to live.
const DEFAULT_LIFE: Duration = Duration::from_secs(3600);

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// A cluster's token endpoint and client, and the last token it gave.
pub struct Oidc {
    /// The token endpoint's URL (HTTPS, or HTTP to a loopback address).
    pub endpoint: String,
    pub client_id: String,
    client_secret: Secret,
    pub scope: Option<String>,
    timeout: Duration,
    clock: Clock,
    cache: Mutex<Option<(Secret, SystemTime, SystemTime)>>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Oidc {
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: Secret,
        scope: Option<String>,
        timeout: Duration,
    ) -> Self {
        Oidc {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret,
            scope,
            timeout,
            clock: Arc::new(crate::clock::real_now),
            cache: Mutex::new(None),
        }
    }

    /// The same, telling the time with `clock`.
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The token for a new connection: the last one while more than a fifth of its life is
    /// left, else a new one from the endpoint. The error names the endpoint, never a secret.
    pub fn token(&self) -> Result<Secret, String> {
        let now = (self.clock)();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((token, got, expires)) = cache.as_ref() {
            let life = expires.duration_since(*got).unwrap_or_default();
            if now + life / 5 < *expires {
                return Ok(token.clone());
            }
        }
        let (token, life) = self.fetch()?;
        *cache = Some((token.clone(), now, now + life));
        Ok(token)
    }

    fn fetch(&self) -> Result<(Secret, Duration), String> {
        let at = |what: String| format!("token endpoint {}: {what}", self.endpoint);
        let client = reqwest::blocking::Client::builder()
            .timeout(self.timeout)
            .use_rustls_tls()
            .build()
            .map_err(|e| at(e.to_string()))?;
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(s) = &self.scope {
            form.push(("scope", s.as_str()));
        }
        // RFC 6749, 2.3.1: the id and secret form-encoded, then Basic.
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let reply = client
            .post(&self.endpoint)
            .basic_auth(enc(&self.client_id), Some(enc(self.client_secret.expose())))
            .form(&form)
            .send()
            .map_err(|e| at(format!("request failed: {}", without_url(&e))))?;
        let status = reply.status();
        let body = reply.text().unwrap_or_default();
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        if !status.is_success() {
            // RFC 6749, 5.2: `error` and `error_description`.
            let said = [&json["error"], &json["error_description"]]
                .iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(": ");
            return Err(at(format!(
                "HTTP {status}{}",
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({said})")
                }
            )));
        }
        let token = json["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| at("the answer has no `access_token`".into()))?;
        let life = json["expires_in"]
            .as_u64()
            .map_or(DEFAULT_LIFE, Duration::from_secs);
        Ok((Secret::new(token), life))
    }
}

/// reqwest's error without the URL it repeats.
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(u) = e.url() {
        text = text.replace(&format!(" ({u})"), "").replace(u.as_str(), "");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    /// A token endpoint on loopback answering each request with the next of `answers`
    /// (status, body); the requests it got, as text.
    fn endpoint(answers: Vec<(u16, String)>) -> (String, std::sync::mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for ((status, body), conn) in answers.into_iter().zip(listener.incoming()) {
                let mut conn = conn.unwrap();
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut head = String::new();
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                    head.push_str(&line);
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body_in = vec![0; len];
                reader.read_exact(&mut body_in).unwrap();
                tx.send(format!("{head}{}", String::from_utf8_lossy(&body_in)))
                    .unwrap();
                write!(
                    conn,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
        });
        (url, rx)
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    /// The client credentials grant as RFC 6749 has it; the token kept until a fifth of its
    /// life is left, then asked again.
    #[test]
    fn the_token_comes_from_the_client_credentials_grant_and_is_kept_until_near_its_expiry() {
        let (url, requests) = endpoint(vec![
            (
                200,
                r#"{"access_token":"tok-1","token_type":"Bearer","expires_in":100}"#.into(),
            ),
            (
                200,
                r#"{"access_token":"tok-2","token_type":"Bearer"}"#.into(),
            ),
        ]);
        let now = Arc::new(Mutex::new(at(1_000)));
        let n = now.clone();
        let oidc = Oidc::new(
            url,
            "kco client",
            Secret::new("s3cret&"),
            Some("kafka".into()),
            Duration::from_secs(5),
        )
        .with_clock(move || *n.lock().unwrap());
        assert_eq!(oidc.token().unwrap().expose(), "tok-1");
        let request = requests.recv().unwrap();
        assert!(request.starts_with("POST /token "), "{request}");
        // base64("kco+client:s3cret%26")
        assert!(
            request.contains("authorization: Basic a2NvK2NsaWVudDpzM2NyZXQlMjY="),
            "{request}"
        );
        assert!(
            request.ends_with("grant_type=client_credentials&scope=kafka"),
            "{request}"
        );
        *now.lock().unwrap() = at(1_079);
        assert_eq!(oidc.token().unwrap().expose(), "tok-1", "kept");
        *now.lock().unwrap() = at(1_081);
        assert_eq!(oidc.token().unwrap().expose(), "tok-2", "asked again");
        assert!(!format!("{oidc:?}").contains("s3cret"));
    }

    /// A refusal names the endpoint and what it said (RFC 6749, 5.2), never the secret.
    #[test]
    fn a_refusal_names_the_endpoint_and_its_error() {
        let (url, _requests) = endpoint(vec![(
            401,
            r#"{"error":"invalid_client","error_description":"bad secret"}"#.into(),
        )]);
        let oidc = Oidc::new(
            url.clone(),
            "kco",
            Secret::new("s3cret"),
            None,
            Duration::from_secs(5),
        );
        let e = oidc.token().unwrap_err();
        assert!(
            e.contains(&url) && e.contains("401") && e.contains("invalid_client: bad secret"),
            "{e}"
        );
        assert!(!e.contains("s3cret"), "{e}");
    }
}
