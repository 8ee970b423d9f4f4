//! `kco fmt`: put hand-edited files back in canonical form and re-seal their checksums.

use std::path::PathBuf;

use super::output::Style;
use super::Context;
use crate::engine::fmt::{fmt, FmtOutcome};
use crate::error::{Result, EXIT_ERROR, EXIT_OK};

/// Rewrite snapshot files in canonical form and re-seal their checksums
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Re-sealing the checksum is how a hand edit is accepted. A file that does not \
parse, or has problems other than its checksum (duplicates, bad sink shapes, offsets that do \
not fit their connector class's shape), is reported with file:line and left untouched. Comments other than the first-line $schema are not kept.\n\n\
Exit codes: 0 success (--check: every file canonical and sealed), 1 any invalid file \
(--check: or any file that would change).\n\nExamples:\n  kco fmt snapshots/prod/orders.yaml\n  \
kco fmt --check"
)]
pub struct Args {
    /// Files or directories [default: every file of the snapshots directory, which kco names
    /// before it starts]
    pub paths: Vec<PathBuf>,
    /// Change nothing; fail if any file is not canonical or not sealed
    #[arg(long)]
    pub check: bool,
}

/// The paths given, or the snapshots directory.
pub(super) fn paths_or_default(paths: &[PathBuf], ctx: &Context) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![ctx.snapshots_dir()]
    } else {
        paths.iter().map(|p| ctx.cwd.join(p)).collect()
    }
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let paths = paths_or_default(&args.paths, ctx);
    let p = &ctx.printer;
    if args.paths.is_empty() && !p.is_structured() {
        // Re-sealing accepts every hand edit: say where, when no path said it.
        let dir = ctx.display_path(&paths[0]);
        let (doing, verb) = if args.check {
            ("checking", "check")
        } else {
            ("formatting and re-sealing", "format")
        };
        p.status(&format!(
            "No path given: {doing} every file of {}/ (name files or directories to {verb} only those).",
            dir.trim_end_matches('/')
        ));
    }
    let report = fmt(&paths, args.check, crate::shapes::registry())?;
    if p.is_structured() {
        p.structured(&report);
    } else {
        for f in &report.files {
            // A file re-sealed is what was asked: a status, silenced by --quiet. A file
            // --check finds not canonical is why the run fails: always said.
            if f.outcome != FmtOutcome::Formatted || (p.quiet && !args.check) {
                continue;
            }
            // What was done, or with --check what would be.
            let what = match (f.resealed, f.reformatted, args.check) {
                (true, true, false) => "checksum re-sealed, reformatted",
                (true, false, false) => "checksum re-sealed",
                (false, _, false) => "reformatted",
                (true, true, true) => "checksum to re-seal, layout to reformat",
                (true, false, true) => "checksum to re-seal",
                (false, _, true) => "layout to reformat",
            };
            let word = if args.check {
                "not canonical:"
            } else {
                "formatted:"
            };
            let style = if args.check { Style::Bad } else { Style::Good };
            p.line(&format!(
                "{} {} ({what})",
                p.paint(style, word),
                ctx.display_path(&f.path)
            ));
        }
        for problem in &report.problems {
            let shown = crate::model::file::FileProblem {
                path: PathBuf::from(ctx.display_path(&problem.path)),
                ..problem.clone()
            };
            p.line(&format!(
                "{} {shown} (left untouched)",
                p.paint(Style::Bad, "invalid:")
            ));
        }
    }
    let formatted = report.count(FmtOutcome::Formatted);
    let invalid = report.count(FmtOutcome::Invalid);
    let unchanged = report.count(FmtOutcome::Unchanged);
    p.status(&if args.check {
        format!(
            "{} to format, {unchanged} canonical, {invalid} invalid",
            super::words::count(formatted, "file")
        )
    } else {
        let resealed = report
            .files
            .iter()
            .filter(|f| f.outcome == FmtOutcome::Formatted && f.resealed)
            .count();
        let sealed = match resealed {
            0 => String::new(),
            n => format!(" ({} re-sealed)", super::words::count(n, "checksum")),
        };
        format!(
            "{} formatted{sealed}, {unchanged} unchanged, {invalid} invalid",
            super::words::count(formatted, "file")
        )
    });
    let failed = invalid > 0 || (args.check && formatted > 0);
    Ok(if failed { EXIT_ERROR } else { EXIT_OK })
}
