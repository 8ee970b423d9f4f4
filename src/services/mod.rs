//! How kco reaches the service behind a cluster of kco.yaml: one module per kind of service,
//! each with its builder, registered once in [`KINDS`]. The CLI resolves what building needs
//! ([`Wiring`]) from its flags and kco.yaml, then asks [`connect`] or [`connect_once`]; it
//! builds no transport and names no kind.
//!
//! - [`connect`](self::connect) (`connect.rs`): Kafka Connect's REST API, asked `GET /` at
//!   first contact (a wrong port fails at once), a worker given by `--url` checked to belong
//!   to the cluster, and a worker without the offsets endpoints read through Kafka.
//! - `cloud.rs`: Confluent Cloud, whose refusals name the API key and whose first request is
//!   the first contact.
//! - `topics.rs`: a Connect cluster read from its internal topics on Kafka (no `urls`).
//! - `msk.rs`: Amazon MSK Connect, through its control plane and the Kafka its connectors use.

mod cloud;
mod connect;
mod msk;
mod topics;

use std::sync::Arc;

use crate::client::layers::{RetryPolicy, Retrying, TraceSink, Traced};
use crate::client::{Backend, Connect, HttpTransport, Service};
use crate::config::{ClusterTarget, Config, Sources};
use crate::error::{Error, Result};

/// Where `-v` sends each request attempt, as a line.
pub type Trace = Arc<dyn Fn(&str) + Send + Sync>;

/// What building a cluster's service needs besides the cluster itself, resolved once by the
/// caller from its flags and kco.yaml.
pub struct Wiring<'a> {
    pub config: &'a Config,
    /// kco.yaml as messages name it.
    pub file: String,
    /// The worker URL given on the command line or in KCO_URL, if any.
    pub given_url: Option<&'a str>,
    /// Where `--cluster` and `--url` came from.
    pub sources: Sources,
    /// The default cluster, when neither `--cluster` nor `--url` named one: an unreachable
    /// one says so (in a DR the default often points at the lost region).
    pub default_cluster: Option<String>,
    /// `-v`: each request attempt, as a line.
    pub trace: Option<Trace>,
    /// A warning for the user (TLS checks off, a worker whose cluster cannot be checked).
    pub warn: Box<dyn Fn(&str) + 'a>,
}

/// One kind of service: which clusters it serves and how their service is built.
struct Kind {
    /// Whether a cluster's resolved backend is this kind's.
    serves: fn(&Backend) -> bool,
    /// Its service, retrying, ready for a command (`listing`: the command lists the cluster
    /// first, and may ask for the listing beside the first contact).
    connect: fn(&Wiring, &ClusterTarget, bool) -> Result<Box<dyn Service>>,
    /// Its service, trying each request once (a look that must not wait out a retry
    /// deadline).
    once: fn(&Wiring, &ClusterTarget) -> Result<Box<dyn Service>>,
}

/// Every kind of service kco reaches, once each.
const KINDS: [Kind; 4] = [connect::KIND, cloud::KIND, topics::KIND, msk::KIND];

fn kind_of(target: &ClusterTarget) -> &'static Kind {
    KINDS
        .iter()
        .find(|k| (k.serves)(&target.backend))
        .expect("every backend has its kind")
}

/// A retrying client for `target`'s service. A cluster that cannot be reached at all, or
/// whose URL answers as something else than the service, fails at once (a wrong URL should
/// not wait out the retry deadline); once it has answered, transient failures are retried.
pub fn connect(w: &Wiring, target: &ClusterTarget, listing: bool) -> Result<Box<dyn Service>> {
    (kind_of(target).connect)(w, target, listing)
}

/// A client for `target` that tries each request once.
pub fn connect_once(w: &Wiring, target: &ClusterTarget) -> Result<Box<dyn Service>> {
    (kind_of(target).once)(w, target)
}

/// Says, for a command's client, that `target`'s TLS certificates are not checked.
fn warn_insecure(w: &Wiring, target: &ClusterTarget) {
    if target.http.tls.insecure {
        (w.warn)(&format!(
            "TLS certificate checks are OFF for cluster `{}` (tls.insecureSkipVerify): anyone on the path can read its credentials and offsets",
            target.name
        ));
    }
}

/// The HTTP transport to `target`'s URLs.
fn http(target: &ClusterTarget) -> Result<Arc<HttpTransport>> {
    HttpTransport::new(target.http.clone())
        .map(Arc::new)
        .map_err(|e| Error::Other(format!("cluster `{}`: {e}", target.name)))
}

/// The layers over a transport: retries, and a trace of each attempt with `-v`.
fn layered<T: crate::client::Transport + 'static>(
    w: &Wiring,
    transport: T,
    policy: RetryPolicy,
) -> Retrying<Box<dyn crate::client::Transport>> {
    let inner: Box<dyn crate::client::Transport> = match &w.trace {
        Some(trace) => {
            let trace = trace.clone();
            let sink: TraceSink = Box::new(move |line| trace(line));
            Box::new(Traced::new(transport, sink))
        }
        None => Box::new(transport),
    };
    Retrying::new(inner, policy)
}

/// Kafka Connect's client over `http`: retries, and a trace with `-v`.
fn stack(w: &Wiring, http: Arc<HttpTransport>, policy: RetryPolicy) -> Connect {
    Connect::new(layered(w, http, policy))
}
