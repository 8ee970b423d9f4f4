//! Points in history as users name them: a revision (`HEAD~3`, a tag, a branch, a commit) or
//! a time (`2026-11-29 02:00`, `yesterday 14:00`, `2 days ago`: the last commit at or before
//! it on the current branch), and
//! commit times as kco shows them.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use git2::Oid;

use crate::engine::revision::{Repo, Revision};
use crate::error::{Error, Result};

/// A time as `--at` and `log --since` take it, in seconds since the Unix epoch; `None` when
/// `s` is not a time. `YYYY-MM-DD`, optionally followed (after a space or `T`) by `HH:MM` or
/// `HH:MM:SS` and an optional zone: `Z`, `UTC`, `+HH:MM`, `-HHMM`; without a zone the time is
/// UTC. Or relative to now (the clock of [`crate::clock::now`]): `now`, `today` or
/// `yesterday` (00:00 UTC, or followed by a time of day as above: `yesterday 14:00`), and
/// `N minutes|hours|days|weeks ago` (`2 days ago`, `90 min ago`).
pub fn parse_time(s: &str) -> Option<i64> {
    let now = crate::clock::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    parse_absolute(s).or_else(|| parse_relative(s, now))
}

/// [`parse_time`]'s relative forms, against `now`.
fn parse_relative(s: &str, now: i64) -> Option<i64> {
    let s = s.trim().to_ascii_lowercase();
    if s == "now" {
        return Some(now);
    }
    for (word, days_back) in [("today", 0), ("yesterday", 1)] {
        if let Some(rest) = s.strip_prefix(word) {
            if !rest.is_empty() && !rest.starts_with(' ') {
                return None;
            }
            let day = (now.div_euclid(86_400) - days_back) * 86_400;
            let date = rfc3339(day);
            return parse_absolute(&format!("{} {}", &date[..10], rest.trim()));
        }
    }
    let words: Vec<&str> = s.split_whitespace().collect();
    let [n, unit, "ago"] = words[..] else {
        return None;
    };
    let n: i64 = n.parse().ok()?;
    let unit = match unit.trim_end_matches('s') {
        "second" | "sec" => 1,
        "minute" | "min" => 60,
        "hour" | "hr" => 3_600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        _ => return None,
    };
    Some(now - n.checked_mul(unit)?)
}

/// [`parse_time`]'s calendar form.
fn parse_absolute(s: &str) -> Option<i64> {
    let s = s.trim();
    let num = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let (date, rest) = s.split_at(s.len().min(10));
    let d: Vec<&str> = date.split('-').collect();
    if d.len() != 3 || d[0].len() != 4 || d[1].len() != 2 || d[2].len() != 2 {
        return None;
    }
    let (y, m, day) = (num(d[0])?, num(d[1])?, num(d[2])?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let rest = rest.strip_prefix([' ', 'T']).unwrap_or(rest).trim();
    let (clock, zone) = match rest.find(['Z', '+', '-', ' ']) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let mut secs = 0;
    if !clock.is_empty() {
        let t: Vec<&str> = clock.split(':').collect();
        if !(2..=3).contains(&t.len()) || t.iter().any(|p| p.len() != 2) {
            return None;
        }
        let (h, mi) = (num(t[0])?, num(t[1])?);
        let sec = if t.len() == 3 { num(t[2])? } else { 0 };
        if h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        secs = h * 3600 + mi * 60 + sec;
    }
    let offset = match zone {
        "" | "Z" | "UTC" => 0,
        z => {
            let sign = match z.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm = z[1..].replace(':', "");
            if hm.len() != 4 {
                return None;
            }
            sign * (num(&hm[..2])? * 3600 + num(&hm[2..])? * 60)
        }
    };
    Some(crate::clock::days_from_civil(y, m, day) * 86_400 + secs - offset)
}

/// A commit time as JSON shows it: RFC 3339, UTC (`2026-11-29T02:00:00Z`).
pub fn rfc3339(secs: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_secs(secs.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A commit time as text shows it: `2026-11-29 02:00` (UTC).
pub fn short_time(secs: i64) -> String {
    short_date(&rfc3339(secs))
}

/// An RFC 3339 UTC time (as [`rfc3339`] writes it) as text shows it: `2026-11-29 02:00`.
pub fn short_date(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => rfc3339.to_string(),
    }
}

/// The first 12 hex digits of a commit id.
pub fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Resolves `at`, a revision or a time, in the repository holding `path`. A time names the
/// last commit at or before it on the first-parent history of `HEAD` (committer time).
pub fn resolve_at(path: &Path, at: &str) -> Result<Revision> {
    let repo = Repo::discover(path)?;
    let commit = match parse_time(at) {
        Some(t) => commit_at(&repo, at, t)?,
        None => repo.resolve(at)?,
    };
    Ok(Revision {
        rev: at.to_string(),
        commit: commit.to_string(),
        repo,
    })
}

fn commit_at(repo: &Repo, at: &str, t: i64) -> Result<Oid> {
    let head = repo.resolve("HEAD")?;
    let mut commit = repo
        .git()
        .find_commit(head)
        .map_err(|e| Error::Other(format!("cannot read HEAD: {}", e.message())))?;
    loop {
        if commit.time().seconds() <= t {
            return Ok(commit.id());
        }
        match commit.parent(0) {
            Ok(p) => commit = p,
            Err(_) => {
                return Err(Error::Usage(format!(
                    "no commit at or before {at} ({} UTC) on the current branch: its first commit, {}, is of {} UTC",
                    short_time(t),
                    short_id(&commit.id().to_string()),
                    short_time(commit.time().seconds())
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_and_without_zones() {
        assert_eq!(parse_time("1970-01-01"), Some(0));
        assert_eq!(parse_time("2026-11-29 02:00"), Some(1_795_917_600));
        assert_eq!(parse_time("2026-11-29T02:00:00Z"), Some(1_795_917_600));
        assert_eq!(parse_time("2026-11-29 03:00 +01:00"), Some(1_795_917_600));
        assert_eq!(parse_time("2026-11-28T21:00:00-0500"), Some(1_795_917_600));
        assert_eq!(parse_time("2026-11-29 02:00 UTC"), Some(1_795_917_600));
        for not_a_time in [
            "HEAD~3",
            "main",
            "v1.2",
            "2026-13-01",
            "2026-11-29 25:00",
            "deadbeef",
        ] {
            assert_eq!(parse_time(not_a_time), None, "{not_a_time}");
        }
        assert_eq!(rfc3339(1_795_917_600), "2026-11-29T02:00:00Z");
        // Relative to a fixed now: 2026-11-29 02:00 UTC.
        let now = 1_795_917_600;
        let at = |s: &str| parse_relative(s, now).map(rfc3339);
        assert_eq!(at("now").as_deref(), Some("2026-11-29T02:00:00Z"));
        assert_eq!(at("today").as_deref(), Some("2026-11-29T00:00:00Z"));
        assert_eq!(
            at("yesterday 14:00").as_deref(),
            Some("2026-11-28T14:00:00Z")
        );
        assert_eq!(
            at("Yesterday 14:00 +01:00").as_deref(),
            Some("2026-11-28T13:00:00Z")
        );
        assert_eq!(at("2 days ago").as_deref(), Some("2026-11-27T02:00:00Z"));
        assert_eq!(at("90 min ago").as_deref(), Some("2026-11-29T00:30:00Z"));
        assert_eq!(at("1 week ago").as_deref(), Some("2026-11-22T02:00:00Z"));
        for not_a_time in [
            "yesterdays",
            "yesterday 25:00",
            "two days ago",
            "3 fortnights ago",
            "ago",
        ] {
            assert_eq!(at(not_a_time), None, "{not_a_time}");
        }
        assert_eq!(short_time(1_795_917_600), "2026-11-29 02:00");
    }
}
