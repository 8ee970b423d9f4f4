//! `fmt`: put hand-edited snapshot files back in canonical form and re-seal their checksums
//! (the way to say "this edit is intended"). A file that does not parse, or whose content is
//! invalid for other reasons than its checksum, is reported and left untouched.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::store;
use crate::error::{Error, Result};
use crate::model::file::{
    FileProblem, OffsetsFile, ProblemKind, DEFAULT_SCHEMA_REF, SCHEMA_COMMENT,
};
use crate::shapes::{check::check_file, Shapes};

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FmtOutcome {
    /// Already canonical and sealed.
    Unchanged,
    /// Rewritten (or, with `--check`, would be).
    Formatted,
    /// Not touched: it does not parse or has problems that re-sealing would hide.
    Invalid,
}

/// One file in the report.
#[derive(Debug, Clone, Serialize)]
pub struct FmtFile {
    #[serde(serialize_with = "crate::shown_path::serialize")]
    pub path: PathBuf,
    pub outcome: FmtOutcome,
    /// The checksum did not match the offsets (re-sealed, or would be).
    pub resealed: bool,
    /// The text was not in canonical form (rewritten, or would be).
    pub reformatted: bool,
}

/// What `fmt` did or, with `check`, would do.
#[derive(Debug, Clone, Serialize)]
pub struct FmtReport {
    /// Whether this was `--check` (nothing written).
    pub check: bool,
    pub files: Vec<FmtFile>,
    /// Why the invalid files were left untouched: `{path, line, message}`.
    pub problems: Vec<FileProblem>,
}

impl FmtReport {
    pub fn count(&self, outcome: FmtOutcome) -> usize {
        self.files.iter().filter(|f| f.outcome == outcome).count()
    }
}

/// Formats every `*.yaml`/`*.yml` file under `paths`; with `check`, writes nothing.
pub fn fmt(paths: &[PathBuf], check: bool, shapes: &Shapes) -> Result<FmtReport> {
    let found = store::find_files(paths).map_err(|p| Error::Files(vec![p]))?;
    let mut report = FmtReport {
        check,
        files: Vec::new(),
        problems: Vec::new(),
    };
    for path in found {
        let (outcome, resealed, reformatted) = match one(&path, check, shapes)? {
            Ok(x) => x,
            Err(problems) => {
                report.problems.extend(problems);
                (FmtOutcome::Invalid, false, false)
            }
        };
        report.files.push(FmtFile {
            path,
            outcome,
            resealed,
            reformatted,
        });
    }
    Ok(report)
}

type OneResult = std::result::Result<(FmtOutcome, bool, bool), Vec<FileProblem>>;

fn one(path: &Path, check: bool, shapes: &Shapes) -> Result<OneResult> {
    let (mut file, text) = match OffsetsFile::load(path) {
        Ok(x) => x,
        Err(p) => return Ok(Err(vec![p])),
    };
    let mut problems = file.check(path, &text);
    problems.extend(check_file(shapes, &file, path, &text).problems);
    let (stale, blocking): (Vec<FileProblem>, Vec<FileProblem>) = problems
        .into_iter()
        .partition(|p| p.kind == ProblemKind::ChecksumMismatch);
    if !blocking.is_empty() {
        return Ok(Err(blocking));
    }
    // `check` has compared the checksum already: it is computed again only when it changes.
    let resealed = !stale.is_empty();
    if resealed {
        file.seal();
    } else {
        crate::model::sort_entries(&mut file.offsets);
    }
    let schema_ref = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(SCHEMA_COMMENT))
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(DEFAULT_SCHEMA_REF);
    let canonical = file.render(schema_ref);
    if canonical == text {
        return Ok(Ok((FmtOutcome::Unchanged, false, false)));
    }
    // Reformatted: a line other than the checksum's differs (an edit that only needs its
    // checksum re-sealed is not a reformat).
    let reformatted = !but_checksum(&text).eq(but_checksum(&canonical));
    if !check {
        crate::fsutil::write_atomic(path, canonical.as_bytes()).map_err(|e| Error::Write {
            path: path.to_path_buf(),
            source: e,
        })?;
    }
    Ok(Ok((FmtOutcome::Formatted, resealed, reformatted)))
}

/// A file's lines but its checksum's.
fn but_checksum(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.starts_with("checksum:"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::Metadata;
    use crate::model::{ConnectorType, OffsetEntry};

    fn sample() -> String {
        OffsetsFile::new(
            Metadata::new("c", "a", ConnectorType::Sink),
            vec![OffsetEntry::sink("t", 0, 1), OffsetEntry::sink("t", 1, 2)],
            None,
        )
        .render("s.json")
    }

    #[test]
    fn reseals_and_reorders_a_hand_edit_and_check_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.yaml");
        // Edit an offset and swap the two partitions, as a person might.
        let text = sample().replace("kafka_offset: 2", "kafka_offset: 20");
        let (head, rest) = text.split_once("offsets:\n").unwrap();
        let (items, tail) = rest.split_once("checksum:").unwrap();
        let split = items[1..].find("- partition").unwrap() + 1;
        let (first, second) = items.split_at(split);
        let edited = format!("{head}offsets:\n{second}{first}checksum:{tail}");
        std::fs::write(&p, &edited).unwrap();

        let r = fmt(std::slice::from_ref(&p), true, Shapes::builtin()).unwrap();
        assert_eq!(r.files[0].outcome, FmtOutcome::Formatted);
        assert!(r.files[0].resealed && r.files[0].reformatted);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), edited);
        // An edit of a value only needs its checksum re-sealed: not a reformat.
        std::fs::write(&p, &text).unwrap();
        let r = fmt(std::slice::from_ref(&p), true, Shapes::builtin()).unwrap();
        assert!(
            r.files[0].resealed && !r.files[0].reformatted,
            "{:?}",
            r.files[0]
        );

        let r = fmt(std::slice::from_ref(&p), false, Shapes::builtin()).unwrap();
        assert_eq!(r.files[0].outcome, FmtOutcome::Formatted);
        let now = std::fs::read_to_string(&p).unwrap();
        assert!(now.starts_with("# yaml-language-server: $schema=s.json\n"));
        let (f, t) = OffsetsFile::load(&p).unwrap();
        assert!(f.check(&p, &t).is_empty() && f.is_canonical_text(&t));
        assert!(now.find("kafka_partition: 0").unwrap() < now.find("kafka_partition: 1").unwrap());
        assert!(now.contains("kafka_offset: 20"));
        assert_eq!(
            fmt(&[p], true, Shapes::builtin()).unwrap().files[0].outcome,
            FmtOutcome::Unchanged
        );
    }

    #[test]
    fn unparsable_or_invalid_files_are_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("broken.yaml");
        std::fs::write(&broken, "apiVersion: kco/v1\nkind: [\n").unwrap();
        let dup = dir.path().join("dup.yaml");
        let text = sample().replace("kafka_partition: 1", "kafka_partition: 0");
        std::fs::write(&dup, &text).unwrap();
        let r = fmt(&[dir.path().to_path_buf()], false, Shapes::builtin()).unwrap();
        assert_eq!(r.count(FmtOutcome::Invalid), 2);
        assert!(
            r.problems.iter().all(|p| p.line.is_some()),
            "{:?}",
            r.problems
        );
        assert!(r
            .problems
            .iter()
            .any(|p| p.message.contains("duplicate partition")));
        assert_eq!(std::fs::read_to_string(&dup).unwrap(), text);
    }
}
