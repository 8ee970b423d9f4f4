//! `--all-clusters`: one command over every cluster of `kco.yaml` at once.
//!
//! The clusters are read concurrently (at most [`CLUSTERS_AT_ONCE`] at a time, each with its
//! own bound on reads in flight, so no worker sees more than one cluster's `--parallel`); their
//! reports are then printed one after another in the order of `kco.yaml`'s names (with
//! `--output json`/`yaml`: one array of them). A cluster that fails (cannot be reached, say)
//! does not stop the others: its error is printed in its place (in the array:
//! `{"cluster": NAME, "error": {...}}`), a closing line names every cluster that failed, and
//! the run exits 1. The exit code is the worst of the clusters', an error counting worse than
//! `diff`'s differences (2): a script must never read a failure as drift.

use serde::Serialize;

use super::report_error::{self, ErrorBody};
use super::Context;
use crate::engine::parallel;
use crate::error::{Error, Result, EXIT_DIFFERENCES, EXIT_ERROR, EXIT_OK};

/// How many clusters are worked on at once.
pub const CLUSTERS_AT_ONCE: usize = 8;

/// Runs `work` for every configured cluster (concurrently), then `finish` on each report in
/// order (told not to print structured output: that is one array, printed here). Returns the
/// highest exit code.
pub fn run<R: Send + serde::Serialize>(
    ctx: &Context,
    work: impl Fn(&str) -> Result<R> + Sync,
    finish: impl Fn(&R, Structured) -> u8,
) -> Result<u8> {
    if ctx.global.cluster.is_some() || ctx.global.url.is_some() {
        return Err(Error::Usage(
            "--all-clusters works on every cluster of kco.yaml: drop --cluster and --url".into(),
        ));
    }
    let names = ctx.config.cluster_names();
    if names.is_empty() {
        return Err(Error::Usage(
            "--all-clusters needs clusters in kco.yaml; none are configured".into(),
        ));
    }
    let results = parallel::map(&names, CLUSTERS_AT_ONCE, |name| work(name));
    let mut code = EXIT_OK;
    let mut items = Vec::new();
    let mut failed = Vec::new();
    for (name, result) in names.iter().zip(results) {
        let c = match result {
            Ok(report) => {
                let c = finish(&report, Structured::Together);
                items.push(Item::Report(report));
                c
            }
            Err(e) => {
                let body = ErrorBody::of(&e);
                report_error::cluster_error(&ctx.printer, name, &body);
                failed.push(format!("`{name}`"));
                items.push(Item::Failed {
                    cluster: name.clone(),
                    error: body,
                });
                e.exit_code()
            }
        };
        code = worst(code, c);
    }
    if ctx.printer.is_structured() {
        ctx.printer.structured(&items);
    }
    if !failed.is_empty() {
        report_error::failure(
            &ctx.printer,
            &format!(
                "{} of {} failed: {} (the others' reports are complete)",
                failed.len(),
                crate::text::count(names.len(), "cluster"),
                failed.join(", ")
            ),
        );
    }
    Ok(code)
}

/// The worse of two exit codes: any error (1, 130) over `diff`'s differences (2) over success.
fn worst(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        EXIT_OK => 0,
        EXIT_DIFFERENCES => 1,
        EXIT_ERROR => 2,
        _ => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// One cluster's item in the structured output: its report, or the error that stopped it.
#[derive(Serialize)]
#[serde(untagged)]
enum Item<R> {
    Report(R),
    Failed { cluster: String, error: ErrorBody },
}

/// Whether a report's structured output is printed on its own, or with the other clusters'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    Alone,
    Together,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_worse_than_differences() {
        assert_eq!(worst(EXIT_DIFFERENCES, EXIT_ERROR), EXIT_ERROR);
        assert_eq!(worst(EXIT_ERROR, EXIT_DIFFERENCES), EXIT_ERROR);
        assert_eq!(worst(EXIT_OK, EXIT_DIFFERENCES), EXIT_DIFFERENCES);
        assert_eq!(worst(EXIT_ERROR, 130), 130);
        assert_eq!(worst(EXIT_OK, EXIT_OK), EXIT_OK);
    }

    #[test]
    fn a_failed_cluster_is_named_in_the_array() {
        let items: Vec<Item<serde_json::Value>> = vec![
            Item::Report(serde_json::json!({"cluster": "a"})),
            Item::Failed {
                cluster: "b".into(),
                error: ErrorBody::of(&Error::Other("down".into())),
            },
        ];
        assert_eq!(
            serde_json::to_value(&items).unwrap(),
            serde_json::json!([
                {"cluster": "a"},
                {"cluster": "b", "error": {"kind": "other", "message": "down", "causes": [], "exit_code": 1}}
            ])
        );
    }
}
