//! Which connectors a command acts on: names and globs, and a type filter.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};
use crate::model::ConnectorType;

/// Connector names or globs (`orders-*`), and an optional type. No patterns: everything.
#[derive(Debug, Clone)]
pub struct Selector {
    set: Option<GlobSet>,
    patterns: Vec<String>,
    kind: Option<ConnectorType>,
}

impl Selector {
    pub fn new(patterns: &[String], kind: Option<ConnectorType>) -> Result<Self> {
        let set = if patterns.is_empty() {
            None
        } else {
            let mut b = GlobSetBuilder::new();
            for p in patterns {
                b.add(Glob::new(p).map_err(|e| Error::Usage(format!("bad pattern `{p}`: {e}")))?);
            }
            Some(b.build().map_err(|e| Error::Usage(e.to_string()))?)
        };
        Ok(Selector {
            set,
            patterns: patterns.to_vec(),
            kind,
        })
    }

    /// Everything.
    pub fn all() -> Self {
        Selector {
            set: None,
            patterns: Vec::new(),
            kind: None,
        }
    }

    pub fn matches(&self, name: &str, kind: Option<ConnectorType>) -> bool {
        let name_ok = self.set.as_ref().is_none_or(|s| s.is_match(name));
        let kind_ok = match (self.kind, kind) {
            (None, _) => true,
            (Some(want), Some(k)) => want == k,
            (Some(_), None) => false,
        };
        name_ok && kind_ok
    }

    /// Every pattern is a plain name (and there is at least one).
    pub fn only_names(&self) -> bool {
        !self.patterns.is_empty() && self.exact_names().len() == self.patterns.len()
    }

    /// Patterns that are plain names (no glob characters): these must exist.
    pub fn exact_names(&self) -> Vec<&str> {
        self.patterns
            .iter()
            .filter(|p| !p.contains(['*', '?', '[', '{']))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_globs_and_types() {
        let s = Selector::new(
            &["orders-*".into(), "exact".into()],
            Some(ConnectorType::Sink),
        )
        .unwrap();
        assert!(s.matches("orders-1", Some(ConnectorType::Sink)));
        assert!(!s.matches("orders-1", Some(ConnectorType::Source)));
        assert!(!s.matches("other", Some(ConnectorType::Sink)));
        assert_eq!(s.exact_names(), vec!["exact"]);
        assert!(Selector::all().matches("x", None));
    }
}
