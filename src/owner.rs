//! A checkout stays its owner's. kco run as root (an image's step, a runner's `sudo`) on a
//! checkout another user owns would leave what it and git create there root's: snapshot
//! files, `.kco/` (locks, journals), and in `.git` the index, objects and refs of a
//! `snapshot --commit` or a lock fetched from the remote; the owner's next `git commit` or
//! `kco snapshot` then fails on a permission. When the process is root, [`Keep`] gives every
//! root-owned entry under those directories that the command created or wrote into to the
//! owner of the directory holding it, top down, when the command ends.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Directories whose new entries are given back to their directory's owner when dropped.
pub struct Keep {
    /// Each root with the nearest directory of it that existed when the command started
    /// (kco may create the root itself), none inside another root. Only the path from that
    /// directory down to the root is the command's: a missing `.kco` of a run in `/` makes
    /// `/` the nearest directory, and nothing else of `/` is looked at.
    roots: Vec<(PathBuf, PathBuf)>,
    /// Entries changed at or after this (nanoseconds since the epoch) are the command's.
    since: i128,
}

impl Keep {
    /// Watches `roots` (missing ones too: kco may create them) when the process runs as
    /// root; does nothing otherwise.
    pub fn start(roots: Vec<PathBuf>) -> Option<Keep> {
        if !is_root() {
            return None;
        }
        let now = crate::clock::real_now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        // A second's margin: the kernel stamps files from a coarser clock than this one.
        Some(Keep::since(roots, now - 1_000_000_000))
    }

    fn since(mut roots: Vec<PathBuf>, since: i128) -> Keep {
        roots.sort();
        roots.dedup();
        let nested: Vec<PathBuf> = roots
            .iter()
            .filter(|r| roots.iter().any(|o| o != *r && r.starts_with(o)))
            .cloned()
            .collect();
        roots.retain(|r| !nested.contains(r));
        let roots = roots
            .into_iter()
            .filter_map(|r| {
                let base = r.ancestors().find(|a| a.is_dir())?.to_path_buf();
                Some((base, r))
            })
            .collect();
        Keep { roots, since }
    }

    /// Gives back what the command created; returns how many entries changed owner.
    pub fn give_back(&self) -> usize {
        let mut changed = 0;
        for (base, root) in &self.roots {
            // The directories the command created on the way to the root, top down.
            let mut parent = base.clone();
            for part in root
                .strip_prefix(base)
                .into_iter()
                .flat_map(Path::components)
            {
                let path = parent.join(part);
                if !path.is_dir() {
                    break;
                }
                changed += usize::from(self.give(&path, &parent));
                parent = path;
            }
            changed += self.walk(root);
        }
        changed
    }

    /// Gives `path` the owner of `dir`, which holds it, if the command created or changed it
    /// as root; says whether it did.
    fn give(&self, path: &Path, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let (Ok(d), Ok(m)) = (
            std::fs::symlink_metadata(dir),
            std::fs::symlink_metadata(path),
        ) else {
            return false;
        };
        self.takes(&m, d.uid())
            && std::os::unix::fs::lchown(path, Some(d.uid()), Some(d.gid())).is_ok()
    }

    /// Whether an entry is the command's to give to `owner`: root's, changed since the
    /// command started, in a directory root does not own.
    fn takes(&self, m: &std::fs::Metadata, owner: u32) -> bool {
        use std::os::unix::fs::MetadataExt;
        let changed_at = i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec());
        m.uid() == 0 && owner != 0 && changed_at >= self.since
    }

    /// Gives the command's entries under `dir` (itself already right) the owner of their
    /// directory, directories first so that what they hold follows them.
    fn walk(&self, dir: &Path) -> usize {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return 0;
        };
        if !meta.is_dir() {
            return 0;
        }
        let (uid, gid) = (meta.uid(), meta.gid());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        let mut changed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(m) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if self.takes(&m, uid) && std::os::unix::fs::lchown(&path, Some(uid), Some(gid)).is_ok()
            {
                changed += 1;
            }
            if m.is_dir() {
                changed += self.walk(&path);
            }
        }
        changed
    }
}

impl Drop for Keep {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(target_os = "linux")]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(target_os = "linux"))]
fn is_root() -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    const OWNER: u32 = 10001;

    /// A command's start, 15 ms ago (the kernel's clock ticks coarsely).
    fn started_a_moment_ago() -> i128 {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128
            - 15_000_000
    }

    #[test]
    fn what_root_creates_in_a_checkout_goes_to_the_owner_of_its_directory() {
        if !is_root() {
            eprintln!("skipping: not root");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let checkout = t.path().join("checkout");
        std::fs::create_dir_all(checkout.join(".git/objects")).unwrap();
        // A root-owned file and directory older than the command, which it does not touch:
        // not the command's to change. A root-owned directory an earlier run left, which the
        // command writes into: given back with what the command wrote there.
        let theirs = checkout.join(".git/config");
        std::fs::write(&theirs, "x").unwrap();
        let roots = checkout.join("root-only");
        std::fs::create_dir_all(roots.join("inside")).unwrap();
        let earlier = checkout.join(".git/refs-of-an-earlier-run");
        std::fs::create_dir(&earlier).unwrap();
        for p in [
            &checkout,
            &checkout.join(".git"),
            &checkout.join(".git/objects"),
        ] {
            std::os::unix::fs::lchown(p, Some(OWNER), Some(OWNER)).unwrap();
        }
        // The command starts after those were made (the kernel's clock ticks coarsely).
        std::thread::sleep(std::time::Duration::from_millis(50));
        let keep = Keep::since(
            vec![
                checkout.join("snapshots/a"),
                checkout.join(".kco"),
                checkout.join(".git"),
            ],
            started_a_moment_ago(),
        );
        // What the command makes: new directories and files, a symlink.
        std::fs::create_dir_all(checkout.join("snapshots/a")).unwrap();
        std::fs::write(checkout.join("snapshots/a/s.yaml"), "x").unwrap();
        std::fs::create_dir_all(checkout.join(".git/objects/ab")).unwrap();
        std::fs::write(checkout.join(".git/objects/ab/cd"), "x").unwrap();
        std::fs::write(checkout.join(".git/index"), "x").unwrap();
        std::fs::create_dir_all(checkout.join(".kco/locks")).unwrap();
        std::os::unix::fs::symlink("../x", checkout.join(".kco/locks/l")).unwrap();
        std::fs::write(earlier.join("new"), "x").unwrap();

        let changed = keep.give_back();

        for p in [
            "snapshots",
            "snapshots/a",
            "snapshots/a/s.yaml",
            ".git/objects/ab",
            ".git/objects/ab/cd",
            ".git/index",
            ".kco",
            ".kco/locks",
            ".kco/locks/l",
            ".git/refs-of-an-earlier-run",
            ".git/refs-of-an-earlier-run/new",
        ] {
            let m = std::fs::symlink_metadata(checkout.join(p)).unwrap();
            assert_eq!((m.uid(), m.gid()), (OWNER, OWNER), "{p}");
        }
        assert_eq!(changed, 11);
        for p in [&theirs, &roots, &roots.join("inside")] {
            assert_eq!(
                std::fs::metadata(p).unwrap().uid(),
                0,
                "not the command's: {p:?}"
            );
        }
        drop(keep);
    }

    #[test]
    fn a_root_the_command_creates_is_the_only_place_looked_at_in_the_directory_it_is_made_in() {
        if !is_root() {
            eprintln!("skipping: not root");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let cwd = t.path().join("cwd");
        std::fs::create_dir(&cwd).unwrap();
        std::os::unix::fs::lchown(&cwd, Some(OWNER), Some(OWNER)).unwrap();
        let keep = Keep::since(
            vec![cwd.join("snapshots/a"), cwd.join(".kco")],
            started_a_moment_ago(),
        );
        // Root writes, during the command, beside the roots it never created: not the
        // command's (a run in `/` or a home directory would otherwise walk all of it).
        std::fs::create_dir_all(cwd.join("other/deep")).unwrap();
        std::fs::write(cwd.join("other/deep/f"), "x").unwrap();
        std::fs::create_dir_all(cwd.join("snapshots/a")).unwrap();
        std::fs::write(cwd.join("snapshots/a/s.yaml"), "x").unwrap();

        assert_eq!(keep.give_back(), 3, "snapshots, snapshots/a, s.yaml");
        for p in ["snapshots", "snapshots/a", "snapshots/a/s.yaml"] {
            assert_eq!(
                std::fs::symlink_metadata(cwd.join(p)).unwrap().uid(),
                OWNER,
                "{p}"
            );
        }
        for p in ["other", "other/deep", "other/deep/f"] {
            assert_eq!(
                std::fs::symlink_metadata(cwd.join(p)).unwrap().uid(),
                0,
                "{p}"
            );
        }
    }
}
