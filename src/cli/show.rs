//! `kco show`: one connector's offsets as its file holds them, now or at a point in history.

use std::path::PathBuf;

use serde::Serialize;

use super::apply_git::commit_words;
use super::log::scope_dir;
use super::output::Style;
use super::words::partition as partition_name;
use super::{Context, OutputFormat};
use crate::engine::history::at::{show, CommitRef};
use crate::engine::risk::show as compact;
use crate::engine::store;
use crate::error::{Error, Result, EXIT_OK};
use crate::model::{ConnectorState, ConnectorType, OffsetEntry};

/// Show a connector's offsets from its snapshot file, now or at a git revision or time
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Reads the file only (no cluster). With --at, from git: a revision \
(HEAD~3, a tag, a branch, a commit id) or a time: the last commit at or before it on the current \
branch (first-parent history, committer time). A time is YYYY-MM-DD (a date alone means 00:00 \
UTC), YYYY-MM-DD HH:MM or YYYY-MM-DD HH:MM:SS (T in place of the space also works), in UTC \
unless a zone follows the time: Z, UTC, +HH:MM or -HHMM (\"2026-11-29 02:00+01:00\"); or \
relative: now, today, yesterday (00:00 UTC, or with a time: \"yesterday 14:00\"), \"N \
minutes|hours|days|weeks ago\". Anything that parses as a time is a time.\n\n\
At a point in history kco shows what the cluster had: the file's newest version there that is \
an observation (kco rewrote it from live) or a change an apply record of the cluster covers \
(Kco-Apply: CLUSTER, its Kco-Commit the change's commit or later). A change never applied (a \
merged pull request an apply refused) is passed over for the version before it, and named.\n\n\
Examples:\n  kco show orders-sink\n  kco show orders-sink --at \"yesterday 14:00\"\n  kco show orders-sink --at v1.4 --output json"
)]
pub struct Args {
    /// The connector
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::connector_names))]
    pub name: String,
    /// A git revision or a time (YYYY-MM-DD[ HH:MM[:SS]][zone], UTC unless a zone is given; a
    /// date alone is 00:00 UTC; or "yesterday 14:00", "2 days ago") [default: the working tree]
    #[arg(long, value_name = "REV|TIME")]
    pub at: Option<String>,
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// What `show` prints, as `--output json` has it.
#[derive(Debug, Serialize)]
struct Shown {
    name: String,
    cluster: String,
    #[serde(rename = "type")]
    connector_type: ConnectorType,
    class: Option<String>,
    state: Option<ConnectorState>,
    captured_at: Option<String>,
    /// When the service observed the offsets (Confluent Cloud); absent for Connect.
    #[serde(skip_serializing_if = "Option::is_none")]
    observed_at: Option<String>,
    file: String,
    /// `--at` as given, and the commit it names.
    at: Option<String>,
    commit: Option<CommitRef>,
    /// `--at`: the commit that wrote the version shown, when newer changes were passed over.
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<CommitRef>,
    /// `--at`: the changes passed over (no apply record covers them: the cluster never had
    /// them), newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_applied: Vec<CommitRef>,
    offsets: Vec<OffsetEntry>,
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let (scope, cluster) = scope_dir(&args.dir, ctx);
    let (scope, cluster) = match cluster {
        Some(c) => (scope, c),
        // No cluster named: the one cluster directory that holds the connector's file, as
        // `log` finds it.
        None => {
            let c = only_cluster_with(&scope, &args.name)?;
            (store::cluster_dir(&scope, &c), c)
        }
    };
    let dir = scope.parent().map(PathBuf::from).unwrap_or_default();
    let path = store::file_path(&dir, &cluster, &args.name);
    if args.at.is_none() && !path.is_file() {
        return Err(Error::Usage(format!(
            "connector `{}` has no snapshot file at {}{}",
            args.name,
            ctx.display_path(&path),
            store::did_you_mean(&store::cluster_dir(&dir, &cluster), &args.name)
        )));
    }
    let found = show(&path, &scope, &args.name, args.at.as_deref())?;
    let m = found.file.metadata;
    let (at, commit) = found.at.map_or((None, None), |(a, c)| (Some(a), Some(c)));
    let doc = Shown {
        name: m.name,
        cluster: m.cluster,
        connector_type: m.connector_type,
        class: m.connector_class,
        state: m.state,
        captured_at: m.captured_at,
        observed_at: m.observed_at,
        file: ctx.display_path(std::path::Path::new(&found.path)),
        at,
        commit,
        version: found.version,
        not_applied: found.not_applied,
        offsets: found.file.offsets,
    };
    let p = &ctx.printer;
    if matches!(p.format, OutputFormat::Json | OutputFormat::Yaml) {
        p.structured(&doc);
        return Ok(EXIT_OK);
    }
    let mut out = format!(
        "{} ({}, cluster {})  {}\n",
        p.paint(Style::Bold, &doc.name),
        doc.connector_type,
        doc.cluster,
        doc.file
    );
    if let (Some(a), Some(c)) = (&doc.at, &doc.commit) {
        out.push_str(&format!("at `{a}`: commit {}\n", commit_words(c)));
    }
    if let Some(v) = &doc.version {
        out.push_str(&format!(
            "the version the cluster had: commit {} ({})\n",
            commit_words(v),
            super::apply_git::not_applied(&doc.not_applied).unwrap_or_default()
        ));
    }
    let state = doc
        .state
        .map(|s| s.to_string())
        .unwrap_or_else(|| "-".into());
    let captured = doc.captured_at.as_deref().unwrap_or("-");
    let observed = doc
        .observed_at
        .as_deref()
        .map(|o| format!(", observed {o}"))
        .unwrap_or_default();
    out.push_str(&format!("state {state}, captured {captured}{observed}\n"));
    let rows: Vec<(String, String)> = doc
        .offsets
        .iter()
        .map(|e| (partition_name(&e.partition), compact(&e.offset)))
        .collect();
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(9);
    out.push_str(&format!("{:w$}  OFFSET\n", "PARTITION"));
    for (part, off) in rows {
        out.push_str(&format!("{part:w$}  {off}\n"));
    }
    p.out(&out);
    Ok(EXIT_OK)
}

/// The cluster directory under `dir` that has a file for connector `name`; an error naming
/// them when there are several, or none.
fn only_cluster_with(dir: &std::path::Path, name: &str) -> Result<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|c| store::file_path(dir, c, name).is_file())
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => {
            // A typo of a name with a file in one of the clusters' directories.
            let guess = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .find_map(|e| store::guess_filed(&e.path(), name));
            Err(Error::Usage(format!(
                "no file of connector `{name}` under {}: pass --cluster, or name a snapshots directory with --dir{}",
                dir.display(),
                guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default()
            )))
        }
        _ => Err(Error::Usage(format!(
            "connector `{name}` has a file in several clusters ({}): pass --cluster",
            found.join(", ")
        ))),
    }
}
