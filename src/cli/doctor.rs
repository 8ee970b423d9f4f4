//! `kco doctor`: whether every cluster of kco.yaml can be worked with, and the project around
//! them (git, the lock's remote, the snapshots directory). Each check is `ok` or says what is
//! wrong and what to fix; the clusters are looked at with the clients every command uses.

use std::time::Instant;

use serde::Serialize;

use super::output::Style;
use super::report_error::ErrorBody;
use super::Context;
use crate::client::{ConnectVersion, ServerInfo, Service};
use crate::config::ClusterTarget;
use crate::engine::operation::remote_lock::{self, Store};
use crate::error::{Error, Result, EXIT_ERROR, EXIT_OK};

/// Check each cluster of kco.yaml, git and the lock's remote
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
For each cluster of kco.yaml (--cluster: that one; --url: that worker): reachable (and how \
long the first contact took), the Connect version, how offsets are read (Connect's offsets \
API, or through Kafka for a worker before 3.5, which needs `kafka:` and `connectTopics.offsets` \
in kco.yaml), the credentials accepted (the connectors listed), and where kco.yaml gives the \
cluster `kafka:`, its brokers answering as the workers' Kafka cluster with the topics of \
`connectTopics` present. Then the project: kco.yaml found, the git repository and an identity \
to commit with, the git remote the cluster locks are shared through answering, and the \
snapshots directory. Nothing is changed anywhere; no credential is printed.\n\n\
Each line is `ok`, or `FAIL` with what is wrong and a `fix:` line. With -o json: {ok, config, \
checks: [{cluster, check, ok, message, fix, elapsed_ms}]} (`cluster` null for the project's \
checks).\n\n\
Exit codes: 0 every check ok; 1 any check failed.\n\n\
Examples:\n  kco doctor\n  kco doctor --cluster prod\n  kco doctor -o json | jq '.checks[] | select(.ok | not)'")]
pub struct Args {}

/// One check, as `-o json` prints it.
#[derive(Debug, Serialize)]
struct Check {
    /// The cluster it is about; `None` for the project's checks.
    cluster: Option<String>,
    check: &'static str,
    ok: bool,
    message: String,
    /// What to do about a failure.
    fix: Option<String>,
    /// How long it took, for the checks that ask over the network.
    elapsed_ms: Option<u64>,
}

#[derive(Debug, Serialize)]
struct Report {
    ok: bool,
    /// The kco.yaml read (`None`: none found).
    config: Option<String>,
    checks: Vec<Check>,
}

/// The checks of one cluster, built one after another.
struct Checks<'a> {
    cluster: Option<&'a str>,
    list: Vec<Check>,
}

impl Checks<'_> {
    fn ok(&mut self, check: &'static str, message: String, elapsed: Option<Instant>) {
        self.push(check, true, message, None, elapsed);
    }

    fn fail(&mut self, check: &'static str, message: String, fix: Option<String>) {
        self.push(check, false, message, fix, None);
    }

    /// A failure told by an error: its message (with its causes) and its hint.
    fn error(&mut self, check: &'static str, e: &Error) {
        let body = ErrorBody::of(e);
        let mut message = body.message;
        for c in body.causes {
            message.push_str(&format!(": {c}"));
        }
        self.fail(check, message, body.hint);
    }

    fn push(
        &mut self,
        check: &'static str,
        ok: bool,
        message: String,
        fix: Option<String>,
        elapsed: Option<Instant>,
    ) {
        self.list.push(Check {
            cluster: self.cluster.map(str::to_string),
            check,
            ok,
            message,
            fix,
            elapsed_ms: elapsed.map(|t| t.elapsed().as_millis() as u64),
        });
    }
}

pub fn run(_args: Args, ctx: &Context) -> Result<u8> {
    let mut project = Checks {
        cluster: None,
        list: Vec::new(),
    };
    let config = ctx.config.path.as_deref().map(|p| ctx.display_path(p));
    match (&config, &ctx.global.url) {
        (Some(path), _) => project.ok(
            "config",
            format!(
                "{path}: {}",
                super::words::count(ctx.config.cluster_names().len(), "cluster")
            ),
            None,
        ),
        (None, Some(_)) => project.ok(
            "config",
            "no kco.yaml: the worker of --url alone is checked".into(),
            None,
        ),
        (None, None) => project.fail(
            "config",
            format!("no kco.yaml in {} or a parent directory", here(ctx)),
            Some("`kco init --url URL` writes one for a Connect worker (or name a file with --config)".into()),
        ),
    }
    let names: Vec<Option<String>> = match ctx.global.cluster.is_some() || ctx.global.url.is_some()
    {
        true => vec![None],
        false => match ctx.config.cluster_names() {
            n if n.is_empty() => vec![None],
            n => n.into_iter().map(Some).collect(),
        },
    };
    let clusters =
        crate::engine::parallel::map(&names, super::all_clusters::CLUSTERS_AT_ONCE, |name| {
            cluster_checks(ctx, name.as_deref())
        });
    let cluster_names: Vec<String> = clusters
        .iter()
        .filter_map(|c| c.first().and_then(|c| c.cluster.clone()))
        .collect();
    let mut rest = Checks {
        cluster: None,
        list: Vec::new(),
    };
    git_checks(ctx, &mut rest);
    snapshots_check(ctx, &mut rest, &cluster_names);
    let checks: Vec<Check> = clusters
        .into_iter()
        .flatten()
        .chain(project.list)
        .chain(rest.list)
        .collect();
    let report = Report {
        ok: checks.iter().all(|c| c.ok),
        config,
        checks,
    };
    let p = &ctx.printer;
    if p.is_structured() {
        p.structured(&report);
    } else {
        p.out(&render(ctx, &report));
        let failed: Vec<&Check> = report.checks.iter().filter(|c| !c.ok).collect();
        p.status(&match failed.len() {
            0 => format!(
                "All {} ok",
                super::words::count(report.checks.len(), "check")
            ),
            n => format!(
                "{n} of {} failed",
                super::words::count(report.checks.len(), "check")
            ),
        });
    }
    Ok(if report.ok { EXIT_OK } else { EXIT_ERROR })
}

/// The checks of one cluster (`None`: the one the global flags name, or the default); after
/// the first failure that leaves nothing else to ask, the others are left out.
fn cluster_checks(ctx: &Context, name: Option<&str>) -> Vec<Check> {
    let target = match ctx.target_named(name) {
        Ok(t) => t,
        Err(e) => {
            let mut c = Checks {
                cluster: name,
                list: Vec::new(),
            };
            c.error("config", &e);
            return c.list;
        }
    };
    let mut c = Checks {
        cluster: Some(&target.name),
        list: Vec::new(),
    };
    let started = Instant::now();
    let client = match ctx.connect(&target) {
        Ok(client) => client,
        // The worker answered `GET /`, refusing the credentials: reachable, not authorized.
        Err(e @ Error::Client { .. }) if refused(&e) => {
            c.ok("reachable", "the worker answered".into(), Some(started));
            c.error("auth", &e);
            return c.list;
        }
        Err(e) => {
            c.error("reachable", &e);
            return c.list;
        }
    };
    let place = crate::client::redact_url(&client.endpoint());
    c.ok("reachable", format!("{place} answered"), Some(started));
    let info = match client.server_info() {
        Ok(info) => info,
        Err(e) => {
            c.error("version", &Error::client(e.first_contact(), e));
            return c.list;
        }
    };
    let service = client.backend().service();
    c.ok("version", format!("{service} {}", info.version), None);
    offsets_check(ctx, &mut c, &target, &*client);
    let started = Instant::now();
    match client.connector_names() {
        Ok(names) => {
            let how = match &target.http.auth {
                Some(_) => "credentials accepted",
                None => "no credentials configured, none asked for",
            };
            c.ok(
                "auth",
                format!(
                    "{how}: {} listed",
                    super::words::count(names.len(), "connector")
                ),
                Some(started),
            );
        }
        Err(e) => c.error(
            "auth",
            &Error::client(
                format!("cluster `{}`: listing the connectors failed", target.name),
                e,
            ),
        ),
    }
    kafka_check(ctx, &mut c, &target, &info);
    c.list
}

/// Whether `e` is the worker refusing the credentials.
fn refused(e: &Error) -> bool {
    matches!(e, Error::Client { source, .. } if source.is_auth_refused())
}

/// How the cluster's offsets are read, and whether kco.yaml gives what that needs.
fn offsets_check(ctx: &Context, c: &mut Checks, target: &ClusterTarget, client: &dyn Service) {
    let caps = client.capabilities();
    match crate::engine::probe::probe(client) {
        Ok(_) if caps.offsets_through_kafka => {
            let topic = ctx
                .config
                .offsets_topic(&target.name)
                .unwrap_or("(unknown)");
            c.ok(
                "offsets",
                format!("read through Kafka: the sources' from topic `{topic}`, the sinks' from their consumer groups"),
                None,
            );
        }
        Ok(_) if !caps.version_endpoint => {
            c.ok("offsets", "the service's offsets API".into(), None)
        }
        Ok(found) if found.version < ConnectVersion::OFFSETS_WRITE => c.ok(
            "offsets",
            format!("Connect's offsets REST API, read only: apply, reset and undo need Kafka Connect {}", ConnectVersion::OFFSETS_WRITE),
            None,
        ),
        Ok(_) => c.ok(
            "offsets",
            "Connect's offsets REST API (read and alter)".into(),
            None,
        ),
        Err(e @ Error::UnsupportedVersion { .. }) => c.fail(
            "offsets",
            e.to_string(),
            Some(format!(
                "give cluster `{}` `kafka:` and `connectTopics: {{offsets: <the workers' offset.storage.topic>}}` in kco.yaml: kco then reads its offsets through Kafka (docs/through-kafka.md)",
                target.name
            )),
        ),
        Err(e) => c.error("offsets", &e),
    }
}

/// Where kco.yaml gives the cluster `kafka:`: its brokers answer, are the Kafka cluster the
/// workers use, and hold the topics of `connectTopics`.
fn kafka_check(ctx: &Context, c: &mut Checks, target: &ClusterTarget, info: &ServerInfo) {
    let env = |k: &str| std::env::var(k).ok();
    let kafka = match ctx.config.dr_settings(&target.name, &env) {
        Ok(s) => s.kafka,
        Err(e) => return c.error("kafka", &e.into()),
    };
    let Some(kafka) = kafka else {
        return;
    };
    let started = Instant::now();
    let bootstrap = kafka.bootstrap_display();
    let meta = match crate::kafka::groups::cluster_metadata(&kafka) {
        Ok(meta) => meta,
        Err(source) => {
            return c.error(
                "kafka",
                &Error::Kafka {
                    context: format!("cluster `{}`: its `kafka:` does not answer", target.name),
                    source,
                },
            )
        }
    };
    if !target.backend.over_kafka() {
        if let (Some(workers), Some(found)) = (&info.kafka_cluster_id, &meta.cluster_id) {
            if workers != found {
                return c.fail(
                    "kafka",
                    format!("{bootstrap} is Kafka cluster `{found}`, but the workers use Kafka cluster `{workers}`"),
                    Some(format!("`kafka.bootstrap` of cluster `{}` in kco.yaml must name the brokers of the Kafka cluster its workers use", target.name)),
                );
            }
        }
    }
    let mut wanted = Vec::new();
    match ctx.config.internal_topics(&target.name) {
        Some(t) => wanted.extend([
            ("offsets", t.offsets),
            ("configs", t.configs),
            ("status", t.status),
        ]),
        None => wanted.extend(
            ctx.config
                .offsets_topic(&target.name)
                .map(|t| ("offsets", t.to_string())),
        ),
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(_, t)| !meta.topics.contains(t))
        .map(|(key, t)| format!("`{t}` (connectTopics.{key})"))
        .collect();
    if !missing.is_empty() {
        return c.fail(
            "kafka",
            format!("{bootstrap} answers, but has no topic {}", missing.join(", ")),
            Some("connectTopics names the workers' offset.storage.topic, config.storage.topic and status.storage.topic: copy them from the workers' properties".into()),
        );
    }
    let topics: Vec<String> = wanted.iter().map(|(_, t)| format!("`{t}`")).collect();
    let present = match topics.is_empty() {
        true => String::new(),
        false => format!("; topics {} present", topics.join(", ")),
    };
    c.ok(
        "kafka",
        format!("{bootstrap} answered{present}"),
        Some(started),
    );
}

/// The git repository and its identity, and the remote the locks are shared through.
fn git_checks(ctx: &Context, c: &mut Checks) {
    let snapshots = ctx.snapshots_dir();
    let in_repo = crate::engine::revision::in_repository(&ctx.cwd);
    match crate::engine::history::record::Committer::open(&snapshots) {
        Ok(committer) => c.ok(
            "git",
            format!(
                "{}: a git repository, and an identity to commit with",
                shown_dir(ctx, committer.toplevel())
            ),
            None,
        ),
        Err(_) if !in_repo => c.fail(
            "git",
            format!(
                "{} is not in a git repository: the snapshots have no history",
                here(ctx)
            ),
            Some(
                "`git init` here (`kco init` does it), then commit kco.yaml and the snapshots"
                    .into(),
            ),
        ),
        Err(e) => c.error("git", &e),
    }
    let state = ctx.state_dir();
    let started = Instant::now();
    // `*`: the locks of every cluster, as `kco lock status` reads them.
    match state.lock_store("*") {
        Ok(Store::Remote(remote)) => match remote_lock::list(&remote) {
            Ok(held) => c.ok(
                "lock",
                format!(
                    "shared through git remote `{}`, which answers ({} held)",
                    remote.name,
                    super::words::count(held.len(), "lock")
                ),
                Some(started),
            ),
            Err(e) => c.error("lock", &e),
        },
        Ok(Store::Local(why)) => c.ok("lock", format!("this machine only: {}", why.why()), None),
        Err(e) => c.error("lock", &e),
    }
}

/// The snapshots directory: a directory kco can write in, and what it holds of each cluster.
fn snapshots_check(ctx: &Context, c: &mut Checks, clusters: &[String]) {
    let dir = ctx.snapshots_dir();
    let shown = ctx.display_path(&dir);
    let Ok(meta) = std::fs::metadata(&dir) else {
        return c.ok(
            "snapshots",
            format!("{shown} is not there yet: `kco snapshot` creates it"),
            None,
        );
    };
    if !meta.is_dir() {
        return c.fail(
            "snapshots",
            format!("{shown} is not a directory"),
            Some("remove it, or name another directory with `snapshotsDir:` in kco.yaml".into()),
        );
    }
    if meta.permissions().readonly() {
        return c.fail(
            "snapshots",
            format!("{shown} is read-only: `kco snapshot` cannot write there"),
            Some("make it writable for the user kco runs as".into()),
        );
    }
    let files = |cluster: &str| {
        std::fs::read_dir(crate::engine::store::cluster_dir(&dir, cluster)).map_or(0, |d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
                .count()
        })
    };
    let each: Vec<String> = clusters
        .iter()
        .map(|name| match files(name) {
            0 => format!("no file of `{name}` yet (`kco snapshot --cluster {name}`)"),
            n => format!("{} of `{name}`", super::words::count(n, "file")),
        })
        .collect();
    let schema = match dir.join(crate::model::file::SCHEMA_FILE).is_file() {
        true => "",
        false => "; no schema file yet (the next snapshot writes it)",
    };
    c.ok(
        "snapshots",
        format!("{shown}: {}{schema}", each.join(", ")),
        None,
    );
}

/// The current directory, as a message names it.
fn here(ctx: &Context) -> String {
    shown_dir(ctx, &ctx.cwd)
}

/// A directory as a message names it: `this directory` for the current one.
fn shown_dir(ctx: &Context, dir: &std::path::Path) -> String {
    let same = dir.canonicalize().ok() == ctx.cwd.canonicalize().ok();
    match ctx.display_path(dir).as_str() {
        _ if same => "this directory".into(),
        "" | "." => "this directory".into(),
        d => d.to_string(),
    }
}

/// The checks for the terminal: each cluster's under its name, then the project's.
fn render(ctx: &Context, r: &Report) -> String {
    let p = &ctx.printer;
    let mut out = String::new();
    let mut group: Option<Option<&str>> = None;
    for c in &r.checks {
        let this = c.cluster.as_deref();
        if group != Some(this) {
            out.push_str(&match this {
                Some(name) => format!("Cluster `{name}`\n"),
                None => "Project\n".to_string(),
            });
            group = Some(this);
        }
        let mark = match c.ok {
            true => p.paint(Style::Good, "ok  "),
            false => p.paint(Style::Bad, "FAIL"),
        };
        let took = match (c.ok, c.elapsed_ms) {
            (true, Some(ms)) => format!(" ({ms} ms)"),
            _ => String::new(),
        };
        let head = format!("  {mark}  {:<9} ", c.check);
        out.push_str(&head);
        out.push_str(&wrap(&format!("{}{took}", c.message), INDENT));
        if let Some(fix) = &c.fix {
            out.push_str(&" ".repeat(INDENT));
            out.push_str(&wrap(&format!("fix: {fix}"), INDENT));
        }
    }
    out
}

/// Where a check's message starts, after `  ok    reachable `.
const INDENT: usize = 18;
/// The width the text lines keep to (a word longer than the room left stands alone).
const WIDTH: usize = 80;

/// `text` from column `indent` on, in lines of at most [`WIDTH`] columns, each line after the
/// first indented as far; ends with a newline.
fn wrap(text: &str, indent: usize) -> String {
    let room = WIDTH - indent;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    let mut out = lines.join(&format!("\n{}", " ".repeat(indent)));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_wraps_at_80_columns_under_its_start() {
        let text = "cannot reach Kafka Connect of cluster `b` (tried http://127.0.0.1:1): GET http://127.0.0.1:1/: cannot connect";
        let out = format!("  FAIL  reachable {}", wrap(text, INDENT));
        assert_eq!(
            out,
            "  FAIL  reachable cannot reach Kafka Connect of cluster `b` (tried\n                  http://127.0.0.1:1): GET http://127.0.0.1:1/: cannot connect\n"
        );
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        let long = "x".repeat(100);
        assert_eq!(
            wrap(&format!("a {long} b"), INDENT),
            format!("a\n{0}{long}\n{0}b\n", " ".repeat(INDENT))
        );
    }
}
