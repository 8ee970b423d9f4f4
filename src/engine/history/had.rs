//! What a cluster had at a point in history: for each snapshot file, the newest version on
//! the first-parent history at or before that point that records the cluster, not a wish.
//! `show --at` and `apply --at` answer with it.
//!
//! A version is what the cluster had when it is an **observation** (kco rewrote the file from
//! live: `super::version`), or a **change** that an apply record of the file's cluster,
//! newer than the change and at or before the point, covers (`Kco-Apply: CLUSTER` with a
//! `Kco-Commit` that is the change's commit or a descendant of it; a record without
//! `Kco-Commit` covers everything before it, as `apply --unapplied` reads it). A change no
//! record covers (a pull request merged but refused, or never applied) is passed over for the
//! version before it: the cluster never had it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use git2::{Oid, Tree};

use super::trailer;
use super::version::{version, Version};
use crate::engine::revision::{is_snapshot_path, Repo};
use crate::engine::store::LoadedFile;
use crate::error::{Error, Result};
use crate::model::file::OffsetsFile;

/// An apply record on the history: where it is, its cluster, what it says it applied.
struct Record {
    /// Index on the chain (0: the point itself).
    index: usize,
    cluster: String,
    applied: Option<Oid>,
}

/// The first-parent history from a point back to the root, with its apply records, read
/// once and shared by every file asked about.
pub struct History<'r> {
    repo: &'r Repo,
    /// Newest first: `chain[0]` is the point.
    chain: Vec<Oid>,
    trees: HashMap<usize, Tree<'r>>,
    /// A directory's tree at a point of the chain (`None`: the commit has no such
    /// directory), read once: a file is looked up in it by name, without reading the
    /// directory again for each file and each commit.
    dirs: HashMap<(usize, String), Option<Tree<'r>>>,
    records: Vec<Record>,
}

/// The version of one file the cluster had.
pub struct Had {
    /// The file as that version has it (labelled `COMMIT:path`), and the commit that wrote
    /// it; `None`: no version at or before the point is one the cluster had.
    pub version: Option<(LoadedFile, Oid)>,
    /// The changes passed over, newest first: versions no apply record covers.
    pub not_applied: Vec<Oid>,
}

fn cannot(what: &str, id: Oid, e: git2::Error) -> Error {
    Error::Other(format!("cannot read {what} {id}: {}", e.message()))
}

impl<'r> History<'r> {
    /// The history of `at`: its first-parent chain and the apply records on it.
    pub fn of(repo: &'r Repo, at: Oid) -> Result<History<'r>> {
        let (mut chain, mut records) = (Vec::new(), Vec::new());
        let mut next = Some(at);
        while let Some(id) = next {
            let c = repo
                .git()
                .find_commit(id)
                .map_err(|e| cannot("commit", id, e))?;
            let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
            if let Some(cluster) = trailer::value(&message, trailer::APPLY) {
                records.push(Record {
                    index: chain.len(),
                    cluster: cluster.trim().to_string(),
                    applied: trailer::value(&message, trailer::COMMIT)
                        .and_then(|v| Oid::from_str(v.trim()).ok()),
                });
            }
            chain.push(id);
            next = c.parent_id(0).ok();
        }
        Ok(History {
            repo,
            chain,
            trees: HashMap::new(),
            dirs: HashMap::new(),
            records,
        })
    }

    /// The blob of the file at `path` in `chain[index]`, if it has one.
    fn blob(&mut self, index: usize, path: &str) -> Result<Option<Oid>> {
        let Some((dir, name)) = path.rsplit_once('/') else {
            self.tree(index)?;
            return Ok(self.trees[&index].get_name(path).map(|e| e.id()));
        };
        let key = (index, dir.to_string());
        if !self.dirs.contains_key(&key) {
            self.tree(index)?;
            let sub = self.trees[&index]
                .get_path(Path::new(dir))
                .ok()
                .and_then(|e| e.to_object(self.repo.git()).ok())
                .and_then(|o| o.into_tree().ok());
            self.dirs.insert(key.clone(), sub);
        }
        Ok(self.dirs[&key]
            .as_ref()
            .and_then(|t| t.get_name(name))
            .map(|e| e.id()))
    }

    /// Reads the tree of `chain[index]` once.
    fn tree(&mut self, index: usize) -> Result<()> {
        if !self.trees.contains_key(&index) {
            let id = self.chain[index];
            let tree = self
                .repo
                .git()
                .find_commit(id)
                .and_then(|c| c.tree())
                .map_err(|e| cannot("commit", id, e))?;
            self.trees.insert(index, tree);
        }
        Ok(())
    }

    fn load(&self, index: usize, path: &str, blob: Oid) -> Result<LoadedFile> {
        let label = PathBuf::from(format!("{}:{path}", &self.chain[index].to_string()[..12]));
        let text = self.repo.blob_text(blob, &label.display().to_string())?;
        let file = OffsetsFile::parse(&label, &text).map_err(|p| Error::Files(vec![p]))?;
        let problems = file.check(&label, &text);
        if !problems.is_empty() {
            return Err(Error::Files(problems));
        }
        Ok(LoadedFile {
            path: label,
            file,
            text,
            lines: None,
        })
    }

    /// Whether an apply record of `cluster` newer than `chain[index]` covers its change.
    fn covered(&self, index: usize, cluster: &str) -> bool {
        let change = self.chain[index];
        self.records
            .iter()
            .filter(|r| r.index < index && r.cluster == cluster)
            .any(|r| match r.applied {
                None => true,
                Some(c) => {
                    c == change
                        || self
                            .repo
                            .git()
                            .graph_descendant_of(c, change)
                            .unwrap_or(false)
                }
            })
    }

    /// Where the file of `file`'s connector was at `chain[index]` before a commit that moved
    /// it to `path` (`chain[index - 1]` has `path`, this commit has not): a snapshot file of
    /// the same cluster and connector at a path the newer commit no longer has.
    fn moved_from(
        &mut self,
        index: usize,
        newer: usize,
        file: &OffsetsFile,
        path: &str,
    ) -> Result<Option<(String, Oid)>> {
        self.tree(index)?;
        let mut candidates = Vec::new();
        self.trees[&index]
            .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
                let p = format!("{dir}{}", entry.name().unwrap_or(""));
                if entry.kind() == Some(git2::ObjectType::Blob) && is_snapshot_path(&p) {
                    candidates.push((p, entry.id()));
                }
                git2::TreeWalkResult::Ok
            })
            .map_err(|e| cannot("the tree of commit", self.chain[index], e))?;
        for (p, blob) in candidates {
            if p == path || self.blob(newer, &p)?.is_some() {
                continue;
            }
            let Ok(old) = self.load(index, &p, blob) else {
                continue;
            };
            let (a, b) = (&old.file.metadata, &file.metadata);
            if a.cluster == b.cluster && a.name == b.name {
                return Ok(Some((p, blob)));
            }
        }
        Ok(None)
    }

    /// The version of the file at repository-relative `path` the cluster had at the point
    /// (the file is read at the point first: `None` there, nothing had). A file moved to
    /// `path` is followed to where it was before, as `kco log` follows its connector.
    pub fn had(&mut self, path: &str) -> Result<Had> {
        let mut not_applied = Vec::new();
        let mut path = path.to_string();
        let Some(mut blob) = self.blob(0, &path)? else {
            return Ok(Had {
                version: None,
                not_applied,
            });
        };
        let mut i = 0;
        loop {
            // The commit that wrote this version: the oldest of the run that has it.
            let mut j = i;
            while j + 1 < self.chain.len() && self.blob(j + 1, &path)? == Some(blob) {
                j += 1;
            }
            let after = self.load(j, &path, blob)?;
            let before = match j + 1 < self.chain.len() {
                true => match self.blob(j + 1, &path)? {
                    Some(b) => Some((path.clone(), b)),
                    None => self.moved_from(j + 1, j, &after.file, &path)?,
                },
                false => None,
            };
            let earlier = match &before {
                Some((p, b)) => Some(self.load(j + 1, p, *b)?),
                None => None,
            };
            let kind = version(earlier.as_ref().map(|f| &f.file), &after.file);
            let had = match kind {
                Version::Observation => true,
                Version::Change => self.covered(j, &after.file.metadata.cluster),
                // The same content as the version before it: that version decides.
                Version::Unchanged => false,
            };
            if had {
                return Ok(Had {
                    version: Some((after, self.chain[j])),
                    not_applied,
                });
            }
            if kind == Version::Change {
                not_applied.push(self.chain[j]);
            }
            match before {
                Some((p, b)) => {
                    path = p;
                    blob = b;
                    i = j + 1;
                }
                None => {
                    return Ok(Had {
                        version: None,
                        not_applied,
                    })
                }
            }
        }
    }
}
