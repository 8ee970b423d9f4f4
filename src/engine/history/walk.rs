//! The first-parent history of a branch, commit by commit, with the snapshot files each
//! commit changed under one directory: the walk `log`, `apply --at` and
//! `apply --changed-since` share. Unchanged subtrees are skipped by their object id, so a
//! commit that did not touch the directory costs one tree lookup.

use std::path::Path;

use git2::{Commit, Oid, Tree};

use crate::engine::revision::{is_snapshot_path, Repo};
use crate::error::{Error, Result};

/// One file a commit changed: its path and blob before (in the first parent) and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub old: Option<(String, Oid)>,
    pub new: Option<(String, Oid)>,
}

/// Which files a walk looks at: git pathspecs narrowing each commit's diff (none: all), and
/// a filter on the repository-relative paths it then reports.
pub struct Files<'a> {
    pub pathspec: &'a [String],
    pub keep: &'a dyn Fn(&str) -> bool,
}

/// What a visitor says after each commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Continue,
    Stop,
}

fn git_error(what: &str, e: git2::Error) -> Error {
    Error::Other(format!("{what}: {}", e.message()))
}

/// `scope`'s tree in `commit` (the whole tree when `scope` is empty); `None` when absent.
fn scope_tree<'r>(repo: &'r Repo, commit: &Commit<'r>, scope: &str) -> Result<Option<Tree<'r>>> {
    let tree = commit
        .tree()
        .map_err(|e| git_error(&format!("cannot read commit {}", commit.id()), e))?;
    if scope.is_empty() {
        return Ok(Some(tree));
    }
    match tree.get_path(Path::new(scope)) {
        Ok(e) => Ok(repo.git().find_tree(e.id()).ok()),
        Err(_) => Ok(None),
    }
}

/// Walks the first-parent history from `head`, newest first, down to the root or to `stop`
/// (excluded). Each commit whose tree under `scope` differs from its first parent's is passed
/// to `visit` with the snapshot files it changed there whose path `keep` accepts (possibly
/// none); commits that did not change `scope` are not passed. A non-empty `pathspec`
/// (git patterns, relative to `scope`) narrows what each commit's diff looks at, so that
/// following a few connectors does not compare every file of every commit.
pub fn walk(
    repo: &Repo,
    head: Oid,
    stop: Option<Oid>,
    scope: &str,
    files: Files<'_>,
    visit: &mut dyn FnMut(&Commit<'_>, Vec<Change>) -> Result<Next>,
) -> Result<()> {
    let Files { pathspec, keep } = files;
    let mut options = git2::DiffOptions::new();
    for spec in pathspec {
        options.pathspec(spec);
    }
    let git = repo.git();
    let mut commit = git
        .find_commit(head)
        .map_err(|e| git_error(&format!("cannot read commit {head}"), e))?;
    let mut tree = scope_tree(repo, &commit, scope)?;
    let prefix = if scope.is_empty() {
        String::new()
    } else {
        format!("{scope}/")
    };
    loop {
        if Some(commit.id()) == stop {
            return Ok(());
        }
        let parent = commit.parent(0).ok();
        let parent_tree = match &parent {
            Some(p) => scope_tree(repo, p, scope)?,
            None => None,
        };
        if tree.as_ref().map(Tree::id) != parent_tree.as_ref().map(Tree::id) {
            let diff = git
                .diff_tree_to_tree(parent_tree.as_ref(), tree.as_ref(), Some(&mut options))
                .map_err(|e| git_error(&format!("cannot compare commit {}", commit.id()), e))?;
            let side = |f: git2::DiffFile<'_>| -> Option<(String, Oid)> {
                let p = f.path()?.to_str()?;
                let full = format!("{prefix}{p}");
                (!f.id().is_zero() && is_snapshot_path(&full) && keep(&full))
                    .then_some((full, f.id()))
            };
            let changes: Vec<Change> = diff
                .deltas()
                .map(|d| Change {
                    old: side(d.old_file()),
                    new: side(d.new_file()),
                })
                .filter(|c| c.old.is_some() || c.new.is_some())
                .collect();
            if visit(&commit, changes)? == Next::Stop {
                return Ok(());
            }
        }
        match parent {
            Some(p) => {
                commit = p;
                tree = parent_tree;
            }
            None => return Ok(()),
        }
    }
}

/// For each of `paths` (repository-relative), the newest commit on the first-parent history
/// from `head` (down to `stop`, excluded) that changed it, or `None` when none did.
pub fn last_changes(
    repo: &Repo,
    head: Oid,
    stop: Option<Oid>,
    scope: &str,
    paths: &[String],
) -> Result<Vec<Option<Oid>>> {
    let mut found: Vec<Option<Oid>> = vec![None; paths.len()];
    let index: std::collections::HashMap<&str, usize> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let mut left = paths.len();
    let keep = |p: &str| index.contains_key(p);
    let files = Files {
        pathspec: &[],
        keep: &keep,
    };
    walk(repo, head, stop, scope, files, &mut |c, changes| {
        for ch in changes {
            for (p, _) in ch.old.iter().chain(ch.new.iter()) {
                if let Some(&i) = index.get(p.as_str()) {
                    if found[i].is_none() {
                        found[i] = Some(c.id());
                        left -= 1;
                    }
                }
            }
        }
        Ok(if left == 0 {
            Next::Stop
        } else {
            Next::Continue
        })
    })?;
    Ok(found)
}
