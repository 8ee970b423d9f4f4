//! Settings resolved once from the global flags: the config file, the target cluster, and a
//! client for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{GlobalArgs, Printer};
use crate::client::Service;
use crate::config::{ClusterTarget, Config, ConfigError, Sources};
use crate::engine::operation::StateDir;
use crate::error::{Error, Result};
use crate::services::{self, Wiring};

/// The cluster a URL names without `--cluster` (as `kco snapshot --url` writes it).
const URL_ALONE: &str = "default";

/// What every subcommand gets.
pub struct Context {
    pub global: GlobalArgs,
    pub config: Config,
    pub cwd: PathBuf,
    pub printer: Printer,
}

impl Context {
    pub fn new(global: &GlobalArgs) -> Result<Self> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::Other(format!("no current directory: {e}")))?;
        let config = match &global.config {
            Some(p) => {
                if !p.is_file() {
                    return Err(ConfigError {
                        path: p.clone(),
                        line: None,
                        message: "config file not found".into(),
                        hint: None,
                    }
                    .into());
                }
                Config::load(p)?
            }
            None => match Config::discover(&cwd) {
                Some(p) => Config::load(&p)?,
                None => Config::default(),
            },
        };
        Ok(Context {
            global: global.clone(),
            config,
            cwd,
            printer: Printer::new(global),
        })
    }

    /// A context that reads no kco.yaml (`kco init`, which writes one, and must not stop at
    /// one that is there, broken, or a parent directory's).
    pub fn without_config(global: &GlobalArgs) -> Result<Self> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::Other(format!("no current directory: {e}")))?;
        Ok(Context {
            global: global.clone(),
            config: Config::default(),
            cwd,
            printer: Printer::new(global),
        })
    }

    /// The cluster named by `--cluster`/`--url`, or the config's default.
    pub fn target(&self) -> Result<ClusterTarget> {
        self.target_named(self.global.cluster.as_deref())
    }

    /// A URL (`--url`, KCO_URL) given without its cluster (`--cluster`, KCO_CLUSTER), where
    /// kco.yaml makes none the one used, stands for cluster `default`, as `kco snapshot --url`
    /// writes it. Where the snapshots
    /// directory `dir`, which a command reads or writes the cluster's files in, holds the
    /// files of other clusters and none of `default`'s (which kco.yaml does not configure
    /// either), that is a worker whose cluster was left unnamed: the command would work on an
    /// empty `default` (a review comparing nothing, a snapshot beside the real files), so this
    /// fails naming what is missing and the clusters the files are of.
    pub fn ensure_cluster_named(&self, dir: &Path) -> Result<()> {
        if !self.url_alone() {
            return Ok(());
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        let has_files = |d: &Path| {
            std::fs::read_dir(d).is_ok_and(|mut e| {
                e.any(|f| f.is_ok_and(|f| f.path().extension().is_some_and(|x| x == "yaml")))
            })
        };
        let clusters: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| has_files(&e.path()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        let place = self.display_path(dir);
        let found = |names: &str| {
            format!("{place} holds no files of `{URL_ALONE}` (it holds those of {names})")
        };
        match self.unnamed_cluster(clusters, &found) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// [`Context::ensure_cluster_named`] for a command given files: a file of another cluster
    /// than the `default` a URL alone stands for (`Error::OtherCluster`) is that error.
    pub fn naming_unnamed_cluster(&self, e: Error) -> Error {
        match &e {
            Error::OtherCluster {
                file,
                file_cluster,
                target,
            } if self.url_alone() && target == URL_ALONE => {
                let place = self.display_path(file);
                let found = |names: &str| format!("{place} is a file of cluster {names}");
                self.unnamed_cluster(vec![file_cluster.clone()], &found)
                    .unwrap_or(e)
            }
            _ => e,
        }
    }

    /// A URL given, no cluster, none that kco.yaml makes the one used (`defaultCluster`, a
    /// single cluster), and no `default` in kco.yaml.
    fn url_alone(&self) -> bool {
        self.global.url.is_some()
            && self.global.cluster.is_none()
            && self.config.implicit_cluster().is_none()
            && !self.config.cluster_names().iter().any(|c| c == URL_ALONE)
    }

    /// The error of a URL alone where the files are of `clusters` (`found` says where, given
    /// their names); `None` when there are none, or `default`'s among them.
    fn unnamed_cluster(
        &self,
        mut clusters: Vec<String>,
        found: &dyn Fn(&str) -> String,
    ) -> Option<Error> {
        if clusters.is_empty() || clusters.iter().any(|c| c == URL_ALONE) {
            return None;
        }
        clusters.sort();
        clusters.dedup();
        let names: Vec<String> = clusters.iter().map(|c| format!("`{c}`")).collect();
        let (name, which) = match clusters.as_slice() {
            [one] => (one.clone(), String::new()),
            _ => (
                "NAME".to_string(),
                format!(" (one of {})", names.join(", ")),
            ),
        };
        Some(
            ConfigError {
                path: PathBuf::from(self.sources().url),
                line: None,
                message: format!(
                    "names a worker but not its cluster: a URL alone stands for cluster `{URL_ALONE}`, and {}",
                    found(&names.join(", "))
                ),
                hint: Some(format!(
                    "name the cluster this worker belongs to{which}: KCO_CLUSTER={name} (or --cluster {name})"
                )),
            }
            .into(),
        )
    }

    /// The cluster whose snapshots directory a command that reads only files (and git) looks
    /// at: `--cluster`, else the one `--url` names (`default`, as `kco snapshot --url` writes
    /// it), else the configured default; `None` without configured clusters (then the whole
    /// snapshots directory).
    pub fn offline_cluster(&self) -> Option<String> {
        match &self.global.cluster {
            Some(c) => Some(c.clone()),
            None if self.global.url.is_some() => self.target().ok().map(|t| t.name),
            None if self.config.cluster_names().is_empty() => None,
            None => self.target().ok().map(|t| t.name),
        }
    }

    /// A named cluster (or the default when `None`), honouring `--url`.
    pub fn target_named(&self, cluster: Option<&str>) -> Result<ClusterTarget> {
        let env = |k: &str| std::env::var(k).ok();
        Ok(self
            .config
            .resolve_from(cluster, self.global.url.as_deref(), &env, self.sources())?)
    }

    /// Where `--cluster` and `--url` came from (the flags or KCO_CLUSTER and KCO_URL).
    pub fn sources(&self) -> Sources {
        Sources {
            cluster: self.global.cluster_from.name("--cluster", "KCO_CLUSTER"),
            url: self.global.url_from.name("--url", "KCO_URL"),
        }
    }

    /// A retrying client for a cluster (`services::connect`): one that cannot be reached at
    /// all, or whose URL answers as something else than its service, fails at once.
    pub fn connect(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        services::connect(&self.wiring(), target, false)
    }

    /// [`Context::connect`] for a command that lists the cluster first (snapshot, diff, ls):
    /// the listing is asked for beside the first contact's `GET /`.
    pub fn connect_listing(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        services::connect(&self.wiring(), target, true)
    }

    /// A client for `target` that tries each request once (a look at a cluster that must not
    /// wait out the retry deadline).
    pub fn client_once(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        services::connect_once(&self.wiring(), target)
    }

    /// What building a service needs, from the flags, kco.yaml and the printer.
    fn wiring(&self) -> Wiring<'_> {
        let file = self
            .config
            .path
            .as_deref()
            .map(|p| self.display_path(p))
            .unwrap_or_else(|| crate::config::FILE_NAME.to_string());
        let trace = (self.printer.verbose && !self.printer.quiet).then(|| {
            let printer = self.printer.clone();
            Arc::new(move |line: &str| printer.detail(line)) as services::Trace
        });
        Wiring {
            config: &self.config,
            file,
            given_url: self.global.url.as_deref(),
            sources: self.sources(),
            default_cluster: match (&self.global.cluster, &self.global.url) {
                (None, None) => self.target_named(None).ok().map(|t| t.name),
                _ => None,
            },
            trace,
            warn: Box::new(|w| self.printer.warn(w)),
        }
    }

    /// The Kafka cluster and the workers' offsets topic of `target`, from kco.yaml; `what`
    /// (the command) names the missing keys in the error.
    pub fn offsets_topic(
        &self,
        target: &ClusterTarget,
        what: &str,
    ) -> Result<(crate::kafka::KafkaOptions, String)> {
        let env = |k: &str| std::env::var(k).ok();
        let kafka = self.config.dr_settings(&target.name, &env)?.kafka;
        match (kafka, self.config.offsets_topic(&target.name)) {
            (Some(kafka), Some(topic)) => Ok((kafka, topic.to_string())),
            _ => Err(Error::Other(format!(
                "cluster `{}`: `{what}` reads the workers' offsets topic, and kco.yaml sets no `kafka:` and `connectTopics: {{offsets: ...}}` for it (hint: `offsets` is the workers' `offset.storage.topic`)",
                target.name
            ))),
        }
    }

    /// The flags that name cluster `name` again, for a command to suggest: with `--url` when
    /// the cluster came from it (its credentials left out).
    pub fn target_flags(&self, name: &str) -> String {
        match &self.global.url {
            Some(url) => format!("--cluster {name} --url {}", crate::client::redact_url(url)),
            None => format!("--cluster {name}"),
        }
    }

    /// The project's state directory (locks, journals, backups): `KCO_STATE_DIR`, else
    /// `.kco` next to the kco.yaml in use, else at the top of the git work tree, else here.
    pub fn state_dir(&self) -> StateDir {
        let env = std::env::var_os("KCO_STATE_DIR").map(PathBuf::from);
        StateDir::find(env.as_deref(), self.config.path.as_deref(), &self.cwd)
            .with_lock_setting(self.config.lock_setting())
    }

    /// Where a command writes in the project: the snapshots directory, the state directory
    /// and the git repository holding them (its commits, index, fetched lock and journal).
    pub fn written_dirs(&self) -> Vec<PathBuf> {
        let snapshots = self.snapshots_dir();
        let mut dirs = vec![self.state_dir().root().to_path_buf()];
        let top = [&snapshots, &self.cwd]
            .iter()
            .find_map(|d| d.ancestors().find(|a| a.join(".git").is_dir()));
        if let Some(top) = top {
            dirs.push(top.join(".git"));
        }
        dirs.push(snapshots);
        dirs
    }

    /// The snapshots directory from the config (default `snapshots/`).
    pub fn snapshots_dir(&self) -> PathBuf {
        let d = self.config.snapshots_dir();
        if d.is_relative() {
            self.cwd.join(d)
        } else {
            d
        }
    }

    /// A path as the user should see it: relative to the current directory when inside it
    /// (as `-o json` writes it too: `crate::shown_path`).
    pub fn display_path(&self, p: &Path) -> String {
        crate::shown_path::shown(p, &self.cwd)
    }
}
