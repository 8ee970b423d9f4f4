//! How a long run tells what it is doing, without printing: the engines tell one [`Observer`]
//! as connectors are read (snapshot, diff) or changed (each step of an operation's
//! transactions, its backup), and the CLI draws a progress bar and the `-v` steps from it.

use super::apply::backup::BackupReport;
use super::apply::report::{ConnectorApply, SentRequest, StepRecord};
use super::parallel;
use crate::model::TargetState;

/// Told what a run does, from several threads at once. Every method does nothing unless
/// implemented.
pub trait Observer: Sync {
    /// How many connectors the run has.
    fn total(&self, _connectors: usize) {}
    /// A connector's work starts.
    fn started(&self, _connector: &str) {}
    /// A connector's work ends.
    fn finished(&self, _connector: &str) {}
    /// A connector's transaction read the state it will put back, before its first change.
    fn recorded(&self, _connector: &str, _prior: TargetState) {}
    /// A connector's transaction is about to send an asynchronous alter request
    /// (`requested_at` unknown), or learnt when the service made it: told before the request
    /// is sent, and again after.
    fn requested(&self, _connector: &str, _request: &SentRequest) {}
    /// A step of a connector's transaction ended (the CLI prints them with `-v`).
    fn step(&self, _connector: &str, _record: &StepRecord) {}
    /// A connector's transaction ended, whatever its outcome.
    fn transaction(&self, _report: &ConnectorApply) {}
    /// The operation's backup is written, before its first change.
    fn backed_up(&self, _backup: &BackupReport) {}
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
    fn recorded(&self, connector: &str, prior: TargetState) {
        (**self).recorded(connector, prior);
    }
    fn requested(&self, connector: &str, request: &SentRequest) {
        (**self).requested(connector, request);
    }
    fn step(&self, connector: &str, record: &StepRecord) {
        (**self).step(connector, record);
    }
    fn transaction(&self, report: &ConnectorApply) {
        (**self).transaction(report);
    }
    fn backed_up(&self, backup: &BackupReport) {
        (**self).backed_up(backup);
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
    fn recorded(&self, connector: &str, prior: TargetState) {
        self.0.recorded(connector, prior);
        self.1.recorded(connector, prior);
    }
    fn requested(&self, connector: &str, request: &SentRequest) {
        self.0.requested(connector, request);
        self.1.requested(connector, request);
    }
    fn step(&self, connector: &str, record: &StepRecord) {
        self.0.step(connector, record);
        self.1.step(connector, record);
    }
    fn transaction(&self, report: &ConnectorApply) {
        self.0.transaction(report);
        self.1.transaction(report);
    }
    fn backed_up(&self, backup: &BackupReport) {
        self.0.backed_up(backup);
        self.1.backed_up(backup);
    }
}

/// [`parallel::map`] over connectors, telling `fleet` the total, then each start and end.
pub fn map<T, R, F>(
    items: &[T],
    parallel: usize,
    fleet: &dyn Observer,
    name: impl Fn(&T) -> &str + Sync,
    f: F,
) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
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

    #[test]
    fn snapshot_and_diff_report_each_connector_they_read() {
        use crate::engine::diff::{diff_live_reporting, ExitOn, LiveInput};
        use crate::engine::snapshot::{snapshot_reporting, SnapshotOptions};
        use crate::fake::{FakeConnect, State};
        let offsets =
            |o: i64| serde_json::json!([{"partition": {"f": "x"}, "offset": {"position": o}}]);
        let fake = FakeConnect::builder()
            .source(
                "a",
                "org.apache.kafka.connect.file.FileStreamSourceConnector",
                State::Running,
                offsets(1),
            )
            .source(
                "b",
                "org.apache.kafka.connect.file.FileStreamSourceConnector",
                State::Running,
                offsets(2),
            )
            .in_process();
        let dir = tempfile::tempdir().unwrap();
        let heard = Heard::default();
        let now = || "2026-01-01T00:00:00Z".to_string();
        let opts = SnapshotOptions::default();
        snapshot_reporting(&fake.client(), "c", dir.path(), &opts, &now, &heard).unwrap();
        let mut log = heard.0.into_inner().unwrap();
        log.sort();
        assert_eq!(log, ["end a", "end b", "start a", "start b", "total 2"]);

        let (files, problems) = crate::engine::load_files(&[dir.path().join("c")]);
        assert!(problems.is_empty(), "{problems:?}");
        let heard = Heard::default();
        let input = LiveInput {
            files: &files,
            cluster: "c".into(),
            whole_dir: true,
            exit_on: ExitOn::Drift,
            parallel: 1,
            cwd: dir.path(),
            freshness: Default::default(),
        };
        diff_live_reporting(&fake.client(), input, &heard).unwrap();
        let log = heard.0.into_inner().unwrap();
        assert_eq!(log, ["total 2", "start a", "end a", "start b", "end b"]);
    }
}
