//! Where things are in a snapshot file's text: the lines that problems point at.

pub(super) fn strip_location(e: &serde_yaml::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The 1-based line of the first `key:` at any indentation.
pub(super) fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let needle = format!("{key}:");
    text.lines()
        .position(|l| l.trim_start().trim_start_matches("- ").starts_with(&needle))
        .map(|i| i + 1)
}

/// The 1-based line of `key` inside the top-level `config:` map.
pub(super) fn config_key_line(text: &str, key: &str) -> Option<usize> {
    let start = text.lines().position(|l| l.starts_with("config:"))?;
    let spellings = [
        format!("{key}:"),
        format!("{}:", super::yaml::string(key)),
        format!("'{key}':"),
    ];
    text.lines()
        .enumerate()
        .skip(start + 1)
        .take_while(|(_, l)| l.is_empty() || l.starts_with(' ') || l.starts_with('#'))
        .find(|(_, l)| {
            spellings
                .iter()
                .any(|s| l.trim_start().starts_with(s.as_str()))
        })
        .map(|(i, _)| i + 1)
}

/// The 1-based lines where each item of the top-level `offsets:` sequence starts.
pub(super) fn offsets_item_lines(text: &str) -> Vec<usize> {
    let mut lines = text.lines().enumerate();
    let mut out = Vec::new();
    for (_, l) in lines.by_ref() {
        if l.starts_with("offsets:") {
            break;
        }
    }
    let mut indent: Option<usize> = None;
    for (i, l) in lines {
        let trimmed = l.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let this = l.len() - trimmed.len();
        if this == 0 && !trimmed.starts_with('-') {
            break;
        }
        if trimmed.starts_with("- ") || trimmed == "-" {
            match indent {
                None => {
                    indent = Some(this);
                    out.push(i + 1);
                }
                Some(n) if n == this => out.push(i + 1),
                _ => {}
            }
        }
    }
    out
}
