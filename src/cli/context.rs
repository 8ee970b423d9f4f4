//! Settings resolved once from the global flags: the config file, the target cluster, and a
//! client for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{GlobalArgs, Printer};
use crate::client::layers::{RetryPolicy, Retrying, TraceSink, Traced};
use crate::client::{Connect, HttpTransport};
use crate::config::{ClusterTarget, Config, ConfigError};
use crate::engine::operation::StateDir;
use crate::error::{Error, Result};

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

    /// The cluster named by `--cluster`/`--url`, or the config's default.
    pub fn target(&self) -> Result<ClusterTarget> {
        self.target_named(self.global.cluster.as_deref())
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
            .resolve(cluster, self.global.url.as_deref(), &env)?)
    }

    /// A retrying client for a cluster. A cluster whose workers cannot be reached at all, or
    /// whose URL answers as something else than Kafka Connect, fails at once (a wrong URL
    /// should not wait out the retry deadline); once one has
    /// answered, transient failures are retried as usual.
    pub fn connect(&self, target: &ClusterTarget) -> Result<Connect> {
        if target.http.tls.insecure {
            self.printer.warn(&format!(
                "TLS certificate checks are OFF for cluster `{}` (tls.insecureSkipVerify): anyone on the path can read its credentials and offsets",
                target.name
            ));
        }
        let http = Arc::new(
            HttpTransport::new(target.http.clone())
                .map_err(|e| Error::Other(format!("cluster `{}`: {e}", target.name)))?,
        );
        match self.stack(http.clone(), RetryPolicy::none()).server_info() {
            Err(e) if e.is_unreachable() => Err(Error::client(self.unreachable(target, &e), e)),
            Err(e) if e.is_auth_refused() || e.is_not_connect() => {
                Err(Error::client(e.first_contact(), e))
            }
            Ok(info) => Ok(self
                .stack(http, RetryPolicy::default())
                .with_first_info(info)),
            Err(_) => Ok(self.stack(http, RetryPolicy::default())),
        }
    }

    /// `cannot reach Kafka Connect of cluster `a` (tried URL, URL)`, and whether the cluster
    /// was the default one (no --cluster, no --url): in a DR the default often points at the
    /// lost region.
    fn unreachable(&self, target: &ClusterTarget, e: &crate::client::ClientError) -> String {
        let urls: Vec<String> = target
            .http
            .urls
            .iter()
            .map(|u| match (u.find("://"), u.find('@')) {
                (Some(s), Some(a)) if a > s => format!("{}{}", &u[..s + 3], &u[a + 1..]),
                _ => u.clone(),
            })
            .collect();
        let is_default = self.global.cluster.is_none()
            && self.global.url.is_none()
            && self.target_named(None).is_ok_and(|t| t.name == target.name);
        let default = if is_default {
            format!(
                "; `{}` is the default cluster (no --cluster given): name another with --cluster",
                target.name
            )
        } else {
            String::new()
        };
        format!(
            "{} of cluster `{}` (tried {}{default})",
            e.first_contact(),
            target.name,
            urls.join(", ")
        )
    }

    /// The layers over the HTTP transport: retries, and a trace of each attempt with -v.
    fn stack(&self, http: Arc<HttpTransport>, policy: RetryPolicy) -> Connect {
        if self.printer.verbose && !self.printer.quiet {
            let printer = self.printer.clone();
            let sink: TraceSink = Box::new(move |line| printer.detail(line));
            return Connect::new(Retrying::new(Traced::new(http, sink), policy));
        }
        Connect::new(Retrying::new(http, policy))
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
