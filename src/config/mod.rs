//! `kco.yaml`: named clusters, how to reach them, and where snapshots live.
//!
//! String values may reference environment variables as `${env:NAME}`, so that no secret has
//! to be committed. Secrets are held in [`Secret`], whose `Debug` and `Display` print
//! `(redacted)`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::client::{Auth, Secret};
use crate::client::{Backend, HttpOptions, TlsOptions};

mod cloud;
mod connect_topics;
mod kafka;
mod msk;
pub use kafka::{DrSettings, MirrorAlarm};
mod raw;
#[cfg(test)]
mod tests;

use raw::RawCluster;
use raw::RawConfig;

pub const FILE_NAME: &str = "kco.yaml";
pub const DEFAULT_URL: &str = "http://localhost:8083";
pub const DEFAULT_SNAPSHOTS_DIR: &str = "snapshots";
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// A configuration problem, naming the file and, where known, the line.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    /// A next step, when there is one.
    pub hint: Option<String>,
}

/// A loaded `kco.yaml`.
#[derive(Debug, Default)]
pub struct Config {
    /// The file it came from (`None`: no file, defaults only).
    pub path: Option<PathBuf>,
    raw: RawConfig,
}

/// Where the cluster locks are kept (`lock:` in kco.yaml, [docs/config.md]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LockSetting {
    /// Not set: on the git remote every runner pushes to (the current branch's upstream
    /// remote, else `origin`), and on this machine only when there is none.
    #[default]
    Auto,
    /// `lock: local`: on this machine only.
    Local,
    /// `lock: {remote: NAME}`: on that git remote.
    Remote(String),
}

/// Where the cluster name and the URL given to [`Config::resolve_from`] came from, as their
/// errors name them.
#[derive(Debug, Clone, Copy)]
pub struct Sources {
    /// `--cluster` or `KCO_CLUSTER`.
    pub cluster: &'static str,
    /// `--url` or `KCO_URL`.
    pub url: &'static str,
}

impl Sources {
    /// Both from their flags.
    pub const FLAGS: Sources = Sources {
        cluster: "--cluster",
        url: "--url",
    };
}

/// One cluster, resolved: its name and how to reach it.
#[derive(Debug, Clone)]
pub struct ClusterTarget {
    pub name: String,
    pub http: HttpOptions,
    /// The service behind it: Kafka Connect, or Confluent Cloud (`confluentCloud:`).
    pub backend: Backend,
    /// The environment variables its credentials come from (`${env:VAR}` in kco.yaml), for
    /// a refusal to name.
    pub credential_vars: Vec<String>,
}

/// Every key under a cluster's `mirrors:` names a cluster of the file (the one whose
/// snapshot files are translated); anything else would load and never be used.
fn check_mirror_keys(path: &Path, text: &str, raw: &RawConfig) -> Result<(), ConfigError> {
    for (name, cluster) in &raw.clusters {
        for key in cluster.mirrors.keys() {
            if raw.clusters.contains_key(key) {
                continue;
            }
            let lines: Vec<&str> = text.lines().collect();
            let line = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.contains("mirrors"))
                .find_map(|(i, _)| {
                    (i..lines.len().min(i + 8)).find(|j| {
                        lines[*j].contains(&format!("{key}:"))
                            || lines[*j].contains(&format!("{{{key}:"))
                    })
                })
                .map(|i| i + 1);
            let names: Vec<String> = raw.clusters.keys().map(|k| format!("`{k}`")).collect();
            return Err(ConfigError {
                path: path.to_path_buf(),
                line,
                message: format!(
                    "cluster `{name}`: `mirrors.{key}` names no cluster of this file; a key under `mirrors:` is the cluster whose snapshot files MirrorMaker 2 mirrors here (its `alias:` is MM2's source alias)"
                ),
                hint: Some(format!("clusters: {}", names.join(", "))),
            });
        }
    }
    Ok(())
}

impl Config {
    /// Finds `kco.yaml` in `start` or a parent directory.
    pub fn discover(start: &Path) -> Option<PathBuf> {
        start
            .ancestors()
            .map(|d| d.join(FILE_NAME))
            .find(|p| p.is_file())
    }

    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot read: {e}"),
            hint: None,
        })?;
        Self::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let raw: RawConfig = if text.trim().is_empty() {
            RawConfig::default()
        } else {
            serde_yaml::from_str(text).map_err(|e| {
                let at = crate::model::syntax_position(text, &e);
                let message = e
                    .to_string()
                    .split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                // serde_yaml places a value's own refusal at the start of the file: `lock:`
                // is placed on its line instead.
                let at = match raw::RawLock::refused(&message) {
                    true => text
                        .lines()
                        .position(|l| l.starts_with("lock:"))
                        .map(|i| (i + 1, 1))
                        .or(at),
                    false => at,
                };
                // serde names the struct a value should have been: say what it is instead.
                let message = message.replace(
                    "expected struct RawCluster",
                    "expected a cluster's keys (`url:` or `urls:`, `auth:`, `kafka:`, ...), indented under its name",
                );
                let hint = (message.contains(".urls: invalid type: string")).then(|| {
                    "`urls` is a list: `urls: [http://connect-1:8083, http://connect-2:8083]`; one URL is `url: http://connect-1:8083`".to_string()
                });
                ConfigError {
                    path: path.to_path_buf(),
                    line: at.map(|a| a.0),
                    message: match at {
                        Some((_, column)) => format!("column {column}: {message}"),
                        None => message,
                    },
                    hint,
                }
            })?
        };
        check_mirror_keys(path, text, &raw)?;
        Ok(Config {
            path: Some(path.to_path_buf()),
            raw,
        })
    }

    fn err(&self, key: &str, message: String) -> ConfigError {
        let path = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(FILE_NAME));
        let line = std::fs::read_to_string(&path).ok().and_then(|t| {
            t.lines()
                .position(|l| l.trim_start().starts_with(&format!("{key}:")))
                .map(|i| i + 1)
        });
        ConfigError {
            path,
            line,
            message,
            hint: None,
        }
    }

    /// The offset shapes in force: the built-in table with the config's `shapes:` entries and
    /// those of the file `shapesFile:` names (relative to kco.yaml) added or replacing.
    pub fn shapes(&self) -> Result<crate::shapes::Shapes, ConfigError> {
        let path = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(FILE_NAME));
        let mut user = self.raw.shapes.clone();
        if !user.is_empty() {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            crate::shapes::check_entries(&user, &text).map_err(|e| ConfigError {
                path: path.clone(),
                line: e.line,
                message: e.message,
                hint: Some("the format of a shapes entry: docs/shapes.md; `kco schema --shapes` prints the built-in table".into()),
            })?;
        }
        if let Some(file) = &self.raw.shapes_file {
            let file = path.parent().unwrap_or(Path::new(".")).join(file);
            let text = std::fs::read_to_string(&file).map_err(|e| ConfigError {
                path: path.clone(),
                line: None,
                message: format!("shapesFile {}: cannot read: {e}", file.display()),
                hint: None,
            })?;
            let more = crate::shapes::parse_table(&text).map_err(|e| ConfigError {
                path: file.clone(),
                line: e.line,
                message: e.message,
                hint: Some("the format of a shapes entry: docs/shapes.md; `kco schema --shapes` prints the built-in table".into()),
            })?;
            for s in more {
                if user
                    .iter()
                    .any(|u| u.connector_type == s.connector_type && u.class == s.class)
                {
                    return Err(ConfigError {
                        path: file,
                        line: None,
                        message: format!(
                            "shape `{}` is both in `shapes:` and in this file",
                            s.class.as_deref().unwrap_or("(every sink)")
                        ),
                        hint: None,
                    });
                }
                user.push(s);
            }
        }
        Ok(crate::shapes::Shapes::with_user(user))
    }

    /// The snapshots directory, relative paths taken from the config file's directory.
    pub fn snapshots_dir(&self) -> PathBuf {
        let dir = self
            .raw
            .snapshots_dir
            .clone()
            .unwrap_or_else(|| DEFAULT_SNAPSHOTS_DIR.to_string());
        match &self.path {
            Some(p) if Path::new(&dir).is_relative() => {
                p.parent().unwrap_or(Path::new(".")).join(dir)
            }
            _ => PathBuf::from(dir),
        }
    }

    /// Where the cluster locks are kept (`lock:`; not set: a git remote when there is one).
    pub fn lock_setting(&self) -> LockSetting {
        match &self.raw.lock {
            None => LockSetting::Auto,
            Some(raw::RawLock::Local) => LockSetting::Local,
            Some(raw::RawLock::Remote(name)) => LockSetting::Remote(name.clone()),
        }
    }

    /// Names of the configured clusters.
    pub fn cluster_names(&self) -> Vec<String> {
        self.raw.clusters.keys().cloned().collect()
    }

    /// The cluster used when none is named: `defaultCluster`, else the only configured one.
    pub fn implicit_cluster(&self) -> Option<String> {
        self.raw
            .default_cluster
            .clone()
            .or_else(|| (self.raw.clusters.len() == 1).then(|| self.cluster_names()[0].clone()))
    }

    /// The cluster to use: `--cluster`, else `defaultCluster`, else the only configured
    /// cluster, else (no cluster configured) the default URL; `--url` replaces its URLs (a
    /// URL with no such cluster is cluster `default`). Several clusters and none chosen is an
    /// error: kco does not guess.
    pub fn resolve(
        &self,
        cluster: Option<&str>,
        url: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ClusterTarget, ConfigError> {
        self.resolve_from(cluster, url, env, Sources::FLAGS)
    }

    /// [`Config::resolve`], with the errors that `cluster` or `url` cause naming where they
    /// came from (`--cluster` or KCO_CLUSTER, `--url` or KCO_URL).
    pub fn resolve_from(
        &self,
        cluster: Option<&str>,
        url: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        from: Sources,
    ) -> Result<ClusterTarget, ConfigError> {
        let mut target = self.resolve_raw(cluster, url, env, from)?;
        target.http.move_url_credentials().map_err(|e| match url {
            // The URL came from the command line: the flag is to blame, not kco.yaml.
            Some(_) => ConfigError {
                path: PathBuf::from(from.url),
                line: None,
                message: e.to_string(),
                hint: None,
            },
            None => {
                let mut c = self.err("url", format!("cluster `{}`: {e}", target.name));
                if self.path.is_none() {
                    c.path = PathBuf::from("KCO_URL or the default URL");
                }
                c
            }
        })?;
        Ok(target)
    }

    fn resolve_raw(
        &self,
        cluster: Option<&str>,
        url: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        from: Sources,
    ) -> Result<ClusterTarget, ConfigError> {
        if let Some(url) = url {
            // The URLs of the cluster that would be used without them.
            let name = cluster
                .map(str::to_string)
                .or_else(|| self.implicit_cluster())
                .unwrap_or_else(|| "default".to_string());
            if self.is_cloud(&name) {
                let mut e = self.err(
                    "confluentCloud",
                    format!(
                        "{} names a worker, but cluster `{name}` is a Confluent Cloud cluster: kco reaches it at its `confluentCloud.endpoint`",
                        from.url
                    ),
                );
                e.path = PathBuf::from(from.url);
                e.line = None;
                e.hint = Some(format!("leave {} out for cluster `{name}`", from.url));
                return Err(e);
            }
            let mut http = match self.raw.clusters.get(&name) {
                Some(raw) => self.cluster_options(&name, raw, env)?.0,
                None => plain_options(url),
            };
            http.urls = url.split(',').map(|u| u.trim().to_string()).collect();
            return Ok(ClusterTarget {
                name,
                http,
                backend: Backend::Connect,
                credential_vars: Vec::new(),
            });
        }
        let name = cluster
            .map(str::to_string)
            .or_else(|| self.implicit_cluster());
        match name {
            Some(name) => match self.raw.clusters.get(&name) {
                Some(raw) => {
                    let (http, backend) = self.cluster_options(&name, raw, env)?;
                    let credential_vars = raw
                        .confluent_cloud
                        .iter()
                        .flat_map(|c| [&c.api_key, &c.api_secret])
                        .flat_map(|v| referenced_vars(v))
                        .collect();
                    Ok(ClusterTarget {
                        http,
                        backend,
                        name,
                        credential_vars,
                    })
                }
                None => Err(self.unknown_cluster(&name, cluster.map(|_| from.cluster))),
            },
            None if self.raw.clusters.len() > 1 => {
                let names = self.cluster_names();
                let mut e = self.err(
                    "clusters",
                    format!(
                        "{} are configured ({}) and none is chosen",
                        crate::text::count(names.len(), "cluster"),
                        names.join(", ")
                    ),
                );
                e.hint = Some(format!(
                    "pass `--cluster NAME` (or set KCO_CLUSTER), or set `defaultCluster: {}` in {}",
                    names[0], FILE_NAME
                ));
                Err(e)
            }
            None => Ok(ClusterTarget {
                name: "default".into(),
                http: plain_options(DEFAULT_URL),
                backend: Backend::Connect,
                credential_vars: Vec::new(),
            }),
        }
    }

    /// A TLS file that kco.yaml names under `key` (relative to kco.yaml's directory): its
    /// bytes, or an error led by `what` when it cannot be read or holds no PEM block of the
    /// kind `key` wants (a file without one would be taken as "no CA", or fail late).
    pub(crate) fn read_pem(
        &self,
        what: &str,
        key: &str,
        file: &str,
    ) -> Result<Vec<u8>, ConfigError> {
        let base = self
            .path
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        let p = base.join(file);
        let bytes = std::fs::read(&p)
            .map_err(|e| self.err(key, format!("{what}: cannot read {}: {e}", p.display())))?;
        let (wanted, kind) = if key == "keyFile" {
            ("PRIVATE KEY-----", "private key")
        } else {
            ("-----BEGIN CERTIFICATE-----", "certificate")
        };
        if !String::from_utf8_lossy(&bytes).contains(wanted) {
            return Err(self.err(key, format!("{what}: {} holds no PEM {kind}", p.display())));
        }
        Ok(bytes)
    }

    /// The line of kco.yaml where `value` first appears.
    fn line_of(&self, value: &str) -> Option<usize> {
        let text = std::fs::read_to_string(self.path.as_ref()?).ok()?;
        text.lines().position(|l| l.contains(value)).map(|i| i + 1)
    }

    /// A cluster name kco.yaml does not configure: blamed on `--cluster` (or KCO_CLUSTER,
    /// `named_by`) when it came from there, else on the `defaultCluster:` line; the closest
    /// configured name as a hint.
    fn unknown_cluster(&self, name: &str, named_by: Option<&str>) -> ConfigError {
        let known = self.cluster_names();
        let listed = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        let mut e = if let Some(by) = named_by {
            let mut e = self.err(
                "clusters",
                format!("no cluster `{name}` ({by}) in the config (known: {listed})"),
            );
            e.line = None;
            e
        } else {
            self.err(
                "defaultCluster",
                format!("defaultCluster `{name}` is not a configured cluster (known: {listed})"),
            )
        };
        e.hint = crate::text::closest(&known, name).map(|c| format!("did you mean `{c}`?"));
        e
    }

    fn cluster_options(
        &self,
        name: &str,
        raw: &RawCluster,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(HttpOptions, Backend), ConfigError> {
        if let Some(msk) = &raw.msk_connect {
            return self.msk_options(name, raw, msk, env);
        }
        if let Some(cloud) = &raw.confluent_cloud {
            return self.cloud_options(name, raw, cloud, env);
        }
        let interp = |key: &str, v: &str| -> Result<String, ConfigError> {
            interpolate(v, env).map_err(|var| {
                self.err(
                    key,
                    format!(
                        "cluster `{name}`: `{key}` references ${{env:{var}}}, which is not set"
                    ),
                )
            })
        };
        let mut urls: Vec<String> = raw
            .url
            .iter()
            .cloned()
            .chain(raw.urls.iter().cloned())
            .collect();
        for u in urls.iter_mut() {
            *u = interp("urls", u)?;
            if let Err(e) = crate::client::check_worker_url(u) {
                let mut err = self.err("urls", format!("cluster `{name}`: {e}"));
                err.line = self.line_of(u).or(err.line);
                return Err(err);
            }
        }
        if urls.is_empty() {
            return self.topics_only_options(name, raw);
        }
        let auth = match raw.auth.as_ref().map(|a| (&a.basic, &a.bearer)) {
            None | Some((None, None)) => None,
            Some((Some(b), None)) => Some(Auth::Basic {
                username: interp("username", &b.username)?,
                password: Secret::new(interp("password", &b.password)?),
            }),
            Some((None, Some(b))) => Some(Auth::Bearer {
                token: Secret::new(interp("token", &b.token)?),
            }),
            Some((Some(_), Some(_))) => {
                return Err(self.err(
                    "auth",
                    format!("cluster `{name}`: `auth` takes `basic` or `bearer`, not both"),
                ))
            }
        };
        let mut headers = BTreeMap::new();
        for (k, v) in &raw.headers {
            headers.insert(k.clone(), Secret::new(interp(k, v)?));
        }
        let read = |key: &str, file: &Option<String>| -> Result<Option<Vec<u8>>, ConfigError> {
            match file {
                None => Ok(None),
                Some(f) => self
                    .read_pem(&format!("cluster `{name}`"), key, &interp(key, f)?)
                    .map(Some),
            }
        };
        let mut tls = TlsOptions::default();
        if let Some(t) = &raw.tls {
            tls.ca_pem = read("caFile", &t.ca_file)?;
            let cert = read("certFile", &t.cert_file)?;
            let key = read("keyFile", &t.key_file)?;
            match (cert, key) {
                (Some(mut c), Some(k)) => {
                    c.push(b'\n');
                    c.extend(k);
                    tls.identity_pem = Some(Secret::new(String::from_utf8_lossy(&c).into_owned()));
                }
                (None, None) => {}
                _ => {
                    return Err(self.err(
                        "tls",
                        format!("cluster `{name}`: `certFile` and `keyFile` go together"),
                    ))
                }
            }
            tls.insecure = t.insecure_skip_verify;
        }
        let http = HttpOptions {
            urls,
            auth,
            headers,
            timeout: Duration::from_secs(raw.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECS)),
            tls,
        };
        Ok((http, Backend::Connect))
    }
}

fn plain_options(url: &str) -> HttpOptions {
    HttpOptions {
        urls: url.split(',').map(|u| u.trim().to_string()).collect(),
        auth: None,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
        tls: TlsOptions::default(),
    }
}

/// The variables `value` references as `${env:VAR}`, in order.
pub fn referenced_vars(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${env:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        out.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    out
}

/// Whether `url`'s host is a loopback address (`localhost` too); `None` when it has no host.
/// Plain HTTP is allowed to a loopback address only: a local stand-in of a service.
fn loopback(url: &url::Url) -> Option<bool> {
    Some(match url.host()? {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(a) => a.is_loopback(),
        url::Host::Ipv6(a) => a.is_loopback(),
    })
}

/// Replaces every `${env:NAME}` in `value`; the name of the first unset variable is the error.
pub fn interpolate(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let var = &after[..end];
        out.push_str(&env(var).ok_or_else(|| var.to_string())?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
