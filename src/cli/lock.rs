//! `kco lock`: who holds the cluster locks (`status`), and removing one deliberately
//! (`force-unlock LOCK_ID`, as terraform's). The locks are the guarded operation's
//! (`engine::operation::lock`); this file gathers the flags and renders what they say.

use super::Context;
use crate::engine::operation::lock::{self, HeldLock, LockStatus};
use crate::error::{Error, Result, EXIT_ERROR, EXIT_OK};

/// Show or remove the locks that keep two operations off one cluster
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Every operation that changes a cluster (apply, reset, undo, recover) holds \
the cluster's lock while it runs. In a project under git with a remote (the current branch's \
upstream remote, else `origin`; `lock:` in kco.yaml names another, or `local`), the lock is the \
ref refs/kco/locks/<cluster> on that remote, so two runners (two clones) are kept apart; it is \
also held in <state dir>/locks/<cluster>.lock, which keeps the checkout's journal to one kco at a time. Each lock \
records a lock id, who holds it (host, pid, user, CI job) and since when.\n\n\
`status` lists the locks held (of --cluster, or of every cluster). `force-unlock LOCK_ID` removes \
the locks with that id, on the remote and here, after asking (--yes: without asking); use it only \
when their holder is gone (a lost CI runner), never to get past a kco that still runs.\n\n\
Exit codes: 0 done; 1 an error (no lock has that id, the remote cannot be read, declined).\n\n\
Examples:\n  kco lock status\n  kco lock status --cluster prod\n  kco lock force-unlock 3f2a9c0d1b7e4a55 --cluster prod"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: LockCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum LockCommand {
    /// Show who holds the locks (of --cluster, or of every cluster)
    Status,
    /// Remove the locks with this lock id (when their holder is gone)
    ForceUnlock {
        /// The lock id, as `kco lock status` or the error of a locked cluster shows it
        lock_id: String,
        /// Go ahead without asking
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let state = ctx.state_dir();
    let clusters: Vec<String> = ctx.global.cluster.iter().cloned().collect();
    match args.command {
        LockCommand::Status => {
            let mut status = lock::status(&state, &clusters)?;
            shown_paths(ctx, &mut status.locks);
            if ctx.printer.is_structured() {
                ctx.printer.structured(&status);
            } else {
                ctx.printer.out(&render_status(&status));
            }
            Ok(EXIT_OK)
        }
        LockCommand::ForceUnlock { lock_id, yes } => {
            let found = lock::find_id(&state, &clusters, &lock_id)?;
            if found.is_empty() {
                return Err(Error::Usage(format!(
                    "no lock has id `{lock_id}`{}; `kco lock status` lists the locks held and their ids",
                    match clusters.first() {
                        Some(c) => format!(" on cluster `{c}`"),
                        None => String::new(),
                    }
                )));
            }
            let p = &ctx.printer;
            if !p.is_structured() {
                let mut shown = found.clone();
                shown_paths(ctx, &mut shown);
                p.status(&format!(
                    "Lock id {lock_id}: {}",
                    if found.len() == 1 {
                        "this lock"
                    } else {
                        "these locks"
                    }
                ));
                for l in &shown {
                    p.status(&format!("  {}", one_line(l)));
                }
            }
            let question = "Remove it? Only when its holder is gone: a kco that still runs would then share the cluster with the next one";
            if !yes && !super::change::ask(ctx, question)? {
                p.status("Nothing was removed.");
                return Ok(EXIT_ERROR);
            }
            let mut unlocked = lock::force_unlock(&state, &lock_id, found)?;
            shown_paths(ctx, &mut unlocked.removed);
            if p.is_structured() {
                p.structured(&unlocked);
            } else if unlocked.removed.is_empty() {
                p.line("Nothing was removed: the lock changed meanwhile (`kco lock status` shows it now).");
            } else {
                for l in &unlocked.removed {
                    p.line(&format!(
                        "Removed the lock of cluster `{}` ({}).",
                        l.cluster, l.at
                    ));
                }
            }
            Ok(if unlocked.removed.is_empty() {
                EXIT_ERROR
            } else {
                EXIT_OK
            })
        }
    }
}

fn render_status(s: &LockStatus) -> String {
    let mut out = match (&s.remote, s.local_only) {
        (Some(r), _) => format!("Locks are shared through git remote `{r}`.\n"),
        (None, Some(why)) => format!("Locks are held on this machine only: {}.\n", why.why()),
        (None, None) => String::new(),
    };
    if s.locks.is_empty() {
        out.push_str("No lock is held.\n");
    }
    for l in &s.locks {
        out.push_str(&one_line(l));
        out.push('\n');
    }
    for a in &s.applied {
        out.push_str(&format!(
            "Changes to cluster `{}` applied up to {} ({}, at {}).\n",
            a.cluster,
            crate::engine::history::when::short_id(&a.mark.commit),
            a.mark.by,
            a.mark.at
        ));
    }
    out
}

/// `a: pid 1 on h (since T), lock id X (remote: REF on git remote `origin`)`.
fn one_line(l: &HeldLock) -> String {
    let id = if l.holder.id.is_empty() {
        "(none)"
    } else {
        &l.holder.id
    };
    let stale = if l.stale {
        "; its process is gone (stale: the next operation takes it over)"
    } else {
        ""
    };
    format!(
        "{}: {}, lock id {id} ({}: {}){stale}",
        l.cluster, l.holder, l.kind, l.at
    )
}

/// A local lock's file as paths are shown: relative to the current directory when inside it.
fn shown_paths(ctx: &Context, locks: &mut [HeldLock]) {
    for l in locks.iter_mut().filter(|l| l.kind == "local") {
        l.at = ctx.display_path(std::path::Path::new(&l.at));
    }
}
