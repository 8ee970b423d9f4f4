//! Files at a git revision, read with libgit2 (the `git2` crate): which snapshot files a
//! revision has under a path, and their text. Every error names the revision and the path.
//! `--base`, `--at`, `--changed-since`, `log` and `show` all read git through here.

use std::path::{Component, Path, PathBuf};

use git2::{ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};

use crate::engine::store::LoadedFile;
use crate::error::{Error, Result};
use crate::model::file::{FileProblem, OffsetsFile};

/// A repository opened at the one holding a path.
pub struct Repo {
    git: Repository,
    /// The repository's top-level directory (canonical).
    pub toplevel: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Repo({})", self.toplevel.display())
    }
}

/// A revision resolved in one repository.
#[derive(Debug)]
pub struct Revision {
    /// As the user gave it (`origin/main`, `HEAD~3`, `2026-11-29 02:00`).
    pub rev: String,
    /// The commit it names (40 hex digits).
    pub commit: String,
    pub repo: Repo,
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

/// The error for a repository git distrusts (`safe.directory`): it exists, but another user
/// owns it (how CI runners and containers mount a checkout). Names the owner and both fixes;
/// libgit2 reads `safe.directory` from the global and system git config, as git does.
fn not_owned(path: &Path, dir: &Path) -> Error {
    // The repository is the nearest directory at or above `dir` holding `.git`.
    let repo = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir);
    Error::NotTrusted {
        path: path.to_path_buf(),
        repo: repo.to_path_buf(),
        owner: owner_of(repo),
        me: current_uid(),
    }
}

#[cfg(unix)]
fn owner_of(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
fn owner_of(_dir: &Path) -> Option<u32> {
    None
}

#[cfg(target_os = "linux")]
fn current_uid() -> Option<u32> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    Some(unsafe { libc::geteuid() })
}

#[cfg(not(target_os = "linux"))]
fn current_uid() -> Option<u32> {
    None
}

/// Whether a repository-relative path is a snapshot file (`*.yaml`/`*.yml`, nothing hidden).
pub fn is_snapshot_path(p: &str) -> bool {
    let hidden = p.split('/').any(|part| part.starts_with('.'));
    (p.ends_with(".yaml") || p.ends_with(".yml")) && !hidden
}

/// Whether `dir` is in a git work tree (one another user owns counts: it is there).
pub fn in_repository(dir: &Path) -> bool {
    match Repository::discover(dir) {
        Ok(_) => true,
        Err(e) => e.code() == git2::ErrorCode::Owner,
    }
}

/// `git init` of `dir`: a new repository, its branch unborn.
pub fn init_repository(dir: &Path) -> Result<()> {
    Repository::init(dir).map(drop).map_err(|e| {
        Error::Other(format!(
            "cannot create a git repository in {}: {}",
            dir.display(),
            e.message()
        ))
    })
}

impl Repo {
    /// Opens the repository holding `path` (which need not exist any more).
    pub fn discover(path: &Path) -> Result<Repo> {
        let (dir, _) = existing_base(path);
        let git = Repository::discover(&dir).map_err(|e| {
            if e.code() == git2::ErrorCode::Owner {
                return not_owned(path, &dir);
            }
            Error::Other(format!(
                "{} is not in a git repository, which kco reads and commits revisions with: {} (hint: `git init` in the project's directory makes one, or run kco in a clone)",
                path.display(),
                e.message()
            ))
        })?;
        let top = git.workdir().map(Path::to_path_buf).ok_or_else(|| {
            Error::Other(format!(
                "{} is in a bare git repository, which has no working tree",
                path.display()
            ))
        })?;
        let toplevel = top.canonicalize().unwrap_or(top);
        Ok(Repo { git, toplevel })
    }

    /// The libgit2 handle, for the history walks.
    pub fn git(&self) -> &Repository {
        &self.git
    }

    /// The commit `rev` names (a branch, tag, commit, `HEAD~3`, ...).
    pub fn resolve(&self, rev: &str) -> Result<Oid> {
        self.git
            .revparse_single(rev)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
            .map_err(|_| {
                Error::Usage(format!(
                    "unknown git revision `{rev}` in {}",
                    self.toplevel.display()
                ))
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

    fn tree(&self, commit: Oid, rev: &str) -> Result<Tree<'_>> {
        self.git
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| Error::Other(format!("cannot read revision `{rev}`: {}", e.message())))
    }

    /// The snapshot files the commit has at or under `rel` (repository-relative), sorted.
    pub fn list(&self, commit: Oid, rev: &str, rel: &str) -> Result<Vec<String>> {
        let tree = self.tree(commit, rev)?;
        let entry = if rel.is_empty() {
            None
        } else {
            match tree.get_path(Path::new(rel)) {
                Ok(e) => Some(e),
                Err(_) => return Ok(Vec::new()),
            }
        };
        let mut files = Vec::new();
        let sub;
        let walk_root = match &entry {
            Some(e) if e.kind() == Some(ObjectType::Blob) => {
                if is_snapshot_path(rel) {
                    files.push(rel.to_string());
                }
                return Ok(files);
            }
            Some(e) => {
                sub = self.git.find_tree(e.id()).map_err(|e| {
                    Error::Other(format!(
                        "cannot list {rel} at revision `{rev}`: {}",
                        e.message()
                    ))
                })?;
                &sub
            }
            None => &tree,
        };
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        walk_root
            .walk(TreeWalkMode::PreOrder, |dir, e| {
                if e.kind() == Some(ObjectType::Blob) {
                    let p = format!("{prefix}{dir}{}", e.name().unwrap_or_default());
                    if is_snapshot_path(&p) {
                        files.push(p);
                    }
                }
                TreeWalkResult::Ok
            })
            .map_err(|e| {
                Error::Other(format!(
                    "cannot list {rel} at revision `{rev}`: {}",
                    e.message()
                ))
            })?;
        files.sort();
        Ok(files)
    }

    /// The text of a repository-relative file at the commit.
    pub fn read(&self, commit: Oid, rev: &str, repo_path: &str) -> Result<String> {
        let tree = self.tree(commit, rev)?;
        let cannot = |why: String| {
            Error::Other(format!(
                "cannot read {repo_path} at revision `{rev}`: {why}"
            ))
        };
        let entry = tree
            .get_path(Path::new(repo_path))
            .map_err(|_| cannot("no such file at that revision".into()))?;
        self.blob_text(entry.id(), &format!("{repo_path} at revision `{rev}`"))
    }

    /// A blob's text; `what` names it in the error.
    pub fn blob_text(&self, id: Oid, what: &str) -> Result<String> {
        let blob = self
            .git
            .find_blob(id)
            .map_err(|e| Error::Other(format!("cannot read {what}: {}", e.message())))?;
        String::from_utf8(blob.content().to_vec())
            .map_err(|_| Error::Other(format!("{what} is not UTF-8 text")))
    }
}

/// Files read at a revision (repository-relative path and file), and the problems found.
pub type AtRevision = (Vec<(String, LoadedFile)>, Vec<FileProblem>);

impl Revision {
    /// Resolves `rev` in the repository holding `path` (which need not exist any more).
    pub fn resolve(path: &Path, rev: &str) -> Result<Self> {
        let repo = Repo::discover(path)?;
        let commit = repo.resolve(rev)?;
        Ok(Revision {
            rev: rev.to_string(),
            commit: commit.to_string(),
            repo,
        })
    }

    pub fn oid(&self) -> Oid {
        Oid::from_str(&self.commit).expect("a resolved commit id")
    }

    /// `path` relative to the repository's top level, `/`-separated.
    pub fn repo_path(&self, path: &Path) -> Result<String> {
        self.repo.repo_path(path)
    }

    /// The `*.yaml`/`*.yml` files the revision has at or under `path`, sorted.
    pub fn list(&self, path: &Path) -> Result<Vec<String>> {
        let rel = self.repo_path(path)?;
        self.repo.list(self.oid(), &self.rev, &rel)
    }

    /// The text of a repository-relative file at the revision.
    pub fn read(&self, repo_path: &str) -> Result<String> {
        self.repo.read(self.oid(), &self.rev, repo_path)
    }

    /// How a file at this revision is named in messages: `REV:path`.
    pub fn label(&self, repo_path: &str) -> PathBuf {
        PathBuf::from(format!("{}:{repo_path}", self.rev))
    }

    /// Every snapshot file the revision has under `paths`, each once, parsed and checked as
    /// `validate` checks a file on disk; a file's `path` is its label (`REV:path`). Returns
    /// the repository-relative paths with the files, and every problem found.
    pub fn load(&self, paths: &[PathBuf]) -> Result<AtRevision> {
        let mut seen = std::collections::BTreeSet::new();
        let (mut files, mut problems) = (Vec::new(), Vec::new());
        for p in paths {
            for repo_path in self.list(p)? {
                if !seen.insert(repo_path.clone()) {
                    continue;
                }
                let text = self.read(&repo_path)?;
                let label = self.label(&repo_path);
                match OffsetsFile::parse(&label, &text) {
                    Ok(file) => {
                        problems.extend(file.check(&label, &text));
                        let loaded = LoadedFile {
                            path: label,
                            file,
                            text,
                            lines: None,
                        };
                        files.push((repo_path, loaded));
                    }
                    Err(e) => problems.push(e),
                }
            }
        }
        Ok((files, problems))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

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
