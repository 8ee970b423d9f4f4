//! The CLI side of the offsets deleted connectors left in Connect's offsets topic: where kco
//! reads them (`kafka:` and `connectTopics.offsets` of the cluster), and the run of a reset of
//! them (`kco reset --orphaned`) or of its undo (`kco undo` of such a reset's backup) through
//! the guarded operation (`engine::operation::Operation::run_topic`): the plan, the
//! confirmation and what happened.

use serde_json::Value;

use super::apply_render::Verb;
use super::change::{ask, say_local_only, ChangeArgs};
use super::{words, Context};
use crate::config::ClusterTarget;
use crate::engine::apply::{BackupReport, SystemClock};
use crate::engine::operation::{Operation, Settings, TopicRan};
use crate::engine::orphaned::of_name::Leftovers;
use crate::engine::orphaned::{GroupWrite, Orphans, Purpose, TopicPlan, TopicWrite, Written};
use crate::engine::select;
use crate::error::{Result, EXIT_ERROR, EXIT_OK};
use crate::kafka::KafkaOptions;
use crate::wait::WaitPolicy;

/// The sinks' groups that `target`'s snapshot files name (`consumer.override.group.id` in a
/// sink file's config): a deleted sink with a group of its own left its offsets there. A
/// cluster without a snapshots directory names none; a file that does not load is an error
/// naming it.
pub fn named_groups(
    ctx: &Context,
    target: &ClusterTarget,
) -> Result<std::collections::BTreeMap<String, String>> {
    let dir = crate::engine::store::cluster_dir(&ctx.snapshots_dir(), &target.name);
    if !dir.is_dir() {
        return Ok(Default::default());
    }
    let (files, problems) = crate::engine::load_files(&[dir]);
    if !problems.is_empty() {
        return Err(crate::error::Error::Files(problems));
    }
    Ok(crate::engine::orphaned::groups_named_by(
        files.iter().map(|f| &f.file),
    ))
}

/// What `target`'s deleted connectors left in `topic` and in the sinks' groups, beside its
/// connectors `live` (as `own` lists them), the other clusters of kco.yaml looked at (those
/// that could not be resolved among [`Orphans::unchecked`]), unsaid.
pub fn found(
    ctx: &Context,
    target: &ClusterTarget,
    kafka: &KafkaOptions,
    topic: &str,
    live: &std::collections::BTreeMap<String, crate::client::ConnectorListing>,
    own: &dyn crate::client::Service,
) -> Result<Orphans> {
    let (others, unresolved) = super::neighbours::looked_at(ctx, target);
    let named = named_groups(ctx, target)?;
    let mut found = crate::engine::orphaned::find_all(kafka, topic, live, own, &others, &named)
        .map_err(|source| crate::error::Error::Kafka {
            context: format!(
                "cluster `{}`: reading topic `{topic}` and the sinks' consumer groups",
                target.name
            ),
            source,
        })?;
    found.unchecked.extend(unresolved);
    Ok(found)
}

/// Warns of the other clusters of kco.yaml that could not be looked at for the groups their
/// connectors use.
pub fn warn_unchecked(ctx: &Context, unchecked: &[(String, String)]) {
    for (cluster, why) in unchecked {
        ctx.printer.warn(&format!(
            "cannot look at cluster `{cluster}` for the consumer groups and offsets its connectors use (a source's offsets or a sink's group listed here may be one of theirs): {why}"
        ));
    }
}

/// Says which of `names` (or, with none, how many names) were left out of the leftovers
/// because a source of another cluster of kco.yaml has them and may keep its offsets in the
/// topic.
pub fn say_live_elsewhere(ctx: &Context, found: &Orphans, names: &[String]) {
    let asked = select::Selector::new(names, None).ok();
    for (name, cluster) in &found.live_elsewhere {
        if asked.as_ref().is_none_or(|s| s.matches_name(name)) {
            ctx.printer.warn(&format!(
                "`{name}` in topic `{}` is left out: a source of that name runs on cluster `{cluster}` of kco.yaml, on the same Kafka, whose worker may keep its offsets there",
                found.topic
            ));
        }
    }
}

/// The whole run, as `--output json` prints it.
#[derive(serde::Serialize)]
struct Document<'a> {
    plan: &'a TopicPlan,
    dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    backup: Option<&'a BackupReport>,
    /// How the offsets topic's records were written: in one transaction, or not (and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    written: Option<&'a Written>,
    /// Writes whose key, read back, does not hold the value written.
    #[serde(skip_serializing_if = "Option::is_none")]
    mismatched: Option<&'a [TopicWrite]>,
    /// Group offsets that, read back, are not the ones written.
    #[serde(
        rename = "mismatchedGroups",
        skip_serializing_if = "<[GroupWrite]>::is_empty"
    )]
    mismatched_groups: &'a [GroupWrite],
    #[serde(skip_serializing_if = "Option::is_none")]
    ok: Option<bool>,
}

/// Opens the operation on `target`, plans with `plan` (reads only), prints the plan, and
/// runs it: confirmed, backed up, written, read back.
pub fn drive(
    ctx: &Context,
    target: &ClusterTarget,
    kafka: &KafkaOptions,
    args: &ChangeArgs,
    verb: Verb,
    plan: &dyn Fn(&Operation) -> Result<TopicPlan>,
) -> Result<u8> {
    let op = open(ctx, target, args)?;
    let plan = plan(&op)?;
    run(ctx, target, kafka, args, verb, &op, &plan)
}

/// The guarded operation on `target` (a dry run's, or one that locks), with what it found
/// said: a run finished elsewhere, a recovery.
pub fn open(ctx: &Context, target: &ClusterTarget, args: &ChangeArgs) -> Result<Operation> {
    let state = ctx.state_dir();
    let connect = || ctx.connect(target);
    super::recover::drop_left_behind_lock(ctx, &target.name)?;
    let op = if args.dry_run {
        Operation::dry_run(&state, &target.name, &connect)?
    } else {
        let wait = WaitPolicy::with_timeout(std::time::Duration::from_secs(args.wait_timeout));
        Operation::open(&state, &target.name, &connect, &wait, &SystemClock)?
    };
    if let Some(f) = op.finished_elsewhere() {
        super::recover::say_finished_elsewhere(ctx, f);
    }
    if let Some(r) = op.recovered() {
        ctx.printer
            .status(super::recover::render_recovery(ctx, r).trim_end());
    }
    Ok(op)
}

/// Prints `plan` and runs it in `op`: confirmed, backed up, written, read back.
pub fn run(
    ctx: &Context,
    target: &ClusterTarget,
    kafka: &KafkaOptions,
    args: &ChangeArgs,
    verb: Verb,
    op: &Operation,
    plan: &TopicPlan,
) -> Result<u8> {
    let p = &ctx.printer;
    if !p.is_structured() {
        p.out(&render_plan(plan));
    }
    let settings = Settings {
        dry_run: args.dry_run,
        refuse: Vec::new(),
        exec: crate::engine::apply::ExecOptions::new(
            true,
            1,
            std::time::Duration::from_secs(args.wait_timeout),
        ),
        backup_dir: args.backup_dir.as_ref().map(|d| ctx.cwd.join(d)),
    };
    let mut confirm = |_: &TopicPlan| {
        if let Some(why) = op.local_only() {
            say_local_only(ctx, &target.name, why);
        }
        let question = match verb {
            Verb::Undo => "Write these offsets back",
            Verb::Apply => "Write these offsets",
            Verb::Reset => "Delete these offsets",
        };
        Ok(args.yes
            || ask(
                ctx,
                &format!(
                    "{question} in {} of cluster `{}`?",
                    places(plan),
                    target.name
                ),
            )?)
    };
    let document = |backup, written, mismatched, mismatched_groups, ok| Document {
        plan,
        dry_run: args.dry_run,
        backup,
        written,
        mismatched,
        mismatched_groups,
        ok,
    };
    let steps = super::apply_render::StepPrinter(p);
    match op.run_topic(plan, &settings, kafka, &mut confirm, &steps)? {
        TopicRan::NoChanges => {
            if p.is_structured() {
                p.structured(&document(None, None, None, &[], Some(true)));
            } else {
                p.line("No changes.");
            }
            Ok(EXIT_OK)
        }
        TopicRan::DryRun => {
            if p.is_structured() {
                p.structured(&document(None, None, None, &[], None));
            } else {
                p.status("Dry run: nothing was changed.");
            }
            Ok(EXIT_OK)
        }
        TopicRan::Declined => {
            p.status("Nothing was changed.");
            Ok(EXIT_ERROR)
        }
        TopicRan::Done(done) => {
            let dir = ctx.display_path(&done.backup.dir);
            let ok = done.error.is_none()
                && done.mismatched.is_empty()
                && done.mismatched_groups.is_empty();
            if p.is_structured() {
                p.structured(&document(
                    Some(&done.backup),
                    done.written.as_ref(),
                    Some(&done.mismatched),
                    &done.mismatched_groups,
                    Some(ok),
                ));
            } else {
                p.status(&format!(
                    "Backup of the offsets as they were: {dir} (undo: kco undo {dir})"
                ));
            }
            if let Some(Written::Plain { why }) = &done.written {
                p.warn(&format!(
                    "topic `{}` written without a transaction (none could start: {why}); each record is read back below",
                    plan.topic
                ));
            }
            if !done.recreated.is_empty() && !p.is_structured() {
                p.line(&format!(
                    "Created again from their definitions, running: {}",
                    done.recreated.join(", ")
                ));
            }
            if let Some(e) = &done.error {
                super::report_error::failure(
                    p,
                    &format!("{e}; some keys may be written: `kco undo {dir}` puts them back"),
                );
                return Ok(EXIT_ERROR);
            }
            for w in &done.mismatched {
                p.warn(&format!(
                    "{} {}: read back, the key does not hold what was written (another client wrote it since?)",
                    w.name,
                    source_partition(&w.source_partition)
                ));
            }
            for w in &done.mismatched_groups {
                p.warn(&format!(
                    "{} {}-{} (group `{}`): read back, the committed offset is not what was written (a consumer committed since?)",
                    w.name, w.topic, w.partition, w.group
                ));
            }
            if !ok {
                super::report_error::failure(p, "not every key holds what was written (see above)");
                return Ok(EXIT_ERROR);
            }
            if !p.is_structured() {
                let how = match &done.written {
                    Some(Written::Transaction { .. }) => " (the topic's in one transaction)",
                    _ => "",
                };
                let done = match verb {
                    Verb::Undo => "written back",
                    Verb::Apply => "written",
                    Verb::Reset => "deleted",
                };
                let mut places = Vec::new();
                if !plan.writes.is_empty() {
                    places.push(format!("topic `{}`", plan.topic));
                }
                for g in plan.groups() {
                    places.push(format!("group `{g}`"));
                }
                p.line(&format!(
                    "{} of {} {done} in {}{how}, each read back.",
                    words::count(plan.writes.len() + plan.group_writes.len(), "offset"),
                    words::count(plan.names.len(), "connector name"),
                    places.join(", ")
                ));
            }
            Ok(EXIT_OK)
        }
    }
}

/// The plan: per name, each key's offset now and what it becomes.
fn render_plan(plan: &TopicPlan) -> String {
    if plan.is_empty() {
        return format!(
            "Plan for cluster {} (offsets topic `{}`): every key holds what it should.\n",
            plan.cluster, plan.topic
        );
    }
    let mut out = format!("Plan for cluster {} ({}):\n", plan.cluster, places(plan));
    for name in &plan.names {
        let what = match plan.purpose {
            _ if plan.recreated.contains(name) => {
                "deleted first, then created again from its definition: it starts here"
            }
            Purpose::Leftovers => "no connector of that name",
            Purpose::Apply if plan.stopped.contains(name) => "STOPPED",
            Purpose::Apply => "no connector of that name: one created under it starts here",
        };
        out.push_str(&format!("\n  {name}  ({what})\n"));
        for w in plan.writes.iter().filter(|w| &w.name == name) {
            out.push_str(&format!(
                "    {}  {} -> {}\n",
                source_partition(&w.source_partition),
                offset(w.from.as_ref()),
                match &w.to {
                    Some(o) => offset(Some(o)),
                    None => "(deleted)".into(),
                }
            ));
        }
        for w in plan.group_writes.iter().filter(|w| &w.name == name) {
            let at = |o: Option<i64>| o.map_or("(none)".to_string(), |o| o.to_string());
            out.push_str(&format!(
                "    {}-{} (group `{}`)  {} -> {}\n",
                w.topic,
                w.partition,
                w.group,
                at(w.from),
                match w.to {
                    Some(o) => o.to_string(),
                    None => "(deleted)".into(),
                }
            ));
        }
    }
    out.push_str(&format!(
        "\n{} of {} to write.\n",
        words::count(plan.writes.len() + plan.group_writes.len(), "offset"),
        words::count(plan.names.len(), "connector name")
    ));
    out
}

/// Where the plan writes: the offsets topic, the sinks' consumer groups, or both.
fn places(plan: &TopicPlan) -> String {
    let groups: std::collections::BTreeSet<&str> =
        plan.group_writes.iter().map(|w| w.group.as_str()).collect();
    let groups = match groups.len() {
        1 => format!("consumer group `{}`", groups.iter().next().unwrap()),
        _ => "sinks' consumer groups".to_string(),
    };
    match (plan.writes.is_empty(), plan.group_writes.is_empty()) {
        (false, false) => format!("offsets topic `{}` and {groups}", plan.topic),
        (true, false) => groups,
        _ => format!("offsets topic `{}`", plan.topic),
    }
}

fn source_partition(p: &Value) -> String {
    match p.as_object() {
        Some(m) => words::partition(&m.clone().into()),
        None => p.to_string(),
    }
}

fn offset(o: Option<&Value>) -> String {
    match o.and_then(Value::as_object) {
        Some(m) => words::offset(Some(&m.clone().into())),
        None => words::offset(None),
    }
}

/// Where a review (`diff --base`) and the plan of `apply --create` read what the cluster's
/// deleted connectors left: `cluster`'s `kafka:`, its offsets topic when kco.yaml names it,
/// and the other clusters of kco.yaml, resolved only if a sink's group is looked at (their
/// connectors' groups are not leftovers); or why they cannot.
pub(super) fn leftovers<'a>(ctx: &'a Context, cluster: &str) -> Leftovers<'a> {
    let cloud = ctx
        .target_named(Some(cluster))
        .is_ok_and(|t| matches!(t.backend, crate::client::Backend::ConfluentCloud(_)));
    if cloud {
        return Leftovers::Unread(
            "Confluent Cloud gives a connector it creates a consumer group and offsets of its own id, which kco does not read through Kafka".into(),
        );
    }
    let env = |k: &str| std::env::var(k).ok();
    let kafka = match ctx.config.dr_settings(cluster, &env) {
        Ok(s) => s.kafka,
        Err(e) => {
            return Leftovers::Unread(format!("kco.yaml's `kafka:` of cluster `{cluster}`: {e}"))
        }
    };
    let Some(kafka) = kafka else {
        return Leftovers::Unread(format!(
            "kco.yaml gives cluster `{cluster}` no `kafka:` to read them through"
        ));
    };
    let topic = ctx.config.offsets_topic(cluster).map(str::to_string);
    let name = cluster.to_string();
    let others = move || match ctx.target_named(Some(&name)) {
        Ok(target) => super::neighbours::neighbours(ctx, &target).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    Leftovers::kafka(Box::new(kafka), topic, Box::new(others))
}
