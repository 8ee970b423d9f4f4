//! Files at a git revision, read with the `git` binary: which snapshot files a revision has
//! under a path, and their text. Every error names the revision and the path.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// A revision resolved in one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// As the user gave it (`origin/main`).
    pub rev: String,
    /// The commit it names.
    pub commit: String,
    /// The repository's top-level directory.
    pub toplevel: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> std::result::Result<Vec<u8>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// The nearest existing directory at or above `path`, and what lies below it.
fn existing_base(path: &Path) -> (PathBuf, PathBuf) {
    let mut base = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    while !base.is_dir() {
        match (base.file_name().map(|n| n.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let rest: PathBuf = rest.into_iter().rev().collect();
    (base, rest)
}

impl Revision {
    /// Resolves `rev` in the repository holding `path` (which need not exist any more).
    pub fn resolve(path: &Path, rev: &str) -> Result<Self> {
        let (dir, _) = existing_base(path);
        let top = git(&dir, &["rev-parse", "--show-toplevel"]).map_err(|e| {
            Error::Other(format!(
                "{} is not in a git repository (`--base` compares git revisions): {e}",
                path.display()
            ))
        })?;
        let toplevel = PathBuf::from(String::from_utf8_lossy(&top).trim());
        let toplevel = toplevel.canonicalize().unwrap_or(toplevel);
        let commit = git(
            &toplevel,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .map_err(|_| {
            Error::Usage(format!(
                "unknown git revision `{rev}` in {}",
                toplevel.display()
            ))
        })?;
        Ok(Revision {
            rev: rev.to_string(),
            commit: String::from_utf8_lossy(&commit).trim().to_string(),
            toplevel,
        })
    }

    /// `path` relative to the repository's top level, `/`-separated.
    pub fn repo_path(&self, path: &Path) -> Result<String> {
        let (dir, rest) = existing_base(path);
        let dir = dir.canonicalize().unwrap_or(dir);
        let rel = dir.join(rest);
        let rel = rel.strip_prefix(&self.toplevel).map_err(|_| {
            Error::Usage(format!(
                "{} is outside the git repository {}",
                path.display(),
                self.toplevel.display()
            ))
        })?;
        let parts: Vec<String> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        Ok(parts.join("/"))
    }

    /// The `*.yaml`/`*.yml` files the revision has at or under `path` (repository-relative),
    /// sorted.
    pub fn list(&self, path: &Path) -> Result<Vec<String>> {
        let rel = self.repo_path(path)?;
        let spec = if rel.is_empty() { ".".to_string() } else { rel };
        let out = git(
            &self.toplevel,
            &[
                "ls-tree",
                "-r",
                "-z",
                "--name-only",
                &self.commit,
                "--",
                &spec,
            ],
        )
        .map_err(|e| {
            Error::Other(format!(
                "cannot list {spec} at revision `{}`: {e}",
                self.rev
            ))
        })?;
        let mut files: Vec<String> = out
            .split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .filter(|s| {
                let hidden = s.split('/').any(|part| part.starts_with('.'));
                (s.ends_with(".yaml") || s.ends_with(".yml")) && !hidden
            })
            .collect();
        files.sort();
        Ok(files)
    }

    /// The text of a repository-relative file at the revision.
    pub fn read(&self, repo_path: &str) -> Result<String> {
        let out = git(
            &self.toplevel,
            &["show", &format!("{}:{repo_path}", self.commit)],
        )
        .map_err(|e| {
            Error::Other(format!(
                "cannot read {repo_path} at revision `{}`: {e}",
                self.rev
            ))
        })?;
        String::from_utf8(out).map_err(|_| {
            Error::Other(format!(
                "{repo_path} at revision `{}` is not UTF-8 text",
                self.rev
            ))
        })
    }

    /// How a file at this revision is named in messages: `REV:path`.
    pub fn label(&self, repo_path: &str) -> PathBuf {
        PathBuf::from(format!("{}:{repo_path}", self.rev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
    }

    #[test]
    fn lists_and_reads_files_at_a_revision() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        sh(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("snap/a")).unwrap();
        std::fs::write(root.join("snap/a/x.yaml"), "one\n").unwrap();
        std::fs::write(root.join("snap/a/notes.txt"), "no\n").unwrap();
        sh(root, &["add", "."]);
        sh(root, &["commit", "-q", "-m", "one"]);
        std::fs::remove_file(root.join("snap/a/x.yaml")).unwrap();

        let r = Revision::resolve(&root.join("snap/a/x.yaml"), "HEAD").unwrap();
        assert_eq!(r.commit.len(), 40);
        assert_eq!(
            r.repo_path(&root.join("snap/a/x.yaml")).unwrap(),
            "snap/a/x.yaml"
        );
        assert_eq!(r.list(&root.join("snap")).unwrap(), vec!["snap/a/x.yaml"]);
        assert_eq!(
            r.list(&root.join("snap/a/x.yaml")).unwrap(),
            vec!["snap/a/x.yaml"]
        );
        assert_eq!(r.read("snap/a/x.yaml").unwrap(), "one\n");
        let e = r.read("snap/a/nope.yaml").unwrap_err().to_string();
        assert!(
            e.contains("snap/a/nope.yaml") && e.contains("`HEAD`"),
            "{e}"
        );

        let e = Revision::resolve(root, "no-such-branch")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`no-such-branch`"), "{e}");
        let outside = tempfile::tempdir().unwrap();
        let e = Revision::resolve(outside.path(), "HEAD")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not in a git repository"), "{e}");
    }
}
