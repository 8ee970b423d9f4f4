//! A cluster without `urls`: a Kafka Connect cluster without a REST API (AWS MSK Connect),
//! which kco reads from its Kafka: `kafka:` and the workers' three internal topics in
//! `connectTopics:` (`offsets`, `configs`, `status`). Such a cluster is
//! [`Backend::ConnectTopics`], and its HTTP options name no URL.

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::RawCluster;
use super::{Config, ConfigError, DEFAULT_TIMEOUT_SECS};
use crate::client::{Backend, HttpOptions, TlsOptions};
use crate::kafka::connect_topics::InternalTopics;

/// Keys of a cluster that are about its workers' REST API, which a cluster without `urls`
/// does not have.
const REST_ONLY: &[&str] = &["auth", "tls", "headers", "timeoutSeconds"];

/// What a cluster without `urls` needs, for its error: the alternative to `urls`.
const TOPICS_ONLY: &str = "or, for a Connect cluster without a REST API (AWS MSK Connect), `kafka:` and `connectTopics: {offsets, configs, status}`";

impl Config {
    /// Cluster `name`'s three internal topics, when its `connectTopics` names them all.
    pub fn internal_topics(&self, name: &str) -> Option<InternalTopics> {
        let t = self.raw.clusters.get(name)?.connect_topics.as_ref()?;
        let set = |t: &Option<String>| t.clone().filter(|t| !t.trim().is_empty());
        Some(InternalTopics {
            offsets: t.offsets.clone(),
            configs: set(&t.configs)?,
            status: set(&t.status)?,
        })
    }

    /// Cluster `name`, which has no `urls`: read from its Kafka when kco.yaml gives it
    /// `kafka:` and the three topics, else an error naming what it lacks.
    pub(super) fn topics_only_options(
        &self,
        name: &str,
        raw: &RawCluster,
    ) -> Result<(HttpOptions, Backend), ConfigError> {
        let mut missing = Vec::new();
        if raw.kafka.is_none() {
            missing.push("`kafka:`");
        }
        match &raw.connect_topics {
            None => missing.push("`connectTopics:`"),
            Some(t) => {
                let empty = |t: &Option<String>| t.as_deref().is_none_or(|t| t.trim().is_empty());
                if empty(&t.configs) {
                    missing.push("`connectTopics.configs`");
                }
                if empty(&t.status) {
                    missing.push("`connectTopics.status`");
                }
            }
        }
        if !missing.is_empty() {
            let mut e = self.err(
                name,
                format!(
                    "cluster `{name}` has no `urls` ({TOPICS_ONLY}); it lacks {}",
                    and_list(&missing)
                ),
            );
            e.hint = Some(
                "give the cluster its workers' `urls`, or `kafka:` and the workers' `offset.storage.topic`, `config.storage.topic` and `status.storage.topic` as `connectTopics: {offsets: ..., configs: ..., status: ...}` (docs/through-kafka.md)".into(),
            );
            return Err(e);
        }
        for key in REST_ONLY {
            let set = match *key {
                "auth" => raw.auth.is_some(),
                "tls" => raw.tls.is_some(),
                "headers" => !raw.headers.is_empty(),
                _ => raw.timeout_seconds.is_some(),
            };
            if set {
                let mut e = self.err_in(
                    name,
                    key,
                    format!(
                        "cluster `{name}` has no `urls`, so `{key}:`, which is for the workers' REST API, has nothing to apply to: kco reads this cluster from its Kafka"
                    ),
                );
                e.hint = Some(format!(
                    "remove `{key}:` from cluster `{name}`; Kafka's own settings are `kafka.sasl`, `kafka.tls` and `kafka.timeoutSeconds`"
                ));
                return Err(e);
            }
        }
        let http = HttpOptions {
            urls: Vec::new(),
            auth: None,
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            tls: TlsOptions::default(),
        };
        Ok((http, Backend::ConnectTopics))
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
