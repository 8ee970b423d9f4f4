//! `validate`: offline checks of snapshot files: YAML syntax, schema (unknown fields),
//! apiVersion/kind, checksum, duplicate partitions, sink shapes, primitive-only source values,
//! plain secrets in a captured config, two files for one connector, and offsets that do not
//! fit their connector class's shape (`schemas/shapes.yaml`).

use std::path::{Path, PathBuf};

use crate::shapes::{check::check_file, Shapes};

use serde::Serialize;

use super::store;
use crate::model::file::FileProblem;

/// What `validate` found.
#[derive(Debug, Clone, Serialize)]
pub struct ValidateReport {
    /// How many files were read.
    pub files: usize,
    /// How many of them had no problem.
    pub valid: usize,
    /// Every problem, in file order: `{path, line, message}` (`line` is `null` when the file
    /// could not be read at all).
    pub problems: Vec<FileProblem>,
    /// Source connector classes whose offsets were not checked against a shape (the table
    /// does not know them), with the files that have them.
    pub unchecked: Vec<UncheckedClass>,
}

/// A connector class the shape table does not know.
#[derive(Debug, Clone, Serialize)]
pub struct UncheckedClass {
    /// `connector.class`, or `(no connectorClass)` for files that do not record it.
    pub class: String,
    #[serde(serialize_with = "crate::shown_path::list")]
    pub files: Vec<PathBuf>,
}

/// Adds `file`'s unknown class, if any, to `unchecked`.
pub fn note_unchecked(unchecked: &mut Vec<UncheckedClass>, class: Option<String>, file: &Path) {
    let Some(class) = class else { return };
    match unchecked.iter_mut().find(|u| u.class == class) {
        Some(u) => u.files.push(file.to_path_buf()),
        None => unchecked.push(UncheckedClass {
            class,
            files: vec![file.to_path_buf()],
        }),
    }
}

impl ValidateReport {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks every `*.yaml`/`*.yml` file under `paths`.
pub fn validate(paths: &[PathBuf], shapes: &Shapes) -> ValidateReport {
    let files = match store::find_files(paths) {
        Ok(f) => f,
        Err(p) => {
            return ValidateReport {
                files: 0,
                valid: 0,
                problems: vec![p],
                unchecked: Vec::new(),
            }
        }
    };
    let (loaded, mut problems) = store::load_files(&files);
    let mut unchecked = Vec::new();
    for f in &loaded {
        let c = check_file(shapes, &f.file, &f.path, &f.text);
        problems.extend(c.problems);
        note_unchecked(&mut unchecked, c.unchecked, &f.path);
    }
    // In file order (a stable sort: each file's problems keep the order they were found in).
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let bad: std::collections::BTreeSet<&PathBuf> = problems.iter().map(|p| &p.path).collect();
    ValidateReport {
        files: files.len(),
        valid: files.iter().filter(|f| !bad.contains(f)).count(),
        problems,
        unchecked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::file::{Metadata, OffsetsFile, DEFAULT_SCHEMA_REF};
    use crate::model::ConnectorType;
    use serde_json::json;

    fn write(dir: &std::path::Path, name: &str, connector: &str) -> PathBuf {
        let f = OffsetsFile::new(
            Metadata::new(connector, "a", ConnectorType::Source),
            serde_json::from_value(json!([{"partition":{"f":"x"},"offset":{"p":1}}])).unwrap(),
            None,
        );
        let p = dir.join(name);
        std::fs::write(&p, f.render(DEFAULT_SCHEMA_REF)).unwrap();
        p
    }

    #[test]
    fn counts_valid_files_and_names_every_problem() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "one.yaml", "one");
        let two = write(dir.path(), "two.yaml", "two");
        let text = std::fs::read_to_string(&two).unwrap();
        std::fs::write(&two, text.replace("p: 1", "p: 2")).unwrap();
        write(dir.path(), "copy.yaml", "one");
        std::fs::write(dir.path().join("notes.txt"), "not yaml, ignored").unwrap();
        let r = validate(&[dir.path().to_path_buf()], Shapes::builtin());
        assert_eq!((r.files, r.valid), (3, 1), "{:?}", r.problems);
        assert!(r
            .problems
            .iter()
            .any(|p| p.path == two && p.message.contains("checksum mismatch") && p.line.is_some()));
        assert!(r.problems.iter().any(|p| p.message.contains("is also in")));
    }

    #[test]
    fn a_missing_path_is_a_problem() {
        let r = validate(&[PathBuf::from("/nonexistent/kco")], Shapes::builtin());
        assert!(!r.is_valid());
        assert!(r.problems[0].message.contains("no such file"));
    }
}
