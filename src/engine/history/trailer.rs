//! What a commit of snapshot files is, read from its git trailers: an observation (a nightly
//! `kco snapshot`), the record of an apply or an undo, or a change someone made (a pull
//! request, a hand edit, a merge). The recipes write these trailers; `apply` on a merge and
//! `kco log` read them.
//!
//! ```text
//! offsets of prod
//!
//! Kco-Snapshot: prod
//! ```

/// A nightly (or any) `kco snapshot` commit: it records what the cluster did, so applying it
/// changes nothing that anyone decided.
pub const SNAPSHOT: &str = "Kco-Snapshot";
/// A commit that records what an apply did to a cluster.
pub const APPLY: &str = "Kco-Apply";
/// A commit that records what an undo did to a cluster.
pub const UNDO: &str = "Kco-Undo";
/// With an apply record: the commit whose change was applied.
pub const COMMIT: &str = "Kco-Commit";
/// With an apply or undo record: the backup the operation took.
pub const BACKUP: &str = "Kco-Backup";

/// What a commit is, by its trailers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommitKind {
    /// `Kco-Snapshot`: an observation of the cluster.
    Snapshot,
    /// `Kco-Apply`: a record of an apply.
    Apply,
    /// `Kco-Undo`: a record of an undo.
    Undo,
    /// No kco trailer: a change someone made.
    Change,
}

impl CommitKind {
    /// Whether the commit records what a cluster did or what kco did to it, rather than a
    /// change someone asked for: applying such a commit would apply nobody's decision.
    pub fn is_record(self) -> bool {
        self != CommitKind::Change
    }
}

/// The trailers of a commit message: `Key: value` lines of its last paragraph.
pub fn trailers(message: &str) -> Vec<(&str, &str)> {
    let last = message.trim_end().rsplit("\n\n").next().unwrap_or_default();
    let parsed: Vec<(&str, &str)> = last
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let k = k.trim();
            let token = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            token.then_some((k, v.trim()))
        })
        .collect();
    // A trailer block is all trailers (git also allows continuation lines; kco writes none).
    if parsed.len() == last.lines().filter(|l| !l.trim().is_empty()).count() && !parsed.is_empty() {
        parsed
    } else {
        Vec::new()
    }
}

/// The value of trailer `key` (case-insensitive, as git compares them), if present.
pub fn value<'m>(message: &'m str, key: &str) -> Option<&'m str> {
    trailers(message)
        .into_iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
}

/// What a commit is, by its message's trailers.
pub fn kind(message: &str) -> CommitKind {
    let has = |key| value(message, key).is_some();
    if has(APPLY) {
        CommitKind::Apply
    } else if has(UNDO) {
        CommitKind::Undo
    } else if has(SNAPSHOT) {
        CommitKind::Snapshot
    } else {
        CommitKind::Change
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nightly_commit_is_an_observation() {
        let m = "offsets of prod\n\nKco-Snapshot: prod\n";
        assert_eq!(kind(m), CommitKind::Snapshot);
        assert!(kind(m).is_record());
        assert_eq!(value(m, "kco-snapshot"), Some("prod"));
    }

    #[test]
    fn apply_and_undo_records_are_told_apart() {
        let apply = "apply orders\n\nbody\n\nKco-Apply: prod\nKco-Backup: 20261202T010203Z\n";
        assert_eq!(kind(apply), CommitKind::Apply);
        assert_eq!(value(apply, "Kco-Backup"), Some("20261202T010203Z"));
        assert_eq!(kind("undo\n\nKco-Undo: prod"), CommitKind::Undo);
    }

    #[test]
    fn a_trailer_word_in_the_body_is_not_a_trailer() {
        // Only the last paragraph, and only when all of it is trailers.
        let m = "rewind orders\n\nKco-Snapshot: prod is what the nightly writes\nnot this\n";
        assert_eq!(kind(m), CommitKind::Change);
        assert_eq!(kind("Kco-Snapshot: prod"), CommitKind::Snapshot);
        assert_eq!(
            kind("merge pull request #4\n\nrewinds orders"),
            CommitKind::Change
        );
        assert!(!CommitKind::Change.is_record());
    }
}
