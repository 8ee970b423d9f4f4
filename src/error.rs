//! The errors kco reports, each with the context a user needs: the file and line, the
//! connector, or the URL; and a hint where there is a useful next step.

use std::path::PathBuf;

use crate::client::{ClientError, ConnectVersion, TlsProblem};
use crate::config::ConfigError;
use crate::model::file::{FileProblem, ProblemKind};

/// Exit code: success, no differences.
pub const EXIT_OK: u8 = 0;
/// Exit code: an error, or (apply) something did not converge.
pub const EXIT_ERROR: u8 = 1;
/// Exit code of `diff`: differences found.
pub const EXIT_DIFFERENCES: u8 = 2;
/// Exit code of an `apply` interrupted twice: it stopped at once (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// One or more invalid snapshot files; nothing was sent.
    #[error("{}:\n{}", crate::text::count(.0.len(), "invalid file"), .0.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Files(Vec<FileProblem>),

    /// A REST call failed; `context` says what kco was doing.
    #[error("{context}: {source}")]
    Client {
        context: String,
        #[source]
        source: ClientError,
    },

    #[error("Kafka Connect at {url} reports version {version}, which kco does not support: {why}")]
    UnsupportedVersion {
        url: String,
        version: String,
        why: String,
    },

    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Another kco process applies to this cluster now.
    #[error("cluster `{cluster}` is locked by another kco: {holder}; lock id {}, {lock}", if id.is_empty() { "(none)" } else { id })]
    Locked {
        cluster: String,
        /// Where the lock is: the remote ref or the local file.
        lock: String,
        holder: String,
        id: String,
    },

    /// The shared lock on the git remote could not be taken or read.
    #[error("{} on git remote `{remote}`: {detail}", if cluster == "*" { "cannot read the cluster locks".to_string() } else { format!("cannot take or read the lock of cluster `{cluster}`") })]
    LockRemote {
        cluster: String,
        remote: String,
        detail: String,
    },

    /// An operation was interrupted and its journal says which connectors may be left stopped.
    #[error("an interrupted operation on cluster `{cluster}` left {} possibly out of their prior state ({})", crate::text::count(*connectors, "connector"), journal.display())]
    Unfinished {
        cluster: String,
        journal: PathBuf,
        connectors: usize,
    },

    /// Another kco process is changing this cluster now (a command that reads would see its
    /// connectors stopped half-way).
    #[error("an operation on cluster `{cluster}` is in progress: {holder} ({})", lock.display())]
    InProgress {
        cluster: String,
        lock: PathBuf,
        holder: String,
    },

    /// A file captured on one cluster, about to be used on another that was not named.
    #[error("{} was captured on cluster `{file_cluster}`, not on `{target}`, the cluster this command works on", file.display())]
    OtherCluster {
        file: PathBuf,
        file_cluster: String,
        target: String,
    },

    /// A worker given with `--url` (or KCO_URL, `origin`) for a cluster of kco.yaml that is
    /// not one of that cluster's workers (`engine::membership`).
    #[error("{url} ({origin}) is not a worker of cluster `{cluster}`: {why}")]
    WorkerOfOtherCluster {
        url: String,
        origin: String,
        cluster: String,
        why: String,
    },

    /// Sinks about to change whose consumer group a sink of another Connect cluster on the
    /// same Kafka cluster uses (`engine::shared_group`); each line names both.
    #[error("{} on cluster `{cluster}` {} a consumer group with a sink of another Connect cluster on the same Kafka cluster; nothing was changed:\n{}", crate::text::count(.shared.len(), "sink"), if .shared.len() == 1 { "shares" } else { "share" }, .shared.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"))]
    SharedGroup {
        cluster: String,
        shared: Vec<String>,
        /// The `--allow-shared-group` flags that would let them through.
        allow: String,
        /// The refused plan's warnings (neighbours that could not be looked at).
        warnings: Vec<String>,
    },

    /// `kco undo` of a backup taken from another worker than the one `--url` names.
    #[error("the backup {} was taken from {backup_url} (cluster `{cluster}`), not from {given} ({origin})", dir.display())]
    BackupOfOtherWorker {
        dir: PathBuf,
        cluster: String,
        backup_url: String,
        given: String,
        origin: String,
    },

    /// `kco undo` was given a directory that is not a kco backup.
    #[error("{} is not a kco backup: {why}", dir.display())]
    NotABackup { dir: PathBuf, why: String },

    /// `kco undo` of a backup taken on another cluster than `--cluster` names.
    #[error("the backup {} was taken on cluster `{backup_cluster}`, not on `{asked}`", dir.display())]
    BackupOfOtherCluster {
        dir: PathBuf,
        backup_cluster: String,
        asked: String,
    },

    /// Connector names or globs that match no connector (`place`: "on cluster `a`"). The
    /// names that do exist, the closest to what was typed first, make the hint.
    #[error("{} did not match any connector {place}", quoted(patterns))]
    NoMatch {
        patterns: Vec<String>,
        place: String,
        /// A few of the names that exist, the closest first.
        closest: Vec<String>,
        /// How many more exist than `closest` names.
        more: usize,
        /// The name a plain name was most likely a typo of.
        guess: Option<Box<str>>,
        /// Names no connector has that left offsets, and what deletes them (`kco reset NAME`
        /// of a deleted connector): the hint, in place of the names that exist.
        left: Option<String>,
    },

    /// `snapshot --commit` in a repository where git knows no identity to commit with.
    #[error("no git identity to commit with in {}: {why}", repo.display())]
    NoGitIdentity { repo: PathBuf, why: String },
    /// A git repository that another user owns, which git (and so libgit2) does not trust
    /// (`safe.directory`): a CI workspace or a checkout mounted into a container.
    #[error(
        "{} is in the git repository {}, which {} owns, not the user running kco{}: git does not trust it, and kco reads git as git does",
        path.display(), repo.display(), owner_name(*owner), me.map_or_else(String::new, |u| format!(" (uid {u})"))
    )]
    NotTrusted {
        path: PathBuf,
        repo: PathBuf,
        owner: Option<u32>,
        me: Option<u32>,
    },

    /// Reading or writing Kafka itself (Connect's offsets topic, MirrorMaker 2's
    /// checkpoints); `context` names the cluster and the topic.
    #[error("{context}: {source}")]
    Kafka {
        context: String,
        #[source]
        source: crate::kafka::KafkaError,
    },

    /// `reset --orphaned` while other clusters of kco.yaml could not be looked at for the
    /// connectors they run on the same Kafka: nothing was written.
    #[error("cannot look at {} of kco.yaml for the connectors {} on the same Kafka as cluster `{cluster}`, whose offsets would look left behind: {}; nothing was deleted", crate::text::count(others.len(), "other cluster"), if others.len() == 1 { "it runs" } else { "they run" }, others.iter().map(|(c, why)| format!("`{c}`: {why}")).collect::<Vec<_>>().join("; "))]
    NotLookedAt {
        cluster: String,
        others: Vec<(String, String)>,
    },

    /// `snapshot --prune` would remove every file of the cluster, whose listing names none of
    /// their connectors: nothing was removed.
    #[error("cluster `{cluster}` lists none of the connectors of its {}, and `--prune` would remove them all ({}); nothing was written or removed", crate::text::count(files.len(), "snapshot file"), files.iter().map(|f| crate::shown_path::from_here(f)).collect::<Vec<_>>().join(", "))]
    WouldEmpty {
        cluster: String,
        files: Vec<PathBuf>,
    },

    /// Offsets kco would write to Connect's offsets topic under names that connectors of the
    /// cluster have now: a running connector writes them too. Nothing was written.
    #[error("{} on cluster `{cluster}` now, so {} offsets are not leftovers kco writes in topic `{topic}`; nothing was written", names_exist(names), if names.len() == 1 { "its" } else { "their" })]
    ConnectorsExist {
        cluster: String,
        topic: String,
        names: Vec<String>,
        /// How the cluster resets a connector's own offsets: what the hint says to run.
        route: ResetRoute,
    },

    /// Connectors whose offsets kco would write through Kafka (`engine::through_kafka`) but
    /// that run, or whose group has members, or that cannot take their file: each with why.
    /// Nothing was written.
    #[error("cluster `{cluster}`: nothing was written: {} cannot take offsets through Kafka now:\n{}", count_connectors(reasons.len()), reasons.iter().map(|r| format!("  - {r}")).collect::<Vec<_>>().join("\n"))]
    NotWritable {
        cluster: String,
        reasons: Vec<String>,
        /// How the cluster's connectors are deleted and created around a write through Kafka:
        /// by Connect's REST API, or by the service's own tools (a cluster read from its
        /// internal topics).
        route: ResetRoute,
    },

    /// A change asked of a cluster that kco only reads (one read from its workers' internal
    /// topics, without a REST API: [`Capabilities::read_only`](crate::client::Capabilities));
    /// nothing was sent.
    #[error("cluster `{cluster}` is read from {service} at {url}, without an API to change its connectors through: {what} is refused; nothing was sent")]
    ReadOnly {
        cluster: String,
        url: String,
        service: &'static str,
        what: String,
        /// What to use instead (the hint).
        instead: &'static str,
    },

    /// Arguments that do not fit together.
    #[error("{0}")]
    Usage(String),

    /// Something else that went wrong, already phrased for the user.
    #[error("{0}")]
    Other(String),
}

/// What kind of error an [`Error`] is, as `--output json` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Config,
    Files,
    Client,
    UnsupportedVersion,
    Write,
    Read,
    Locked,
    Unfinished,
    InProgress,
    OtherCluster,
    NotABackup,
    SharedGroup,
    NoMatch,
    NotTrusted,
    Kafka,
    ConnectorsExist,
    WouldEmpty,
    NotLookedAt,
    NotWritable,
    ReadOnly,
    Usage,
    Other,
}

impl Error {
    pub fn client(context: impl Into<String>, source: ClientError) -> Self {
        Error::Client {
            context: context.into(),
            source,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Config(_) => ErrorKind::Config,
            Error::Files(_) => ErrorKind::Files,
            Error::Client { .. } => ErrorKind::Client,
            Error::UnsupportedVersion { .. } => ErrorKind::UnsupportedVersion,
            Error::Write { .. } => ErrorKind::Write,
            Error::Read { .. } => ErrorKind::Read,
            Error::Locked { .. } | Error::LockRemote { .. } => ErrorKind::Locked,
            Error::Unfinished { .. } => ErrorKind::Unfinished,
            Error::InProgress { .. } => ErrorKind::InProgress,
            Error::OtherCluster { .. } => ErrorKind::OtherCluster,
            Error::NotABackup { .. } | Error::BackupOfOtherCluster { .. } => ErrorKind::NotABackup,
            Error::WorkerOfOtherCluster { .. } => ErrorKind::OtherCluster,
            Error::BackupOfOtherWorker { .. } => ErrorKind::NotABackup,
            Error::SharedGroup { .. } => ErrorKind::SharedGroup,
            Error::NoMatch { .. } => ErrorKind::NoMatch,
            Error::NotTrusted { .. } => ErrorKind::NotTrusted,
            Error::Kafka { .. } => ErrorKind::Kafka,
            Error::ConnectorsExist { .. } => ErrorKind::ConnectorsExist,
            Error::WouldEmpty { .. } => ErrorKind::WouldEmpty,
            Error::NotLookedAt { .. } => ErrorKind::NotLookedAt,
            Error::NotWritable { .. } => ErrorKind::NotWritable,
            Error::ReadOnly { .. } => ErrorKind::ReadOnly,
            Error::Usage(_) => ErrorKind::Usage,
            Error::NoGitIdentity { .. } | Error::Other(_) => ErrorKind::Other,
        }
    }

    /// The exit code for this error. Every error exits 1: 2 belongs to `diff`'s differences
    /// (a script must not mistake a failure for drift), and 130 to a second interrupt during
    /// `apply`. A new kind of error decides its code here.
    pub fn exit_code(&self) -> u8 {
        match self.kind() {
            ErrorKind::Config
            | ErrorKind::Files
            | ErrorKind::Client
            | ErrorKind::UnsupportedVersion
            | ErrorKind::Write
            | ErrorKind::Read
            | ErrorKind::Locked
            | ErrorKind::Unfinished
            | ErrorKind::InProgress
            | ErrorKind::OtherCluster
            | ErrorKind::NotABackup
            | ErrorKind::SharedGroup
            | ErrorKind::NoMatch
            | ErrorKind::NotTrusted
            | ErrorKind::Kafka
            | ErrorKind::ConnectorsExist
            | ErrorKind::WouldEmpty
            | ErrorKind::NotLookedAt
            | ErrorKind::NotWritable
            | ErrorKind::ReadOnly
            | ErrorKind::Usage
            | ErrorKind::Other => EXIT_ERROR,
        }
    }

    /// A next step for the user, when there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::ConnectorsExist { cluster, route, .. } => Some(match route {
                ResetRoute::Connect => format!(
                    "a connector's own offsets change through Connect (`kco reset NAME --cluster {cluster}`, `kco apply`); to write these keys, delete the connector first (`kco ls --orphaned --cluster {cluster}` then lists its offsets)"
                ),
                ResetRoute::DeleteFirst | ResetRoute::ServiceTools => format!(
                    "on cluster `{cluster}` a connector's offsets are written through Kafka only while no connector has its name: {}",
                    route.steps("NAME", cluster)
                ),
            }),
            Error::NotWritable { cluster, route, .. } => {
                let (why, create, doc) = match route {
                    ResetRoute::ServiceTools => (
                        "it is read from its internal topics, without a REST API",
                        "create the deleted connectors again with the service's own console, CLI or API",
                        "#without-a-rest-api-aws-msk-connect",
                    ),
                    ResetRoute::Connect | ResetRoute::DeleteFirst => (
                        "its workers have no offsets endpoints",
                        "`kco apply --create` creates the deleted connectors",
                        "",
                    ),
                };
                Some(format!(
                    "on cluster `{cluster}` kco writes offsets through Kafka ({why}), only where no task or consumer can write over them; {create} once their offsets are written (docs/through-kafka.md{doc})"
                ))
            }
            Error::NotLookedAt { cluster, others } => Some(format!(
                "fix or start {} (`kco ls --cluster NAME` shows what fails), or pass `--force` to delete anyway, taking the risk that a connector there owns these offsets (`kco reset --orphaned ... --force --cluster {cluster}`)",
                others.iter().map(|(c, _)| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            )),
            Error::WouldEmpty { cluster, .. } => Some(format!(
                "check that kco.yaml reads cluster `{cluster}` from the right place (`kco ls --cluster {cluster}` lists what it answers: its URL, or its `connectTopics`); if its connectors were deleted on purpose, `kco snapshot --prune --allow-empty` removes their files"
            )),
            Error::Client { source, .. } => client_hint(source),
            Error::Kafka { source, .. } => source.hint(),
            Error::UnsupportedVersion { .. } => Some(format!(
                "offsets can be read from Kafka Connect {} and altered from {}; from an older worker kco reads them (snapshot, diff, ls) and writes them (apply, reset, undo, for a connector that does not run) through Kafka where kco.yaml gives its cluster `kafka:` and `connectTopics: {{offsets: <offset.storage.topic>}}` (docs/through-kafka.md)",
                ConnectVersion::OFFSETS_READ,
                ConnectVersion::OFFSETS_WRITE
            )),
            Error::Files(problems) => files_hint(problems).map(str::to_string),
            Error::Locked { cluster, id, .. } => Some(format!(
                "wait for it to finish (`kco lock status --cluster {cluster}` shows who holds it); if that kco is gone, `kco lock force-unlock {} --cluster {cluster}` removes its lock",
                if id.is_empty() { "ID" } else { id }
            )),
            Error::LockRemote { remote, .. } => Some(format!(
                "kco shares the lock through the git remote the runners push to: check that `git push {remote}` works here, or set `lock: local` in kco.yaml to lock this machine only (docs/apply.md#locking)"
            )),
            Error::Unfinished { cluster, .. } => Some(format!(
                "`kco recover --cluster {cluster}` puts their states back (any `kco apply` to it does so first); if they cannot be put back (no rights, connector gone), `kco recover --discard --cluster {cluster}` forgets them"
            )),
            Error::InProgress { .. } => {
                Some("wait for it to finish, then run this command again".into())
            }
            Error::OtherCluster { target, .. } => Some(format!(
                "to use it on cluster `{target}` all the same, name that cluster: --cluster {target}"
            )),
            Error::NotABackup { .. } => Some(
                "`kco undo` takes a directory that an apply, reset or undo printed (under .kco/backups/); `kco apply DIR --prune` applies any directory of files".into(),
            ),
            Error::BackupOfOtherCluster { backup_cluster, .. } => Some(format!(
                "undo puts a backup back on its own cluster: drop --cluster (or pass --cluster {backup_cluster})"
            )),
            Error::SharedGroup { allow, .. } => Some(format!(
                "changing one sink's offsets changes the other's: give one its own group (`consumer.override.group.id` in its config), or pass {allow} to change them anyway"
            )),
            Error::BackupOfOtherWorker { backup_url, origin, .. } => Some(format!(
                "undo puts a backup back on the worker it was taken from: leave out {origin}, or pass --url {backup_url}"
            )),
            Error::WorkerOfOtherCluster {
                origin, cluster, ..
            } => Some(format!(
                "leave out {origin} to use the workers kco.yaml gives cluster `{cluster}`, or name the cluster this worker belongs to"
            )),
            Error::Config(e) => e.hint.clone(),
            Error::ReadOnly { instead, .. } => Some(instead.to_string()),
            Error::NoGitIdentity { .. } => Some(
                "set it with `git config user.email you@example.com` and `git config user.name \"Your Name\"` (or GIT_AUTHOR_EMAIL and GIT_AUTHOR_NAME); nothing was written".into(),
            ),
            Error::NoMatch {
                left: Some(left), ..
            } => Some(left.clone()),
            Error::NoMatch {
                closest,
                more,
                guess,
                ..
            } => Some(match guess {
                Some(g) => format!("did you mean `{g}`? ({})", no_match_hint(closest, *more)),
                None => no_match_hint(closest, *more),
            }),
            Error::NotTrusted { repo, .. } => Some(format!(
                "run kco as the owner of {repo}, or mark it safe: git config --global --add safe.directory {repo}",
                repo = repo.display()
            )),
            _ => None,
        }
    }
}

/// `another user (uid 1000)`, or `another user` when the owner is unknown.
fn owner_name(owner: Option<u32>) -> String {
    owner.map_or_else(
        || "another user".into(),
        |u| format!("another user (uid {u})"),
    )
}

/// `` `a`, `b` `` for a message.
fn quoted(names: &[String]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    q.join(", ")
}

/// How a connector's own offsets are reset on a cluster, for the messages that say what to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetRoute {
    /// Through Connect's offsets endpoints: `kco reset NAME` (the connector stopped meanwhile).
    Connect,
    /// Through Kafka, on a worker without the offsets endpoints (nor a stop): the connector
    /// deleted first (`DELETE /connectors/NAME`), then `kco reset --orphaned NAME`, then
    /// created again.
    DeleteFirst,
    /// A cluster read from its internal topics (AWS MSK Connect: no stop, and `reset
    /// --orphaned` refused): deleted with the service's own tools, a file of the name with
    /// `offsets: []` applied, created again there.
    ServiceTools,
}

impl ResetRoute {
    pub fn of(caps: &crate::client::Capabilities) -> Self {
        if !caps.changes_connectors() {
            ResetRoute::ServiceTools
        } else if caps.offsets_through_kafka {
            ResetRoute::DeleteFirst
        } else {
            ResetRoute::Connect
        }
    }

    /// What resets connector `name`'s offsets on cluster `cluster`, step by step.
    pub fn steps(&self, name: &str, cluster: &str) -> String {
        match self {
            ResetRoute::Connect => format!("`kco reset {name} --cluster {cluster}`"),
            ResetRoute::DeleteFirst => format!(
                "delete the connector (its offsets stay: `DELETE /connectors/{name}`), then `kco reset --orphaned {name} --cluster {cluster}` deletes them, then create it again (`kco apply --create` of its file)"
            ),
            ResetRoute::ServiceTools => format!(
                "delete the connector with the service's own console, CLI or API, then `kco apply --cluster {cluster}` a file of `{name}` with `offsets: []` (a file's offsets replace what its name left), then create it again there under the same name (docs/through-kafka.md#without-a-rest-api-aws-msk-connect)"
            ),
        }
    }

    /// What deletes the offsets that deleted connector `name` left, on cluster `cluster`.
    pub fn leftovers(&self, name: &str, cluster: &str) -> String {
        match self {
            ResetRoute::Connect | ResetRoute::DeleteFirst => format!(
                "`kco reset --orphaned {name} --cluster {cluster}` deletes them (`kco ls --orphaned` lists them)"
            ),
            ResetRoute::ServiceTools => format!(
                "`kco apply --cluster {cluster}` a file of `{name}` with `offsets: []` before a connector of that name is created again deletes them (a file's offsets replace what its name left; `reset --orphaned` is refused there: docs/through-kafka.md#without-a-rest-api-aws-msk-connect)"
            ),
        }
    }
}

fn no_match_hint(closest: &[String], more: usize) -> String {
    match (closest.is_empty(), more) {
        (true, _) => "there is no connector there".into(),
        (false, 0) => format!("the connectors there: {}", quoted(closest)),
        (false, n) => format!(
            "the connectors there include {} (closest first), and {n} more",
            quoted(closest)
        ),
    }
}

fn client_hint(source: &ClientError) -> Option<String> {
    // Said by the layer that knows the service (its key, its endpoint).
    if let Some(hint) = &source.hint {
        return Some(hint.to_string());
    }
    match source.tls_problem() {
        Some(TlsProblem::UntrustedServer) => return Some(
            "the worker's certificate is not signed by a CA kco trusts (the system's, plus the cluster's `tls.caFile` in kco.yaml): name its CA there".into(),
        ),
        Some(TlsProblem::ClientCertRefused) => return Some(
            "the worker wants a client certificate it trusts (mutual TLS): set the cluster's `tls.certFile` and `tls.keyFile` in kco.yaml".into(),
        ),
        Some(TlsProblem::NotTls) => return Some(
            "the worker answers plain HTTP, not TLS: write its URL with http:// instead of https://".into(),
        ),
        None => {}
    }
    if source.is_not_http() {
        return Some(
            "what listens there does not speak HTTP: this looks like a Kafka broker port (a bootstrap server's); Connect's REST port is usually 8083 (if the worker serves HTTPS, write its URL with https://)".into(),
        );
    }
    if source.is_unreachable() {
        return Some(
            "is the worker running and the URL right? Set it with --url, KCO_URL or a cluster in kco.yaml".into(),
        );
    }
    if source.is_auth_refused() {
        return Some(
            "the worker refused the credentials: check the cluster's `auth` in kco.yaml".into(),
        );
    }
    if source.is_unknown_connector() {
        return Some(
            "the connector does not exist on this cluster (`kco diff` lists what is there)".into(),
        );
    }
    None
}

/// The next step for a set of file problems, chosen by their kinds (the first kind with a
/// hint, in this order of usefulness).
pub fn files_hint(problems: &[FileProblem]) -> Option<&'static str> {
    let has = |k: ProblemKind| problems.iter().any(|p| p.kind == k);
    if has(ProblemKind::MergeConflict) {
        Some("keep one side between the markers, then `kco fmt FILE` re-seals the file; with `kco merge-file` registered as git's merge driver, a snapshot's advance no longer conflicts with a change by hand (docs/merge.md#resolving-a-conflict)")
    } else if has(ProblemKind::Shape) {
        Some("fix the offset to the expected shape; if the connector really writes it, describe its class under `shapes:` in kco.yaml (`kco schema --shapes` prints the table); `kco apply --allow-unknown-shape NAME` applies such a file anyway")
    } else if has(ProblemKind::ChecksumMismatch) {
        Some("if the edit is intended, `kco fmt FILE` re-seals it")
    } else if has(ProblemKind::MissingEnv) {
        Some("set the variables named above (the values of ${kco:env:VAR} placeholders), then run again")
    } else if has(ProblemKind::Version) {
        Some("this kco reads `apiVersion: kco/v1` files; a file from a newer kco needs that kco")
    } else if has(ProblemKind::NotFound) {
        Some("name files or directories that exist; without any, kco reads the cluster's snapshot directory, which `kco snapshot` creates")
    } else {
        None
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// "connector `a` exists" or "connectors `a`, `b` exist".
fn count_connectors(n: usize) -> String {
    crate::text::count(n, "connector")
}

fn names_exist(names: &[String]) -> String {
    let list = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match names.len() {
        1 => format!("connector {list} exists"),
        _ => format!("connectors {list} exist"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::client::{Method, Request};

    fn not_found(req: Request) -> Error {
        let url = format!("http://h{}", req.path);
        Error::client("x", ClientError::http(&req, &url, 404, "not found"))
    }

    #[test]
    fn not_found_hint_only_for_connector_calls() {
        let offsets = Request::new(Method::Get, "/connectors/c/offsets").about("c");
        let hint = not_found(offsets).hint().unwrap();
        assert!(hint.contains("does not exist"), "{hint}");
        assert!(not_found(Request::new(Method::Get, "/")).hint().is_none());
    }

    fn problem(kind: ProblemKind, message: &str) -> FileProblem {
        FileProblem::new(kind, "a.yaml", Some(3), message)
    }

    #[test]
    fn file_hints_go_by_kind_not_by_words() {
        let sealed = Error::Files(vec![problem(ProblemKind::ChecksumMismatch, "edited")]);
        assert!(sealed.hint().unwrap().contains("kco fmt"));
        // The words alone do not make the hint.
        let worded = Error::Files(vec![problem(ProblemKind::Invalid, "checksum mismatch")]);
        assert_eq!(worded.hint(), None);
        let env = Error::Files(vec![
            problem(ProblemKind::Schema, "unknown field"),
            problem(ProblemKind::MissingEnv, "PW"),
        ]);
        assert!(env.hint().unwrap().contains("set the variables"));
        let both = [
            problem(ProblemKind::MissingEnv, "x"),
            problem(ProblemKind::ChecksumMismatch, "y"),
        ];
        assert!(files_hint(&both).unwrap().contains("re-seals"));
        let missing = [problem(ProblemKind::NotFound, "no such file or directory")];
        assert!(files_hint(&missing)
            .unwrap()
            .contains("`kco snapshot` creates"));
    }

    /// The hint of a name a connector has says how that kind of cluster resets a connector's
    /// offsets: `kco reset NAME` only where Connect's offsets endpoints do it.
    #[test]
    fn a_name_a_connector_has_is_reset_as_its_cluster_kind_resets() {
        let exists = |route| Error::ConnectorsExist {
            cluster: "l".into(),
            topic: "t".into(),
            names: vec!["gone".into()],
            route,
        };
        let hint = |route| exists(route).hint().unwrap();
        assert!(hint(ResetRoute::Connect).contains("`kco reset NAME --cluster l`"));
        let legacy = hint(ResetRoute::DeleteFirst);
        assert!(
            legacy.contains("`DELETE /connectors/NAME`")
                && legacy.contains("`kco reset --orphaned NAME --cluster l`")
                && !legacy.contains("`kco reset NAME"),
            "{legacy}"
        );
        let msk = hint(ResetRoute::ServiceTools);
        assert!(
            msk.contains("the service's own console, CLI or API")
                && msk.contains("`offsets: []`")
                && !msk.contains("`kco reset"),
            "{msk}"
        );
        let caps = crate::client::Backend::CONNECT_TOPICS;
        assert_eq!(ResetRoute::of(&caps), ResetRoute::ServiceTools);
        let through = crate::client::Capabilities {
            offsets_through_kafka: true,
            ..crate::client::Connect::CAPABILITIES
        };
        assert_eq!(ResetRoute::of(&through), ResetRoute::DeleteFirst);
        assert_eq!(
            ResetRoute::of(&crate::client::Connect::CAPABILITIES),
            ResetRoute::Connect
        );
    }

    /// A deleted connector's name that left offsets: the hint says what deletes them, not
    /// the names that exist.
    #[test]
    fn a_name_that_left_offsets_is_pointed_at_what_deletes_them() {
        let e = Error::NoMatch {
            patterns: vec!["gone".into()],
            place: "on cluster `a`".into(),
            closest: vec!["other".into()],
            more: 0,
            guess: None,
            left: Some(ResetRoute::Connect.leftovers("gone", "a")),
        };
        let hint = e.hint().unwrap();
        assert!(
            hint.contains("`kco reset --orphaned gone --cluster a`"),
            "{hint}"
        );
        assert!(!hint.contains("other"), "{hint}");
        assert!(ResetRoute::ServiceTools
            .leftovers("gone", "a")
            .contains("a file of `gone` with `offsets: []`"));
    }

    #[test]
    fn every_error_exits_1_never_diffs_2() {
        let errors = [
            Error::Files(vec![problem(ProblemKind::Syntax, "x")]),
            not_found(Request::new(Method::Get, "/")),
            Error::Usage("u".into()),
            Error::NoMatch {
                patterns: vec!["zzz*".into()],
                place: "on cluster `a`".into(),
                closest: vec![],
                more: 0,
                guess: None,
                left: None,
            },
            Error::Other("o".into()),
            Error::Read {
                path: "p".into(),
                source: std::io::ErrorKind::NotFound.into(),
            },
        ];
        for e in &errors {
            assert_eq!(e.exit_code(), EXIT_ERROR, "{e}");
            assert_ne!(e.exit_code(), EXIT_DIFFERENCES);
        }
        assert_eq!(errors[0].kind(), ErrorKind::Files);
        assert_eq!(errors[1].kind(), ErrorKind::Client);
    }
}
