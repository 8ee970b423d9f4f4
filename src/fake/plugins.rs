//! Connector plugins: `GET /connector-plugins` and `GET /connector-plugins/{class}/config`.

use serde_json::{json, Value};

use super::state::{Cluster, Kind};

/// A connector plugin, served by `GET /connector-plugins` and `.../{class}/config`.
#[derive(Clone, Debug)]
pub struct PluginSpec {
    /// Fully qualified class name; the simple name also finds it.
    pub class: String,
    /// Source or sink.
    pub kind: Kind,
    /// Version listed by `GET /connector-plugins`.
    pub version: String,
    /// Extra config keys beyond the common ones: (name, type such as `"STRING"`, `"PASSWORD"`).
    pub keys: Vec<(String, String)>,
}

impl PluginSpec {
    /// A source plugin (version `"1.0.0"`) with only the common config keys.
    pub fn source(class: &str) -> PluginSpec {
        PluginSpec::new(class, Kind::Source)
    }

    /// A sink plugin (version `"1.0.0"`) with only the common config keys.
    pub fn sink(class: &str) -> PluginSpec {
        PluginSpec::new(class, Kind::Sink)
    }

    fn new(class: &str, kind: Kind) -> PluginSpec {
        PluginSpec {
            class: class.to_string(),
            kind,
            version: "1.0.0".to_string(),
            keys: Vec::new(),
        }
    }

    /// Add a config key of the given Connect type (`"STRING"`, `"INT"`, `"PASSWORD"`, ...).
    pub fn key(mut self, name: &str, type_: &str) -> PluginSpec {
        self.keys.push((name.to_string(), type_.to_string()));
        self
    }

    /// Add a config key of type `PASSWORD` (a secret).
    pub fn password(self, name: &str) -> PluginSpec {
        self.key(name, "PASSWORD")
    }

    /// Whether `name` is this plugin's full class name or its simple name / alias.
    pub(crate) fn answers_to(&self, name: &str) -> bool {
        self.class == name || self.class.rsplit('.').next() == Some(name)
    }

    /// The config definitions of `GET /connector-plugins/{class}/config`.
    pub(crate) fn config_defs(&self) -> Value {
        let mut keys: Vec<(String, String)> = [
            ("name", "STRING"),
            ("connector.class", "STRING"),
            ("tasks.max", "INT"),
            ("key.converter", "CLASS"),
            ("value.converter", "CLASS"),
        ]
        .iter()
        .map(|(k, t)| (k.to_string(), t.to_string()))
        .collect();
        if self.kind == Kind::Sink {
            keys.push(("topics".into(), "LIST".into()));
        }
        keys.extend(self.keys.iter().cloned());
        let defs = keys.iter().enumerate().map(|(i, (name, type_))| {
            json!({
                "name": name,
                "type": type_,
                "required": name == "name" || name == "connector.class",
                "default_value": if name == "tasks.max" { json!("1") } else { Value::Null },
                "importance": "HIGH",
                "documentation": format!("The {name} setting."),
                "group": "Common",
                "width": "MEDIUM",
                "display_name": name,
                "dependents": [],
                "order": i + 1,
            })
        });
        Value::Array(defs.collect())
    }
}

/// Registered plugins, plus one per class used by a connector but not registered.
fn plugins(cluster: &Cluster) -> Vec<PluginSpec> {
    let mut all = cluster.plugins.clone();
    for connector in cluster.connectors.values() {
        let class = connector.config.get("connector.class").cloned();
        if let Some(class) = class {
            if !all.iter().any(|p| p.answers_to(&class)) {
                match connector.kind {
                    Kind::Source => all.push(PluginSpec::source(&class)),
                    Kind::Sink => all.push(PluginSpec::sink(&class)),
                    Kind::Unknown => {}
                }
            }
        }
    }
    all
}

pub(crate) fn plugin(cluster: &Cluster, class: &str) -> Option<PluginSpec> {
    plugins(cluster).into_iter().find(|p| p.answers_to(class))
}

pub(crate) fn plugin_list(cluster: &Cluster) -> Value {
    let list = plugins(cluster)
        .into_iter()
        .map(|p| json!({ "class": p.class, "type": p.kind.as_str(), "version": p.version }));
    Value::Array(list.collect())
}
