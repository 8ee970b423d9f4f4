//! Fleet-scale benchmark: kco against the hand procedure, side by side, as ratios.
//!
//! ```text
//! cargo bench --bench fleet -- [--connectors N] [--partitions P] [--latency-ms L]
//!     [--transition-reads R] [--skip-hand] [--quick] [--serve]
//!     [--clusters K] [--cluster-connectors M] [--cloud-connectors C]
//! ```
//!
//! Both run against the in-process fake Connect worker (`kco::fake`), which
//! waits `L` ms (default 2) before answering every request, as a real worker's round trip
//! would. kco is the release binary run as a process; the hand procedure is a `bash` loop of
//! `curl` and `jq`, and, as its best case, the same sequential loop in-process on one
//! keep-alive client. It prints a Markdown table; nothing is asserted about times. See
//! docs/benchmarks.md.

use kco::fake as fake_connect;
#[path = "fleet/hand.rs"]
mod hand;
#[path = "fleet/workload.rs"]
mod workload;

use std::path::{Path, PathBuf};
use std::time::Duration;

use fake_connect::FakeConnect;
use workload::{kco, measure, Measure, Server, FLEET_PARTITIONS, WIDE_SINK};

/// The pause between two status looks of the hand procedure: kco's first pause.
const PAUSE: Duration = Duration::from_millis(200);

struct Options {
    connectors: usize,
    partitions: usize,
    server: Server,
    hand: bool,
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let value = |flag: &str| -> Option<u64> {
        let at = args.iter().position(|a| a == flag)?;
        let v = args
            .get(at + 1)
            .unwrap_or_else(|| panic!("{flag} needs a value"));
        Some(
            v.parse()
                .unwrap_or_else(|_| panic!("{flag}: not a number: {v}")),
        )
    };
    Options {
        connectors: value("--connectors").unwrap_or(if quick { 100 } else { 2000 }) as usize,
        partitions: value("--partitions").unwrap_or(if quick { 10_000 } else { 100_000 }) as usize,
        server: Server {
            latency: Duration::from_millis(value("--latency-ms").unwrap_or(2)),
            transition_reads: value("--transition-reads").unwrap_or(0) as u32,
        },
        hand: !args.iter().any(|a| a == "--skip-hand"),
    }
}

/// One line of the table.
struct Row {
    workload: String,
    kco: Measure,
    hand: Option<Measure>,
    best: Option<Measure>,
}

impl Row {
    fn kco_only(workload: String, kco: Measure) -> Row {
        Row {
            workload,
            kco,
            hand: None,
            best: None,
        }
    }
}

fn main() {
    let opts = options();
    if opts.hand && !hand::tools_present() {
        eprintln!("bash, curl and jq are needed for the hand procedure; use --skip-hand");
        std::process::exit(1);
    }
    eprintln!(
        "fleet: {} connectors x {} partitions; wide sink: {} partitions; latency {:?} per \
         request; {} lagging status read(s) after stop/resume",
        opts.connectors,
        FLEET_PARTITIONS,
        opts.partitions,
        opts.server.latency,
        opts.server.transition_reads
    );
    if std::env::args().any(|a| a == "--serve") {
        serve(&opts);
    }
    let mut rows = fleet(&opts);
    rows.extend(wide(&opts));
    print_table(&rows);
}

/// `--serve`: start both fakes, print their URLs and keep serving, to run (and profile) kco
/// by hand against the same workloads (`scripts/bench.sh` does). `--clusters K` adds K more
/// fleets of `--cluster-connectors M` each (`cluster i: URL`), for `--all-clusters`;
/// `--cloud-connectors C` a fleet of C managed connectors served as Confluent Cloud
/// (`confluent cloud: URL ENVIRONMENT CLUSTER KEY SECRET`), with the same latency.
fn serve(opts: &Options) -> ! {
    let fleet = workload::fleet(opts.server, opts.connectors);
    let wide = workload::wide(opts.server, opts.partitions);
    println!("fleet: {}\nwide sink: {}", fleet.url(), wide.url());
    let args: Vec<String> = std::env::args().collect();
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse::<usize>().expect("a number"))
    };
    let per_cluster = number("--cluster-connectors", opts.connectors);
    let more: Vec<_> = (0..number("--clusters", 0))
        .map(|_| workload::fleet(opts.server, per_cluster))
        .collect();
    for (i, f) in more.iter().enumerate() {
        println!("cluster {i}: {}", f.url());
    }
    let cloud = match number("--cloud-connectors", 0) {
        0 => None,
        n => Some(workload::cloud_fleet(opts.server, n)),
    };
    if let Some(cloud) = &cloud {
        println!(
            "confluent cloud: {} {} {} {} {}",
            cloud.url(),
            workload::CLOUD_ENVIRONMENT,
            workload::CLOUD_CLUSTER,
            workload::CLOUD_KEY,
            workload::CLOUD_SECRET
        );
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// One workload's bench: its fake, and a scratch directory where kco runs, with `hand/` and
/// `best/` for the hand procedure and its best case.
struct Bench {
    fake: FakeConnect,
    url: String,
    work: tempfile::TempDir,
    hand_dir: PathBuf,
    best_dir: PathBuf,
    hand: bool,
}

impl Bench {
    fn new(fake: FakeConnect, opts: &Options) -> Bench {
        let work = tempfile::Builder::new()
            .prefix("kco-bench-")
            .tempdir()
            .expect("temp dir");
        let (hand_dir, best_dir) = (work.path().join("hand"), work.path().join("best"));
        for dir in [&hand_dir, &best_dir] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        Bench {
            url: fake.url(),
            fake,
            work,
            hand_dir,
            best_dir,
            hand: opts.hand,
        }
    }

    fn cwd(&self) -> &Path {
        self.work.path()
    }

    /// `kco <args>` in the scratch directory, which must exit with `code`.
    fn kco(&self, args: &[&str], code: i32) -> Measure {
        measure(&self.fake, || kco(self.cwd(), &self.fake, args, code))
    }

    /// A row of kco alone.
    fn kco_row(&self, workload: String, args: &[&str], code: i32) -> Row {
        Row::kco_only(workload, self.kco(args, code))
    }

    /// `kco snapshot` against the hand procedure's and its best case's.
    fn snapshot(&self, workload: String) -> Row {
        let k = self.kco(&["snapshot", "--parallel", "8", "--dir", "snapshots"], 0);
        let h = self
            .hand
            .then(|| measure(&self.fake, || hand::snapshot(&self.url, &self.hand_dir)));
        let b = self.hand.then(|| {
            measure(&self.fake, || {
                hand::best::snapshot(&self.url, &self.best_dir)
            })
        });
        Row {
            workload,
            kco: k,
            hand: h,
            best: b,
        }
    }

    /// `kco <apply>` (every partition moved before), then the hand procedure's and its best
    /// case's, each after `move_by` moved every partition by 2000 and 3000; `restored` checks
    /// each put the offsets back.
    fn apply(
        &self,
        workload: String,
        apply: &[&str],
        move_by: impl Fn(&FakeConnect, i64),
        restored: impl Fn(&FakeConnect),
    ) -> Row {
        let k = self.kco(apply, 0);
        restored(&self.fake);
        let (mut h, mut b) = (None, None);
        if self.hand {
            move_by(&self.fake, 2000);
            h = Some(measure(&self.fake, || {
                hand::apply(&self.url, &self.hand_dir, PAUSE)
            }));
            restored(&self.fake);
            move_by(&self.fake, 3000);
            b = Some(measure(&self.fake, || {
                hand::best::apply(&self.url, &self.best_dir, PAUSE)
            }));
            restored(&self.fake);
        }
        Row {
            workload,
            kco: k,
            hand: h,
            best: b,
        }
    }
}

fn fleet(opts: &Options) -> Vec<Row> {
    let n = opts.connectors;
    eprintln!("fleet: starting the fake with {n} connectors");
    let bench = Bench::new(workload::fleet(opts.server, n), opts);
    let files = bench.cwd().join("snapshots/bench");
    let files_arg = files.to_string_lossy().into_owned();
    let label = |what: &str| format!("{what}, {n} connectors");
    let mut rows = Vec::new();

    eprintln!("fleet: snapshot");
    rows.push(bench.snapshot(label("snapshot")));

    workload::move_fleet(&bench.fake, n, 1000);
    eprintln!("fleet: diff and dry run");
    rows.push(bench.kco_row(
        label("diff, every partition moved"),
        &["diff", "--dir", "snapshots", "--fail-on", "any"],
        2,
    ));
    rows.push(bench.kco_row(
        label("apply --dry-run"),
        &["apply", &files_arg, "--dry-run"],
        0,
    ));

    eprintln!("fleet: apply");
    let restored = |fake: &FakeConnect| {
        for i in 0..n {
            workload::assert_offsets(
                fake,
                &workload::fleet_name(i),
                &workload::fleet_offsets(i, 0),
            );
        }
    };
    let apply = [
        "apply",
        &files_arg,
        "--yes",
        "--parallel",
        "8",
        "--backup-dir",
        "backup",
    ];
    rows.push(bench.apply(
        label("apply, every partition moved"),
        &apply,
        |fake, shift| workload::move_fleet(fake, n, shift),
        restored,
    ));

    eprintln!("fleet: validate and fmt --check");
    rows.push(bench.kco_row(format!("validate, {n} files"), &["validate", &files_arg], 0));
    rows.push(bench.kco_row(
        format!("fmt --check, {n} files"),
        &["fmt", "--check", &files_arg],
        0,
    ));
    rows
}

fn wide(opts: &Options) -> Vec<Row> {
    let p = opts.partitions;
    eprintln!("wide sink: starting the fake with {p} partitions");
    let bench = Bench::new(workload::wide(opts.server, p), opts);
    let cwd = bench.cwd();
    let file = cwd.join(format!("snapshots/bench/{WIDE_SINK}.yaml"));
    let file_arg = file.to_string_lossy().into_owned();
    let label = |what: &str| format!("{what}, 1 sink x {p} partitions");
    let mut rows = Vec::new();

    eprintln!("wide sink: snapshot");
    rows.push(bench.snapshot(label("snapshot")));

    let move_by =
        |fake: &FakeConnect, shift| fake.set_offsets(WIDE_SINK, workload::wide_offsets(p, shift));
    move_by(&bench.fake, 1000);
    eprintln!("wide sink: diff and dry run");
    let k = bench.kco(&["diff", &file_arg, "--fail-on", "any"], 2);
    let hand_file = bench.hand_dir.join(format!("{WIDE_SINK}.json"));
    let h = opts.hand.then(|| {
        measure(&bench.fake, || {
            hand::diff(&bench.url, WIDE_SINK, &hand_file, cwd)
        })
    });
    rows.push(Row {
        workload: label("diff, every partition moved"),
        kco: k,
        hand: h,
        best: None,
    });
    rows.push(bench.kco_row(
        label("apply --dry-run"),
        &["apply", &file_arg, "--dry-run"],
        0,
    ));

    eprintln!("wide sink: apply");
    let want = workload::wide_offsets(p, 0);
    rows.push(bench.apply(
        label("apply, every partition moved"),
        &["apply", &file_arg, "--yes", "--backup-dir", "backup"],
        move_by,
        |fake| workload::assert_offsets(fake, WIDE_SINK, &want),
    ));

    rows.push(bench.kco_row(label("validate"), &["validate", &file_arg], 0));
    rows.push(bench.kco_row(label("fmt --check"), &["fmt", "--check", &file_arg], 0));
    rows
}

fn secs(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{:.0} ms", d.as_secs_f64() * 1000.0)
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

fn cell(m: Option<Measure>, kco: Measure) -> (String, String) {
    match m {
        Some(m) => (
            format!("{} ({} req)", secs(m.time), m.requests),
            format!("{:.1}x", m.time.as_secs_f64() / kco.time.as_secs_f64()),
        ),
        None => ("-".into(), "-".into()),
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "| workload | kco | hand (curl loop) | hand / kco | best-case hand loop | best / kco |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let (hand, hand_ratio) = cell(r.hand, r.kco);
        let (best, best_ratio) = cell(r.best, r.kco);
        println!(
            "| {} | {} ({} req) | {hand} | {hand_ratio} | {best} | {best_ratio} |",
            r.workload,
            secs(r.kco.time),
            r.kco.requests
        );
    }
}
