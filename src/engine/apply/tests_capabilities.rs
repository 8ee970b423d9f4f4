//! The one executor runs any list of steps a service gives, each step doing its own part
//! whatever the others are. A service of the trait's own, in memory ([`Memory`]), behaves as
//! its [`Kind`] says and refuses what such a service refuses (a PATCH while the connector
//! runs, unless it pauses the connector itself; a PATCH where alters are requests, or a
//! request where they are not); its steps are the list a service of that kind would give,
//! including lists neither Kafka Connect nor Confluent Cloud gives. Each test sees the
//! transaction take the path of its list and only that path.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::tests::{src, want};
use super::*;
use crate::client::{
    AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities, ChangeKind, ClientError,
    ConfigDef, ConnectorListing, ConnectorStatus, Method, OffsetsRead, Op, Phase, Request,
    ServerInfo, Service, TaskStatus,
};
use crate::model::{
    canonical_fields, ConnectorState, ConnectorType, OffsetEntry, PatchEntry, TargetState,
};

/// How the service in memory behaves, and so which steps it gives.
#[derive(Debug, Clone, Copy, Default)]
struct Kind {
    /// It pauses the connector around an alter and puts its state back itself.
    pauses_itself: bool,
    /// Its alters are requests applied later, whose status is read.
    requests: bool,
    /// kco only reads it.
    read_only: Option<&'static str>,
    /// It gives no steps for the change.
    no_steps: bool,
}

/// Kafka Connect's behaviour.
fn connect() -> Kind {
    Kind::default()
}

impl Kind {
    /// The steps of a change of offsets on a service of this kind.
    fn steps(self) -> &'static [Op] {
        use Op::*;
        if self.no_steps {
            return &[];
        }
        match (self.pauses_itself, self.requests) {
            (false, false) => crate::client::steps::kafka_connect(ChangeKind::Patch),
            (true, false) => &[RecordState, Alter, Verify, AwaitRestore],
            (false, true) => &[RecordState, Stop, RequestAlter, VerifyObserved, Restore],
            (true, true) => crate::client::steps::requested_alters(ChangeKind::Patch),
        }
    }
}

/// A pending request: what it asks, how many more status reads it stays pending, and the
/// state the service puts back once it is applied (when the service paused the connector).
struct Pending {
    kind: AlterKind,
    entries: Vec<PatchEntry>,
    reads_left: u32,
    put_back: Option<ConnectorState>,
}

struct Inner {
    state: ConnectorState,
    offsets: Vec<OffsetEntry>,
    pending: Option<Pending>,
    /// How many status reads a new request stays pending.
    pending_reads: u32,
    last: Option<AlterStatus>,
    /// The calls that change something, in order: `stop`, `PATCH`, `request PATCH`, ...
    calls: Vec<String>,
}

/// One source connector `c` on a service of `kind`.
#[derive(Clone)]
struct Memory {
    kind: Kind,
    inner: Arc<Mutex<Inner>>,
}

impl Memory {
    fn new(kind: Kind, state: ConnectorState, offsets: Vec<OffsetEntry>) -> Memory {
        let inner = Inner {
            state,
            offsets,
            pending: None,
            pending_reads: 1,
            last: None,
            calls: Vec::new(),
        };
        Memory {
            kind,
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    fn calls(&self) -> Vec<String> {
        self.inner.lock().unwrap().calls.clone()
    }

    fn state(&self) -> ConnectorState {
        self.inner.lock().unwrap().state
    }

    fn refuse<T>(method: Method, status: u16, why: &str) -> crate::client::Result<T> {
        let req = Request::new(method, "/connectors/c/offsets");
        Err(ClientError::http(&req, "memory://c", status, why))
    }

    /// What a change may do now: offsets are altered while the connector is stopped, unless
    /// the service pauses it itself.
    fn may_alter(&self, inner: &Inner, method: Method) -> crate::client::Result<()> {
        if !self.kind.pauses_itself && inner.state != ConnectorState::Stopped {
            return Memory::refuse(method, 400, "the connector must be stopped");
        }
        Ok(())
    }
}

fn apply(offsets: &mut Vec<OffsetEntry>, kind: AlterKind, entries: &[PatchEntry]) {
    if kind == AlterKind::Delete && entries.is_empty() {
        offsets.clear();
        return;
    }
    for e in entries {
        let key = canonical_fields(&e.partition);
        offsets.retain(|o| canonical_fields(&o.partition) != key);
        if let (AlterKind::Patch, Some(offset)) = (kind, &e.offset) {
            offsets.push(OffsetEntry {
                partition: e.partition.clone(),
                offset: offset.clone(),
            });
        }
    }
}

impl Service for Memory {
    fn backend(&self) -> &Backend {
        &Backend::Connect
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            read_only: self.kind.read_only,
            ..Backend::Connect.capabilities()
        }
    }
    fn steps(&self, change: ChangeKind) -> &'static [Op] {
        match change {
            ChangeKind::Patch => self.kind.steps(),
            _ => &[],
        }
    }
    fn endpoint(&self) -> String {
        "memory://c".into()
    }
    fn counting(&self) -> (Box<dyn Service>, crate::client::layers::Counter) {
        (Box::new(self.clone()), Default::default())
    }
    fn server_info(&self) -> crate::client::Result<ServerInfo> {
        Ok(ServerInfo {
            version: "4.1.0".into(),
            commit: None,
            kafka_cluster_id: None,
        })
    }
    fn list_connectors(
        &self,
    ) -> crate::client::Result<std::collections::BTreeMap<String, ConnectorListing>> {
        let listing = ConnectorListing {
            name: "c".into(),
            connector_type: Some(ConnectorType::Source),
            class: Some("K".into()),
            config: [("connector.class".to_string(), "K".to_string())].into(),
            status: Some(self.status("c")?),
        };
        Ok([("c".to_string(), listing)].into())
    }
    fn connector_names(&self) -> crate::client::Result<Vec<String>> {
        Ok(vec!["c".into()])
    }
    fn status(&self, name: &str) -> crate::client::Result<ConnectorStatus> {
        let state = self.inner.lock().unwrap().state;
        let tasks = match state {
            ConnectorState::Stopped => vec![],
            s => vec![TaskStatus {
                id: 0,
                state: s.to_string(),
                worker_id: None,
                trace: None,
            }],
        };
        Ok(ConnectorStatus {
            name: name.into(),
            state: Some(state),
            raw_state: state.to_string(),
            tasks,
            connector_type: Some(ConnectorType::Source),
            trace: None,
            worker_id: None,
        })
    }
    fn offsets(&self, _: &str) -> crate::client::Result<Vec<OffsetEntry>> {
        Ok(self.inner.lock().unwrap().offsets.clone())
    }
    fn offsets_read(&self, name: &str) -> crate::client::Result<OffsetsRead> {
        Ok(OffsetsRead {
            entries: self.offsets(name)?,
            observed_at: None,
        })
    }
    fn request_alter(
        &self,
        _: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> crate::client::Result<AlterRequest> {
        if !self.kind.requests {
            return Memory::refuse(Method::Post, 404, "no offsets requests here");
        }
        let mut inner = self.inner.lock().unwrap();
        self.may_alter(&inner, Method::Post)?;
        inner.calls.push(format!("request {kind}"));
        let put_back = self.kind.pauses_itself.then_some(inner.state);
        if self.kind.pauses_itself {
            inner.state = ConnectorState::Paused;
        }
        inner.pending = Some(Pending {
            kind,
            entries: entries.to_vec(),
            reads_left: inner.pending_reads,
            put_back,
        });
        Ok(AlterRequest {
            id: None,
            name: Some("c".into()),
            kind: Some(kind.to_string()),
            offsets: Some(entries.to_vec()),
            requested_at: Some(crate::clock::now()),
        })
    }
    fn alter_status(&self, _: &str) -> crate::client::Result<AlterStatus> {
        let mut inner = self.inner.lock().unwrap();
        let Some(mut p) = inner.pending.take() else {
            return inner
                .last
                .clone()
                .ok_or_else(|| Memory::refuse::<()>(Method::Get, 404, "no request").unwrap_err());
        };
        let request = AlterRequest {
            id: None,
            name: Some("c".into()),
            kind: Some(p.kind.to_string()),
            offsets: Some(p.entries.clone()),
            requested_at: None,
        };
        let status = |phase, applied_at| AlterStatus {
            request: request.clone(),
            phase,
            message: String::new(),
            previous_offsets: None,
            applied_at,
        };
        if p.reads_left > 0 {
            p.reads_left -= 1;
            inner.pending = Some(p);
            return Ok(status(Phase::Pending, None));
        }
        apply(&mut inner.offsets, p.kind, &p.entries);
        if let Some(s) = p.put_back {
            inner.state = s;
        }
        let done = status(Phase::Applied, Some(crate::clock::now()));
        inner.last = Some(done.clone());
        Ok(done)
    }
    fn patch_offsets(&self, _: &str, entries: &[PatchEntry]) -> crate::client::Result<AlterAck> {
        if self.kind.requests {
            return Memory::refuse(Method::Patch, 405, "offsets are altered by request here");
        }
        let mut inner = self.inner.lock().unwrap();
        self.may_alter(&inner, Method::Patch)?;
        inner.calls.push("PATCH".into());
        apply(&mut inner.offsets, AlterKind::Patch, entries);
        Ok(AlterAck {
            message: String::new(),
        })
    }
    fn reset_offsets(&self, _: &str) -> crate::client::Result<AlterAck> {
        if self.kind.requests {
            return Memory::refuse(Method::Delete, 405, "offsets are altered by request here");
        }
        let mut inner = self.inner.lock().unwrap();
        self.may_alter(&inner, Method::Delete)?;
        inner.calls.push("DELETE offsets".into());
        inner.offsets.clear();
        Ok(AlterAck {
            message: String::new(),
        })
    }
    fn stop(&self, _: &str) -> crate::client::Result<()> {
        let mut inner = self.inner.lock().unwrap();
        inner.calls.push("stop".into());
        inner.state = ConnectorState::Stopped;
        Ok(())
    }
    fn pause(&self, _: &str) -> crate::client::Result<()> {
        let mut inner = self.inner.lock().unwrap();
        inner.calls.push("pause".into());
        inner.state = ConnectorState::Paused;
        Ok(())
    }
    fn resume(&self, _: &str) -> crate::client::Result<()> {
        let mut inner = self.inner.lock().unwrap();
        inner.calls.push("resume".into());
        inner.state = ConnectorState::Running;
        Ok(())
    }
    fn create(
        &self,
        _: &str,
        _: &std::collections::BTreeMap<String, String>,
        _: Option<TargetState>,
    ) -> crate::client::Result<()> {
        Memory::refuse(Method::Post, 405, "not in this test")
    }
    fn create_at(
        &self,
        _: &str,
        _: &std::collections::BTreeMap<String, String>,
        _: &[PatchEntry],
    ) -> crate::client::Result<()> {
        Memory::refuse(Method::Post, 405, "not in this test")
    }
    fn delete(&self, _: &str) -> crate::client::Result<()> {
        Memory::refuse(Method::Delete, 405, "not in this test")
    }
    fn plugin_config(&self, _: &str) -> crate::client::Result<Vec<ConfigDef>> {
        Ok(vec![])
    }
}

fn options() -> PlanOptions {
    PlanOptions {
        prune: false,
        create: false,
        parallel: 1,
        create_state: None,
        max_observed_age: None,
        allow_running_primary: false,
    }
}

/// Applies position 3 of `f` to `c` (at 10, in `state`) on a service of `kind`: the
/// transaction's report and the service as it is left.
fn moved(kind: Kind, state: ConnectorState) -> (ConnectorApply, Memory) {
    let svc = Memory::new(kind, state, vec![src("f", 10)]);
    let plan = plan::build(&svc, "a", &[want("c", vec![src("f", 3)])], &options()).unwrap();
    let exec = ExecOptions::new(false, 1, Duration::from_secs(30));
    let report = execute(&svc, &plan, &exec, &ManualClock::default(), &Unheard).unwrap();
    let c = report.connectors.into_iter().next().unwrap();
    assert_eq!(c.outcome, ApplyOutcome::Applied, "{kind:?}: {c:?}");
    assert_eq!(svc.offsets("c").unwrap(), vec![src("f", 3)], "{kind:?}");
    (c, svc)
}

#[test]
fn kafka_connect_stops_patches_and_resumes() {
    let (_, svc) = moved(connect(), ConnectorState::Running);
    assert_eq!(svc.calls(), ["stop", "PATCH", "resume"]);
    assert_eq!(svc.state(), ConnectorState::Running);
}

#[test]
fn a_service_that_pauses_the_connector_itself_is_sent_no_stop_and_no_resume() {
    let kind = Kind {
        pauses_itself: true,
        ..connect()
    };
    for state in [ConnectorState::Running, ConnectorState::Paused] {
        let (c, svc) = moved(kind, state);
        // The alter is Connect's own PATCH, answered once done: no request to wait for.
        assert_eq!(svc.calls(), ["PATCH"], "{state}");
        assert_eq!(svc.state(), state);
        assert!(c.state_restored, "{c:?}");
        assert!(
            !c.steps.iter().any(|s| s.step == Step::WaitApplied),
            "{c:?}"
        );
    }
}

#[test]
fn a_service_whose_alters_are_requests_is_stopped_sent_a_request_and_resumed_by_kco() {
    let kind = Kind {
        requests: true,
        ..connect()
    };
    let (c, svc) = moved(kind, ConnectorState::Running);
    // kco stops the connector itself (the service does not), waits for the request to be
    // applied, then puts RUNNING back.
    assert_eq!(svc.calls(), ["stop", "request PATCH", "resume"]);
    assert_eq!(svc.state(), ConnectorState::Running);
    let steps: Vec<Step> = c.steps.iter().map(|s| s.step).collect();
    for step in [
        Step::Stop,
        Step::WaitStopped,
        Step::WaitApplied,
        Step::Restore,
    ] {
        assert!(steps.contains(&step), "{step:?} in {steps:?}");
    }
}

#[test]
fn a_service_with_both_is_sent_only_the_request() {
    let kind = Kind {
        requests: true,
        pauses_itself: true,
        ..connect()
    };
    let (c, svc) = moved(kind, ConnectorState::Running);
    assert_eq!(svc.calls(), ["request PATCH"]);
    assert_eq!(svc.state(), ConnectorState::Running);
    assert!(c.state_restored, "{c:?}");
}

#[test]
fn a_request_still_pending_leaves_the_connector_kco_stopped_stopped_for_recovery() {
    let kind = Kind {
        requests: true,
        ..connect()
    };
    let svc = Memory::new(kind, ConnectorState::Running, vec![src("f", 10)]);
    svc.inner.lock().unwrap().pending_reads = u32::MAX;
    let plan = plan::build(&svc, "a", &[want("c", vec![src("f", 3)])], &options()).unwrap();
    let exec = ExecOptions::new(false, 1, Duration::from_secs(30));
    let report = execute(&svc, &plan, &exec, &ManualClock::default(), &Unheard).unwrap();
    let c = &report.connectors[0];
    assert_eq!(c.outcome, ApplyOutcome::Failed, "{c:?}");
    assert_eq!(c.failed_step, Some(Step::WaitApplied), "{c:?}");
    // Not resumed under a pending request: the journal keeps it for `kco recover`.
    assert_eq!(svc.calls(), ["stop", "request PATCH"]);
    assert_eq!(svc.state(), ConnectorState::Stopped);
    assert!(!c.state_restored, "{c:?}");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("stays STOPPED while its request is pending")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn a_change_its_service_gives_no_steps_for_fails_with_nothing_sent() {
    let kind = Kind {
        no_steps: true,
        ..connect()
    };
    let svc = Memory::new(kind, ConnectorState::Running, vec![src("f", 10)]);
    let plan = plan::build(&svc, "a", &[want("c", vec![src("f", 3)])], &options()).unwrap();
    assert!(
        plan.connectors[0].steps.is_empty(),
        "{:?}",
        plan.connectors[0]
    );
    let exec = ExecOptions::new(false, 1, Duration::from_secs(30));
    let report = execute(&svc, &plan, &exec, &ManualClock::default(), &Unheard).unwrap();
    let c = &report.connectors[0];
    assert_eq!(c.outcome, ApplyOutcome::Failed, "{c:?}");
    let error = c.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("has no steps kco can make this change with"),
        "{error}"
    );
    assert!(!c.offsets_sent, "{c:?}");
    assert!(svc.calls().is_empty(), "{:?}", svc.calls());
    assert_eq!(svc.state(), ConnectorState::Running);
    assert_eq!(svc.offsets("c").unwrap(), vec![src("f", 10)]);
}

#[test]
fn a_service_kco_only_reads_is_refused_before_anything_is_planned_or_sent() {
    let kind = Kind {
        read_only: Some("use the service's console"),
        ..connect()
    };
    let svc = Memory::new(kind, ConnectorState::Running, vec![src("f", 10)]);
    let e = plan::build(&svc, "a", &[want("c", vec![src("f", 3)])], &options()).unwrap_err();
    assert_eq!(e.kind(), crate::error::ErrorKind::ReadOnly, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with("cluster `a` is read from ")
            && text.contains(
                "without an API to change its connectors through: altering offsets is refused"
            ),
        "{text}"
    );
    assert!(text.ends_with("nothing was sent"), "{text}");
    assert_eq!(e.hint().as_deref(), Some("use the service's console"));
    assert!(svc.calls().is_empty(), "{:?}", svc.calls());
}
