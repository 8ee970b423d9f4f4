//! One record of MM2's checkpoints topic (`Checkpoint.java` in Apache Kafka's
//! `connect/mirror-client`), in Kafka's `Struct` encoding, big-endian:
//! key `group` STRING, `topic` STRING, `partition` INT32; value `version` INT16 (only 0),
//! `upstreamOffset` INT64, `offset` INT64, `metadata` STRING. A STRING is an INT16 length,
//! then that many bytes of UTF-8.
//!
//! Also one record of MM2's offset syncs topic (`OffsetSync.java`): key `topic` STRING,
//! `partition` INT32 (the source's partition); value `upstreamOffset` INT64, `offset` INT64
//! (no version): the record at that offset on the source is at `offset` on the target.

/// A decoded key, borrowing the record's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointKey<'a> {
    pub group: &'a str,
    /// The topic's name on the target cluster.
    pub topic: &'a str,
    pub partition: i32,
}

/// A decoded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointValue {
    /// The group's committed offset on the source cluster.
    pub upstream: i64,
    /// Where that position is on the target cluster (`offset`).
    pub downstream: i64,
}

/// Why a record is not a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("truncated")]
    Truncated,
    #[error("not UTF-8")]
    NotUtf8,
    #[error("version {0} (only version 0 is known)")]
    Version(i16),
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }
    fn i16(&mut self) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn string(&mut self) -> Result<&'a str, DecodeError> {
        let len = self.i16()?;
        let len = usize::try_from(len).map_err(|_| DecodeError::Truncated)?;
        std::str::from_utf8(self.take(len)?).map_err(|_| DecodeError::NotUtf8)
    }
}

pub fn decode_key(bytes: &[u8]) -> Result<CheckpointKey<'_>, DecodeError> {
    let mut r = Reader { bytes };
    Ok(CheckpointKey {
        group: r.string()?,
        topic: r.string()?,
        partition: r.i32()?,
    })
}

pub fn decode_value(bytes: &[u8]) -> Result<CheckpointValue, DecodeError> {
    let mut r = Reader { bytes };
    let version = r.i16()?;
    if version != 0 {
        return Err(DecodeError::Version(version));
    }
    let upstream = r.i64()?;
    let downstream = r.i64()?;
    r.string()?;
    Ok(CheckpointValue {
        upstream,
        downstream,
    })
}

/// A decoded offset sync: the record at `upstream` of `topic`'s `partition` on the source
/// is at `downstream` on the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetSync<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub upstream: i64,
    pub downstream: i64,
}

pub fn decode_sync<'a>(key: &'a [u8], value: &[u8]) -> Result<OffsetSync<'a>, DecodeError> {
    let mut k = Reader { bytes: key };
    let mut v = Reader { bytes: value };
    Ok(OffsetSync {
        topic: k.string()?,
        partition: k.i32()?,
        upstream: v.i64()?,
        downstream: v.i64()?,
    })
}

/// Encodes an offset sync as MM2 writes it (tests).
pub fn encode_sync(
    topic: &str,
    partition: i32,
    upstream: i64,
    downstream: i64,
) -> (Vec<u8>, Vec<u8>) {
    let mut key = (topic.len() as i16).to_be_bytes().to_vec();
    key.extend_from_slice(topic.as_bytes());
    key.extend_from_slice(&partition.to_be_bytes());
    let mut value = upstream.to_be_bytes().to_vec();
    value.extend_from_slice(&downstream.to_be_bytes());
    (key, value)
}

/// Encodes a checkpoint as MM2 writes it (tests, benchmarks and the fake checkpoints topic).
pub fn encode(
    group: &str,
    topic: &str,
    partition: i32,
    upstream: i64,
    downstream: i64,
) -> (Vec<u8>, Vec<u8>) {
    let mut key = Vec::with_capacity(8 + group.len() + topic.len());
    for s in [group, topic] {
        key.extend_from_slice(&(s.len() as i16).to_be_bytes());
        key.extend_from_slice(s.as_bytes());
    }
    key.extend_from_slice(&partition.to_be_bytes());
    let mut value = Vec::with_capacity(20);
    value.extend_from_slice(&0i16.to_be_bytes());
    value.extend_from_slice(&upstream.to_be_bytes());
    value.extend_from_slice(&downstream.to_be_bytes());
    value.extend_from_slice(&0i16.to_be_bytes());
    (key, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_documented_example() {
        // group connect-orders-sink, topic east.orders, partition 3, upstream 1000,
        // downstream 997, metadata empty (Checkpoint.java's Struct encoding).
        let key = hex::decode(
            "0013636f6e6e6563742d6f72646572732d73696e6b000b656173742e6f726465727300000003",
        )
        .unwrap();
        let value = hex::decode("000000000000000003e800000000000003e50000").unwrap();
        assert_eq!(
            decode_key(&key).unwrap(),
            CheckpointKey {
                group: "connect-orders-sink",
                topic: "east.orders",
                partition: 3
            }
        );
        assert_eq!(
            decode_value(&value).unwrap(),
            CheckpointValue {
                upstream: 1000,
                downstream: 997
            }
        );
        assert_eq!(
            encode("connect-orders-sink", "east.orders", 3, 1000, 997),
            (key, value)
        );
    }

    #[test]
    fn rejects_other_versions_and_short_records() {
        let (_, mut value) = encode("g", "t", 0, 1, 1);
        value[1] = 1;
        assert_eq!(decode_value(&value), Err(DecodeError::Version(1)));
        let (key, value) = encode("g", "t", 0, 1, 1);
        assert_eq!(
            decode_key(&key[..key.len() - 1]),
            Err(DecodeError::Truncated)
        );
        assert_eq!(decode_value(&value[..10]), Err(DecodeError::Truncated));
        assert_eq!(decode_key(&[0xff, 0xff]), Err(DecodeError::Truncated));
    }
}
