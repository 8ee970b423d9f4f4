//! Secrets in connector configs: which keys are secret, the placeholder that replaces them in
//! a snapshot, and how `apply` resolves placeholders.
//!
//! A placeholder reads `${kco:env:VAR}`: at apply time its value is taken from the environment
//! variable `VAR`. Config-provider references such as `${file:/etc/x:password}` are not secrets
//! in themselves and are kept as they are.

use std::collections::{BTreeMap, BTreeSet};

const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "credential",
    "api.key",
    "apikey",
    "api_key",
    "private.key",
    "sasl.jaas.config",
    "access.key",
    "auth.key",
];

/// Whether a config key looks secret by its name.
pub fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| k.contains(w))
}

/// Whether a value is one a service masked (`****************`: Confluent Cloud answers a
/// managed connector's secret values so): its secret is not in the answer, and a snapshot
/// keeps a placeholder for it.
pub fn is_masked(value: &str) -> bool {
    let v = value.trim();
    v.len() >= 3 && v.bytes().all(|b| b == b'*')
}

/// Whether a value is a config-provider reference (`${provider:...}`) and so safe to keep.
pub fn is_provider_reference(value: &str) -> bool {
    let v = value.trim();
    v.starts_with("${") && v.ends_with('}') && v[2..].contains(':') && !v.starts_with("${kco:")
}

/// The environment variable a placeholder for `connector`'s `key` names by default:
/// `KCO_SECRET_<CONNECTOR>_<KEY>`, upper case, other characters as `_`.
pub fn env_var_name(connector: &str, key: &str) -> String {
    let clean = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    format!("KCO_SECRET_{}_{}", clean(connector), clean(key))
}

/// The placeholder text for an environment variable.
pub fn placeholder(var: &str) -> String {
    format!("${{kco:env:{var}}}")
}

/// The variable a placeholder names, if `value` is one.
pub fn placeholder_var(value: &str) -> Option<&str> {
    value.strip_prefix("${kco:env:")?.strip_suffix('}')
}

/// Replaces secret values with placeholders. `password_keys` are the keys the plugin declares
/// of type PASSWORD; keys that look secret by name, and values the service masked, are
/// replaced too. Returns the redacted
/// config and the keys that were replaced.
pub fn redact(
    connector: &str,
    config: &BTreeMap<String, String>,
    password_keys: &BTreeSet<String>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut replaced = Vec::new();
    let out = config
        .iter()
        .map(|(k, v)| {
            let secret = password_keys.contains(k) || looks_secret(k) || is_masked(v);
            if secret && !v.is_empty() && !is_provider_reference(v) && placeholder_var(v).is_none()
            {
                replaced.push(k.clone());
                (k.clone(), placeholder(&env_var_name(connector, k)))
            } else {
                (k.clone(), v.clone())
            }
        })
        .collect();
    (out, replaced)
}

/// Resolves every placeholder with `lookup` (the environment, in the CLI). Returns the
/// variables that could not be resolved, so that nothing is sent when any is missing.
pub fn resolve(
    config: &BTreeMap<String, String>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, Vec<String>> {
    let mut missing = Vec::new();
    let mut out = BTreeMap::new();
    for (k, v) in config {
        match placeholder_var(v) {
            Some(var) => match lookup(var) {
                Some(val) => {
                    out.insert(k.clone(), val);
                }
                None => missing.push(var.to_string()),
            },
            None => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_value_a_service_masked_is_a_secret_whatever_its_key() {
        let config: BTreeMap<String, String> = [
            ("connection.url", "****************"),
            ("topics", "t"),
            ("note", "**"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let (out, replaced) = redact("c", &config, &BTreeSet::new());
        assert_eq!(replaced, ["connection.url"]);
        assert_eq!(
            out["connection.url"],
            "${kco:env:KCO_SECRET_C_CONNECTION_URL}"
        );
        assert_eq!(out["note"], "**");
    }

    #[test]
    fn redacts_declared_and_named_secrets_but_keeps_provider_refs() {
        let c = cfg(&[
            ("connection.password", "hunter2"),
            ("db.pass.word", "x"),
            ("sasl.jaas.config", "org.apache... password=\"p\";"),
            ("other.password", "${file:/etc/secrets:pw}"),
            ("topic", "t"),
        ]);
        let declared: BTreeSet<String> = ["db.pass.word".to_string()].into();
        let (out, replaced) = redact("my-conn", &c, &declared);
        assert_eq!(
            out["connection.password"],
            "${kco:env:KCO_SECRET_MY_CONN_CONNECTION_PASSWORD}"
        );
        assert_eq!(
            out["db.pass.word"],
            "${kco:env:KCO_SECRET_MY_CONN_DB_PASS_WORD}"
        );
        assert!(placeholder_var(&out["sasl.jaas.config"]).is_some());
        assert_eq!(out["other.password"], "${file:/etc/secrets:pw}");
        assert_eq!(out["topic"], "t");
        assert_eq!(replaced.len(), 3);
        assert!(!format!("{out:?}").contains("hunter2"));
    }

    #[test]
    fn resolve_reports_every_missing_variable() {
        let c = cfg(&[
            ("a.password", "${kco:env:A}"),
            ("b.password", "${kco:env:B}"),
            ("x", "1"),
        ]);
        let got = resolve(&c, |v| (v == "A").then(|| "pa".to_string()));
        assert_eq!(got.unwrap_err(), vec!["B".to_string()]);
        let got = resolve(&c, |v| Some(format!("v-{v}"))).unwrap();
        assert_eq!(got["a.password"], "v-A");
        assert_eq!(got["x"], "1");
    }
}
