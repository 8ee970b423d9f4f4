//! The CLI side of the guarded operation (`engine::operation`) that apply, reset and undo go
//! through: opening it, the plan, the confirmation and the rendering of each step's outcome
//! (their shared flags and words are `change.rs`'s). A cluster whose offsets are read through
//! Kafka is handed to `through_kafka.rs` once the operation is open. The engine does the locking, recovery, refusals,
//! backup, journal and execution; nothing here touches them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::apply_render;
use super::change::{ask, refused, say_local_only, AppliedCheck, ChangeArgs, Request};
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
use crate::engine::history;
use crate::engine::history::at::FilesSource;
use crate::engine::history::mark::AppliedMark;
use crate::engine::history::when::short_id;
use crate::engine::operation::applied_mark;
use crate::engine::operation::{Operation, PlanInput, Ran, Settings};
use crate::engine::progress::Both;
use crate::error::{Error, Result, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK};

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
    let op = open(ctx, target, args)?;
    // The changes up to HEAD: what another run applied meanwhile, read under the lock.
    let mark = match (&req.applied, op.shared_remote()) {
        (Some(check), Some(remote)) => {
            let now = applied_mark::read(remote, &target.name)?;
            if let Some(done) = applied_meanwhile(ctx, target, check, now.as_ref())? {
                return Ok(done);
            }
            Some(Mark { check, remote, now })
        }
        _ => None,
    };
    // Workers without the offsets endpoints: the offsets are written through Kafka.
    if op.client().capabilities().offsets_through_kafka {
        return super::through_kafka::drive(ctx, target, wants, args, req, &op);
    }
    let plan = plan(ctx, target, wants, args, req, &op)?;
    let settings = settings(ctx, args, req);
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
    let progress = Both(apply_progress(&ctx.printer), BackupNote { ctx });
    let ran = op.run(&plan, &settings, &mut confirm, &progress, &SystemClock)?;
    let mark_applied = || {
        if let Some(m) = &mark {
            m.record(ctx, target, &op);
        }
    };
    render_ran(ctx, target, args, req, &plan, ran, &mark_applied)
}

/// Opens the operation on `target` (a dry run takes no lock), after dropping a lock its own
/// host left behind; says what an earlier run left and what opening it recovered.
fn open(ctx: &Context, target: &ClusterTarget, args: &ChangeArgs) -> Result<Operation> {
    let state = ctx.state_dir();
    let connect = || ctx.connect(target);
    super::recover::drop_left_behind_lock(ctx, &target.name)?;
    let op = if args.dry_run {
        Operation::dry_run(&state, &target.name, &connect)?
    } else {
        Operation::open(&state, &target.name, &connect, &args.wait(), &SystemClock)?
    };
    if let Some(f) = op.finished_elsewhere() {
        super::recover::say_finished_elsewhere(ctx, f);
    }
    if let Some(r) = op.recovered() {
        ctx.printer.status(render_recovery(ctx, r).trim_end());
    }
    Ok(op)
}

/// The mark of what was applied on the shared remote, as read under the lock.
struct Mark<'a> {
    check: &'a AppliedCheck,
    remote: &'a crate::engine::operation::remote_lock::Remote,
    now: Option<AppliedMark>,
}

impl Mark<'_> {
    /// Once the changes up to HEAD are on the cluster, the mark says so, before the lock
    /// goes; a mark that moved meanwhile, or cannot be moved, is a warning.
    fn record(&self, ctx: &Context, target: &ClusterTarget, op: &Operation) {
        let (check, now) = (self.check, &self.now);
        let newer = match now {
            Some(m) => !history::mark::covers(&check.dir, &check.head, m).unwrap_or(true),
            None => true,
        };
        let Some(holder) = op.holder().filter(|_| newer) else {
            return;
        };
        let at = crate::clock::now_rfc3339();
        let seen = now.as_ref().map(|m| m.mark.as_str());
        let p = &ctx.printer;
        match applied_mark::write(self.remote, &target.name, &check.head, holder, &at, seen) {
            Ok(true) => {}
            Ok(false) => p.warn(&format!(
                "the shared remote's mark of what was applied to cluster `{}` moved meanwhile: left as it is",
                target.name
            )),
            Err(e) => p.warn(&format!(
                "the changes are applied, but the shared remote's mark of what was applied to cluster `{}` could not be moved ({e}): a run on an older checkout would not know they are",
                target.name
            )),
        }
    }
}

/// The plan, from what the flags and kco.yaml resolve (the DR translation, the neighbours,
/// the offsets topic and what deleted connectors left, for a plan that creates), its
/// warnings said and, on a terminal, the plan printed.
fn plan(
    ctx: &Context,
    target: &ClusterTarget,
    wants: &Checked,
    args: &ChangeArgs,
    req: &Request,
    op: &Operation,
) -> Result<ApplyPlan> {
    let p = &ctx.printer;
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
    // ... and what deleted connectors left, which the connectors it creates resume from.
    let leftovers = match req.plan.create {
        true => super::orphaned::leftovers(ctx, &target.name),
        false => crate::engine::orphaned::of_name::Leftovers::Unread("no --create".into()),
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
        leftovers: &leftovers,
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
        p.out(&p.fold(&apply_render::plan(p, &plan)));
    }
    Ok(plan)
}

/// How the operation runs: the flags' dry run, refusals, waits and backup directory.
fn settings(ctx: &Context, args: &ChangeArgs, req: &Request) -> Settings {
    let mut exec = ExecOptions::new(
        req.plan.prune,
        req.plan.parallel,
        Duration::from_secs(args.wait_timeout),
    );
    exec.tx.task_timeout = Duration::from_secs(args.task_timeout);
    exec.interrupted = Some(&INTERRUPTED);
    Settings {
        dry_run: args.dry_run,
        refuse: req.refuse.clone(),
        exec,
        backup_dir: args.backup_dir.as_ref().map(|d| ctx.cwd.join(d)),
    }
}

/// What the run did, rendered, and its exit code; the mark of what was applied moved once
/// the changes are on the cluster.
fn render_ran(
    ctx: &Context,
    target: &ClusterTarget,
    args: &ChangeArgs,
    req: &Request,
    plan: &ApplyPlan,
    ran: Ran,
    mark_applied: &dyn Fn(),
) -> Result<u8> {
    let p = &ctx.printer;
    let document = |backup, result| ApplyDocument {
        plan,
        dry_run: args.dry_run,
        source: req.source,
        backup,
        result,
    };
    match ran {
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
            mark_applied();
            if p.is_structured() {
                p.structured(&document(None, Some(&report)));
            } else if req.verb == super::apply_render::Verb::Undo {
                // Live already where the backup has it: for a connector that ran since a
                // rewind, because it read the records again, which no undo takes back.
                p.line("No changes: every offset already stands where the backup has it. A connector that ran since the operation got there by itself: if the operation rewound it, the records it read again up to there were delivered twice (an undo cannot take them back).");
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
                p.out(&p.fold(&apply_render::summary(p, &done.report, req.verb)));
            }
            if done.report.converged {
                mark_applied();
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

/// Under the lock, for `apply --unapplied`: the changes were chosen by the mark read before
/// the lock, and another run moved it since. When this checkout has nothing newer than what it
/// applied, nothing is applied (exit 0: `Applied already`); else the changes chosen are stale,
/// and the run stops before any change.
fn applied_meanwhile(
    ctx: &Context,
    target: &ClusterTarget,
    check: &AppliedCheck,
    now: Option<&AppliedMark>,
) -> Result<Option<u8>> {
    let Some(seen) = &check.chosen_by else {
        return Ok(None);
    };
    let Some(now) = now.filter(|m| Some(&m.mark) != seen.as_ref()) else {
        return Ok(None);
    };
    if !history::mark::covers(&check.dir, &check.head, now)? {
        return Err(Error::Other(format!(
            "another run applied changes to cluster `{}` meanwhile (up to {}, {}, at {}): nothing was changed; run again, from there",
            target.name,
            short_id(&now.commit),
            now.by,
            now.at
        )));
    }
    let p = &ctx.printer;
    if p.is_structured() {
        p.structured(&serde_json::json!({
            "plan": null,
            "dry_run": false,
            "applied_already": now,
            "result": null,
        }));
    } else {
        p.line(&super::apply_git::applied_already(now, &check.head));
    }
    Ok(Some(EXIT_OK))
}
