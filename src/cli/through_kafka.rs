//! `kco apply` and `kco reset` on a cluster whose offsets kco reads through Kafka (a worker
//! without the offsets endpoints, `kafka::through`): the plan of writes to the offsets topic
//! and the sinks' groups (`engine::through_kafka`), run through the guarded operation as a
//! reset of leftovers is (`cli::orphaned`), then, with `--create`, the connectors created.

use super::apply_render::Verb;
use super::change::{ChangeArgs, Request};
use super::Context;
use crate::config::ClusterTarget;
use crate::engine::apply::{Checked, Want};
use crate::engine::operation::Operation;
use crate::engine::through_kafka::{self, Input, PlanError};
use crate::error::{Error, Result, EXIT_OK};
use crate::model::TargetState;

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
    let rest_api = op.client().capabilities().changes_connectors();
    let input = Input {
        cluster: &target.name,
        topic: &topic,
        live: &live,
        prune: req.plan.prune,
        rest_api,
    };
    let plan = through_kafka::plan(&kafka, &input, wants.wants()).map_err(|e| match e {
        PlanError::Kafka(source) => Error::Kafka {
            context: format!(
                "cluster `{}`: reading offsets topic `{topic}` and the sinks' groups",
                target.name
            ),
            source,
        },
        PlanError::Refused(r) => Error::NotWritable {
            cluster: target.name.clone(),
            rest_api,
            reasons: r.into_iter().map(|r| r.message).collect(),
        },
    })?;
    let found = through_kafka::refusals(&plan, &req.refuse);
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
