//! File system helpers: atomic writes, so that no file is ever left half-written.
//!
//! Files written for the user and git (snapshots, exports, imports, re-sealed files) get the
//! mode `cp` and `git` would give them: 0666 less the umask ([`write_atomic`], [`Batch`]).
//! The state directory's files (journal, backups) stay owner-only ([`write_private`]):
//! docs/security.md says why.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Who may read a written file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// 0666 less the umask, as `cp` and `git` write files (0644 under umask 022).
    Shared,
    /// The owner only (0600), whatever the umask.
    Private,
}

/// Writes `contents` to `path` atomically: a temp file in the same directory, fsync, rename.
/// Creates missing parent directories. A crash leaves either the old file or the new one.
/// The file's mode follows the umask (0644 under umask 022), as a file `git` writes.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_atomic_as(path, contents, Access::Shared)
}

/// [`write_atomic`] for the state directory (journal, backups): readable by the owner only.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_atomic_as(path, contents, Access::Private)
}

fn write_atomic_as(path: &Path, contents: &[u8], access: Access) -> std::io::Result<()> {
    write_temp(path, contents, true, access)?
        .persist(path)
        .map_err(|e| e.error)?;
    sync_dir(parent(path));
    Ok(())
}

/// Replaces `path` with `contents` through a temp file and a rename, without waiting for the
/// disk: a reader sees the old file or the new one, never a part. For a file that every run
/// writes anew and that is worth nothing after a crash (a metrics file, which node-exporter's
/// textfile collector documents as `echo > f.$$; mv f.$$ f`); what must survive a crash goes
/// through [`write_atomic`].
pub fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_temp(path, contents, false, Access::Shared)?
        .persist(path)
        .map_err(|e| e.error)?;
    Ok(())
}

/// The directory of `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `contents` in a temporary file (`.kco-*.tmp`) next to `path`, synced if asked; missing
/// parent directories are created.
fn write_temp(
    path: &Path,
    contents: &[u8],
    sync: bool,
    access: Access,
) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = parent(path);
    std::fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".kco-").suffix(".tmp");
    // tempfile creates 0600; a shared file is created 0666 instead, which the kernel narrows
    // by the umask at creation (no umask is read or changed, so threads cannot race on it).
    #[cfg(unix)]
    if access == Access::Shared {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    #[cfg(not(unix))]
    let _ = access;
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(contents)?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    Ok(tmp)
}

/// From this many files, a [`Batch`] makes them durable with one flush of the file system.
const FLUSH_ONCE_FROM: usize = 64;

/// Whether one `syncfs` makes written files durable.
const SYNCFS: bool = cfg!(target_os = "linux");

/// The files of one run, each written atomically, their directories synced once at the end
/// ([`Batch::commit`]); their mode follows the umask, as [`write_atomic`]'s.
///
/// A few files are each synced and put in place as they are written. Many
/// ([`FLUSH_ONCE_FROM`] or more, where `syncfs` is available) are made durable together:
/// each is written to a temporary file next to its target, then `commit` flushes the file
/// system once and renames each over its target. One flush instead of one fsync per file:
/// a third of the time of a snapshot of 1,000 files. A crash, at any point, leaves every
/// target old or new (the renames follow the flush), and at most the temporary files
/// (`.kco-*.tmp`, read by nothing).
pub struct Batch {
    flush_once: bool,
    done: Mutex<Done>,
}

#[derive(Default)]
struct Done {
    /// Written, waiting for the flush (closed: a thousand hold no descriptor).
    staged: Vec<(tempfile::TempPath, PathBuf)>,
    /// Directories with a file put in place.
    dirs: BTreeSet<PathBuf>,
}

impl Batch {
    /// A batch for about `files` files.
    pub fn new(files: usize) -> Self {
        Batch {
            flush_once: SYNCFS && files >= FLUSH_ONCE_FROM,
            done: Mutex::default(),
        }
    }

    /// Writes `contents` for `path`: in place now, or at [`Batch::commit`].
    pub fn put(&self, path: &Path, contents: &[u8]) -> std::io::Result<()> {
        let tmp = write_temp(path, contents, !self.flush_once, Access::Shared)?;
        let mut done = self.done.lock().expect("writing does not panic");
        if self.flush_once {
            done.staged.push((tmp.into_temp_path(), path.to_path_buf()));
        } else {
            tmp.persist(path).map_err(|e| e.error)?;
            done.dirs.insert(parent(path).to_path_buf());
        }
        Ok(())
    }

    /// Makes every staged file durable and puts it in place, then syncs the directories.
    /// On an error, the path it concerns; the staged files not yet in place are removed.
    pub fn commit(self) -> Result<(), (PathBuf, std::io::Error)> {
        let Done { staged, mut dirs } = self.done.into_inner().expect("writing does not panic");
        if let Some((_, first)) = staged.first() {
            flush_file_system(first).map_err(|e| (first.clone(), e))?;
        }
        for (tmp, path) in staged {
            tmp.persist(&path).map_err(|e| (path.clone(), e.error))?;
            dirs.insert(parent(&path).to_path_buf());
        }
        dirs.iter().for_each(|d| sync_dir(d));
        Ok(())
    }
}

/// Flushes the file system that holds `path` (its directory exists).
#[cfg(target_os = "linux")]
fn flush_file_system(path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let dir = std::fs::File::open(path.parent().unwrap_or(Path::new(".")))?;
    // SAFETY: syncfs takes an open descriptor, which `dir` holds until it returns.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Never called: without `syncfs` every file is synced when it is written.
#[cfg(not(target_os = "linux"))]
fn flush_file_system(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Removes the temporary files (`.kco-*.tmp`) in `dir` last changed more than `age` ago: what
/// a run killed before its renames left behind. A run in progress keeps its own (younger).
/// Returns how many were removed.
pub fn remove_stale_temps(dir: &Path, age: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = crate::clock::real_now();
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(".kco-") && name.ends_with(".tmp")
        })
        .filter(|e| {
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).unwrap_or_default() > age)
        })
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Makes the renames into `dir` durable.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_batch_puts_files_in_place_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("c/a.yaml"), dir.path().join("c/b.yaml"));
        write_atomic(&a, b"old").unwrap();
        let batch = Batch::new(FLUSH_ONCE_FROM);
        batch.put(&a, b"new a").unwrap();
        batch.put(&b, b"new b").unwrap();
        // Staged, not in place: the old file is untouched, the new one absent.
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old");
        assert!(!b.exists());
        batch.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        let names = std::fs::read_dir(dir.path().join("c")).unwrap().count();
        assert_eq!(names, 2, "no temporary file is left");
        // A batch dropped without a commit leaves nothing behind.
        let dropped = Batch::new(FLUSH_ONCE_FROM);
        dropped.put(&a, b"never").unwrap();
        drop(dropped);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_dir(dir.path().join("c")).unwrap().count(), 2);
    }

    #[test]
    fn a_replaced_file_holds_the_new_contents_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m/kco.prom");
        replace(&f, b"old").unwrap();
        replace(&f, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path().join("m")).unwrap().count(), 1);
    }

    #[test]
    fn only_old_temporary_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".kco-old.tmp");
        std::fs::write(&old, "x").unwrap();
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(past)
            .unwrap();
        for keep in [".kco-new.tmp", "a.yaml", "notes.tmp"] {
            std::fs::write(dir.path().join(keep), "x").unwrap();
        }
        let hour = std::time::Duration::from_secs(3600);
        assert_eq!(remove_stale_temps(dir.path(), hour), 1);
        assert!(!old.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    /// Set by [`written_files_follow_the_umask`] for the copy of this binary it runs under a
    /// given umask: the directory [`umask_child_writes`] writes into.
    #[cfg(unix)]
    const UMASK_CHILD_DIR: &str = "KCO_TEST_UMASK_CHILD_DIR";

    /// In a child run (the variable set): writes one file each way. Otherwise does nothing.
    #[cfg(unix)]
    #[test]
    fn umask_child_writes() {
        let Some(dir) = std::env::var_os(UMASK_CHILD_DIR) else {
            return;
        };
        let dir = PathBuf::from(dir);
        write_atomic(&dir.join("snapshot.yaml"), b"a").unwrap();
        write_private(&dir.join(".kco/journal.json"), b"j").unwrap();
        let batch = Batch::new(FLUSH_ONCE_FROM);
        batch.put(&dir.join("batched.yaml"), b"b").unwrap();
        batch.commit().unwrap();
        let few = Batch::new(1);
        few.put(&dir.join("few.yaml"), b"c").unwrap();
        few.commit().unwrap();
    }

    /// Runs this test binary again under each umask (a umask is per process) and reads the
    /// modes of what [`umask_child_writes`] wrote.
    #[cfg(unix)]
    #[test]
    fn written_files_follow_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let exe = std::env::current_exe().unwrap();
        for (umask, shared) in [("022", 0o644), ("027", 0o640), ("002", 0o664)] {
            let dir = tempfile::tempdir().unwrap();
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "umask {umask} && exec \"$0\" --exact fsutil::tests::umask_child_writes --quiet"
                ))
                .arg(&exe)
                .env(UMASK_CHILD_DIR, dir.path())
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "the child run under umask {umask} failed");
            let mode = |p: &str| {
                std::fs::metadata(dir.path().join(p))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777
            };
            for file in ["snapshot.yaml", "batched.yaml", "few.yaml"] {
                assert_eq!(mode(file), shared, "{file} under umask {umask}");
            }
            assert_eq!(mode(".kco/journal.json"), 0o600, "umask {umask}");
        }
    }

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/a.yaml");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
