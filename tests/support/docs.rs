//! The documentation pages whose command blocks the tests run (docs/getting-started.md,
//! docs/time-travel.md, docs/apply.md, examples/README.md).

use std::path::Path;

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
