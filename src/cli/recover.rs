//! `kco recover`: finish an interrupted operation (put back the states its journal records),
//! put back the states a backup records, or forget a journal that cannot be finished. The
//! work is the guarded operation's (`engine::operation`); this file gathers the flags and
//! renders the report.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::output::Style;
use super::Context;
use crate::engine::operation::{
    self, FinishedElsewhere, Journal, Operation, RecoverOutcome, RecoverReport,
};
use crate::error::{Result, EXIT_ERROR, EXIT_OK};
use crate::wait::{SystemClock, WaitPolicy};

/// Put back the states of connectors an interrupted operation may have left stopped
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Before its first stop, every operation that changes a cluster (apply, reset, \
undo) records each connector's prior state in <state dir>/journal/<cluster>.json; the entry is \
removed when the connector's transaction ends. The state dir is the project's: KCO_STATE_DIR, else \
.kco next to the kco.yaml in use, else .kco at the top of the git work tree, else in the current \
directory. After a crash (kill -9, a lost CI runner), `recover` reads each recorded connector's \
state and resumes or pauses those not in their recorded state, then waits for it; any later \
apply, reset or undo on the cluster does this first, and `snapshot` and `diff` refuse to run until \
it is done. Offsets are left as they are: apply again to finish the change. On a service that \
changes offsets through asynchronous requests (Confluent Cloud), the journal also records the \
request: recovery reads its status instead of sending another (waits while it is pending, \
checks the offsets once it is applied, says so when it failed), and lets the service put the \
state back. Without the journal, \
--from-backup reads the states from the backup the operation wrote. A journal whose connectors \
cannot be put back (no rights, or deleted since) is forgotten with --discard, which puts nothing \
back and names what it forgets.\n\n\
Exit codes: 0 every state put back (or nothing to do, or the journal discarded); 1 otherwise.\n\n\
Examples:\n  kco recover --cluster prod\n  kco recover --cluster prod --from-backup .kco/backups/20240131T120000Z/prod\n  kco recover --cluster prod --discard"
)]
pub struct Args {
    /// Take the states from this backup directory (when the journal is lost)
    #[arg(long, value_name = "DIR", conflicts_with = "discard")]
    pub from_backup: Option<PathBuf>,
    /// Forget the journal without putting anything back (its connectors are named)
    #[arg(long)]
    pub discard: bool,
    /// Seconds to wait for a connector to reach its state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
}

/// What `recover --discard` forgot, as `--output json` prints it.
#[derive(Debug, Serialize)]
struct Discarded<'a> {
    cluster: &'a str,
    discarded: Option<&'a Journal>,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    // A URL alone stands for cluster `default`: not this project's cluster, whose lock and
    // journal it would miss.
    ctx.ensure_cluster_named(&ctx.snapshots_dir())?;
    let target = ctx.target()?;
    let state = ctx.state_dir();
    if args.discard {
        let forgotten = operation::discard(&state, &target.name)?;
        return Ok(discarded(ctx, &target.name, forgotten.as_ref()));
    }
    let wait = WaitPolicy::with_timeout(Duration::from_secs(args.wait_timeout));
    let connect = || ctx.connect(&target);
    drop_left_behind_lock(ctx, &target.name)?;
    let op = Operation::open(&state, &target.name, &connect, &wait, &SystemClock)?;
    if let Some(f) = op.finished_elsewhere() {
        say_finished_elsewhere(ctx, f);
    }
    let report = match &args.from_backup {
        Some(dir) => {
            if let Some(r) = op.recovered() {
                ctx.printer.status(render_recovery(ctx, r).trim_end());
            }
            op.recover_from_backup(&ctx.cwd.join(dir), &wait, &SystemClock)?
        }
        None => op.recovery(),
    };
    if ctx.printer.is_structured() {
        ctx.printer.structured(&report);
    } else if report.connectors.is_empty() {
        ctx.printer.status(&format!(
            "Nothing to recover: no journal for cluster `{}` ({}).",
            target.name,
            ctx.display_path(&report.source)
        ));
    } else {
        ctx.printer.out(&render_recovery(ctx, &report));
    }
    Ok(if report.ok { EXIT_OK } else { EXIT_ERROR })
}

fn discarded(ctx: &Context, cluster: &str, forgotten: Option<&Journal>) -> u8 {
    let p = &ctx.printer;
    if p.is_structured() {
        p.structured(&Discarded {
            cluster,
            discarded: forgotten,
        });
        return EXIT_OK;
    }
    let Some(j) = forgotten else {
        p.status(&format!(
            "Nothing to discard: no journal for cluster `{cluster}`."
        ));
        return EXIT_OK;
    };
    let mut out = format!(
        "Discarded the journal of cluster `{cluster}` (pid {} on {}, started {}). Nothing was put back; it forgets:\n",
        j.pid, j.host, j.started_at
    );
    for (name, e) in &j.connectors {
        let what = if e.created {
            "created by that operation".to_string()
        } else {
            format!("was {} before it", e.prior_state)
        };
        out.push_str(&format!("  {name}: {what}\n"));
    }
    if let Some(b) = &j.backup {
        out.push_str(&format!(
            "Its backup stays: {} (kco undo restores it)\n",
            ctx.display_path(b)
        ));
    }
    p.out(&out);
    EXIT_OK
}

/// Says that this checkout's journal of an operation another runner finished was dropped.
pub fn say_finished_elsewhere(ctx: &Context, f: &FinishedElsewhere) {
    ctx.printer.status(&render_finished_elsewhere(ctx, f));
}

/// `The journal ... was finished by ...: dropped`, one line.
pub fn render_finished_elsewhere(ctx: &Context, f: &FinishedElsewhere) -> String {
    let done = &f.finished;
    let what = if done.discarded {
        "discarded (kco recover --discard)"
    } else {
        "finished"
    };
    format!(
        "The operation on cluster `{}` (pid {} on {}, started {}) whose journal this checkout kept ({}) was {what} by {} at {} ({}): its journal is dropped here, nothing of it is put back a second time.",
        f.cluster,
        done.pid,
        done.host,
        done.started_at,
        ctx.display_path(&f.journal),
        done.by,
        done.at,
        f.record
    )
}

/// A recovery, one line per connector.
pub fn render_recovery(ctx: &Context, r: &RecoverReport) -> String {
    let p = &ctx.printer;
    let mut out = match &r.interrupted {
        Some(i) => format!(
            "An operation on cluster `{}` (pid {} on {}, started {}) did not finish: putting back the states it recorded in {}:\n",
            r.cluster,
            i.pid,
            i.host,
            i.started_at,
            ctx.display_path(&r.source)
        ),
        None => format!(
            "Recovery of cluster `{}` from {}:\n",
            r.cluster,
            ctx.display_path(&r.source)
        ),
    };
    for c in &r.connectors {
        let (mark, style, what) = match c.outcome {
            RecoverOutcome::Restored => ("ok", Style::Good, format!("{} put back", c.wanted)),
            RecoverOutcome::AlreadyThere => ("ok", Style::Dim, format!("already {}", c.wanted)),
            RecoverOutcome::LeftCreated => ("!", Style::Warn, "left as it is".to_string()),
            RecoverOutcome::ChangedSince => {
                ("!", Style::Warn, "left as its owner set it".to_string())
            }
            RecoverOutcome::Missing => ("ok", Style::Dim, "gone".to_string()),
            RecoverOutcome::Recreated => ("ok", Style::Good, "created again".to_string()),
            RecoverOutcome::Failed => ("FAILED", Style::Bad, format!("{} NOT put back", c.wanted)),
        };
        let found = c
            .found
            .as_deref()
            .map(|f| format!(" (was {f})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {} {}: {what}{found}: {}\n",
            p.paint(style, mark),
            c.name,
            c.detail
        ));
    }
    out
}

/// Removes this checkout's local lock of `cluster` left behind by a holder on another host
/// whose lock on the shared remote is gone (`lock::drop_left_behind`), and says so.
pub fn drop_left_behind_lock(ctx: &Context, cluster: &str) -> Result<()> {
    let state = ctx.state_dir();
    if let Some(h) = crate::engine::operation::lock::drop_left_behind(&state, cluster)? {
        ctx.printer.warn(&format!(
            "removed this checkout's lock of cluster `{cluster}` left by {h} (lock id {}): its holder is on another host and its lock on the shared git remote is gone",
            h.id
        ));
    }
    Ok(())
}
