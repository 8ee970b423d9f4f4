//! A cluster's `confluentCloud:`: Confluent Cloud's managed connectors of one Kafka cluster,
//! reached at the service's endpoint with a Cloud API key (HTTP Basic, `key:secret`).
//!
//! It becomes the same [`HttpOptions`] as a Connect cluster (the URL is the endpoint followed
//! by the backend's base path) and the [`Backend`] the client speaks to.

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::{RawCloud, RawCluster};
use super::{interpolate, Auth, Config, ConfigError, Secret, DEFAULT_TIMEOUT_SECS};
use crate::client::{Backend, CloudIds, HttpOptions, TlsOptions};

/// Confluent Cloud's API endpoint, when `endpoint:` is not set.
pub const DEFAULT_CLOUD_ENDPOINT: &str = "https://api.confluent.cloud";

/// Keys of a cluster that a `confluentCloud:` cluster refuses, and why.
const REFUSED: &[(&str, &str)] = &[
    ("url", "the service's address is `confluentCloud.endpoint` (default https://api.confluent.cloud)"),
    ("urls", "the service's address is `confluentCloud.endpoint` (default https://api.confluent.cloud)"),
    ("auth", "the credentials are `confluentCloud.apiKey` and `apiSecret` (a Cloud API key)"),
    ("kafka", "kco reads MirrorMaker 2 checkpoints (`apply --translate`) for self-managed Connect clusters only"),
    ("connectTopics", "Confluent Cloud keeps its managed connectors' offsets in the service, not in a topic kco can read"),
    ("mirrors", "kco translates offsets across Kafka clusters (`apply --translate`) for self-managed Connect clusters only"),
];

impl Config {
    /// Whether cluster `name` is a `confluentCloud:` cluster of this file.
    pub fn is_cloud(&self, name: &str) -> bool {
        self.raw
            .clusters
            .get(name)
            .is_some_and(|c| c.confluent_cloud.is_some())
    }

    /// `confluentCloud.maxObservedAgeSeconds` of cluster `name`, when set.
    pub fn max_observed_age(&self, name: &str) -> Option<Duration> {
        let cloud = self.raw.clusters.get(name)?.confluent_cloud.as_ref()?;
        cloud.max_observed_age_seconds.map(Duration::from_secs)
    }

    /// The line of `key:` inside cluster `name`'s block (else anywhere, as [`Config::err`]).
    pub(super) fn err_in(&self, cluster: &str, key: &str, message: String) -> ConfigError {
        let mut e = self.err(key, message);
        let text = self
            .path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok());
        if let Some(text) = text {
            let lines: Vec<&str> = text.lines().collect();
            let start = lines.iter().position(|l| {
                let t = l.trim_start();
                t.starts_with(&format!("{cluster}:")) && l.len() > t.len()
            });
            if let Some(start) = start {
                let indent = lines[start].len() - lines[start].trim_start().len();
                let found = lines[start + 1..]
                    .iter()
                    .take_while(|l| {
                        l.trim().is_empty()
                            || l.trim_start().starts_with('#')
                            || l.len() - l.trim_start().len() > indent
                    })
                    .position(|l| l.trim_start().starts_with(&format!("{key}:")));
                e.line = Some(match found {
                    Some(i) => start + 2 + i,
                    None => start + 1,
                });
            }
        }
        e
    }

    /// A `confluentCloud:` cluster: its HTTP options and backend.
    pub(super) fn cloud_options(
        &self,
        name: &str,
        raw: &RawCluster,
        cloud: &RawCloud,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(HttpOptions, Backend), ConfigError> {
        for (key, why) in REFUSED {
            let set = match *key {
                "url" => raw.url.is_some(),
                "urls" => !raw.urls.is_empty(),
                "auth" => raw.auth.is_some(),
                "kafka" => raw.kafka.is_some(),
                "connectTopics" => raw.connect_topics.is_some(),
                _ => !raw.mirrors.is_empty(),
            };
            if set {
                let mut e = self.err_in(
                    name,
                    key,
                    format!(
                        "cluster `{name}` is a Confluent Cloud cluster (`confluentCloud:`), which takes no `{key}:`: {why}"
                    ),
                );
                e.hint = Some(format!("remove `{key}:` from cluster `{name}`"));
                return Err(e);
            }
        }
        let interp = |key: &str, v: &str| -> Result<String, ConfigError> {
            let value = interpolate(v, env).map_err(|var| {
                self.err_in(
                    name,
                    key,
                    format!(
                        "cluster `{name}`: `confluentCloud.{key}` references ${{env:{var}}}, which is not set"
                    ),
                )
            })?;
            if value.trim().is_empty() {
                return Err(self.err_in(
                    name,
                    key,
                    format!("cluster `{name}`: `confluentCloud.{key}` is empty"),
                ));
            }
            Ok(value.trim().to_string())
        };
        let environment = interp("environment", &cloud.environment)?;
        let kafka_cluster = interp("kafkaCluster", &cloud.kafka_cluster)?;
        for (key, value, prefix, what) in [
            ("environment", &environment, "env-", "an environment id"),
            ("kafkaCluster", &kafka_cluster, "lkc-", "a Kafka cluster id"),
        ] {
            let id_chars = value
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_');
            if !value.starts_with(prefix) || !id_chars {
                let mut e = self.err_in(
                    name,
                    key,
                    format!(
                        "cluster `{name}`: `confluentCloud.{key}: {value}` is not {what} (`{prefix}...`)"
                    ),
                );
                e.hint = Some(
                    "`confluent environment list` and `confluent kafka cluster list` show the ids"
                        .into(),
                );
                return Err(e);
            }
        }
        let api_key = interp("apiKey", &cloud.api_key)?;
        let api_secret = interp("apiSecret", &cloud.api_secret)?;
        let endpoint = match &cloud.endpoint {
            Some(e) => interp("endpoint", e)?,
            None => DEFAULT_CLOUD_ENDPOINT.to_string(),
        };
        let endpoint = check_endpoint(&endpoint).map_err(|why| {
            self.err_in(
                name,
                "endpoint",
                format!(
                    "cluster `{name}`: `confluentCloud.endpoint: {}` {why}",
                    crate::client::redact_url(&endpoint)
                ),
            )
        })?;
        let backend = Backend::ConfluentCloud(CloudIds {
            environment,
            kafka_cluster,
        });
        let mut headers = BTreeMap::new();
        for (k, v) in &raw.headers {
            let v = interpolate(v, env).map_err(|var| {
                self.err_in(
                    name,
                    k,
                    format!("cluster `{name}`: `{k}` references ${{env:{var}}}, which is not set"),
                )
            })?;
            headers.insert(k.clone(), Secret::new(v));
        }
        let mut tls = TlsOptions::default();
        if let Some(t) = &raw.tls {
            if let Some(f) = &t.ca_file {
                tls.ca_pem = Some(self.read_pem(&format!("cluster `{name}`"), "caFile", f)?);
            }
            if t.cert_file.is_some() || t.key_file.is_some() || t.insecure_skip_verify {
                return Err(self.err_in(
                    name,
                    "tls",
                    format!(
                        "cluster `{name}`: a Confluent Cloud cluster's `tls:` takes `caFile` only (the service wants no client certificate, and its certificate is always checked)"
                    ),
                ));
            }
        }
        let http = HttpOptions {
            urls: vec![format!("{endpoint}{}", backend.base_path())],
            auth: Some(Auth::Basic {
                username: api_key,
                password: Secret::new(api_secret),
            }),
            headers,
            timeout: Duration::from_secs(raw.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECS)),
            tls,
        };
        Ok((http, backend))
    }
}

/// The endpoint without a trailing slash, or why it cannot be one: HTTPS, or plain HTTP to a
/// loopback address only (a local stand-in of the service); no path, query or credentials.
fn check_endpoint(raw: &str) -> Result<String, String> {
    let url = url::Url::parse(raw)
        .map_err(|e| format!("is not a URL ({e}); the default is {DEFAULT_CLOUD_ENDPOINT}"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("holds credentials: they go in `apiKey` and `apiSecret`, not the URL".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("takes no query or fragment".into());
    }
    let loopback = super::loopback(&url).ok_or("has no host")?;
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(
                "is plain HTTP: Confluent Cloud is reached over https:// (http:// only for a loopback address, a local stand-in of the service)"
                    .into(),
            )
        }
        other => return Err(format!("has the scheme `{other}`: use https://")),
    }
    Ok(raw.trim().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const CLOUD: &str = "clusters:
  self:
    urls: [http://h1:8083]
  cloud-prod:
    confluentCloud:
      environment: env-abc123
      kafkaCluster: lkc-xyz789
      apiKey: ${env:CC_KEY}
      apiSecret: ${env:CC_SECRET}
";

    fn env(k: &str) -> Option<String> {
        match k {
            "CC_KEY" => Some("ABCDKEY".into()),
            "CC_SECRET" => Some("s3cr3t/+x".into()),
            _ => None,
        }
    }

    fn load(text: &str) -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("kco.yaml");
        std::fs::write(&p, text).unwrap();
        let c = Config::load(&p).unwrap();
        (dir, c)
    }

    #[test]
    fn a_cloud_cluster_is_its_endpoint_and_base_path_with_the_api_key_as_basic_auth() {
        let (_d, c) = load(CLOUD);
        let t = c.resolve(Some("cloud-prod"), None, &env).unwrap();
        assert_eq!(
            t.http.urls,
            ["https://api.confluent.cloud/connect/v1/environments/env-abc123/clusters/lkc-xyz789"]
        );
        let Some(Auth::Basic { username, password }) = &t.http.auth else {
            panic!("{:?}", t.http.auth)
        };
        assert_eq!(
            (username.as_str(), password.expose()),
            ("ABCDKEY", "s3cr3t/+x")
        );
        assert!(t.backend.capabilities().observed_offsets);
        assert_eq!(
            t.credential_vars,
            ["CC_KEY", "CC_SECRET"],
            "for a refusal to name"
        );
        assert!(!format!("{t:?}").contains("s3cr3t"));
        assert!(c.is_cloud("cloud-prod") && !c.is_cloud("self"));
        let selfm = c.resolve(Some("self"), None, &env).unwrap();
        assert_eq!(selfm.backend, Backend::Connect);
    }

    #[test]
    fn plain_http_is_for_a_loopback_endpoint_only() {
        let with =
            |ep: &str| CLOUD.replace("apiSecret:", &format!("endpoint: {ep}\n      apiSecret:"));
        let (_d, c) = load(&with("http://127.0.0.1:9999/"));
        let t = c.resolve(Some("cloud-prod"), None, &env).unwrap();
        assert!(t.http.urls[0].starts_with("http://127.0.0.1:9999/connect/v1/"));
        let (_d, c) = load(&with("http://cloud.example.com"));
        let e = c.resolve(Some("cloud-prod"), None, &env).unwrap_err();
        assert!(e.message.contains("plain HTTP"), "{e}");
        assert_eq!(e.line, Some(9), "{e}");
        let (_d, c) = load(&with("https://me:pw@cloud.example.com"));
        let e = c.resolve(Some("cloud-prod"), None, &env).unwrap_err();
        assert!(
            e.message.contains("holds credentials") && !e.message.contains("pw@"),
            "{e}"
        );
    }

    #[test]
    fn urls_beside_confluent_cloud_and_wrong_ids_are_refused_on_their_line() {
        let both = CLOUD.replace(
            "    confluentCloud:",
            "    urls: [http://x:8083]\n    confluentCloud:",
        );
        let (_d, c) = load(&both);
        let e = c.resolve(Some("cloud-prod"), None, &env).unwrap_err();
        assert!(e.message.contains("takes no `urls:`"), "{e}");
        assert_eq!(e.line, Some(5), "{e}");
        let topics = CLOUD.replace(
            "    confluentCloud:",
            "    connectTopics: {offsets: o}\n    confluentCloud:",
        );
        let (_d, c) = load(&topics);
        let e = c.resolve(Some("cloud-prod"), None, &env).unwrap_err();
        assert!(e.message.contains("takes no `connectTopics:`"), "{e}");
        let swapped = CLOUD
            .replace("env-abc123", "lkc-xyz789x")
            .replace("kafkaCluster: lkc-xyz789\n", "kafkaCluster: env-abc123\n");
        let (_d, c) = load(&swapped);
        let e = c.resolve(Some("cloud-prod"), None, &env).unwrap_err();
        assert!(e.message.contains("is not an environment id"), "{e}");
        assert_eq!(e.line, Some(6), "{e}");
        let e = c
            .resolve(Some("cloud-prod"), None, &|_: &str| None)
            .unwrap_err();
        assert!(
            e.message.contains("CC_KEY") || e.message.contains("environment"),
            "{e}"
        );
    }

    #[test]
    fn an_unset_secret_names_its_variable_and_line() {
        let (_d, c) = load(CLOUD);
        let only_key = |k: &str| (k == "CC_KEY").then(|| "K".to_string());
        let e = c.resolve(Some("cloud-prod"), None, &only_key).unwrap_err();
        assert!(
            e.message.contains("CC_SECRET") && e.message.contains("apiSecret"),
            "{e}"
        );
        assert_eq!(e.line, Some(9), "{e}");
        assert_eq!(e.path, Path::new(&c.path.clone().unwrap()));
    }
}
