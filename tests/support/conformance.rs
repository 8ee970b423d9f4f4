//! One conformance suite for every service kco talks to ([`kco::client::Service`]): what the
//! engine relies on, asked of each implementation the same way. tests/cli runs it against the
//! fake in each of its modes (Kafka Connect, Confluent Cloud), tests/e2e against the real
//! worker. A new service passes it before anything else is written for it.
//!
//! What a service lacks is part of the contract: a call that none of its steps
//! ([`Service::steps`]) and no capability of it ([`Capabilities`]) needs fails with nothing
//! changed (`had_no_effect`), so that the engine can never take a path the service does not
//! serve.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kco::client::{AlterKind, Capabilities, ChangeKind, ConnectVersion, Op, Phase, Service};
use kco::model::{ConnectorState, ConnectorType, OffsetEntry, PatchEntry};

/// What the suite is run against.
pub struct Subject<'a> {
    pub service: &'a dyn Service,
    /// A source connector, RUNNING with offsets, that the suite may change: it is left
    /// RUNNING at the offsets it had.
    pub connector: &'a str,
    /// Another position of `connector` (its partitions, other offsets) the service accepts.
    pub rewound: Vec<PatchEntry>,
    /// The config of a new source connector named by the argument (`<connector>-created`,
    /// which the suite creates and deletes).
    pub config: &'a dyn Fn(&str) -> BTreeMap<String, String>,
    /// How long a state or an alter may take to show.
    pub patience: Duration,
}

/// Every check, in turn; a failure names the check and what the service answered.
pub fn run(s: &Subject) {
    lists_its_connectors(s);
    an_unknown_connector_is_not_found(s);
    reads_offsets_and_says_how(s);
    pauses_and_resumes(s);
    alters_offsets_by_its_own_path(s);
    creates_and_deletes(s);
    what_it_lacks_fails_with_nothing_changed(s);
}

fn caps(s: &Subject) -> Capabilities {
    s.service.capabilities()
}

/// Whether the service's steps of a change of offsets (or, for [`Op::CreateAt`], of a
/// create) hold `op`: the path the engine takes with it.
fn takes(s: &Subject, op: Op) -> bool {
    let change = match op {
        Op::CreateAt | Op::Create => ChangeKind::Create,
        _ => ChangeKind::Patch,
    };
    s.service.steps(change).contains(&op)
}

/// Waits until `f` holds, reading the service at most every 100 ms.
fn eventually<T>(s: &Subject, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < s.patience,
            "{what}: not within {:?}",
            s.patience
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn state(s: &Subject, name: &str) -> Option<ConnectorState> {
    s.service.status(name).ok().and_then(|st| st.state)
}

fn wait_state(s: &Subject, name: &str, want: ConnectorState) {
    eventually(s, &format!("`{name}` {want}"), || {
        let st = s.service.status(name).ok()?;
        (st.state == Some(want) && (want != ConnectorState::Stopped || st.tasks.is_empty()))
            .then_some(())
    });
}

fn as_patch(entries: &[OffsetEntry]) -> Vec<PatchEntry> {
    entries
        .iter()
        .map(|e| PatchEntry {
            partition: e.partition.clone(),
            offset: Some(e.offset.clone()),
        })
        .collect()
}

fn same(live: &[OffsetEntry], want: &[PatchEntry]) -> bool {
    let key = |p: &kco::model::Fields| kco::model::canonical_fields(p);
    let live: BTreeMap<_, _> = live
        .iter()
        .map(|e| (key(&e.partition), key(&e.offset)))
        .collect();
    let want: BTreeMap<_, _> = want
        .iter()
        .filter_map(|e| Some((key(&e.partition), key(e.offset.as_ref()?))))
        .collect();
    live == want
}

fn lists_its_connectors(s: &Subject) {
    let listing = s.service.list_connectors().expect("list_connectors");
    let c = listing
        .get(s.connector)
        .unwrap_or_else(|| panic!("the listing has `{}`: {:?}", s.connector, listing.keys()));
    assert_eq!(c.connector_type, Some(ConnectorType::Source), "{c:?}");
    assert!(c.config.contains_key("connector.class"), "{c:?}");
    let status = c.status.as_ref().expect("the listing carries the state");
    assert_eq!(status.state, Some(ConnectorState::Running), "{status:?}");
    let names = s.service.connector_names().expect("connector_names");
    for name in listing.keys() {
        assert!(
            names.contains(name),
            "`{name}` listed but not named: {names:?}"
        );
    }
}

fn an_unknown_connector_is_not_found(s: &Subject) {
    let nosuch = "kco-conformance-no-such-connector";
    let e = s
        .service
        .status(nosuch)
        .expect_err("status of an unknown connector");
    assert!(e.is_unknown_connector(), "status: {e}");
    let e = s
        .service
        .offsets(nosuch)
        .expect_err("offsets of an unknown connector");
    assert!(e.is_not_found(), "offsets: {e}");
}

fn reads_offsets_and_says_how(s: &Subject) {
    let read = s.service.offsets_read(s.connector).expect("offsets_read");
    assert!(!read.entries.is_empty(), "`{}` has offsets", s.connector);
    // Observed offsets say when; live ones do not.
    assert_eq!(
        read.observed_at.is_some(),
        caps(s).observed_offsets,
        "{read:?}"
    );
    let info = s.service.server_info().expect("server_info");
    if caps(s).version_endpoint {
        let v = ConnectVersion::parse(&info.version);
        assert!(v.is_some(), "a Connect version: {}", info.version);
        assert!(info.kafka_cluster_id.is_some(), "{info:?}");
    } else {
        // Made from the service's address: its name, and the Kafka cluster it names.
        assert_eq!(info.version, s.service.backend().service(), "{info:?}");
    }
    let class = s.service.list_connectors().unwrap()[s.connector]
        .class
        .clone()
        .expect("a class");
    let defs = s.service.plugin_config(&class);
    match caps(s).config_definitions {
        true => assert!(!defs.expect("plugin_config").is_empty()),
        false => assert!(defs.expect_err("no config definitions").had_no_effect()),
    }
}

fn pauses_and_resumes(s: &Subject) {
    s.service.pause(s.connector).expect("pause");
    wait_state(s, s.connector, ConnectorState::Paused);
    s.service.resume(s.connector).expect("resume");
    wait_state(s, s.connector, ConnectorState::Running);
}

/// Moves the connector to `to` and reads it back, by the path the service's steps say.
fn alter(s: &Subject, to: &[PatchEntry]) {
    if takes(s, Op::RequestAlter) {
        s.service
            .request_alter(s.connector, AlterKind::Patch, to)
            .expect("request_alter");
        let st = eventually(s, "the request applied", || {
            let st = s.service.alter_status(s.connector).ok()?;
            st.phase.is_final().then_some(st)
        });
        assert_eq!(st.phase, Phase::Applied, "{st:?}");
    } else {
        s.service
            .patch_offsets(s.connector, to)
            .expect("patch_offsets");
    }
    eventually(s, "the offsets read back", || {
        let live = s.service.offsets(s.connector).ok()?;
        same(&live, to).then_some(())
    });
}

fn alters_offsets_by_its_own_path(s: &Subject) {
    let before = s.service.offsets(s.connector).expect("offsets");
    if !takes(s, Op::AwaitRestore) {
        // Refused while it runs: offsets change only with the connector stopped.
        let e = s.service.patch_offsets(s.connector, &s.rewound);
        assert!(e.expect_err("a PATCH while running").had_no_effect());
        s.service.stop(s.connector).expect("stop");
        wait_state(s, s.connector, ConnectorState::Stopped);
    }
    alter(s, &s.rewound);
    alter(s, &as_patch(&before));
    if !takes(s, Op::AwaitRestore) {
        s.service.resume(s.connector).expect("resume");
    }
    wait_state(s, s.connector, ConnectorState::Running);
    let after = s.service.offsets(s.connector).expect("offsets");
    assert!(same(&after, &as_patch(&before)), "{after:?} / {before:?}");
}

fn creates_and_deletes(s: &Subject) {
    let name = &format!("{}-created", s.connector);
    let config = (s.config)(name);
    if takes(s, Op::CreateAt) {
        s.service
            .create_at(name, &config, &s.rewound)
            .expect("create_at");
        eventually(s, "the created connector's offsets", || {
            let live = s.service.offsets(name).ok()?;
            same(&live, &s.rewound).then_some(())
        });
    } else {
        s.service.create(name, &config, None).expect("create");
    }
    eventually(s, "the created connector listed", || {
        let listing = s.service.list_connectors().ok()?;
        listing.contains_key(name).then_some(())
    });
    assert!(state(s, name).is_some(), "`{name}` has a state");
    s.service.delete(name).expect("delete");
    eventually(s, "the deleted connector gone", || {
        let e = s.service.status(name).err()?;
        e.is_unknown_connector().then_some(())
    });
}

fn what_it_lacks_fails_with_nothing_changed(s: &Subject) {
    let before = s.service.offsets(s.connector).expect("offsets");
    let lacks = |what: &str, e: kco::client::Result<()>| {
        let e = e.expect_err(what);
        assert!(e.had_no_effect(), "{what}: {e}");
    };
    if !takes(s, Op::RequestAlter) {
        let r = s
            .service
            .request_alter(s.connector, AlterKind::Patch, &s.rewound);
        lacks("request_alter", r.map(drop));
        lacks(
            "alter_status",
            s.service.alter_status(s.connector).map(drop),
        );
    }
    if !takes(s, Op::CreateAt) {
        let never = format!("{}-never", s.connector);
        let r = s.service.create_at(&never, &(s.config)(&never), &s.rewound);
        lacks("create_at", r);
        assert!(s.service.status(&never).is_err());
    }
    if takes(s, Op::RequestAlter) {
        lacks(
            "patch_offsets",
            s.service.patch_offsets(s.connector, &s.rewound).map(drop),
        );
    }
    let after = s.service.offsets(s.connector).expect("offsets");
    assert!(same(&after, &as_patch(&before)), "nothing changed");
    assert_eq!(state(s, s.connector), Some(ConnectorState::Running));
}
