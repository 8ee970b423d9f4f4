//! The CLI side of the guarded operation (`engine::operation`) that apply, reset and undo go
//! through: their shared flags, declared once; the confirmation on the terminal; and the
//! rendering of each step's outcome. The engine does the locking, recovery, refusals,
//! backup, journal and execution; nothing here touches them.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::apply_render::{self, Verb};
use super::output::{Printer, Style};
use super::progress::apply_progress;
use super::recover::render_recovery;
use super::report_error;
use super::words;
use super::Context;
use crate::config::ClusterTarget;
use crate::engine::apply::{
    ApplyPlan, ApplyReport, BackupReport, Checked, ExecOptions, Observer, OperationObserver,
    PlanOptions, SystemClock, TargetCluster,
};
use crate::engine::fail_on::{Refusal, Refuse};
use crate::engine::history::at::FilesSource;
use crate::engine::operation::remote_lock::LocalOnly;
use crate::engine::operation::{Operation, PlanInput, Ran, Settings};
use crate::engine::progress::Both;
use crate::error::{Error, Result, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK};
use crate::wait::WaitPolicy;

/// The whole run, as `--output json` prints it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ApplyDocument<'a> {
    pub plan: &'a ApplyPlan,
    pub dry_run: bool,
    /// `--at` / `--changed-since`: the commit the files came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'a FilesSource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<&'a BackupReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a ApplyReport>,
}

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
        }
    }
}

impl ChangeArgs {
    fn wait(&self) -> WaitPolicy {
        WaitPolicy::with_timeout(Duration::from_secs(self.wait_timeout))
    }
}

/// The cluster the global flags name, and whether they named it.
pub fn target_cluster(ctx: &Context, target: &ClusterTarget) -> TargetCluster {
    TargetCluster {
        name: target.name.clone(),
        named: ctx.global.cluster.is_some(),
    }
}

/// Opens the operation, plans, prints the plan, runs it, prints what happened.
pub fn drive(
    ctx: &Context,
    target: &ClusterTarget,
    wants: &Checked,
    args: &ChangeArgs,
    req: &Request,
) -> Result<u8> {
    let p = &ctx.printer;
    let state = ctx.state_dir();
    let connect = || ctx.connect(target);
    let op = if args.dry_run {
        Operation::dry_run(&state, &target.name, &connect)?
    } else {
        Operation::open(&state, &target.name, &connect, &args.wait(), &SystemClock)?
    };
    if let Some(f) = op.finished_elsewhere() {
        super::recover::say_finished_elsewhere(ctx, f);
    }
    if let Some(r) = op.recovered() {
        p.status(render_recovery(ctx, r).trim_end());
    }
    // Workers without the offsets endpoints: the offsets are written through Kafka.
    if op.client().capabilities().offsets_through_kafka {
        return super::through_kafka::drive(ctx, target, wants, args, req, &op);
    }
    let plan_opts = PlanOptions {
        max_observed_age: ctx.config.max_observed_age(&target.name),
        ..req.plan
    };
    let dr = super::translate::options(
        ctx,
        target,
        req.translate,
        req.with_sources,
        &Default::default(),
    );
    let neighbours = super::neighbours::neighbours(ctx, target)?;
    // Only a plan that creates connectors looks in the offsets topic.
    let offsets_topic = match req.plan.create {
        true => ctx.offsets_topic(target, "apply --create").ok(),
        false => None,
    };
    let plan = op.plan_all(&PlanInput {
        wants,
        opts: &plan_opts,
        dr: &dr,
        neighbours: &neighbours,
        allow_shared_group: &args.allow_shared_group,
        offsets_topic: offsets_topic
            .as_ref()
            .map(|(k, t)| (k as &dyn crate::engine::orphaned::OffsetsTopic, t.as_str())),
    });
    let warnings = match &plan {
        Ok(plan) => &plan.warnings,
        Err(Error::SharedGroup { warnings, .. }) => warnings,
        Err(_) => &Vec::new(),
    };
    for w in warnings {
        p.warn(w);
    }
    let plan = plan?;
    if !p.is_structured() {
        if let Some(source) = req.source {
            super::apply_git::print_source(p, source);
        }
        p.out(&apply_render::plan(p, &plan));
    }
    let document = |backup, result| ApplyDocument {
        plan: &plan,
        dry_run: args.dry_run,
        source: req.source,
        backup,
        result,
    };
    let mut exec = ExecOptions::new(
        req.plan.prune,
        req.plan.parallel,
        Duration::from_secs(args.wait_timeout),
    );
    exec.tx.task_timeout = Duration::from_secs(args.task_timeout);
    exec.interrupted = Some(&INTERRUPTED);
    let settings = Settings {
        dry_run: args.dry_run,
        refuse: req.refuse.clone(),
        exec,
        backup_dir: args.backup_dir.as_ref().map(|d| ctx.cwd.join(d)),
    };
    let mut confirm = |_: &_| {
        if let Some(why) = op.local_only() {
            say_local_only(ctx, &target.name, why);
        }
        let yes = args.yes
            || ask(
                ctx,
                &format!("{} on cluster `{}`?", req.verb.question(), target.name),
            )?;
        if yes {
            on_interrupt_finish_in_flight();
        }
        Ok(yes)
    };
    let progress = Both(apply_progress(p), BackupNote { ctx });
    match op.run(&plan, &settings, &mut confirm, &progress, &SystemClock)? {
        Ran::PlanErrors(n) => {
            if p.is_structured() {
                p.structured(&document(None, None));
            }
            report_error::failure(
                p,
                &format!(
                    "{} cannot be changed (see the plan); nothing was changed",
                    words::count(n, "connector")
                ),
            );
            Ok(EXIT_ERROR)
        }
        Ran::Refused(found) => Err(refused(&found)),
        Ran::NoChanges(report) => {
            if p.is_structured() {
                p.structured(&document(None, Some(&report)));
            } else {
                p.line("No changes.");
            }
            Ok(EXIT_OK)
        }
        Ran::DryRun => {
            if p.is_structured() {
                p.structured(&document(None, None));
            } else {
                p.status("Dry run: nothing was changed.");
            }
            Ok(EXIT_OK)
        }
        Ran::Declined => {
            p.status("Nothing was changed.");
            Ok(EXIT_ERROR)
        }
        Ran::Done(done) => {
            if let Some(e) = &done.journal_error {
                p.warn(&format!("the journal could not be updated: {e}"));
            }
            if !done.left.is_empty() {
                p.warn(&format!(
                    "{} may be left out of their prior state ({}); they are recorded in {}: `kco recover {}` puts them back",
                    words::count(done.left.len(), "connector"),
                    done.left.keys().cloned().collect::<Vec<_>>().join(", "),
                    ctx.display_path(&done.journal),
                    ctx.target_flags(&target.name)
                ));
            }
            if p.is_structured() {
                p.structured(&document(Some(&done.backup), Some(&done.report)));
            } else {
                p.out(&apply_render::summary(p, &done.report, req.verb));
            }
            if done.report.converged {
                Ok(EXIT_OK)
            } else {
                report_error::failure(p, "not every connector converged (see above)");
                Ok(EXIT_ERROR)
            }
        }
    }
}

/// Says where the backup went, before the first change.
struct BackupNote<'a> {
    ctx: &'a Context,
}

impl Observer for BackupNote<'_> {}

impl OperationObserver for BackupNote<'_> {
    fn backed_up(&self, backup: &BackupReport) {
        if backup.is_empty() {
            return;
        }
        let dir = self.ctx.display_path(&backup.dir);
        let url = match &self.ctx.global.url {
            Some(url) => format!(" --url {}", crate::client::redact_url(url)),
            None => String::new(),
        };
        self.ctx.printer.status(&format!(
            "Backup of the live offsets: {dir} (undo: kco undo {dir}{url})"
        ));
    }
}

/// The refusal that names every partition a `--fail-on` forbids, with its risk label.
pub(super) fn refused(found: &[Refusal]) -> Error {
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

/// Set by the first Ctrl-C (or SIGTERM) during the transactions.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// From here on, a first interrupt lets the transactions under way finish (each puts its
/// connector's state back) and starts no new one; a second exits at once.
fn on_interrupt_finish_in_flight() {
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
}

/// Says, once, before the first change, that the cluster's lock is this machine's only
/// (nothing keeps out another machine or clone applying at once); not where kco.yaml says
/// `lock: local`, which is a choice already made.
pub(super) fn say_local_only(ctx: &Context, cluster: &str, why: LocalOnly) {
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
