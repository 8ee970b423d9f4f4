//! A cluster's `kafka:` (how kco reads its Kafka: bootstrap, SASL, TLS) and `mirrors:` (which
//! clusters' Kafka MirrorMaker 2 mirrors into it), for disaster recovery across Kafka clusters.
//! Secrets follow the rest of kco.yaml: `${env:VAR}`, held in [`Secret`].

use std::collections::BTreeMap;
use std::time::Duration;

use super::raw::RawKafka;
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
                "username" | "password" => format!("kafka.sasl.{key}"),
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
            Some(k) => Some(self.kafka_options(name, k, &interp)?),
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
        let sasl = match &k.sasl {
            None => None,
            Some(s) => Some(Sasl {
                mechanism: SaslMechanism::parse(&s.mechanism).ok_or_else(|| {
                    self.err(
                        "mechanism",
                        format!(
                            "cluster `{name}`: unknown `kafka.sasl.mechanism: {}` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)",
                            s.mechanism
                        ),
                    )
                })?,
                username: interp("username", &s.username)?,
                password: Secret::new(interp("password", &s.password)?),
            }),
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
            timeout: Duration::from_secs(k.timeout_seconds.unwrap_or(DEFAULT_KAFKA_TIMEOUT_SECS)),
        })
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
        assert_eq!(sasl.mechanism, SaslMechanism::ScramSha512);
        assert_eq!(sasl.password.expose(), "s3cret");
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
        assert!(e.contains("GSSAPI") && e.contains("SCRAM-SHA-512"), "{e}");
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
}
