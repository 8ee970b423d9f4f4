//! `--all-clusters`: one command over every cluster of `kco.yaml` at once.
//!
//! The clusters are read concurrently (at most [`CLUSTERS_AT_ONCE`] at a time, each with its
//! own bound on reads in flight, so no worker sees more than one cluster's `--parallel`); their
//! reports are then printed one after another in the order of `kco.yaml`'s names (with
//! `--output json`/`yaml`: one array of them), and the exit code is the worst of them. A cluster that cannot be reached is reported as an error and the
//! others still run.

use super::report_error;
use super::Context;
use crate::engine::parallel;
use crate::error::{Error, Result, EXIT_OK};

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
    let mut reports = Vec::new();
    for (name, result) in names.iter().zip(results) {
        let c = match result {
            Ok(report) => {
                let c = finish(&report, Structured::Together);
                reports.push(report);
                c
            }
            Err(e) => {
                report_error::failure(&ctx.printer, &format!("cluster `{name}`: {e}"));
                e.exit_code()
            }
        };
        code = code.max(c);
    }
    if ctx.printer.is_structured() {
        ctx.printer.structured(&reports);
    }
    Ok(code)
}

/// Whether a report's structured output is printed on its own, or with the other clusters'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    Alone,
    Together,
}
