//! `apply --at` and `--changed-since` in words: which commit each file came from.

use std::path::PathBuf;

use super::output::{Printer, Style};
use super::Context;
use crate::engine::history::at::{CommitRef, FilesSource};
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

/// Where the files came from, before the plan.
pub fn print_source(p: &Printer, s: &FilesSource) {
    let mut out = match s.mode {
        "at" => format!(
            "Files as of `{}`: commit {}\n",
            s.rev,
            commit_words(&s.revision)
        ),
        _ => format!(
            "Files changed since `{}` (commit {}): {} of {}; the others are left alone\n",
            s.rev,
            commit_words(&s.revision),
            s.files.len(),
            super::words::count(
                s.files.len() + s.unchanged.len() + s.removed.len(),
                "connector"
            )
        ),
    };
    let width = s.files.iter().map(|f| f.file.len()).max().unwrap_or(0);
    for f in &s.files {
        let by = match (&f.changed_by, s.mode) {
            (Some(c), "at") => format!("last changed by {}", commit_words(c)),
            (Some(c), _) => format!("changed by {}", commit_words(c)),
            (None, "at") => "unchanged since the first commit of the history".into(),
            (None, _) => "changed in the working tree (not committed)".into(),
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
    out.push('\n');
    p.out(&out);
}
