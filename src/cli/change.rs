//! What every command that changes a cluster shares, whichever way it changes it (through
//! Connect's REST API, `operate.rs`; through Kafka, `through_kafka.rs` and `orphaned.rs`):
//! its flags, declared once, and what the command asks of the operation beyond them
//! ([`Request`]); the confirmation on the terminal; the notice that the lock is this
//! machine's only; the refusal `--fail-on` makes.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use super::apply_render::Verb;
use super::output::{Printer, Style};
use super::Context;
use crate::engine::apply::PlanOptions;
use crate::engine::fail_on::{Refusal, Refuse};
use crate::engine::history::at::FilesSource;
use crate::engine::operation::remote_lock::LocalOnly;
use crate::error::{Error, Result};
use crate::wait::WaitPolicy;

/// Flags of every command that changes a cluster.
#[derive(Debug, Clone, clap::Args)]
pub struct ChangeArgs {
    /// Show the plan and stop before any change
    #[arg(long)]
    pub dry_run: bool,
    /// Go ahead without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Where to write the backup of what changes [default: <state dir>/backups/<UTC time>/<cluster>/]
    #[arg(long)]
    pub backup_dir: Option<PathBuf>,
    /// Seconds to wait for a connector to reach a state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
    /// Seconds a resumed connector's tasks may take to run (a task that fails, or none
    /// starting, is a failure)
    #[arg(long, default_value_t = 60)]
    pub task_timeout: u64,
    /// How many connectors change at once (each transaction mostly waits on the worker)
    #[arg(long, default_value_t = crate::engine::parallel::DEFAULT_CHANGES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub parallel: usize,
    /// Change this sink even though a sink of another cluster in kco.yaml, on the same Kafka
    /// cluster, uses its consumer group (a connector name; repeatable)
    #[arg(long, value_name = "NAME")]
    pub allow_shared_group: Vec<String>,
}

/// What one command asks of the operation, beyond its flags.
pub struct Request<'a> {
    /// The command: its question and its words.
    pub verb: Verb,
    pub plan: PlanOptions,
    pub refuse: Vec<Refuse>,
    /// `--at` / `--changed-since`: where the files came from.
    pub source: Option<&'a FilesSource>,
    /// `--translate`: sink files of another Kafka cluster (`engine::mirror`).
    pub translate: Option<crate::engine::mirror::TranslateMode>,
    /// `--with-sources`: plan source files of another Kafka cluster too.
    pub with_sources: bool,
    /// `--unapplied`, `--changed-since`: the changes up to HEAD, which the shared remote's
    /// mark of what was applied records once they are (`engine::operation::applied_mark`).
    pub applied: Option<AppliedCheck>,
}

/// What a run of the changes up to HEAD checks and moves on the shared remote, under the
/// cluster's lock.
#[derive(Debug, Clone)]
pub struct AppliedCheck {
    /// A directory of the repository the changes come from.
    pub dir: PathBuf,
    /// HEAD: the commit the changes were read up to.
    pub head: String,
    /// `--unapplied`: the changes were chosen by the mark read before the lock (its commit,
    /// `None`: no mark); a mark that moved since means another run applied meanwhile.
    pub chosen_by: Option<Option<String>>,
}

impl Request<'_> {
    /// What reset and undo ask: the offsets exactly as wanted (`--prune`), nothing created.
    pub fn exact(verb: Verb, args: &ChangeArgs) -> Request<'static> {
        Request {
            verb,
            plan: PlanOptions {
                prune: true,
                create: false,
                parallel: args.parallel,
                create_state: None,
                max_observed_age: None,
                allow_running_primary: false,
            },
            refuse: Vec::new(),
            source: None,
            translate: None,
            with_sources: false,
            applied: None,
        }
    }
}

impl ChangeArgs {
    pub fn wait(&self) -> WaitPolicy {
        WaitPolicy::with_timeout(Duration::from_secs(self.wait_timeout))
    }
}

/// The refusal that names every partition a `--fail-on` forbids, with its risk label.
pub fn refused(found: &[Refusal]) -> Error {
    let lines: Vec<String> = found
        .iter()
        .map(|r| {
            format!(
                "  {} {}: [{}] {}",
                r.connector,
                super::words::partition(&r.partition),
                r.risk.code.label(),
                r.risk.message
            )
        })
        .collect();
    Error::Usage(format!(
        "refused by --fail-on: {} at risk; nothing was changed:\n{}",
        super::words::count(found.len(), "partition"),
        lines.join("\n")
    ))
}

/// Says, once, before the first change, that the cluster's lock is this machine's only
/// (nothing keeps out another machine or clone applying at once); not where kco.yaml says
/// `lock: local`, which is a choice already made.
pub fn say_local_only(ctx: &Context, cluster: &str, why: LocalOnly) {
    if why != LocalOnly::Configured {
        ctx.printer.status(&format!(
            "Locked cluster `{cluster}` on this machine only ({}): another clone applying to it at once is not kept out (docs/apply.md#locking)",
            why.why()
        ));
    }
}

/// Asks on the terminal; refuses when stdin is not one.
pub fn ask(ctx: &Context, question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::Usage(
            "stdin is not a terminal, so kco cannot ask for confirmation; nothing was changed. Pass --yes to go ahead without asking".into(),
        ));
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "{} [y/N] ", paint(&ctx.printer, question));
    let _ = err.flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::Other(format!("cannot read the answer: {e}")))?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

fn paint(p: &Printer, question: &str) -> String {
    p.paint_err(Style::Bold, question)
}
