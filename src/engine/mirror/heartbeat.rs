//! Whether the mirror itself is alive: MirrorMaker 2's heartbeats on the DR cluster.
//!
//! MM2's MirrorHeartbeatConnector writes a record (`Heartbeat.java` in Apache Kafka's
//! `connect/mirror-client`) about every second to the `heartbeats` topic of the Kafka its
//! Connect worker uses; MM2's MirrorSourceConnector copies every `heartbeats` topic it sees
//! to `<alias><separator>heartbeats` on the target (under the identity policy too: heartbeats
//! are always renamed). On the DR cluster, then:
//! - `<alias>.heartbeats`: heartbeats written on the source cluster and copied by the mirror:
//!   their time says when records last came through from the source alias;
//! - `heartbeats`: written by the heartbeat connector of the flow `alias->DR`, keyed by
//!   source alias: the mirror's own Connect worker is alive (the source need not be).
//!
//! Key: `sourceClusterAlias` STRING, `targetClusterAlias` STRING; value: `version` INT16
//! (only 0), `timestamp` INT64 (milliseconds since the Unix epoch). A STRING is an INT16
//! length, then UTF-8.

use serde::Serialize;

use super::CheckpointSource;
use crate::kafka::policy::{MirrorRelation, ReplicationPolicy};
use crate::kafka::KafkaError;

/// How many records at the end of a heartbeats topic are read (MM2 writes one per second
/// per flow; compaction keeps one per key).
pub const TAIL: i64 = 500;

/// A decoded heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    pub source_alias: String,
    pub target_alias: String,
    pub timestamp_ms: i64,
}

fn string(b: &[u8]) -> Option<(&str, &[u8])> {
    let len = usize::try_from(i16::from_be_bytes(b.get(..2)?.try_into().ok()?)).ok()?;
    let s = std::str::from_utf8(b.get(2..2 + len)?).ok()?;
    Some((s, &b[2 + len..]))
}

/// Decodes one record of a heartbeats topic; `None` when it is not a version 0 heartbeat.
pub fn decode(key: &[u8], value: &[u8]) -> Option<Heartbeat> {
    let (source, rest) = string(key)?;
    let (target, _) = string(rest)?;
    if i16::from_be_bytes(value.get(..2)?.try_into().ok()?) != 0 {
        return None;
    }
    let timestamp_ms = i64::from_be_bytes(value.get(2..10)?.try_into().ok()?);
    Some(Heartbeat {
        source_alias: source.to_string(),
        target_alias: target.to_string(),
        timestamp_ms,
    })
}

/// Encodes a heartbeat as MM2 writes it (tests).
pub fn encode(source: &str, target: &str, timestamp_ms: i64) -> (Vec<u8>, Vec<u8>) {
    let mut key = Vec::new();
    for s in [source, target] {
        key.extend_from_slice(&(s.len() as i16).to_be_bytes());
        key.extend_from_slice(s.as_bytes());
    }
    let mut value = 0i16.to_be_bytes().to_vec();
    value.extend_from_slice(&timestamp_ms.to_be_bytes());
    (key, value)
}

/// What the DR cluster's heartbeats say about one mirror (JSON: `mirrors[]` of a diff).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MirrorHeartbeat {
    /// MM2's source alias.
    pub alias: String,
    /// The topic the last heartbeat was read from (`None`: no heartbeat found).
    pub topic: Option<String>,
    /// Whether that topic is the copy of the source's heartbeats (records came through the
    /// mirror), not only the heartbeat connector's own on the DR cluster.
    pub mirrored: bool,
    /// When the last heartbeat was written (milliseconds since the Unix epoch).
    pub last_heartbeat_ms: Option<i64>,
    /// Seconds between then and now.
    pub seconds_since_last_heartbeat: Option<i64>,
    /// Why there is none: the topics looked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The readiness alarm's `--max-mirror-silence` in seconds, once a diff has judged it
    /// (the text line says whether records come through by it; JSON has the reason in the
    /// connectors' notes).
    #[serde(skip)]
    pub allowed_silence: Option<u64>,
}

/// The heartbeats topic names of a relation on the DR cluster: the mirrored copy first.
pub fn topics(relation: &MirrorRelation) -> [String; 2] {
    let sep = match &relation.policy {
        ReplicationPolicy::Default { separator } => separator.as_str(),
        ReplicationPolicy::Identity => ".",
    };
    [
        format!("{}{sep}heartbeats", relation.alias),
        "heartbeats".to_string(),
    ]
}

/// Reads the heartbeats of `relation` on the DR cluster. A missing topic is not an error
/// (the heartbeat connector is optional); a Kafka that cannot be read is.
pub fn read(
    relation: &MirrorRelation,
    source: &dyn CheckpointSource,
    now_ms: i64,
) -> Result<MirrorHeartbeat, KafkaError> {
    let [mirrored, local] = topics(relation);
    let mut missing = Vec::new();
    for (topic, is_mirrored) in [(&mirrored, true), (&local, false)] {
        let mut last: Option<i64> = None;
        let r = source.scan_tail(topic, TAIL, &mut |r| {
            let (Some(k), Some(v)) = (r.key, r.value) else {
                return;
            };
            let Some(h) = decode(k, v) else { return };
            if !is_mirrored && h.source_alias != relation.alias {
                return;
            }
            last = Some(last.map_or(h.timestamp_ms, |l| l.max(h.timestamp_ms)));
        });
        match r {
            Err(KafkaError::UnknownTopic { .. }) => missing.push(format!("`{topic}`")),
            Err(e) => return Err(e),
            Ok(_) => match last {
                Some(ms) => {
                    return Ok(MirrorHeartbeat {
                        alias: relation.alias.clone(),
                        topic: Some(topic.clone()),
                        mirrored: is_mirrored,
                        last_heartbeat_ms: Some(ms),
                        seconds_since_last_heartbeat: Some(((now_ms - ms) / 1000).max(0)),
                        problem: None,
                        allowed_silence: None,
                    })
                }
                None => missing.push(format!("`{topic}` (no heartbeat of `{}`)", relation.alias)),
            },
        }
    }
    Ok(MirrorHeartbeat {
        alias: relation.alias.clone(),
        topic: None,
        mirrored: false,
        last_heartbeat_ms: None,
        seconds_since_last_heartbeat: None,
        problem: Some(format!(
            "no heartbeat of `{}` in {}: run a MirrorHeartbeatConnector on a Connect worker of `{}`'s own Kafka (MM2's heartbeat connector of the flow towards `{}`): the mirror copies its heartbeats here as `{mirrored}`, which says whether records come through",
            relation.alias,
            missing.join(" or "),
            relation.alias,
            relation.alias
        )),
        allowed_silence: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_it_encodes_and_refuses_other_versions() {
        let (k, v) = encode("east", "west", 1_700_000_000_123);
        assert_eq!(
            hex::encode(&k),
            "000465617374000477657374",
            "two STRINGs: source alias, target alias"
        );
        assert_eq!(
            hex::encode(&v),
            "00000000018bcfe5687b",
            "version 0, then INT64 timestamp"
        );
        assert_eq!(
            decode(&k, &v),
            Some(Heartbeat {
                source_alias: "east".into(),
                target_alias: "west".into(),
                timestamp_ms: 1_700_000_000_123
            })
        );
        let mut v1 = v.clone();
        v1[1] = 1;
        assert_eq!(decode(&k, &v1), None);
        assert_eq!(decode(&k[..5], &v), None);
    }
}
