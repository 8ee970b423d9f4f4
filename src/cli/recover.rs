//! `kco recover`: finish an interrupted apply (put back the states its journal records), and
//! the guards other commands run first.

use std::path::PathBuf;
use std::time::Duration;

use super::output::{Printer, Style};
use super::Context;
use crate::client::Connect;
use crate::engine::apply::journal;
use crate::engine::apply::lock::ClusterLock;
use crate::engine::recover::{entries_from_backup, recover, RecoverOutcome, RecoverReport};
use crate::error::{Error, Result, EXIT_ERROR, EXIT_OK};
use crate::wait::{SystemClock, WaitPolicy};

/// Put back the states of connectors an interrupted apply may have left stopped
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Before its first stop, `kco apply` records each connector's prior state in \
<state dir>/journal/<cluster>.json (state dir: KCO_STATE_DIR, default .kco); the entry is removed \
when the connector's transaction ends. After a crash (kill -9, a lost CI runner), `recover` resumes \
or pauses each recorded connector back to that state and waits for it; any later `apply` or `reset` \
on the cluster does this first, and `snapshot` and `diff` refuse to run until it is done. Offsets \
are left as they are: apply again to finish the change. Without the journal, --from-backup reads \
the states from the backup the apply wrote.\n\n\
Exit codes: 0 every state put back (or nothing to do); 1 otherwise.\n\n\
Examples:\n  kco recover --cluster prod\n  kco recover --cluster prod --from-backup .kco/backups/20240131T120000Z/prod"
)]
pub struct Args {
    /// Take the states from this backup directory (when the journal is lost)
    #[arg(long, value_name = "DIR")]
    pub from_backup: Option<PathBuf>,
    /// Seconds to wait for a connector to reach its state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let target = ctx.target()?;
    let client = ctx.connect(&target)?;
    let _lock = ClusterLock::acquire(&ctx.state_dir(), &target.name, &now())?;
    let wait = WaitPolicy::with_timeout(Duration::from_secs(args.wait_timeout));
    let report = match &args.from_backup {
        Some(dir) => {
            let dir = ctx.cwd.join(dir);
            let entries = entries_from_backup(&dir)?;
            let source = ctx.display_path(&dir).to_string();
            recover(
                &client,
                &target.name,
                &source,
                &entries,
                &wait,
                &SystemClock,
            )
        }
        None => match finish_journal(ctx, &client, &target.name, &wait)? {
            Some(r) => r,
            None => {
                ctx.printer.status(&format!(
                    "Nothing to recover: no journal for cluster `{}` ({}).",
                    target.name,
                    ctx.display_path(&journal::path(&ctx.state_dir(), &target.name))
                ));
                return Ok(EXIT_OK);
            }
        },
    };
    if ctx.printer.is_structured() {
        ctx.printer.structured(&report);
    } else {
        ctx.printer.out(&render(&ctx.printer, &report));
    }
    Ok(if report.ok { EXIT_OK } else { EXIT_ERROR })
}

/// Recovers what the journal of `cluster` records, if there is one; clears it when every
/// state is back. The caller holds the cluster's lock.
fn finish_journal(
    ctx: &Context,
    client: &Connect,
    cluster: &str,
    wait: &WaitPolicy,
) -> Result<Option<RecoverReport>> {
    let dir = ctx.state_dir();
    let Some(j) = journal::load(&dir, cluster)? else {
        return Ok(None);
    };
    let path = journal::path(&dir, cluster);
    ctx.printer.status(&format!(
        "An apply to cluster `{cluster}` (pid {} on {}, started {}) did not finish: putting back the state of {} connector(s) it recorded in {}",
        j.pid,
        j.host,
        j.started_at,
        j.connectors.len(),
        ctx.display_path(&path)
    ));
    let source = ctx.display_path(&path).to_string();
    let report = recover(client, cluster, &source, &j.connectors, wait, &SystemClock);
    if report.ok {
        journal::clear(&path)?;
    }
    Ok(Some(report))
}

/// For `apply` and `reset` (holding the lock): finish an interrupted apply first; an error
/// when a state cannot be put back.
pub(super) fn finish_interrupted(
    ctx: &Context,
    client: &Connect,
    cluster: &str,
    wait: &WaitPolicy,
) -> Result<()> {
    let Some(report) = finish_journal(ctx, client, cluster, wait)? else {
        return Ok(());
    };
    ctx.printer.status(render(&ctx.printer, &report).trim_end());
    if report.ok {
        return Ok(());
    }
    Err(Error::Unfinished {
        cluster: cluster.to_string(),
        journal: journal::path(&ctx.state_dir(), cluster),
        connectors: report
            .connectors
            .iter()
            .filter(|c| c.outcome == RecoverOutcome::Failed)
            .count(),
    })
}

/// For read-only commands (`snapshot`, `diff`, a dry run): refuse while a journal says
/// connectors may be left stopped (a snapshot would record them STOPPED).
pub(super) fn refuse_if_unfinished(ctx: &Context, cluster: &str) -> Result<()> {
    let dir = ctx.state_dir();
    match journal::load(&dir, cluster)? {
        Some(j) => Err(Error::Unfinished {
            cluster: cluster.to_string(),
            journal: journal::path(&dir, cluster),
            connectors: j.connectors.len(),
        }),
        None => Ok(()),
    }
}

pub(super) fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn render(p: &Printer, r: &RecoverReport) -> String {
    let mut out = format!("Recovery of cluster {} from {}:\n", r.cluster, r.source);
    for c in &r.connectors {
        let (mark, style, what) = match c.outcome {
            RecoverOutcome::Restored => ("ok", Style::Good, format!("{} put back", c.wanted)),
            RecoverOutcome::AlreadyThere => ("ok", Style::Dim, format!("already {}", c.wanted)),
            RecoverOutcome::LeftCreated => ("!!", Style::Warn, "left as it is".to_string()),
            RecoverOutcome::Missing => ("ok", Style::Dim, "gone".to_string()),
            RecoverOutcome::Failed => ("!!", Style::Bad, format!("{} NOT put back", c.wanted)),
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
