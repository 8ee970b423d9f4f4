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

/// `first` on a thread of its own while `f` maps `items` on the other `parallel - 1`: the two
/// overlap, and at most `parallel` run at once (a listing beside the offsets reads of the
/// connectors a command already knows, so that the listing costs no round trip of its own).
/// `f` is told whether `first` has failed, so that it can stop asking (`Err` of `first`).
pub fn beside<A, E, T, R>(
    first: impl FnOnce() -> std::result::Result<A, E> + Send,
    items: &[T],
    parallel: usize,
    f: impl Fn(&T, &dyn Fn() -> bool) -> R + Sync,
) -> (std::result::Result<A, E>, Vec<R>)
where
    A: Send,
    E: Send,
    T: Sync,
    R: Send,
{
    let failed = std::sync::atomic::AtomicBool::new(false);
    let has_failed = || failed.load(Ordering::Relaxed);
    if parallel <= 1 {
        // One at a time, as asked: no overlap.
        let first = first();
        failed.store(first.is_err(), Ordering::Relaxed);
        return (first, items.iter().map(|i| f(i, &has_failed)).collect());
    }
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            let r = first();
            failed.store(r.is_err(), Ordering::Relaxed);
            r
        });
        let mapped = map(items, parallel.saturating_sub(1).max(1), |item| {
            f(item, &has_failed)
        });
        (first.join().expect("no panic beside the map"), mapped)
    })
}

/// `first` on a thread of its own while `read` maps `items` on the other `parallel - 1`;
/// each item is then finished by `then`, with what `first` gave, on the thread that read
/// it, as soon as `first` is done. The reads overlap `first`, and each `then` overlaps the
/// other items' reads (a snapshot reads the connectors its files name while the cluster is
/// listed, and writes each file as soon as the listing says what goes into it). No item is
/// finished when `first` fails (`None`); `read` is told whether it has, so that it can stop
/// asking.
pub fn ahead<A, E, T, M, R>(
    first: impl FnOnce() -> std::result::Result<A, E> + Send,
    items: &[T],
    parallel: usize,
    read: impl Fn(&T, &dyn Fn() -> bool) -> M + Sync,
    then: impl Fn(&T, M, &A) -> R + Sync,
) -> (std::result::Result<A, E>, Vec<Option<R>>)
where
    A: Send + Sync,
    E: Send + Sync,
    T: Sync,
    R: Send,
{
    let done: std::sync::OnceLock<std::result::Result<A, E>> = std::sync::OnceLock::new();
    let failed = || done.get().is_some_and(|r| r.is_err());
    if parallel <= 1 {
        // One at a time, as asked: `first`, then each item.
        let first = done.get_or_init(first);
        let finished = items
            .iter()
            .map(|item| {
                let m = read(item, &failed);
                first.as_ref().ok().map(|a| then(item, m, a))
            })
            .collect();
        return (done.into_inner().expect("set above"), finished);
    }
    let gate = Gate::default();
    let finished = std::thread::scope(|s| {
        s.spawn(|| {
            // Opened even if `first` panics: no item waits for ever.
            let _open = gate.opener();
            let _ = done.set(first());
        });
        map(items, parallel - 1, |item| {
            let m = read(item, &failed);
            gate.wait();
            done.get()
                .and_then(|r| r.as_ref().ok())
                .map(|a| then(item, m, a))
        })
    });
    let first = done.into_inner().expect("`first` ran to its end");
    (first, finished)
}

/// Closed until opened once; [`Gate::wait`] blocks until then.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().expect("the gate's holder does not panic");
        while !*open {
            open = self
                .opened
                .wait(open)
                .expect("the gate's holder does not panic");
        }
    }

    /// Opens the gate when dropped.
    fn opener(&self) -> impl Drop + '_ {
        struct Opener<'g>(&'g Gate);
        impl Drop for Opener<'_> {
            fn drop(&mut self) {
                *self.0.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
                self.0.opened.notify_all();
            }
        }
        Opener(self)
    }
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

    #[test]
    fn beside_runs_first_while_the_items_are_mapped_within_the_bound() {
        let live = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let (started, heard) = std::sync::mpsc::channel::<()>();
        let (started, heard) = (Mutex::new(started), Mutex::new(heard));
        let items: Vec<u32> = (0..20).collect();
        let enter = || {
            let now = live.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
        };
        let (first, out) = beside(
            || {
                enter();
                // Done only once an item has started: the two overlap.
                let overlapped = heard.lock().unwrap().recv_timeout(Duration::from_secs(10));
                let overlapped = overlapped.is_ok();
                live.fetch_sub(1, Ordering::SeqCst);
                overlapped
                    .then_some("listed")
                    .ok_or("no item started meanwhile")
            },
            &items,
            4,
            |x, _| {
                enter();
                let _ = started.lock().unwrap().send(());
                std::thread::sleep(Duration::from_millis(1));
                live.fetch_sub(1, Ordering::SeqCst);
                x + 1
            },
        );
        assert_eq!(first, Ok("listed"));
        assert_eq!(out, items.iter().map(|x| x + 1).collect::<Vec<_>>());
        assert!(peak.load(Ordering::SeqCst) <= 4, "{peak:?}");
        // One at a time when asked: first, then the items.
        let order = Mutex::new(Vec::new());
        let (first, _) = beside(
            || {
                order.lock().unwrap().push(0);
                Err::<(), _>("refused")
            },
            &[1, 2],
            1,
            |x, failed| order.lock().unwrap().push(*x * 10 + u32::from(failed())),
        );
        assert_eq!(first, Err("refused"));
        assert_eq!(
            *order.lock().unwrap(),
            [0, 11, 21],
            "each item told first failed"
        );
    }

    #[test]
    fn ahead_reads_while_first_runs_and_finishes_each_item_only_once_it_is_done() {
        let (started, heard) = std::sync::mpsc::channel::<()>();
        let (started, heard) = (Mutex::new(started), Mutex::new(heard));
        let first_done = std::sync::atomic::AtomicBool::new(false);
        let items: Vec<u32> = (0..12).collect();
        let (first, out) = ahead(
            || {
                // Done only once a read has started: the two overlap.
                let overlapped = heard.lock().unwrap().recv_timeout(Duration::from_secs(10));
                first_done.store(true, Ordering::SeqCst);
                overlapped
                    .map(|_| 100)
                    .map_err(|_| "no read started meanwhile")
            },
            &items,
            4,
            |x, _| {
                let _ = started.lock().unwrap().send(());
                x * 2
            },
            |x, read, listed| {
                // Finished only with what `first` gave, after it ended.
                assert!(first_done.load(Ordering::SeqCst));
                listed + read + x
            },
        );
        assert_eq!(first, Ok(100));
        let want: Vec<_> = items.iter().map(|x| Some(100 + 3 * x)).collect();
        assert_eq!(out, want);
        // `first` failed: nothing is finished, and the reads are told.
        for parallel in [1, 4] {
            let told = AtomicUsize::new(0);
            let (first, out) = ahead(
                || Err::<u32, _>("refused"),
                &items,
                parallel,
                |_, failed| {
                    // Each read after the failure is told of it (the first ones may not be).
                    std::thread::sleep(Duration::from_millis(1));
                    if failed() {
                        told.fetch_add(1, Ordering::SeqCst);
                    }
                },
                |_, (), _| unreachable!("nothing is finished when `first` fails"),
            );
            assert_eq!(first, Err("refused"));
            assert!(out.iter().all(Option::is_none));
            assert!(told.load(Ordering::SeqCst) > 0, "parallel {parallel}");
        }
    }
}
