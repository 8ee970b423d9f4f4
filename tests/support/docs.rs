//! The documentation pages whose command blocks the tests run (docs/getting-started.md,
//! docs/time-travel.md, docs/apply.md, examples/README.md).

use std::path::Path;
use std::process::{Command, Output};

use super::run::hermetic;

/// The text of a page, by its path from the repository's root.
pub fn page(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap()
}

/// The ```sh blocks of a Markdown page, in order (other fences, ```text and ```json, are
/// output and are not run).
pub fn shell_blocks(page: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in page.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// `program` (`sh`, `bash`) set up to run a page's commands in `dir`: hermetic ([`hermetic`],
/// `HOME` = `home`), the built kco first on `PATH`, a git identity (`t`).
pub fn page_shell(program: &str, home: &Path, dir: &Path) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_kco")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new(program);
    hermetic(&mut cmd, home)
        .current_dir(dir)
        .env("PATH", path)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com");
    cmd
}

/// What a [`page_shell`] running `script` said (stdout then stderr), asserted to have
/// succeeded (the script and all it said otherwise).
pub fn succeeded(script: &str, out: &Output) -> String {
    let all = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{script}\n---\n{all}");
    all.into_owned()
}
