//! `kco import`: a sealed kco file from offsets another tool wrote: Connect's REST body (curl,
//! kcctl, the Confluent CLI) or a Strimzi offsets ConfigMap.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::output::Style;
use super::Context;
use crate::engine::import::{write, Destination, ImportOutcome};
use crate::engine::interchange::{import_body, ImportMeta};
use crate::engine::strimzi;
use crate::error::{Error, Result, EXIT_OK};

/// Make kco snapshot files from Connect's REST body or a Strimzi offsets ConfigMap
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
--from json reads the body of GET /connectors/{name}/offsets ({\"offsets\": [{\"partition\": \
{...}, \"offset\": {...}}]}), as curl, `kcctl get offsets` and the Confluent CLI print it; it \
needs --name and a cluster (--cluster, or the config's default). --from strimzi reads a ConfigMap \
as Strimzi's listOffsets writes it: `offsets.json` of a KafkaConnector (the connector from --name, \
else the owner reference), or one `<source>--<target>.Mirror*Connector.json` key per \
KafkaMirrorMaker2 connector (all, or the one --name gives); the cluster from --cluster, else the \
`strimzi.io/cluster` label.\n\n\
The type (source or sink) is inferred from the partitions' shape unless --type is given. The \
result is checked like `kco validate` (every problem names the input's line; nothing is written \
then) and written atomically to <dir>/<cluster>/<connector>.yaml, or --out. An existing file of \
the same connector keeps its metadata and config; only its offsets change.\n\n\
Exit codes: 0 success, 1 bad input or a file that could not be written.\n\n\
Examples:\n  curl $URL/connectors/orders/offsets | kco import --from json - --name orders\n  \
kcctl get offsets orders | kco import --from json - --name orders --out o.yaml\n  \
kubectl get configmap orders-offsets -o yaml | kco import --from strimzi -\n  \
kco import --from strimzi mm2-offsets.yaml --cluster dr --type source")]
pub struct Args {
    /// The input's format
    #[arg(long, value_enum)]
    pub from: From,
    /// The input file; `-` reads standard input
    pub input: PathBuf,
    /// The connector's name (json: required; strimzi: which connector)
    #[arg(long)]
    pub name: Option<String>,
    /// The connector type [default: inferred from the partitions]
    #[arg(long = "type", value_enum)]
    pub kind: Option<super::TypeArg>,
    /// Write to this file instead (`-`: standard output)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Snapshots directory [default: from kco.yaml, else snapshots/]
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum From {
    /// Connect's REST body {"offsets": [...]}
    Json,
    /// A Strimzi offsets ConfigMap (KafkaConnector or KafkaMirrorMaker2)
    Strimzi,
}

/// Reads a file, or standard input for `-`; returns the name to show in messages too.
pub(super) fn read_input(path: &Path, ctx: &Context) -> Result<(PathBuf, String)> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|source| Error::Read {
                path: "<stdin>".into(),
                source,
            })?;
        return Ok(("<stdin>".into(), text));
    }
    let full = ctx.cwd.join(path);
    let text = std::fs::read_to_string(&full).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((path.to_path_buf(), text))
}

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    let (shown, text) = read_input(&args.input, ctx)?;
    let connector_type = args.kind.map(Into::into);
    let files = match args.from {
        From::Json => {
            let name = args.name.clone().ok_or_else(|| {
                Error::Usage(
                    "--from json needs --name: the body does not name its connector".into(),
                )
            })?;
            let cluster = match (&ctx.global.cluster, ctx.config.cluster_names().is_empty()) {
                (Some(c), _) => c.clone(),
                (None, false) => ctx.target()?.name,
                (None, true) => {
                    return Err(Error::Usage(
                        "--from json needs --cluster (no cluster in a kco.yaml to default to)"
                            .into(),
                    ))
                }
            };
            let meta = ImportMeta {
                name,
                cluster,
                connector_type,
            };
            vec![import_body(&shown, &text, 0, &meta).map_err(Error::Files)?]
        }
        From::Strimzi => {
            let opts = strimzi::ImportOptions {
                name: args.name.clone(),
                cluster: ctx.global.cluster.clone(),
                connector_type,
            };
            strimzi::import(&shown, &text, &opts).map_err(Error::Files)?
        }
    };
    let out = args.out.as_ref().map(|o| ctx.cwd.join(o));
    let dir = match &args.dir {
        Some(d) => ctx.cwd.join(d),
        None => ctx.snapshots_dir(),
    };
    let dest = match (&args.out, &out) {
        (Some(o), _) if o == Path::new("-") => Destination::Stdout,
        (_, Some(o)) => Destination::File(o),
        _ => Destination::Snapshots(&dir),
    };
    let report = write(files, dest)?;
    let p = &ctx.printer;
    let printed = report.iter().any(|f| f.outcome == ImportOutcome::Printed);
    if printed {
        // The file itself is the output.
        p.out(&report[0].text);
    } else if p.is_structured() {
        p.structured(&report);
    } else {
        for f in &report {
            let (word, style) = match f.outcome {
                ImportOutcome::Created => ("created:", Style::Good),
                ImportOutcome::Updated => ("updated:", Style::Good),
                _ => ("unchanged:", Style::Dim),
            };
            let path = f
                .path
                .as_deref()
                .map(|x| ctx.display_path(x))
                .unwrap_or_default();
            p.line(&format!(
                "{} {path} ({} {}, {})",
                p.paint(style, word),
                f.connector_type,
                f.name,
                super::words::count(f.partitions, "partition")
            ));
        }
    }
    Ok(EXIT_OK)
}
