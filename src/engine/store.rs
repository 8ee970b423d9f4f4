//! The snapshot files on disk: where a connector's file lives, and loading a set of files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Error;
use crate::model::file::{FileProblem, OffsetsFile, ProblemKind};
use crate::model::FileLines;

/// `<dir>/<cluster>/<connector>.yaml`; characters unsafe in a file name are percent-encoded
/// (the real name is in the file's metadata).
pub fn file_path(dir: &Path, cluster: &str, connector: &str) -> PathBuf {
    cluster_dir(dir, cluster).join(format!("{}.yaml", safe_name(connector)))
}

/// The connector whose file [`file_path`] names `path`: its file name decoded, or `None`
/// for a name that `file_path` would not have written (not `.yaml`, or not encoded so).
pub fn connector_of(path: &Path) -> Option<String> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".yaml")?;
    let name = percent_encoding::percent_decode_str(stem)
        .decode_utf8()
        .ok()?
        .into_owned();
    (!name.is_empty() && safe_name(&name) == stem).then_some(name)
}

/// The connector that `typed` most likely meant, among those with a file in `cluster_dir`
/// (a typo of a name: a few edits away); `None` when none is close.
pub fn guess_filed(cluster_dir: &Path, typed: &str) -> Option<String> {
    let filed: Vec<String> = std::fs::read_dir(cluster_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| connector_of(&e.path()))
        .collect();
    crate::text::closest(&filed, typed).map(str::to_string)
}

/// `; did you mean `NAME`?` for a connector name with no file in `cluster_dir`, when one
/// with a file is close; else nothing.
pub fn did_you_mean(cluster_dir: &Path, typed: &str) -> String {
    guess_filed(cluster_dir, typed)
        .map(|g| format!("; did you mean `{g}`?"))
        .unwrap_or_default()
}

/// Writes the format's JSON Schema at `<dir>/connector-offsets-v1.json`, where the `$schema`
/// line of the files under `<dir>` points, unless it is there already as this kco writes it.
/// Returns whether it was written.
pub fn write_schema(dir: &Path) -> crate::error::Result<bool> {
    let path = dir.join(crate::model::file::SCHEMA_FILE);
    let schema = crate::model::file::schema_json();
    if std::fs::read_to_string(&path).is_ok_and(|t| t == schema) {
        return Ok(false);
    }
    crate::fsutil::write_atomic(&path, schema.as_bytes())
        .map_err(|source| Error::Write { path, source })?;
    Ok(true)
}

/// `<dir>/<cluster>/`, the directory of one cluster's files.
pub fn cluster_dir(dir: &Path, cluster: &str) -> PathBuf {
    dir.join(safe_name(cluster))
}

fn safe_name(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        let ok = c.is_ascii_alphanumeric() || c == '-' || c == '_' || (c == '.' && i > 0);
        if ok {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// A parsed snapshot file with its text (for line numbers).
#[derive(Debug, Clone)]
pub struct LoadedFile {
    pub path: PathBuf,
    pub file: OffsetsFile,
    pub text: String,
    /// Where the lines a unified diff shows are in the text, kept when the text is let go.
    pub lines: Option<Arc<FileLines>>,
}

impl LoadedFile {
    /// Lets the text go, once no problem can point into it any more (a wide connector's
    /// file is 10 MB), keeping where the lines a unified diff shows are in it (8 bytes an
    /// entry).
    pub fn forget_text(&mut self) {
        self.lines = Some(self.lines());
        self.text = String::new();
    }

    /// Where the lines a unified diff shows are in the file.
    pub fn lines(&self) -> Arc<FileLines> {
        match &self.lines {
            Some(lines) => lines.clone(),
            None => Arc::new(FileLines::of(&self.file.offsets, &self.text)),
        }
    }
}

/// Every `*.yaml`/`*.yml` file under `paths` (files as given, directories recursively, in
/// sorted order).
pub fn find_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileProblem> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut seen = Vec::new();
            walk(p, &mut out, &mut seen).map_err(|(at, e)| {
                FileProblem::new(
                    ProblemKind::Unreadable,
                    at,
                    None,
                    format!("cannot list: {e}"),
                )
            })?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(FileProblem::new(
                ProblemKind::NotFound,
                p,
                None,
                "no such file or directory",
            ));
        }
    }
    Ok(out)
}

/// A directory's files; `seen` holds the real paths of the directories above it, so that a
/// symbolic link back to one of them is reported instead of followed forever.
fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut Vec<PathBuf>,
) -> Result<(), (PathBuf, std::io::Error)> {
    let err = |e| (dir.to_path_buf(), e);
    let real = std::fs::canonicalize(dir).map_err(err)?;
    if let Some(above) = seen.iter().find(|s| **s == real) {
        let e = std::io::Error::other(format!(
            "symbolic link loop: it leads back to {}",
            above.display()
        ));
        return Err(err(e));
    }
    seen.push(real);
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .and_then(|d| d.collect::<Result<_, _>>())
        .map_err(err)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, out, seen)?;
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
    seen.pop();
    Ok(())
}

/// Loads and checks every file under `paths`. Returns the files that parsed and every problem
/// found (syntax, schema, shapes, checksums); callers that mutate must stop on any problem.
pub fn load_files(paths: &[PathBuf]) -> (Vec<LoadedFile>, Vec<FileProblem>) {
    let files = match find_files(paths) {
        Ok(f) => f,
        Err(p) => return (Vec::new(), vec![p]),
    };
    let mut loaded = Vec::new();
    let mut problems = Vec::new();
    for path in files {
        match OffsetsFile::load(&path) {
            Ok((file, text)) => {
                problems.extend(file.check(&path, &text));
                loaded.push(LoadedFile {
                    path,
                    file,
                    text,
                    lines: None,
                });
            }
            Err(p) => problems.push(p),
        }
    }
    // Two files for one connector of one cluster are ambiguous.
    let mut seen = std::collections::BTreeMap::new();
    for f in &loaded {
        let key = (
            f.file.metadata.cluster.clone(),
            f.file.metadata.name.clone(),
        );
        if let Some(first) = seen.insert(key, f.path.clone()) {
            let line = f
                .text
                .lines()
                .position(|l| l.trim_start().starts_with("name:"))
                .map(|i| i + 1);
            problems.push(FileProblem::new(
                ProblemKind::DuplicateConnector,
                &f.path,
                line,
                format!(
                    "connector `{}` of cluster `{}` is also in {}",
                    f.file.metadata.name,
                    f.file.metadata.cluster,
                    first.display()
                ),
            ));
        }
    }
    (loaded, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_names_are_encoded() {
        let p = file_path(Path::new("s"), "a", "../evil/x y");
        assert_eq!(p, PathBuf::from("s/a/%2E.%2Fevil%2Fx%20y.yaml"));
        assert_eq!(
            file_path(Path::new("s"), "a", "orders.v1"),
            PathBuf::from("s/a/orders.v1.yaml")
        );
    }

    #[test]
    fn a_file_name_gives_back_its_connector_and_other_names_none() {
        for name in ["../evil/x y", "orders.v1", "café-ü", "100%", "a.b"] {
            let p = file_path(Path::new("s"), "a", name);
            assert_eq!(connector_of(&p).as_deref(), Some(name), "{}", p.display());
        }
        // Not a name kco writes: another extension, a raw `%`, an unencoded leading dot.
        for other in [
            "x.yml",
            "x.json",
            "a%zz.yaml",
            ".x.yaml",
            "a b.yaml",
            ".yaml",
        ] {
            assert_eq!(connector_of(Path::new(other)), None, "{other}");
        }
    }
}

/// The cluster a command works on, and whether the user named it (`--cluster`, or
/// `KCO_CLUSTER`) rather than it being the configured default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetCluster {
    pub name: String,
    pub named: bool,
}

/// A file belongs to the cluster it was captured on: using it on another one (to apply or to
/// compare) needs that cluster named, so that a default cluster never receives, or is judged
/// against, another cluster's connectors.
pub fn belongs_to(files: &[LoadedFile], target: &TargetCluster) -> crate::error::Result<()> {
    if target.named {
        return Ok(());
    }
    match files
        .iter()
        .find(|f| f.file.metadata.cluster != target.name)
    {
        Some(f) => Err(Error::OtherCluster {
            file: f.path.clone(),
            file_cluster: f.file.metadata.cluster.clone(),
            target: target.name.clone(),
        }),
        None => Ok(()),
    }
}
