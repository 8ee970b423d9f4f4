//! Confluent Cloud's managed connectors: no `GET /` to ask, so the command's first request,
//! the listing, proves the service reachable and the credentials good; its refusals name the
//! API key (never the secret) and an endpoint that does not answer fails at once.

use super::{http, layered, Kind, Wiring};
use crate::client::layers::{RetryPolicy, ServiceHints};
use crate::client::{service_for, Auth, Backend, Connect, Service};
use crate::config::ClusterTarget;
use crate::error::Result;

pub(super) const KIND: Kind = Kind {
    serves: |b| matches!(b, Backend::ConfluentCloud(_)),
    // A Confluent Cloud cluster takes no `tls.insecureSkipVerify` (kco.yaml refuses it).
    connect: |w, target, _| build(w, target, RetryPolicy::default()),
    once: |w, target| build(w, target, RetryPolicy::none()),
};

fn build(w: &Wiring, target: &ClusterTarget, policy: RetryPolicy) -> Result<Box<dyn Service>> {
    let http = http(target)?;
    let (refused, unreachable) = words(target, &w.file);
    let hinted = ServiceHints::new(http, refused, unreachable);
    let client = Connect::new(layered(w, hinted, policy).unreachable_fails_first());
    Ok(service_for(client, &target.backend))
}

/// What a refusal of `target`'s credentials means, naming the keys of `file` and the
/// environment variables to check (the API key named, never the secret), and what an
/// endpoint that does not answer means.
fn words(target: &ClusterTarget, file: &str) -> (String, String) {
    let key = match &target.http.auth {
        Some(Auth::Basic { username, .. }) => format!("API key `{username}`"),
        _ => "the credentials".to_string(),
    };
    let service = target.backend.service();
    let cluster = &target.name;
    let from = match target.credential_vars.as_slice() {
        [] => String::new(),
        vars => format!(
            " (set from {})",
            vars.iter()
                .map(|v| format!("${v}"))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    };
    (
        format!(
            "{service} refused {key} of cluster `{cluster}`: check `confluentCloud.apiKey` and `apiSecret` in {file}{from}; they must be a Cloud API key (`confluent api-key create --resource cloud`), not a Kafka cluster's API key, and the key's account needs access to the environment's connectors"
        ),
        format!(
            "{service} does not answer at the endpoint of cluster `{cluster}`: check `confluentCloud.endpoint` in {file} (default https://api.confluent.cloud) and the network path to it"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{CloudIds, HttpOptions, Secret, TlsOptions};

    #[test]
    fn a_refusal_names_the_key_and_its_variables_never_the_secret() {
        let target = ClusterTarget {
            name: "prod".into(),
            http: HttpOptions {
                auth: Some(Auth::Basic {
                    username: "KEY1".into(),
                    password: Secret::new("s3cr3t"),
                }),
                urls: vec!["https://api.confluent.cloud".into()],
                headers: Default::default(),
                timeout: std::time::Duration::from_secs(30),
                tls: TlsOptions::default(),
            },
            backend: Backend::ConfluentCloud(CloudIds {
                environment: "env-abc123".into(),
                kafka_cluster: "lkc-xyz789".into(),
            }),
            credential_vars: vec!["CC_KEY".into(), "CC_SECRET".into()],
        };
        let (refused, unreachable) = words(&target, "conf/kco.yaml");
        assert!(
            refused.starts_with("Confluent Cloud refused API key `KEY1` of cluster `prod`")
                && refused.contains(
                    "`confluentCloud.apiKey` and `apiSecret` in conf/kco.yaml (set from $CC_KEY and $CC_SECRET)"
                )
                && !refused.contains("s3cr3t"),
            "{refused}"
        );
        assert!(
            unreachable.contains("`confluentCloud.endpoint` in conf/kco.yaml"),
            "{unreachable}"
        );
    }
}
