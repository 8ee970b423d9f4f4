//! Kafka's consumer-group APIs, which rskafka lacks: the groups a cluster has, a group's
//! state and members, its committed offsets, and committing or deleting those of a group
//! with no members (a sink connector's, once the connector is gone); and the cluster's id
//! and topics (one metadata request).
//!
//! The messages are kafka-protocol's, typed and encoded by that crate, each at the highest
//! version both it and the broker know (negotiated with `ApiVersions`). This file only frames
//! them over a blocking connection to one broker at a time, with TLS and SASL as configured
//! for the rest of `kafka/`; every read and write is bounded by `kafka.timeoutSeconds`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::error::ParseResponseErrorCode;
use kafka_protocol::messages::{
    metadata_request, offset_commit_request, offset_delete_request, offset_fetch_request,
    ApiVersionsRequest, DescribeGroupsRequest, FindCoordinatorRequest, GroupId, ListGroupsRequest,
    MetadataRequest, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest, RequestHeader,
    ResponseHeader, SaslAuthenticateRequest, SaslHandshakeRequest, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};

use super::{tls, KafkaError, KafkaOptions, SaslMechanism};

/// The connector config key that gives a sink another consumer group.
pub const GROUP_OVERRIDE: &str = "consumer.override.group.id";

/// The consumer group of sink `name` with `config` (as far as the REST API shows): Connect's
/// `connect-<name>` (`SinkUtils.consumerGroupId`), unless `consumer.override.group.id` sets
/// another.
pub fn consumer_group(name: &str, config: &BTreeMap<String, String>) -> String {
    match config.get(GROUP_OVERRIDE) {
        Some(g) if !g.trim().is_empty() => g.trim().to_string(),
        _ => format!("connect-{name}"),
    }
}

/// A group as a broker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub id: String,
    /// `consumer` for a consumer's (a sink's), `connect` for Connect workers' own group;
    /// empty for a group that only ever had offsets committed for it.
    pub protocol_type: String,
}

/// One partition's committed offset.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Committed {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// What a group is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupState {
    /// `Empty`, `Stable`, `Dead`..., as the coordinator says.
    pub state: String,
    pub members: usize,
    /// Its committed offsets, by topic and partition.
    pub offsets: Vec<Committed>,
}

/// Every consumer group of the cluster (each broker lists those it coordinates).
pub fn list_groups(opts: &KafkaOptions) -> Result<Vec<GroupListing>, KafkaError> {
    let mut boot = Conn::bootstrap(opts)?;
    let brokers = boot.brokers()?;
    let mut groups = Vec::new();
    for addr in brokers {
        let mut conn = if boot.addr == addr {
            None
        } else {
            Some(Conn::open(opts, &addr)?)
        };
        let conn = conn.as_mut().unwrap_or(&mut boot);
        let reply = conn.send(ListGroupsRequest::default())?;
        conn.check(reply.error_code, "listing its groups")?;
        groups.extend(reply.groups.into_iter().map(|g| GroupListing {
            id: g.group_id.0.as_str().to_string(),
            protocol_type: g.protocol_type.as_str().to_string(),
        }));
    }
    groups.sort_by(|a, b| a.id.cmp(&b.id));
    groups.dedup_by(|a, b| a.id == b.id);
    Ok(groups)
}

/// Kafka's error code for a group it does not know (`GROUP_ID_NOT_FOUND`).
const GROUP_ID_NOT_FOUND: i16 = 69;

/// The Kafka cluster as a bootstrap broker describes it: its id and its topics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterMetadata {
    /// The cluster id (`None` from a broker that does not say it: before Metadata v2).
    pub cluster_id: Option<String>,
    /// Every topic's name.
    pub topics: std::collections::BTreeSet<String>,
}

/// The cluster's id and topics, in one metadata request for every topic (which creates
/// none) to the first bootstrap broker that answers.
pub fn cluster_metadata(opts: &KafkaOptions) -> Result<ClusterMetadata, KafkaError> {
    let mut c = Conn::bootstrap(opts)?;
    let v = c.version::<MetadataRequest>()?;
    // Every topic: an empty list before v1, no list from v1 on.
    let request = match v {
        0 => MetadataRequest::default(),
        _ => MetadataRequest::default()
            .with_topics(None)
            .with_allow_auto_topic_creation(false),
    };
    let reply = c.send(request)?;
    Ok(ClusterMetadata {
        cluster_id: reply.cluster_id.map(|id| id.as_str().to_string()),
        topics: reply
            .topics
            .iter()
            .filter_map(|t| t.name.as_ref().map(|n| n.as_str().to_string()))
            .collect(),
    })
}

/// `group`'s state, members and committed offsets, from its coordinator.
pub fn describe(opts: &KafkaOptions, group: &str) -> Result<GroupState, KafkaError> {
    let mut c = Conn::coordinator(opts, group)?;
    let reply = c.send(DescribeGroupsRequest::default().with_groups(vec![group_id(group)]))?;
    let described = reply
        .groups
        .into_iter()
        .next()
        .ok_or_else(|| c.failed(format!("describing group `{group}`: no answer for it")))?;
    // A group Kafka has never heard of (a sink created a moment ago, whose consumer has
    // not joined yet) has no members; its committed offsets, if any, are asked all the same.
    let unknown = described.error_code == GROUP_ID_NOT_FOUND;
    if !unknown {
        c.check(described.error_code, &format!("describing group `{group}`"))?;
    }
    let offsets = c.committed(group)?;
    Ok(GroupState {
        state: match unknown {
            true => "Dead".to_string(),
            false => described.group_state.as_str().to_string(),
        },
        members: described.members.len(),
        offsets,
    })
}

/// Commits `offsets` for `group`, as a client outside the group does (no generation, no
/// member): the coordinator accepts it only while the group has no members.
pub fn commit(opts: &KafkaOptions, group: &str, offsets: &[Committed]) -> Result<(), KafkaError> {
    if offsets.is_empty() {
        return Ok(());
    }
    let mut c = Conn::coordinator(opts, group)?;
    let topics = by_topic(offsets.iter().map(|o| {
        let p = offset_commit_request::OffsetCommitRequestPartition::default()
            .with_partition_index(o.partition)
            .with_committed_offset(o.offset)
            .with_committed_leader_epoch(-1);
        (o.topic.as_str(), p)
    }))
    .map(|(t, partitions)| {
        offset_commit_request::OffsetCommitRequestTopic::default()
            .with_name(topic_name(t))
            .with_partitions(partitions)
    })
    .collect();
    let reply = c.send(
        OffsetCommitRequest::default()
            .with_group_id(group_id(group))
            .with_generation_id_or_member_epoch(-1)
            .with_retention_time_ms(-1)
            .with_topics(topics),
    )?;
    for t in reply.topics {
        for p in t.partitions {
            let what = format!(
                "committing {}-{} for group `{group}`",
                t.name.0.as_str(),
                p.partition_index
            );
            c.check(p.error_code, &what)?;
        }
    }
    Ok(())
}

/// Deletes `group`'s committed offsets of `partitions` (topic, partition); the coordinator
/// refuses while a member of the group consumes one of their topics.
pub fn delete_offsets(
    opts: &KafkaOptions,
    group: &str,
    partitions: &[(String, i32)],
) -> Result<(), KafkaError> {
    if partitions.is_empty() {
        return Ok(());
    }
    let mut c = Conn::coordinator(opts, group)?;
    let topics = by_topic(partitions.iter().map(|(t, p)| {
        let p =
            offset_delete_request::OffsetDeleteRequestPartition::default().with_partition_index(*p);
        (t.as_str(), p)
    }))
    .map(|(t, partitions)| {
        offset_delete_request::OffsetDeleteRequestTopic::default()
            .with_name(topic_name(t))
            .with_partitions(partitions)
    })
    .collect();
    let reply = c.send(
        OffsetDeleteRequest::default()
            .with_group_id(group_id(group))
            .with_topics(topics),
    )?;
    let what = format!("deleting the offsets of group `{group}`");
    c.check(reply.error_code, &what)?;
    for t in reply.topics {
        for p in t.partitions {
            c.check(p.error_code, &what)?;
        }
    }
    Ok(())
}

fn topic_name(t: &str) -> TopicName {
    TopicName(StrBytes::from_string(t.to_string()))
}

fn group_id(g: &str) -> GroupId {
    GroupId(StrBytes::from_string(g.to_string()))
}

/// `items` (topic, one partition's part of a request) gathered by topic, in topic order.
fn by_topic<'t, P>(
    items: impl Iterator<Item = (&'t str, P)>,
) -> impl Iterator<Item = (&'t str, Vec<P>)> {
    let mut topics: BTreeMap<&str, Vec<P>> = BTreeMap::new();
    for (t, p) in items {
        topics.entry(t).or_default().push(p);
    }
    topics.into_iter()
}

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

/// One connection to one broker, with the versions of each API it serves.
struct Conn<'a> {
    opts: &'a KafkaOptions,
    /// `host:port`, for messages.
    addr: String,
    stream: Box<dyn Stream>,
    versions: BTreeMap<i16, (i16, i16)>,
    correlation: i32,
}

impl<'a> Conn<'a> {
    /// The first bootstrap broker that answers.
    fn bootstrap(opts: &'a KafkaOptions) -> Result<Self, KafkaError> {
        let mut last = None;
        for addr in &opts.bootstrap {
            match Self::open(opts, addr) {
                Ok(c) => return Ok(c),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| KafkaError::Failed {
            bootstrap: String::new(),
            message: "`kafka.bootstrap` names no broker".into(),
        }))
    }

    /// Connects to `addr`, asks its API versions and authenticates.
    fn open(opts: &'a KafkaOptions, addr: &str) -> Result<Self, KafkaError> {
        let failed = |message: String| KafkaError::Failed {
            bootstrap: opts.bootstrap_display(),
            message: format!("{addr}: {message}"),
        };
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
        let reply = c.send(ApiVersionsRequest::default())?;
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
    fn coordinator(opts: &'a KafkaOptions, group: &str) -> Result<Self, KafkaError> {
        let mut boot = Self::bootstrap(opts)?;
        let start = Instant::now();
        loop {
            let v = boot.version::<FindCoordinatorRequest>()?;
            let request = if v >= 4 {
                FindCoordinatorRequest::default()
                    .with_coordinator_keys(vec![StrBytes::from_string(group.to_string())])
            } else {
                FindCoordinatorRequest::default().with_key(StrBytes::from_string(group.to_string()))
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
    fn brokers(&mut self) -> Result<Vec<String>, KafkaError> {
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

    /// The committed offsets of `group`, every topic's.
    fn committed(&mut self, group: &str) -> Result<Vec<Committed>, KafkaError> {
        let v = self.version::<OffsetFetchRequest>()?;
        let id = group_id(group);
        let request = if v >= 8 {
            OffsetFetchRequest::default().with_groups(vec![
                offset_fetch_request::OffsetFetchRequestGroup::default()
                    .with_group_id(id)
                    .with_topics(None),
            ])
        } else {
            OffsetFetchRequest::default()
                .with_group_id(id)
                .with_topics(None)
        };
        let reply = self.send(request)?;
        let what = format!("reading the offsets of group `{group}`");
        let mut out = Vec::new();
        if v >= 8 {
            for g in reply.groups {
                self.check(g.error_code, &what)?;
                for t in g.topics {
                    for p in t.partitions {
                        self.check(p.error_code, &what)?;
                        if p.committed_offset >= 0 {
                            out.push(Committed {
                                topic: t.name.0.as_str().to_string(),
                                partition: p.partition_index,
                                offset: p.committed_offset,
                            });
                        }
                    }
                }
            }
        } else {
            self.check(reply.error_code, &what)?;
            for t in reply.topics {
                for p in t.partitions {
                    self.check(p.error_code, &what)?;
                    if p.committed_offset >= 0 {
                        out.push(Committed {
                            topic: t.name.0.as_str().to_string(),
                            partition: p.partition_index,
                            offset: p.committed_offset,
                        });
                    }
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// SASL PLAIN or SCRAM, framed in Kafka's own messages (`SaslHandshake` v1, then
    /// `SaslAuthenticate` until the mechanism is done).
    fn authenticate(&mut self, s: &super::Sasl) -> Result<(), KafkaError> {
        use rsasl::prelude::{Mechname, SASLClient, SASLConfig};
        let mechanism = match s.mechanism {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        };
        let reply = self.send(
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism)),
        )?;
        self.check(reply.error_code, &format!("SASL {mechanism} handshake"))?;
        let refused = |c: &Self, m: String| c.failed(format!("SASL {mechanism}: {m}"));
        let config =
            SASLConfig::with_credentials(None, s.username.clone(), s.password.expose().to_string())
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
                    let message = reply
                        .error_message
                        .map(|m| m.as_str().to_string())
                        .unwrap_or_else(|| "authentication failed".into());
                    return Err(refused(self, message));
                }
                received = Some(reply.auth_bytes.to_vec());
            }
            if state.is_finished() {
                return Ok(());
            }
        }
    }

    /// The version of `R` to send: the highest both this build and the broker know.
    fn version<R: Request>(&self) -> Result<i16, KafkaError> {
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
    fn send<R: Request>(&mut self, request: R) -> Result<R::Response, KafkaError> {
        let v = self.version::<R>()?;
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
                    "no answer within {} (`kafka.timeoutSeconds`)",
                    humantime::format_duration(c.opts.timeout)
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
    fn check(&self, code: i16, what: &str) -> Result<(), KafkaError> {
        match code.err() {
            None => Ok(()),
            Some(e) => Err(self.failed(format!("{what}: {e}"))),
        }
    }

    fn failed(&self, message: String) -> KafkaError {
        KafkaError::Failed {
            bootstrap: self.opts.bootstrap_display(),
            message: format!("{}: {message}", self.addr),
        }
    }
}
