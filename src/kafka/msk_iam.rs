//! Amazon MSK's IAM authentication, as SASL/OAUTHBEARER (RFC 7628) with MSK's token: a SigV4
//! presigned URL of `https://kafka.<region>.amazonaws.com/?Action=kafka-cluster%3AConnect`
//! (signing name `kafka-cluster`, signed header `host`, `X-Amz-Expires` 900), a `User-Agent`
//! parameter added after signing, the whole base64url-encoded without padding: what AWS's
//! signer libraries (aws-msk-iam-sasl-signer-go, -python, -js, -net) send, and what MSK's
//! IAM listener checks. Credentials and the region come from `crate::aws`.
//!
//! A token is kept with its expiry (its signing time plus 900 s, or the credentials' own
//! expiry if sooner) and made again, with credentials asked again, once less than a fifth of
//! its life is left: each new connection authenticates, and a long run's connections opened
//! late get a fresh token.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine;

use crate::aws::{CredentialSource, CredentialsError, Found};
use crate::client::Secret;

/// SigV4's service name for MSK's Kafka.
pub const SIGNING_NAME: &str = "kafka-cluster";
/// How long a token is valid (`X-Amz-Expires`), as in AWS's signers.
pub const EXPIRES: Duration = Duration::from_secs(900);
/// The action the token allows.
pub const ACTION: &str = "kafka-cluster:Connect";

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;
type Provider = Arc<dyn Fn(&str) -> Result<Found, CredentialsError> + Send + Sync>;

/// Tokens for one cluster's `kafka.sasl` (`mechanism: AWS_MSK_IAM`): its region, where
/// credentials come from, the last token made.
pub struct MskIam {
    pub region: String,
    pub source: CredentialSource,
    clock: Clock,
    provider: Provider,
    cache: Mutex<Option<Token>>,
}

/// A token, and what a message may say of it.
#[derive(Clone)]
pub struct Token {
    value: Secret,
    /// When it was signed (to the second, as `X-Amz-Date` says).
    signed: SystemTime,
    /// When the broker stops taking it.
    pub expires: SystemTime,
    /// Where its credentials came from ([`Found::from`]).
    pub from: String,
}

impl Token {
    /// The token itself: for the SASL message only.
    pub fn expose(&self) -> &str {
        self.value.expose()
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("value", &self.value)
            .field("expires", &self.expires)
            .field("from", &self.from)
            .finish()
    }
}

impl std::fmt::Debug for MskIam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MskIam")
            .field("region", &self.region)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A token could not be made: no credentials, or they could not sign.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TokenError {
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    #[error("cannot sign the MSK IAM token with the AWS credentials from {from}: {why}")]
    Sign { from: String, why: String },
}

impl MskIam {
    /// Tokens for `region`, with credentials from `source` and the machine's clock.
    pub fn new(region: impl Into<String>, source: CredentialSource) -> Self {
        let from = source.clone();
        MskIam {
            region: region.into(),
            source,
            clock: Arc::new(crate::clock::real_now),
            provider: Arc::new(move |region| crate::aws::credentials(&from, region)),
            cache: Mutex::new(None),
        }
    }

    /// The same, telling the time with `clock` (a token signed in the past, in tests).
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The same, with credentials from `provider` (given the region) instead of `source`.
    pub fn with_credentials(
        mut self,
        provider: impl Fn(&str) -> Result<Found, CredentialsError> + Send + Sync + 'static,
    ) -> Self {
        self.provider = Arc::new(provider);
        self
    }

    /// The token for a new connection: the last one while more than a fifth of its life is
    /// left, else a new one (credentials asked again).
    pub fn token(&self) -> Result<Token, TokenError> {
        let now = (self.clock)();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = cache.as_ref() {
            let life = t.expires.duration_since(t.signed).unwrap_or_default();
            if now + life / 5 < t.expires {
                return Ok(t.clone());
            }
        }
        let found = (self.provider)(&self.region)?;
        let value =
            sign(&found.credentials, &self.region, now).map_err(|why| TokenError::Sign {
                from: found.from.clone(),
                why,
            })?;
        let signed = SystemTime::UNIX_EPOCH
            + Duration::from_secs(
                now.duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            );
        let expires = match found.credentials.expiry() {
            Some(e) if e < signed + EXPIRES => e,
            _ => signed + EXPIRES,
        };
        let token = Token {
            value: Secret::new(value),
            signed,
            expires,
            from: found.from,
        };
        *cache = Some(token.clone());
        Ok(token)
    }
}

/// The URL that is signed, of MSK's Kafka in `region`.
pub fn endpoint(region: &str) -> String {
    format!("https://kafka.{region}.amazonaws.com/?Action=kafka-cluster%3AConnect")
}

/// MSK's token, signed with `credentials` for `region` at `at`: the presigned URL with
/// `User-Agent`, base64url without padding.
pub fn sign(
    credentials: &crate::aws::Credentials,
    region: &str,
    at: SystemTime,
) -> Result<String, String> {
    use aws_sigv4::http_request::{
        sign, SignableBody, SignableRequest, SignatureLocation, SigningSettings,
    };
    use aws_sigv4::sign::v4;

    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(EXPIRES);
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SIGNING_NAME)
        .time(at)
        .settings(settings)
        .build()
        .map_err(|e| e.to_string())?;
    let mut url = url::Url::parse(&endpoint(region)).map_err(|e| e.to_string())?;
    let request = SignableRequest::new(
        "GET",
        url.as_str(),
        std::iter::empty(),
        SignableBody::Bytes(&[]),
    )
    .map_err(|e| e.to_string())?;
    let (instructions, _) = sign(request, &params.into())
        .map_err(|e| e.to_string())?
        .into_parts();
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in instructions.params() {
            query.append_pair(name, value);
        }
        query.append_pair("User-Agent", concat!("kco/", env!("CARGO_PKG_VERSION")));
    }
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url.as_str()))
}

/// OAUTHBEARER's one client message (RFC 7628, 3.1) carrying `token`: `n,,`, then
/// `\x01auth=Bearer <token>\x01\x01`.
pub fn initial_response(token: &str) -> Vec<u8> {
    format!("n,,\x01auth=Bearer {token}\x01\x01").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn creds(token: Option<&str>) -> crate::aws::Credentials {
        crate::aws::Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            token.map(str::to_string),
            None,
            "test",
        )
    }

    fn decode(token: &str) -> url::Url {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .expect("base64url without padding");
        url::Url::parse(std::str::from_utf8(&bytes).unwrap()).unwrap()
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    /// The token is MSK's presigned URL, checked against a SigV4 signature computed here by
    /// the specification's steps (canonical request, string to sign, derived key), not by
    /// aws-sigv4.
    #[test]
    fn the_token_is_a_presigned_url_whose_signature_the_specification_recomputes() {
        // 2026-12-07T23:10:00Z
        let when = at(1_796_685_000);
        let token = sign(&creds(Some("SESSION+/=token")), "eu-west-1", when).unwrap();
        assert!(!token.contains('=') && !token.contains('+') && !token.contains('/'));
        let url = decode(&token);
        assert_eq!(url.host_str(), Some("kafka.eu-west-1.amazonaws.com"));
        assert_eq!(url.path(), "/");
        let q: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!(q["Action"], ACTION);
        assert_eq!(q["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
        assert_eq!(
            q["X-Amz-Credential"],
            "AKIDEXAMPLE/20261207/eu-west-1/kafka-cluster/aws4_request"
        );
        assert_eq!(q["X-Amz-Date"], "20261207T231000Z");
        assert_eq!(q["X-Amz-Expires"], "900");
        assert_eq!(q["X-Amz-SignedHeaders"], "host");
        assert_eq!(q["X-Amz-Security-Token"], "SESSION+/=token");
        assert!(q["User-Agent"].starts_with("kco/"));
        // The signature, as the broker's validator computes it.
        let enc = |s: &str| percent_encoding::utf8_percent_encode(s, &SIGV4_SET).to_string();
        let canonical_query = q
            .iter()
            .filter(|(k, _)| *k != "X-Amz-Signature" && *k != "User-Agent")
            .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
            .collect::<Vec<_>>()
            .join("&");
        let empty = hex::encode(sha256(b""));
        let canonical = format!(
            "GET\n/\n{canonical_query}\nhost:kafka.eu-west-1.amazonaws.com\n\nhost\n{empty}"
        );
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n20261207T231000Z\n20261207/eu-west-1/kafka-cluster/aws4_request\n{}",
            hex::encode(sha256(canonical.as_bytes()))
        );
        let mut key = hmac(b"AWS4wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", b"20261207");
        for part in ["eu-west-1", "kafka-cluster", "aws4_request"] {
            key = hmac(&key, part.as_bytes());
        }
        assert_eq!(
            q["X-Amz-Signature"],
            hex::encode(hmac(&key, to_sign.as_bytes()))
        );
    }

    /// RFC 3986's unreserved characters stay; everything else is percent-encoded (SigV4).
    const SIGV4_SET: percent_encoding::AsciiSet = percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');

    fn sha256(b: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        sha2::Sha256::digest(b).to_vec()
    }

    fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        let mut k = if key.len() > 64 {
            sha256(key)
        } else {
            key.to_vec()
        };
        k.resize(64, 0);
        let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
        let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
        let inner = sha2::Sha256::new()
            .chain_update(&ipad)
            .chain_update(msg)
            .finalize();
        sha2::Sha256::new()
            .chain_update(&opad)
            .chain_update(inner)
            .finalize()
            .to_vec()
    }

    #[test]
    fn the_initial_response_is_rfc_7628s() {
        assert_eq!(initial_response("abc"), b"n,,\x01auth=Bearer abc\x01\x01");
    }

    /// The token is kept while more than a fifth of its 900 s is left, then made again with
    /// credentials asked again; temporary credentials that expire sooner bound it.
    #[test]
    fn a_token_is_kept_until_near_its_expiry_then_made_again() {
        let now = Arc::new(Mutex::new(at(1_796_685_000)));
        let asked = Arc::new(AtomicUsize::new(0));
        let expiry = Arc::new(Mutex::new(None::<SystemTime>));
        let (n, a, x) = (now.clone(), asked.clone(), expiry.clone());
        let iam = MskIam::new("eu-west-1", CredentialSource::DefaultChain)
            .with_clock(move || *n.lock().unwrap())
            .with_credentials(move |region| {
                assert_eq!(region, "eu-west-1");
                a.fetch_add(1, Ordering::SeqCst);
                let mut c = creds(None);
                if let Some(e) = *x.lock().unwrap() {
                    c = crate::aws::Credentials::new(
                        "AKIDEXAMPLE",
                        "s",
                        Some("t".into()),
                        Some(e),
                        "test",
                    );
                }
                Ok(Found {
                    credentials: c,
                    from: "the test".into(),
                })
            });
        let first = iam.token().unwrap();
        assert_eq!(first.expires, at(1_796_685_000 + 900));
        assert_eq!(first.from, "the test");
        *now.lock().unwrap() = at(1_796_685_000 + 700);
        let kept = iam.token().unwrap();
        assert_eq!(kept.expose(), first.expose());
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        *now.lock().unwrap() = at(1_796_685_000 + 721);
        let renewed = iam.token().unwrap();
        assert_ne!(renewed.expose(), first.expose());
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert_eq!(
            decode(renewed.expose())
                .query_pairs()
                .find(|(k, _)| k == "X-Amz-Date")
                .unwrap()
                .1,
            "20261207T232201Z"
        );
        // Credentials that expire in 100 s: the token is renewed with them.
        *expiry.lock().unwrap() = Some(at(1_796_686_500 + 100));
        *now.lock().unwrap() = at(1_796_686_500);
        let short = iam.token().unwrap();
        assert_eq!(short.expires, at(1_796_686_500 + 100));
        assert_eq!(asked.load(Ordering::SeqCst), 3);
        assert_eq!(
            iam.token().unwrap().expose(),
            short.expose(),
            "kept for now"
        );
        assert!(!format!("{short:?} {iam:?}").contains(short.expose()));
    }
}
