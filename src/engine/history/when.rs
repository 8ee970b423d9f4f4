//! Points in history as users name them: a revision (`HEAD~3`, a tag, a branch, a commit) or
//! a time (`2026-11-29 02:00`, `yesterday 14:00`, `2 days ago`: the last commit at or before
//! it on the current branch), and
//! commit times as kco shows them.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use chrono::{DateTime, Days, NaiveDate, NaiveTime};
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

/// [`parse_time`]'s relative forms, against `now`. The calendar is chrono's; how long `N
/// units` is, humantime's (as `--max-age` and the other durations of kco read it).
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
            let today = DateTime::from_timestamp(now, 0)?.date_naive();
            let day = today.checked_sub_days(Days::new(days_back))?;
            return parse_absolute(&format!("{} {}", day.format("%Y-%m-%d"), rest.trim()));
        }
    }
    let words: Vec<&str> = s.split_whitespace().collect();
    let [n, unit, "ago"] = words[..] else {
        return None;
    };
    let back = humantime::parse_duration(&format!("{n} {unit}")).ok()?;
    now.checked_sub(i64::try_from(back.as_secs()).ok()?)
}

/// [`parse_time`]'s calendar form, read by chrono. The date is spelt out in full
/// (`YYYY-MM-DD`: a revision such as `2026-1` is never taken for a time); a time of day and
/// a zone (`Z`, `UTC`, `+HH:MM`, `-HHMM`) may follow.
fn parse_absolute(s: &str) -> Option<i64> {
    let s = s.trim();
    let full_date = s.get(..10).is_some_and(|d| {
        d.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        })
    });
    if !full_date {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    let rest = rest.strip_prefix([' ', 'T']).unwrap_or(rest).trim();
    // `UTC` as a zone is `Z`; chrono reads the others (`%#z`: `Z`, `+HH:MM`, `+HHMM`).
    let rest = match rest.len().checked_sub(3) {
        Some(at) if rest[at..].eq_ignore_ascii_case("utc") => format!("{}Z", &rest[..at]),
        _ => rest.to_string(),
    };
    if rest.is_empty() {
        return Some(date.and_time(NaiveTime::MIN).and_utc().timestamp());
    }
    for clock in ["%H:%M:%S", "%H:%M"] {
        if let Ok(t) = NaiveTime::parse_from_str(&rest, clock) {
            return Some(date.and_time(t).and_utc().timestamp());
        }
        let zoned = format!("%Y-%m-%d {clock} %#z");
        if let Ok(t) = DateTime::parse_from_str(&format!("{date} {rest}"), &zoned) {
            return Some(t.timestamp());
        }
    }
    None
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

    #[test]
    fn dates_are_read_by_the_calendar() {
        // 2028 is a leap year, 2027 and 2100 are not: a day that is not in the calendar is
        // not a time (and so is looked up as a revision).
        assert_eq!(parse_time("2028-02-29"), Some(1_835_395_200));
        assert_eq!(parse_time("2028-03-01"), Some(1_835_481_600));
        for not_a_day in ["2027-02-29", "2026-02-30", "2100-02-29", "2026-04-31"] {
            assert_eq!(parse_time(not_a_day), None, "{not_a_day}");
        }
        // The date is spelt out in full: a tag named `2026-1-5` stays a revision.
        assert_eq!(parse_time("2026-1-5"), None);
        assert_eq!(parse_time("2026-01-5 02:00"), None);
        // Days before the epoch count backwards.
        assert_eq!(parse_time("1969-12-31 23:00"), Some(-3_600));
        // Relative forms keep their zone, whatever its case, and read humantime's units.
        let now = 1_795_917_600;
        let at = |s: &str| parse_relative(s, now).map(rfc3339);
        assert_eq!(
            at("yesterday 14:00 UTC").as_deref(),
            Some("2026-11-28T14:00:00Z")
        );
        assert_eq!(at("today 02:00z").as_deref(), Some("2026-11-29T02:00:00Z"));
        assert_eq!(at("3 hours ago").as_deref(), Some("2026-11-28T23:00:00Z"));
        assert_eq!(at("30 secs ago").as_deref(), Some("2026-11-29T01:59:30Z"));
        // The first of a month: yesterday is in the month before.
        let first = parse_time("2026-12-01 08:00").unwrap();
        assert_eq!(
            parse_relative("yesterday", first).map(rfc3339).as_deref(),
            Some("2026-11-30T00:00:00Z")
        );
    }
}
