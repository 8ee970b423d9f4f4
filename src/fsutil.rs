//! File system helpers: atomic writes, so that no file is ever left half-written.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `contents` to `path` atomically: a temp file in the same directory, fsync, rename.
/// Creates missing parent directories. A crash leaves either the old file or the new one.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = write_atomic_unsynced_dir(path, contents)?;
    sync_dir(&dir);
    Ok(())
}

/// [`write_atomic`] without the fsync of the directory: for many files in one directory,
/// followed by one [`sync_dir`] (the renames are durable once it returns). Returns the
/// directory.
pub fn write_atomic_unsynced_dir(path: &Path, contents: &[u8]) -> std::io::Result<PathBuf> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".kco-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(dir.to_path_buf())
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
