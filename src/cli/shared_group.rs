//! The guard in front of every change of a sink: another Connect cluster of kco.yaml, on the
//! same Kafka cluster, with a sink that uses the same consumer group (`engine::shared_group`)
//! refuses the change, unless `--allow-shared-group` names the sink; the plan then warns.

use super::Context;
use crate::client::Connect;
use crate::config::ClusterTarget;
use crate::engine::apply::ApplyPlan;
use crate::engine::membership::same_url;
use crate::engine::shared_group::{self, Neighbour};
use crate::error::{Error, Result};

/// Looks at the other clusters when `plan` changes a sink; refuses a shared group that
/// `allow` does not name, and adds a warning to the plan for one it names. A cluster that
/// cannot be looked at is a warning.
pub(super) fn guard(
    ctx: &Context,
    target: &ClusterTarget,
    client: &Connect,
    plan: &mut ApplyPlan,
    allow: &[String],
) -> Result<()> {
    let env = |k: &str| std::env::var(k).ok();
    let mut others = Vec::new();
    for name in ctx.config.cluster_names() {
        if name == target.name {
            continue;
        }
        let other = match ctx.config.resolve(Some(&name), None, &env) {
            Ok(t) => t,
            Err(e) => {
                ctx.printer.warn(&format!(
                    "cannot look for sinks sharing a consumer group on cluster `{name}`: {e}"
                ));
                continue;
            }
        };
        // The same workers: the same Connect cluster under another name.
        let shares_workers = other
            .http
            .urls
            .iter()
            .any(|u| target.http.urls.iter().any(|t| same_url(t, u)));
        if !shares_workers {
            others.push(Neighbour {
                cluster: name,
                client: ctx.client_once(&other)?,
            });
        }
    }
    let found = shared_group::find(plan, client, &others);
    for (cluster, why) in &found.unchecked {
        ctx.printer.warn(&format!(
            "cannot look for sinks sharing a consumer group on cluster `{cluster}`: {why}"
        ));
    }
    let (allowed, refused): (Vec<_>, Vec<_>) = found
        .shared
        .into_iter()
        .partition(|s| allow.contains(&s.connector));
    if !refused.is_empty() {
        let mut names: Vec<&str> = refused.iter().map(|s| s.connector.as_str()).collect();
        names.dedup();
        return Err(Error::SharedGroup {
            cluster: target.name.clone(),
            shared: refused
                .iter()
                .map(|s| {
                    format!(
                        "`{}` on cluster `{}` and `{}` on cluster `{}`: consumer group `{}`",
                        s.connector, target.name, s.other_connector, s.other_cluster, s.group
                    )
                })
                .collect(),
            allow: names
                .iter()
                .map(|n| format!("--allow-shared-group {n}"))
                .collect::<Vec<_>>()
                .join(" "),
        });
    }
    for s in allowed {
        if let Some(c) = plan.connectors.iter_mut().find(|c| c.name == s.connector) {
            c.warnings.push(format!(
                "consumer group `{}` is also the group of sink `{}` on cluster `{}` (the same Kafka cluster): its offsets change too (--allow-shared-group)",
                s.group, s.other_connector, s.other_cluster
            ));
        }
    }
    Ok(())
}
