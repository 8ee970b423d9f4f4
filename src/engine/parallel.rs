//! Bounded concurrency for fleet-sized work: run a function over many items with at most `n`
//! at a time, results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many reads (`GET .../offsets`) `snapshot` and `diff` keep in flight by default.
///
/// Measured on the local test bed (docs/benchmarks.md): a worker answers 100 offsets reads in
/// about 460 ms one at a time and about 105-150 ms with 8 to 64 in flight; past 8 its
/// throughput is flat (its own CPU is the limit there) but no read gets slower or fails. With
/// network latency between kco and the worker (20 ms per request in the benchmark), 32 in
/// flight keeps within 1.25x of the round-trip bound for 1,000 connectors. 32 concurrent GETs
/// are well inside what Connect's REST server (Jetty, 200 threads) serves; `--parallel`
/// overrides it.
pub const DEFAULT_READS: usize = 32;

/// How many connectors an apply, reset or undo changes at once, unless `--parallel` says:
/// fewer than reads, as each transaction stops, patches and restarts a connector.
pub const DEFAULT_CHANGES: usize = 16;

/// Applies `f` to every item with at most `parallel` threads; results keep the input order.
pub fn map<T, R, F>(items: &[T], parallel: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let n = parallel.clamp(1, items.len().max(1));
    if n == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                results.lock().expect("no worker panicked")[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every item was processed"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[test]
    fn keeps_order_and_bounds_concurrency() {
        let live = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let items: Vec<u32> = (0..40).collect();
        let out = map(&items, 4, |x| {
            let now = live.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            live.fetch_sub(1, Ordering::SeqCst);
            x * 2
        });
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let p = peak.load(Ordering::SeqCst);
        assert!((2..=4).contains(&p), "peak {p}");
    }
}
