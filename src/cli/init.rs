//! `kco init`: a kco.yaml for a Connect URL checked first, the git repository the snapshots
//! are kept in, the schema file a snapshot adds, and on request a first snapshot.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Context, GlobalArgs};
use crate::config::{ClusterTarget, Config, ConfigError, DEFAULT_URL, FILE_NAME};
use crate::error::{Error, Result, EXIT_ERROR, EXIT_OK};
use crate::kafka::KafkaOptions;

/// Write kco.yaml for a Connect worker URL, checked first
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
Checks the worker URL first (--url, else KCO_URL, else http://localhost:8083): it must answer \
`GET /` as Kafka Connect, within the cluster's timeout; a URL that does not (nothing listens, \
a Kafka broker's port, https:// against a plain-HTTP worker) fails as every command's first \
contact does, with the same hint, and nothing is written. --kafka is checked too: its brokers \
must answer and be the Kafka cluster the workers use.\n\n\
Then it writes kco.yaml (--config: that file) with one cluster, named by --cluster, else \
guessed from the URL's host (`prod` for connect-1.prod.example.com, `local` for localhost or \
an IP address). Credentials in the URL are not written: the password becomes \
${env:KCO_<CLUSTER>_PASSWORD}. An existing kco.yaml is never overwritten without --force.\n\n\
In a directory outside any git repository it runs `git init` (--no-git: it says how instead), \
and it writes snapshots/connector-offsets-v1.json, the JSON Schema that the first line of every \
snapshot file points editors at (kco keeps it current; commit it with the files). --snapshot \
then takes the first snapshot. Nothing is asked on the terminal: every choice is a flag.\n\n\
Exit codes: 0 written; 1 an error (the URL or Kafka does not answer as expected, kco.yaml \
exists and no --force, a write failed; nothing is written then), or --snapshot could not read \
every connector.\n\n\
Examples:\n  kco init --url http://localhost:8083\n  \
kco init --url http://connect-1.prod:8083 --kafka broker-1.prod:9092\n  \
kco init --snapshot")]
pub struct Args {
    /// The cluster's Kafka, `host:port[,host:port...]`, written as its `kafka: {bootstrap}`
    /// (read for DR, sinks' lag, orphaned offsets, and the offsets of workers before 3.5)
    #[arg(long, value_name = "BOOTSTRAP")]
    pub kafka: Option<String>,
    /// Overwrite an existing kco.yaml
    #[arg(long)]
    pub force: bool,
    /// Take the first snapshot once kco.yaml is written
    #[arg(long)]
    pub snapshot: bool,
    /// Outside a git repository, do not run `git init` (say how instead)
    #[arg(long)]
    pub no_git: bool,
}

/// What `kco init` did, as `-o json` prints it.
#[derive(Debug, Serialize)]
struct InitReport {
    /// The file written.
    config: String,
    cluster: String,
    urls: Vec<String>,
    /// What `GET /` said: the worker's version.
    connect_version: String,
    connectors: usize,
    kafka: Option<String>,
    /// `initialized`, `existing` or `none` (--no-git outside a repository).
    git: &'static str,
    /// The environment variable the password is read from, when the URL had one.
    password_env: Option<String>,
    /// The schema file written (or found current).
    schema: String,
    /// Whether git has an identity to commit with (`snapshot --commit` needs one).
    git_identity: bool,
    snapshot: Option<crate::engine::snapshot::SnapshotReport>,
}

pub fn run(args: Args, global: &GlobalArgs) -> Result<u8> {
    let ctx = Context::without_config(global)?;
    let path = match &global.config {
        Some(p) => ctx.cwd.join(p),
        None => ctx.cwd.join(FILE_NAME),
    };
    let dir = path
        .parent()
        .map_or_else(|| ctx.cwd.clone(), Path::to_path_buf);
    #[cfg(unix)]
    let _checkout_stays_its_owners = crate::owner::Keep::start(vec![dir.clone()]);
    let shown = ctx.display_path(&path);
    if path.exists() && !args.force {
        return Err(ConfigError {
            path: PathBuf::from(&shown),
            line: None,
            message: "exists already; kco init never overwrites it without --force, and nothing was changed".into(),
            hint: Some(
                "`kco doctor` checks the clusters it names; `kco init --force` writes a new one in its place".into(),
            ),
        }
        .into());
    }
    let url = global
        .url
        .clone()
        .unwrap_or_else(|| DEFAULT_URL.to_string());
    let name = global.cluster.clone().unwrap_or_else(|| guess_name(&url));
    let env = |k: &str| std::env::var(k).ok();
    let target = ctx
        .config
        .resolve_from(Some(&name), Some(&url), &env, ctx.sources())?;
    // The first contact, as every command makes it: a wrong URL fails here, with its hint.
    let client = ctx.connect(&target)?;
    let info = client
        .server_info()
        .map_err(|e| Error::client(e.first_contact(), e))?;
    let connectors = client.connector_names().map_err(|e| {
        Error::client(
            format!("cluster `{name}`: the worker answered, but listing its connectors failed"),
            e,
        )
    })?;
    let kafka = match &args.kafka {
        Some(bootstrap) => Some(check_kafka(&target, bootstrap, &info)?),
        None => None,
    };
    let p = &ctx.printer;
    if let Err(e @ Error::UnsupportedVersion { .. }) = crate::engine::probe::probe(&*client) {
        p.warn(&format!(
            "{e}: kco reads the offsets of cluster `{name}` through Kafka once kco.yaml gives it `kafka:` and `connectTopics: {{offsets: <the workers' offset.storage.topic>}}` (docs/through-kafka.md)"
        ));
    }
    // A kco.yaml of a parent directory, read from here until now.
    let shadowed = Config::discover(&dir).filter(|found| found.parent() != Some(dir.as_path()));
    if let (Some(found), None) = (shadowed, &global.config) {
        p.warn(&format!(
            "{} is no longer read from {}: the kco.yaml written there takes its place",
            ctx.display_path(&found),
            shown_dir(ctx.display_path(&dir))
        ));
    }
    let password_env = password_var(&target);
    let text = config_text(&target, kafka.as_deref(), password_env.as_deref());
    crate::fsutil::write_atomic(&path, text.as_bytes()).map_err(|source| Error::Write {
        path: path.clone(),
        source,
    })?;
    let git = match crate::engine::revision::in_repository(&dir) {
        true => "existing",
        false if args.no_git => "none",
        false => {
            crate::engine::revision::init_repository(&dir)?;
            "initialized"
        }
    };
    let snapshots = Config::load(&path)?.snapshots_dir();
    std::fs::create_dir_all(&snapshots).map_err(|source| Error::Write {
        path: snapshots.clone(),
        source,
    })?;
    crate::engine::store::write_schema(&snapshots)?;
    let schema = ctx.display_path(&snapshots.join(crate::model::file::SCHEMA_FILE));
    let git_identity =
        git != "none" && crate::engine::history::record::Committer::open(&snapshots).is_ok();
    let mut report = InitReport {
        config: shown,
        cluster: name.clone(),
        urls: worker_urls(&target),
        connect_version: info.version.clone(),
        connectors: connectors.len(),
        kafka,
        git,
        password_env,
        schema,
        git_identity,
        snapshot: None,
    };
    if !p.is_structured() {
        p.out(&render(&report, &ctx, &dir, &info));
    }
    let mut code = EXIT_OK;
    if args.snapshot {
        let mut g = global.clone();
        g.config = Some(path.clone());
        g.url = None;
        g.cluster = Some(name.clone());
        let ctx = Context::new(&g)?;
        crate::shapes::install(ctx.config.shapes()?);
        let snap = snapshot_args();
        if p.is_structured() {
            let r = super::snapshot::capture(&snap, &ctx, None)?;
            code = if r.failed().is_empty() {
                EXIT_OK
            } else {
                EXIT_ERROR
            };
            report.snapshot = Some(r);
        } else {
            code = super::snapshot::run(snap, &ctx)?;
        }
    }
    if p.is_structured() {
        p.structured(&report);
    } else {
        p.status(&next_steps(&report, args.snapshot));
    }
    Ok(code)
}

/// `kco snapshot`'s flags as they are when none is given.
fn snapshot_args() -> super::snapshot::Args {
    use clap::{Args as _, FromArgMatches};
    let cmd = super::snapshot::Args::augment_args(clap::Command::new("snapshot"));
    let matches = cmd
        .try_get_matches_from(["snapshot"])
        .expect("snapshot takes no flag");
    super::snapshot::Args::from_arg_matches(&matches).expect("snapshot's defaults")
}

/// `--kafka`: its brokers must answer, and be the Kafka cluster the workers say they use
/// (`GET /`'s `kafka_cluster_id`). Returns the bootstrap as written.
fn check_kafka(
    target: &ClusterTarget,
    bootstrap: &str,
    info: &crate::client::ServerInfo,
) -> Result<String> {
    let opts = KafkaOptions {
        bootstrap: bootstrap
            .split(',')
            .map(|b| b.trim().to_string())
            .filter(|b| !b.is_empty())
            .collect(),
        sasl: None,
        tls: None,
        timeout: target.http.timeout,
    };
    let meta = crate::kafka::groups::cluster_metadata(&opts).map_err(|source| Error::Kafka {
        context: format!("--kafka {bootstrap}: the cluster's Kafka does not answer"),
        source,
    })?;
    if let (Some(theirs), Some(ours)) = (&info.kafka_cluster_id, &meta.cluster_id) {
        if theirs != ours {
            return Err(Error::Usage(format!(
                "--kafka {bootstrap} is Kafka cluster `{ours}`, but the workers of cluster `{}` use Kafka cluster `{theirs}`: give the bootstrap servers of their Kafka; nothing was written",
                target.name
            )));
        }
    }
    Ok(opts.bootstrap.join(","))
}

/// The cluster name a URL suggests: the first label of its host that says more than
/// `connect`, `kafka` or a number (`prod` for `connect-1.prod.example.com`), `local` for
/// localhost or an IP address.
pub fn guess_name(url: &str) -> String {
    const GENERIC: &[&str] = &[
        "connect", "kafka", "worker", "workers", "rest", "api", "cp", "www", "node",
    ];
    let host = url::Url::parse(url.split(',').next().unwrap_or_default().trim())
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    let Some(host) = host else {
        return "default".into();
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare == "localhost" || bare.parse::<std::net::IpAddr>().is_ok() {
        return "local".into();
    }
    let generic = |label: &str| {
        label
            .split(['-', '_'])
            .all(|t| t.is_empty() || GENERIC.contains(&t) || t.chars().all(|c| c.is_ascii_digit()))
    };
    let labels: Vec<&str> = bare.split('.').filter(|l| !l.is_empty()).collect();
    labels
        .iter()
        .find(|l| !generic(l))
        .or(labels.first())
        .map_or_else(|| "default".into(), |l| l.to_string())
}

/// The variable the password of a URL's credentials is read from: `KCO_<CLUSTER>_PASSWORD`.
fn password_var(target: &ClusterTarget) -> Option<String> {
    match &target.http.auth {
        Some(crate::client::Auth::Basic { .. }) => {
            let name: String = target
                .name
                .chars()
                .map(|c| match c.is_ascii_alphanumeric() {
                    true => c.to_ascii_uppercase(),
                    false => '_',
                })
                .collect();
            Some(format!("KCO_{name}_PASSWORD"))
        }
        _ => None,
    }
}

/// A scalar as YAML takes it: plain when nothing in it means something to YAML, else quoted.
fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@".contains(c))
        && !s.starts_with(['-', ':', '@'])
        && !s.ends_with(':');
    match plain {
        true => s.to_string(),
        false => serde_json::to_string(s).expect("a string serializes"),
    }
}

/// The worker URLs, as kco.yaml gets them: one its credentials were taken out of came back
/// with the root path, which is left out again.
fn worker_urls(target: &ClusterTarget) -> Vec<String> {
    let root = |u: &str| url::Url::parse(u).is_ok_and(|p| p.path() == "/");
    target
        .http
        .urls
        .iter()
        .map(|u| match root(u) {
            true => u.trim_end_matches('/').to_string(),
            false => u.clone(),
        })
        .collect()
}

/// kco.yaml for one cluster; no secret in it (the password, if any, as `${env:VAR}`).
fn config_text(target: &ClusterTarget, kafka: Option<&str>, password_env: Option<&str>) -> String {
    let urls: Vec<String> = worker_urls(target).iter().map(|u| scalar(u)).collect();
    let mut out = format!(
        "# kco.yaml: the Kafka Connect clusters kco works with (docs/config.md), written by\n\
         # `kco init`; `kco doctor` checks it. Snapshots go to snapshots/<cluster>/.\n\
         clusters:\n  {}:\n    urls: [{}]\n",
        scalar(&target.name),
        urls.join(", ")
    );
    if let (Some(crate::client::Auth::Basic { username, .. }), Some(var)) =
        (&target.http.auth, password_env)
    {
        out.push_str(&format!(
            "    auth:\n      basic: {{username: {}, password: \"${{env:{var}}}\"}}\n",
            scalar(username)
        ));
    }
    if let Some(k) = kafka {
        out.push_str(&format!(
            "    kafka:\n      bootstrap: {}\n",
            serde_json::to_string(k).expect("a string serializes")
        ));
    }
    out
}

/// What was done, for the terminal.
fn render(r: &InitReport, ctx: &Context, dir: &Path, info: &crate::client::ServerInfo) -> String {
    let mut out = format!(
        "Kafka Connect {} answers at {} ({})\n",
        info.version,
        r.urls.join(", "),
        super::words::count(r.connectors, "connector")
    );
    out.push_str(&format!(
        "Wrote {}: cluster `{}`{}\n",
        r.config,
        r.cluster,
        match &r.kafka {
            Some(k) => format!(", its Kafka at {k}"),
            None => String::new(),
        }
    ));
    if let Some(var) = &r.password_env {
        out.push_str(&format!(
            "kco.yaml reads the URL's password from {var}: set it where kco runs\n"
        ));
    }
    let shown_dir = shown_dir(ctx.display_path(dir));
    out.push_str(&match r.git {
        "initialized" => format!("Initialized a git repository in {shown_dir}\n"),
        "existing" => format!("{shown_dir} is in a git repository already\n"),
        _ => format!("{shown_dir} is not in a git repository: `git init` keeps the history\n"),
    });
    out.push_str(&format!(
        "Wrote {}: the snapshot files' JSON Schema\n  (their first line points editors at it; kco keeps it current; commit it)\n",
        r.schema
    ));
    if r.git != "none" && !r.git_identity {
        out.push_str("git has no identity here, which `kco snapshot --commit` needs:\n  git config user.name \"Your Name\" && git config user.email you@example.com\n");
    }
    out
}

/// A directory as the lines name it: `this directory` for the current one.
fn shown_dir(shown: String) -> String {
    match shown.as_str() {
        "" | "." => "this directory".into(),
        _ => shown,
    }
}

/// The next commands, on stderr.
fn next_steps(r: &InitReport, snapshotted: bool) -> String {
    let first = match snapshotted {
        true => String::new(),
        false => "\n  kco snapshot      takes the first snapshot".into(),
    };
    format!(
        "Next:\n  kco doctor        checks the setup{first}\n  git add {} snapshots && git commit -m \"offsets of {}\"",
        r.config, r.cluster
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_the_host_label_that_says_most() {
        for (url, name) in [
            ("http://connect-1.prod.example.com:8083", "prod"),
            ("https://kafka-connect.staging.svc:8083", "staging"),
            ("http://orders-connect:8083", "orders-connect"),
            ("http://connect:8083", "connect"),
            ("http://localhost:8083", "local"),
            ("http://127.0.0.1:8083,http://127.0.0.1:8084", "local"),
            ("http://[::1]:8083", "local"),
            ("http://Billing.Example.com", "billing"),
            ("not a url", "default"),
        ] {
            assert_eq!(guess_name(url), name, "{url}");
        }
    }

    fn target(urls: &str, name: &str) -> ClusterTarget {
        crate::config::Config::default()
            .resolve(Some(name), Some(urls), &|_| None)
            .unwrap()
    }

    /// What init writes loads back as the same cluster, with no secret in it.
    #[test]
    fn the_written_config_loads_back_without_the_password() {
        let t = target(
            "http://kco:s3cret@connect-1.prod:8083,http://connect-2.prod:8083",
            "prod eu",
        );
        let var = password_var(&t);
        assert_eq!(var.as_deref(), Some("KCO_PROD_EU_PASSWORD"));
        let text = config_text(&t, Some("b-1:9092,b-2:9092"), var.as_deref());
        assert!(!text.contains("s3cret"), "{text}");
        let c = crate::config::Config::parse(Path::new("kco.yaml"), &text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(c.cluster_names(), vec!["prod eu"]);
        let env = |k: &str| (k == "KCO_PROD_EU_PASSWORD").then(|| "from-env".to_string());
        let back = c.resolve(None, None, &env).unwrap();
        assert_eq!(
            back.http.urls,
            vec!["http://connect-1.prod:8083", "http://connect-2.prod:8083"]
        );
        match back.http.auth {
            Some(crate::client::Auth::Basic { username, password }) => {
                assert_eq!(username, "kco");
                assert_eq!(password.expose(), "from-env");
            }
            other => panic!("{other:?}"),
        }
        let kafka = c.dr_settings("prod eu", &env).unwrap().kafka.unwrap();
        assert_eq!(kafka.bootstrap, vec!["b-1:9092", "b-2:9092"]);
    }
}
