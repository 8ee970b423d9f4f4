//! Man pages, `docs/man/kco.1` and `docs/man/kco-<command>.1`, generated from the clap
//! definitions with clap_mangen so that they cannot drift from `--help`.
//! `KCO_UPDATE_DOCS=1 cargo test --lib cli::man` rewrites them.
//!
//! clap_mangen renders the name, synopsis, description, options and subcommands; the text
//! after the options (`after_long_help`) is split here into EXIT STATUS (its paragraphs that
//! begin with `Exit codes` or `Errors`; a page whose help has none gets the ones of `kco`, the
//! same for every command), EXAMPLES and NOTES. Then VERSION and SEE ALSO.

use clap::CommandFactory;

use super::{Cli, EXIT_CODES};

/// One of clap_mangen's section renderers.
type Render = fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>;

/// Every page: its file name and its roff text.
pub fn pages() -> Vec<(String, String)> {
    let mut root = Cli::command();
    root.build();
    let subcommands: Vec<clap::Command> = root
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .cloned()
        .collect();
    let see_also: Vec<String> = std::iter::once("kco".to_string())
        .chain(subcommands.iter().map(|s| format!("kco-{}", s.get_name())))
        .collect();
    std::iter::once(root.clone())
        .chain(subcommands)
        .map(|cmd| page(cmd, &see_also))
        .collect()
}

fn page(cmd: clap::Command, see_also: &[String]) -> (String, String) {
    let after = cmd
        .get_after_long_help()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let has_subcommands = cmd.has_subcommands();
    // The version alone: the commit and date of `--version` would change the page each commit.
    let man = clap_mangen::Man::new(cmd.clone().long_version(None::<&str>))
        .date("")
        .manual("kco manual")
        .source(format!("kco {}", env!("CARGO_PKG_VERSION")));
    let name = man.get_filename();
    let mut out = Vec::new();
    let sections: [Render; 5] = [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
        clap_mangen::Man::render_options_section,
    ];
    for render in sections {
        render(&man, &mut out).unwrap();
    }
    if has_subcommands {
        man.render_subcommands_section(&mut out).unwrap();
    }
    // Each render call starts with the same two-line preamble: keep the first.
    let text = String::from_utf8(out).unwrap();
    let preamble = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";
    let mut roff = format!("{preamble}{}", text.replace(preamble, ""));

    let (mut status, mut examples, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for para in after
        .split("\n\n")
        .map(str::trim_end)
        .filter(|p| !p.is_empty())
    {
        if para.starts_with("Exit codes") || para.starts_with("Errors") {
            status.push(para.to_string());
        } else if let Some(rest) = para.strip_prefix("Examples:\n") {
            examples.push(rest.to_string());
        } else {
            notes.push(para.to_string());
        }
    }
    if status.is_empty() {
        status = EXIT_CODES.split("\n\n").map(str::to_string).collect();
    }
    preformatted(&mut roff, "EXIT STATUS", &status);
    preformatted(&mut roff, "EXAMPLES", &examples);
    preformatted(&mut roff, "NOTES", &notes);
    roff.push_str(&format!(".SH VERSION\nv{}\n", env!("CARGO_PKG_VERSION")));
    let own = name.trim_end_matches(".1");
    let others: Vec<String> = see_also
        .iter()
        .filter(|n| n.as_str() != own)
        .map(|n| format!("\\fB{n}\\fR(1)"))
        .collect();
    roff.push_str(&format!(".SH \"SEE ALSO\"\n{}\n", others.join(", ")));
    (name, roff)
}

/// A section of paragraphs kept as written (no fill, no hyphenation), escaped for roff.
fn preformatted(roff: &mut String, title: &str, paragraphs: &[String]) {
    if paragraphs.is_empty() {
        return;
    }
    roff.push_str(&format!(".SH \"{title}\"\n"));
    for (i, para) in paragraphs.iter().enumerate() {
        if i > 0 {
            roff.push_str(".PP\n");
        }
        roff.push_str(".nf\n");
        for line in para.lines() {
            let line = line.replace('\\', "\\e").replace('-', "\\-");
            if line.starts_with('.') || line.starts_with('\'') {
                roff.push_str("\\&");
            }
            roff.push_str(&line);
            roff.push('\n');
        }
        roff.push_str(".fi\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn docs_man_pages_are_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/man");
        let pages = pages();
        if std::env::var_os("KCO_UPDATE_DOCS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            for entry in std::fs::read_dir(&dir).unwrap() {
                std::fs::remove_file(entry.unwrap().path()).unwrap();
            }
            for (name, text) in &pages {
                std::fs::write(dir.join(name), text).unwrap();
            }
        }
        let mut committed: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        committed.sort();
        let mut want: Vec<String> = pages.iter().map(|(n, _)| n.clone()).collect();
        want.sort();
        assert_eq!(
            committed, want,
            "docs/man: run KCO_UPDATE_DOCS=1 cargo test --lib cli::man"
        );
        for (name, text) in &pages {
            let have = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            if &have != text {
                let diff = similar::TextDiff::from_lines(&have, text)
                    .unified_diff()
                    .header(name, "generated")
                    .to_string();
                panic!("docs/man/{name} is stale; run KCO_UPDATE_DOCS=1 cargo test --lib cli::man\n{diff}");
            }
        }
    }

    #[test]
    fn every_page_has_its_exit_status() {
        let pages = pages();
        let page = |n: &str| &pages.iter().find(|(name, _)| name == n).unwrap().1;
        assert!(page("kco.1").contains(".SH \"EXIT STATUS\"\n.nf\nExit codes (the same whether"));
        assert!(page("kco.1").contains("  2  diff only: differences found (with"));
        assert!(page("kco-diff.1").contains("Exit codes:\n  0  no differences"));
        assert!(page("kco-diff.1").contains(".SH \"EXAMPLES\"\n.nf\n  kco diff\n"));
        // Without exit codes of its own, a page has those of `kco`.
        assert!(page("kco-schema.1").contains("  2  diff only: differences found (with"));
        for (name, text) in &pages {
            assert!(text.contains(".SH \"EXIT STATUS\""), "{name}");
            assert!(
                text.contains(".SH SYNOPSIS") || text.contains(".SH \"SYNOPSIS\""),
                "{name}"
            );
        }
        let commands = crate::cli::Cli::command().get_subcommands().count();
        assert_eq!(pages.len(), 1 + commands, "kco and each of its commands");
    }
}
