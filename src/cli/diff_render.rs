//! How a diff report reads: a summary table, then per connector the partition lines and a
//! unified YAML diff (text, colored on a terminal), or the same as a pull-request comment
//! (markdown).

use std::fmt::Write;

use super::output::{Printer, Style};
use crate::compare::Direction;
use crate::engine::diff::{
    unified, Class, ConnectorDiff, DiffReport, Gone, LabelsAgainst, Mode, PartitionKind,
    PartitionReport, Sides, Status,
};
use crate::engine::risk::{show, RiskCode};
use crate::model::Fields;

use super::words::partition as partition_name;

fn opt(f: &Option<Fields>) -> String {
    f.as_ref().map(show).unwrap_or_else(|| "(none)".into())
}

/// One side's offset, with its readable form beside it where the shape gives one:
/// `{"lsn":23803720,...} (0/16B3748, 2026-11-29T18:21:29.123456Z)`.
fn side(p: &PartitionReport, name: &str, f: &Option<Fields>) -> String {
    match p.readable.as_ref().and_then(|r| r.get(name)) {
        Some(r) => format!("{} ({r})", opt(f)),
        None => opt(f),
    }
}

fn amount(p: &PartitionReport) -> String {
    match (p.distance, &p.unit) {
        (Some(d), Some(u)) => format!(" by {}", crate::text::quantity(d, u)),
        (None, Some(_)) => format!(" ({})", p.field.as_deref().unwrap_or("")),
        _ => String::new(),
    }
}

/// One partition's line, without label or color: what differs and by how much.
pub fn partition_text(p: &PartitionReport) -> String {
    let name = partition_name(&p.partition);
    match &p.offsets {
        Sides::Live {
            kind,
            file_offset,
            live_offset,
        } => match (kind, p.direction) {
            (PartitionKind::Moved, Some(d)) => format!(
                "{name}: live {} file{}: file {} -> live {}",
                if d == Direction::Forward {
                    "ahead of"
                } else {
                    "behind"
                },
                amount(p),
                side(p, "before", file_offset),
                side(p, "after", live_offset)
            ),
            (PartitionKind::Moved, None) => format!(
                "{name}: changed (no known order): file {} -> live {}",
                side(p, "before", file_offset),
                side(p, "after", live_offset)
            ),
            (PartitionKind::OnlyActual, _) => {
                format!(
                    "{name}: only in the file: {} (none live)",
                    side(p, "before", file_offset)
                )
            }
            _ => format!(
                "{name}: only live: {} (not in the file)",
                side(p, "after", live_offset)
            ),
        },
        Sides::Base {
            kind,
            base_offset,
            head_offset,
        } if p.live.is_some() => {
            let live = p.live.as_ref().map(|l| opt(&l.offset)).unwrap_or_default();
            // What a deleted connector of the name left, which a created one resumes from.
            let whose = match p.live.as_ref().is_some_and(|l| l.leftover) {
                true => "left",
                false => "live",
            };
            let (after, change) = match kind {
                PartitionKind::OnlyWanted => (
                    side(p, "after", head_offset),
                    format!("added at {}", side(p, "after", head_offset)),
                ),
                PartitionKind::OnlyActual => (
                    "(removed)".to_string(),
                    format!("removed (was {})", side(p, "before", base_offset)),
                ),
                _ => (
                    side(p, "after", head_offset),
                    format!(
                        "{} -> {} in the files",
                        side(p, "before", base_offset),
                        side(p, "after", head_offset)
                    ),
                ),
            };
            format!("{name}: {whose} {live} -> {after}; {change}")
        }
        Sides::Base {
            kind,
            base_offset,
            head_offset,
        } => match (kind, p.direction) {
            (PartitionKind::Moved, Some(d)) => format!(
                "{name}: moved {}{}: {} -> {}",
                if d == Direction::Forward {
                    "forward"
                } else {
                    "backward"
                },
                amount(p),
                side(p, "before", base_offset),
                side(p, "after", head_offset)
            ),
            (PartitionKind::Moved, None) => format!(
                "{name}: changed (no known order): {} -> {}",
                side(p, "before", base_offset),
                side(p, "after", head_offset)
            ),
            (PartitionKind::OnlyWanted, _) => {
                format!("{name}: added at {}", side(p, "after", head_offset))
            }
            _ => format!("{name}: removed (was {})", side(p, "before", base_offset)),
        },
    }
}

/// The label of a partition: live class, or base risk.
fn label(p: &PartitionReport) -> Option<(String, Option<String>, bool)> {
    if let Some(r) = &p.risk {
        let bad = matches!(r.code, RiskCode::DataLoss | RiskCode::OffsetReset);
        return Some((r.code.label().to_string(), Some(r.message.clone()), bad));
    }
    if let Some(why) = p.live.as_ref().and_then(|l| l.left.as_ref()) {
        return Some(("LEFT".into(), Some(why.clone()), false));
    }
    match p.class {
        Some(Class::Advanced) => Some(("ADVANCED".into(), None, false)),
        Some(Class::Drift) => Some(("DRIFT".into(), None, true)),
        None => None,
    }
}

fn status_style(s: Status) -> Style {
    match s {
        Status::InSync | Status::Unchanged | Status::DrReady => Style::Good,
        Status::Skipped => Style::Dim,
        Status::Advanced | Status::Added | Status::Changed => Style::Warn,
        _ => Style::Bad,
    }
}

fn counts_header(mode: Mode) -> [&'static str; 4] {
    match mode {
        Mode::Live => ["UNCHANGED", "MOVED", "ONLY FILE", "ONLY LIVE"],
        Mode::Base => ["UNCHANGED", "MOVED", "REMOVED", "ADDED"],
    }
}

fn counts(c: &ConnectorDiff) -> [String; 4] {
    [
        c.counts.unchanged.to_string(),
        c.counts.moved.to_string(),
        c.counts.only_old.to_string(),
        c.counts.only_new.to_string(),
    ]
}

fn headline(r: &DiffReport) -> String {
    let what = match r.mode {
        Mode::Live => format!(
            "files against cluster `{}`",
            r.cluster.as_deref().unwrap_or("")
        ),
        Mode::Base => format!("working tree against {}", base_words(r)),
    };
    let mut parts: Vec<String> = r
        .summary
        .statuses
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(s, n)| format!("{n} {}", s.replace('_', " ")))
        .collect();
    for (n, word) in [
        (r.summary.failed, "FAILED"),
        (r.summary.unassigned, "UNASSIGNED"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    format!(
        "{what}: {}{}{}",
        super::words::count(r.summary.connectors, "connector"),
        if parts.is_empty() { "" } else { ": " },
        parts.join(", ")
    )
}

fn short(c: Option<&str>) -> &str {
    c.map(|c| &c[..c.len().min(12)]).unwrap_or("")
}

/// base: what was compared, named: `` `origin/main` (3f2a1b9c0d12) ``, or `` the merge base
/// of HEAD and `origin/main` (3f2a1b9c0d12; `origin/main` is at 9e8d7c6b5a43) ``.
pub fn base_words(r: &DiffReport) -> String {
    let rev = r.base.as_deref().unwrap_or("");
    let commit = short(r.base_commit.as_deref());
    match &r.base_tip {
        Some(tip) => format!(
            "the merge base of HEAD and `{rev}` ({commit}; `{rev}` is at {})",
            short(Some(tip))
        ),
        None => format!("`{rev}` ({commit})"),
    }
}

/// base: what the labels compare with, in a sentence.
pub fn labels_line(r: &DiffReport) -> Option<String> {
    let l = r.labels.as_ref()?;
    Some(match l.against {
        LabelsAgainst::Live => {
            let mut line = format!(
                "Labels: what applying the change would do to the live offsets of cluster `{}` ({}, read {})",
                l.cluster.as_deref().unwrap_or(""),
                l.url.as_deref().unwrap_or(""),
                l.read_at.as_deref().unwrap_or("")
            );
            if !l.files_only.is_empty() {
                line.push_str(&format!(
                    "; the files only for {} whose live offsets could not be read: {}",
                    super::words::count(l.files_only.len(), "connector"),
                    l.files_only.join(", ")
                ));
            }
            line
        }
        LabelsAgainst::Files => format!(
            "Labels compare the files only, not the cluster: {}",
            l.why.as_deref().unwrap_or("")
        ),
    })
}

/// base: the warning for stderr when the labels did not read live (all or part), so that a
/// job's log says it even when the report goes to a file.
pub fn labels_warning(r: &DiffReport) -> Option<String> {
    let l = r.labels.as_ref()?;
    match l.against {
        LabelsAgainst::Files => Some(format!(
            "the review's labels compare the files only, not the cluster: {}",
            l.why.as_deref().unwrap_or("")
        )),
        LabelsAgainst::Live if !l.files_only.is_empty() => Some(format!(
            "the review's labels compare the files only for {} whose live offsets could not be read on cluster `{}`: {}",
            super::words::count(l.files_only.len(), "connector"),
            l.cluster.as_deref().unwrap_or(""),
            l.files_only.join(", ")
        )),
        LabelsAgainst::Live => None,
    }
}

/// A connector's notes: what its labels compared with when the cluster lacks it, then the
/// engine's.
fn notes(c: &ConnectorDiff) -> impl Iterator<Item = String> + '_ {
    c.leftovers
        .as_ref()
        .map(|g| gone_note(&c.name, g))
        .into_iter()
        .chain(c.notes.iter().cloned())
}

/// What a review compared the change of `name`, a connector the cluster lacks, with.
fn gone_note(name: &str, g: &Gone) -> String {
    let missing = format!("`{name}` is not on the cluster: applying the change needs --create");
    match g {
        Gone::Group { group, partitions: 0 } => format!(
            "{missing}; its consumer group `{group}` holds no offsets: labels compare with none"
        ),
        Gone::Group { group, partitions } => format!(
            "{missing}, and a sink created under its name resumes from the offsets its consumer group `{group}` still holds ({}): labels compare with them",
            super::words::count(*partitions, "partition")
        ),
        Gone::OffsetsTopic { topic, partitions: 0 } => format!(
            "{missing}; no offsets are left under its name in topic `{topic}`: labels compare with none"
        ),
        Gone::OffsetsTopic { topic, partitions } => format!(
            "{missing}, and a source created under its name resumes from the offsets left under its name in topic `{topic}` ({}): labels compare with them",
            super::words::count(*partitions, "partition")
        ),
        Gone::Nothing { why } => format!(
            "{missing}; labels compare with nothing: kco could not read the offsets an earlier connector of its name may have left, which a connector created under it resumes from: {why}"
        ),
    }
}

/// base: a warning for each connector the cluster lacks whose labels compare with nothing
/// (what its name left could not be read), for a job's log.
pub fn against_nothing_warnings(r: &DiffReport) -> Vec<String> {
    r.connectors
        .iter()
        .filter_map(|c| match &c.leftovers {
            Some(Gone::Nothing { why }) => Some(format!(
                "the review compared `{}` (not on the cluster) with nothing: {why}",
                c.name
            )),
            _ => None,
        })
        .collect()
}

/// Above this many bytes, text output is handed on rather than held.
const CHUNK: usize = 1 << 16;

/// What a rendering shows of a report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    /// `--all`: every connector, the unchanged ones too (else they are one count).
    pub all: bool,
    /// `--all-clusters`: each row names its cluster.
    pub cluster_column: bool,
}

/// Connectors a reader needs a line for: those that differ, then (with `--all`) the others.
fn listed(r: &DiffReport, shown: Shown) -> Vec<&ConnectorDiff> {
    let differ = r.connectors.iter().filter(|c| !unchanged(c));
    let same = r.connectors.iter().filter(|c| shown.all && unchanged(c));
    differ.chain(same).collect()
}

fn unchanged(c: &ConnectorDiff) -> bool {
    matches!(c.status, Status::InSync | Status::Unchanged) && c.health.is_healthy()
}

/// `FAILED  orders-sink: task 0 FAILED: <the trace's first line>`, one line per connector
/// whose connector or tasks are FAILED or UNASSIGNED (`engine::health`), whatever its offsets.
pub fn health_lines(r: &DiffReport) -> Vec<(&'static str, String)> {
    r.connectors
        .iter()
        .filter_map(|c| {
            let verdict = c.health.verdict()?;
            Some((verdict, format!("{}: {}", c.name, c.health.describe())))
        })
        .collect()
}

/// `298 in sync (--all lists them)`, for the connectors the table left out.
fn left_out(r: &DiffReport, shown: Shown) -> Option<String> {
    let n = r.connectors.iter().filter(|c| unchanged(c)).count();
    if shown.all || n == 0 {
        return None;
    }
    let word = match r.mode {
        Mode::Live => "in sync",
        Mode::Base => "unchanged",
    };
    Some(format!("{n} {word} (--all lists them)"))
}

/// Human text, handed to `emit` a chunk at a time: the unified diff of a connector with
/// 100,000 moved partitions is tens of megabytes, never held whole.
pub fn text_chunks(r: &DiffReport, p: &Printer, shown: Shown, emit: &mut dyn FnMut(&str)) {
    let mut out = String::new();
    let _ = writeln!(out, "{}", p.paint(Style::Bold, &headline(r)));
    if let Some(l) = labels_line(r) {
        let _ = writeln!(out, "{}", p.paint(Style::Dim, &l));
    }
    if r.connectors.is_empty() {
        let _ = writeln!(out, "No snapshot files and no connectors to compare.");
        emit(&out);
        return;
    }
    let h = counts_header(r.mode);
    let listed = listed(r, shown);
    let mut rows: Vec<Vec<String>> = Vec::new();
    let cluster = r.cluster.clone().unwrap_or_default();
    let head = ["CONNECTOR", "STATUS", "TYPE", h[0], h[1], h[2], h[3]].map(String::from);
    rows.push(if shown.cluster_column {
        std::iter::once("CLUSTER".to_string()).chain(head).collect()
    } else {
        head.to_vec()
    });
    for c in &listed {
        let [a, b, x, y] = counts(c);
        let row = [
            c.name.clone(),
            c.status.as_str().to_string(),
            c.connector_type
                .map(|t| t.to_string())
                .unwrap_or("?".into()),
            a,
            b,
            x,
            y,
        ];
        rows.push(if shown.cluster_column {
            std::iter::once(cluster.clone()).chain(row).collect()
        } else {
            row.to_vec()
        });
    }
    let status_at = usize::from(shown.cluster_column) + 1;
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    if rows.len() > 1 {
        for (n, row) in rows.iter().enumerate() {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                let padded = format!("{cell:<w$}", w = widths[i]);
                let padded = match (n, i) {
                    (0, _) => p.paint(Style::Dim, &padded),
                    (_, i) if i == status_at => {
                        p.paint(status_style(listed[n - 1].status), &padded)
                    }
                    _ => padded,
                };
                line.push_str(&padded);
                line.push_str("  ");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    if let Some(line) = left_out(r, shown) {
        let _ = writeln!(out, "{}", p.paint(Style::Dim, &line));
    }
    for (verdict, line) in health_lines(r) {
        let _ = writeln!(out, "{}  {line}", p.paint(Style::Bad, verdict));
    }
    // Whether each mirror is alive, then a sink that could start on this DR cluster: its
    // translation, partition by partition, and a source left out of readiness.
    for h in &r.mirrors {
        let line = crate::engine::diff::heartbeat_line(h);
        let style = if h.topic.is_some() {
            Style::Dim
        } else {
            Style::Warn
        };
        let _ = writeln!(out, "{}", p.paint(style, &line));
    }
    for c in r
        .connectors
        .iter()
        .filter(|c| c.yaml.is_none())
        .filter(|c| {
            matches!(
                c.status,
                Status::DrReady | Status::DrLagging | Status::Skipped
            )
        })
    {
        let title = format!("{} ({})", c.name, c.status.as_str());
        let _ = writeln!(out, "\n{}", p.paint(Style::Bold, &title));
        for n in notes(c) {
            let _ = writeln!(out, "  {n}");
        }
    }
    for (c, y) in r
        .connectors
        .iter()
        .filter_map(|c| c.yaml.as_ref().map(|y| (c, y)))
    {
        let _ = writeln!(out);
        let title = format!("{} ({})", c.name, c.status.as_str());
        let file = c
            .file
            .as_deref()
            .map(|f| format!("  {f}"))
            .unwrap_or_default();
        let _ = writeln!(out, "{}{}", p.paint(Style::Bold, &title), file);
        for n in notes(c) {
            let _ = writeln!(out, "  {n}");
        }
        // A wide connector's diff is worked out on another thread while its partition
        // lines are written.
        std::thread::scope(|scope| {
            let prepared = unified::is_wide(y).then(|| scope.spawn(|| unified::prepare(y)));
            for part in &c.partitions {
                let mut line = format!("  {}", partition_text(part));
                if let Some((l, msg, bad)) = label(part) {
                    let style = if bad { Style::Bad } else { Style::Warn };
                    let tag = p.paint(style, &format!("[{l}]"));
                    match msg {
                        Some(m) => {
                            let _ = write!(line, "  {tag} {m}");
                        }
                        None => {
                            let _ = write!(line, "  {tag}");
                        }
                    }
                }
                let _ = writeln!(out, "{line}");
                if out.len() > CHUNK {
                    emit(&out);
                    out.clear();
                }
            }
            let prepared = match prepared {
                Some(thread) => thread.join().expect("a diff does not panic"),
                None => unified::prepare(y),
            };
            let mut line = |l: &str| {
                let style = if l.starts_with("+++") || l.starts_with("---") {
                    Some(Style::Bold)
                } else if l.starts_with('+') {
                    Some(Style::Good)
                } else if l.starts_with('-') {
                    Some(Style::Bad)
                } else if l.starts_with("@@") {
                    Some(Style::Dim)
                } else {
                    None
                };
                match style {
                    Some(style) if p.color => out.push_str(&p.paint(style, l)),
                    _ => out.push_str(l),
                }
                out.push('\n');
                if out.len() > CHUNK {
                    emit(&out);
                    out.clear();
                }
            };
            prepared.write(y, &mut line);
        });
    }
    emit(&out);
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Past this many characters a pull-request comment is cut short (GitHub refuses comments
/// over 65,536): details stop there, with a count of what was left out.
pub const MARKDOWN_BUDGET: usize = 60_000;

/// Markdown for a pull-request comment: the verdict and the table of what differs first, then
/// the details of each connector while they fit in [`MARKDOWN_BUDGET`].
pub fn markdown(r: &DiffReport, shown: Shown) -> String {
    let mut out = String::new();
    let title = match r.mode {
        Mode::Live => format!(
            "kco diff: snapshot files against cluster `{}`",
            r.cluster.as_deref().unwrap_or("")
        ),
        Mode::Base => format!("kco diff: offsets changed since {}", base_words(r)),
    };
    let _ = writeln!(out, "## {title}\n");
    if let Some(l) = labels_line(r) {
        let _ = writeln!(out, "{}\n", md_escape(&l));
    }
    let verdict = if r.summary.differences == 0 {
        "No differences.".to_string()
    } else {
        format!(
            "**{} of {} differ**, {} changed.",
            r.summary.differences,
            super::words::count(r.summary.connectors, "connector"),
            super::words::count(r.summary.partitions_changed, "partition")
        )
    };
    let _ = writeln!(out, "{verdict}\n");
    for (verdict, line) in health_lines(r) {
        let _ = writeln!(out, "- **{verdict}** {}", md_escape(&line));
    }
    if r.summary.failed + r.summary.unassigned > 0 {
        out.push('\n');
    }
    if r.connectors.is_empty() {
        return out;
    }
    let listed = listed(r, shown);
    let h = counts_header(r.mode);
    let cap = |s: &str| {
        let lower = s.to_lowercase();
        let mut c = lower.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    // The table may take half the budget; the details the rest.
    let table_budget = MARKDOWN_BUDGET / 2;
    let mut rows_left_out = 0;
    if !listed.is_empty() {
        let _ = writeln!(
            out,
            "| Connector | Status | Type | {} | {} | {} | {} | Labels |",
            cap(h[0]),
            cap(h[1]),
            cap(h[2]),
            cap(h[3])
        );
        let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---|");
    }
    for c in &listed {
        let mut labels: Vec<String> = Vec::new();
        for part in &c.partitions {
            if let Some((l, _, _)) = label(part) {
                let l = format!("**{l}**");
                if !labels.contains(&l) {
                    labels.push(l);
                }
            }
        }
        let [a, b, x, y] = counts(c);
        let row = format!(
            "| `{}` | {} | {} | {a} | {b} | {x} | {y} | {} |\n",
            md_escape(&c.name),
            c.status.as_str(),
            c.connector_type
                .map(|t| t.to_string())
                .unwrap_or("?".into()),
            labels.join(", ")
        );
        if out.len() + row.len() > table_budget {
            rows_left_out += 1;
            continue;
        }
        out.push_str(&row);
    }
    if rows_left_out > 0 {
        let _ = writeln!(
            out,
            "\n_{} more left out of this table (the comment's size limit); `kco diff` lists them all._",
            super::words::count(rows_left_out, "connector")
        );
    }
    if let Some(line) = left_out(r, shown) {
        let _ = writeln!(out, "\n{line}");
    }
    let mut details_left_out = 0;
    for c in r.connectors.iter().filter(|c| c.yaml.is_some()) {
        if details_left_out > 0 {
            details_left_out += 1;
            continue;
        }
        let block = details(c);
        if out.len() + block.len() > MARKDOWN_BUDGET {
            details_left_out += 1;
            continue;
        }
        out.push_str(&block);
    }
    if details_left_out > 0 {
        let _ = writeln!(
            out,
            "\n_The details of {} are left out (the comment's size limit); `kco diff` shows them._",
            super::words::count(details_left_out, "more connector")
        );
    }
    out
}

/// One connector's `<details>` block.
fn details(c: &ConnectorDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n<details><summary><code>{}</code>: {}</summary>\n",
        md_escape(&c.name),
        c.status.as_str()
    );
    if let Some(f) = &c.file {
        let _ = writeln!(out, "File: `{}`\n", md_escape(f));
    }
    for n in notes(c) {
        let _ = writeln!(out, "- {}", md_escape(&n));
    }
    for part in &c.partitions {
        let mut line = format!("- `{}`", partition_text(part).replace('`', "'"));
        if let Some((l, msg, _)) = label(part) {
            let _ = write!(line, " **{l}**");
            if let Some(m) = msg {
                let _ = write!(line, ": {}", md_escape(&m));
            }
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(y) = &c.yaml {
        let _ = writeln!(out, "\n```diff\n{}```", unified::unified(y));
    }
    let _ = writeln!(out, "\n</details>");
    out
}
