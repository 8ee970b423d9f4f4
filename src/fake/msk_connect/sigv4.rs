//! The stand-in's check of AWS Signature Version 4, written from AWS's specification ("Create
//! a signed AWS API request": canonical request, string to sign, signing key) rather than
//! with the signing crate the client uses, so that the two can catch each other's mistakes.
//! Checked against AWS's published test suite (`get-vanilla` and its neighbours) below.
//!
//! A refusal is worded as AWS words it (403 and the exception type): an unknown access key
//! is `UnrecognizedClientException`; a wrong region, service, date or secret is
//! `InvalidSignatureException`, whose message shows the canonical request and string to
//! sign as AWS's does, never the secret.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// A refused request: status, exception type, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub error_type: &'static str,
    pub message: String,
}

fn refuse(error_type: &'static str, message: impl Into<String>) -> Refusal {
    Refusal {
        status: 403,
        error_type,
        message: message.into(),
    }
}

/// One key pair the stand-in accepts, with its session token for temporary credentials.
#[derive(Clone)]
pub struct TestKey {
    pub secret: String,
    pub session_token: Option<String>,
}

/// What a signature must be made with.
#[derive(Clone)]
pub struct Verifier {
    pub region: String,
    pub service: String,
    pub keys: BTreeMap<String, TestKey>,
    /// How far the request's time may be from the stand-in's (AWS: 5 minutes).
    pub max_skew: Duration,
}

/// The parts of a request a signature covers.
pub struct Signed<'a> {
    pub method: &'a str,
    /// Path and query as sent on the request line.
    pub target: &'a str,
    /// Every header, names lowercased.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
}

impl Signed<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Verifier {
    /// The access key id that signed `req`, or why it is refused.
    pub fn verify(&self, req: &Signed<'_>, now: SystemTime) -> Result<String, Refusal> {
        let Some(auth) = req.header("authorization") else {
            return Err(refuse(
                "MissingAuthenticationTokenException",
                "Missing Authentication Token",
            ));
        };
        let fields = parse_authorization(auth).ok_or_else(|| {
            refuse(
                "IncompleteSignatureException",
                format!(
                    "Authorization header requires 'Credential' parameter. Authorization header \
                     requires 'Signature' parameter. Authorization header requires \
                     'SignedHeaders' parameter. Authorization={}",
                    auth.split(',').next().unwrap_or("")
                ),
            )
        })?;
        let scope: Vec<&str> = fields.credential.split('/').collect();
        let [key_id, date, region, service, terminator] = scope[..] else {
            return Err(refuse(
                "IncompleteSignatureException",
                format!(
                    "Credential should be scoped to a valid region, not '{}'. ",
                    fields.credential
                ),
            ));
        };
        let Some(key) = self.keys.get(key_id) else {
            return Err(refuse(
                "UnrecognizedClientException",
                "The security token included in the request is invalid.",
            ));
        };
        if region != self.region {
            return Err(refuse(
                "InvalidSignatureException",
                format!("Credential should be scoped to a valid region, not '{region}'. "),
            ));
        }
        if service != self.service {
            return Err(refuse(
                "InvalidSignatureException",
                format!(
                    "Credential should be scoped to correct service: '{}'. ",
                    self.service
                ),
            ));
        }
        if terminator != "aws4_request" {
            return Err(refuse(
                "InvalidSignatureException",
                format!(
                    "Credential should be scoped with a valid terminator: 'aws4_request', not \
                     '{terminator}'. "
                ),
            ));
        }
        let Some(amz_date) = req.header("x-amz-date") else {
            return Err(refuse(
                "IncompleteSignatureException",
                "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' \
                 header.",
            ));
        };
        if amz_date.get(..8) != Some(date) {
            return Err(refuse(
                "InvalidSignatureException",
                format!(
                    "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of \
                     date from HTTP: '{date}' != '{}', from '{amz_date}'.",
                    amz_date.get(..8).unwrap_or(amz_date)
                ),
            ));
        }
        let Some(signed_at) = parse_amz_date(amz_date) else {
            return Err(refuse(
                "IncompleteSignatureException",
                format!("Date must be in ISO-8601 'basic format'. Got '{amz_date}'."),
            ));
        };
        let skew = self.max_skew;
        if signed_at + skew < now {
            return Err(refuse(
                "InvalidSignatureException",
                format!(
                    "Signature expired: {amz_date} is now earlier than {} ({} - {} min.)",
                    amz(now - skew),
                    amz(now),
                    skew.as_secs() / 60
                ),
            ));
        }
        if signed_at > now + skew {
            return Err(refuse(
                "InvalidSignatureException",
                format!(
                    "Signature not yet current: {amz_date} is still later than {} ({} + {} min.)",
                    amz(now + skew),
                    amz(now),
                    skew.as_secs() / 60
                ),
            ));
        }
        if let Some(token) = &key.session_token {
            if req.header("x-amz-security-token") != Some(token.as_str()) {
                return Err(refuse(
                    "UnrecognizedClientException",
                    "The security token included in the request is invalid.",
                ));
            }
        }
        let signed_headers: Vec<&str> = fields.signed_headers.split(';').collect();
        if !signed_headers.contains(&"host") {
            return Err(refuse(
                "InvalidSignatureException",
                "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
            ));
        }
        let creq = canonical_request(req, &signed_headers);
        let scope = format!("{date}/{region}/{service}/aws4_request");
        let to_sign = string_to_sign(amz_date, &scope, &creq);
        let expected = signature(&key.secret, date, region, service, &to_sign);
        if !same(&expected, fields.signature) {
            return Err(refuse(
                "InvalidSignatureException",
                format!(
                    "The request signature we calculated does not match the signature you \
                     provided. Check your AWS Secret Access Key and signing method. Consult the \
                     service documentation for details.\n\nThe Canonical String for this request \
                     should have been\n'{creq}'\n\nThe String-to-Sign should have been\n\
                     '{to_sign}'\n"
                ),
            ));
        }
        Ok(key_id.to_string())
    }
}

struct AuthFields<'a> {
    credential: &'a str,
    signed_headers: &'a str,
    signature: &'a str,
}

/// `AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`.
fn parse_authorization(value: &str) -> Option<AuthFields<'_>> {
    let rest = value.strip_prefix("AWS4-HMAC-SHA256 ")?;
    let (mut credential, mut signed_headers, mut signature) = (None, None, None);
    for part in rest.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        match k {
            "Credential" => credential = Some(v),
            "SignedHeaders" => signed_headers = Some(v),
            "Signature" => signature = Some(v),
            _ => {}
        }
    }
    Some(AuthFields {
        credential: credential?,
        signed_headers: signed_headers?,
        signature: signature?,
    })
}

/// AWS's URI encoding: every byte but the unreserved ones percent-encoded (upper-case hex),
/// `/` kept when `keep_slash`.
fn uri_encode(bytes: &[u8], keep_slash: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The canonical request. The path is encoded once more as it came (every service but S3
/// signs the already-encoded path encoded again); the query's names and values are decoded,
/// encoded strictly and sorted.
pub(crate) fn canonical_request(req: &Signed<'_>, signed_headers: &[&str]) -> String {
    let (path, query) = req.target.split_once('?').unwrap_or((req.target, ""));
    let path = if path.is_empty() { "/" } else { path };
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let decode = |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
            (uri_encode(&decode(k), false), uri_encode(&decode(v), false))
        })
        .collect();
    pairs.sort();
    let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut headers = String::new();
    for name in signed_headers {
        let values: Vec<String> = req
            .headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        headers.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        req.method,
        uri_encode(path.as_bytes(), true),
        query.join("&"),
        headers,
        signed_headers.join(";"),
        hex::encode(Sha256::digest(req.body))
    )
}

fn string_to_sign(amz_date: &str, scope: &str, creq: &str) -> String {
    format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex::encode(Sha256::digest(creq.as_bytes()))
    )
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn signature(secret: &str, date: &str, region: &str, service: &str, to_sign: &str) -> String {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    let k_signing = hmac(&k_service, b"aws4_request");
    hex::encode(hmac(&k_signing, to_sign.as_bytes()))
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// `20150830T123600Z`.
fn parse_amz_date(s: &str) -> Option<SystemTime> {
    let iso = format!(
        "{}-{}-{}T{}:{}:{}Z",
        s.get(0..4)?,
        s.get(4..6)?,
        s.get(6..8)?,
        s.get(9..11)?,
        s.get(11..13)?,
        s.get(13..15)?
    );
    if s.len() != 16 || !s.ends_with('Z') || s.as_bytes()[8] != b'T' {
        return None;
    }
    let t = chrono::DateTime::parse_from_rfc3339(&iso).ok()?;
    let secs = u64::try_from(t.timestamp()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// `t` as `20150830T123600Z`.
fn amz(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let dt =
        chrono::DateTime::from_timestamp(i64::try_from(secs).unwrap_or(0), 0).unwrap_or_default();
    dt.format("%Y%m%dT%H%M%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    /// AWS's test suite: key AKIDEXAMPLE, 2015-08-30 12:36:00 UTC, us-east-1, service
    /// `service`, host example.amazonaws.com.
    fn suite() -> (Verifier, SystemTime) {
        let keys = BTreeMap::from([(
            "AKIDEXAMPLE".to_string(),
            TestKey {
                secret: SECRET.into(),
                session_token: None,
            },
        )]);
        let verifier = Verifier {
            region: "us-east-1".into(),
            service: "service".into(),
            keys,
            max_skew: Duration::from_secs(300),
        };
        (verifier, parse_amz_date("20150830T123600Z").unwrap())
    }

    fn headers(signature: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut h = vec![
            ("host".to_string(), "example.amazonaws.com".to_string()),
            ("x-amz-date".to_string(), "20150830T123600Z".to_string()),
        ];
        for (k, v) in extra {
            h.push((k.to_string(), v.to_string()));
        }
        h.push((
            "authorization".to_string(),
            format!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature={signature}"
            ),
        ));
        h
    }

    fn check(method: &str, target: &str, signature: &str) -> Result<String, Refusal> {
        let (verifier, now) = suite();
        let h = headers(signature, &[]);
        let req = Signed {
            method,
            target,
            headers: &h,
            body: b"",
        };
        verifier.verify(&req, now)
    }

    /// The published signatures of get-vanilla, get-vanilla-query-order-key-case
    /// (parameters sorted), get-utf8 (a path of UTF-8 bytes, encoded), post-vanilla and
    /// post-vanilla-query.
    #[test]
    fn accepts_the_signatures_of_the_aws_test_suite() {
        for (method, target, signature) in [
            (
                "GET",
                "/",
                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
            ),
            (
                "GET",
                "/?Param2=value2&Param1=value1",
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
            ),
            (
                "GET",
                "/\u{1234}",
                "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
            ),
            (
                "POST",
                "/",
                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
            ),
            (
                "POST",
                "/?Param1=value1",
                "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11",
            ),
        ] {
            assert_eq!(
                check(method, target, signature),
                Ok("AKIDEXAMPLE".to_string()),
                "{method} {target}"
            );
        }
    }

    /// One changed byte anywhere the signature covers, a wrong secret, region or clock:
    /// each refused with AWS's 403 and wording, and no message holds the secret.
    #[test]
    fn refuses_what_the_signature_does_not_cover_as_aws_words_it() {
        let good = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
        let tampered = check("GET", "/?x=1", good).unwrap_err();
        assert_eq!(
            (tampered.status, tampered.error_type),
            (403, "InvalidSignatureException")
        );
        assert!(tampered
            .message
            .starts_with("The request signature we calculated does not match"));
        assert!(tampered
            .message
            .contains("GET\n/\nx=1\nhost:example.amazonaws.com\n"));
        assert!(!tampered.message.contains(SECRET));
        let deleted = check("DELETE", "/", good).unwrap_err();
        assert_eq!(deleted.error_type, "InvalidSignatureException");

        let (mut verifier, now) = suite();
        let h = headers(good, &[]);
        let req = Signed {
            method: "GET",
            target: "/",
            headers: &h,
            body: b"",
        };
        let later = now + Duration::from_secs(301);
        let expired = verifier.verify(&req, later).unwrap_err();
        assert!(
            expired.message.starts_with(
                "Signature expired: 20150830T123600Z is now earlier than 20150830T123601Z"
            ),
            "{}",
            expired.message
        );
        assert!(verifier
            .verify(&req, now + Duration::from_secs(300))
            .is_ok());
        let early = verifier.verify(&req, now - Duration::from_secs(301));
        assert!(early
            .unwrap_err()
            .message
            .starts_with("Signature not yet current"));

        verifier.region = "eu-west-1".into();
        let region = verifier.verify(&req, now).unwrap_err();
        assert_eq!(
            region.message,
            "Credential should be scoped to a valid region, not 'us-east-1'. "
        );
        let (mut verifier, _) = suite();
        verifier.keys.get_mut("AKIDEXAMPLE").unwrap().secret = "other".into();
        let secret = verifier.verify(&req, now).unwrap_err();
        assert_eq!(secret.error_type, "InvalidSignatureException");
        verifier.keys.clear();
        let unknown = verifier.verify(&req, now).unwrap_err();
        assert_eq!(
            (unknown.error_type, unknown.message.as_str()),
            (
                "UnrecognizedClientException",
                "The security token included in the request is invalid."
            )
        );
        let none = Signed {
            method: "GET",
            target: "/",
            headers: &h[..2],
            body: b"",
        };
        let missing = suite().0.verify(&none, now).unwrap_err();
        assert_eq!(missing.error_type, "MissingAuthenticationTokenException");
    }
}
