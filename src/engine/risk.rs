//! What a change to a snapshot file would do to a connector once applied: labels a reviewer
//! can act on (reprocessing, data loss, a fall back to the connector's default).

use serde::Serialize;

use crate::compare::{Direction, Movement};
use crate::model::{canonical_fields, ConnectorType, Fields};

/// The kind of consequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskCode {
    /// The offset moves backwards: records are processed again.
    Reprocessing,
    /// The offset moves forwards: records are skipped.
    DataLoss,
    /// A sink partition's offset is removed: the consumer falls back to `auto.offset.reset`.
    OffsetReset,
    /// A source partition's offset is removed: the connector starts it from its own default.
    SourceRestart,
    /// A partition is added with an explicit offset.
    NewPartition,
    /// A source offset changed in a way kco cannot order.
    Changed,
}

impl RiskCode {
    /// The word a reviewer sees (markdown bolds it).
    pub fn label(self) -> &'static str {
        match self {
            RiskCode::Reprocessing => "REPROCESSING",
            RiskCode::DataLoss => "DATA LOSS",
            RiskCode::OffsetReset => "OFFSET RESET",
            RiskCode::SourceRestart => "OFFSET RESET",
            RiskCode::NewPartition => "NEW PARTITION",
            RiskCode::Changed => "CHANGED",
        }
    }
}

/// One partition's consequence, with a sentence that says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Risk {
    pub code: RiskCode,
    pub message: String,
}

/// A partition whose offset goes from `old` to `new` (`None`: absent). `movement` is the
/// ordered movement from old to new, when known.
pub fn assess(
    kind: ConnectorType,
    old: Option<&Fields>,
    new: Option<&Fields>,
    movement: Option<&Movement>,
) -> Option<Risk> {
    let (code, message) = match (old, new) {
        (None, None) => return None,
        (Some(_), None) => match kind {
            ConnectorType::Sink => (
                RiskCode::OffsetReset,
                "offset removed: falls back to auto.offset.reset".to_string(),
            ),
            ConnectorType::Source => (
                RiskCode::SourceRestart,
                "offset removed: the connector restarts this partition from its own default"
                    .to_string(),
            ),
        },
        (None, Some(n)) => (
            RiskCode::NewPartition,
            format!("partition added: starts at {}", show(n)),
        ),
        (Some(o), Some(n)) if o == n => return None,
        (Some(o), Some(n)) => match movement {
            Some(m) => moved(kind, m),
            None => (
                RiskCode::Changed,
                format!(
                    "offset changed from {} to {} (no known order)",
                    show(o),
                    show(n)
                ),
            ),
        },
    };
    Some(Risk { code, message })
}

fn moved(kind: ConnectorType, m: &Movement) -> (RiskCode, String) {
    let amount = match m.distance {
        Some(d) => crate::text::quantity(d, &m.unit),
        None => format!("some {}", m.unit),
    };
    match (m.direction, kind) {
        (Direction::Backward, ConnectorType::Sink) => (
            RiskCode::Reprocessing,
            format!("{amount} will be reprocessed (duplicates downstream)"),
        ),
        (Direction::Backward, ConnectorType::Source) => (
            RiskCode::Reprocessing,
            format!("{amount} will be read again (duplicate records in Kafka)"),
        ),
        (Direction::Forward, ConnectorType::Sink) => (
            RiskCode::DataLoss,
            format!("{amount} will be skipped (data loss)"),
        ),
        (Direction::Forward, ConnectorType::Source) => (
            RiskCode::DataLoss,
            format!("{amount} will be skipped (never written to Kafka: data loss)"),
        ),
    }
}

/// `risk` for a connector whose live offsets still move until the apply stops it (it is
/// RUNNING when planned): its counts are bounds, and say so. A rewind's reprocessing grows
/// while live moves on ("at least 265 records"), a skip ahead's loss shrinks ("at most 40
/// records"); an amount kco cannot count ("some bytes") is left as it is.
pub fn while_moving(mut risk: Risk) -> Risk {
    let bound = match risk.code {
        RiskCode::Reprocessing => "at least ",
        RiskCode::DataLoss => "at most ",
        _ => return risk,
    };
    if risk.message.starts_with(|c: char| c.is_ascii_digit()) {
        risk.message.insert_str(0, bound);
    }
    risk
}

/// Whether applying a change leaves a partition where live has it: the change moves it
/// forward (`change`: from the files' offset before the change to its target) and live has
/// already passed that target (`live_to_target`: from live to the target is backward). A
/// change that skips ahead never meant to move a partition back; a backward change (a
/// rewind) is exact, and an unordered one is applied as written. The one rule of the plan
/// and of a review's labels against live.
pub fn passed(change: Option<&Movement>, live_to_target: Option<&Movement>) -> bool {
    matches!(
        (change, live_to_target),
        (Some(c), Some(t)) if c.direction == Direction::Forward && t.direction == Direction::Backward
    )
}

/// Why a partition [`passed`] is left where it is.
pub const PASSED: &str =
    "left where it is: live is already past the change's target (a forward change)";

/// An offset as compact JSON.
pub fn show(f: &Fields) -> String {
    canonical_fields(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::movement;
    use serde_json::json;

    fn f(v: serde_json::Value) -> Fields {
        v.as_object().unwrap().clone().into()
    }

    #[test]
    fn counts_of_a_moving_connector_are_bounds() {
        let p = f(json!({"kafka_topic":"t","kafka_partition":0}));
        let o = |n: i64| f(json!({ "kafka_offset": n }));
        let at = |a: i64, b: i64| {
            let r = assess(
                ConnectorType::Sink,
                Some(&o(a)),
                Some(&o(b)),
                movement(&p, &o(a), &o(b)).as_ref(),
            )
            .unwrap();
            while_moving(r).message
        };
        assert_eq!(
            at(1000, 735),
            "at least 265 records will be reprocessed (duplicates downstream)"
        );
        assert_eq!(
            at(1000, 1040),
            "at most 40 records will be skipped (data loss)"
        );
        let reset = assess(ConnectorType::Sink, Some(&o(1)), None, None).unwrap();
        assert_eq!(while_moving(reset.clone()), reset);
    }

    #[test]
    fn a_forward_change_is_left_where_live_passed_it_and_a_rewind_is_exact() {
        let p = f(json!({"kafka_topic":"t","kafka_partition":0}));
        let o = |n: i64| f(json!({ "kafka_offset": n }));
        let m = |a: i64, b: i64| movement(&p, &o(a), &o(b));
        // Skip ahead 100 -> 200; live at 250 is past it: left.
        assert!(passed(m(100, 200).as_ref(), m(250, 200).as_ref()));
        // Live at 150 has not reached it: applied.
        assert!(!passed(m(100, 200).as_ref(), m(150, 200).as_ref()));
        // A rewind 300 -> 200 with live at 400: exact, applied.
        assert!(!passed(m(300, 200).as_ref(), m(400, 200).as_ref()));
        // No known order: applied as written.
        assert!(!passed(None, m(400, 200).as_ref()));
    }

    #[test]
    fn sink_rewind_and_skip() {
        let p = f(json!({"kafka_topic":"t","kafka_partition":0}));
        let (a, b) = (
            f(json!({"kafka_offset":1000})),
            f(json!({"kafka_offset":500})),
        );
        let m = movement(&p, &a, &b);
        let r = assess(ConnectorType::Sink, Some(&a), Some(&b), m.as_ref()).unwrap();
        assert_eq!(r.code, RiskCode::Reprocessing);
        assert_eq!(
            r.message,
            "500 records will be reprocessed (duplicates downstream)"
        );
        let m = movement(&p, &b, &a);
        let r = assess(ConnectorType::Sink, Some(&b), Some(&a), m.as_ref()).unwrap();
        assert_eq!(r.code, RiskCode::DataLoss);
        assert_eq!(r.message, "500 records will be skipped (data loss)");
    }

    #[test]
    fn removed_added_and_unordered() {
        let a = f(json!({"kafka_offset":7}));
        let r = assess(ConnectorType::Sink, Some(&a), None, None).unwrap();
        assert_eq!(r.code, RiskCode::OffsetReset);
        assert!(r.message.contains("auto.offset.reset"));
        let r = assess(ConnectorType::Source, Some(&a), None, None).unwrap();
        assert_eq!(r.code, RiskCode::SourceRestart);
        let r = assess(ConnectorType::Sink, None, Some(&a), None).unwrap();
        assert_eq!(r.code, RiskCode::NewPartition);
        assert!(r.message.contains("{\"kafka_offset\":7}"), "{}", r.message);
        let (x, y) = (f(json!({"token":"a","n":1})), f(json!({"token":"b","n":1})));
        let r = assess(ConnectorType::Source, Some(&x), Some(&y), None).unwrap();
        assert_eq!(r.code, RiskCode::Changed);
        assert!(r.message.contains("\"token\":\"a\"") && r.message.contains("\"token\":\"b\""));
        assert!(assess(ConnectorType::Source, Some(&x), Some(&x), None).is_none());
    }
}
