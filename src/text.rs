//! Words shared by every layer: a count with its noun (docs/output.md: never `partition(s)`),
//! and, for typos, the name someone most likely meant (how far apart two names are is
//! `strsim::levenshtein`'s).

/// `1 partition`, `3 partitions`: a count and a noun that agrees with it. Nouns whose plural
/// takes an `s`; `noun/plural` for the others is not needed yet.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `1 record`, `600 records`, `1 byte of WAL`: a count and a unit that shapes name in the
/// plural (`records`, `bytes`, `bytes of WAL`). With 1, the unit's first word drops its plural
/// `s` when it is an English word (letters only, four or more, not ending in `ss`); a field
/// name that stands as a unit (`pos`, `ts_ms`, `scn`) is left as it is.
pub fn quantity(n: u64, unit: &str) -> String {
    if n != 1 {
        return format!("{n} {unit}");
    }
    let (word, rest) = unit.split_at(unit.find(' ').unwrap_or(unit.len()));
    let plural = word.len() > 3
        && word.bytes().all(|b| b.is_ascii_alphabetic())
        && word.ends_with('s')
        && !word.ends_with("ss");
    match word.strip_suffix('s').filter(|_| plural) {
        Some(one) => format!("1 {one}{rest}"),
        None => format!("1 {unit}"),
    }
}

/// The name among `names` that `typed` most likely meant: the nearest, when it is at most a
/// third of its length (and at least 1) edits away.
pub fn closest<'a>(names: &'a [String], typed: &str) -> Option<&'a str> {
    let limit = (typed.chars().count() / 3).max(1);
    names
        .iter()
        .map(|n| (strsim::levenshtein(typed, n), n.as_str()))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(count(1, "partition"), "1 partition");
        assert_eq!(count(0, "partition"), "0 partitions");
        assert_eq!(count(3, "connector"), "3 connectors");
    }

    #[test]
    fn a_quantity_of_one_is_singular() {
        assert_eq!(quantity(1, "records"), "1 record");
        assert_eq!(quantity(2, "records"), "2 records");
        assert_eq!(quantity(0, "bytes"), "0 bytes");
        assert_eq!(quantity(1, "bytes of WAL"), "1 byte of WAL");
        assert_eq!(quantity(1, "events"), "1 event");
        // Field names standing as units are not English plurals.
        assert_eq!(quantity(1, "pos"), "1 pos");
        assert_eq!(quantity(1, "ts_ms"), "1 ts_ms");
        assert_eq!(quantity(1, "scn"), "1 scn");
        assert_eq!(quantity(1, "address"), "1 address");
    }

    #[test]
    fn the_nearest_name_within_reach() {
        let names = vec!["prod".to_string(), "staging".to_string()];
        assert_eq!(closest(&names, "prood"), Some("prod"));
        assert_eq!(closest(&names, "stagin"), Some("staging"));
        assert_eq!(closest(&names, "dev"), None);
    }
}

/// The width of `s` on a terminal: its characters, less the escape sequences that color it.
fn visible_width(s: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for c in s.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// `text` with each line wider than `width` folded at its spaces, the rest indented four
/// more than the line, so that a report reads at the terminal's width; a word wider than
/// the room is left whole, and so are the lines of a unified diff (`+`, `-`, `@`). Colored
/// text is measured without its escapes.
pub fn fold(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // A unified diff's lines stay as they are: folded, they would no longer be one.
        if visible_width(line) <= width || line.starts_with(['+', '-', '@']) {
            out.push_str(line);
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let hang = indent + 4;
        let mut current = line[..indent].to_string();
        let mut used = indent;
        let mut starts = true;
        for word in line[indent..].split(' ') {
            // Two spaces in a row (before a label) stay two.
            if word.is_empty() {
                if !starts {
                    current.push(' ');
                    used += 1;
                }
                continue;
            }
            let w = visible_width(word);
            if !starts && used + 1 + w > width {
                out.push_str(current.trim_end());
                out.push('\n');
                current = " ".repeat(hang);
                used = hang;
                starts = true;
            }
            if !starts {
                current.push(' ');
                used += 1;
            }
            current.push_str(word);
            used += w;
            starts = false;
        }
        out.push_str(&current);
    }
    out
}

#[cfg(test)]
mod fold_tests {
    use super::fold;

    #[test]
    fn long_lines_fold_at_spaces_under_a_hanging_indent() {
        let line = "  orders/0: live ahead of file by 100 records: file {\"kafka_offset\":1500} -> live {\"kafka_offset\":1600}  [ADVANCED]";
        let folded = fold(line, 60);
        for l in folded.lines() {
            assert!(l.chars().count() <= 60, "{l:?}");
        }
        assert!(
            folded.lines().skip(1).all(|l| l.starts_with("      ")),
            "{folded}"
        );
        let joined: Vec<&str> = folded.split_whitespace().collect();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(joined, words, "the same words, in order");
        assert_eq!(fold("short\n  also short", 60), "short\n  also short");
        // Escapes do not count.
        let red = "\x1b[31mREPROCESSING\x1b[0m";
        assert_eq!(fold(&format!("  a b {red}"), 20), format!("  a b {red}"));
    }
}
