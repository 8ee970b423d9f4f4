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
    /// The nearest existing directory of each root when the command started (kco may create
    /// the root itself), none inside another.
    tops: Vec<PathBuf>,
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
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        // A second's margin: the kernel stamps files from a coarser clock than this one.
        Some(Keep::since(roots, now - 1_000_000_000))
    }

    fn since(roots: Vec<PathBuf>, since: i128) -> Keep {
        let mut tops: Vec<PathBuf> = roots
            .iter()
            .filter_map(|r| r.ancestors().find(|a| a.is_dir()).map(Path::to_path_buf))
            .collect();
        tops.sort();
        tops.dedup();
        let nested: Vec<PathBuf> = tops
            .iter()
            .filter(|t| tops.iter().any(|o| o != *t && t.starts_with(o)))
            .cloned()
            .collect();
        tops.retain(|t| !nested.contains(t));
        Keep { tops, since }
    }

    /// Gives back what the command created; returns how many entries changed owner.
    pub fn give_back(&self) -> usize {
        self.tops.iter().map(|t| self.walk(t)).sum()
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
            let changed_at = i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec());
            if m.uid() == 0
                && uid != 0
                && changed_at >= self.since
                && std::os::unix::fs::lchown(&path, Some(uid), Some(gid)).is_ok()
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
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as i128
                - 15_000_000,
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
}
