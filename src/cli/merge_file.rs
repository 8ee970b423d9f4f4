//! `kco merge-file`: git's merge driver for snapshot files (docs/merge.md). Reads three
//! versions, writes the merge over OURS (atomically), says on stderr what it decided, and exits
//! 0 when merged, 1 when a conflict is left between markers. Never touches a cluster.

use std::path::{Path, PathBuf};

use super::output::{Printer, Style};
use super::report_error::{error_line, hint_line};
use super::words;
use crate::engine::merge::{merge, Change, Conflict, Decision, How, Merged, Side};
use crate::error::{Error, Result, EXIT_ERROR, EXIT_OK};

/// Merge three versions of a snapshot file, partition by partition (a git merge driver)
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Registered as git's merge driver for snapshot files, git runs it when both \
sides of a merge changed one file:\n\n  \
echo 'snapshots/**/*.yaml merge=kco' >> .gitattributes\n  \
git config merge.kco.name 'kco snapshot files'\n  \
git config merge.kco.driver 'kco merge-file %O %A %B --path %P'\n\n\
A partition changed on one side only takes that side's offset. Changed differently on both \
sides, a deliberate change (an edit re-sealed with `kco fmt`: `capturedAt` kept) wins over an \
observation (a `kco snapshot`: `capturedAt` moved), and a line on stderr says so; of two \
snapshots the newer is the file. The metadata and config merge field by field the same way. \
Two deliberate, different changes of one partition are left between conflict markers. The \
result is re-sealed. A version kco cannot read as a sealed snapshot file is merged line by \
line, as git would. Hosted merge buttons do not run merge drivers: merge locally.\n\n\
Exit codes: 0 merged, 1 a conflict is left in OURS (or an error).\n\nExamples:\n  \
git config merge.kco.driver 'kco merge-file %O %A %B --path %P'\n  \
kco merge-file base.yaml ours.yaml theirs.yaml --path snapshots/prod/sink.yaml"
)]
pub struct Args {
    /// The common ancestor's version (git's %O)
    pub base: PathBuf,
    /// Our version (git's %A); the merge is written here
    pub ours: PathBuf,
    /// Their version (git's %B)
    pub theirs: PathBuf,
    /// The file's path in the repository, for messages (git's %P) [default: OURS]
    #[arg(long, value_name = "PATH")]
    pub path: Option<PathBuf>,
}

pub fn run(args: Args, p: &Printer) -> Result<u8> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let at = |path: &Path| cwd.join(path);
    let read = |path: &Path| {
        std::fs::read_to_string(at(path)).map_err(|source| Error::Read {
            path: at(path),
            source,
        })
    };
    let (base, ours, theirs) = (read(&args.base)?, read(&args.ours)?, read(&args.theirs)?);
    let named = args.path.clone().unwrap_or_else(|| args.ours.clone());
    let shown = crate::shown_path::shown(&at(&named), &cwd);
    let merged = merge(Path::new(&shown), &base, &ours, &theirs)
        .map_err(|e| Error::Other(format!("cannot merge {shown} line by line: {e}")))?;
    crate::fsutil::write_atomic(&at(&args.ours), merged.text.as_bytes()).map_err(|source| {
        Error::Write {
            path: at(&args.ours),
            source,
        }
    })?;
    report(p, &shown, &merged);
    Ok(if merged.conflicted() {
        EXIT_ERROR
    } else {
        EXIT_OK
    })
}

/// What the merge decided, on stderr (git shows it during the merge).
fn report(p: &Printer, shown: &str, merged: &Merged) {
    let err = |s: Style, t: &str| p.paint_err(s, t);
    match &merged.how {
        How::Merged {
            ours,
            theirs,
            decisions,
            conflicts,
        } => {
            for d in decisions {
                p.status(&decision(shown, d));
            }
            if conflicts.is_empty() {
                p.status(&format!(
                    "merged {shown} partition by partition (ours: {}, theirs: {}); checksum re-sealed",
                    change(*ours),
                    change(*theirs)
                ));
                return;
            }
            let names: Vec<String> = conflicts.iter().map(conflict).collect();
            eprintln!(
                "{}",
                error_line(
                    &err,
                    &format!(
                        "{shown}: both sides changed {} by hand, differently (left between conflict markers)",
                        names.join(", ")
                    )
                )
            );
            eprintln!("{}", hint_line(&err, &resolve_hint(shown)));
        }
        How::NewerSnapshot { kept, captured_at } => p.status(&format!(
            "merged {shown}: both sides are snapshots; kept the newer, {}'s (captured {})",
            kept.label(),
            captured_at.as_deref().unwrap_or("at no recorded time")
        )),
        How::AsText { why, conflicted } => {
            let what = format!(
                "{shown}: merged line by line, as git would: {}",
                why.message
            );
            if *conflicted {
                eprintln!(
                    "{}",
                    error_line(&err, &format!("{what} (conflicts left between markers)"))
                );
                eprintln!("{}", hint_line(&err, &resolve_hint(shown)));
            } else {
                p.warn(&format!("{what}; `kco validate` checks the result"));
            }
        }
    }
}

/// One partition where a deliberate change won over a snapshot's, or was already passed by it.
fn decision(shown: &str, d: &Decision) -> String {
    let side = match d.kept {
        Side::Ours => "our",
        Side::Theirs => "their",
    };
    let at = d.observed_at.as_deref().unwrap_or("at no recorded time");
    if d.passed {
        return format!(
            "{shown}: {}: kept the snapshot's {} (captured {at}): {side} change to {} moves it forward and the snapshot is already past it (a change moves a partition only in its own direction)",
            words::partition(&d.partition),
            words::offset(d.observed.as_ref()),
            words::offset(d.kept_offset.as_ref()),
        );
    }
    format!(
        "{shown}: {}: kept {side} change to {} over the snapshot's {} (captured {at})",
        words::partition(&d.partition),
        words::offset(d.kept_offset.as_ref()),
        words::offset(d.observed.as_ref()),
    )
}

fn change(c: Change) -> &'static str {
    match c {
        Change::Unchanged => "unchanged",
        Change::Observation => "a snapshot",
        Change::Change => "a change by hand",
    }
}

fn conflict(c: &Conflict) -> String {
    match c {
        Conflict::Partition(p) => words::partition(p),
        Conflict::Metadata(k) => format!("`metadata.{k}`"),
        Conflict::Config(k) => format!("`config.{k}`"),
    }
}

fn resolve_hint(shown: &str) -> String {
    format!(
        "keep one side between the markers in {shown}, then `kco fmt {shown}` re-seals it and `git add` marks it resolved"
    )
}
