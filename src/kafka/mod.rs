//! Reading Kafka itself (not Connect): one partition of a topic, or all of them, from the
//! first kept record to the end each had when its read began; and writing records to a
//! topic's partitions, which kco does only to Connect's offsets topic (`kco reset
//! --orphaned`, an apply through Kafka, their undo).
//!
//! Used for MirrorMaker 2's checkpoints topic (`engine::mirror`) and for Connect's offsets
//! topic (`engine::orphaned`, `engine::through_kafka`). One client for all of it, written here
//! over kafka-protocol's typed messages ([docs/architecture.md](../../docs/architecture.md),
//! "The Kafka client"): [`conn`] is the one blocking connection to a broker (rustls for TLS,
//! SASL PLAIN and SCRAM through rsasl) that the rest shares. Reads go through [`fetch`]
//! (`ListOffsets` and `Fetch`, read_committed, transaction markers and aborted transactions
//! left out); writes go in one transaction ([`txn`]) where one can start, else as a plain
//! write of the same records.
//!
//! Beside it: [`connect_offsets`] (the records of Connect's offsets topic), [`groups`]
//! (Kafka's consumer-group APIs: sinks' committed offsets, the cluster's id and topics),
//! [`through`] (a Connect cluster whose offsets are read through Kafka) and
//! [`connect_topics`] (a Connect cluster without a REST API, read from its internal topics).

mod conn;
pub mod connect_offsets;
pub mod connect_topics;
pub mod end_offsets;
mod fetch;
pub mod groups;
pub mod msk_iam;
pub mod oidc;
pub mod through;
mod tls;
pub mod topic_role;
pub mod txn;

use std::time::Duration;

use crate::client::Secret;

/// How to reach one Kafka cluster (`kafka:` of a cluster in kco.yaml).
#[derive(Debug, Clone)]
pub struct KafkaOptions {
    /// `host:port` of one or more brokers.
    pub bootstrap: Vec<String>,
    pub sasl: Option<Sasl>,
    /// `Some`: TLS to every broker.
    pub tls: Option<KafkaTls>,
    /// How long connecting and each request may take, retries included.
    pub timeout: Duration,
}

impl KafkaOptions {
    /// The bootstrap addresses as the user wrote them, for messages.
    pub fn bootstrap_display(&self) -> String {
        self.bootstrap.join(",")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

impl SaslMechanism {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_uppercase().as_str() {
            "PLAIN" => Some(Self::Plain),
            "SCRAM-SHA-256" => Some(Self::ScramSha256),
            "SCRAM-SHA-512" => Some(Self::ScramSha512),
            _ => None,
        }
    }
}

/// `kafka.sasl`: how kco authenticates to the brokers.
#[derive(Debug, Clone)]
pub enum Sasl {
    /// PLAIN or SCRAM, with a user name and password.
    Password {
        mechanism: SaslMechanism,
        username: String,
        password: Secret,
    },
    /// Amazon MSK's IAM authentication (`mechanism: AWS_MSK_IAM`): SASL OAUTHBEARER with
    /// MSK's token ([`msk_iam`]), shared by the clones of the options, so that its token is
    /// made once and kept until near its expiry.
    AwsMskIam(std::sync::Arc<msk_iam::MskIam>),
    /// SASL OAUTHBEARER with a token from an OAuth 2 / OIDC token endpoint's client
    /// credentials grant (`mechanism: OAUTHBEARER`, [`oidc`]), kept like MSK's.
    OAuthBearer(std::sync::Arc<oidc::Oidc>),
}

/// TLS to the brokers: extra CA certificates, a client certificate, or no checks at all.
#[derive(Debug, Clone, Default)]
pub struct KafkaTls {
    pub ca_pem: Option<Vec<u8>>,
    /// PEM certificate chain, then the PEM private key.
    pub identity_pem: Option<(Vec<u8>, Secret)>,
    pub insecure: bool,
}

/// A failed read, naming the bootstrap address; never a credential.
#[derive(Debug, thiserror::Error)]
pub enum KafkaError {
    #[error("topic `{topic}` does not exist on the Kafka cluster at {bootstrap}")]
    UnknownTopic { topic: String, bootstrap: String },
    #[error("Kafka at {bootstrap}: {message}")]
    Failed { bootstrap: String, message: String },
    /// Authentication could not be done, or the broker refused it; `hint` says what to check.
    #[error("Kafka at {bootstrap}: {message}")]
    Auth {
        bootstrap: String,
        message: String,
        hint: String,
    },
    /// A topic given as one of Connect's internal topics holds something else: nothing that
    /// was read from it is used.
    #[error("{holds}")]
    NotItsRole {
        topic: String,
        holds: topic_role::Holds,
    },
}

impl KafkaError {
    /// What to change, where kco can tell.
    pub fn hint(&self) -> Option<String> {
        match self {
            KafkaError::NotItsRole { holds, .. } => Some(holds.hint()),
            KafkaError::Auth { hint, .. } => Some(hint.clone()),
            _ => None,
        }
    }

    /// What failed, for a message that names the Kafka's address already (a request to
    /// `kafka://<bootstrap>`): without the address again.
    pub fn detail(&self) -> String {
        match self {
            KafkaError::Failed { message, .. } | KafkaError::Auth { message, .. } => {
                message.clone()
            }
            e => e.to_string(),
        }
    }
}

/// One record as read: borrowed for the length of the visit.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    pub offset: i64,
    /// Milliseconds since the Unix epoch (the record's timestamp).
    pub timestamp_ms: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
}

/// What a scan saw of the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanEnd {
    /// The first offset kept when the scan began.
    pub start: i64,
    /// The end offset (high watermark) when the scan began; records at or after it were not read.
    pub end: i64,
    pub records: u64,
}

/// Reads partition `partition` of `topic` from its first kept record (or, with `tail`, at
/// most that many records before the end) to the end it had when the read began, calling
/// `visit` for each record in offset order.
pub fn scan_partition(
    opts: &KafkaOptions,
    topic: &str,
    partition: i32,
    tail: Option<i64>,
    visit: &mut dyn FnMut(RawRecord<'_>),
) -> Result<ScanEnd, KafkaError> {
    fetch::scan_partition(opts, topic, partition, tail, visit)
}

/// Reads every partition of `topic`, one after the other, each from its first kept record to
/// the end it had when its read began; `visit` is told the partition of each record (a
/// compacted topic of Connect's, whose records of one key share a partition). Returns what
/// each partition's scan saw, by partition.
pub fn scan_topic(
    opts: &KafkaOptions,
    topic: &str,
    visit: &mut dyn FnMut(i32, RawRecord<'_>),
) -> Result<Vec<ScanEnd>, KafkaError> {
    fetch::scan_topic(opts, topic, visit)
}

/// One record to write: its partition, key and value (`None`: a deletion, a tombstone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutRecord {
    pub partition: i32,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

/// Writes `records` to `topic`, each to its partition, in their order within a partition,
/// stamped `timestamp_ms`, outside any transaction (where none can start: [`txn::produce`] is
/// the write kco makes first); returns once every broker leading one has acknowledged them
/// (all in-sync replicas). Nothing is written to a topic that does not exist, nor to a
/// partition it does not have.
pub fn produce(
    opts: &KafkaOptions,
    topic: &str,
    records: &[OutRecord],
    timestamp_ms: i64,
) -> Result<(), KafkaError> {
    txn::produce_plain(opts, topic, records, timestamp_ms)
}

/// Every topic of the cluster and its number of partitions (a metadata request for all
/// topics: it creates none).
pub fn topic_partitions(
    opts: &KafkaOptions,
) -> Result<std::collections::BTreeMap<String, usize>, KafkaError> {
    conn::topic_partitions(opts)
}

/// The connection was closed without an answer (end of file, reset).
fn is_closed(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    ["end of file", "eof", "connection reset", "broken pipe"]
        .iter()
        .any(|t| text.contains(t))
}

/// Why a TLS client's connection closes before the first answer, as a listener that is not
/// TLS closes it (a Kafka PLAINTEXT or SASL_PLAINTEXT listener reads the TLS ClientHello as an
/// oversized request and drops the connection), and what to change.
fn plaintext_listener_message(text: &str) -> String {
    format!("the connection closed during the TLS handshake (a TLS handshake with a plaintext listener?): remove `kafka.tls` for a PLAINTEXT listener, or point `kafka.bootstrap` at the brokers' TLS listener's port ({text})")
}

/// A TLS client's first request that failed with the connection closed: said as
/// [`plaintext_listener_message`]; any other error as it is.
pub(crate) fn plaintext_listener(e: KafkaError) -> KafkaError {
    match e {
        KafkaError::Failed { bootstrap, message } if is_closed(&message) => KafkaError::Failed {
            bootstrap,
            message: plaintext_listener_message(&message),
        },
        e => e,
    }
}

pub mod policy;

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(bootstrap: String) -> KafkaOptions {
        KafkaOptions {
            bootstrap: vec![bootstrap],
            sasl: None,
            tls: None,
            timeout: Duration::from_secs(15),
        }
    }

    /// A listener that accepts connections and never answers: the read fails after
    /// `timeoutSeconds`, naming the address and the bound, instead of hanging (issue 30).
    #[test]
    fn a_listener_that_never_answers_fails_after_the_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // Accepts, reads nothing, answers nothing; keeps every connection open.
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            for c in listener.incoming() {
                kept.push(c);
            }
        });
        let mut o = opts(addr.to_string());
        o.timeout = Duration::from_secs(1);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(scan_partition(&o, "t", 0, None, &mut |_| {}));
        });
        // Far beyond the bound: a hang, not a slow machine.
        let e = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the read returned")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&addr.to_string())
                && e.contains("no answer within 1s while connecting (`kafka.timeoutSeconds`)"),
            "{e}"
        );
    }

    /// A refused connection fails at once, not after `timeoutSeconds` (issue 23).
    #[test]
    fn a_refused_connection_fails_at_once() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let started = std::time::Instant::now();
        let e = scan_partition(
            &opts(format!("127.0.0.1:{port}")),
            "t",
            0,
            None,
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}: {e}",
            started.elapsed()
        );
        assert!(
            e.contains(&format!("127.0.0.1:{port}")) && e.contains("cannot connect"),
            "{e}"
        );
    }
}
