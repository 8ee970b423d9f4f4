//! How a long run tells what it is doing, without printing: the engines tell one [`Observer`]
//! as connectors are read (snapshot, diff) or changed, and the CLI draws a progress bar from
//! it. An operation tells more, each step of its transactions and its backup, to an
//! [`OperationObserver`](crate::engine::apply::OperationObserver), which is also an
//! [`Observer`].

use super::parallel;

/// Told how far a run over connectors is, from several threads at once. Every method does
/// nothing unless implemented.
pub trait Observer: Sync {
    /// How many connectors the run has.
    fn total(&self, _connectors: usize) {}
    /// A connector's work starts.
    fn started(&self, _connector: &str) {}
    /// A connector's work ends.
    fn finished(&self, _connector: &str) {}
}

/// Hears nothing.
pub struct Unheard;

impl Observer for Unheard {}

impl<T: Observer + ?Sized> Observer for &T {
    fn total(&self, connectors: usize) {
        (**self).total(connectors);
    }
    fn started(&self, connector: &str) {
        (**self).started(connector);
    }
    fn finished(&self, connector: &str) {
        (**self).finished(connector);
    }
}

/// Tells two observers everything, the first one first.
pub struct Both<A, B>(pub A, pub B);

impl<A: Observer, B: Observer> Observer for Both<A, B> {
    fn total(&self, connectors: usize) {
        self.0.total(connectors);
        self.1.total(connectors);
    }
    fn started(&self, connector: &str) {
        self.0.started(connector);
        self.1.started(connector);
    }
    fn finished(&self, connector: &str) {
        self.0.finished(connector);
        self.1.finished(connector);
    }
}

/// [`parallel::map`] over connectors, telling `fleet` the total, then each start and end.
pub fn map<T, R, F, O>(
    items: &[T],
    parallel: usize,
    fleet: &O,
    name: impl Fn(&T) -> &str + Sync,
    f: F,
) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
    O: Observer + ?Sized,
{
    fleet.total(items.len());
    parallel::map(items, parallel, |item| {
        fleet.started(name(item));
        let r = f(item);
        fleet.finished(name(item));
        r
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it is told.
    #[derive(Default)]
    pub struct Heard(pub Mutex<Vec<String>>);

    impl Observer for Heard {
        fn total(&self, n: usize) {
            self.0.lock().unwrap().push(format!("total {n}"));
        }
        fn started(&self, c: &str) {
            self.0.lock().unwrap().push(format!("start {c}"));
        }
        fn finished(&self, c: &str) {
            self.0.lock().unwrap().push(format!("end {c}"));
        }
    }

    #[test]
    fn tells_the_total_then_each_start_before_its_end() {
        let heard = Heard::default();
        let out = map(&["a", "b", "c"], 2, &heard, |s| s, |s| s.len());
        assert_eq!(out, [1, 1, 1]);
        let log = heard.0.into_inner().unwrap();
        assert_eq!(log[0], "total 3");
        for c in ["a", "b", "c"] {
            let start = log.iter().position(|l| *l == format!("start {c}")).unwrap();
            let end = log.iter().position(|l| *l == format!("end {c}")).unwrap();
            assert!(start < end, "{log:?}");
        }
        assert_eq!(log.len(), 7);
    }
}
