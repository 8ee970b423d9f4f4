//! `kco apply` and `kco reset` on a cluster whose offsets kco reads through Kafka (a worker
//! without the offsets endpoints, `kafka::through`): the plan of writes to the offsets topic
//! and the sinks' groups (`engine::through_kafka`), run through the guarded operation as a
//! reset of leftovers is (`cli::orphaned`), then, with `--create`, the connectors created.

use std::collections::{BTreeMap, BTreeSet};

use super::apply_render::Verb;
use super::change::{ChangeArgs, Request};
use super::report_error::{error_text, ErrorBody};
use super::{words, Context};
use crate::client::ConnectorListing;
use crate::config::ClusterTarget;
use crate::engine::apply::{Checked, Want};
use crate::engine::operation::Operation;
use crate::engine::orphaned::TopicPlan;
use crate::engine::through_kafka::{self, Input, PlanError, Refusal};
use crate::error::{Error, Result, EXIT_OK};
use crate::model::{ConnectorState, TargetState};

/// Plans the wants as writes through Kafka, runs them in `op`, and creates what `--create`
/// asks for once they are written.
pub fn drive(
    ctx: &Context,
    target: &ClusterTarget,
    wants: &Checked,
    args: &ChangeArgs,
    req: &Request,
    op: &Operation,
) -> Result<u8> {
    let command = match req.verb {
        Verb::Reset => "reset",
        _ => "apply",
    };
    let (kafka, topic) = ctx.offsets_topic(target, command)?;
    if let Some(w) = through_kafka::per_connector_topic(&target.name, &topic) {
        ctx.printer.warn(&w);
    }
    if req.translate.is_some() {
        return Err(Error::Usage(format!(
            "cluster `{}`: --translate crosses a MirrorMaker 2 mirror through Connect's offsets endpoints, which its workers lack; apply a file of this Kafka cluster",
            target.name
        )));
    }
    if let Some(s) = req.plan.create_state.filter(|s| *s != TargetState::Running) {
        return Err(Error::Usage(format!(
            "cluster `{}`: --create-state {s}: its workers create connectors RUNNING only (creating one {s} needs Kafka Connect 3.7, KIP-980); create it yourself after the apply",
            target.name
        )));
    }
    if req.plan.create {
        // A cluster read from its topics alone has no API to create a connector with.
        crate::engine::probe::require_changes(op.client(), &target.name, "creating connectors")?;
    }
    let live = op.client().list_connectors().map_err(|e| {
        Error::client(
            format!("cluster `{}`: listing its connectors", target.name),
            e,
        )
    })?;
    let creates = creates(wants, req, &live)?;
    // A cluster read from its topics changes its connectors through the service's own tools.
    let route = crate::error::ResetRoute::of(&op.client().capabilities());
    let input = Input {
        cluster: &target.name,
        topic: &topic,
        live: &live,
        prune: req.plan.prune,
        route,
        plan_refused: args.dry_run,
        recreates: op
            .client()
            .steps(crate::client::ChangeKind::Patch)
            .contains(&crate::client::Op::DeleteKeeping),
    };
    let plan = match through_kafka::plan(&kafka, &input, wants.wants()) {
        Ok(plan) => plan,
        Err(PlanError::Kafka(source)) => {
            return Err(Error::Kafka {
                context: format!(
                    "cluster `{}`: reading offsets topic `{topic}` and the sinks' groups",
                    target.name
                ),
                source,
            })
        }
        Err(PlanError::Refused {
            refusals,
            plan: Some(plan),
        }) => {
            let error = Error::NotWritable {
                cluster: target.name.clone(),
                route,
                reasons: Vec::new(),
            };
            let closing = format!(
                "cluster `{}`: {} cannot take offsets through Kafka now (see the plan); nothing was written",
                target.name,
                words::count(refused_names(&refusals), "connector")
            );
            return Ok(refused_dry_run(
                ctx, &plan, &refusals, &live, &error, closing,
            ));
        }
        Err(PlanError::Refused {
            refusals,
            plan: None,
        }) => {
            return Err(Error::NotWritable {
                cluster: target.name.clone(),
                route,
                reasons: refusals.into_iter().map(|r| r.message).collect(),
            })
        }
    };
    let found = through_kafka::refusals(&plan, &req.refuse);
    if !found.is_empty() && args.dry_run {
        // The plan shown all the same, each refusal under its connector.
        let refusals: Vec<Refusal> = found
            .iter()
            .map(|r| Refusal {
                name: r.connector.clone(),
                message: format!(
                    "{}: [{}] {} (--fail-on)",
                    words::partition(&r.partition),
                    r.risk.code.label(),
                    r.risk.message
                ),
            })
            .collect();
        let closing = format!(
            "refused by --fail-on: {} at risk (see the plan); nothing was changed",
            words::count(found.len(), "partition")
        );
        let error = super::change::refused(&found);
        return Ok(refused_dry_run(
            ctx, &plan, &refusals, &live, &error, closing,
        ));
    }
    if !found.is_empty() {
        return Err(super::change::refused(&found));
    }
    let code = super::orphaned::run(ctx, target, &kafka, args, req.verb, op, &plan)?;
    if code != EXIT_OK || args.dry_run || creates.is_empty() {
        if args.dry_run && !creates.is_empty() {
            let names: Vec<&str> = creates.iter().map(|(n, _)| n.as_str()).collect();
            ctx.printer.status(&format!(
                "Then created from their files' configs, RUNNING: {}",
                names.join(", ")
            ));
        }
        return Ok(code);
    }
    for (name, config) in &creates {
        op.client().create(name, config, None).map_err(|e| {
            Error::client(
                format!(
                    "cluster `{}`: creating `{name}` (its offsets are written: create it yourself, or run this again)",
                    target.name
                ),
                e,
            )
        })?;
        ctx.printer.line(&format!(
            "Created `{name}` on cluster `{}` from its file's config: it starts from the offsets written.",
            target.name
        ));
    }
    Ok(EXIT_OK)
}

/// A dry run's plan with connectors refused: `--output json`'s document.
#[derive(serde::Serialize)]
struct RefusedDocument<'a> {
    plan: &'a TopicPlan,
    dry_run: bool,
    refused: &'a [Refusal],
}

/// How many connectors `refusals` name.
fn refused_names(refusals: &[Refusal]) -> usize {
    let names: BTreeSet<&str> = refusals.iter().map(|r| r.name.as_str()).collect();
    names.len()
}

/// A dry run whose plan has connectors that cannot be written now: the plan shown all the same
/// (what each would be written once deleted), each refused connector with why and what to do,
/// then `closing` with `error`'s hint (exit 1, `error`'s code, as the run without `--dry-run`
/// is refused).
fn refused_dry_run(
    ctx: &Context,
    plan: &TopicPlan,
    refusals: &[Refusal],
    live: &BTreeMap<String, ConnectorListing>,
    error: &Error,
    closing: String,
) -> u8 {
    let p = &ctx.printer;
    if p.is_structured() {
        p.structured(&RefusedDocument {
            plan,
            dry_run: true,
            refused: refusals,
        });
    } else {
        p.out(&render_refused(plan, refusals, live));
        p.status("Dry run: nothing was changed.");
    }
    let body = ErrorBody {
        message: closing,
        ..ErrorBody::of(error)
    };
    eprint!("{}", error_text(&|s, t| p.paint_err(s, t), &body));
    body.exit_code
}

/// The plan of a dry run with refused connectors: each name, the offsets it would be written
/// (a refused one's as once deleted), and why a refused one is not written now.
fn render_refused(
    plan: &TopicPlan,
    refusals: &[Refusal],
    live: &BTreeMap<String, ConnectorListing>,
) -> String {
    let names: BTreeSet<&str> = plan
        .names
        .iter()
        .map(String::as_str)
        .chain(refusals.iter().map(|r| r.name.as_str()))
        .collect();
    let mut out = format!(
        "Plan for cluster {} (offsets topic `{}`), refused now:\n",
        plan.cluster, plan.topic
    );
    for name in &names {
        let why: Vec<&Refusal> = refusals.iter().filter(|r| r.name == *name).collect();
        let state = live.get(*name).and_then(|l| l.state());
        let what = match (state, why.is_empty()) {
            (Some(ConnectorState::Stopped), _) => "STOPPED".to_string(),
            (Some(s), false) => format!("{s}: refused; planned as once deleted"),
            (Some(s), true) => s.to_string(),
            (None, false) => "no connector of that name: refused".to_string(),
            (None, true) => {
                "no connector of that name: one created under it starts here".to_string()
            }
        };
        out.push_str(&format!("\n  {name}  ({what})\n"));
        for w in plan.writes.iter().filter(|w| w.name == *name) {
            out.push_str(&format!(
                "    {}  {} -> {}\n",
                json_fields(&w.source_partition),
                json_offset(w.from.as_ref()),
                w.to.as_ref()
                    .map_or("(deleted)".into(), |o| json_offset(Some(o)))
            ));
        }
        for w in plan.group_writes.iter().filter(|w| w.name == *name) {
            let at = |o: Option<i64>| o.map_or("(none)".to_string(), |o| o.to_string());
            let to = w.to.map_or("(deleted)".into(), |o| o.to_string());
            out.push_str(&format!(
                "    {}-{} (group `{}`)  {} -> {to}\n",
                w.topic,
                w.partition,
                w.group,
                at(w.from)
            ));
        }
        for r in why {
            out.push_str(&format!("    refused: {}\n", r.message));
        }
    }
    out.push_str(&format!(
        "\n{} refused; {} of {} planned.\n",
        words::count(
            names
                .iter()
                .filter(|n| refusals.iter().any(|r| r.name == **n))
                .count(),
            "connector"
        ),
        words::count(plan.writes.len() + plan.group_writes.len(), "offset"),
        words::count(plan.names.len(), "connector name")
    ));
    out
}

/// A source partition (a JSON object) as the plans show one.
fn json_fields(p: &serde_json::Value) -> String {
    match p.as_object() {
        Some(m) => words::partition(&m.clone().into()),
        None => p.to_string(),
    }
}

/// An offset (a JSON object, or none) as the plans show one.
fn json_offset(o: Option<&serde_json::Value>) -> String {
    match o.and_then(serde_json::Value::as_object) {
        Some(m) => words::offset(Some(&m.clone().into())),
        None => words::offset(None),
    }
}

/// With `--create`: each wanted connector that does not exist, with the config to create it
/// from (its file's, secrets resolved). A file without a config is an error naming it.
fn creates(
    wants: &Checked,
    req: &Request,
    live: &std::collections::BTreeMap<String, crate::client::ConnectorListing>,
) -> Result<Vec<(String, std::collections::BTreeMap<String, String>)>> {
    if !req.plan.create {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for w in wants.wants() {
        let Want::File {
            target,
            file,
            config,
            ..
        } = w
        else {
            continue;
        };
        if live.contains_key(target) {
            continue;
        }
        let Some(config) = config else {
            return Err(Error::Usage(format!(
                "{}: the file has no config to create `{target}` from (capture it with `kco snapshot --with-config`)",
                file.path.display()
            )));
        };
        out.push((target.clone(), config.0.clone()));
    }
    Ok(out)
}
