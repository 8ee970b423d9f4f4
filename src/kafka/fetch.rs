//! Reading a topic's records with Kafka's `ListOffsets` and `Fetch` (kafka-protocol's
//! messages over `conn.rs`), `read_committed`: what a consumer of the topic sees once every
//! transaction is over. Transaction markers (control batches) are stepped over, and the records
//! of an aborted transaction left out, as Kafka's own consumer does: a Connect worker with
//! `exactly.once.source.support` writes its offsets topic in transactions, and so does kco.
//!
//! Each partition is read from its first kept record (or, with a tail, at most that many
//! records before the end) to its last stable offset when the read began. Records come in
//! offset order; a batch only partly fetched is fetched again from its start.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bytes::{Buf, Bytes};
use kafka_protocol::error::{ParseResponseErrorCode, ResponseError};
use kafka_protocol::messages::{
    fetch_request::{FetchPartition, FetchTopic},
    list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic},
    BrokerId, FetchRequest, ListOffsetsRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::RecordBatchDecoder;

use super::conn::Conn;
use super::{KafkaError, KafkaOptions, RawRecord, ScanEnd};

/// Fetch v13 names topics by id; up to v12 by name.
const FETCH_MAX: i16 = 12;
/// `read_committed`.
const READ_COMMITTED: i8 = 1;
/// Bytes asked for per fetch: bounds kco's memory whatever the topic's size.
const FETCH_MAX_BYTES: i32 = 4 * 1024 * 1024;
/// `ListOffsets` timestamps: the first kept offset, and the end.
const EARLIEST: i64 = -2;
pub(super) const LATEST: i64 = -1;

/// Reads partition `partition` of `topic` (from its first kept record, or with `tail` at most
/// that many records before the end) to the end it had when the read began, calling `visit`
/// for each record in offset order.
pub fn scan_partition(
    opts: &KafkaOptions,
    topic: &str,
    partition: i32,
    tail: Option<i64>,
    visit: &mut dyn FnMut(RawRecord<'_>),
) -> Result<ScanEnd, KafkaError> {
    let leaders = super::conn::leaders(opts, topic)?;
    let Some(leader) = leaders.get(&partition) else {
        return Err(KafkaError::Failed {
            bootstrap: opts.bootstrap_display(),
            message: format!(
                "topic `{topic}` has {}, not a partition {partition}",
                crate::text::count(leaders.len(), "partition")
            ),
        });
    };
    let mut conn = Conn::open(opts, leader)?;
    scan_one(&mut conn, topic, partition, tail, visit)
}

/// Reads every partition of `topic`, one after the other (one connection per leader), each
/// from its first kept record to the end it had when its read began; `visit` is told the
/// partition of each record. Returns what each partition's scan saw, by partition.
pub fn scan_topic(
    opts: &KafkaOptions,
    topic: &str,
    visit: &mut dyn FnMut(i32, RawRecord<'_>),
) -> Result<Vec<ScanEnd>, KafkaError> {
    let leaders = super::conn::leaders(opts, topic)?;
    let mut conns: BTreeMap<&str, Conn> = BTreeMap::new();
    let mut ends = Vec::with_capacity(leaders.len());
    for (partition, leader) in &leaders {
        let conn = match conns.entry(leader.as_str()) {
            std::collections::btree_map::Entry::Occupied(c) => c.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(Conn::open(opts, leader)?),
        };
        let mut each = |r: RawRecord<'_>| visit(*partition, r);
        ends.push(scan_one(conn, topic, *partition, None, &mut each)?);
    }
    Ok(ends)
}

fn topic_name(topic: &str) -> TopicName {
    TopicName(StrBytes::from_string(topic.to_string()))
}

/// The offset `ListOffsets` gives for `at` (`EARLIEST`, `LATEST`), read_committed: the end is
/// the last stable offset.
pub(super) fn offset_at(
    c: &mut Conn,
    topic: &str,
    partition: i32,
    at: i64,
) -> Result<i64, KafkaError> {
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(READ_COMMITTED)
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name(topic_name(topic))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(partition)
                .with_current_leader_epoch(-1)
                .with_timestamp(at)])]);
    let reply = c.send(request)?;
    let what = format!("reading an offset of partition {partition} of `{topic}`");
    let p = reply
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .find(|p| p.partition_index == partition)
        .ok_or_else(|| c.failed(format!("{what}: no answer for it")))?;
    c.check(p.error_code, &what)?;
    Ok(p.offset)
}

/// What a partition's aborted transactions leave out: those the fetches named (by producer
/// and first offset), and the producers whose aborted transaction is under way at the offset
/// reached.
#[derive(Default)]
struct Aborted {
    /// (first offset, producer id), in offset order, not yet reached.
    pending: VecDeque<(i64, i64)>,
    seen: BTreeSet<(i64, i64)>,
    active: BTreeSet<i64>,
}

impl Aborted {
    fn learn(&mut self, list: impl IntoIterator<Item = (i64, i64)>) {
        for a in list {
            if self.seen.insert(a) {
                self.pending.push_back(a);
            }
        }
        self.pending.make_contiguous().sort_unstable();
    }

    /// Whether the record at `offset` is to be left out (its producer's transaction at that
    /// offset was aborted, or it is a marker), updating what is under way.
    fn leaves_out(&mut self, r: &kafka_protocol::records::Record) -> bool {
        while let Some(&(first, producer)) = self.pending.front() {
            if first > r.offset {
                break;
            }
            self.active.insert(producer);
            self.pending.pop_front();
        }
        if r.control {
            // The marker's key: version (int16), then type (int16): 0 abort, 1 commit.
            let abort = r
                .key
                .as_ref()
                .filter(|k| k.len() >= 4)
                .is_some_and(|k| i16::from_be_bytes([k[2], k[3]]) == 0);
            if abort {
                self.active.remove(&r.producer_id);
            }
            return true;
        }
        r.transactional && self.active.contains(&r.producer_id)
    }
}

/// The complete record batches at the front of `records` (a fetch may end with part of one),
/// decoded; the records of each, in offset order.
fn complete_batches(mut records: Bytes) -> Result<Vec<kafka_protocol::records::Record>, String> {
    let mut out = Vec::new();
    // A batch: base offset (int64), length (int32) of what follows.
    while records.remaining() >= 12 {
        let length = i32::from_be_bytes(records[8..12].try_into().expect("4 bytes"));
        let whole = 12 + length.max(0) as usize;
        if records.remaining() < whole {
            break;
        }
        let mut batch = records.split_to(whole);
        let set = RecordBatchDecoder::decode(&mut batch).map_err(|e| e.to_string())?;
        out.extend(set.records);
    }
    Ok(out)
}

fn scan_one(
    c: &mut Conn,
    topic: &str,
    partition: i32,
    tail: Option<i64>,
    visit: &mut dyn FnMut(RawRecord<'_>),
) -> Result<ScanEnd, KafkaError> {
    let start = offset_at(c, topic, partition, EARLIEST)?;
    let end = offset_at(c, topic, partition, LATEST)?;
    let mut offset = match tail {
        Some(n) => start.max(end - n),
        None => start,
    };
    let mut records = 0u64;
    let mut aborted = Aborted::default();
    let what = format!("fetching partition {partition} of `{topic}`");
    while offset < end {
        let request = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(100)
            .with_min_bytes(1)
            .with_max_bytes(FETCH_MAX_BYTES)
            .with_isolation_level(READ_COMMITTED)
            .with_session_epoch(-1)
            .with_topics(vec![FetchTopic::default()
                .with_topic(topic_name(topic))
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(partition)
                    .with_current_leader_epoch(-1)
                    .with_fetch_offset(offset)
                    .with_last_fetched_epoch(-1)
                    .with_log_start_offset(-1)
                    .with_partition_max_bytes(FETCH_MAX_BYTES)])]);
        let reply = c.send_capped(request, FETCH_MAX)?;
        c.check(reply.error_code, &what)?;
        let Some(p) = reply
            .responses
            .into_iter()
            .flat_map(|t| t.partitions)
            .find(|p| p.partition_index == partition)
        else {
            return Err(c.failed(format!("{what}: no answer for it")));
        };
        if p.error_code.err() == Some(ResponseError::OffsetOutOfRange)
            && p.log_start_offset > offset
        {
            // Deleted (retention, compaction of the log's head) since the start was read.
            offset = p.log_start_offset;
            continue;
        }
        c.check(p.error_code, &what)?;
        aborted.learn(
            p.aborted_transactions
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.first_offset, a.producer_id.0)),
        );
        let batch = complete_batches(p.records.unwrap_or_default())
            .map_err(|e| c.failed(format!("{what}: reading its records: {e}")))?;
        let mut next = offset;
        for r in &batch {
            next = next.max(r.offset + 1);
            if r.offset < offset {
                // A batch that began before the offset asked for.
                continue;
            }
            if r.offset >= end {
                break;
            }
            if aborted.leaves_out(r) {
                continue;
            }
            records += 1;
            visit(RawRecord {
                offset: r.offset,
                timestamp_ms: r.timestamp,
                key: r.key.as_deref(),
                value: r.value.as_deref(),
            });
        }
        // Nothing at this offset (compacted away, below the last stable offset): step over.
        offset = if next > offset { next } else { offset + 1 };
    }
    Ok(ScanEnd {
        start,
        end,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };

    fn record(offset: i64, producer: i64, transactional: bool, control: Option<i16>) -> Record {
        Record {
            transactional,
            control: control.is_some(),
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: producer,
            producer_epoch: 0,
            timestamp_type: TimestampType::Creation,
            offset,
            sequence: offset as i32,
            timestamp: 1,
            key: Some(match control {
                Some(t) => Bytes::from([0u8, 0, 0, t as u8].to_vec()),
                None => Bytes::from(format!("k{offset}")),
            }),
            value: Some(Bytes::from_static(b"v")),
            headers: Default::default(),
        }
    }

    fn encode(records: &[Record]) -> Bytes {
        let mut buf = bytes::BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            records,
            &RecordEncodeOptions {
                version: 2,
                compression: Compression::None,
            },
        )
        .unwrap();
        buf.freeze()
    }

    /// Producer 7's transaction (offsets 1, 2) is aborted, its marker at 3; producer 8's
    /// (4) committed, its marker at 5; 0 and 6 are outside any transaction. A consumer reads
    /// 0, 4 and 6.
    #[test]
    fn an_aborted_transaction_and_the_markers_are_left_out() {
        let mut bytes = bytes::BytesMut::new();
        for batch in [
            vec![record(0, -1, false, None)],
            vec![record(1, 7, true, None), record(2, 7, true, None)],
            vec![record(3, 7, true, Some(0))],
            vec![record(4, 8, true, None)],
            vec![record(5, 8, true, Some(1))],
            vec![record(6, -1, false, None)],
        ] {
            bytes.extend_from_slice(&encode(&batch));
        }
        let all = complete_batches(bytes.freeze()).unwrap();
        assert_eq!(all.len(), 7);
        let mut aborted = Aborted::default();
        aborted.learn([(1, 7)]);
        let read: Vec<i64> = all
            .iter()
            .filter(|r| !aborted.leaves_out(r))
            .map(|r| r.offset)
            .collect();
        assert_eq!(read, [0, 4, 6]);
        // Producer 7's next transaction, after its abort marker, is read.
        assert!(!aborted.leaves_out(&record(7, 7, true, None)));
    }

    /// A fetch that ends in the middle of a batch: the complete ones only.
    #[test]
    fn a_batch_cut_short_is_left_for_the_next_fetch() {
        let first = encode(&[record(0, -1, false, None), record(1, -1, false, None)]);
        let second = encode(&[record(2, -1, false, None)]);
        let mut cut = bytes::BytesMut::new();
        cut.extend_from_slice(&first);
        cut.extend_from_slice(&second[..second.len() - 3]);
        let read: Vec<i64> = complete_batches(cut.freeze())
            .unwrap()
            .iter()
            .map(|r| r.offset)
            .collect();
        assert_eq!(read, [0, 1]);
    }
}
