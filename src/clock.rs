//! The wall clock, read in one place: a snapshot's `capturedAt`, backup directory names, and
//! the times in the journal and the lock all come from [`now`].
//!
//! For tests only, `KCO_NOW` (an RFC 3339 UTC time such as `2026-12-01T02:00:00Z`) fixes it,
//! so that what kco writes is the same from run to run. Unset (or not such a time) it changes
//! nothing. Durations (waits, timeouts, progress) use `std::time::Instant` and are never
//! fixed; the age of a file on disk is measured against the real clock too, since the file
//! system stamps files with it. (The waits' `wait::Clock` is that monotonic clock, another
//! thing.)

use std::time::SystemTime;

/// The hidden, test-only variable that fixes the clock.
pub const FIXED_NOW_VAR: &str = "KCO_NOW";

/// The current time: the real clock, or `KCO_NOW` when it is set to an RFC 3339 time.
pub fn now() -> SystemTime {
    std::env::var(FIXED_NOW_VAR)
        .ok()
        .and_then(|v| humantime::parse_rfc3339(&v).ok())
        .unwrap_or_else(SystemTime::now)
}

/// The machine's clock, never fixed by `KCO_NOW`: for what is compared with times the
/// kernel or another party stamps with the real clock (a file's mtime, an HTTP date), and for
/// seeds that must differ from run to run. Everything kco writes as a time uses [`now`].
pub fn real_now() -> SystemTime {
    SystemTime::now()
}

/// [`now`] as RFC 3339 UTC to the second (`2026-12-01T02:00:00Z`).
pub fn now_rfc3339() -> String {
    rfc3339(now())
}

/// `t` as RFC 3339 UTC to the second.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}
