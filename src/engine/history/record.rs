//! `kco snapshot --commit`: a commit of exactly the snapshot files a snapshot wrote or
//! removed, with the trailer that says what the commit is (an observation, or the record of
//! an apply or an undo: [`super::trailer`]). Written with libgit2, as `git commit -- PATHS`
//! would: the new tree is HEAD's with only those paths taken from the working tree, so
//! nothing else (other files, changes staged by hand) goes in; the index is then updated for
//! those paths alone. No hooks run and nothing is signed.

use std::path::{Path, PathBuf};

use git2::{Index, IndexEntry, IndexTime, Signature};
use serde::Serialize;

use super::trailer::{self, CommitKind};
use crate::engine::revision::Repo;
use crate::error::{Error, Result};

/// A repository ready to commit in: where, and who commits.
pub struct Committer {
    repo: Repo,
    author: Signature<'static>,
    committer: Signature<'static>,
}

/// The commit [`Committer::commit`] made.
#[derive(Debug, Clone, Serialize)]
pub struct Committed {
    /// The new commit (40 hex digits).
    pub commit: String,
    /// Its first line.
    pub summary: String,
    /// The repository-relative paths whose content it changed, sorted.
    pub files: Vec<String>,
}

/// What the commit says it is: its kind, the cluster, and further `Key: value` trailers.
#[derive(Debug, Clone)]
pub struct RecordMessage {
    pub kind: CommitKind,
    pub cluster: String,
    pub trailers: Vec<(String, String)>,
}

impl RecordMessage {
    /// `offsets of prod`, `offsets of prod after an apply of 1a2b3c4`, ... then the trailers:
    /// the kind's (`Kco-Snapshot: prod`) first, then the others in the order given.
    pub fn text(&self) -> String {
        let after = match self.kind {
            CommitKind::Apply => " after an apply",
            CommitKind::Undo => " after an undo",
            CommitKind::Snapshot | CommitKind::Change => "",
        };
        let of = trailer_value(&self.trailers, trailer::COMMIT)
            .map(|c| format!(" of {}", c.chars().take(12).collect::<String>()))
            .unwrap_or_default();
        let key = match self.kind {
            CommitKind::Apply => trailer::APPLY,
            CommitKind::Undo => trailer::UNDO,
            CommitKind::Snapshot | CommitKind::Change => trailer::SNAPSHOT,
        };
        let mut text = format!(
            "offsets of {}{after}{of}\n\n{key}: {}\n",
            self.cluster, self.cluster
        );
        for (k, v) in &self.trailers {
            text.push_str(&format!("{k}: {v}\n"));
        }
        text
    }
}

fn trailer_value<'a>(trailers: &'a [(String, String)], key: &str) -> Option<&'a str> {
    trailers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// `Key: value` as `--trailer` takes it: a key of letters, digits and `-`, a value on one line.
pub fn parse_trailer(s: &str) -> std::result::Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}` is not `Key: value`"))?;
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(format!(
            "`{k}` is not a trailer key (letters, digits and `-`, like `Kco-Commit`)"
        ));
    }
    if v.is_empty() || v.contains(['\n', '\r']) {
        return Err(format!("trailer `{k}` needs a value on one line"));
    }
    let own = [trailer::SNAPSHOT, trailer::APPLY, trailer::UNDO];
    if own.iter().any(|o| o.eq_ignore_ascii_case(k)) {
        return Err(format!(
            "`{k}` is written by kco itself (use --record to choose it)"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

fn git_error(what: &str, e: git2::Error) -> Error {
    Error::Other(format!("{what}: {}", e.message()))
}

impl Committer {
    /// The repository holding `dir`, and the identity to commit with: git's own rules
    /// (`GIT_AUTHOR_NAME`/`_EMAIL`, `GIT_COMMITTER_NAME`/`_EMAIL`, then `user.name` and
    /// `user.email` of the repository's, the user's and the system's config). Checked before
    /// anything is written, so a missing identity changes nothing.
    pub fn open(dir: &Path) -> Result<Committer> {
        let repo = Repo::discover(dir)?;
        let git = repo.git();
        let identity = git.author_from_env().and_then(|a| {
            let c = git.committer_from_env()?;
            Ok((a, c))
        });
        let (author, committer) = identity.map_err(|e| Error::NoGitIdentity {
            repo: repo.toplevel.clone(),
            why: e.message().to_string(),
        })?;
        Ok(Committer {
            repo,
            author,
            committer,
        })
    }

    /// The repository's top-level directory.
    pub fn toplevel(&self) -> &Path {
        &self.repo.toplevel
    }

    /// Commits `paths` (files the snapshot wrote, left as they were, or removed) as they are
    /// in the working tree now, on top of HEAD, with `message`. `None` when that changes
    /// nothing against HEAD (no commit is made).
    pub fn commit(&self, paths: &[PathBuf], message: &str) -> Result<Option<Committed>> {
        let git = self.repo.git();
        let head = match git.head() {
            Ok(h) => Some(
                h.peel_to_commit()
                    .map_err(|e| git_error("cannot read HEAD", e))?,
            ),
            // A repository with no commit yet: the first commit has no parent.
            Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
            Err(e) => return Err(git_error("cannot read HEAD", e)),
        };
        let head_tree = match &head {
            Some(c) => Some(c.tree().map_err(|e| git_error("cannot read HEAD", e))?),
            None => None,
        };
        let mut rels = Vec::new();
        for p in paths {
            rels.push(self.repo.repo_path(p)?);
        }
        rels.sort();
        rels.dedup();
        let cannot = |e| git_error("cannot prepare the commit", e);
        let mut index = Index::new().map_err(cannot)?;
        if let Some(t) = &head_tree {
            index.read_tree(t).map_err(cannot)?;
        }
        for rel in &rels {
            let abs = self.repo.toplevel.join(rel);
            if abs.is_file() {
                let id = git
                    .blob_path(&abs)
                    .map_err(|e| git_error(&format!("cannot read {}", abs.display()), e))?;
                let size = std::fs::metadata(&abs).map(|m| m.len()).unwrap_or(0);
                index.add(&entry(rel, id, size)).map_err(cannot)?;
            } else {
                // Absent from HEAD too is fine: nothing to remove.
                let _ = index.remove_path(Path::new(rel));
            }
        }
        let tree_id = index.write_tree_to(git).map_err(cannot)?;
        if head_tree.as_ref().map(|t| t.id()) == Some(tree_id) {
            return Ok(None);
        }
        let tree = git.find_tree(tree_id).map_err(cannot)?;
        let files = changed(git, head_tree.as_ref(), &tree)?;
        if files.is_empty() {
            // A repository with no commit yet and no file to commit.
            return Ok(None);
        }
        let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
        let id = git
            .commit(
                Some("HEAD"),
                &self.author,
                &self.committer,
                message,
                &tree,
                &parents,
            )
            .map_err(|e| git_error("cannot commit the snapshot files", e))?;
        self.stage(&rels)?;
        Ok(Some(Committed {
            commit: id.to_string(),
            summary: message.lines().next().unwrap_or_default().to_string(),
            files,
        }))
    }

    /// The repository's index takes the committed paths as committed (as `git commit --
    /// PATHS` leaves it), so `git status` shows them clean; nothing else in it changes.
    fn stage(&self, rels: &[String]) -> Result<()> {
        let git = self.repo.git();
        let cannot = |e| git_error("committed, but cannot update the index", e);
        let mut index = git.index().map_err(cannot)?;
        for rel in rels {
            if self.repo.toplevel.join(rel).is_file() {
                index.add_path(Path::new(rel)).map_err(cannot)?;
            } else {
                let _ = index.remove_path(Path::new(rel));
            }
        }
        index.write().map_err(cannot)
    }
}

fn entry(rel: &str, id: git2::Oid, size: u64) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o100644,
        uid: 0,
        gid: 0,
        file_size: size as u32,
        id,
        flags: 0,
        flags_extended: 0,
        path: rel.as_bytes().to_vec(),
    }
}

/// The paths whose blobs differ between the two trees.
fn changed(
    git: &git2::Repository,
    old: Option<&git2::Tree<'_>>,
    new: &git2::Tree<'_>,
) -> Result<Vec<String>> {
    let diff = git
        .diff_tree_to_tree(old, Some(new), None)
        .map_err(|e| git_error("cannot compare the commit with HEAD", e))?;
    let mut files: Vec<String> = diff
        .deltas()
        .filter_map(|d| {
            d.new_file()
                .path()
                .or(d.old_file().path())
                .map(|p| p.to_string_lossy().into_owned())
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn committer(dir: &Path) -> Committer {
        let repo = Repo::discover(dir).unwrap();
        let sig = Signature::now("Night", "n@example.com").unwrap();
        Committer {
            repo,
            author: sig.clone(),
            committer: sig,
        }
    }

    #[test]
    fn commits_only_the_named_files_and_nothing_when_unchanged() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(root.join("snap/p")).unwrap();
        std::fs::write(root.join("snap/p/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("snap/p/gone.yaml"), "g: 1\n").unwrap();
        std::fs::write(root.join("notes.txt"), "one\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "start"]);
        // Other work in progress: an edit staged by hand, an untracked file.
        std::fs::write(root.join("notes.txt"), "two\n").unwrap();
        git(root, &["add", "notes.txt"]);
        std::fs::write(root.join("other.yaml"), "o: 1\n").unwrap();
        // The snapshot: a.yaml updated, b.yaml created, gone.yaml pruned.
        std::fs::write(root.join("snap/p/a.yaml"), "a: 2\n").unwrap();
        std::fs::write(root.join("snap/p/b.yaml"), "b: 1\n").unwrap();
        std::fs::remove_file(root.join("snap/p/gone.yaml")).unwrap();
        let c = committer(root);
        let paths: Vec<PathBuf> = ["a.yaml", "b.yaml", "gone.yaml"]
            .iter()
            .map(|f| root.join("snap/p").join(f))
            .collect();
        let msg = RecordMessage {
            kind: CommitKind::Snapshot,
            cluster: "p".into(),
            trailers: vec![],
        };
        let done = c.commit(&paths, &msg.text()).unwrap().unwrap();
        assert_eq!(
            done.files,
            ["snap/p/a.yaml", "snap/p/b.yaml", "snap/p/gone.yaml"]
        );
        assert_eq!(done.summary, "offsets of p");
        let shown = git(root, &["show", "--name-status", "--format=%B", "HEAD"]);
        assert_eq!(
            shown,
            "offsets of p\n\nKco-Snapshot: p\n\n\nM\tsnap/p/a.yaml\nA\tsnap/p/b.yaml\nD\tsnap/p/gone.yaml"
        );
        assert_eq!(
            trailer::kind(&git(root, &["log", "-1", "--format=%B"])),
            CommitKind::Snapshot
        );
        // The hand-staged edit is still staged and uncommitted; the untracked file untouched.
        assert_eq!(
            git(root, &["status", "--porcelain"]),
            "M  notes.txt\n?? other.yaml"
        );
        // Again: nothing changed, no commit.
        assert!(c.commit(&paths, &msg.text()).unwrap().is_none());
        assert_eq!(git(root, &["rev-list", "--count", "HEAD"]), "2");
    }

    #[test]
    fn the_first_commit_of_a_repository_has_no_parent() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("x.yaml"), "x: 1\n").unwrap();
        let done = committer(root)
            .commit(&[root.join("x.yaml")], "offsets of p\n\nKco-Snapshot: p\n")
            .unwrap()
            .unwrap();
        assert_eq!(done.files, ["x.yaml"]);
        assert_eq!(git(root, &["rev-list", "--count", "main"]), "1");

        // No file at all (a cluster with no connector), and no commit yet: still no commit.
        let empty = tempfile::tempdir().unwrap();
        git(empty.path(), &["init", "-q", "-b", "main"]);
        let none = committer(empty.path())
            .commit(&[], "offsets of p\n\nKco-Snapshot: p\n")
            .unwrap();
        assert!(none.is_none());
    }

    #[test]
    fn messages_name_the_record_and_its_trailers() {
        let m = RecordMessage {
            kind: CommitKind::Apply,
            cluster: "prod".into(),
            trailers: vec![(
                "Kco-Commit".into(),
                "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d".into(),
            )],
        };
        let text = m.text();
        assert_eq!(
            text,
            "offsets of prod after an apply of 1a2b3c4d5e6f\n\nKco-Apply: prod\nKco-Commit: 1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d\n"
        );
        assert_eq!(trailer::kind(&text), CommitKind::Apply);
        let undo = RecordMessage {
            kind: CommitKind::Undo,
            cluster: "prod".into(),
            trailers: vec![],
        };
        assert_eq!(trailer::kind(&undo.text()), CommitKind::Undo);
        assert_eq!(
            parse_trailer("Kco-Backup: 20261202T010203Z"),
            Ok(("Kco-Backup".into(), "20261202T010203Z".into()))
        );
        assert!(parse_trailer("no colon").is_err());
        assert!(parse_trailer("bad key: x").is_err());
        assert!(parse_trailer("Kco-Apply: prod")
            .unwrap_err()
            .contains("--record"));
    }
}
