//! A review against live: each partition a change touches is labelled by what applying the
//! change would do to the cluster's offset now (live 1000, the change sets 800: 200 records
//! reprocessed), as the apply's plan labels it, not by the file's previous value.

use std::collections::BTreeMap;

use super::{ConnectorDiff, LiveOffset, Sides, Status};
use crate::client::Service;
use crate::compare::movement_in;
use crate::engine::observed::{observed_note, read_offsets, Freshness, ReadError};
use crate::engine::orphaned::of_name::{self, Leftovers};
use crate::engine::risk::{assess, passed, while_moving, PASSED};
use crate::model::{canonical_fields, Fields};

/// What labelling one connector against live came to.
pub(super) enum Labelled {
    /// Nothing to label.
    Nothing,
    /// Labelled against the live offsets (or against none: not on the cluster).
    Live,
    /// The live offsets could not be read: the file labels stand; why.
    FilesOnly(String),
}

/// Labels `c`'s partitions against the live offsets of its connector on `cluster`. A connector
/// the cluster lacks is labelled against what an earlier connector of its name left
/// (`leftovers`: a connector created under the name resumes from them; `config`, its file's,
/// names a sink's group), or against nothing when they cannot be read, and says which
/// (`c.leftovers`); one whose offsets cannot be read keeps its file labels, with a note that
/// says why.
pub(super) fn label(
    c: &mut ConnectorDiff,
    client: &dyn Service,
    cluster: &str,
    class: Option<&str>,
    freshness: &Freshness,
    leftovers: &Leftovers<'_>,
    config: Option<&BTreeMap<String, String>>,
) -> Labelled {
    if matches!(c.status, Status::Unchanged | Status::Removed) || c.partitions.is_empty() {
        return Labelled::Nothing;
    }
    let Some(kind) = c.connector_type else {
        return Labelled::Nothing;
    };
    let read = read_offsets(
        client,
        &c.name,
        freshness,
        &crate::clock::now,
        &crate::wait::SystemClock,
    );
    let live = match read {
        Ok(o) => {
            if let Some(note) = observed_note(client, &o) {
                c.notes.push(note);
            }
            o.entries
        }
        Err(ReadError::Client(e)) if e.is_unknown_connector() => {
            let (entries, gone) = of_name::read(leftovers, client, cluster, &c.name, kind, config);
            c.leftovers = Some(gone);
            entries
        }
        Err(e) => {
            let why = format!(
                "cannot read the live offsets of `{}` on cluster `{cluster}`: {e}",
                c.name
            );
            c.notes
                .push(format!("labels compare the files only: {why}"));
            return Labelled::FilesOnly(why);
        }
    };
    // A running connector's offsets move on until an apply stops it: its counts are bounds,
    // as the apply's plan says them. So are those of one whose state cannot be told or is
    // passing (UNASSIGNED or RESTARTING while its cluster rebalances): only one paused,
    // stopped or failed stands still, as do the offsets a deleted connector left.
    let moving = c.leftovers.is_none()
        && !client
            .status(&c.name)
            .ok()
            .and_then(|s| s.state)
            .is_some_and(|s| {
                use crate::model::ConnectorState::{Failed, Paused, Stopped};
                matches!(s, Paused | Stopped | Failed)
            });
    let shape = crate::shapes::registry().find(kind, class);
    let by: BTreeMap<String, &Fields> = live
        .iter()
        .map(|e| (canonical_fields(&e.partition), &e.offset))
        .collect();
    let leftover = c.leftovers.is_some();
    for p in &mut c.partitions {
        let Sides::Base {
            base_offset,
            head_offset,
            ..
        } = &p.offsets
        else {
            continue;
        };
        let now = by.get(&canonical_fields(&p.partition)).copied();
        let m = match (now, head_offset) {
            (Some(a), Some(b)) => movement_in(shape, &p.partition, a, b),
            _ => None,
        };
        let change = match (base_offset, head_offset) {
            (Some(a), Some(b)) => movement_in(shape, &p.partition, a, b),
            _ => None,
        };
        // A forward change whose target live has passed leaves it: no risk, and why.
        let left = passed(change.as_ref(), m.as_ref());
        p.risk = if left {
            None
        } else {
            assess(kind, now, head_offset.as_ref(), m.as_ref()).map(|r| {
                if moving {
                    while_moving(r)
                } else {
                    r
                }
            })
        };
        p.live = Some(LiveOffset {
            offset: now.cloned(),
            left: left.then(|| PASSED.to_string()),
            leftover,
        });
    }
    Labelled::Live
}
