//! How kco shows a path, in text and in JSON alike: relative to the current directory when it
//! is inside it (`.` for the directory itself), absolute otherwise. Report fields that hold a
//! path serialize through [`serialize`] (or [`option`], [`list`]), so that `-o json` writes
//! the path the text shows.

use std::path::{Path, PathBuf};

use serde::Serializer;

/// `p` relative to `cwd` when inside it.
pub fn shown(p: &Path, cwd: &Path) -> String {
    match p.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// `p` relative to the process's current directory when inside it.
pub fn from_here(p: &Path) -> String {
    match std::env::current_dir() {
        Ok(cwd) => shown(p, &cwd),
        Err(_) => p.display().to_string(),
    }
}

/// `serialize_with` for a path field.
pub fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&from_here(p))
}

/// `serialize_with` for an optional path field.
pub fn option<S: Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => serialize(p, s),
        None => s.serialize_none(),
    }
}

/// `serialize_with` for a list of paths.
pub fn list<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| from_here(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_the_directory_relative_outside_absolute() {
        let cwd = Path::new("/repo");
        assert_eq!(
            shown(Path::new("/repo/snapshots/a/x.yaml"), cwd),
            "snapshots/a/x.yaml"
        );
        assert_eq!(shown(Path::new("/repo"), cwd), ".");
        assert_eq!(shown(Path::new("/repository/x"), cwd), "/repository/x");
        assert_eq!(shown(Path::new("/elsewhere/x"), cwd), "/elsewhere/x");
        assert_eq!(shown(Path::new("snapshots/x"), cwd), "snapshots/x");
    }
}
