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

pub(crate) struct InProcess(pub Arc<Inner>);

impl Transport for InProcess {
    fn send(&self, req: &Request) -> Result<Body> {
        let url = format!("{URL}{}", req.path);
        if self.0.down.load(Ordering::SeqCst) {
            let reason = "cannot connect: Connection refused (os error 111)";
            return Err(ClientError::transport(req, &url, reason, false, false));
        }
        let body = req.body.clone().unwrap_or_default();
        let request = HttpRequest {
            method: req.method.as_str().to_string(),
            target: req.path.clone(),
            body: body.into_bytes(),
            authorization: None,
        };
        match serve(&self.0, request) {
            Reply::Respond { status, body } => {
                decode_response(req, &url, status, body.unwrap_or_default())
            }
            Reply::Drop => {
                let reason = "request failed: connection closed before message completed";
                Err(ClientError::transport(req, &url, reason, true, false))
            }
        }
    }

    fn endpoint(&self) -> String {
        URL.to_string()
    }
}
