//! `apply --at`, `--commit` and `--changed-since` in words: which commit each file or change
//! came from, and which commits were records, not changes.

use std::path::PathBuf;

use super::output::{Printer, Style};
use super::Context;
use crate::engine::history::at::{
    CommitRef, FilesSource, Instead, MarkUse, RecordCommit, SourceFile,
};
use crate::engine::history::mark::AppliedMark;
use crate::engine::history::trailer::CommitKind;
use crate::engine::history::when::{short_date, short_id};

/// Paths as given, made absolute (git paths are resolved from the current directory).
pub fn absolute(paths: &[PathBuf], ctx: &Context) -> Vec<PathBuf> {
    paths.iter().map(|p| ctx.cwd.join(p)).collect()
}

/// `3f2a1b9c0d12 2026-11-29 02:00 "nightly"`.
pub fn commit_words(c: &CommitRef) -> String {
    format!(
        "{} {} \"{}\"",
        short_id(&c.commit),
        short_date(&c.date),
        c.summary
    )
}

/// A commit that says it is a record and brought no change: why `apply --commit` applies
/// nothing.
pub fn print_record(p: &Printer, r: &RecordCommit) {
    let what = match r.kind {
        CommitKind::Snapshot => "a snapshot: it observed the cluster",
        CommitKind::Apply => "the record of an apply",
        CommitKind::Undo => "the record of an undo",
        CommitKind::Change => "a change",
    };
    p.out(&format!(
        "Commit {} is {what} ({}), not a change anyone decided: nothing to apply.\n",
        commit_words(&r.commit),
        r.trailer
    ));
}

/// `2 partitions set, 1 removed`.
fn partitions(f: &SourceFile) -> Option<String> {
    let set = f.partitions_set?;
    let removed = f.partitions_removed.unwrap_or(0);
    let mut out = format!("{} set", super::words::count(set, "partition"));
    if set == 0 {
        out = format!("{} removed", super::words::count(removed, "partition"));
    } else if removed > 0 {
        out.push_str(&format!(", {removed} removed"));
    }
    Some(out)
}

/// `passed over 1 change not applied by then (3f2a1b9c0d12)`: the changes `--at` did not take.
pub fn not_applied(changes: &[CommitRef]) -> Option<String> {
    if changes.is_empty() {
        return None;
    }
    let ids: Vec<&str> = changes.iter().map(|c| short_id(&c.commit)).collect();
    Some(format!(
        "passed over {} not applied by then ({})",
        super::words::count(changes.len(), "change"),
        ids.join(", ")
    ))
}

/// `1 of 4 connectors; the others are left alone`, or `none of 4 connectors`.
fn taken(s: &FilesSource) -> String {
    let total =
        s.files.len() + s.unchanged.len() + s.removed.len() + s.observed.len() + s.never_had.len();
    let all = super::words::count(total, "connector");
    match s.files.len() {
        0 => format!("none of {all}"),
        n if n == total => format!("{n} of {all}"),
        n => format!("{n} of {all}; the others are left alone"),
    }
}

/// Where the files came from, before the plan.
pub fn print_source(p: &Printer, s: &FilesSource) {
    let mut out = match s.mode {
        "at" => format!(
            "Files as of `{}`: commit {}\n",
            s.rev,
            commit_words(&s.revision)
        ),
        "commit" => format!(
            "Changes of commit {}{}: {}\n",
            commit_words(&s.revision),
            match &s.parent {
                Some(c) => format!(" (from its first parent {})", short_id(&c.commit)),
                None => " (the first commit: from nothing)".into(),
            },
            taken(s)
        ),
        "unapplied" => format!(
            "Changes not yet applied, since the last one applied ({}, commit {}): {}\n",
            s.rev,
            commit_words(&s.revision),
            taken(s)
        ),
        _ => format!(
            "Changes since `{}` (commit {}): {}\n",
            s.rev,
            commit_words(&s.revision),
            taken(s)
        ),
    };
    if let Some(seen) = &s.remote_mark {
        let m = &seen.mark;
        let by = format!("{}, at {}", m.by, m.at);
        match seen.used {
            MarkUse::CoversHead => out.push_str(&format!(
                "  {}\n",
                applied_already(m, &s.revision.commit)
            )),
            MarkUse::Start => out.push_str(&format!(
                "  from the shared remote's mark: the changes up to {} were applied by another run ({by}), after this checkout's last apply record\n",
                short_id(&m.commit)
            )),
            MarkUse::Older => {}
            MarkUse::Unrelated => out.push_str(&format!(
                "  the shared remote's mark ({}, {by}) is not on this checkout's history: ignored\n",
                short_id(&m.commit)
            )),
        }
    }
    let width = s.files.iter().map(|f| f.file.len()).max().unwrap_or(0);
    for f in &s.files {
        let by = match (&f.changed_by, s.mode) {
            (Some(c), "at") => format!("last changed by {}", commit_words(c)),
            (Some(_), _) if f.changes.len() > 1 => format!(
                "changed by {}: {}",
                super::words::count(f.changes.len(), "commit"),
                f.changes
                    .iter()
                    .map(commit_words)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Some(c), _) => format!("changed by {}", commit_words(c)),
            (None, "at") => "unchanged since the first commit of the history".into(),
            (None, _) => "changed in the working tree (not committed)".into(),
        };
        let by = match partitions(f) {
            Some(n) => format!("{n}; {by}"),
            None => by,
        };
        let by = match not_applied(&f.not_applied) {
            Some(n) => format!("{by}; {n}"),
            None => by,
        };
        out.push_str(&format!(
            "  {:width$}  {}\n",
            f.file,
            p.paint(Style::Dim, &by)
        ));
    }
    if !s.unchanged.is_empty() {
        out.push_str(&format!(
            "  left alone (unchanged): {}\n",
            s.unchanged.join(", ")
        ));
    }
    if !s.removed.is_empty() {
        out.push_str(&format!(
            "  not applied (file removed; the cluster keeps its offsets): {}\n",
            s.removed.join(", ")
        ));
    }
    if !s.never_had.is_empty() {
        out.push_str(&format!(
            "  not applied (no position the cluster had: only changes no apply record covers): {}\n",
            s.never_had.join(", ")
        ));
    }
    if !s.observed.is_empty() {
        out.push_str(&format!(
            "  not applied (observed: kco rewrote the file from live, capturedAt moved): {}\n",
            s.observed.join(", ")
        ));
    }
    for r in &s.skipped {
        let label = if r.trailer.is_empty() {
            String::new()
        } else {
            format!("; {}", r.trailer)
        };
        out.push_str(&format!(
            "  not applied (observations only{label}): {}\n",
            commit_words(&r.commit)
        ));
    }
    for v in &s.invalid {
        let instead = match (v.instead, &v.superseded_by) {
            (Instead::Superseded, Some(c)) => format!(
                "superseded by {}: the change from the file's last valid version is applied once",
                short_id(&c.commit)
            ),
            (Instead::Superseded, None) => {
                "superseded by the working tree's version: the change from the file's last valid version is applied once".into()
            }
            (Instead::Base, _) => {
                "the changes start from it: its offsets are read as written, the seal not checked".into()
            }
            (Instead::Earlier, _) => {
                "the changes start from it: the file's last valid version before it stands".into()
            }
        };
        out.push_str(&format!(
            "  passed over (cannot be taken: {}): {} of {}; {instead}\n",
            v.problem,
            v.file,
            commit_words(&v.commit)
        ));
    }
    out.push('\n');
    p.out(&out);
}

/// `Applied already: ...`: the line that says a run has nothing to apply that another run did
/// not apply already (the apply-on-merge recipe records nothing after it).
pub fn applied_already(mark: &AppliedMark, head: &str) -> String {
    format!(
        "Applied already: the shared remote marks the changes up to {} as applied ({}, at {}); this checkout (HEAD {}) has nothing newer: nothing to apply.",
        short_id(&mark.commit),
        mark.by,
        mark.at,
        short_id(head)
    )
}
