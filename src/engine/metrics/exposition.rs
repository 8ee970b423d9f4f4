//! The OpenMetrics text exposition of [`Metrics`], and reading the last success back from a
//! file kco wrote before.
//!
//! Gauges only (see the module above), so the same text is valid OpenMetrics 1.0 and
//! Prometheus text 0.0.4 (which reads `# EOF` as a comment): `promtool check metrics`,
//! node-exporter's textfile collector and the Pushgateway all accept it.

use std::fmt::Write;

use super::{Metrics, Sample, LAST_SUCCESS};

/// The text of `m`: `# HELP`, `# TYPE` and the samples of each family, then `# EOF`.
pub fn render(m: &Metrics) -> String {
    let mut out = String::new();
    for (def, samples) in m.families() {
        let _ = writeln!(out, "# HELP {} {}", def.name, escape_help(def.help));
        let _ = writeln!(out, "# TYPE {} gauge", def.name);
        for s in samples {
            out.push_str(def.name);
            if !s.labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in s.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape_label(v));
                }
                out.push('}');
            }
            out.push(' ');
            out.push_str(&value(s.value));
            out.push('\n');
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A value as both formats read it: integers without a fraction, `NaN`, `+Inf`, `-Inf`.
fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `kco_last_success_timestamp_seconds` samples of a text kco wrote (a metrics file
/// from an earlier run); lines it cannot read are passed over (a file edited by hand claims
/// nothing).
pub fn read_success(text: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(LAST_SUCCESS.name)?;
            parse_sample(rest)
        })
        .collect()
}

/// `{k="v",...} value` (or ` value`), with the label names kco writes.
fn parse_sample(rest: &str) -> Option<Sample> {
    let mut labels = Vec::new();
    let mut rest = rest;
    if let Some(body) = rest.strip_prefix('{') {
        let mut chars = body.char_indices();
        loop {
            // a name up to `=`
            let start = chars.clone().next()?.0;
            let (eq, _) = chars.find(|(_, c)| *c == '=')?;
            let name = &body[start..eq];
            if chars.next()?.1 != '"' {
                return None;
            }
            let mut v = String::new();
            loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => match chars.next()?.1 {
                        'n' => v.push('\n'),
                        c => v.push(c),
                    },
                    c => v.push(c),
                }
            }
            if let Some(known) = known_label(name) {
                labels.push((known, v));
            }
            match chars.next()? {
                (_, ',') => {
                    // `,}`: a trailing comma
                    if let Some((i, '}')) = chars.clone().next() {
                        chars.next();
                        rest = &body[i + 1..];
                        break;
                    }
                }
                (i, '}') => {
                    rest = &body[i + 1..];
                    break;
                }
                _ => return None,
            }
        }
    } else if !rest.starts_with(' ') {
        return None; // another metric whose name starts with this one's
    }
    let value: f64 = rest.split_whitespace().next()?.parse().ok()?;
    Some(Sample { labels, value })
}

fn known_label(name: &str) -> Option<&'static str> {
    ["cluster", "command"].into_iter().find(|k| *k == name)
}
