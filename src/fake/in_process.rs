//! The fake as a [`Transport`]: requests reach the same handler as over HTTP, without a
//! socket. A dropped connection is a broken connection after sending; a worker that is down
//! refuses the connection.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::http::{HttpRequest, Reply};
use super::{serve, Inner};
use crate::client::transport::{decode_response, Body, Request, Transport};
use crate::client::{ClientError, Result};

/// The base URL messages show for the in-process fake.
const URL: &str = "http://in-process:8083";

pub(crate) struct InProcess {
    inner: Arc<Inner>,
    /// The path every request goes under (Confluent Cloud's base path; empty for Connect).
    base: String,
    /// The `Authorization` header sent with every request.
    authorization: Option<String>,
}

impl InProcess {
    pub fn new(inner: Arc<Inner>, authorization: Option<String>) -> InProcess {
        let base = super::lock(&inner.cluster)
            .cloud
            .as_ref()
            .map(|c| c.base_path())
            .unwrap_or_default();
        InProcess {
            inner,
            base,
            authorization,
        }
    }
}

impl Transport for InProcess {
    fn send(&self, req: &Request) -> Result<Body> {
        let target = format!("{}{}", self.base, req.path);
        let url = format!("{URL}{target}");
        if self.inner.down.load(Ordering::SeqCst) {
            let reason = "cannot connect: Connection refused (os error 111)";
            return Err(ClientError::transport(req, &url, reason, false, false));
        }
        let body = req.body.clone().unwrap_or_default();
        let request = HttpRequest {
            method: req.method.as_str().to_string(),
            target,
            body: body.into_bytes(),
            authorization: self.authorization.clone(),
            headers: Vec::new(),
        };
        match serve(&self.inner, request) {
            Reply::Respond {
                status,
                body,
                headers,
            } => decode_response(req, &url, status, body.unwrap_or_default()).map_err(|e| {
                let retry_after = headers
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case("Retry-After"))
                    .and_then(|(_, secs)| secs.parse().ok())
                    .map(std::time::Duration::from_secs);
                e.with_retry_after(retry_after)
            }),
            Reply::Drop => {
                let reason = "request failed: connection closed before message completed";
                Err(ClientError::transport(req, &url, reason, true, false))
            }
        }
    }

    fn endpoint(&self) -> String {
        format!("{URL}{}", self.base)
    }
}
