//! A cluster's `kafka:` (how kco reads its Kafka: bootstrap, SASL, TLS) and `mirrors:` (which
//! clusters' Kafka MirrorMaker 2 mirrors into it), for disaster recovery across Kafka clusters.
//! Secrets follow the rest of kco.yaml: `${env:VAR}`, held in [`Secret`].

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::{RawKafka, RawSasl};
use super::{interpolate, Config, ConfigError, Secret};
use crate::kafka::policy::{MirrorRelation, ReplicationPolicy};
use crate::kafka::{KafkaOptions, KafkaTls, Sasl, SaslMechanism};

/// Default for `kafka.timeoutSeconds`.
pub const DEFAULT_KAFKA_TIMEOUT_SECS: u64 = 15;

/// A cluster's DR settings, resolved.
#[derive(Debug, Clone, Default)]
pub struct DrSettings {
    pub kafka: Option<KafkaOptions>,
    pub mirrors: BTreeMap<String, MirrorRelation>,
    /// Per mirror (the same keys as `mirrors`): the readiness alarm's thresholds it sets.
    pub alarms: BTreeMap<String, MirrorAlarm>,
}

/// A mirror's readiness thresholds in kco.yaml (`maxCheckpointAgeSeconds`, `maxBehind`,
/// `maxMirrorSilenceSeconds`); unset: kco's defaults, or the command's flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MirrorAlarm {
    pub max_checkpoint_age: Option<Duration>,
    pub max_behind: Option<u64>,
    pub max_mirror_silence: Option<Duration>,
}

impl Config {
    /// The workers' offsets topic of cluster `name` (`connectTopics.offsets`), if set.
    pub fn offsets_topic(&self, name: &str) -> Option<&str> {
        let raw = self.raw.clusters.get(name)?;
        Some(raw.connect_topics.as_ref()?.offsets.as_str())
    }

    /// `connectTopics.recreate` of cluster `name`: kco deletes each connector a write through
    /// Kafka changes, keeping its definition in the journal, and creates it again once written.
    pub fn recreates(&self, name: &str) -> bool {
        let topics = self
            .raw
            .clusters
            .get(name)
            .and_then(|c| c.connect_topics.as_ref());
        topics.is_some_and(|t| t.recreate)
    }

    /// `kafka:` and `mirrors:` of cluster `name` (none for an unknown cluster or `--url`
    /// without a configured one).
    pub fn dr_settings(
        &self,
        name: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<DrSettings, ConfigError> {
        let Some(raw) = self.raw.clusters.get(name) else {
            return Ok(DrSettings::default());
        };
        let interp = |key: &str, v: &str| -> Result<String, ConfigError> {
            // The key's full path under `kafka:`, as the user wrote it.
            let path = match key {
                "username" | "password" | "region" | "profile" | "tokenEndpoint" | "clientId"
                | "clientSecret" | "scope" => format!("kafka.sasl.{key}"),
                "caFile" | "certFile" | "keyFile" => format!("kafka.tls.{key}"),
                _ => format!("kafka.{key}"),
            };
            interpolate(v, env).map_err(|var| {
                self.err(
                    key,
                    format!(
                        "cluster `{name}`: `{path}` references ${{env:{var}}}, which is not set"
                    ),
                )
            })
        };
        let kafka = match &raw.kafka {
            None => None,
            Some(k) => Some(self.kafka_options(name, k, &interp, env)?),
        };
        let mut mirrors = BTreeMap::new();
        let mut alarms = BTreeMap::new();
        for (source, m) in &raw.mirrors {
            let policy = match m.policy.as_deref().unwrap_or("default") {
                "default" => ReplicationPolicy::Default {
                    separator: m.separator.clone().unwrap_or_else(|| ".".into()),
                },
                "identity" => ReplicationPolicy::Identity,
                other => {
                    return Err(self.err(
                        "policy",
                        format!("cluster `{name}`: mirror `{source}`: unknown `policy: {other}` (default or identity)"),
                    ))
                }
            };
            if m.alias.trim().is_empty() {
                return Err(self.err(
                    "alias",
                    format!("cluster `{name}`: mirror `{source}` needs `alias` (MirrorMaker 2's `source.cluster.alias`)"),
                ));
            }
            alarms.insert(
                source.clone(),
                MirrorAlarm {
                    max_checkpoint_age: m.max_checkpoint_age_seconds.map(Duration::from_secs),
                    max_behind: m.max_behind,
                    max_mirror_silence: m.max_mirror_silence_seconds.map(Duration::from_secs),
                },
            );
            mirrors.insert(
                source.clone(),
                MirrorRelation {
                    source_cluster: source.clone(),
                    alias: m.alias.clone(),
                    target_alias: Some(m.target_alias.clone().unwrap_or_else(|| name.to_string())),
                    policy,
                    checkpoints_topic: m
                        .checkpoints_topic
                        .clone()
                        .unwrap_or_else(|| MirrorRelation::default_checkpoints_topic(&m.alias)),
                },
            );
        }
        Ok(DrSettings {
            kafka,
            mirrors,
            alarms,
        })
    }

    fn kafka_options(
        &self,
        name: &str,
        k: &RawKafka,
        interp: &dyn Fn(&str, &str) -> Result<String, ConfigError>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<KafkaOptions, ConfigError> {
        let bootstrap: Vec<String> = interp("bootstrap", &k.bootstrap)?
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if bootstrap.is_empty() || bootstrap.iter().any(|b| !b.contains(':')) {
            return Err(self.err(
                "bootstrap",
                format!("cluster `{name}`: `kafka.bootstrap` takes host:port[,host:port...]"),
            ));
        }
        let timeout = Duration::from_secs(k.timeout_seconds.unwrap_or(DEFAULT_KAFKA_TIMEOUT_SECS));
        let sasl = match &k.sasl {
            None => None,
            Some(s) => Some(self.sasl(name, s, interp, env, timeout)?),
        };
        let read = |key: &str, file: &Option<String>| -> Result<Option<Vec<u8>>, ConfigError> {
            match file {
                None => Ok(None),
                Some(f) => self
                    .read_pem(&format!("cluster `{name}`: kafka"), key, &interp(key, f)?)
                    .map(Some),
            }
        };
        let tls = match &k.tls {
            None => None,
            Some(t) => {
                let identity = match (
                    read("certFile", &t.cert_file)?,
                    read("keyFile", &t.key_file)?,
                ) {
                    (Some(c), Some(key)) => {
                        Some((c, Secret::new(String::from_utf8_lossy(&key).into_owned())))
                    }
                    (None, None) => None,
                    _ => {
                        return Err(self.err(
                            "tls",
                            format!(
                            "cluster `{name}`: `kafka.tls`: `certFile` and `keyFile` go together"
                        ),
                        ))
                    }
                };
                Some(KafkaTls {
                    ca_pem: read("caFile", &t.ca_file)?,
                    identity_pem: identity,
                    insecure: t.insecure_skip_verify,
                })
            }
        };
        Ok(KafkaOptions {
            bootstrap,
            sasl,
            tls,
            timeout,
        })
    }

    /// `kafka.sasl`: PLAIN or SCRAM with `username` and `password`; AWS_MSK_IAM with an
    /// optional `region` and `profile` (the region found now: a config error naming the file
    /// when none is); OAUTHBEARER with `tokenEndpoint`, `clientId`, `clientSecret` and an
    /// optional `scope`.
    fn sasl(
        &self,
        name: &str,
        s: &RawSasl,
        interp: &dyn Fn(&str, &str) -> Result<String, ConfigError>,
        env: &dyn Fn(&str) -> Option<String>,
        timeout: Duration,
    ) -> Result<Sasl, ConfigError> {
        let not_for = |key: &str, what: &str| {
            self.err(
                key,
                format!("cluster `{name}`: `kafka.sasl.{key}` is not for `mechanism: {what}`"),
            )
        };
        let oidc_keys = [
            ("tokenEndpoint", &s.token_endpoint),
            ("clientId", &s.client_id),
            ("clientSecret", &s.client_secret),
            ("scope", &s.scope),
        ];
        if s.mechanism.eq_ignore_ascii_case("OAUTHBEARER") {
            for (key, v) in [
                ("username", &s.username),
                ("password", &s.password),
                ("region", &s.region),
                ("profile", &s.profile),
            ] {
                if v.is_some() {
                    return Err(not_for(key, "OAUTHBEARER"));
                }
            }
            let need = |key: &str, v: &Option<String>| -> Result<String, ConfigError> {
                let v = v.as_deref().ok_or_else(|| {
                    self.err(
                        "sasl",
                        format!("cluster `{name}`: `kafka.sasl.mechanism: OAUTHBEARER` needs `kafka.sasl.{key}`"),
                    )
                })?;
                interp(key, v)
            };
            let endpoint = need("tokenEndpoint", &s.token_endpoint)?;
            check_token_endpoint(&endpoint).map_err(|why| {
                self.err(
                    "tokenEndpoint",
                    format!("cluster `{name}`: `kafka.sasl.tokenEndpoint` {why}"),
                )
            })?;
            let scope = match &s.scope {
                Some(v) => Some(interp("scope", v)?),
                None => None,
            };
            return Ok(Sasl::OAuthBearer(std::sync::Arc::new(
                crate::kafka::oidc::Oidc::new(
                    endpoint,
                    need("clientId", &s.client_id)?,
                    Secret::new(need("clientSecret", &s.client_secret)?),
                    scope,
                    timeout,
                ),
            )));
        }
        for (key, v) in oidc_keys {
            if v.is_some() {
                return Err(not_for(key, &s.mechanism));
            }
        }
        if s.mechanism.eq_ignore_ascii_case("AWS_MSK_IAM") {
            if s.username.is_some() {
                return Err(ConfigError {
                    hint: Some("AWS_MSK_IAM takes AWS credentials (the default chain, or `profile:`), no user name or password".into()),
                    ..not_for("username", "AWS_MSK_IAM")
                });
            }
            if s.password.is_some() {
                return Err(not_for("password", "AWS_MSK_IAM"));
            }
            let profile = match &s.profile {
                Some(p) => Some(interp("profile", p)?),
                None => None,
            };
            let entry = match &s.region {
                Some(r) => Some(interp("region", r)?),
                None => None,
            };
            let region = crate::aws::region(entry.as_deref(), profile.as_deref(), env)
                .ok_or_else(|| {
                    let profile = profile
                        .clone()
                        .or_else(|| env("AWS_PROFILE"))
                        .unwrap_or_else(|| "default".into());
                    let e = self.err(
                        "sasl",
                        format!("cluster `{name}`: `kafka.sasl.mechanism: AWS_MSK_IAM` needs a region: none in `kafka.sasl.region`, AWS_REGION, AWS_DEFAULT_REGION or the `region` of profile `{profile}` in the AWS config file"),
                    );
                    let e = match e.line {
                        Some(_) => e,
                        None => self.err("kafka", e.message),
                    };
                    ConfigError {
                        hint: Some("add `region: <the MSK cluster's region>` to `kafka.sasl`, or set AWS_REGION".into()),
                        ..e
                    }
                })?;
            let source = match profile {
                Some(p) => crate::aws::CredentialSource::Profile(p),
                None => crate::aws::CredentialSource::DefaultChain,
            };
            return Ok(Sasl::AwsMskIam(std::sync::Arc::new(
                crate::kafka::msk_iam::MskIam::new(region.name, source),
            )));
        }
        let mechanism = SaslMechanism::parse(&s.mechanism).ok_or_else(|| {
            self.err(
                "mechanism",
                format!(
                    "cluster `{name}`: unknown `kafka.sasl.mechanism: {}` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, AWS_MSK_IAM or OAUTHBEARER)",
                    s.mechanism
                ),
            )
        })?;
        for (key, v) in [("region", &s.region), ("profile", &s.profile)] {
            if v.is_some() {
                return Err(not_for(key, &s.mechanism));
            }
        }
        let need = |key: &str, v: &Option<String>| -> Result<String, ConfigError> {
            v.clone().ok_or_else(|| {
                self.err(
                    "sasl",
                    format!(
                        "cluster `{name}`: `kafka.sasl.mechanism: {}` needs `kafka.sasl.{key}`",
                        s.mechanism
                    ),
                )
            })
        };
        Ok(Sasl::Password {
            mechanism,
            username: interp("username", &need("username", &s.username)?)?,
            password: Secret::new(interp("password", &need("password", &s.password)?)?),
        })
    }
}

/// Why `url` cannot be a token endpoint: HTTPS, or plain HTTP to a loopback address only (a
/// local identity provider); no credentials in it (they are `clientId` and `clientSecret`).
fn check_token_endpoint(raw: &str) -> Result<(), String> {
    let url = url::Url::parse(raw).map_err(|e| format!("is not a URL ({e})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("holds credentials: they go in `clientId` and `clientSecret`".into());
    }
    let loopback = super::loopback(&url).ok_or("has no host")?;
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err("is plain HTTP: the client secret goes over https:// only (http:// for a loopback address)".into()),
        other => Err(format!("has the scheme `{other}`: use https://")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> Config {
        Config::parse(Path::new("/nonexistent/kco.yaml"), text).unwrap()
    }

    #[test]
    fn reads_kafka_and_mirrors_with_secrets_from_the_environment() {
        let c = parse(
            r#"
clusters:
  east: {url: "http://east:8083", kafka: {bootstrap: "east-kafka:9092"}}
  south: {url: "http://south:8083"}
  west:
    url: http://west:8083
    kafka:
      bootstrap: "west-1:9092, west-2:9092"
      sasl: {mechanism: SCRAM-SHA-512, username: kco, password: "${env:WEST_PW}"}
    mirrors:
      east: {alias: east, policy: default, maxCheckpointAgeSeconds: 90, maxBehind: 1000}
      south: {alias: s, policy: identity, maxMirrorSilenceSeconds: 60}
"#,
        );
        let env = |k: &str| (k == "WEST_PW").then(|| "s3cret".to_string());
        let dr = c.dr_settings("west", &env).unwrap();
        let k = dr.kafka.unwrap();
        assert_eq!(k.bootstrap, ["west-1:9092", "west-2:9092"]);
        let sasl = k.sasl.unwrap();
        let Sasl::Password {
            mechanism,
            password,
            ..
        } = &sasl
        else {
            panic!("{sasl:?}")
        };
        assert_eq!(*mechanism, SaslMechanism::ScramSha512);
        assert_eq!(password.expose(), "s3cret");
        assert!(!format!("{sasl:?}").contains("s3cret"));
        let east = &dr.mirrors["east"];
        assert_eq!(east.target_topic("orders"), "east.orders");
        assert_eq!(east.target_topic("west.orders"), "orders");
        assert_eq!(east.checkpoints_topic, "east.checkpoints.internal");
        assert_eq!(dr.mirrors["south"].target_topic("orders"), "orders");
        assert_eq!(
            dr.alarms["east"],
            MirrorAlarm {
                max_checkpoint_age: Some(Duration::from_secs(90)),
                max_behind: Some(1000),
                max_mirror_silence: None,
            }
        );
        assert_eq!(
            dr.alarms["south"].max_mirror_silence,
            Some(Duration::from_secs(60))
        );
        assert!(c.dr_settings("east", &env).unwrap().mirrors.is_empty());
    }

    #[test]
    fn bad_settings_name_the_key() {
        let none = |_: &str| None;
        let c = parse("clusters:\n  w:\n    url: http://w\n    kafka: {bootstrap: w, sasl: {mechanism: GSSAPI, username: a, password: b}}\n");
        let e = c.dr_settings("w", &none).unwrap_err().to_string();
        assert!(e.contains("kafka.bootstrap"), "{e}");
        let c = parse("clusters:\n  w:\n    url: http://w\n    kafka: {bootstrap: 'w:1', sasl: {mechanism: GSSAPI, username: a, password: b}}\n");
        let e = c.dr_settings("w", &none).unwrap_err().to_string();
        assert!(
            e.contains("GSSAPI") && e.contains("SCRAM-SHA-512") && e.contains("AWS_MSK_IAM"),
            "{e}"
        );
        let c = parse("clusters:\n  w:\n    url: http://w\n    kafka: {bootstrap: 'w:1', sasl: {mechanism: PLAIN, username: a, password: '${env:NOPE}'}}\n");
        let e = c.dr_settings("w", &none).unwrap_err().to_string();
        assert!(e.contains("NOPE"), "{e}");
        assert!(
            e.contains("`kafka.sasl.password`"),
            "the full key path: {e}"
        );
        let c = parse(
            "clusters:\n  e: {url: http://e}\n  w:\n    url: http://w\n    mirrors: {e: {alias: e, policy: custom}}\n",
        );
        let e = c.dr_settings("w", &none).unwrap_err().to_string();
        assert!(e.contains("policy: custom"), "{e}");
        // A `mirrors:` key that is not a cluster: refused at load, the clusters named.
        let e = Config::parse(
            Path::new("kco.yaml"),
            "clusters:\n  east: {url: http://e}\n  w:\n    url: http://w\n    mirrors: {a: {alias: east}}\n",
        )
        .unwrap_err();
        let text = format!("{e} {}", e.hint.clone().unwrap_or_default());
        assert!(
            text.contains("`mirrors.a`") && text.contains("`east`, `w`"),
            "{text}"
        );
        assert_eq!(e.line, Some(5), "{text}");
        let e = Config::parse(
            Path::new("kco.yaml"),
            "clusters:\n  w:\n    url: http://w\n    kafka: {bootstrap: 'w:1', sasl: {mech: PLAIN}}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field"), "{e}");
    }

    /// `mechanism: AWS_MSK_IAM`: the region from the entry, else the environment; the
    /// profile named; no password taken; none of it in the options' `Debug`.
    #[test]
    fn aws_msk_iam_takes_a_region_and_a_profile() {
        let c = parse(
            "clusters:\n  m:\n    url: http://m\n    kafka:\n      bootstrap: 'b-1.msk:9098'\n      tls: {}\n      sasl: {mechanism: AWS_MSK_IAM, region: eu-west-1, profile: '${env:P}'}\n",
        );
        let env = |k: &str| (k == "P").then(|| "team".to_string());
        let k = c.dr_settings("m", &env).unwrap().kafka.unwrap();
        let Some(Sasl::AwsMskIam(iam)) = &k.sasl else {
            panic!("{k:?}")
        };
        assert_eq!(iam.region, "eu-west-1");
        assert_eq!(
            iam.source,
            crate::aws::CredentialSource::Profile("team".into())
        );
        let c = parse("clusters:\n  m:\n    url: http://m\n    kafka: {bootstrap: 'b:9098', sasl: {mechanism: aws_msk_iam}}\n");
        let env = |k: &str| (k == "AWS_DEFAULT_REGION").then(|| "us-east-2".to_string());
        let k = c.dr_settings("m", &env).unwrap().kafka.unwrap();
        let Some(Sasl::AwsMskIam(iam)) = &k.sasl else {
            panic!("{k:?}")
        };
        assert_eq!(iam.region, "us-east-2");
        assert_eq!(iam.source, crate::aws::CredentialSource::DefaultChain);
    }

    /// No region anywhere: a config error naming the file and the `sasl:` line, with a hint;
    /// a password given to AWS_MSK_IAM, a region given to SCRAM, a SCRAM without its
    /// password: each refused, naming the key.
    #[test]
    fn aws_msk_iam_without_a_region_or_with_a_password_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kco.yaml");
        let text = "clusters:\n  m:\n    url: http://m\n    kafka:\n      bootstrap: 'b:9098'\n      sasl:\n        mechanism: AWS_MSK_IAM\n";
        std::fs::write(&path, text).unwrap();
        let c = Config::parse(&path, text).unwrap();
        // HOME is an empty directory: no ~/.aws/config to find a region in.
        let home = dir.path().display().to_string();
        let env = move |k: &str| (k == "HOME").then(|| home.clone());
        let e = c.dr_settings("m", &env).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.to_string().contains("needs a region"), "{e}");
        assert!(e.to_string().contains("profile `default`"), "{e}");
        assert!(e.hint.as_deref().unwrap().contains("AWS_REGION"), "{e:?}");
        let none = |_: &str| None;
        let c = parse("clusters:\n  m:\n    url: http://m\n    kafka: {bootstrap: 'b:1', sasl: {mechanism: AWS_MSK_IAM, region: r, password: x}}\n");
        let e = c.dr_settings("m", &none).unwrap_err().to_string();
        assert!(
            e.contains("`kafka.sasl.password` is not for `mechanism: AWS_MSK_IAM`"),
            "{e}"
        );
        let c = parse("clusters:\n  m:\n    url: http://m\n    kafka: {bootstrap: 'b:1', sasl: {mechanism: PLAIN, username: u, password: p, region: r}}\n");
        let e = c.dr_settings("m", &none).unwrap_err().to_string();
        assert!(
            e.contains("`kafka.sasl.region` is not for `mechanism: PLAIN`"),
            "{e}"
        );
        let c = parse("clusters:\n  m:\n    url: http://m\n    kafka: {bootstrap: 'b:1', sasl: {mechanism: SCRAM-SHA-512, username: u}}\n");
        let e = c.dr_settings("m", &none).unwrap_err().to_string();
        assert!(e.contains("needs `kafka.sasl.password`"), "{e}");
    }

    /// `mechanism: OAUTHBEARER`: the token endpoint, the client, its secret from the
    /// environment, the scope; a plain-HTTP endpoint off loopback, a missing secret and an
    /// AWS key on it are refused naming the key; its keys are refused on SCRAM.
    #[test]
    fn oauthbearer_takes_a_token_endpoint_and_a_client() {
        let c = parse("clusters:\n  o:\n    url: http://o\n    kafka: {bootstrap: 'b:9093', sasl: {mechanism: OAUTHBEARER, tokenEndpoint: 'https://idp.example.com/oauth2/token', clientId: kco, clientSecret: '${env:S}', scope: kafka}}\n");
        let env = |k: &str| (k == "S").then(|| "s3cret".to_string());
        let k = c.dr_settings("o", &env).unwrap().kafka.unwrap();
        let Some(Sasl::OAuthBearer(o)) = &k.sasl else {
            panic!("{k:?}")
        };
        assert_eq!(o.endpoint, "https://idp.example.com/oauth2/token");
        assert_eq!(
            (o.client_id.as_str(), o.scope.as_deref()),
            ("kco", Some("kafka"))
        );
        assert!(!format!("{k:?}").contains("s3cret"), "{k:?}");
        let refused = |sasl: &str| {
            let c = parse(&format!(
                "clusters:\n  o:\n    url: http://o\n    kafka: {{bootstrap: 'b:1', sasl: {sasl}}}\n"
            ));
            c.dr_settings("o", &env).unwrap_err().to_string()
        };
        let e = refused("{mechanism: OAUTHBEARER, tokenEndpoint: 'http://idp.example.com/t', clientId: a, clientSecret: b}");
        assert!(
            e.contains("`kafka.sasl.tokenEndpoint` is plain HTTP"),
            "{e}"
        );
        let e =
            refused("{mechanism: OAUTHBEARER, tokenEndpoint: 'http://127.0.0.1:1/t', clientId: a}");
        assert!(e.contains("needs `kafka.sasl.clientSecret`"), "{e}");
        let e = refused("{mechanism: OAUTHBEARER, tokenEndpoint: 'https://i/t', clientId: a, clientSecret: b, region: r}");
        assert!(
            e.contains("`kafka.sasl.region` is not for `mechanism: OAUTHBEARER`"),
            "{e}"
        );
        let e = refused("{mechanism: SCRAM-SHA-512, username: u, password: p, clientId: a}");
        assert!(
            e.contains("`kafka.sasl.clientId` is not for `mechanism: SCRAM-SHA-512`"),
            "{e}"
        );
    }
}
