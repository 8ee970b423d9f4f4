//! What an asynchronous alter and an observed read look like: the answers of Confluent
//! Cloud's offsets endpoints, decoded. Unknown fields are ignored and the request phase is an
//! open enum, as the service's contract asks of clients.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, NaiveDateTime};
use serde::{Deserialize, Deserializer};

use crate::model::{OffsetEntry, PatchEntry};

/// One read of a connector's offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetsRead {
    pub entries: Vec<OffsetEntry>,
    /// When the service observed them; `None` when it reads them live (Kafka Connect).
    pub observed_at: Option<SystemTime>,
}

/// What an asynchronous alter request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum AlterKind {
    /// Change the given partitions only.
    Patch,
    /// Reset the given partitions (or all, when none is given) to a new connector's state.
    Delete,
}

impl std::fmt::Display for AlterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AlterKind::Patch => "PATCH",
            AlterKind::Delete => "DELETE",
        })
    }
}

/// An alter request as the service recorded it (the 202 answer, and `request` of the status).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AlterRequest {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub offsets: Option<Vec<PatchEntry>>,
    #[serde(default, deserialize_with = "opt_time")]
    pub requested_at: Option<SystemTime>,
}

/// Where a request is. The service declares the enum open: a phase kco does not know is
/// kept as it was spelled and counts as not done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    Pending,
    PendingValidation,
    Applied,
    Failed,
    Other(String),
}

impl Phase {
    pub fn parse(s: &str) -> Phase {
        match s {
            "PENDING" => Phase::Pending,
            "PENDING_VALIDATION" => Phase::PendingValidation,
            "APPLIED" => Phase::Applied,
            "FAILED" => Phase::Failed,
            other => Phase::Other(other.to_string()),
        }
    }

    /// Applied or failed: the request is over.
    pub fn is_final(&self) -> bool {
        matches!(self, Phase::Applied | Phase::Failed)
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Pending => "PENDING",
            Phase::PendingValidation => "PENDING_VALIDATION",
            Phase::Applied => "APPLIED",
            Phase::Failed => "FAILED",
            Phase::Other(s) => s,
        })
    }
}

/// The status of a connector's last alter request.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterStatus {
    pub request: AlterRequest,
    pub phase: Phase,
    pub message: String,
    /// The offsets before the change, as the service recorded them.
    pub previous_offsets: Option<Vec<PatchEntry>>,
    /// When it was applied; `None` until then.
    pub applied_at: Option<SystemTime>,
}

impl<'de> Deserialize<'de> for AlterStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            request: AlterRequest,
            #[serde(default)]
            status: Option<RawStatus>,
            #[serde(default)]
            previous_offsets: Option<Vec<PatchEntry>>,
            #[serde(default, deserialize_with = "opt_time")]
            applied_at: Option<SystemTime>,
        }
        #[derive(Deserialize)]
        struct RawStatus {
            #[serde(default)]
            phase: Option<String>,
            #[serde(default)]
            message: Option<String>,
        }
        let raw = Raw::deserialize(d)?;
        let status = raw.status.unwrap_or(RawStatus {
            phase: None,
            message: None,
        });
        Ok(AlterStatus {
            request: raw.request,
            phase: Phase::parse(status.phase.as_deref().unwrap_or("")),
            message: status.message.unwrap_or_default(),
            previous_offsets: raw.previous_offsets,
            applied_at: raw.applied_at,
        })
    }
}

fn opt_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SystemTime>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    match s.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => parse_time(s)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("not a time: `{s}`"))),
    }
}

/// Parses the time spellings Confluent Cloud uses: RFC 3339 (`2024-02-20T15:14:20Z`,
/// `...+00:00`), a space instead of the `T` (`2024-02-20 15:14:19+00:00`), an offset without
/// its colon (`2024-02-20T15:14:20+0000`) or its minutes (`+00`), fractions of a second, and no
/// offset at all (UTC). chrono reads them; a time before 1970 is none of the service's.
pub fn parse_time(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let zoned = || {
        DateTime::parse_from_rfc3339(s).ok().or_else(|| {
            ["%Y-%m-%dT%H:%M:%S%.f%#z", "%Y-%m-%d %H:%M:%S%.f%#z"]
                .iter()
                .find_map(|f| DateTime::parse_from_str(s, f).ok())
        })
    };
    let utc = || {
        ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
            .map(|t| t.and_utc().fixed_offset())
    };
    let t = zoned().or_else(utc)?;
    let secs = u64::try_from(t.timestamp()).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, t.timestamp_subsec_nanos()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> String {
        crate::clock::rfc3339(parse_time(s).unwrap_or_else(|| panic!("`{s}` parses")))
    }

    #[test]
    fn every_spelling_confluent_uses_parses_to_the_same_instant() {
        for s in [
            "2024-02-20 15:14:19+00:00",
            "2024-02-20T15:14:19+0000",
            "2024-02-20T15:14:19Z",
            "2024-02-20T15:14:19.000Z",
            "2024-02-20T16:14:19+01:00",
            "2024-02-20T10:14:19-0500",
            "2024-02-20 15:14:19",
            "2024-02-20T15:14:19+00",
            "2024-02-20t15:14:19z",
            "2024-02-20T15:14:19.000000000001Z",
        ] {
            assert_eq!(at(s), "2024-02-20T15:14:19Z", "{s}");
        }
        assert_eq!(
            parse_time("2024-02-20T15:14:19.5Z").unwrap(),
            parse_time("2024-02-20T15:14:19Z").unwrap() + Duration::from_millis(500)
        );
        for bad in [
            "",
            "yesterday",
            "2024-02-20",
            "2024-13-20T00:00:00Z",
            "2024-02-20T15:14:19+5",
            "2024-02-30T00:00:00Z",
            "2023-02-29 00:00:00",
            "1969-12-31T23:59:59Z",
            "2024-02-20T15:14:19.Z",
            "2024-02-20T15:14:19Z trailing",
        ] {
            assert!(parse_time(bad).is_none(), "{bad}");
        }
        assert_eq!(at("2024-02-29T00:00:00Z"), "2024-02-29T00:00:00Z");
        // A leap second is the first second of the next minute, as SystemTime counts.
        assert_eq!(at("2016-12-31T23:59:60Z"), "2017-01-01T00:00:00Z");
    }

    #[test]
    fn a_status_with_unknown_fields_and_an_unknown_phase_decodes() {
        let v = json!({
            "request": {"id": "lcc-1", "name": "c", "type": "PATCH", "offsets": [],
                        "requested_at": "2024-02-20 15:14:19+00:00", "extra": 1},
            "status": {"phase": "VALIDATING_AGAIN", "message": "m", "more": true},
            "previous_offsets": [{"partition": {"p": 1}, "offset": {"o": 2}}],
            "applied_at": null,
            "new_field": {"x": 1}
        });
        let s: AlterStatus = serde_json::from_value(v).unwrap();
        assert_eq!(s.phase, Phase::Other("VALIDATING_AGAIN".into()));
        assert!(!s.phase.is_final());
        assert_eq!(s.applied_at, None);
        assert_eq!(s.previous_offsets.unwrap().len(), 1);
        assert!(s.request.requested_at.is_some());
        let applied: AlterStatus = serde_json::from_value(json!({
            "request": {"id": "lcc-1", "type": "PATCH"},
            "status": {"phase": "APPLIED"},
            "applied_at": "2024-02-20T15:14:20+0000"
        }))
        .unwrap();
        assert_eq!(applied.phase, Phase::Applied);
        assert_eq!(
            crate::clock::rfc3339(applied.applied_at.unwrap()),
            "2024-02-20T15:14:20Z"
        );
    }
}
