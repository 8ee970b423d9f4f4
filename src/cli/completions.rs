//! `kco completions`: shell completion, generated from the clap definitions and answered by
//! kco itself while the user types (clap_complete's dynamic completion): subcommands and
//! options as `--help` has them, and the names a project has, cluster names from kco.yaml
//! (`--cluster`) and connector names from the snapshot files (`show`, `log`, `reset`,
//! `snapshot`).
//!
//! The script a shell sources (`kco completions bash`, or `KCO_COMPLETE=bash kco`) calls
//! `KCO_COMPLETE=bash kco -- <words>` at each <TAB>; [`answer`], first thing in
//! [`super::parse`], answers such a call and exits.

use std::ffi::OsStr;
use std::path::PathBuf;

use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
use clap_complete::Shell;

use super::Context;
use crate::config::Config;
use crate::error::Result;

/// The variable a completion script sets when it asks kco for candidates: kco's own, so that
/// a `COMPLETE` another tool's completion left in the environment is not taken for it.
const VAR: &str = "KCO_COMPLETE";

/// Print a shell completion script
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "The script asks kco for candidates as you type, so it completes the cluster \
names of kco.yaml after --cluster and the connectors of the snapshot files after show, log, reset \
and snapshot, in the directory you are in. Load it at each shell start (it follows kco's \
upgrades), or write it to your shell's completion directory.\n\n\
Examples:\n  echo 'source <(kco completions bash)' >> ~/.bashrc\n  \
kco completions bash > /etc/bash_completion.d/kco\n  \
kco completions zsh > \"${fpath[1]}/_kco\"\n  \
kco completions fish > ~/.config/fish/completions/kco.fish"
)]
pub struct Args {
    /// The shell
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The completion script for a shell: it calls `KCO_COMPLETE=<shell> kco` for candidates.
pub fn script(shell: Shell) -> String {
    let completer: &dyn EnvCompleter = match shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Elvish => &Elvish,
        Shell::PowerShell => &Powershell,
        _ => &Bash,
    };
    let mut buf = Vec::new();
    completer
        .write_registration(VAR, "kco", "kco", "kco", &mut buf)
        .expect("writing to memory does not fail");
    String::from_utf8(buf).expect("completion scripts are UTF-8")
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    ctx.printer.out(&script(args.shell));
    Ok(0)
}

/// Answers a completion script's call (`KCO_COMPLETE=<shell> kco -- <words>`) and exits; does
/// nothing otherwise.
pub fn answer() {
    clap_complete::CompleteEnv::with_factory(super::command)
        .var(VAR)
        .complete();
}

/// kco.yaml as a command run here would find it (`KCO_CONFIG`, else here or a parent).
fn config() -> Option<Config> {
    let path = match std::env::var_os("KCO_CONFIG") {
        Some(p) => PathBuf::from(p),
        None => Config::discover(&std::env::current_dir().ok()?)?,
    };
    Config::load(&path).ok()
}

/// The clusters of kco.yaml starting with what was typed.
pub fn cluster_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Some(config) = config() else {
        return Vec::new();
    };
    config
        .cluster_names()
        .into_iter()
        .filter(|n| n.starts_with(typed.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}

/// The connectors with a snapshot file, in any cluster's directory of the project's snapshots
/// directory (`snapshotsDir` of kco.yaml, else `snapshots/`), starting with what was typed.
pub fn connector_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let dir = match config() {
        Some(c) => c.snapshots_dir(),
        None => PathBuf::from(crate::config::DEFAULT_SNAPSHOTS_DIR),
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| d.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .filter_map(|f| crate::engine::store::connector_of(&f.path()))
        .filter(|n| n.starts_with(typed.as_ref()))
        .collect();
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_call_kco_back_for_candidates() {
        let bash = script(Shell::Bash);
        assert!(bash.contains("KCO_COMPLETE=\"bash\""), "{bash}");
        assert!(
            bash.contains("complete -o nospace -o bashdefault -F") || bash.contains("complete "),
            "{bash}"
        );
        assert!(script(Shell::Zsh).contains("#compdef kco"));
        assert!(script(Shell::Fish).contains("complete"));
    }
}
