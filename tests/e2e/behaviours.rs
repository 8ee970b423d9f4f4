//! The behavioural suite (`support::behaviours`) on the real workers, one test per kind of
//! service, one FileStream source each: Kafka Connect over REST (cluster a, on each Kafka
//! release the e2e run covers), and the legacy Connect 3.4.1 worker (cluster l,
//! `scripts/legacy-connect.sh up`) with its REST API and offsets through Kafka, and read from
//! its topics alone (kco.yaml with no `urls`, as for AWS MSK Connect). tests/cli runs the same
//! list on the fake.
//!
//! Each source reads a file of its own, and its offsets hold a second partition, a file it
//! does not read (`/kco/behaviours/<name>`): its task never moves that one, so what kco wrote
//! there is read back exactly while the connector runs ([`Kind::stable`]).

use std::cell::RefCell;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::{
    file_source_config, legacy, numbered, temp_dir, testbed, unique_name, wait_for, write_lines,
    Connect, ConnectorGuard, Testbed, WAIT,
};
use crate::msk_connect::{kco_env, standin, waits, StandIn};
use crate::msk_mode::without_rest;
use crate::support::behaviours::{canonical, file_offsets, run, Behaviour, Kind};
use crate::support::env::TestEnv;
use kco::client::msk_connect::{CreateConnector, MskConnect};

/// A FileStream source on `connect`, at the end of its 20-line file.
struct Source {
    connect: Connect,
    /// Created and deleted through the MSK Connect stand-in, in front of `connect`.
    msk: Option<(MskConnect, CreateConnector)>,
    name: String,
    input: PathBuf,
    config: Value,
    guard: RefCell<Option<ConnectorGuard>>,
    _dir: tempfile::TempDir,
}

impl Source {
    fn start(connect: Connect, prefix: &str) -> Source {
        let dir = temp_dir();
        let input = dir.path().join("in.txt");
        write_lines(&input, &numbered("line", 0..20));
        let name = unique_name(prefix);
        let config = file_source_config(&input, &unique_name(prefix));
        let guard = connect.create(&name, config.clone());
        connect.wait_running(&name);
        Source {
            connect,
            msk: None,
            name,
            input,
            config,
            guard: RefCell::new(Some(guard)),
            _dir: dir,
        }
    }

    fn len(&self) -> i64 {
        std::fs::metadata(&self.input).unwrap().len() as i64
    }

    /// Its file at its end, and the partition it does not read at `ghost`.
    fn at(&self, ghost: i64) -> Vec<Value> {
        let (file, other) = (self.input.to_str().unwrap(), self.ghost());
        vec![
            json!({"partition": {"filename": file}, "offset": {"position": self.len()}}),
            json!({"partition": {"filename": other}, "offset": {"position": ghost}}),
        ]
    }

    fn ghost(&self) -> String {
        format!("/kco/behaviours/{}", self.name)
    }

    /// Without its own file's partition, which its task moves.
    fn stable(&self, offsets: &[Value]) -> Vec<Value> {
        let file = self.input.to_str().unwrap();
        let stable = offsets
            .iter()
            .filter(|e| e["partition"]["filename"] != file);
        stable.cloned().collect()
    }

    fn state(&self) -> Option<String> {
        let st = self.connect.status(&self.name)?;
        st["connector"]["state"].as_str().map(str::to_string)
    }

    fn wait_state(&self, what: &str, state: &str) {
        wait_for(&format!("{}: {what}", self.name), WAIT, || {
            match self.state() {
                Some(s) if s == state => Ok(()),
                other => Err(format!("{other:?}")),
            }
        });
    }

    /// A source created through the MSK Connect stand-in (its worker: cluster a's).
    fn start_msk(connect: Connect, standin: &StandIn, tb: &Testbed, prefix: &str) -> Source {
        let dir = temp_dir();
        let input = dir.path().join("in.txt");
        write_lines(&input, &numbered("line", 0..20));
        let name = unique_name(prefix);
        let config = file_source_config(&input, &unique_name(prefix));
        let request = standin.request(tb, &name, config.clone());
        let msk = standin.client(&standin.secret);
        let created = msk
            .create_connector(&request)
            .expect("created through the stand-in");
        msk.wait_running(&created.connector_arn, &waits()).unwrap();
        let guard = connect.adopt(&name);
        connect.wait_running(&name);
        Source {
            connect,
            msk: Some((msk, request)),
            name,
            input,
            config,
            guard: RefCell::new(Some(guard)),
            _dir: dir,
        }
    }

    fn delete(&self) {
        if let Some((msk, _)) = &self.msk {
            let c = msk.find_connector(&self.name).unwrap().expect("listed");
            msk.delete_connector(&c.connector_arn, c.current_version.as_deref())
                .unwrap();
            msk.wait_gone(&c.connector_arn, &self.name, &waits())
                .unwrap();
        }
        drop(self.guard.borrow_mut().take());
        self.connect.wait_gone(&self.name);
    }

    fn create(&self) {
        let guard = self.connect.create(&self.name, self.config.clone());
        *self.guard.borrow_mut() = Some(guard);
        self.connect.wait_running(&self.name);
    }
}

/// The kinds on a real worker.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// Kafka Connect over REST: cluster a of the test bed, its Kafka and offsets topic named
    /// too (for `ls --orphaned`).
    Rest,
    /// The legacy worker, Connect 3.4.1 (no offsets API, no stop): its offsets are written
    /// through Kafka, only while the connector does not exist, so the service's user deletes
    /// it first and creates it again after, as with AWS MSK Connect. With its `urls` (and
    /// `kafka:`, `connectTopics.offsets`) in kco.yaml...
    LegacyRest,
    /// ... or only `kafka:` and its three topics.
    LegacyTopics,
    /// Amazon MSK Connect, its stand-in in front of cluster a's worker: kco deletes the
    /// connector through the control plane, writes its offsets through Kafka to the topic its
    /// worker configuration pins, and creates it again.
    Msk,
    /// The legacy worker with `connectTopics.recreate`: kco deletes the connector, keeping
    /// its definition in the journal, writes, and creates it again.
    LegacyRecreate,
}

/// A kind on a real worker: its source, kco with its kco.yaml entry, and for the legacy
/// worker (which has no `GET /offsets`) kco with the other legacy entry, which reads its
/// offsets.
struct Worker {
    way: Way,
    source: Source,
    env: TestEnv,
    other: Option<TestEnv>,
    _tb: crate::harness::Testbed,
}

impl Kind for Worker {
    fn name(&self) -> &str {
        match self.way {
            Way::Rest => "Kafka Connect over REST",
            Way::LegacyRest => "Connect 3.4.1 with REST, offsets through Kafka",
            Way::LegacyTopics => "Connect read from its topics",
            Way::LegacyRecreate => "Connect 3.4.1 deleted and created again by kco",
            Way::Msk => "Amazon MSK Connect (stand-in)",
        }
    }

    fn env(&self) -> &TestEnv {
        &self.env
    }

    fn cluster(&self) -> &str {
        match self.way {
            Way::Rest => "a",
            Way::Msk => "m",
            Way::LegacyRest | Way::LegacyTopics | Way::LegacyRecreate => "l",
        }
    }

    fn connector(&self) -> &str {
        &self.source.name
    }

    fn offsets(&self) -> Vec<Value> {
        let name = &self.source.name;
        let Some(other) = &self.other else {
            return self.source.connect.offsets(name);
        };
        let run = other.kco(&["snapshot", name, "--dir", "read", "--allow-empty"]);
        run.success("the offsets read through the other kco.yaml");
        file_offsets(&other.path().join(format!("read/l/{name}.yaml")))
    }

    fn state(&self) -> Option<String> {
        self.source.state()
    }

    fn moved(&self, n: u64) -> Vec<Value> {
        self.source.at(1000 - 10 * n as i64)
    }

    fn stable(&self, offsets: &[Value]) -> Vec<Value> {
        self.source.stable(offsets)
    }

    fn wait_offsets(&self, what: &str, want: &[Value]) {
        let want = canonical(&self.stable(want));
        wait_for(&format!("{}: {what}", self.source.name), WAIT, || {
            let got = canonical(&self.stable(&self.offsets()));
            (got == want)
                .then_some(())
                .ok_or(format!("{got:?}, not {want:?}"))
        });
    }

    fn wait_state(&self, what: &str, state: &str) {
        self.source.wait_state(what, state);
    }

    fn before_write(&self) {
        if matches!(self.way, Way::LegacyRest | Way::LegacyTopics) {
            self.source.delete();
        }
    }

    fn after_write(&self) {
        if matches!(self.way, Way::LegacyRest | Way::LegacyTopics) {
            self.source.create();
        }
    }

    fn delete(&self) {
        self.source.delete();
    }

    fn lacks(&self, b: Behaviour) -> Option<&str> {
        match (self.way, b) {
            (Way::Rest, Behaviour::RefusesRunning) => Some("it stops a connector (Connect 3.5 on)"),
            (Way::Rest, _) => None,
            (Way::LegacyRecreate, Behaviour::RefusesRunning) => {
                Some("kco deletes a running connector and creates it again around the write")
            }
            (Way::LegacyRecreate, _) => None,
            (Way::Msk, Behaviour::RefusesRunning) => {
                Some("kco deletes a running connector and creates it again around the write")
            }
            (Way::Msk, _) => None,
            (_, Behaviour::Reset) => Some(
                "`reset NAME` wants a connector of that name, and a write through Kafka wants \
                 none (deleted): refused either way; a file with `offsets: []` is applied \
                 instead (or `reset --orphaned` once it is deleted)",
            ),
            (Way::LegacyTopics, Behaviour::ResetOrphaned) => {
                Some("refused: the offsets topic may be shared with other Connect clusters")
            }
            _ => None,
        }
    }

    /// Over REST, each step of the transaction but the last two (`wait_restored`,
    /// `wait_tasks`: kco ends right after, before a kill lands). A write through Kafka prints
    /// no step under `-v` (one Kafka transaction, no connector state to put back, no
    /// journal): its one point is after the backup, before the write.
    fn steps(&self) -> Vec<&str> {
        match self.way {
            Way::Rest => vec![
                ": record_state ok",
                ": stop ok",
                ": wait_stopped ok",
                ": patch ok",
                ": verify ok",
                ": restore ok",
            ],
            Way::LegacyRest | Way::LegacyTopics => vec!["Backup of the offsets as they were"],
            // Before the journal (nothing changed), between the delete and the write, and
            // between the write and the create.
            Way::LegacyRecreate | Way::Msk => {
                vec![": describe ok", ": wait_gone ok", ": write_topic ok"]
            }
        }
    }
}

#[test]
fn kafka_connect_over_rest_behaves() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let source = Source::start(a.clone(), "kco-e2e-behave");
    a.wait_read(&source.name, &source.input);
    // The partition it does not read, at 1000.
    a.stop(&source.name);
    let reply = a.patch_offsets(&source.name, json!(source.at(1000)));
    assert_eq!(reply.status, 200, "{}", reply.body);
    a.resume(&source.name);
    let env = TestEnv::new().args(&["--cluster", "a"]);
    env.config(format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka: {{bootstrap: \"{}\"}}\n    connectTopics: {{offsets: kco-a-offsets}}\n",
        tb.a_urls.join(", "),
        tb.kafka()
    ));
    let kind = Worker {
        way: Way::Rest,
        source,
        env,
        other: None,
        _tb: tb,
    };
    kind.wait_offsets(
        "the partition it does not read at 1000",
        &kind.source.at(1000),
    );
    run(&kind);
}

/// A legacy kind, its source at the end of its file; `None` when
/// the legacy worker is not there (skipped).
fn legacy_kind(way: Way) -> Option<Worker> {
    let tb = testbed()?;
    let (l, with_urls) = legacy()?;
    let topics = without_rest(&tb.kafka(), "l", "kco-l-status");
    let source = Source::start(l, "kco-e2e-behave-l");
    let (env, other) = match way {
        Way::LegacyTopics => (topics, with_urls),
        _ => (with_urls, topics),
    };
    if way == Way::LegacyRecreate {
        let yaml = env.path().join("kco.yaml");
        let text = std::fs::read_to_string(&yaml).unwrap();
        let recreating = text.replace(
            "{offsets: kco-l-offsets}",
            "{offsets: kco-l-offsets, recreate: true}",
        );
        assert_ne!(
            text, recreating,
            "the legacy kco.yaml names its offsets topic: {text}"
        );
        env.config(recreating);
    }
    let kind = Worker {
        way,
        source,
        env,
        other: Some(other),
        _tb: tb,
    };
    let read = canonical(&kind.source.at(0)[..1]);
    wait_for("the legacy source at the end of its file", WAIT, || {
        let got = canonical(&kind.offsets());
        (got == read).then_some(()).ok_or(format!("{got:?}"))
    });
    Some(kind)
}

#[test]
fn connect_3_4_with_rest_and_offsets_through_kafka_behaves() {
    let Some(kind) = legacy_kind(Way::LegacyRest) else {
        return;
    };
    run(&kind);
}

#[test]
fn connect_read_from_its_topics_behaves() {
    let Some(kind) = legacy_kind(Way::LegacyTopics) else {
        return;
    };
    run(&kind);
}

/// kco deletes the running connector, writes and creates it again, for every behaviour: a
/// kill at each step is recovered by creating it from the definition the journal kept.
#[test]
fn connect_3_4_deleted_and_created_again_by_kco_behaves() {
    let Some(kind) = legacy_kind(Way::LegacyRecreate) else {
        return;
    };
    run(&kind);
}

/// Amazon MSK Connect through its stand-in: kco lists and describes the connector through
/// the control plane, reads its offsets from the pinned topic, and changes them by deleting
/// it, writing and creating it again; a kill at each step is recovered from the journal.
#[test]
fn amazon_msk_connect_behaves() {
    let Some(tb) = testbed() else { return };
    let Some(standin) = standin() else { return };
    let a = tb.a();
    let source = Source::start_msk(a.clone(), &standin, &tb, "kco-e2e-behave-m");
    a.wait_read(&source.name, &source.input);
    // The partition it does not read, at 1000: behind the stand-in's back, on the worker.
    a.stop(&source.name);
    let reply = a.patch_offsets(&source.name, json!(source.at(1000)));
    assert_eq!(reply.status, 200, "{}", reply.body);
    a.resume(&source.name);
    let kind = Worker {
        way: Way::Msk,
        source,
        env: kco_env(),
        other: None,
        _tb: tb,
    };
    kind.wait_offsets(
        "the partition it does not read at 1000",
        &kind.source.at(1000),
    );
    run(&kind);
}
