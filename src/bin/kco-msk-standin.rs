//! The MSK Connect stand-in (`kco::fake::msk_connect`) as a process of its own, for the test
//! bed (`scripts/msk-connect.sh`): Amazon MSK Connect's control plane on a port, checking
//! every request's SigV4 signature against the credentials file it is given and running the
//! connectors on a Kafka Connect worker. Built only with the `fake` feature; never shipped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kco::fake::msk_connect::{MskStandIn, MskStandInConfig, TestKey};

#[derive(Parser)]
#[command(
    name = "kco-msk-standin",
    about = "Amazon MSK Connect's control plane, stood in for by a Kafka Connect worker"
)]
struct Args {
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:8095")]
    bind: String,
    /// The Kafka Connect worker that runs the connectors (never shown to clients).
    #[arg(long)]
    worker_url: String,
    /// The worker's `offset.storage.topic`.
    #[arg(long)]
    worker_offsets_topic: Option<String>,
    #[arg(long, default_value = "us-east-1")]
    region: String,
    #[arg(long, default_value = "123456789012")]
    account: String,
    /// An AWS shared credentials file: every profile's `aws_access_key_id` and
    /// `aws_secret_access_key` (and `aws_session_token`) may sign requests. The secrets are
    /// read from the file, never from the command line.
    #[arg(long)]
    credentials: PathBuf,
    /// A worker configuration to create at start, `NAME=PROPERTIES_FILE`; its ARN is written
    /// to `--arn-dir`/NAME.arn.
    #[arg(long = "worker-configuration")]
    worker_configurations: Vec<String>,
    /// Where the ARNs of the worker configurations are written.
    #[arg(long)]
    arn_dir: Option<PathBuf>,
}

/// The profiles of an AWS shared credentials file.
fn read_keys(text: &str) -> BTreeMap<String, TestKey> {
    let mut profiles: Vec<BTreeMap<String, String>> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            profiles.push(BTreeMap::new());
        } else if let (Some((k, v)), Some(p)) = (line.split_once('='), profiles.last_mut()) {
            p.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    profiles
        .into_iter()
        .filter_map(|mut p| {
            let id = p.remove("aws_access_key_id")?;
            let key = TestKey {
                secret: p.remove("aws_secret_access_key")?,
                session_token: p.remove("aws_session_token"),
            };
            Some((id, key))
        })
        .collect()
}

fn run(args: Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.credentials)
        .map_err(|e| format!("cannot read {}: {e}", args.credentials.display()))?;
    let keys = read_keys(&text);
    if keys.is_empty() {
        return Err(format!(
            "{}: no profile with aws_access_key_id and aws_secret_access_key",
            args.credentials.display()
        ));
    }
    let mut config = MskStandInConfig::new(&args.worker_url);
    config.region = args.region;
    config.account = args.account;
    config.keys = keys;
    config.worker_offsets_topic = args.worker_offsets_topic;
    config.bind = args.bind;
    let sink = Box::new(|note: &str| eprintln!("kco-msk-standin: note: {note}"));
    let standin = MskStandIn::start_with_sink(config, Some(sink))
        .map_err(|e| format!("cannot start: {e}"))?;
    for spec in &args.worker_configurations {
        let (name, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("--worker-configuration {spec}: not NAME=PROPERTIES_FILE"))?;
        let properties =
            std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        let arn = standin.add_worker_configuration(name, &properties);
        eprintln!("kco-msk-standin: worker configuration {name}: {arn}");
        if let Some(dir) = &args.arn_dir {
            let path = dir.join(format!("{name}.arn"));
            std::fs::write(&path, format!("{arn}\n"))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    eprintln!(
        "kco-msk-standin: listening on {} for region {}, connectors run on {}",
        standin.url(),
        standin.region(),
        args.worker_url
    );
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kco-msk-standin: error: {e}");
            ExitCode::FAILURE
        }
    }
}
