//! The command line: flags (clap), settings resolved once, one file per subcommand, and the
//! one place that prints errors and maps them to exit codes.

mod all_clusters;
mod apply;
mod apply_git;
mod apply_mirror_render;
mod apply_render;
mod change;
pub(crate) mod completions;
mod context;
mod diff;
mod diff_render;
mod doctor;
mod export;
mod fmt;
mod import;
mod init;
mod lock;
mod log;
mod ls;
#[cfg(test)]
mod man;
mod merge_file;
mod metrics;
mod neighbours;
mod operate;
mod orphaned;
mod output;
mod progress;
mod recover;
#[cfg(test)]
mod reference;
mod report_error;
mod reset;
mod schema;
mod show;
mod sink_lag;
mod snapshot;
mod through_kafka;
mod translate;
mod undo;
mod validate;
mod words;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use context::Context;
pub use output::Printer;

use crate::error::EXIT_ERROR;

const EXIT_CODES: &str = "\
Exit codes (the same whether or not anyone reads the output: a closed pipe only
stops it):
  0  success (diff: no differences)
  1  error: bad input (also a name or glob that matches no connector, or several
     clusters in kco.yaml and none chosen), unreachable cluster, unsupported
     version, a connector that could not be read (snapshot) or did not converge
     (apply); with --all-clusters, any cluster that failed
  2  diff only: differences found (with --all-clusters: only when every cluster
     answered)
  130  apply only: interrupted a second time, so it exited at once

Errors: `error:`, the causes and a `hint:` on stderr. With --output json (or
yaml) the error, a usage error too, is also a document on stdout in place of
the report: {\"error\": {\"kind\", \"message\", \"causes\", \"hint\",
\"exit_code\"}}.";

/// Kafka Connect offsets as code: snapshot, diff and apply connector offsets.
#[derive(Debug, Parser)]
#[command(name = "kco", version, long_version = env!("KCO_LONG_VERSION"), about, after_long_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand takes, listed after the command's own in its help.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Cluster name from the config file (also names the snapshots subdirectory)
    #[arg(long, global = true, env = "KCO_CLUSTER",
          add = clap_complete::ArgValueCompleter::new(completions::cluster_names))]
    pub cluster: Option<String>,
    /// One or more Connect worker URLs, comma-separated: they replace the URLs of the cluster
    /// used (--cluster, else kco.yaml's default or only one; none: cluster `default`)
    #[arg(long, global = true, env = "KCO_URL")]
    pub url: Option<String>,
    /// Config file [default: kco.yaml in the current directory or a parent]
    #[arg(long, global = true, env = "KCO_CONFIG")]
    pub config: Option<std::path::PathBuf>,
    /// Output format
    #[arg(long, short = 'o', global = true, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// When to use colors (auto honours NO_COLOR and TERM=dumb)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Print only data and errors, no status lines
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// Print more detail (each REST call's outcome)
    #[arg(long, short = 'v', global = true)]
    pub verbose: bool,
    /// Where `cluster` came from: the flag or KCO_CLUSTER (named in the errors it causes).
    #[arg(skip)]
    pub cluster_from: Origin,
    /// Where `url` came from: the flag or KCO_URL.
    #[arg(skip)]
    pub url_from: Origin,
}

/// Where a global setting came from, so that an error it causes names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Origin {
    #[default]
    Flag,
    Env,
}

impl Origin {
    /// The flag or the variable, as an error names it.
    pub fn name(self, flag: &'static str, var: &'static str) -> &'static str {
        match self {
            Origin::Flag => flag,
            Origin::Env => var,
        }
    }

    /// Where `id` got its value in `matches` (a global argument: the deepest subcommand that
    /// saw it).
    fn of(matches: &clap::ArgMatches, id: &str) -> Origin {
        let mut m = matches;
        let mut source = m.value_source(id);
        while let Some((_, sub)) = m.subcommand() {
            m = sub;
            source = m.value_source(id).or(source);
        }
        match source {
            Some(clap::parser::ValueSource::EnvVariable) => Origin::Env,
            _ => Origin::Flag,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    Yaml,
    /// Markdown (diff only), for pull-request comments
    Markdown,
    /// OpenMetrics text (snapshot, diff, ls, log): the run's metrics, docs/metrics.md
    Openmetrics,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Flags of every command that reads many connectors at once (snapshot, diff, ls).
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// How many connectors to read at once
    #[arg(long, default_value_t = crate::engine::parallel::DEFAULT_READS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub parallel: usize,
    /// On a service that observes offsets periodically (Confluent Cloud): offsets observed
    /// longer ago are read again (see --observed-wait), then refused, never taken as current
    /// [default: the cluster's `confluentCloud.maxObservedAgeSeconds`, else 120]
    #[arg(long, value_name = "SECONDS")]
    pub max_observed_age: Option<u64>,
    /// How long to keep reading for an observation younger than --max-observed-age
    #[arg(long, value_name = "SECONDS", default_value_t = crate::engine::observed::DEFAULT_WAIT.as_secs())]
    pub observed_wait: u64,
}

impl ReadArgs {
    /// How fresh observed offsets of cluster `cluster` must be: the flag, else kco.yaml's
    /// bound for the cluster, else 120 s.
    pub fn freshness(
        &self,
        config: &crate::config::Config,
        cluster: &str,
    ) -> crate::engine::observed::Freshness {
        let max_age = match self.max_observed_age {
            Some(s) => std::time::Duration::from_secs(s),
            None => config
                .max_observed_age(cluster)
                .unwrap_or(crate::engine::observed::DEFAULT_MAX_AGE),
        };
        let mut f = crate::engine::observed::Freshness::with_max_age(max_age);
        f.wait.timeout = std::time::Duration::from_secs(self.observed_wait);
        f
    }
}

/// A connector type, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    Source,
    Sink,
}

impl From<TypeArg> for crate::model::ConnectorType {
    fn from(t: TypeArg) -> Self {
        match t {
            TypeArg::Source => Self::Source,
            TypeArg::Sink => Self::Sink,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(init::Args),
    Doctor(doctor::Args),
    Snapshot(snapshot::Args),
    Diff(diff::Args),
    Apply(apply::Args),
    Reset(reset::Args),
    Log(log::Args),
    Show(show::Args),
    Recover(recover::Args),
    Undo(undo::Args),
    Validate(validate::Args),
    Fmt(fmt::Args),
    MergeFile(merge_file::Args),
    Schema(schema::Args),
    Completions(completions::Args),
    Import(import::Args),
    Export(export::Args),
    Ls(ls::Args),
    Lock(lock::Args),
}

/// Runs a parsed command line and returns the process exit code. Errors are printed here and
/// only here.
pub fn run(cli: Cli) -> ExitCode {
    let printer = Printer::new(&cli.global);
    if cli.global.output == OutputFormat::Markdown && !matches!(cli.command, Command::Diff(_)) {
        let e = crate::error::Error::Usage(
            "--output markdown is for `kco diff`; use text, json or yaml here".into(),
        );
        report_error::report(&printer, &e);
        return ExitCode::from(e.exit_code());
    }
    if cli.global.output == OutputFormat::Openmetrics
        && !matches!(
            cli.command,
            Command::Snapshot(_) | Command::Diff(_) | Command::Ls(_) | Command::Log(_)
        )
    {
        let e = crate::error::Error::Usage(
            "--output openmetrics is for `kco snapshot`, `diff`, `ls` and `log`; use text, json or yaml here".into(),
        );
        report_error::report(&printer, &e);
        return ExitCode::from(e.exit_code());
    }
    // A merge driver reads three files only: no cluster, and no kco.yaml (which may be in
    // the middle of the same merge).
    let command = match cli.command {
        Command::MergeFile(a) => return exit(&printer, merge_file::run(a, &printer)),
        // `kco init` writes kco.yaml: one already there (broken, or a parent's) is not read.
        Command::Init(a) => return exit(&printer, init::run(a, &cli.global)),
        command => command,
    };
    let result = Context::new(&cli.global).and_then(|ctx| {
        crate::shapes::install(ctx.config.shapes()?);
        Ok(ctx)
    });
    let result = match result {
        Ok(ctx) => {
            #[cfg(unix)]
            let _checkout_stays_its_owners = crate::owner::Keep::start(ctx.written_dirs());
            run_command(command, &ctx)
        }
        // A command with metrics writes them for this failure too.
        Err(e) => match metrics::of(&command) {
            Some((name, args)) => metrics::failed_early(&printer, &cli.global, name, args, e),
            None => Err(e),
        },
    };
    exit(&printer, result)
}

/// Runs one command in its context.
fn run_command(command: Command, ctx: &Context) -> crate::error::Result<u8> {
    match command {
        Command::Snapshot(a) => snapshot::run(a, ctx),
        Command::Diff(a) => diff::run(a, ctx),
        Command::Apply(a) => apply::run(a, ctx),
        Command::Reset(a) => reset::run(a, ctx),
        Command::Log(a) => log::run(a, ctx),
        Command::Show(a) => show::run(a, ctx),
        Command::Recover(a) => recover::run(a, ctx),
        Command::Undo(a) => undo::run(a, ctx),
        Command::Validate(a) => validate::run(a, ctx),
        Command::Fmt(a) => fmt::run(a, ctx),
        Command::Schema(a) => schema::run(a, ctx),
        Command::Completions(a) => completions::run(a, ctx),
        Command::Import(a) => import::run(a, ctx),
        Command::Export(a) => export::run(a, ctx),
        Command::Ls(a) => ls::run(a, ctx),
        Command::MergeFile(a) => merge_file::run(a, &ctx.printer),
        Command::Lock(a) => lock::run(a, ctx),
        Command::Init(a) => init::run(a, &ctx.global),
        Command::Doctor(a) => doctor::run(a, ctx),
    }
}

/// The exit code of a command's result, its error reported.
fn exit(printer: &Printer, result: crate::error::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            report_error::report(printer, &e);
            ExitCode::from(e.exit_code())
        }
    }
}

/// Parses the process arguments; a usage error exits 1 (2 is `diff`'s "differences"), and
/// with `-o json` (or `yaml`) is also a document on stdout.
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    // A completion script asking for candidates: answered, and the process ends.
    completions::answer();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let parsed = command()
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    match parsed {
        Ok((mut cli, m)) => {
            cli.global.cluster_from = Origin::of(&m, "cluster");
            cli.global.url_from = Origin::of(&m, "url");
            cli
        }
        Err(e) => {
            match e.use_stderr() {
                true => report_error::usage(&e, &args),
                false => drop(e.print()),
            }
            let code = if e.use_stderr() { EXIT_ERROR as i32 } else { 0 };
            std::process::exit(code)
        }
    }
}

/// The width help wraps at where neither a terminal nor `COLUMNS` says (help piped into a
/// file or a pager, a CI log): clap's own fallback is 100.
pub const HELP_WIDTH: usize = 80;

/// The command line as `kco` parses it: help wraps at the terminal's width (clap reads it
/// from stdout, stderr or stdin when one is a terminal, else from `COLUMNS`), and at
/// [`HELP_WIDTH`] when neither says.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal()
        || std::io::stderr().is_terminal()
        || std::io::stdin().is_terminal();
    let columns = std::env::var("COLUMNS").is_ok_and(|c| c.trim().parse::<usize>().is_ok());
    match terminal || columns {
        true => Cli::command(),
        false => Cli::command().term_width(HELP_WIDTH),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_tree_is_consistent() {
        Cli::command().debug_assert();
    }
}
