//! Kafka Connect's REST API: `GET /` at first contact, so that a wrong port or a URL that is
//! not Connect fails at once; a worker given by `--url` checked to belong to the cluster
//! kco.yaml configures; and a worker without the offsets endpoints (before 3.5) read through
//! Kafka when kco.yaml gives its cluster `kafka:` and `connectTopics.offsets`.

use super::{http, stack, warn_insecure, Kind, Wiring};
use crate::client::layers::RetryPolicy;
use crate::client::{Backend, ConnectVersion, ServerInfo, Service};
use crate::config::ClusterTarget;
use crate::engine::membership::{self, same_url, Membership};
use crate::error::{Error, Result};
use crate::kafka::through::ThroughKafka;

pub(super) const KIND: Kind = Kind {
    serves: |b| matches!(b, Backend::Connect),
    connect: build,
    once: |w, target| Ok(Box::new(stack(w, http(target)?, RetryPolicy::none()))),
};

/// For a first contact that found no Kafka Connect: a worker URL with a path
/// (`http://host:8083/connectors`), where Connect's REST API is at the root, and the URL to
/// give instead (credentials left out).
fn path_hint(urls: &[String]) -> Option<String> {
    urls.iter().find_map(|raw| {
        let mut u = url::Url::parse(raw).ok()?;
        let path = u.path().to_string();
        if path == "/" || path.is_empty() {
            return None;
        }
        let _ = u.set_username("");
        let _ = u.set_password(None);
        u.set_path("");
        u.set_query(None);
        let root = u.as_str().trim_end_matches('/').to_string();
        Some(format!(
            "the worker URL `{}` has the path `{path}`: Connect's REST API is at the root of its port; give `{root}` (a path only where a proxy serves Connect under one)",
            crate::client::redact_url(raw)
        ))
    })
}

fn build(w: &Wiring, target: &ClusterTarget, listing: bool) -> Result<Box<dyn Service>> {
    warn_insecure(w, target);
    let http = http(target)?;
    let once = stack(w, http.clone(), RetryPolicy::none());
    let client = stack(w, http.clone(), RetryPolicy::default());
    let client = match listing {
        true => client.with_listing_ahead(stack(w, http.clone(), RetryPolicy::none())),
        false => client,
    };
    match once.server_info() {
        // Nothing listens, what listens never answers, or it does not speak HTTP (a Kafka
        // broker's port): waiting out the retry deadline would not change that, and nothing
        // else is asked of the cluster.
        Err(e) if e.is_unreachable() || e.is_silent() || e.is_not_http() => {
            Err(Error::client(unreachable(w, target, &e), e))
        }
        Err(mut e) if e.is_auth_refused() || e.is_not_connect() => {
            if e.is_not_connect() {
                if let Some(hint) = path_hint(&target.http.urls) {
                    e.hint = Some(Box::new(hint));
                }
            }
            Err(Error::client(naming_kco_url(w, e.first_contact()), e))
        }
        Ok(info) => {
            check_given_url(w, target, &once, &info)?;
            let through = through_kafka(w, target, &info)?;
            let service: Box<dyn Service> = Box::new(client.with_first_info(info));
            Ok(match through {
                Some((kafka, topic)) => Box::new(
                    ThroughKafka::new(service, kafka, topic)
                        .recreating(w.config.recreates(&target.name)),
                ),
                None => service,
            })
        }
        Err(_) => Ok(Box::new(client)),
    }
}

/// Where `target`'s offsets are read through Kafka: a worker without the offsets endpoints
/// (before 3.5, by `GET /`'s version) whose cluster kco.yaml gives `kafka:` and
/// `connectTopics.offsets`.
fn through_kafka(
    w: &Wiring,
    target: &ClusterTarget,
    info: &ServerInfo,
) -> Result<Option<(crate::kafka::KafkaOptions, String)>> {
    let old =
        ConnectVersion::parse(&info.version).is_some_and(|v| v < ConnectVersion::OFFSETS_READ);
    let Some(topic) = w.config.offsets_topic(&target.name).filter(|_| old) else {
        return Ok(None);
    };
    let env = |k: &str| std::env::var(k).ok();
    let kafka = w.config.dr_settings(&target.name, &env)?.kafka;
    Ok(kafka.map(|k| (k, topic.to_string())))
}

/// `what` went wrong with the URL, naming KCO_URL when that is where it came from.
fn naming_kco_url(w: &Wiring, what: &str) -> String {
    match (w.given_url, w.sources.url) {
        (Some(_), "KCO_URL") => format!("{what} (the URL from KCO_URL)"),
        _ => what.to_string(),
    }
}

/// A worker given with `--url` (or KCO_URL) for a cluster that kco.yaml configures must be
/// one of that cluster's: the same Kafka cluster and the same Connect group
/// (`engine::membership`). A URL kco.yaml lists for the cluster passes at once; otherwise
/// each configured worker is asked `GET /` (at once), and one of them and the given worker
/// `GET /connectors`. When none answers, a warning says the check was not made.
fn check_given_url(
    w: &Wiring,
    target: &ClusterTarget,
    given: &dyn Service,
    info: &ServerInfo,
) -> Result<()> {
    if w.given_url.is_none() {
        return Ok(());
    }
    let env = |k: &str| std::env::var(k).ok();
    let Ok(configured) = w.config.resolve(Some(&target.name), None, &env) else {
        return Ok(());
    };
    let listed = |u: &String| configured.http.urls.iter().any(|c| same_url(c, u));
    if target.http.urls.iter().any(listed) {
        return Ok(());
    }
    let mut workers = Vec::new();
    for u in &configured.http.urls {
        let mut one = configured.clone();
        one.http.urls = vec![u.clone()];
        workers.push(super::connect_once(w, &one)?);
    }
    let url = given.endpoint();
    let origin = w.sources.url;
    match membership::check(given, info, &target.name, &workers) {
        Membership::Belongs => Ok(()),
        Membership::Unchecked(why) => {
            (w.warn)(&format!(
                "cannot check that {url} ({origin}) is a worker of cluster `{}`: {why}",
                target.name
            ));
            Ok(())
        }
        Membership::Foreign(why) => Err(Error::WorkerOfOtherCluster {
            url,
            origin: origin.into(),
            cluster: target.name.clone(),
            why,
        }),
    }
}

/// `cannot reach Kafka Connect of cluster `a` (tried URL, URL)`, and whether the cluster was
/// the default one (no --cluster, no --url): in a DR the default often points at the lost
/// region.
fn unreachable(w: &Wiring, target: &ClusterTarget, e: &crate::client::ClientError) -> String {
    let urls: Vec<String> = target
        .http
        .urls
        .iter()
        .map(|u| match (u.find("://"), u.find('@')) {
            (Some(s), Some(a)) if a > s => format!("{}{}", &u[..s + 3], &u[a + 1..]),
            _ => u.clone(),
        })
        .collect();
    let default = if w.default_cluster.as_deref() == Some(target.name.as_str()) {
        format!(
            "; `{}` is the default cluster (no --cluster given): name another with --cluster",
            target.name
        )
    } else {
        String::new()
    };
    let from = match (w.given_url, w.sources.url) {
        (Some(_), "KCO_URL") => ", the URL from KCO_URL",
        _ => "",
    };
    format!(
        "{} of cluster `{}` (tried {}{from}{default})",
        e.first_contact(),
        target.name,
        urls.join(", ")
    )
}
