//! A cluster's `mskConnect:`: Amazon MSK Connect's connectors of one region, reached through
//! its control plane (SigV4, credentials from AWS's default chain or one profile), their
//! offsets through the Kafka they use: `kafka:` and `connectTopics.offsets`, the topic the
//! connectors' worker configuration pins with `offset.storage.topic` (docs/msk-connect.md).

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::{RawCluster, RawMsk};
use super::{interpolate, Config, ConfigError, DEFAULT_TIMEOUT_SECS};
use crate::client::{Backend, HttpOptions, MskSite, TlsOptions};

/// Keys of a cluster that an `mskConnect:` cluster refuses, and why.
const REFUSED: &[(&str, &str)] = &[
    ("url", "the service's address is `mskConnect.endpoint` (default: the region's)"),
    ("urls", "the service's address is `mskConnect.endpoint` (default: the region's)"),
    ("auth", "the credentials are AWS's (its default chain, or `mskConnect.profile`)"),
    ("tls", "the control plane is reached over HTTPS with the system's roots; Kafka's TLS is `kafka.tls`"),
    ("headers", "requests to the control plane are signed (SigV4), with no headers of kco.yaml"),
    ("confluentCloud", "a cluster is one service"),
];

impl Config {
    /// An `mskConnect:` cluster: its HTTP options (the endpoint, if set) and backend.
    pub(super) fn msk_options(
        &self,
        name: &str,
        raw: &RawCluster,
        msk: &RawMsk,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(HttpOptions, Backend), ConfigError> {
        for (key, why) in REFUSED {
            let set = match *key {
                "url" => raw.url.is_some(),
                "urls" => !raw.urls.is_empty(),
                "auth" => raw.auth.is_some(),
                "tls" => raw.tls.is_some(),
                "headers" => !raw.headers.is_empty(),
                _ => raw.confluent_cloud.is_some(),
            };
            if set {
                let mut e = self.err_in(
                    name,
                    key,
                    format!(
                        "cluster `{name}` is an Amazon MSK Connect cluster (`mskConnect:`), which takes no `{key}:`: {why}"
                    ),
                );
                e.hint = Some(format!("remove `{key}:` from cluster `{name}`"));
                return Err(e);
            }
        }
        let missing_topic = raw
            .connect_topics
            .as_ref()
            .is_none_or(|t| t.offsets.trim().is_empty());
        if raw.kafka.is_none() || missing_topic {
            let mut e = self.err_in(
                name,
                "mskConnect",
                format!(
                    "cluster `{name}` (`mskConnect:`) needs `kafka:` and `connectTopics.offsets`: kco reads and writes its connectors' offsets through the Kafka they use"
                ),
            );
            e.hint = Some(
                "give `kafka: {bootstrap: ..., sasl: {mechanism: AWS_MSK_IAM}}` and `connectTopics: {offsets: <the offset.storage.topic your worker configuration pins>}` (docs/msk-connect.md)".into(),
            );
            return Err(e);
        }
        let interp = |key: &str, v: &Option<String>| -> Result<Option<String>, ConfigError> {
            let Some(v) = v else { return Ok(None) };
            let value = interpolate(v, env).map_err(|var| {
                self.err_in(
                    name,
                    key,
                    format!(
                        "cluster `{name}`: `mskConnect.{key}` references ${{env:{var}}}, which is not set"
                    ),
                )
            })?;
            Ok(Some(value.trim().to_string()).filter(|v| !v.is_empty()))
        };
        let endpoint = interp("endpoint", &msk.endpoint)?;
        if let Some(url) = &endpoint {
            check_endpoint(url).map_err(|why| {
                self.err_in(
                    name,
                    "endpoint",
                    format!(
                        "cluster `{name}`: `mskConnect.endpoint: {}` {why}",
                        crate::client::redact_url(url)
                    ),
                )
            })?;
        }
        let site = MskSite {
            region: interp("region", &msk.region)?,
            profile: interp("profile", &msk.profile)?,
            endpoint: endpoint.clone(),
        };
        let http = HttpOptions {
            urls: endpoint.into_iter().collect(),
            auth: None,
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(raw.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECS)),
            tls: TlsOptions::default(),
        };
        Ok((http, Backend::MskConnect(site)))
    }
}

/// An endpoint is an `https://` URL without credentials, query or fragment (`http://` only
/// for a loopback address: a stand-in of the service).
fn check_endpoint(raw: &str) -> Result<(), String> {
    let url = url::Url::parse(raw).map_err(|e| format!("is not a URL ({e})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("holds credentials: AWS's come from its default chain or `profile:`".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("takes no query or fragment".into());
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => return Err("has no host".into()),
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err("is plain HTTP: MSK Connect is reached over https:// (http:// only for a loopback address, a local stand-in of the service)".into()),
        other => Err(format!("has the scheme `{other}`: use https://")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use crate::client::{Backend, MskSite};

    fn parse(text: &str) -> Config {
        Config::parse(std::path::Path::new("kco.yaml"), text).unwrap()
    }

    #[test]
    fn an_msk_connect_cluster_takes_its_region_profile_and_endpoint() {
        let c = parse("clusters:\n  m:\n    mskConnect: {region: eu-west-1, profile: ops, endpoint: 'http://127.0.0.1:8095'}\n    kafka: {bootstrap: 'b:9098'}\n    connectTopics: {offsets: pinned-offsets}\n");
        let t = c.resolve(Some("m"), None, &|_| None).unwrap();
        assert_eq!(
            t.backend,
            Backend::MskConnect(MskSite {
                region: Some("eu-west-1".into()),
                profile: Some("ops".into()),
                endpoint: Some("http://127.0.0.1:8095".into()),
            })
        );
        assert_eq!(t.http.urls, ["http://127.0.0.1:8095"]);
    }

    #[test]
    fn an_msk_connect_cluster_without_its_kafka_or_pinned_topic_or_with_urls_is_refused() {
        let e = |text: &str| {
            let c = parse(text);
            c.resolve(Some("m"), None, &|_| None)
                .unwrap_err()
                .to_string()
        };
        let no_kafka = e("clusters:\n  m:\n    mskConnect: {region: eu-west-1}\n");
        assert!(
            no_kafka.contains("needs `kafka:` and `connectTopics.offsets`"),
            "{no_kafka}"
        );
        let urls = e("clusters:\n  m:\n    urls: [http://w:8083]\n    mskConnect: {region: eu-west-1}\n    kafka: {bootstrap: 'b:9098'}\n    connectTopics: {offsets: o}\n");
        assert!(urls.contains("takes no `urls:`"), "{urls}");
        let plain = e("clusters:\n  m:\n    mskConnect: {endpoint: 'http://kafkaconnect.example.com'}\n    kafka: {bootstrap: 'b:9098'}\n    connectTopics: {offsets: o}\n");
        assert!(plain.contains("is plain HTTP"), "{plain}");
    }
}
