//! Fleet-scale benchmark: kco against the hand procedure, side by side, as ratios.
//!
//! ```text
//! cargo bench --bench fleet -- [--connectors N] [--partitions P] [--latency-ms L]
//!     [--transition-reads R] [--skip-hand] [--quick] [--serve]
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

use std::path::Path;
use std::time::Duration;

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
/// fleets of `--cluster-connectors M` each (`cluster i: URL`), for `--all-clusters`.
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
    use std::io::Write;
    let _ = std::io::stdout().flush();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn work_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("kco-bench-")
        .tempdir()
        .expect("temp dir")
}

fn mkdir(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
}

fn fleet(opts: &Options) -> Vec<Row> {
    let n = opts.connectors;
    eprintln!("fleet: starting the fake with {n} connectors");
    let fake = workload::fleet(opts.server, n);
    let url = fake.url();
    let work = work_dir();
    let cwd = work.path();
    let (hand_dir, best_dir) = (cwd.join("hand"), cwd.join("best"));
    mkdir(&hand_dir);
    mkdir(&best_dir);
    let files = cwd.join("snapshots/bench");
    let files_arg = files.to_string_lossy().into_owned();
    let label = |what: &str| format!("{what}, {n} connectors");
    let mut rows = Vec::new();

    eprintln!("fleet: snapshot");
    let k = measure(&fake, || {
        kco(
            cwd,
            &fake,
            &["snapshot", "--parallel", "8", "--dir", "snapshots"],
            0,
        )
    });
    let h = opts
        .hand
        .then(|| measure(&fake, || hand::snapshot(&url, &hand_dir)));
    let b = opts
        .hand
        .then(|| measure(&fake, || hand::best::snapshot(&url, &best_dir)));
    rows.push(Row {
        workload: label("snapshot"),
        kco: k,
        hand: h,
        best: b,
    });

    workload::move_fleet(&fake, n, 1000);
    eprintln!("fleet: diff and dry run");
    let k = measure(&fake, || {
        kco(
            cwd,
            &fake,
            &["diff", "--dir", "snapshots", "--fail-on", "any"],
            2,
        )
    });
    rows.push(Row::kco_only(label("diff, every partition moved"), k));
    let k = measure(&fake, || {
        kco(cwd, &fake, &["apply", &files_arg, "--dry-run"], 0)
    });
    rows.push(Row::kco_only(label("apply --dry-run"), k));

    eprintln!("fleet: apply");
    let restored = |fake: &fake_connect::FakeConnect| {
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
    let k = measure(&fake, || kco(cwd, &fake, &apply, 0));
    restored(&fake);
    let (mut h, mut b) = (None, None);
    if opts.hand {
        workload::move_fleet(&fake, n, 2000);
        h = Some(measure(&fake, || hand::apply(&url, &hand_dir, PAUSE)));
        restored(&fake);
        workload::move_fleet(&fake, n, 3000);
        b = Some(measure(&fake, || hand::best::apply(&url, &best_dir, PAUSE)));
        restored(&fake);
    }
    rows.push(Row {
        workload: label("apply, every partition moved"),
        kco: k,
        hand: h,
        best: b,
    });

    eprintln!("fleet: validate and fmt --check");
    rows.push(Row::kco_only(
        format!("validate, {n} files"),
        measure(&fake, || kco(cwd, &fake, &["validate", &files_arg], 0)),
    ));
    rows.push(Row::kco_only(
        format!("fmt --check, {n} files"),
        measure(&fake, || {
            kco(cwd, &fake, &["fmt", "--check", &files_arg], 0)
        }),
    ));
    rows
}

fn wide(opts: &Options) -> Vec<Row> {
    let p = opts.partitions;
    eprintln!("wide sink: starting the fake with {p} partitions");
    let fake = workload::wide(opts.server, p);
    let url = fake.url();
    let work = work_dir();
    let cwd = work.path();
    let (hand_dir, best_dir) = (cwd.join("hand"), cwd.join("best"));
    mkdir(&hand_dir);
    mkdir(&best_dir);
    let file = cwd.join(format!("snapshots/bench/{WIDE_SINK}.yaml"));
    let file_arg = file.to_string_lossy().into_owned();
    let label = |what: &str| format!("{what}, 1 sink x {p} partitions");
    let mut rows = Vec::new();

    eprintln!("wide sink: snapshot");
    let k = measure(&fake, || {
        kco(
            cwd,
            &fake,
            &["snapshot", "--parallel", "8", "--dir", "snapshots"],
            0,
        )
    });
    let h = opts
        .hand
        .then(|| measure(&fake, || hand::snapshot(&url, &hand_dir)));
    let b = opts
        .hand
        .then(|| measure(&fake, || hand::best::snapshot(&url, &best_dir)));
    rows.push(Row {
        workload: label("snapshot"),
        kco: k,
        hand: h,
        best: b,
    });

    fake.set_offsets(WIDE_SINK, workload::wide_offsets(p, 1000));
    eprintln!("wide sink: diff and dry run");
    let k = measure(&fake, || {
        kco(cwd, &fake, &["diff", &file_arg, "--fail-on", "any"], 2)
    });
    let hand_file = hand_dir.join(format!("{WIDE_SINK}.json"));
    let h = opts
        .hand
        .then(|| measure(&fake, || hand::diff(&url, WIDE_SINK, &hand_file, cwd)));
    rows.push(Row {
        workload: label("diff, every partition moved"),
        kco: k,
        hand: h,
        best: None,
    });
    let k = measure(&fake, || {
        kco(cwd, &fake, &["apply", &file_arg, "--dry-run"], 0)
    });
    rows.push(Row::kco_only(label("apply --dry-run"), k));

    eprintln!("wide sink: apply");
    let want = workload::wide_offsets(p, 0);
    let apply = ["apply", &file_arg, "--yes", "--backup-dir", "backup"];
    let k = measure(&fake, || kco(cwd, &fake, &apply, 0));
    workload::assert_offsets(&fake, WIDE_SINK, &want);
    let (mut h, mut b) = (None, None);
    if opts.hand {
        fake.set_offsets(WIDE_SINK, workload::wide_offsets(p, 2000));
        h = Some(measure(&fake, || hand::apply(&url, &hand_dir, PAUSE)));
        workload::assert_offsets(&fake, WIDE_SINK, &want);
        fake.set_offsets(WIDE_SINK, workload::wide_offsets(p, 3000));
        b = Some(measure(&fake, || hand::best::apply(&url, &best_dir, PAUSE)));
        workload::assert_offsets(&fake, WIDE_SINK, &want);
    }
    rows.push(Row {
        workload: label("apply, every partition moved"),
        kco: k,
        hand: h,
        best: b,
    });

    rows.push(Row::kco_only(
        label("validate"),
        measure(&fake, || kco(cwd, &fake, &["validate", &file_arg], 0)),
    ));
    rows.push(Row::kco_only(
        label("fmt --check"),
        measure(&fake, || kco(cwd, &fake, &["fmt", "--check", &file_arg], 0)),
    ));
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
