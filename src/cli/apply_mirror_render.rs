//! Text for a sink file translated across Kafka clusters: per partition, the file's position,
//! the DR position, the checkpoint's age and what is delivered again.

use std::time::Duration;

use super::output::{Printer, Style};
use crate::engine::mirror::{PartitionTranslation, TranslateMode, Translation};

/// The block under a connector's line in the apply plan (and the live diff).
pub fn translation(p: &Printer, t: &Translation) -> String {
    let how = match (t.mode, &t.alias, &t.checkpoints_topic) {
        (TranslateMode::None, Some(alias), _) => format!(
            "topics renamed for mirror `{alias}` ({} policy), offsets kept (--translate none)",
            t.policy
        ),
        (TranslateMode::None, None, _) => {
            "topics and offsets kept as captured (--translate none)".to_string()
        }
        (mode, alias, topic) => format!(
            "translated through MirrorMaker 2 (alias `{}`, {} policy): checkpoints of group `{}` in `{}`, --translate {}",
            alias.as_deref().unwrap_or("?"),
            t.policy,
            t.group,
            topic.as_deref().unwrap_or("?"),
            mode.as_str()
        ),
    };
    let mut out = format!("    {}\n", p.paint(Style::Dim, &how));
    for pt in &t.partitions {
        out.push_str(&format!("    {}\n", partition(pt)));
    }
    out
}

/// `orders/0 600 -> east.orders/0 591  (checkpoint written 12s ago, upstream 600 -> downstream 591; re-delivers 9 records before the file's position)`
pub fn partition(pt: &PartitionTranslation) -> String {
    let head = pt.crossing();
    let Some(cp) = &pt.checkpoint else {
        return head;
    };
    let age =
        humantime::format_duration(Duration::from_secs(cp.seconds_since_written.max(0) as u64));
    let effect = if pt.redelivers >= 0 {
        format!(
            "re-delivers {} before the file's position",
            crate::text::count(pt.redelivers as usize, "record")
        )
    } else {
        format!(
            "{} after the file's position {} not delivered again",
            crate::text::count((-pt.redelivers) as usize, "record"),
            if pt.redelivers == -1 { "is" } else { "are" }
        )
    };
    if let Some(topic) = &pt.offset_syncs {
        // Failback: exact, one record's place on both sides.
        return format!(
            "{head}  (offset sync written {age} ago in `{topic}`: the record at {} was copied to {}; re-delivers {} before the file's position)",
            cp.upstream,
            cp.downstream,
            crate::text::count(pt.redelivers.max(0) as usize, "record")
        );
    }
    format!(
        "{head}  (checkpoint written {age} ago, upstream {} -> downstream {}; {effect})",
        cp.upstream, cp.downstream
    )
}
