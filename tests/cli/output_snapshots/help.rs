//! `--help` of kco and of every subcommand, and `-h` of kco.

use super::{snap, Env};

#[test]
fn top_level_help() {
    let env = Env::new();
    snap!("help", env.kco(&["--help"]));
    snap!("help_short", env.kco(&["-h"]));
}

#[test]
fn every_subcommand_help() {
    let env = Env::new();
    snap!("help_snapshot", env.kco(&["snapshot", "--help"]));
    snap!("help_diff", env.kco(&["diff", "--help"]));
    snap!("help_apply", env.kco(&["apply", "--help"]));
    snap!("help_reset", env.kco(&["reset", "--help"]));
    snap!("help_log", env.kco(&["log", "--help"]));
    snap!("help_show", env.kco(&["show", "--help"]));
    snap!("help_validate", env.kco(&["validate", "--help"]));
    snap!("help_fmt", env.kco(&["fmt", "--help"]));
    snap!("help_schema", env.kco(&["schema", "--help"]));
    snap!("help_completions", env.kco(&["completions", "--help"]));
}
