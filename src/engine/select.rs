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
        let name_ok = self.matches_name(name);
        let kind_ok = match (self.kind, kind) {
            (None, _) => true,
            (Some(want), Some(k)) => want == k,
            (Some(_), None) => false,
        };
        name_ok && kind_ok
    }

    /// Whether `name` is selected, its type aside (a file's connector before the listing
    /// says its type).
    pub fn matches_name(&self, name: &str) -> bool {
        self.set.as_ref().is_none_or(|s| s.is_match(name))
    }

    /// Every pattern is a plain name (and there is at least one).
    pub fn only_names(&self) -> bool {
        !self.patterns.is_empty() && self.exact_names().len() == self.patterns.len()
    }

    /// The patterns that match none of `names` (the type filter aside): a selection that
    /// names something that is not there is an error, never an empty success.
    pub fn unmatched<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let Some(set) = &self.set else {
            return Vec::new();
        };
        let mut hit = vec![false; self.patterns.len()];
        for name in names {
            for i in set.matches(name) {
                hit[i] = true;
            }
        }
        self.patterns
            .iter()
            .zip(hit)
            .filter(|(_, h)| !h)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// [`Self::unmatched`] as a result: an [`Error::NoMatch`] naming the patterns that matched
    /// nothing among `names`, which exist `place` ("on cluster `a`").
    pub fn check_matched(&self, names: &[&str], place: &str) -> Result<()> {
        let unmatched = self.unmatched(names.iter().copied());
        if unmatched.is_empty() {
            return Ok(());
        }
        Err(no_match(unmatched, names, place))
    }

    /// Patterns that are plain names (no glob characters): these must exist.
    pub fn exact_names(&self) -> Vec<&str> {
        self.patterns
            .iter()
            .filter(|p| !is_glob(p))
            .map(String::as_str)
            .collect()
    }
}

/// Whether a pattern is a glob (has `*`, `?`, `[` or `{`) rather than a plain name.
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// How many existing names a "did not match" error shows: all of them up to this many, else
/// the closest few.
const SHOWN: usize = 8;
const CLOSEST: usize = 5;

/// The names among `live` that `patterns` (names or globs) select, sorted and once each; an
/// error naming the patterns that match nothing (`place`: where `live` are, "on cluster `a`").
/// For commands that act on names (`reset`): globs are resolved here, against the live list.
pub fn resolve(live: &[&str], patterns: &[String], place: &str) -> Result<Vec<String>> {
    let selector = Selector::new(patterns, None)?;
    selector.check_matched(live, place)?;
    let mut names: Vec<String> = live
        .iter()
        .filter(|n| selector.matches(n, None))
        .map(|n| n.to_string())
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// An [`Error::NoMatch`] for `patterns`, with the names that exist: all of them when few, else
/// the few closest to what was typed.
pub fn no_match(patterns: Vec<String>, existing: &[&str], place: &str) -> Error {
    let mut names: Vec<&str> = existing.to_vec();
    names.sort_unstable();
    names.dedup();
    let closest: Vec<String> = if names.len() <= SHOWN {
        names.iter().map(|n| n.to_string()).collect()
    } else {
        let typed: Vec<String> = patterns
            .iter()
            .map(|p| p.replace(['*', '?', '[', ']', '{', '}'], ""))
            .collect();
        let distance = |n: &str| {
            typed
                .iter()
                .map(|t| strsim::levenshtein(t, n))
                .min()
                .unwrap_or(0)
        };
        let mut ranked: Vec<(usize, &str)> = names.iter().map(|n| (distance(n), *n)).collect();
        ranked.sort_unstable();
        ranked
            .into_iter()
            .take(CLOSEST)
            .map(|(_, n)| n.to_string())
            .collect()
    };
    // A plain name a few edits from one that exists: a typo.
    let all: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let guess = patterns
        .iter()
        .filter(|p| !is_glob(p))
        .find_map(|p| crate::text::closest(&all, p))
        .map(Box::from);
    Error::NoMatch {
        more: names.len() - closest.len(),
        patterns,
        place: place.to_string(),
        closest,
        guess,
        left: None,
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

    #[test]
    fn patterns_that_match_nothing_are_named() {
        let s = Selector::new(&["orders-*".into(), "zzz*".into(), "exact".into()], None).unwrap();
        assert_eq!(s.unmatched(["orders-1", "other"]), vec!["zzz*", "exact"]);
        assert!(s.unmatched(["orders-1", "zzz", "exact"]).is_empty());
        assert!(Selector::all().unmatched(std::iter::empty()).is_empty());
    }

    #[test]
    fn resolve_turns_globs_into_live_names_or_fails() {
        let live = ["orders-b", "billing", "orders-a"];
        let got = resolve(
            &live,
            &["orders-*".into(), "orders-a".into()],
            "on cluster `a`",
        );
        assert_eq!(got.unwrap(), vec!["orders-a", "orders-b"]);
        let e = resolve(&live, &["orders-*".into(), "zzz*".into()], "on cluster `a`").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`zzz*` did not match any connector on cluster `a`"
        );
        assert_eq!(
            e.hint().unwrap(),
            "the connectors there: `billing`, `orders-a`, `orders-b`"
        );
        assert_eq!(e.exit_code(), crate::error::EXIT_ERROR);
        let e = resolve(&[], &["x".into()], "on cluster `a`").unwrap_err();
        assert_eq!(e.hint().unwrap(), "there is no connector there");
    }

    #[test]
    fn many_names_show_the_closest_few() {
        let names: Vec<String> = (0..40).map(|i| format!("conn-{i:02}")).collect();
        let mut live: Vec<&str> = names.iter().map(String::as_str).collect();
        live.push("orders-sink");
        let e = resolve(&live, &["order-sink".into()], "on cluster `a`").unwrap_err();
        let hint = e.hint().unwrap();
        assert!(
            hint.starts_with(
                "did you mean `orders-sink`? (the connectors there include `orders-sink`, "
            ),
            "{hint}"
        );
        assert!(hint.ends_with("(closest first), and 36 more)"), "{hint}");
        // A glob is no typo: no guess.
        let e = resolve(&live, &["order-*".into()], "on cluster `a`").unwrap_err();
        assert!(!e.hint().unwrap().contains("did you mean"));
    }
}
