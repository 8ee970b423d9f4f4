//! The project's state directory: where kco keeps the cluster locks, the apply journals and
//! the backups. It is found the way git finds its directory, so that every run on one project
//! shares one lock and one journal per cluster, wherever in the project it was started:
//!
//! 1. `KCO_STATE_DIR`, when set (relative to the current directory);
//! 2. `.kco` next to the `kco.yaml` in use (`--config`, or the one found in the current
//!    directory or a parent);
//! 3. without a config file: `.kco` at the top of the git work tree the current directory is
//!    in;
//! 4. otherwise `.kco` in the current directory.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::remote_lock::{self, Store};
use crate::config::LockSetting;
use crate::error::Result;

/// The directory name kco uses inside a project.
pub const DIR_NAME: &str = ".kco";
/// What kco writes as `.gitignore` in a state directory it creates: everything in it stays out
/// of git (backups, journals and locks are this machine's, not the project's).
pub const GITIGNORE: &str =
    "# Created by kco: its locks, journals and backups stay out of git.\n*\n";

/// Why the state directory is where it is (said in `--help` and error messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// `KCO_STATE_DIR`.
    Env,
    /// Next to the config file in use.
    Config,
    /// At the top of the git work tree.
    GitTop,
    /// In the current directory (no config file, not in a git work tree).
    WorkingDir,
}

/// Where locks, journals and backups live, and where the shared locks are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
    found: Found,
    /// `lock:` in kco.yaml, and the directory whose git repository holds the shared locks.
    lock: LockSetting,
    project: PathBuf,
}

impl StateDir {
    /// A state directory at `root` exactly, its locks on this machine only (tests).
    pub fn at(root: impl Into<PathBuf>) -> StateDir {
        let root = root.into();
        StateDir {
            project: root.clone(),
            root,
            found: Found::Env,
            lock: LockSetting::Local,
        }
    }

    /// The same directory, with the shared locks kept as `setting` says, on the git remote
    /// of the repository `project` is in.
    pub fn with_lock(self, setting: LockSetting, project: impl Into<PathBuf>) -> StateDir {
        StateDir {
            lock: setting,
            project: project.into(),
            ..self
        }
    }

    /// The same directory, with the shared locks kept as `setting` (kco.yaml's `lock:`) says.
    pub fn with_lock_setting(self, setting: LockSetting) -> StateDir {
        StateDir {
            lock: setting,
            ..self
        }
    }

    /// Where the shared lock of `cluster` is kept: on a git remote, or on this machine only
    /// (and why). Runs git.
    pub fn lock_store(&self, cluster: &str) -> Result<Store> {
        remote_lock::resolve(&self.lock, &self.project, cluster)
    }

    /// Finds the project's state directory: `env` is `KCO_STATE_DIR`'s value (empty counts
    /// as unset), `config` the path of the config file in use.
    pub fn find(env: Option<&Path>, config: Option<&Path>, cwd: &Path) -> StateDir {
        if let Some(d) = env.filter(|d| !d.as_os_str().is_empty()) {
            let project = config
                .map(|c| cwd.join(c))
                .and_then(|c| c.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| cwd.to_path_buf());
            return StateDir::at(cwd.join(d)).with_lock(LockSetting::Auto, project);
        }
        if let Some(parent) = config.map(|c| cwd.join(c)).and_then(|c| {
            c.parent()
                .map(Path::to_path_buf)
                .filter(|p| !p.as_os_str().is_empty())
        }) {
            return StateDir {
                found: Found::Config,
                ..StateDir::at(parent.join(DIR_NAME)).with_lock(LockSetting::Auto, parent)
            };
        }
        if let Some(top) = git_top(cwd) {
            return StateDir {
                found: Found::GitTop,
                ..StateDir::at(top.join(DIR_NAME)).with_lock(LockSetting::Auto, top)
            };
        }
        StateDir {
            found: Found::WorkingDir,
            ..StateDir::at(cwd.join(DIR_NAME)).with_lock(LockSetting::Auto, cwd)
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates the directory when it is missing, with a `.gitignore` of `*` inside (as pytest
    /// does for its cache), so that it never shows up in `git status`. A directory that exists
    /// is left as it is (a `.gitignore` removed on purpose stays removed).
    pub fn create(&self) -> std::io::Result<()> {
        if self.root.is_dir() {
            return Ok(());
        }
        if let Some(parent) = self.root.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match std::fs::create_dir(&self.root) {
            Ok(()) => {
                crate::fsutil::write_atomic(&self.root.join(".gitignore"), GITIGNORE.as_bytes())
            }
            // Another kco made it at the same moment, and writes the file.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub fn found(&self) -> Found {
        self.found
    }

    /// `<state dir>/locks/<cluster>.lock`.
    pub fn lock_path(&self, cluster: &str) -> PathBuf {
        self.root.join("locks").join(format!("{cluster}.lock"))
    }

    /// `<state dir>/journal/<cluster>.json`.
    pub fn journal_path(&self, cluster: &str) -> PathBuf {
        self.root.join("journal").join(format!("{cluster}.json"))
    }

    /// `<state dir>/backups/<UTC time>/<cluster>/`, for a time like `20240131T120000Z`; a
    /// suffix keeps two backups of the same second apart.
    pub fn new_backup_dir(&self, cluster: &str, now: SystemTime) -> PathBuf {
        let stamp: String = humantime::format_rfc3339_seconds(now)
            .to_string()
            .chars()
            .filter(|c| *c != '-' && *c != ':')
            .collect();
        let root = self.root.join("backups");
        let mut dir = root.join(&stamp);
        let mut n = 2;
        while dir.exists() {
            dir = root.join(format!("{stamp}-{n}"));
            n += 1;
        }
        // Named as the cluster's snapshot directory is (`store::cluster_dir`).
        crate::engine::store::cluster_dir(&dir, cluster)
    }
}

/// The top of the git work tree `dir` is in: the nearest ancestor holding `.git` (a
/// directory, or the file a linked work tree has).
fn git_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_wins_then_the_config_then_the_git_top_then_the_working_dir() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        let deep = repo.join("snapshots/prod");
        std::fs::create_dir_all(&deep).unwrap();
        let config = repo.join("kco.yaml");
        let env = StateDir::find(Some(Path::new("st")), Some(&config), &deep);
        assert_eq!(env.root(), deep.join("st"));
        assert_eq!(env.found(), Found::Env);
        let by_config = StateDir::find(Some(Path::new("")), Some(&config), &deep);
        assert_eq!(by_config.root(), repo.join(".kco"));
        assert_eq!(by_config.found(), Found::Config);
        // A relative --config is taken from the current directory.
        let rel = StateDir::find(None, Some(Path::new("../../kco.yaml")), &deep);
        assert_eq!(rel.root(), deep.join("../../.kco"));
        // No config: the top of the git work tree, from any directory in it.
        assert_eq!(StateDir::find(None, None, &deep).root(), deep.join(".kco"));
        std::fs::create_dir(repo.join(".git")).unwrap();
        let top = StateDir::find(None, None, &deep);
        assert_eq!(
            (top.root(), top.found()),
            (&*repo.join(".kco"), Found::GitTop)
        );
    }

    /// The state directory keeps itself out of git: created with a `.gitignore` of `*`, which
    /// git then honours; one that exists is not touched.
    #[test]
    fn a_new_state_directory_ignores_itself() {
        let repo = tempfile::tempdir().unwrap();
        let state = StateDir::at(repo.path().join(".kco"));
        state.create().unwrap();
        let ignore = repo.path().join(".kco/.gitignore");
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), GITIGNORE);
        std::fs::create_dir_all(repo.path().join(".kco/backups/x")).unwrap();
        std::fs::write(repo.path().join(".kco/backups/x/a.yaml"), "x").unwrap();
        let git = git2::Repository::init(repo.path()).unwrap();
        assert!(git
            .is_path_ignored(Path::new(".kco/backups/x/a.yaml"))
            .unwrap());
        assert!(git.is_path_ignored(Path::new(".kco/.gitignore")).unwrap());
        std::fs::remove_file(&ignore).unwrap();
        state.create().unwrap();
        assert!(!ignore.exists(), "an existing directory is left as it is");
        // Every operation makes the directory by taking its lock first.
        let fresh = StateDir::at(repo.path().join("sub/.kco"));
        let _lock = super::super::lock::ClusterLock::acquire(&fresh, "a", "t0").unwrap();
        assert!(repo.path().join("sub/.kco/.gitignore").exists());
    }

    #[test]
    fn backups_of_the_same_second_get_their_own_directory() {
        let t = tempfile::tempdir().unwrap();
        let s = StateDir::at(t.path());
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_706_702_400);
        let first = s.new_backup_dir("prod", now);
        assert_eq!(first, t.path().join("backups/20240131T120000Z/prod"));
        std::fs::create_dir_all(&first).unwrap();
        let second = s.new_backup_dir("prod", now);
        assert_eq!(second, t.path().join("backups/20240131T120000Z-2/prod"));
    }
}
