//! Which Connect cluster a worker belongs to, as far as the REST API tells. `GET /` gives the
//! Kafka cluster a worker works on (`kafka_cluster_id`), but no Connect group id. The workers
//! of one Connect cluster share its config and status topics, so they list the same
//! connectors, each run by the same worker (`worker_id` in `GET /connectors?expand=status`);
//! two Connect clusters on one Kafka cluster differ in one or the other (even with a connector
//! of the same name on both: each runs it on one of its own workers). A difference is read
//! again after a second (a connector just created or moved may not have reached every worker
//! yet), and two clusters that both list no connector cannot be told apart this way (a
//! warning says so).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::{ConnectorListing, ServerInfo, Service};

/// Whether a worker is one of a cluster's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Membership {
    /// Same Kafka cluster and the same connectors as the cluster's worker `seen`.
    Belongs,
    /// It could not be told (why): none of the cluster's workers answered, say.
    Unchecked(String),
    /// It is not (why).
    Foreign(String),
}

/// Whether the worker `given` (that said `given_info` at `GET /`) belongs to the cluster
/// `cluster` whose configured workers are `workers` (one client per worker URL, read at once:
/// one `GET /` each; then one `GET /connectors` on `given` and on the first that answered).
pub fn check(
    given: &dyn Service,
    given_info: &ServerInfo,
    cluster: &str,
    workers: &[Box<dyn Service>],
) -> Membership {
    let infos = super::parallel::map(workers, workers.len(), |w| w.server_info());
    let Some((worker, info)) = workers
        .iter()
        .zip(&infos)
        .find_map(|(w, i)| i.as_ref().ok().map(|i| (w, i)))
    else {
        let why = infos
            .iter()
            .find_map(|i| i.as_ref().err())
            .map(|e| e.to_string())
            .unwrap_or_else(|| "it has no worker URL".into());
        return Unchecked(format!(
            "none of cluster `{cluster}`'s workers answers ({why})"
        ));
    };
    let theirs = worker.endpoint();
    if let (Some(a), Some(b)) = (&given_info.kafka_cluster_id, &info.kafka_cluster_id) {
        if a != b {
            return Foreign(format!(
                "it works on Kafka cluster `{a}`, and cluster `{cluster}` ({theirs}) on `{b}`"
            ));
        }
    }
    let sides = [given, &**worker];
    let mut diff = None;
    // A connector created, deleted or moved a moment ago may not have reached every worker
    // of a group yet: a difference is read once more before it counts.
    for pause in [Duration::ZERO, SETTLE] {
        std::thread::sleep(pause);
        let lists = super::parallel::map(&sides, 2, |c| c.list_connectors());
        match (&lists[0], &lists[1]) {
            (Ok(a), Ok(b)) if a.is_empty() && b.is_empty() => {
                return Unchecked(format!(
                    "neither it nor cluster `{cluster}` ({theirs}) has a connector, so their Connect groups cannot be told apart"
                ))
            }
            (Ok(a), Ok(b)) => match other_connectors(&identity(a), &identity(b)) {
                None => return Membership::Belongs,
                Some(d) => diff = Some(d),
            },
            (Err(e), _) | (_, Err(e)) => {
                return Unchecked(format!("cannot list connectors: {e}"))
            }
        }
    }
    Foreign(format!(
        "it is on the same Kafka cluster but in another Connect group than cluster `{cluster}` ({theirs}): {}",
        diff.unwrap_or_default()
    ))
}

/// How long a difference between two workers' connectors is given to settle.
const SETTLE: Duration = Duration::from_secs(1);

use Membership::{Foreign, Unchecked};

/// What identifies a Connect group over REST: its connectors, each with the worker that
/// runs it.
pub type Identity = BTreeMap<String, Option<String>>;

/// The identity of a listing (`GET /connectors?expand=status`).
pub fn identity(listing: &BTreeMap<String, ConnectorListing>) -> Identity {
    listing
        .iter()
        .map(|(name, l)| {
            let worker = l.status.as_ref().and_then(|s| s.worker_id.clone());
            (name.clone(), worker)
        })
        .collect()
}

/// How two workers' connectors differ (`None`: the same connectors on the same workers),
/// naming a few.
pub fn other_connectors(given: &Identity, theirs: &Identity) -> Option<String> {
    if given == theirs {
        return None;
    }
    let few = |s: Vec<String>| {
        let n = s.len();
        let mut names: Vec<String> = s.into_iter().take(3).collect();
        if n > 3 {
            names.push(format!("{} more", n - 3));
        }
        names.join(", ")
    };
    let only = |a: &Identity, b: &Identity| -> Vec<String> {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .map(|k| format!("`{k}`"))
            .collect()
    };
    let moved: Vec<String> = given
        .iter()
        .filter_map(|(k, w)| match theirs.get(k) {
            Some(v) if v != w => Some(format!(
                "`{k}` (run by {} there, by {} in the cluster)",
                w.as_deref().unwrap_or("no worker"),
                v.as_deref().unwrap_or("no worker")
            )),
            _ => None,
        })
        .collect();
    let mut parts = Vec::new();
    let (mine, yours) = (only(given, theirs), only(theirs, given));
    if !mine.is_empty() {
        parts.push(format!("only it lists {}", few(mine)));
    }
    if !yours.is_empty() {
        parts.push(format!("only the cluster lists {}", few(yours)));
    }
    if !moved.is_empty() {
        parts.push(format!("other workers run {}", few(moved)));
    }
    Some(parts.join("; "))
}

/// Whether two worker URLs name the same worker (trailing slashes aside).
pub fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{FakeConnect, State};

    fn ids(n: &[(&str, &str)]) -> Identity {
        n.iter()
            .map(|(c, w)| (c.to_string(), Some(w.to_string())))
            .collect()
    }

    #[test]
    fn the_same_connectors_on_the_same_workers_are_one_group() {
        let a = ids(&[("a", "w1:8083"), ("b", "w2:8083")]);
        assert_eq!(other_connectors(&a, &a.clone()), None);
        assert_eq!(
            other_connectors(
                &ids(&[("a", "w1:8083"), ("x", "w1:8083")]),
                &ids(&[("a", "w9:8083"), ("p", "w"), ("q", "w"), ("r", "w"), ("s", "w")])
            )
            .unwrap(),
            "only it lists `x`; only the cluster lists `p`, `q`, `r`, 1 more; other workers run `a` (run by w1:8083 there, by w9:8083 in the cluster)"
        );
    }

    fn fake(kafka: &str, connectors: &[&str]) -> FakeConnect {
        let mut b = FakeConnect::builder().kafka_cluster_id(kafka);
        for c in connectors {
            b = b.source(
                c,
                "org.example.Source",
                State::Running,
                serde_json::json!([]),
            );
        }
        b.in_process()
    }

    fn run(given: &FakeConnect, workers: &[&FakeConnect]) -> Membership {
        let g = given.client();
        let info = g.server_info().unwrap();
        let ws: Vec<_> = workers.iter().map(|w| w.client()).collect();
        check(&g, &info, "a", &ws)
    }

    #[test]
    fn a_worker_of_another_kafka_cluster_or_connect_group_is_foreign() {
        let a = fake("k1", &["s1", "s2"]);
        let a2 = fake("k1", &["s2", "s1"]);
        let b = fake("k1", &["t1"]);
        let other_kafka = fake("k2", &["s1", "s2"]);
        assert_eq!(run(&a2, &[&a]), Membership::Belongs);
        match run(&b, &[&a]) {
            Foreign(why) => assert!(
                why.contains("another Connect group") && why.contains("only it lists `t1`"),
                "{why}"
            ),
            m => panic!("{m:?}"),
        }
        match run(&other_kafka, &[&a]) {
            Foreign(why) => assert!(why.contains("Kafka cluster `k2`"), "{why}"),
            m => panic!("{m:?}"),
        }
    }
}
