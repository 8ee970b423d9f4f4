//! The other clusters of kco.yaml, resolved for the engine's looks at what their connectors
//! use on the same Kafka: the sinks' consumer groups (`engine::shared_group`, in front of
//! every change of a sink), and the sources' offsets in a shared offsets topic
//! (`engine::orphaned`, in front of every listing and reset of leftovers).

use super::Context;
use crate::config::ClusterTarget;
use crate::engine::membership::same_url;
use crate::engine::neighbours::Neighbour;
use crate::error::Result;

/// Every other cluster of kco.yaml that is not `target`'s workers under another name, with a
/// client. A cluster that cannot be resolved is a warning, and is not looked at.
pub(super) fn neighbours(ctx: &Context, target: &ClusterTarget) -> Result<Vec<Neighbour>> {
    let (others, unresolved) = looked_at(ctx, target);
    for (name, why) in unresolved {
        ctx.printer.warn(&format!(
            "cannot look at cluster `{name}` of kco.yaml for the consumer groups and offsets its connectors use: {why}"
        ));
    }
    Ok(others)
}

/// [`neighbours`], and the clusters that cannot be resolved (a broken entry of kco.yaml: a
/// missing key, a variable not set, a topic that does not exist), each with why, unsaid: a
/// listing warns of them, a reset refuses.
pub(super) fn looked_at(
    ctx: &Context,
    target: &ClusterTarget,
) -> (Vec<Neighbour>, Vec<(String, String)>) {
    let env = |k: &str| std::env::var(k).ok();
    let mut others = Vec::new();
    let mut unresolved = Vec::new();
    for name in ctx.config.cluster_names() {
        if name == target.name {
            continue;
        }
        let other = match ctx.config.resolve(Some(&name), None, &env) {
            Ok(t) => t,
            Err(e) => {
                unresolved.push((name, e.to_string()));
                continue;
            }
        };
        // The same workers: the same Connect cluster under another name.
        let shares_workers = other
            .http
            .urls
            .iter()
            .any(|u| target.http.urls.iter().any(|t| same_url(t, u)));
        if shares_workers {
            continue;
        }
        match ctx.client_once(&other) {
            Ok(client) => others.push(Neighbour {
                offsets_topic: ctx.config.offsets_topic(&name).map(str::to_string),
                cluster: name,
                client,
            }),
            Err(e) => unresolved.push((name, e.to_string())),
        }
    }
    (others, unresolved)
}
