//! One blocking connection to one Kafka broker, for every request kco makes (reads,
//! `fetch.rs`; writes, `txn.rs`; the consumer groups', `groups.rs`): kafka-protocol's typed messages, each at the
//! highest version both that crate and the broker know (negotiated with `ApiVersions`), framed
//! over TCP with TLS and SASL as configured for the rest of `kafka/`; every read and write is
//! bounded by `kafka.timeoutSeconds`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::error::ParseResponseErrorCode;
use kafka_protocol::messages::{
    metadata_request, ApiVersionsRequest, FindCoordinatorRequest, MetadataRequest, RequestHeader,
    ResponseHeader, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};

use super::{tls, KafkaError, KafkaOptions, SaslMechanism};

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

/// What a coordinator is looked up for (FindCoordinator's `key_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CoordinatorKey {
    Group = 0,
    Transaction = 1,
}

/// The bootstrap addresses that failed to answer in this run (a broker that accepts the
/// connection and never answers holds a read for `timeoutSeconds` each time it is tried).
static UNANSWERED: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Notes whether `addr` answered.
fn remember(addr: &str, answered: bool) {
    let mut set = UNANSWERED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if answered {
        set.remove(addr);
    } else {
        set.insert(addr.to_string());
    }
}

/// `bootstrap` in its order, the addresses that failed to answer earlier in this run last.
pub(super) fn by_answer(bootstrap: &[String]) -> Vec<String> {
    let set = UNANSWERED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (bad, good): (Vec<&String>, Vec<&String>) =
        bootstrap.iter().partition(|a| set.contains(a.as_str()));
    good.into_iter().chain(bad).cloned().collect()
}

/// One connection to one broker, with the versions of each API it serves.
pub(super) struct Conn<'a> {
    pub(super) opts: &'a KafkaOptions,
    /// `host:port`, for messages.
    pub(super) addr: String,
    stream: Box<dyn Stream>,
    versions: BTreeMap<i16, (i16, i16)>,
    correlation: i32,
}

impl<'a> Conn<'a> {
    /// The first bootstrap broker that answers, those that did not answer earlier in this
    /// run tried last ([`by_answer`]): a broker that hangs costs one `timeoutSeconds` per
    /// run, not one per read.
    pub(super) fn bootstrap(opts: &'a KafkaOptions) -> Result<Self, KafkaError> {
        let mut last = None;
        for addr in by_answer(&opts.bootstrap) {
            match Self::open(opts, &addr) {
                Ok(c) => {
                    remember(&addr, true);
                    return Ok(c);
                }
                Err(e) => {
                    remember(&addr, false);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| KafkaError::Failed {
            bootstrap: String::new(),
            message: "`kafka.bootstrap` names no broker".into(),
        }))
    }

    /// Connects to `addr`, asks its API versions and authenticates.
    pub(super) fn open(opts: &'a KafkaOptions, addr: &str) -> Result<Self, KafkaError> {
        let failed = |message: String| failed_at(opts, addr, message);
        let socket = addr
            .to_socket_addrs()
            .map_err(|e| failed(format!("cannot resolve: {e}")))?
            .next()
            .ok_or_else(|| failed("resolves to no address".into()))?;
        let tcp = TcpStream::connect_timeout(&socket, opts.timeout)
            .map_err(|e| failed(format!("cannot connect: {e}")))?;
        let _ = tcp.set_nodelay(true);
        tcp.set_read_timeout(Some(opts.timeout))
            .and_then(|()| tcp.set_write_timeout(Some(opts.timeout)))
            .map_err(|e| failed(e.to_string()))?;
        let stream: Box<dyn Stream> = match &opts.tls {
            None => Box::new(tcp),
            Some(t) => {
                let config = tls::client_config(t).map_err(&failed)?;
                let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
                let name = rustls::pki_types::ServerName::try_from(host.to_string())
                    .map_err(|e| failed(format!("TLS: {e}")))?;
                let conn = rustls::ClientConnection::new(config, name)
                    .map_err(|e| failed(format!("TLS: {e}")))?;
                Box::new(rustls::StreamOwned::new(conn, tcp))
            }
        };
        let mut c = Conn {
            opts,
            addr: addr.to_string(),
            stream,
            versions: BTreeMap::from([(ApiVersionsRequest::KEY, (0, 0))]),
            correlation: 0,
        };
        let reply = c
            .send(ApiVersionsRequest::default())
            .map_err(|e| match &opts.tls {
                Some(_) => super::plaintext_listener(e),
                None => e,
            })?;
        c.check(reply.error_code, "asking its API versions")?;
        c.versions = reply
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        if let Some(s) = &opts.sasl {
            c.authenticate(s)?;
        }
        Ok(c)
    }

    /// The coordinator of `group`, found through a bootstrap broker (asked again while it
    /// is not yet known, as right after a broker starts).
    pub(super) fn coordinator(opts: &'a KafkaOptions, group: &str) -> Result<Self, KafkaError> {
        Self::coordinator_of(opts, group, CoordinatorKey::Group)
    }

    /// The coordinator of `key`, a group's or a transactional id's.
    pub(super) fn coordinator_of(
        opts: &'a KafkaOptions,
        group: &str,
        kind: CoordinatorKey,
    ) -> Result<Self, KafkaError> {
        let mut boot = Self::bootstrap(opts)?;
        let start = Instant::now();
        loop {
            let v = boot.version::<FindCoordinatorRequest>()?;
            if v < 1 && kind == CoordinatorKey::Transaction {
                return Err(boot.failed(
                    "the broker finds no transaction coordinator (FindCoordinator v0)".into(),
                ));
            }
            let request = if v >= 4 {
                FindCoordinatorRequest::default()
                    .with_coordinator_keys(vec![StrBytes::from_string(group.to_string())])
            } else {
                FindCoordinatorRequest::default().with_key(StrBytes::from_string(group.to_string()))
            };
            let request = match v {
                0 => request,
                _ => request.with_key_type(kind as i8),
            };
            let reply = boot.send(request)?;
            let (code, host, port) = match reply.coordinators.first() {
                Some(c) if v >= 4 => (c.error_code, c.host.as_str().to_string(), c.port),
                _ => (
                    reply.error_code,
                    reply.host.as_str().to_string(),
                    reply.port,
                ),
            };
            match code.err() {
                None => {
                    let addr = format!("{host}:{port}");
                    return if addr == boot.addr {
                        Ok(boot)
                    } else {
                        Self::open(opts, &addr)
                    };
                }
                Some(e) if e.is_retriable() && start.elapsed() < opts.timeout => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                Some(e) => {
                    return Err(boot.failed(format!("finding the coordinator of `{group}`: {e}")))
                }
            }
        }
    }

    /// Every broker's `host:port`, from a metadata request for no topic.
    pub(super) fn brokers(&mut self) -> Result<Vec<String>, KafkaError> {
        let v = self.version::<MetadataRequest>()?;
        let request = if v >= 1 {
            MetadataRequest::default()
                .with_topics(Some(Vec::<metadata_request::MetadataRequestTopic>::new()))
        } else {
            MetadataRequest::default()
        };
        let reply = self.send(request)?;
        let mut brokers: Vec<String> = reply
            .brokers
            .iter()
            .map(|b| format!("{}:{}", b.host.as_str(), b.port))
            .collect();
        brokers.sort();
        brokers.dedup();
        Ok(brokers)
    }

    /// `kafka.sasl`, framed in Kafka's own messages (`SaslHandshake` v1, then
    /// `SaslAuthenticate` until the mechanism is done).
    fn authenticate(&mut self, s: &super::Sasl) -> Result<(), KafkaError> {
        match s {
            super::Sasl::Password {
                mechanism,
                username,
                password,
            } => self.authenticate_password(*mechanism, username, password),
            super::Sasl::AwsMskIam(iam) => self.authenticate_msk_iam(iam),
            super::Sasl::OAuthBearer(oidc) => {
                let token = oidc.token().map_err(|e| {
                    self.auth_failed(
                        format!("cannot authenticate with SASL OAUTHBEARER: {e}"),
                        "check `kafka.sasl.tokenEndpoint`, `clientId` and `clientSecret` (and `scope`) with the identity provider".into(),
                    )
                })?;
                self.oauthbearer(token.expose(), |c, said| {
                    c.auth_failed(
                        format!("the broker refused the SASL OAUTHBEARER authentication with the token of {} (client `{}`): {said}", oidc.endpoint, oidc.client_id),
                        "check that the brokers' OAUTHBEARER listener trusts this token endpoint's tokens, and the client's `scope` and audience".into(),
                    )
                })
            }
        }
    }

    /// `SaslHandshake` for `mechanism`, refused with what the listener offers instead.
    fn handshake(&mut self, mechanism: &'static str) -> Result<(), KafkaError> {
        let reply = self.send(
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism)),
        )?;
        if reply.error_code.err() == Some(kafka_protocol::error::ResponseError::IllegalSaslState) {
            return Err(self.failed(format!(
                "the listener does not speak SASL (its answer to the SASL {mechanism} handshake was IllegalSaslState: a PLAINTEXT or SSL listener): point `kafka.bootstrap` at the brokers' SASL listener, or remove `kafka.sasl`"
            )));
        }
        if reply.error_code.err()
            == Some(kafka_protocol::error::ResponseError::UnsupportedSaslMechanism)
        {
            let offered: Vec<&str> = reply.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(self.failed(format!(
                "the listener does not take SASL {mechanism} (it takes {}): check `kafka.sasl.mechanism` and that `kafka.bootstrap` names the listener for it",
                offered.join(", ")
            )));
        }
        self.check(reply.error_code, &format!("SASL {mechanism} handshake"))
    }

    /// SASL PLAIN or SCRAM through rsasl.
    fn authenticate_password(
        &mut self,
        mechanism: SaslMechanism,
        username: &str,
        password: &crate::client::Secret,
    ) -> Result<(), KafkaError> {
        use rsasl::prelude::{Mechname, SASLClient, SASLConfig};
        let mechanism = match mechanism {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        };
        self.handshake(mechanism)?;
        let refused = |c: &Self, m: String| {
            c.failed(format!(
                "authentication failed (check the `kafka.sasl` username and password): SASL {mechanism}: {m}"
            ))
        };
        let config =
            SASLConfig::with_credentials(None, username.to_string(), password.expose().to_string())
                .map_err(|e| refused(self, e.to_string()))?;
        let name =
            Mechname::parse(mechanism.as_bytes()).map_err(|e| refused(self, e.to_string()))?;
        let mut session = SASLClient::new(config)
            .start_suggested(&[name])
            .map_err(|e| refused(self, e.to_string()))?;
        let mut received: Option<Vec<u8>> = None;
        loop {
            let mut out = Vec::new();
            let state = session
                .step(received.as_deref(), &mut out)
                .map_err(|e| refused(self, e.to_string()))?;
            if state.has_sent_message() {
                let reply = self
                    .send(SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(out)))?;
                if reply.error_code != 0 {
                    return Err(refused(self, refusal(&reply)));
                }
                received = Some(reply.auth_bytes.to_vec());
            }
            if state.is_finished() {
                return Ok(());
            }
        }
    }

    /// Amazon MSK's IAM authentication: SASL OAUTHBEARER's one client message with MSK's
    /// token (`msk_iam`).
    fn authenticate_msk_iam(&mut self, iam: &super::msk_iam::MskIam) -> Result<(), KafkaError> {
        use super::msk_iam::TokenError;
        let token = iam.token().map_err(|e| {
            let hint = match &e {
                TokenError::Credentials(c) => c.hint(),
                TokenError::Sign { .. } => {
                    "check the credentials' access key id, secret key and session token".into()
                }
            };
            self.auth_failed(format!("cannot authenticate with AWS_MSK_IAM: {e}"), hint)
        })?;
        let refused = |c: &Self, said: String| {
            c.auth_failed(
                format!(
                    "the broker refused the AWS_MSK_IAM authentication (SASL OAUTHBEARER) with the AWS credentials from {}: {said}",
                    token.from
                ),
                format!(
                    "check that the credentials from {} are valid and current (the secret key, the session token of temporary ones), that their IAM policy allows `kafka-cluster:Connect` on this cluster, and that the region, {}, is the cluster's (`kafka.sasl.region`)",
                    token.from, iam.region
                ),
            )
        };
        self.oauthbearer(token.expose(), refused)
    }

    /// SASL OAUTHBEARER's exchange with `token` (RFC 7628). A refusal comes as it says
    /// (3.2.2): the broker answers with its error (a JSON object), the client sends `%x01`,
    /// and the broker fails the exchange; `refused` makes the error of what was said.
    fn oauthbearer(
        &mut self,
        token: &str,
        refused: impl Fn(&Self, String) -> KafkaError,
    ) -> Result<(), KafkaError> {
        self.handshake("OAUTHBEARER")?;
        let reply = self.send(
            SaslAuthenticateRequest::default()
                .with_auth_bytes(Bytes::from(super::msk_iam::initial_response(token))),
        )?;
        if reply.error_code != 0 {
            return Err(refused(self, refusal(&reply)));
        }
        if reply.auth_bytes.is_empty() {
            return Ok(());
        }
        let error = String::from_utf8_lossy(&reply.auth_bytes).into_owned();
        let message = match self
            .send(SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from_static(b"\x01")))
        {
            Ok(end) if end.error_code != 0 => match end.error_message {
                Some(m) if !m.as_str().contains(&error) => format!("{error} ({})", m.as_str()),
                _ => error,
            },
            _ => error,
        };
        Err(refused(self, message))
    }

    /// The version of `R` to send: the highest both this build and the broker know.
    pub(super) fn version<R: Request>(&self) -> Result<i16, KafkaError> {
        let (min, max) = self.versions.get(&R::KEY).copied().unwrap_or((-1, -1));
        let v = max.min(R::VERSIONS.max);
        if max < 0 || v < min.max(R::VERSIONS.min) {
            return Err(self.failed(format!(
                "the broker serves no version of API {} that kco speaks ({}-{}; it serves {min}-{max})",
                R::KEY,
                R::VERSIONS.min,
                R::VERSIONS.max
            )));
        }
        Ok(v)
    }

    /// Sends `request` and reads its response.
    pub(super) fn send<R: Request>(&mut self, request: R) -> Result<R::Response, KafkaError> {
        let v = self.version::<R>()?;
        self.send_at(request, v)
    }

    /// Sends `request` at the highest version both know, but no higher than `cap` (an API
    /// whose later versions change what a client must do, or are for brokers only).
    pub(super) fn send_capped<R: Request>(
        &mut self,
        request: R,
        cap: i16,
    ) -> Result<R::Response, KafkaError> {
        let v = self.version::<R>()?.min(cap);
        self.send_at(request, v)
    }

    fn send_at<R: Request>(&mut self, request: R, v: i16) -> Result<R::Response, KafkaError> {
        self.correlation += 1;
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(v)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str("kco")));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, R::header_version(v))
            .and_then(|()| request.encode(&mut body, v))
            .map_err(|e| self.failed(format!("encoding API {} v{v}: {e}", R::KEY)))?;
        let io = |c: &Self, e: std::io::Error| {
            let message = match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
                    "no answer within {} while {} (`kafka.timeoutSeconds`)",
                    humantime::format_duration(c.opts.timeout),
                    doing(R::KEY)
                ),
                _ => e.to_string(),
            };
            c.failed(message)
        };
        let mut frame = Vec::with_capacity(body.len() + 4);
        frame.extend_from_slice(&(body.len() as i32).to_be_bytes());
        frame.extend_from_slice(&body);
        self.stream
            .write_all(&frame)
            .and_then(|()| self.stream.flush())
            .map_err(|e| io(self, e))?;
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).map_err(|e| io(self, e))?;
        let len = i32::from_be_bytes(len);
        if !(0..=64 * 1024 * 1024).contains(&len) {
            return Err(self.failed(format!(
                "an answer whose length field reads {len}: not Kafka?"
            )));
        }
        let mut buf = vec![0u8; len as usize];
        self.stream.read_exact(&mut buf).map_err(|e| io(self, e))?;
        let mut buf = Bytes::from(buf);
        let decode = |c: &Self, e: &dyn std::fmt::Display| {
            c.failed(format!("reading the answer to API {} v{v}: {e}", R::KEY))
        };
        let header = ResponseHeader::decode(&mut buf, R::Response::header_version(v))
            .map_err(|e| decode(self, &e))?;
        if header.correlation_id != self.correlation {
            return Err(self.failed(format!(
                "an answer to another request ({}, not {}): not Kafka?",
                header.correlation_id, self.correlation
            )));
        }
        let decoded = R::Response::decode(&mut buf, v).map_err(|e| decode(self, &e))?;
        Ok(decoded)
    }

    /// `code` as an error naming `what`.
    pub(super) fn check(&self, code: i16, what: &str) -> Result<(), KafkaError> {
        match code.err() {
            None => Ok(()),
            Some(e) => Err(self.failed(format!("{what}: {e}"))),
        }
    }

    pub(super) fn failed(&self, message: String) -> KafkaError {
        failed_at(self.opts, &self.addr, message)
    }

    /// An authentication that could not be done or was refused at this broker, with what to
    /// check.
    fn auth_failed(&self, message: String, hint: String) -> KafkaError {
        match failed_at(self.opts, &self.addr, message) {
            KafkaError::Failed { bootstrap, message } => KafkaError::Auth {
                bootstrap,
                message,
                hint,
            },
            e => e,
        }
    }
}

/// What the broker said of a refused `SaslAuthenticate`.
fn refusal(reply: &kafka_protocol::messages::SaslAuthenticateResponse) -> String {
    reply
        .error_message
        .as_ref()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "authentication failed".into())
}

/// A failure at broker `addr`: named in the message where it is not the bootstrap address the
/// error names already (one of several, or a leader or coordinator found through them).
fn failed_at(opts: &KafkaOptions, addr: &str, message: String) -> KafkaError {
    let bootstrap = opts.bootstrap_display();
    let message = match addr == bootstrap {
        true => message,
        false => format!("{addr}: {message}"),
    };
    KafkaError::Failed { bootstrap, message }
}

/// The `host:port` of the leader of each partition of `topic`. A topic that does not exist is
/// an error naming it (a metadata request that names it would create it where the broker
/// creates topics on demand, so this one names none and looks for it).
pub(super) fn leaders(
    opts: &KafkaOptions,
    topic: &str,
) -> Result<BTreeMap<i32, String>, KafkaError> {
    let mut boot = Conn::bootstrap(opts)?;
    let start = Instant::now();
    loop {
        let v = boot.version::<MetadataRequest>()?;
        let request = match v {
            0 => MetadataRequest::default(),
            _ => MetadataRequest::default()
                .with_topics(None::<Vec<metadata_request::MetadataRequestTopic>>),
        };
        let reply = boot.send(request)?;
        let brokers: BTreeMap<i32, String> = reply
            .brokers
            .iter()
            .map(|b| (b.node_id.0, format!("{}:{}", b.host.as_str(), b.port)))
            .collect();
        let Some(t) = reply
            .topics
            .iter()
            .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == topic))
        else {
            return Err(KafkaError::UnknownTopic {
                topic: topic.to_string(),
                bootstrap: opts.bootstrap_display(),
            });
        };
        let mut out = BTreeMap::new();
        let mut retry = None;
        for p in &t.partitions {
            match (p.error_code.err(), brokers.get(&p.leader_id.0)) {
                (None, Some(addr)) => {
                    out.insert(p.partition_index, addr.clone());
                }
                (e, _) => retry = Some(e.map_or("no leader".to_string(), |e| e.to_string())),
            }
        }
        match retry {
            None => return Ok(out),
            Some(_) if start.elapsed() < opts.timeout => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Some(why) => {
                return Err(boot.failed(format!("finding the leaders of `{topic}`: {why}")))
            }
        }
    }
}

/// Every topic of the cluster and its number of partitions, from one metadata request for
/// all topics (which creates none) to the first bootstrap broker that answers.
pub(super) fn topic_partitions(opts: &KafkaOptions) -> Result<BTreeMap<String, usize>, KafkaError> {
    let mut boot = Conn::bootstrap(opts)?;
    let reply = boot.send(all_topics(&boot)?)?;
    Ok(reply
        .topics
        .iter()
        .filter_map(|t| {
            t.name
                .as_ref()
                .map(|n| (n.0.as_str().to_string(), t.partitions.len()))
        })
        .collect())
}

/// A metadata request for every topic: an empty list before v1, no list from v1 on; never
/// one that creates a topic.
pub(super) fn all_topics(c: &Conn) -> Result<MetadataRequest, KafkaError> {
    Ok(match c.version::<MetadataRequest>()? {
        0 => MetadataRequest::default(),
        v if v >= 4 => MetadataRequest::default()
            .with_topics(None)
            .with_allow_auto_topic_creation(false),
        _ => MetadataRequest::default().with_topics(None),
    })
}

/// What a request of API `key` does, for a message that it got no answer.
fn doing(key: i16) -> &'static str {
    match key {
        // ApiVersions, SaslHandshake, SaslAuthenticate: the connection's own set-up.
        18 | 17 | 36 => "connecting",
        0 => "writing records",
        1 => "fetching records",
        2 => "reading offsets",
        3 => "listing topics",
        10 => "finding a coordinator",
        _ => "waiting for an answer",
    }
}

#[cfg(test)]
mod bootstrap_tests {
    use super::*;

    /// A bootstrap broker that accepts the connection and never answers (issue 31): tried
    /// once, it costs one `timeoutSeconds`, and the next read of the run tries the others
    /// first (it took two timeouts, one per read, before the good broker was used).
    #[test]
    fn a_bootstrap_broker_that_never_answers_is_tried_last_for_the_rest_of_the_run() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let hung = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            for c in listener.incoming() {
                kept.push(c);
            }
        });
        let other = "127.0.0.1:9".to_string();
        let both = vec![hung.clone(), other.clone()];
        assert_eq!(by_answer(&both), both, "nothing known yet: the order given");
        let opts = KafkaOptions {
            bootstrap: vec![hung.clone()],
            sasl: None,
            tls: None,
            timeout: Duration::from_millis(300),
        };
        let start = Instant::now();
        assert!(Conn::bootstrap(&opts).is_err());
        assert!(start.elapsed() < Duration::from_secs(5), "one timeout");
        assert_eq!(by_answer(&both), vec![other, hung]);
    }
}
