//! `kco export`: snapshot files in the shapes other tools read: Connect's REST body (for curl,
//! kcctl, the Confluent CLI) or Strimzi's offsets ConfigMap with the KafkaConnector patch.

use std::path::PathBuf;

use super::Context;
use crate::engine::interchange::rest_body;
use crate::engine::store::load_files;
use crate::engine::strimzi;
use crate::error::{Error, Result, EXIT_OK};

/// Print snapshot files as Connect's REST body or as Strimzi offsets ConfigMaps
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
--format json prints one file's offsets as the body PATCH /connectors/{name}/offsets takes, on \
one line, in canonical order (`kco import --from json` reads it back to the same file). \
--format strimzi prints, per file, the ConfigMap Strimzi 0.44+ reads with \
spec.alterOffsets.fromConfigMap (key `offsets.json`, Jackson-style JSON, canonical order) and the \
KafkaConnector patch that stops the connector and points at it, as YAML documents for Argo CD, \
Flux or kubectl; the annotation that triggers the alter is in a comment. The patch is \
kafka.strimzi.io/v1, which Strimzi 0.49 and newer serve (1.0.0 serves nothing else); \
--strimzi-api v1beta2 writes the version of Strimzi 0.44 to 0.48. A KafkaMirrorMaker2 \
connector (`a->b.MirrorSourceConnector`) gets its key `a--b.MirrorSourceConnector.json` and the \
two annotations in comments. docs/strimzi.md is the runbook.\n\n\
Files are checked first (as `kco validate`); an invalid one stops the export before any output.\n\n\
Exit codes: 0 success, 1 an invalid file or bad arguments.\n\n\
Examples:\n  kco export snapshots/prod/orders.yaml > orders.json  # for curl -X PATCH\n  \
kco export --format strimzi snapshots/prod/orders.yaml > orders-cm.yaml\n  \
kco export --format strimzi snapshots/prod --out gitops/offsets.yaml\n  \
kco export --format strimzi --strimzi-api v1beta2 snapshots/prod > o.yaml")]
pub struct Args {
    /// Snapshot files or directories
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// What to print
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// strimzi: the namespace of the ConfigMap and KafkaConnector
    #[arg(long)]
    pub namespace: Option<String>,
    /// strimzi: the ConfigMap's name (one file only) [default: <connector>-offsets]
    #[arg(long)]
    pub configmap_name: Option<String>,
    /// strimzi: the KafkaConnector's API version (v1beta2 for Strimzi 0.44 to 0.48)
    #[arg(long, value_enum, default_value_t = StrimziApi::V1)]
    pub strimzi_api: StrimziApi,
    /// Write to this file (atomically) instead of standard output (`-`)
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Formats `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Connect's REST body {"offsets": [...]}
    Json,
    /// Strimzi ConfigMap and KafkaConnector patch
    Strimzi,
}

/// The `kafka.strimzi.io` API versions `export --format strimzi` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StrimziApi {
    /// kafka.strimzi.io/v1: Strimzi 0.49 and newer
    V1,
    /// kafka.strimzi.io/v1beta2: Strimzi 0.44 to 0.48 (served up to 0.51)
    V1beta2,
}

impl From<StrimziApi> for strimzi::Api {
    fn from(a: StrimziApi) -> Self {
        match a {
            StrimziApi::V1 => strimzi::Api::V1,
            StrimziApi::V1beta2 => strimzi::Api::V1beta2,
        }
    }
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let paths: Vec<PathBuf> = args.paths.iter().map(|p| ctx.cwd.join(p)).collect();
    let (files, problems) = load_files(&paths);
    if !problems.is_empty() {
        return Err(Error::Files(problems));
    }
    let one = |what: &str| {
        Error::Usage(format!(
            "{what} takes exactly one snapshot file; {} were given",
            files.len()
        ))
    };
    let text = match args.format {
        Format::Json => {
            if files.len() != 1 {
                return Err(one("--format json"));
            }
            rest_body(&files[0].file.offsets)
        }
        Format::Strimzi => {
            if args.configmap_name.is_some() && files.len() != 1 {
                return Err(one("--configmap-name"));
            }
            let opts = strimzi::ExportOptions {
                namespace: args.namespace.clone(),
                configmap_name: args.configmap_name.clone(),
                api: args.strimzi_api.into(),
            };
            let docs: Vec<String> = files
                .iter()
                .map(|f| strimzi::export(&f.file, &opts))
                .collect();
            docs.concat()
        }
    };
    match &args.out {
        Some(o) if o.as_os_str() != "-" => {
            let path = ctx.cwd.join(o);
            crate::fsutil::write_atomic(&path, text.as_bytes())
                .map_err(|source| Error::Write { path, source })?;
            ctx.printer.status(&format!(
                "{} exported to {}",
                super::words::count(files.len(), "connector"),
                o.display()
            ));
        }
        _ => ctx.printer.out(&text),
    }
    Ok(EXIT_OK)
}
