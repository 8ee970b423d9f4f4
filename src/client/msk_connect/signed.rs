//! The HTTP [`Transport`] of the MSK Connect API: each request signed with AWS Signature
//! Version 4 (service `kafkaconnect`) by AWS's own `aws-sigv4` crate, and each error answer
//! read as the API's (`{"message"}` with its type in the `x-amzn-ErrorType` header).

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4::SigningParams;
use reqwest::blocking::Client;
use reqwest::header::{HeaderValue, CONTENT_TYPE};

use crate::client::http::{parse_retry_after, reqwest_method, transport_error};
use crate::client::transport::{decode_response, Body, Request, Transport};
use crate::client::{BuildError, ClientError, Result};

/// The signing name of the MSK Connect API.
pub const SERVICE: &str = "kafkaconnect";

/// The header in which AWS's REST-JSON services name the error type.
pub const ERROR_TYPE_HEADER: &str = "x-amzn-ErrorType";

pub(super) struct Signed {
    client: Client,
    endpoint: String,
    region: String,
    credentials: Credentials,
    timeout: Duration,
}

impl Signed {
    pub fn new(
        endpoint: &str,
        region: &str,
        credentials: Credentials,
        timeout: Duration,
    ) -> std::result::Result<Self, BuildError> {
        let https = endpoint
            .get(..6)
            .is_some_and(|s| s.eq_ignore_ascii_case("https:"));
        let mut builder = Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(5).min(timeout))
            .user_agent(concat!("kco/", env!("CARGO_PKG_VERSION")));
        if !https {
            builder = builder
                .tls_built_in_root_certs(false)
                .tls_built_in_native_certs(false);
        }
        let client = builder
            .build()
            .map_err(|e| BuildError(format!("cannot build the HTTP client: {e}")))?;
        Ok(Signed {
            client,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            region: region.to_string(),
            credentials,
            timeout,
        })
    }

    /// The headers that sign `req` at `time`: `x-amz-date`, `authorization` and, for
    /// temporary credentials, `x-amz-security-token`.
    fn signature(
        &self,
        req: &Request,
        url: &str,
        time: SystemTime,
    ) -> Result<Vec<(String, String)>> {
        let identity = self.credentials.clone().into();
        let params = SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name(SERVICE)
            .time(time)
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| ClientError::decode(req, url, format!("cannot sign the request: {e}")))?;
        let body = req.body.as_deref().unwrap_or("").as_bytes();
        let content_type = [("content-type", "application/json")];
        let headers = content_type.iter().take(usize::from(req.body.is_some()));
        let signable = SignableRequest::new(
            req.method.as_str(),
            url,
            headers.map(|(k, v)| (*k, *v)),
            SignableBody::Bytes(body),
        )
        .map_err(|e| ClientError::decode(req, url, format!("cannot sign the request: {e}")))?;
        let (instructions, _) = sign(signable, &params.into())
            .map_err(|e| ClientError::decode(req, url, format!("cannot sign the request: {e}")))?
            .into_parts();
        Ok(instructions
            .headers()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }
}

impl Transport for Signed {
    fn send(&self, req: &Request) -> Result<Body> {
        let url = format!("{}{}", self.endpoint, req.path);
        let mut builder = self.client.request(reqwest_method(req.method), &url);
        for (name, value) in self.signature(req, &url, crate::clock::real_now())? {
            builder = builder.header(name, value);
        }
        if let Some(b) = &req.body {
            builder = builder
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(b.clone());
        }
        let resp = builder
            .send()
            .map_err(|e| transport_error(req, &url, &e, self.timeout))?;
        let status = resp.status().as_u16();
        let error_type = resp
            .headers()
            .get(ERROR_TYPE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(error_type_name);
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, crate::clock::real_now()));
        let text = resp
            .text()
            .map_err(|e| transport_error(req, &url, &e, self.timeout))?;
        decode_response(req, &url, status, text)
            .map_err(|e| with_error_type(e, req, &url, error_type))
            .map_err(|e| e.with_retry_after(retry_after))
    }

    fn endpoint(&self) -> String {
        self.endpoint.clone()
    }
}

/// `NotFoundException:http://internal.amazon.com/coral/...` -> `NotFoundException`.
fn error_type_name(raw: &str) -> String {
    raw.split([':', ','])
        .next()
        .unwrap_or(raw)
        .trim()
        .to_string()
}

/// The error with its AWS type in front of AWS's message: `NotFoundException: ...`.
fn with_error_type(
    e: ClientError,
    req: &Request,
    url: &str,
    error_type: Option<String>,
) -> ClientError {
    match (e.status(), e.message(), error_type) {
        (Some(status), Some(message), Some(t)) if !message.starts_with(&t) => {
            ClientError::http(req, url, status, format!("{t}: {message}"))
        }
        _ => e,
    }
}
