//! `kco completions`: shell completion scripts, generated from the clap definitions.

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Cli, Context};
use crate::error::Result;

/// Print a shell completion script
#[derive(Debug, clap::Args)]
#[command(
    after_long_help = "Examples:\n  kco completions bash > /etc/bash_completion.d/kco\n  kco completions zsh > \"${fpath[1]}/_kco\"\n  kco completions fish > ~/.config/fish/completions/kco.fish"
)]
pub struct Args {
    /// The shell
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The completion script for a shell.
pub fn script(shell: Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "kco", &mut buf);
    String::from_utf8(buf).expect("completion scripts are UTF-8")
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    ctx.printer.out(&script(args.shell));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_name_every_subcommand() {
        let bash = script(Shell::Bash);
        for sub in [
            "snapshot", "diff", "apply", "reset", "validate", "fmt", "schema",
        ] {
            assert!(bash.contains(sub), "{sub}");
        }
        assert!(bash.contains("--with-config") && bash.contains("--fail-on"));
        assert!(script(Shell::Zsh).contains("#compdef kco"));
    }
}
