//! Settings resolved once from the global flags: the config file, the target cluster, and a
//! client for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{GlobalArgs, Printer};
use crate::client::layers::{RetryPolicy, Retrying, ServiceHints, TraceSink, Traced};
use crate::client::{service_for, Connect, ConnectVersion, HttpTransport, ServerInfo, Service};
use crate::config::{ClusterTarget, Config, ConfigError, Sources};
use crate::engine::membership::{self, same_url, Membership};
use crate::engine::operation::StateDir;
use crate::error::{Error, Result};
use crate::kafka::connect_topics::{ConnectTopics, KafkaSource};
use crate::kafka::through::ThroughKafka;

/// The cluster a URL names without `--cluster` (as `kco snapshot --url` writes it).
const URL_ALONE: &str = "default";

/// For a first contact that found no Kafka Connect: a worker URL with a path
/// (`http://host:8083/connectors`), where Connect's REST API is at the root, and the URL to
/// give instead (credentials left out).
fn path_hint(urls: &[String]) -> Option<String> {
    urls.iter().find_map(|raw| {
        let mut u = url::Url::parse(raw).ok()?;
        let path = u.path().to_string();
        if path == "/" || path.is_empty() {
            return None;
        }
        let _ = u.set_username("");
        let _ = u.set_password(None);
        u.set_path("");
        u.set_query(None);
        let root = u.as_str().trim_end_matches('/').to_string();
        Some(format!(
            "the worker URL `{}` has the path `{path}`: Connect's REST API is at the root of its port; give `{root}` (a path only where a proxy serves Connect under one)",
            crate::client::redact_url(raw)
        ))
    })
}

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

    /// A retrying client for a cluster. A cluster whose workers cannot be reached at all, or
    /// whose URL answers as something else than Kafka Connect, fails at once (a wrong URL
    /// should not wait out the retry deadline); once one has
    /// answered, transient failures are retried as usual.
    pub fn connect(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        self.connect_with(target, false)
    }

    /// [`Context::connect`] for a command that lists the cluster first (snapshot, diff, ls):
    /// the listing is asked for beside the first contact's `GET /`.
    pub fn connect_listing(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        self.connect_with(target, true)
    }

    fn connect_with(&self, target: &ClusterTarget, listing: bool) -> Result<Box<dyn Service>> {
        if target.backend.over_kafka() {
            return self.connect_topics(target);
        }
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
        if !target.backend.capabilities().version_endpoint {
            // No `GET /` to ask (Confluent Cloud): the command's first request, the listing,
            // proves the service is reachable and the credentials good.
            return Ok(self.stack_for(target, http, RetryPolicy::default()));
        }
        let once = self.stack(http.clone(), RetryPolicy::none());
        let client = self.stack(http.clone(), RetryPolicy::default());
        let client = match listing {
            true => client.with_listing_ahead(self.stack(http.clone(), RetryPolicy::none())),
            false => client,
        };
        match once.server_info() {
            // Nothing listens, what listens never answers, or it does not speak HTTP (a
            // Kafka broker's port): waiting out the retry deadline would not change that,
            // and nothing else is asked of the cluster.
            Err(e) if e.is_unreachable() || e.is_silent() || e.is_not_http() => {
                Err(Error::client(self.unreachable(target, &e), e))
            }
            Err(mut e) if e.is_auth_refused() || e.is_not_connect() => {
                if e.is_not_connect() {
                    if let Some(hint) = path_hint(&target.http.urls) {
                        e.hint = Some(Box::new(hint));
                    }
                }
                Err(Error::client(self.naming_kco_url(e.first_contact()), e))
            }
            Ok(info) => {
                self.check_given_url(target, &once, &info)?;
                let through = self.through_kafka(target, &info)?;
                let service: Box<dyn Service> = Box::new(client.with_first_info(info));
                Ok(match through {
                    Some((kafka, topic)) => Box::new(ThroughKafka::new(service, kafka, topic)),
                    None => service,
                })
            }
            Err(_) => Ok(Box::new(client)),
        }
    }

    /// A cluster without a REST API (kco.yaml gives it no `urls`, but `kafka:` and
    /// `connectTopics: {offsets, configs, status}`): read from its workers' internal topics,
    /// its offsets through Kafka as a worker's without the offsets endpoints. The Kafka
    /// cluster is asked at once whether it has the three topics: an unreachable broker or a
    /// missing topic fails here, naming the bootstrap address and the topic.
    fn connect_topics(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        let env = |k: &str| std::env::var(k).ok();
        let kafka = self.config.dr_settings(&target.name, &env)?.kafka;
        let topics = self.config.internal_topics(&target.name);
        let (Some(kafka), Some(topics)) = (kafka, topics) else {
            return Err(Error::Other(format!(
                "cluster `{}` has no `urls`, and kco.yaml gives it no `kafka:` and `connectTopics: {{offsets, configs, status}}` to read it from",
                target.name
            )));
        };
        let service = ConnectTopics::new(Arc::new(KafkaSource(kafka.clone())), topics.clone());
        service.check().map_err(|source| Error::Kafka {
            context: format!(
                "cluster `{}`, read from topics `{}`, `{}` and `{}`",
                target.name, topics.configs, topics.status, topics.offsets
            ),
            source,
        })?;
        Ok(Box::new(ThroughKafka::new(
            Box::new(service),
            kafka,
            topics.offsets,
        )))
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

    /// Where `target`'s offsets are read through Kafka: a worker without the offsets
    /// endpoints (before 3.5, by `GET /`'s version) whose cluster kco.yaml gives `kafka:`
    /// and `connectTopics.offsets`.
    fn through_kafka(
        &self,
        target: &ClusterTarget,
        info: &ServerInfo,
    ) -> Result<Option<(crate::kafka::KafkaOptions, String)>> {
        let old =
            ConnectVersion::parse(&info.version).is_some_and(|v| v < ConnectVersion::OFFSETS_READ);
        let Some(topic) = self.config.offsets_topic(&target.name).filter(|_| old) else {
            return Ok(None);
        };
        let env = |k: &str| std::env::var(k).ok();
        let kafka = self.config.dr_settings(&target.name, &env)?.kafka;
        Ok(kafka.map(|k| (k, topic.to_string())))
    }

    /// `what` went wrong with the URL, naming KCO_URL when that is where it came from.
    fn naming_kco_url(&self, what: &str) -> String {
        match (&self.global.url, self.global.url_from) {
            (Some(_), super::Origin::Env) => format!("{what} (the URL from KCO_URL)"),
            _ => what.to_string(),
        }
    }

    /// A worker given with `--url` (or KCO_URL) for a cluster that kco.yaml configures must
    /// be one of that cluster's: the same Kafka cluster and the same Connect group
    /// (`engine::membership`). A URL kco.yaml lists for the cluster passes at once; otherwise
    /// each configured worker is asked `GET /` (at once), and one of them and the given
    /// worker `GET /connectors`. When none answers, a warning says the check was not made.
    fn check_given_url(
        &self,
        target: &ClusterTarget,
        given: &dyn Service,
        info: &ServerInfo,
    ) -> Result<()> {
        if self.global.url.is_none() {
            return Ok(());
        }
        let env = |k: &str| std::env::var(k).ok();
        let Ok(configured) = self.config.resolve(Some(&target.name), None, &env) else {
            return Ok(());
        };
        let listed = |u: &String| configured.http.urls.iter().any(|c| same_url(c, u));
        if target.http.urls.iter().any(listed) {
            return Ok(());
        }
        let mut workers = Vec::new();
        for u in &configured.http.urls {
            let mut one = configured.clone();
            one.http.urls = vec![u.clone()];
            workers.push(self.client_once(&one)?);
        }
        let url = given.endpoint();
        let origin = self.sources().url;
        match membership::check(given, info, &target.name, &workers) {
            Membership::Belongs => Ok(()),
            Membership::Unchecked(why) => {
                self.printer.warn(&format!(
                    "cannot check that {url} ({origin}) is a worker of cluster `{}`: {why}",
                    target.name
                ));
                Ok(())
            }
            Membership::Foreign(why) => Err(Error::WorkerOfOtherCluster {
                url,
                origin: origin.into(),
                cluster: target.name.clone(),
                why,
            }),
        }
    }

    /// A client for `target` that tries each request once (a look at a cluster that must not
    /// wait out the retry deadline).
    pub fn client_once(&self, target: &ClusterTarget) -> Result<Box<dyn Service>> {
        if target.backend.over_kafka() {
            return self.connect_topics(target);
        }
        let http = HttpTransport::new(target.http.clone())
            .map_err(|e| Error::Other(format!("cluster `{}`: {e}", target.name)))?;
        Ok(self.stack_for(target, Arc::new(http), RetryPolicy::none()))
    }

    /// The layers for `target`'s service: for one that is not Kafka Connect, its backend,
    /// what a refusal of its credentials means (the API key named, never the secret) and an
    /// endpoint that does not answer (failing at once, as a Connect cluster's first contact
    /// does).
    fn stack_for(
        &self,
        target: &ClusterTarget,
        http: Arc<HttpTransport>,
        policy: RetryPolicy,
    ) -> Box<dyn Service> {
        let file = self
            .config
            .path
            .as_deref()
            .map(|p| self.display_path(p))
            .unwrap_or_else(|| crate::config::FILE_NAME.to_string());
        let Some(words) = target.backend.words(
            &target.name,
            target.http.auth.as_ref(),
            &file,
            &target.credential_vars,
        ) else {
            return Box::new(self.stack(http, policy));
        };
        let http = ServiceHints::new(http, words.refused, words.unreachable);
        let client = if self.printer.verbose && !self.printer.quiet {
            let printer = self.printer.clone();
            let sink: TraceSink = Box::new(move |line| printer.detail(line));
            Connect::new(Retrying::new(Traced::new(http, sink), policy).unreachable_fails_first())
        } else {
            Connect::new(Retrying::new(http, policy).unreachable_fails_first())
        };
        service_for(client, &target.backend)
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
        let from = match (&self.global.url, self.global.url_from) {
            (Some(_), super::Origin::Env) => ", the URL from KCO_URL",
            _ => "",
        };
        format!(
            "{} of cluster `{}` (tried {}{from}{default})",
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
