//! `--help` of kco and of every subcommand, and `-h` of kco.

use super::{snap, Env};

#[test]
fn top_level_help() {
    let env = Env::new();
    snap!("help", env.text(&["--help"]));
    snap!("help_short", env.text(&["-h"]));
}

#[test]
fn every_subcommand_help() {
    let env = Env::new();
    snap!("help_snapshot", env.text(&["snapshot", "--help"]));
    snap!("help_diff", env.text(&["diff", "--help"]));
    snap!("help_apply", env.text(&["apply", "--help"]));
    snap!("help_reset", env.text(&["reset", "--help"]));
    snap!("help_log", env.text(&["log", "--help"]));
    snap!("help_show", env.text(&["show", "--help"]));
    snap!("help_validate", env.text(&["validate", "--help"]));
    snap!("help_fmt", env.text(&["fmt", "--help"]));
    snap!("help_merge_file", env.text(&["merge-file", "--help"]));
    snap!("help_schema", env.text(&["schema", "--help"]));
    snap!("help_completions", env.text(&["completions", "--help"]));
    snap!("help_import", env.text(&["import", "--help"]));
    snap!("help_export", env.text(&["export", "--help"]));
    snap!("help_ls", env.text(&["ls", "--help"]));
    snap!("help_init", env.text(&["init", "--help"]));
    snap!("help_doctor", env.text(&["doctor", "--help"]));
}

/// Every subcommand's long help ends with an `Examples:` section of 2 to 4 commands.
#[test]
fn every_subcommand_ends_with_examples() {
    let env = Env::new();
    let top = env.text(&["--help"]);
    let names: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A wrapped description continues at a deeper indent.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help" && n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .collect();
    assert!(names.len() >= 11, "{names:?}");
    for name in names {
        let help = env.text(&[name, "--help"]);
        let (_, examples) = help
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("`kco {name} --help` has no Examples:\n{help}"));
        let lines: Vec<&str> = examples
            .lines()
            .take_while(|l| l.starts_with("  "))
            .collect();
        let rest = &examples.lines().nth(lines.len()).unwrap_or_default();
        assert!((2..=4).contains(&lines.len()), "kco {name}: {lines:?}");
        // One command per line, none wrapped (a wrapped line would not paste).
        let whole = |l: &&str| !l.starts_with("   ") && l.contains("kco") && l.contains(name);
        assert!(lines.iter().all(whole), "kco {name}: {lines:?}");
        assert!(
            rest.starts_with("[stderr]"),
            "kco {name}: examples must end the help, then {rest:?}"
        );
    }
}
