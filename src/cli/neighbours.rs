//! The other clusters of kco.yaml, resolved for the engine's look for sinks sharing a
//! consumer group (`engine::shared_group`), which stands in front of every change of a sink.

use super::Context;
use crate::config::ClusterTarget;
use crate::engine::membership::same_url;
use crate::engine::neighbours::Neighbour;
use crate::error::Result;

/// Every other cluster of kco.yaml that is not `target`'s workers under another name, with a
/// client. A cluster that cannot be resolved is a warning, and is not looked at.
pub(super) fn neighbours(ctx: &Context, target: &ClusterTarget) -> Result<Vec<Neighbour>> {
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
    Ok(others)
}
