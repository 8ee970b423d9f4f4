//! The command-line reference, `docs/cli.md`, generated from the clap definitions so that it
//! cannot drift from `--help`. `KCO_UPDATE_DOCS=1 cargo test --lib cli::reference` rewrites it.

use clap::CommandFactory;

use super::Cli;

/// Every command's long help, as Markdown.
pub fn markdown() -> String {
    let mut root = Cli::command().term_width(100);
    root.build();
    let mut out = String::from(
        "# kco command-line reference\n\n\
         Generated from the `--help` text by `KCO_UPDATE_DOCS=1 cargo test --lib cli::reference`; \
         do not edit by hand.\n",
    );
    section(&mut out, "kco", &mut root.clone());
    for sub in root.get_subcommands_mut() {
        if sub.get_name() == "help" {
            continue;
        }
        let name = format!("kco {}", sub.get_name());
        section(&mut out, &name, sub);
    }
    out
}

fn section(out: &mut String, name: &str, cmd: &mut clap::Command) {
    let help = cmd.render_long_help().to_string();
    let help: Vec<&str> = help.lines().map(str::trim_end).collect();
    out.push_str(&format!(
        "\n## `{name}`\n\n```text\n{}\n```\n",
        help.join("\n").trim_end()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_cli_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
        let want = markdown();
        if std::env::var_os("KCO_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            let diff = similar::TextDiff::from_lines(&have, &want)
                .unified_diff()
                .header("docs/cli.md", "generated")
                .to_string();
            panic!("docs/cli.md is stale; run KCO_UPDATE_DOCS=1 cargo test --lib cli::reference\n{diff}");
        }
    }
}
