//! Recovering a connector whose transaction sent an asynchronous alter request (a service with
//! [`Op::RequestAlter`](crate::client::Op)): the request may be pending,
//! applied or failed. Its status is read instead of sending another: a pending one is waited
//! for, an applied one is verified against the offsets observed after it, a failed one is
//! reported (it changed nothing). Putting the state back is the caller's.

use crate::client::{parse_time, AlterStatus, Phase, Service};
use crate::engine::apply::report::SentRequest;
use crate::engine::apply::transaction::requests::{matches_request, request_words};
use crate::model::canonical_fields;
use crate::wait::{until, Clock, Poll, WaitPolicy};

/// What became of the request, in words, or why recovery cannot tell (a failure).
pub fn await_request(
    client: &dyn Service,
    name: &str,
    sent: &SentRequest,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> Result<String, String> {
    let service = client.backend().service();
    let sent_at = parse_time(&sent.sent_at).unwrap_or(std::time::UNIX_EPOCH);
    let requested_at = sent.requested_at.as_deref().and_then(parse_time);
    let label = match requested_at {
        Some(t) => format!("{} of {}", sent.kind, crate::clock::rfc3339(t)),
        None => format!("{} sent at {}", sent.kind, sent.sent_at),
    };
    let ours = |st: &AlterStatus| matches_request(sent.kind, requested_at, sent_at, None, st);
    let first = match client.alter_status(name) {
        Ok(st) => st,
        Err(e) if e.is_not_found() => {
            return Ok(format!(
                "request {label}: {service} has no request for it, so it was never taken; nothing changed"
            ))
        }
        Err(e) => return Err(format!("reading the status of request {label}: {e}")),
    };
    if !ours(&first) {
        let theirs = request_words(&first);
        return if requested_at.is_none() {
            Ok(format!(
                "request {label}: {service}'s last request is {theirs}, made before it, so it was never taken; nothing changed"
            ))
        } else {
            Err(format!(
                "request {label}: {service}'s last request is {theirs}, another one sent since; read the offsets (`kco diff`) before applying again"
            ))
        };
    }
    let mut last = first.phase.to_string();
    let mut first = Some(first);
    let st = until(clock, wait, || {
        let st = match first.take() {
            Some(st) => st,
            None => match client.alter_status(name) {
                Ok(st) => st,
                Err(e) => return Poll::Pending(format!("status unreadable: {e}")),
            },
        };
        if st.phase.is_final() {
            Poll::Ready(st)
        } else {
            last = st.phase.to_string();
            Poll::Pending(last.clone())
        }
    })
    .map_err(|e| {
        format!("request {label} is still {last} ({e}); {service} may still apply it: run `kco recover` again later")
    })?;
    if st.phase == Phase::Failed {
        return Ok(format!(
            "request {label} FAILED ({}); the offsets were not changed",
            st.message
        ));
    }
    verify_applied(client, name, &label, &st, wait, clock)
}

/// The request was applied: its offsets (or their absence, for a DELETE) are read back from
/// an observation made after it was applied.
fn verify_applied(
    client: &dyn Service,
    name: &str,
    label: &str,
    st: &AlterStatus,
    wait: &WaitPolicy,
    clock: &dyn Clock,
) -> Result<String, String> {
    let at = st
        .applied_at
        .map(|t| format!(" at {}", crate::clock::rfc3339(t)))
        .unwrap_or_default();
    let delete = st.request.kind.as_deref() == Some("DELETE");
    let requested = st.request.offsets.clone().unwrap_or_default();
    until(clock, wait, || {
        let read = match client.offsets_read(name) {
            Ok(r) => r,
            Err(e) => return Poll::Pending(format!("reading offsets: {e}")),
        };
        if let (Some(a), Some(o)) = (st.applied_at, read.observed_at) {
            if o < a {
                return Poll::Pending("offsets observed before the request was applied".into());
            }
        }
        let live: std::collections::BTreeMap<String, String> = read
            .entries
            .iter()
            .map(|e| (canonical_fields(&e.partition), canonical_fields(&e.offset)))
            .collect();
        let off: Vec<String> = if delete && requested.is_empty() {
            live.keys().cloned().collect()
        } else {
            requested
                .iter()
                .filter(|e| {
                    let want = (!delete).then_some(e.offset.as_ref()).flatten();
                    live.get(&canonical_fields(&e.partition)) != want.map(canonical_fields).as_ref()
                })
                .map(|e| canonical_fields(&e.partition))
                .collect()
        };
        if off.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending(format!("not as requested: {}", off.join(", ")))
        }
    })
    .map(|()| format!("request {label} APPLIED{at}, its offsets read back as requested"))
    .map_err(|e| {
        format!("request {label} APPLIED{at}, but its offsets do not read back as requested ({e})")
    })
}
