//! Records written to a topic in one Kafka transaction: a reader sees all of them or none,
//! whether it reads `read_committed` (Connect workers with `exactly.once.source.support`
//! read their offsets topic so) or not. A run cut short before the commit leaves nothing
//! visible: the transaction coordinator aborts it once it times out, or at once when the same
//! transactional id starts its next transaction (its epoch fences the old one off).
//!
//! The steps are a transactional producer's, over kafka-protocol's messages (`conn.rs`):
//! `FindCoordinator` for the transactional id, `InitProducerId`, `AddPartitionsToTxn`, one
//! `Produce` per partition leader (acks from all in-sync replicas), then `EndTxn`. The API
//! versions are those of the transaction protocol before KIP-890's second version, which
//! every broker from 2.5 on serves.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::error::{ParseResponseErrorCode, ResponseError};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::{
    add_partitions_to_txn_request::AddPartitionsToTxnTopic, produce_request::PartitionProduceData,
    produce_request::TopicProduceData, AddPartitionsToTxnRequest, DescribeTransactionsRequest,
    EndTxnRequest, InitProducerIdRequest, ProduceRequest, ProducerId, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use super::conn::{Conn, CoordinatorKey};
use super::{KafkaError, KafkaOptions, OutRecord};

/// The highest versions of the transaction protocol's first version.
const INIT_PRODUCER_ID_MAX: i16 = 4;
const ADD_PARTITIONS_MAX: i16 = 3;
const END_TXN_MAX: i16 = 4;
const PRODUCE_MAX: i16 = 11;
const DESCRIBE_TRANSACTIONS_MAX: i16 = 0;

/// How long the coordinator keeps kco's transaction open before aborting it itself.
const TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a transactional write failed: before anything was sent to a partition (no
/// transaction could start: the id's coordinator, its producer id, the rights to use it), or
/// after (the transaction is aborted, or left to time out: nothing of it is visible).
#[derive(Debug)]
pub enum TxnError {
    NotStarted(KafkaError),
    Failed(KafkaError),
}

/// Writes `records` to `topic` (each to its partition, in order within a partition), stamped
/// `timestamp_ms`, in one transaction of `transactional_id`, committed once every partition's
/// leader has them from all in-sync replicas. Nothing is visible if any step fails.
///
/// Another writer that starts a transaction of the same id meanwhile (another kco writing this
/// offsets topic, for other connectors) fences this one off: its coordinator aborts what was
/// written so far. Then the write waits until that writer's transaction has ended (a new start
/// now would abort it in turn) and runs again from the start, at most [`ATTEMPTS`] times.
pub fn produce(
    opts: &KafkaOptions,
    topic: &str,
    records: &[OutRecord],
    timestamp_ms: i64,
    transactional_id: &str,
) -> Result<(), TxnError> {
    produce_observed(
        opts,
        topic,
        records,
        timestamp_ms,
        transactional_id,
        &mut || {},
    )
}

/// How many times a transaction fenced off by another writer of the same id is started again.
pub const ATTEMPTS: usize = 3;

/// [`produce`], calling `written` once the records are written and before the commit, in each
/// attempt: where a test starts another writer of the same id.
pub fn produce_observed(
    opts: &KafkaOptions,
    topic: &str,
    records: &[OutRecord],
    timestamp_ms: i64,
    transactional_id: &str,
    written: &mut dyn FnMut(),
) -> Result<(), TxnError> {
    let mut attempt = 1;
    loop {
        let begun = begin(opts, topic, records, transactional_id);
        let (leaders, mut coordinator, producer_id, epoch) = match begun {
            Ok(b) => b,
            Err(e) if attempt == 1 => return Err(TxnError::NotStarted(e)),
            Err(e) => return Err(TxnError::Failed(e)),
        };
        let result = write(
            opts,
            (topic, records, timestamp_ms, transactional_id),
            (&leaders, &mut coordinator, producer_id, epoch),
            written,
        );
        match result {
            Ok(()) => return Ok(()),
            Err(Fail::Fenced(_)) if attempt < ATTEMPTS => {
                wait_ended(&mut coordinator, transactional_id);
                attempt += 1;
            }
            Err(Fail::Fenced(e)) => {
                return Err(TxnError::Failed(KafkaError::Failed {
                    bootstrap: opts.bootstrap_display(),
                    message: format!(
                        "another writer started a transaction as `{transactional_id}` while this one ran, {} (another kco writing `{topic}`?): nothing of this run is visible ({})",
                        crate::text::count(attempt, "time"),
                        e.detail()
                    ),
                }))
            }
            Err(Fail::Error(e)) => return Err(TxnError::Failed(e)),
        }
    }
}

/// Why a write within a transaction failed: fenced off by another producer of the same
/// transactional id (it may be started again once that one ended), or anything else.
enum Fail {
    Fenced(KafkaError),
    Error(KafkaError),
}

impl From<KafkaError> for Fail {
    fn from(e: KafkaError) -> Fail {
        Fail::Error(e)
    }
}

impl Fail {
    fn into_error(self) -> KafkaError {
        match self {
            Fail::Fenced(e) | Fail::Error(e) => e,
        }
    }
}

/// Whether `code` says a newer producer of the same transactional id fenced this one off.
fn fenced(code: i16) -> bool {
    matches!(
        code.err(),
        Some(ResponseError::ProducerFenced | ResponseError::InvalidProducerEpoch)
    )
}

/// Whether a coordinator's answer is to be asked again: a retriable error, or an earlier
/// transaction of the id still being ended (`CONCURRENT_TRANSACTIONS`, which Kafka's own
/// producer asks again after, though the protocol does not mark it retriable).
fn again(e: ResponseError) -> bool {
    e.is_retriable() || e == ResponseError::ConcurrentTransactions
}

/// `check` of a reply's error code, a fencing kept apart.
fn checked(c: &Conn, code: i16, what: &str) -> Result<(), Fail> {
    match c.check(code, what) {
        Err(e) if fenced(code) => Err(Fail::Fenced(e)),
        r => Ok(r?),
    }
}

/// Waits until the transaction of `id` that fenced this one off has ended (committed or
/// aborted), as `DescribeTransactions` (Kafka 3.0 on) tells without touching it; where it
/// cannot tell (an older broker, no `Describe` right on the id), a second. At most
/// `kafka.timeoutSeconds`: a writer killed mid-transaction leaves it open until its coordinator
/// aborts it, and the next start fences it off then.
fn wait_ended(c: &mut Conn, id: &str) {
    let start = Instant::now();
    while start.elapsed() < c.opts.timeout {
        let request = DescribeTransactionsRequest::default()
            .with_transactional_ids(vec![TransactionalId(StrBytes::from_string(id.to_string()))]);
        let state = match c.send_capped(request, DESCRIBE_TRANSACTIONS_MAX) {
            Ok(reply) => reply
                .transaction_states
                .into_iter()
                .find(|s| s.error_code == 0)
                .map(|s| s.transaction_state.to_string()),
            Err(_) => None,
        };
        match state.as_deref() {
            Some("Ongoing" | "PrepareCommit" | "PrepareAbort" | "PrepareEpochFence") => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Some(_) => return,
            None => {
                std::thread::sleep(Duration::from_secs(1));
                return;
            }
        }
    }
}

type Begun<'a> = (BTreeMap<i32, String>, Conn<'a>, ProducerId, i16);

/// The partitions' leaders, and a producer id and epoch from the id's coordinator.
fn begin<'a>(
    opts: &'a KafkaOptions,
    topic: &str,
    records: &[OutRecord],
    transactional_id: &str,
) -> Result<Begun<'a>, KafkaError> {
    let leaders = super::conn::leaders(opts, topic)?;
    check_partitions(opts, topic, records, &leaders)?;
    let mut coordinator =
        Conn::coordinator_of(opts, transactional_id, CoordinatorKey::Transaction)?;
    let id = TransactionalId(StrBytes::from_string(transactional_id.to_string()));
    let (producer_id, epoch) = init_producer_id(&mut coordinator, id)?;
    Ok((leaders, coordinator, producer_id, epoch))
}

fn write(
    opts: &KafkaOptions,
    (topic, records, timestamp_ms, transactional_id): (&str, &[OutRecord], i64, &str),
    (leaders, coordinator, producer_id, epoch): (
        &BTreeMap<i32, String>,
        &mut Conn,
        ProducerId,
        i16,
    ),
    observed: &mut dyn FnMut(),
) -> Result<(), Fail> {
    let mut by_partition: BTreeMap<i32, Vec<&OutRecord>> = BTreeMap::new();
    for r in records {
        by_partition.entry(r.partition).or_default().push(r);
    }
    let id = || TransactionalId(StrBytes::from_string(transactional_id.to_string()));
    let written = add_partitions(
        coordinator,
        id(),
        producer_id,
        epoch,
        topic,
        by_partition.keys().copied(),
    )
    .and_then(|()| {
        to_leaders(
            opts,
            topic,
            leaders,
            &by_partition,
            timestamp_ms,
            Some((id(), producer_id, epoch)),
        )
    });
    let end = |committed: bool, c: &mut Conn| -> Result<(), Fail> {
        let request = EndTxnRequest::default()
            .with_transactional_id(id())
            .with_producer_id(producer_id)
            .with_producer_epoch(epoch)
            .with_committed(committed);
        let reply = c.send_capped(request, END_TXN_MAX)?;
        checked(
            c,
            reply.error_code,
            if committed {
                "committing the transaction"
            } else {
                "aborting the transaction"
            },
        )
    };
    match written {
        Ok(written_to) => {
            observed();
            end(true, coordinator)?;
            Ok(visible(opts, topic, &written_to)?)
        }
        Err(e) => {
            // Best effort: the coordinator aborts it anyway once it times out.
            let _ = end(false, coordinator);
            Err(e)
        }
    }
}

/// The transaction's id, producer id and epoch; `None`: a plain write.
type Producer = Option<(TransactionalId, ProducerId, i16)>;

/// Writes each partition's records to its leader, one request per leader with every partition
/// it leads, acknowledged by all in-sync replicas; returns (leader, partition, the offset after
/// the last record written there) for each. A partition whose leader moved or is not ready yet
/// (`NOT_LEADER_OR_FOLLOWER` and the other retriable answers: nothing of the batch was
/// appended) is written again to its leader as the metadata names it then, within
/// `kafka.timeoutSeconds` (a transaction's batch keeps its sequence numbers: written once).
fn to_leaders(
    opts: &KafkaOptions,
    topic: &str,
    leaders: &BTreeMap<i32, String>,
    by_partition: &BTreeMap<i32, Vec<&OutRecord>>,
    timestamp_ms: i64,
    producer: Producer,
) -> Result<Vec<(String, i32, i64)>, Fail> {
    let start = Instant::now();
    let mut leaders = leaders.clone();
    let mut written_to = Vec::new();
    let mut pending: Vec<i32> = by_partition.keys().copied().collect();
    loop {
        let mut per_leader: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for p in &pending {
            per_leader.entry(leaders[p].clone()).or_default().push(*p);
        }
        let mut again = Vec::new();
        for (addr, partitions) in per_leader {
            let mut leader = Conn::open(opts, &addr)?;
            let data = partitions
                .iter()
                .map(|p| {
                    let batch = batch(&by_partition[p], producer.as_ref(), timestamp_ms)
                        .map_err(|e| leader.failed(format!("encoding records: {e}")))?;
                    Ok(PartitionProduceData::default()
                        .with_index(*p)
                        .with_records(Some(batch)))
                })
                .collect::<Result<Vec<_>, KafkaError>>()?;
            let request = ProduceRequest::default()
                .with_transactional_id(producer.as_ref().map(|(id, _, _)| id.clone()))
                .with_acks(-1)
                .with_timeout_ms(opts.timeout.as_millis().min(i32::MAX as u128) as i32)
                .with_topic_data(vec![TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_partition_data(data)]);
            let reply = leader.send_capped(request, PRODUCE_MAX)?;
            for t in &reply.responses {
                for p in &t.partition_responses {
                    let retriable = p.error_code.err().is_some_and(|e| e.is_retriable());
                    if retriable && start.elapsed() < opts.timeout {
                        again.push(p.index);
                        continue;
                    }
                    checked(
                        &leader,
                        p.error_code,
                        &format!("writing to partition {} of `{topic}`", p.index),
                    )?;
                    let n = by_partition.get(&p.index).map_or(0, |rs| rs.len() as i64);
                    written_to.push((addr.clone(), p.index, p.base_offset + n));
                }
            }
        }
        if again.is_empty() {
            return Ok(written_to);
        }
        std::thread::sleep(Duration::from_millis(200));
        leaders = super::conn::leaders(opts, topic)?;
        pending = again;
    }
}

/// Writes `records` to `topic` outside any transaction (where none can start): each to its
/// partition, in order within a partition, stamped `timestamp_ms`, acknowledged by all in-sync
/// replicas of each partition's leader. Nothing is written to a topic that does not exist,
/// nor to a partition it does not have.
pub fn produce_plain(
    opts: &KafkaOptions,
    topic: &str,
    records: &[OutRecord],
    timestamp_ms: i64,
) -> Result<(), KafkaError> {
    let leaders = super::conn::leaders(opts, topic)?;
    check_partitions(opts, topic, records, &leaders)?;
    let mut by_partition: BTreeMap<i32, Vec<&OutRecord>> = BTreeMap::new();
    for r in records {
        by_partition.entry(r.partition).or_default().push(r);
    }
    to_leaders(opts, topic, &leaders, &by_partition, timestamp_ms, None)
        .map(|_| ())
        .map_err(Fail::into_error)
}

/// Fails unless every record's partition is one of `topic`'s.
fn check_partitions(
    opts: &KafkaOptions,
    topic: &str,
    records: &[OutRecord],
    leaders: &BTreeMap<i32, String>,
) -> Result<(), KafkaError> {
    match records
        .iter()
        .map(|r| r.partition)
        .find(|p| !leaders.contains_key(p))
    {
        Some(p) => Err(KafkaError::Failed {
            bootstrap: opts.bootstrap_display(),
            message: format!(
                "topic `{topic}` has {}, not a partition {p}: nothing written",
                crate::text::count(leaders.len(), "partition")
            ),
        }),
        None => Ok(()),
    }
}

/// Waits until a `read_committed` reader sees the records written (each partition's last
/// stable offset past them). The coordinator answers the commit once it is decided, and writes
/// its markers to the partitions after: a read-back at once could still miss them.
fn visible(
    opts: &KafkaOptions,
    topic: &str,
    written_to: &[(String, i32, i64)],
) -> Result<(), KafkaError> {
    let start = Instant::now();
    let mut conns: BTreeMap<&str, Conn> = BTreeMap::new();
    for (addr, partition, after) in written_to {
        let c = match conns.entry(addr.as_str()) {
            std::collections::btree_map::Entry::Occupied(c) => c.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(Conn::open(opts, addr)?),
        };
        loop {
            let stable = super::fetch::offset_at(c, topic, *partition, super::fetch::LATEST)?;
            if stable >= *after {
                break;
            }
            if start.elapsed() > opts.timeout {
                return Err(c.failed(format!(
                    "the transaction is committed, but partition {partition} of `{topic}` does not show it within {} (`kafka.timeoutSeconds`): its last stable offset is {stable}, before {after}",
                    humantime::format_duration(opts.timeout)
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// A producer id and epoch for the transactional id, asked again while the coordinator is
/// loading or an earlier transaction of the id is still being ended.
fn init_producer_id(c: &mut Conn, id: TransactionalId) -> Result<(ProducerId, i16), KafkaError> {
    let start = Instant::now();
    loop {
        let request = InitProducerIdRequest::default()
            .with_transactional_id(Some(id.clone()))
            .with_transaction_timeout_ms(TRANSACTION_TIMEOUT.as_millis() as i32)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        let reply = c.send_capped(request, INIT_PRODUCER_ID_MAX)?;
        match reply.error_code.err() {
            None => return Ok((reply.producer_id, reply.producer_epoch)),
            Some(e) if again(e) && start.elapsed() < c.opts.timeout => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Some(e) => {
                return Err(c.failed(format!(
                    "starting a transaction as `{}`: {e}",
                    id.0.as_str()
                )))
            }
        }
    }
}

fn add_partitions(
    c: &mut Conn,
    id: TransactionalId,
    producer_id: ProducerId,
    epoch: i16,
    topic: &str,
    partitions: impl Iterator<Item = i32>,
) -> Result<(), Fail> {
    let partitions: Vec<i32> = partitions.collect();
    let start = Instant::now();
    loop {
        let request = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(id.clone())
            .with_v3_and_below_producer_id(producer_id)
            .with_v3_and_below_producer_epoch(epoch)
            .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
                .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                .with_partitions(partitions.clone())]);
        let reply = c.send_capped(request, ADD_PARTITIONS_MAX)?;
        let codes: Vec<i16> = reply
            .results_by_topic_v3_and_below
            .iter()
            .flat_map(|t| &t.results_by_partition)
            .map(|p| p.partition_error_code)
            .filter(|code| code.err().is_some())
            .collect();
        match codes.first() {
            None => return Ok(()),
            Some(code)
                if !fenced(*code)
                    && code.err().is_some_and(again)
                    && start.elapsed() < c.opts.timeout =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            Some(code) => {
                let what = format!("adding the partitions of `{topic}` to the transaction");
                return checked(c, *code, &what);
            }
        }
    }
}

/// One partition's records as one record batch: a transaction's (sequence from 0: the first
/// batch of a new producer epoch), or a plain one (no producer id, no sequence).
fn batch(
    records: &[&OutRecord],
    producer: Option<&(TransactionalId, ProducerId, i16)>,
    timestamp_ms: i64,
) -> Result<Bytes, String> {
    // A plain batch's base sequence is -1 (none); the encoder puts records whose offset and
    // sequence differ alike in one batch.
    let (transactional, producer_id, epoch, first_sequence) = match producer {
        Some((_, id, epoch)) => (true, *id, *epoch, 0),
        None => (false, ProducerId(-1), -1, -1),
    };
    let records: Vec<Record> = records
        .iter()
        .enumerate()
        .map(|(i, r)| Record {
            transactional,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: producer_id.0,
            producer_epoch: epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: first_sequence + i as i32,
            timestamp: timestamp_ms,
            key: Some(Bytes::from(r.key.clone())),
            value: r.value.clone().map(Bytes::from),
            headers: IndexMap::new(),
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(buf.freeze())
}
