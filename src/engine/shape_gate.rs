//! The shape check of the files an apply (or undo) is about to send: an offset that does not
//! fit its connector class's shape stops the apply before any request, unless
//! `--allow-unknown-shape` names the connector.

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::LoadedFile;
use crate::error::{Error, Result};
use crate::model::file::FileProblem;
use crate::shapes::{check::check_file, Shapes};

/// The connectors whose misfits are let through: names or globs.
#[derive(Debug, Clone, Default)]
pub struct AllowUnknownShape {
    set: Option<GlobSet>,
}

impl AllowUnknownShape {
    pub fn new(patterns: &[String]) -> Result<Self> {
        if patterns.is_empty() {
            return Ok(Self::default());
        }
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(Glob::new(p).map_err(|e| {
                Error::Usage(format!("--allow-unknown-shape: bad pattern `{p}`: {e}"))
            })?);
        }
        let set = b
            .build()
            .map_err(|e| Error::Usage(format!("--allow-unknown-shape: {e}")))?;
        Ok(AllowUnknownShape { set: Some(set) })
    }

    fn allows(&self, name: &str) -> bool {
        self.set.as_ref().is_some_and(|s| s.is_match(name))
    }
}

/// Every misfit of `f`'s offsets, unless `allow` names the connector (its name in the file,
/// or the one it is applied to).
pub fn misfits(
    shapes: &Shapes,
    f: &LoadedFile,
    target: &str,
    allow: &AllowUnknownShape,
) -> Vec<FileProblem> {
    if allow.allows(&f.file.metadata.name) || allow.allows(target) {
        return Vec::new();
    }
    check_file(shapes, &f.file, &f.path, &f.text).problems
}

/// The connectors `allow` let through although their offsets miss their class's shape:
/// each target (of the `(target, file)` pairs applied) with how many misfits it has (for a
/// warning).
pub fn allowed<'a>(
    shapes: &Shapes,
    files: impl IntoIterator<Item = (&'a str, &'a LoadedFile)>,
    allow: &AllowUnknownShape,
) -> Vec<(String, usize)> {
    if allow.set.is_none() {
        return Vec::new();
    }
    files
        .into_iter()
        .filter_map(|(target, file)| {
            let n = check_file(shapes, &file.file, &file.path, &file.text)
                .problems
                .len();
            (n > 0).then(|| (target.to_string(), n))
        })
        .collect()
}
