//! `kco apply`: put the files' offsets on a cluster, safely.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::apply_render;
use super::output::Style;
use super::progress::ApplyProgress;
use super::recover;
use super::report_error;
use super::Context;
use crate::config::ClusterTarget;
use crate::engine::apply::journal::{JournalFile, Journaled};
use crate::engine::apply::lock::ClusterLock;
use crate::engine::apply::{
    self, backup, plan, ApplyDocument, CheckOptions, ExecOptions, PlanOptions, SystemClock, Want,
};
use crate::engine::guard::FailOn;
use crate::engine::history::{self, at::FilesSource};
use crate::error::{Error, Result, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK};

/// Restore offsets from snapshot files: plan, back up, stop, patch, verify, restore state
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Each connector that changes is stopped, patched, read back and put back in its prior \
state (RUNNING, PAUSED or STOPPED); a failure puts the prior state back and is reported. The live \
offsets are backed up first; `kco apply <backup dir> --prune` undoes the apply.\n\n\
Exit codes: 0 everything converged (or no changes); 1 invalid files, a plan error, refusal, or a \
connector that did not converge.\n\n\
Point in time: --at REV|TIME takes every file as it was at a git revision (HEAD~3, a tag, a \
branch) or at a time (\"2026-11-29 02:00\", UTC unless a zone is given: the last commit at or before it \
on the current branch), without touching the working tree. --changed-since REV applies only the \
files whose offsets differ between REV and the working tree. --fail-on refuses, before any change, \
a plan that would rewind (reprocessing), skip ahead (data-loss) or remove (reset) a partition's offset.\n\n\
Examples:\n  kco apply snapshots/prod --dry-run\n  kco apply snapshots/prod/orders.yaml --as orders-v2 --cluster dr --create --yes\n  kco apply snapshots/prod --at \"2026-11-29 02:00\" --prune --dry-run\n  kco apply snapshots/prod --changed-since HEAD~1 --fail-on reprocessing,data-loss --yes"
)]
pub struct Args {
    /// Snapshot files or directories
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Show the plan and stop before any change
    #[arg(long)]
    pub dry_run: bool,
    /// Apply without asking
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Also remove live partitions that the file lacks (exact restore)
    #[arg(long)]
    pub prune: bool,
    /// How many connectors to apply at once
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    pub parallel: u16,
    /// Apply the (single) file's offsets to a connector of this name
    #[arg(long = "as", value_name = "NEW_NAME")]
    pub as_name: Option<String>,
    /// Create missing connectors from the config in their file (stopped, patched, then started)
    #[arg(long)]
    pub create: bool,
    /// State for connectors made by --create [default: the state recorded in the file]
    #[arg(long, value_enum, requires = "create")]
    pub create_state: Option<StateArg>,
    /// Where to write the pre-apply backup [default: .kco/backups/<UTC time>/<cluster>/]
    #[arg(long)]
    pub backup_dir: Option<PathBuf>,
    /// Seconds to wait for a connector to reach a state
    #[arg(long, default_value_t = 120)]
    pub wait_timeout: u64,
    /// Take the files as they were at a git revision or time (the working tree is not touched)
    #[arg(long, value_name = "REV|TIME", conflicts_with = "changed_since")]
    pub at: Option<String>,
    /// Apply only the files whose offsets changed between this git revision and the working tree
    #[arg(long, value_name = "REV")]
    pub changed_since: Option<String>,
    /// Refuse the whole apply, before any change, if the plan has these risks (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',')]
    pub fail_on: Vec<FailOnArg>,
    /// Seconds a resumed connector's tasks may take to run (a task that fails, or none
    /// starting, is a failure)
    #[arg(long, default_value_t = 60)]
    pub task_timeout: u64,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    let check = CheckOptions {
        as_name: args.as_name.clone(),
        create: args.create,
    };
    let paths = super::apply_git::absolute(&args.paths, ctx);
    let (wants, source) = match (&args.at, &args.changed_since) {
        (Some(at), _) => {
            let (files, source) = history::at::files_at(&paths, at)?;
            let wants = apply::check_loaded(files, &args.paths, &check, &env)?;
            (wants, Some(source))
        }
        (None, Some(rev)) => {
            let (changed, source) = history::at::changed_since(&paths, rev)?;
            if changed.is_empty() {
                super::apply_git::print_source(&ctx.printer, &source);
                ctx.printer.line("No changes.");
                return Ok(EXIT_OK);
            }
            (apply::check(&changed, &check, &env)?, Some(source))
        }
        (None, None) => (apply::check(&args.paths, &check, &env)?, None),
    };
    let target = ctx.target()?;
    let run = Run {
        verb: "Apply these changes",
        dry_run: args.dry_run,
        yes: args.yes,
        prune: args.prune,
        create: args.create,
        create_state: args.create_state,
        parallel: usize::from(args.parallel),
        backup_dir: args.backup_dir,
        wait_timeout: Duration::from_secs(args.wait_timeout),
        fail_on: args.fail_on.into_iter().map(Into::into).collect(),
        source,
        task_timeout: Duration::from_secs(args.task_timeout),
    };
    drive(ctx, &target, &wants, &run)
}

/// What `apply` and `reset` share once the wants are known.
pub(super) struct Run {
    /// The confirmation question, before "to cluster X?".
    pub verb: &'static str,
    pub dry_run: bool,
    pub yes: bool,
    pub prune: bool,
    pub create: bool,
    pub create_state: Option<StateArg>,
    pub parallel: usize,
    pub backup_dir: Option<PathBuf>,
    pub wait_timeout: Duration,
    /// `--fail-on`: risks that refuse the plan.
    pub fail_on: Vec<FailOn>,
    /// `--at` / `--changed-since`: where the files came from.
    pub source: Option<FilesSource>,
    pub task_timeout: Duration,
}

/// A risk that refuses an apply, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOnArg {
    /// An offset would move backwards: records processed again (REPROCESSING)
    Reprocessing,
    /// An offset would move forwards: records skipped (DATA LOSS)
    DataLoss,
    /// A partition's offset would be removed (--prune: OFFSET RESET, RESTART FROM DEFAULT)
    Reset,
}

impl From<FailOnArg> for FailOn {
    fn from(f: FailOnArg) -> Self {
        match f {
            FailOnArg::Reprocessing => FailOn::Reprocessing,
            FailOnArg::DataLoss => FailOn::DataLoss,
            FailOnArg::Reset => FailOn::Reset,
        }
    }
}

/// A connector target state, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StateArg {
    Running,
    Paused,
    Stopped,
}

impl From<StateArg> for crate::model::TargetState {
    fn from(s: StateArg) -> Self {
        match s {
            StateArg::Running => Self::Running,
            StateArg::Paused => Self::Paused,
            StateArg::Stopped => Self::Stopped,
        }
    }
}

/// Lock the cluster, finish an interrupted apply, plan, print, confirm, back up, execute,
/// report.
pub(super) fn drive(
    ctx: &Context,
    target: &ClusterTarget,
    wants: &[Want],
    run: &Run,
) -> Result<u8> {
    let cluster = target.name.as_str();
    let p = &ctx.printer;
    let opts = PlanOptions {
        prune: run.prune,
        create: run.create,
        parallel: run.parallel,
        create_state: run.create_state.map(Into::into),
    };
    // The lock comes before any request: a second apply sends nothing.
    let lock = if run.dry_run {
        recover::refuse_if_unfinished(ctx, cluster)?;
        None
    } else {
        Some(ClusterLock::acquire(
            &ctx.state_dir(),
            cluster,
            &recover::now(),
        )?)
    };
    let client = &ctx.connect(target)?;
    if lock.is_some() {
        let wait = crate::wait::WaitPolicy::with_timeout(run.wait_timeout);
        recover::finish_interrupted(ctx, client, cluster, &wait)?;
    }
    let plan = plan::build(client, cluster, wants, &opts)?;
    let document = |backup, result| ApplyDocument {
        plan: &plan,
        dry_run: run.dry_run,
        source: run.source.as_ref(),
        backup,
        result,
    };
    if !p.is_structured() {
        if let Some(source) = &run.source {
            super::apply_git::print_source(p, source);
        }
        p.out(&apply_render::plan(p, &plan));
    }
    if plan.errors() > 0 {
        if p.is_structured() {
            p.structured(&document(None, None));
        }
        fail_line(
            ctx,
            &format!(
                "{} connector(s) cannot be applied (see the plan); nothing was changed",
                plan.errors()
            ),
        );
        return Ok(EXIT_ERROR);
    }
    super::apply_git::refuse(&plan, &run.fail_on)?;
    let mut exec = ExecOptions::new(run.prune, run.parallel, run.wait_timeout);
    exec.tx.task_timeout = run.task_timeout;
    if plan.changes() == 0 {
        // Runs the (empty) transactions so that the report shows zero mutating calls.
        let report = apply::execute(client, &plan, &exec, &SystemClock, &ApplyProgress::new(p))?;
        if p.is_structured() {
            p.structured(&document(None, Some(&report)));
        } else {
            p.line("No changes.");
        }
        return Ok(EXIT_OK);
    }
    if run.dry_run {
        if p.is_structured() {
            p.structured(&document(None, None));
        } else {
            p.status("Dry run: nothing was changed.");
        }
        return Ok(EXIT_OK);
    }
    if !run.yes && !confirm(ctx, &format!("{} to cluster {cluster}?", run.verb))? {
        p.status("Nothing was changed.");
        return Ok(EXIT_ERROR);
    }
    let dir = match &run.backup_dir {
        Some(d) if d.is_relative() => ctx.cwd.join(d),
        Some(d) => d.clone(),
        None => backup::default_dir(&ctx.cwd, cluster, std::time::SystemTime::now()),
    };
    exec.interrupted = Some(on_interrupt_finish_in_flight());
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let saved = backup::write(&plan, &dir, &now)?;
    if !saved.is_empty() {
        p.status(&format!(
            "Backup of the live offsets: {} (undo: kco apply {} --prune {})",
            ctx.display_path(&saved.dir),
            ctx.display_path(&saved.dir),
            ctx.target_flags(cluster)
        ));
    }
    let journal = JournalFile::begin(&ctx.state_dir(), &plan, Some(&saved.dir), &now)?;
    let printer = ApplyProgress::new(p);
    let report = match &journal {
        Some(j) => {
            let progress = Journaled::new(j, &printer);
            let report = apply::execute(client, &plan, &exec, &SystemClock, &progress)?;
            journal_left(ctx, j, &progress, cluster);
            report
        }
        None => apply::execute(client, &plan, &exec, &SystemClock, &printer)?,
    };
    if p.is_structured() {
        p.structured(&document(Some(&saved), Some(&report)));
    } else {
        p.out(&apply_render::summary(p, &report));
    }
    if report.converged {
        Ok(EXIT_OK)
    } else {
        fail_line(ctx, "not every connector converged (see above)");
        Ok(EXIT_ERROR)
    }
}

/// Says so when the journal still records connectors (their state could not be put back).
fn journal_left(ctx: &Context, j: &JournalFile, progress: &Journaled, cluster: &str) {
    if let Some(e) = progress.take_write_error() {
        ctx.printer
            .warn(&format!("the apply journal could not be updated: {e}"));
    }
    let left = j.remaining();
    if !left.is_empty() {
        ctx.printer.warn(&format!(
            "{} connector(s) may be left out of their prior state ({}); they are recorded in {}: `kco recover {}` puts them back",
            left.len(),
            left.keys().cloned().collect::<Vec<_>>().join(", "),
            ctx.display_path(j.path()),
            ctx.target_flags(cluster)
        ));
    }
}

/// Set by the first Ctrl-C (or SIGTERM) during the transactions.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// From here on, a first interrupt lets the transactions under way finish (each puts its
/// connector's state back) and starts no new one; a second exits at once.
fn on_interrupt_finish_in_flight() -> &'static AtomicBool {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            eprintln!(
                "kco: interrupted again: exiting now; connectors under way may be left stopped"
            );
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        eprintln!(
            "kco: interrupted: connectors under way finish and get their state back; no other starts (interrupt again to exit at once)"
        );
    });
    &INTERRUPTED
}

/// Asks on the terminal; refuses when stdin is not one.
fn confirm(ctx: &Context, question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::Usage(
            "stdin is not a terminal, so kco cannot ask for confirmation; nothing was changed. Pass --yes to apply without asking".into(),
        ));
    }
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "{} [y/N] ",
        ctx.printer.paint_err(Style::Bold, question)
    );
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

fn fail_line(ctx: &Context, message: &str) {
    report_error::failure(&ctx.printer, message);
}
