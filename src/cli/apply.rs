//! `kco apply`: put the files' offsets on a cluster, safely.

use std::path::PathBuf;

use super::apply_render::Verb;
use super::change::{AppliedCheck, ChangeArgs, Request};
use super::operate::{drive, target_cluster};
use super::Context;
use crate::engine::apply::{self, CheckOptions, PlanOptions};
use crate::engine::fail_on::Refuse;
use crate::engine::history;
use crate::engine::history::delta::CommitDelta;
use crate::engine::history::mark::AppliedMark;
use crate::engine::operation::applied_mark;
use crate::engine::shape_gate::AllowUnknownShape;
use crate::error::{Result, EXIT_OK};

/// Restore offsets from snapshot files: plan, back up, stop, patch, verify, restore state
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Each connector that changes is stopped, patched, read back and put back in its prior \
state (RUNNING, PAUSED or STOPPED); a failure puts the prior state back and is reported. The live \
offsets are backed up first; `kco undo <backup dir>` undoes the apply. A file captured on another \
cluster than the one applied to needs that cluster named with --cluster.\n\n\
Exit codes: 0 everything converged (or no changes); 1 invalid files, a plan error, refusal, or a \
connector that did not converge.\n\n\
Point in time: --at REV|TIME takes every file as it was at a git revision (HEAD~3, a tag, a \
branch, a commit id) or at a time: the last commit at or before it on the current branch \
(first-parent history, committer time). A time is YYYY-MM-DD (a date alone means 00:00 UTC), \
YYYY-MM-DD HH:MM or YYYY-MM-DD HH:MM:SS (T in place of the space also works), in UTC unless a \
zone follows the time: Z, UTC, +HH:MM or -HHMM (\"2026-11-29 02:00+01:00\"); or relative: now, \
today, yesterday (00:00 UTC, or with a time: \"yesterday 14:00\"), \"N minutes|hours|days|weeks \
ago\". Anything that parses as a time is a time. The working tree is not touched. Each file is \
taken as the cluster had it then: its newest version that is an observation (kco rewrote it \
from live) or a change an apply record of the cluster covers (Kco-Apply: CLUSTER, its \
Kco-Commit the change's commit or later); a change never applied is passed over for the version \
before it, and named; a connector whose file holds no such version is not applied.\n\n\
A change from git history is applied as a delta: only the partitions whose offsets it changed are \
set (changed or added), those it removed from a file are reset (their offset deleted), and every \
other partition stays where the cluster has it. --commit REV applies what one commit brought: its \
first parent to it (for a merge, everything the pull request brought), with the files as at REV. \
--changed-since REV applies what was decided since REV: the first-parent commits from REV to HEAD, \
then the working tree's uncommitted change, a later change of a partition winning. --unapplied \
applies every change not yet applied to the cluster: those since the newest apply record of the \
cluster on the first-parent history (`Kco-Apply: CLUSTER`, from the commit its `Kco-Commit` names), \
or since the shared git remote's mark of what was applied (refs/kco/applied/CLUSTER, moved under the \
cluster's lock by every apply of the changes up to HEAD) when that is newer, so a nightly landing \
after a merge never hides it and a rerun applies nothing twice, even on an older checkout \
(`Applied already`). The files \
tell a change from an observation: a file whose capturedAt moved was rewritten from live by kco \
(an observation) and is never applied, whatever the commit's trailers say; a partition edited \
with capturedAt kept is a change. A change moves a partition only in its own direction: a \
forward change (skip ahead) whose target live has already passed leaves the partition where it \
is; a backward change (rewind) is exact.\n\n\
--fail-on refuses, before any change, a plan that would rewind (reprocessing), skip ahead \
(data-loss) or remove (reset) a partition's offset.\n\n\
Offsets that do not fit their connector class's shape (`kco schema --shapes`: an unknown key, a \
missing required one, a wrong type, a negative position) are refused before any request, with \
file:line and the expected shape, unless --allow-unknown-shape names the connector.\n\n\
Examples:\n  kco apply snapshots/prod --dry-run\n  kco apply snapshots/prod/orders.yaml --as orders-v2 --cluster dr --create\n  kco apply snapshots/prod --at \"2026-11-29 02:00\" --prune --dry-run\n  kco apply snapshots/prod --unapplied --fail-on data-loss,reset --yes"
)]
pub struct Args {
    /// Snapshot files or directories [default with --at, --changed-since, --commit or
    /// --unapplied: the cluster's directory]
    #[arg(required_unless_present_any = ["at", "changed_since", "commit", "unapplied"])]
    pub paths: Vec<PathBuf>,
    /// Also remove live partitions that the file lacks (exact restore)
    #[arg(long, conflicts_with_all = ["changed_since", "commit", "unapplied"])]
    pub prune: bool,
    /// Apply the (single) file's offsets to a connector of this name
    #[arg(long = "as", value_name = "NEW_NAME")]
    pub as_name: Option<String>,
    /// Create missing connectors from the config in their file (stopped, patched, then started)
    #[arg(long)]
    pub create: bool,
    /// State for connectors made by --create [default: the state recorded in the file]; on a
    /// failover or failback (files of another Kafka cluster), also the state a connector of
    /// the file's name that the target already has is left in
    #[arg(long, value_enum, requires = "create")]
    pub create_state: Option<StateArg>,
    /// Take the files as the cluster had them at a git revision or a time (YYYY-MM-DD[
    /// HH:MM[:SS]][zone], UTC unless a zone is given; "yesterday 14:00", "2 days ago"); the
    /// working tree is not touched
    #[arg(long, value_name = "REV|TIME", conflicts_with_all = ["changed_since", "commit", "unapplied"])]
    pub at: Option<String>,
    /// Apply the partitions changed since this git revision: its non-record first-parent
    /// commits to HEAD, then the working tree (every other partition is left alone)
    #[arg(long, value_name = "REV", conflicts_with_all = ["commit", "unapplied"])]
    pub changed_since: Option<String>,
    /// Apply every change not yet applied to the cluster: those since its newest apply record
    /// (`Kco-Apply: CLUSTER`) on the first-parent history, or the shared git remote's mark of
    /// what was applied when newer, then the working tree
    #[arg(long, conflicts_with = "commit")]
    pub unapplied: bool,
    /// Apply the partitions this commit changed, from its first parent to it (a merge: what
    /// the pull request brought); files as at the commit, never the working tree
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// Refuse the whole apply, before any change, if the plan has these risks (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',')]
    pub fail_on: Vec<RefuseArg>,
    /// Apply this connector's file even if its offsets do not fit its class's shape (a name or
    /// glob; repeatable)
    #[arg(long, value_name = "NAME")]
    pub allow_unknown_shape: Vec<String>,
    /// How a sink file from another Kafka cluster crosses a MirrorMaker 2 mirror: `file`
    /// (checkpoint at or below the file's offset), `latest` (MM2's latest checkpoint), `none`
    /// (topics renamed, offsets kept) [default: file, when the mirror is configured]
    #[arg(long, value_enum, value_name = "MODE")]
    pub translate: Option<super::translate::TranslateArg>,
    /// Also plan source connectors captured on another Kafka cluster (left out by default:
    /// their positions belong to the primary's source systems)
    #[arg(long)]
    pub with_sources: bool,
    /// Move a connector that runs on the target although the file is of another Kafka
    /// cluster (a failback onto a primary whose old sinks resumed); refused by default: it
    /// reads beside the sink the file was captured from
    #[arg(long)]
    pub allow_running_primary: bool,
    #[command(flatten)]
    pub change: ChangeArgs,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    // Files of another cluster than the `default` a URL alone stands for: the cluster was
    // left unnamed, said as `diff` and `snapshot` say it.
    applying(args, ctx).map_err(|e| ctx.naming_unnamed_cluster(e))
}

fn applying(mut args: Args, ctx: &Context) -> Result<u8> {
    let env = |k: &str| std::env::var(k).ok();
    let target = ctx.target()?;
    // A revision or a range with no path: the cluster's directory, as `diff` takes it.
    if args.paths.is_empty() {
        let dir = crate::engine::store::cluster_dir(&ctx.snapshots_dir(), &target.name);
        args.paths.push(PathBuf::from(ctx.display_path(&dir)));
    }
    let check = CheckOptions {
        as_name: args.as_name.clone(),
        create: args.create,
        target: target_cluster(ctx, &target),
        allow_unknown_shape: AllowUnknownShape::new(&args.allow_unknown_shape)?,
    };
    if args.at.is_none() && args.commit.is_none() && args.changed_since.is_none() {
        name_for_a_file(&args.paths, ctx, &target.name)?;
    }
    let paths = super::apply_git::absolute(&args.paths, ctx);
    let mark = match args.unapplied {
        true => read_mark(ctx, &target.name, args.change.dry_run)?,
        false => None,
    };
    let delta = match (&args.changed_since, &args.commit) {
        _ if args.unapplied => Some(history::delta::unapplied(
            &paths,
            &target.name,
            mark.as_ref(),
        )?),
        (Some(rev), _) => Some(history::delta::changed_since(&paths, rev)?),
        (None, Some(rev)) => match history::delta::commit(&paths, rev)? {
            CommitDelta::Delta(d) => Some(*d),
            CommitDelta::Record(r) => {
                if ctx.printer.is_structured() {
                    ctx.printer
                        .structured(&nothing_to_apply(&args, None, Some(&r)));
                } else {
                    super::apply_git::print_record(&ctx.printer, &r);
                    ctx.printer.line("No changes.");
                }
                return Ok(EXIT_OK);
            }
        },
        (None, None) => None,
    };
    let (wants, source) = match (&args.at, delta) {
        (Some(at), _) => {
            let (files, source) = history::at::files_at(&paths, at)?;
            let wants = apply::check_loaded(files, &args.paths, &check, &env)?;
            (wants, Some(source))
        }
        (None, Some(delta)) => {
            if delta.files.is_empty() {
                if ctx.printer.is_structured() {
                    ctx.printer
                        .structured(&nothing_to_apply(&args, Some(&delta.source), None));
                } else {
                    super::apply_git::print_source(&ctx.printer, &delta.source);
                    ctx.printer.line("No changes.");
                }
                return Ok(EXIT_OK);
            }
            let changes = delta
                .files
                .iter()
                .map(|(f, c)| (f.path.clone(), c.clone()))
                .collect();
            let files = delta.files.into_iter().map(|(f, _)| f).collect();
            let wants = apply::check_loaded(files, &args.paths, &check, &env)?.scoped(changes);
            (wants, Some(delta.source))
        }
        (None, None) => (apply::check(&args.paths, &check, &env)?, None),
    };
    let shapes = crate::shapes::registry();
    let allow = &check.allow_unknown_shape;
    for (name, n) in crate::engine::shape_gate::allowed(
        shapes,
        wants.wants().iter().filter_map(|w| w.file()),
        allow,
    ) {
        ctx.printer.warn(&format!(
            "`{name}`: {} against its class's shape, applied anyway (--allow-unknown-shape)",
            crate::text::count(n, "offset problem")
        ));
    }
    let request = Request {
        verb: Verb::Apply,
        plan: PlanOptions {
            prune: args.prune,
            create: args.create,
            parallel: args.change.parallel,
            create_state: args.create_state.map(Into::into),
            max_observed_age: None,
            allow_running_primary: args.allow_running_primary,
        },
        refuse: args.fail_on.into_iter().map(Into::into).collect(),
        source: source.as_ref(),
        translate: args.translate.map(Into::into),
        with_sources: args.with_sources,
        applied: match (args.unapplied || args.changed_since.is_some(), &source) {
            (true, Some(source)) => Some(AppliedCheck {
                dir: paths[0].clone(),
                head: history::mark::applied_up_to(
                    &paths[0],
                    &source
                        .skipped
                        .iter()
                        .map(|r| r.commit.commit.as_str())
                        .collect::<Vec<_>>(),
                )?,
                chosen_by: args
                    .unapplied
                    .then(|| mark.as_ref().map(|m| m.mark.clone())),
            }),
            _ => None,
        },
    };
    drive(ctx, &target, &wants, &args.change, &request)
}

/// The shared remote's mark of what was applied to `cluster`, read before the lock to choose
/// the changes (the run reads it again under the lock). A dry run that cannot read it says
/// so and goes on from the records; a run that changes the cluster stops.
fn read_mark(ctx: &Context, cluster: &str, dry_run: bool) -> Result<Option<AppliedMark>> {
    match applied_mark::read_shared(&ctx.state_dir(), cluster) {
        Ok(mark) => Ok(mark),
        Err(e) if dry_run => {
            ctx.printer.warn(&format!(
                "the shared remote's mark of what was applied to cluster `{cluster}` could not be read ({e}): the dry run goes by this checkout's apply records only"
            ));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The JSON (or YAML) document of an apply that has nothing to apply: a change that touched
/// no file, or a commit that is a record. The same keys as an apply's, with no plan and no
/// result; `record` names the record commit.
fn nothing_to_apply(
    args: &Args,
    source: Option<&history::at::FilesSource>,
    record: Option<&history::at::RecordCommit>,
) -> serde_json::Value {
    serde_json::json!({
        "plan": null,
        "dry_run": args.change.dry_run,
        "source": source,
        "record": record,
        "result": null,
    })
}

/// A risk that refuses an apply, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RefuseArg {
    /// An offset would move backwards: records processed again (REPROCESSING)
    Reprocessing,
    /// An offset would move forwards: records skipped (DATA LOSS)
    DataLoss,
    /// A partition's offset would be removed (--prune, or a change that removed it: OFFSET RESET)
    Reset,
}

impl From<RefuseArg> for Refuse {
    fn from(f: RefuseArg) -> Self {
        match f {
            RefuseArg::Reprocessing => Refuse::Reprocessing,
            RefuseArg::DataLoss => Refuse::DataLoss,
            RefuseArg::Reset => Refuse::Reset,
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

/// A connector's name given where a file is wanted (`kco apply orders`): an error naming its
/// file in the cluster's directory, or the file of the name it most likely meant.
fn name_for_a_file(paths: &[PathBuf], ctx: &Context, cluster: &str) -> Result<()> {
    for p in paths {
        let Some(name) = p.to_str() else { continue };
        if ctx.cwd.join(p).exists() || name.contains('/') || name.ends_with(".yaml") {
            continue;
        }
        let dir = ctx.snapshots_dir();
        let own = crate::engine::store::file_path(&dir, cluster, name);
        let meant = match own.is_file() {
            true => Some(own),
            false => crate::engine::store::guess_filed(
                &crate::engine::store::cluster_dir(&dir, cluster),
                name,
            )
            .map(|g| crate::engine::store::file_path(&dir, cluster, &g)),
        };
        if let Some(file) = meant {
            return Err(crate::error::Error::Usage(format!(
                "`{name}` is not a file or directory: `kco apply` takes snapshot files; did you mean `kco apply {}`?",
                ctx.display_path(&file)
            )));
        }
    }
    Ok(())
}
