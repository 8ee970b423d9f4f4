//! Each sink's lag behind its topics, read where kco.yaml gives the cluster's `kafka:` (the
//! partitions' ends): `diff --lag`, `ls --lag` and the metrics (`engine::sink_lag`).

use super::Context;
use crate::engine::sink_lag::{self, Positions, SinkLag};
use crate::error::{Error, Result};

/// The lag of each sink of `positions` on cluster `cluster` (worked out only where the
/// cluster has `kafka:`: a wide sink's positions are a map of every partition). `asked` (the
/// `--lag` flag): a cluster without `kafka:` or a Kafka that cannot be read is an error;
/// otherwise (for the metrics) the first means no lag and the second a warning.
pub fn read(
    ctx: &Context,
    cluster: &str,
    positions: impl FnOnce() -> Positions,
    asked: bool,
) -> Result<Option<Vec<SinkLag>>> {
    let env = |k: &str| std::env::var(k).ok();
    let kafka = ctx.config.dr_settings(cluster, &env)?.kafka;
    let Some(kafka) = kafka else {
        if asked {
            return Err(Error::Usage(format!(
                "--lag reads the sinks' topics through the cluster's `kafka:`, and kco.yaml sets none for cluster `{cluster}`"
            )));
        }
        return Ok(None);
    };
    let positions = positions();
    let wanted = sink_lag::partitions_of(&positions);
    match crate::kafka::end_offsets::end_offsets(&kafka, &wanted) {
        Ok(ends) => Ok(Some(sink_lag::lags(&positions, &ends))),
        Err(source) if asked => Err(Error::Kafka {
            context: format!("cluster `{cluster}`: reading the ends of the sinks' topics"),
            source,
        }),
        Err(e) => {
            ctx.printer.warn(&format!(
                "cluster `{cluster}`: the sinks' lag is left out of the metrics: {e}"
            ));
            Ok(None)
        }
    }
}

/// The lag as text: one line per sink.
pub fn text(lags: &[SinkLag]) -> String {
    if lags.is_empty() {
        return String::new();
    }
    let width = lags.iter().map(|l| l.connector.len()).max().unwrap_or(0);
    let mut out = String::from("Sinks behind their topics (records between the committed offsets and the partitions' ends):\n");
    for l in lags {
        out.push_str(&format!(
            "  {:width$}  {}\n",
            l.connector,
            crate::text::count(l.total() as usize, "record")
        ));
    }
    out
}
