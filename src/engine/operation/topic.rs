//! The guarded operation's run for writes to Connect's offsets topic and the sinks' groups:
//! `kco reset --orphaned` (the offsets of deleted connectors), an apply or reset on a cluster
//! read through Kafka (`engine::through_kafka`), and their undo. No connector is stopped, so
//! nothing is journaled; under the cluster's lock, each key's value is backed up before the
//! first write, the names are checked to have no connector right before it (or, for an apply,
//! one still STOPPED), and every key is read back.
//!
//! On a service that deletes a connector and creates it again around the write (its steps:
//! [`Op::Describe`], [`Op::DeleteKeeping`], [`Op::WriteTopic`], [`Op::CreateFrom`]), each
//! connector of the plan that exists is described, written to the journal with its definition,
//! deleted and waited for until it is gone (and its sink's group has no members); after the
//! write, each is created again from its definition and waited for until it runs, and its
//! journal entry goes. Whatever fails after a delete, every deleted connector is created
//! again; a kill leaves the journal, from which the next command's recovery creates them.

use std::collections::BTreeMap;

use super::journal::JournalFile;
use super::{Operation, Settings};
use crate::client::{ChangeKind, Op};
use crate::engine::apply::report::{Step, StepRecord};
use crate::engine::apply::state::poll_target;
use crate::engine::apply::{backup, BackupReport, OperationObserver};
use crate::engine::orphaned::{
    self, GroupWrite, OffsetsTopic, Purpose, TopicPlan, TopicWrite, Written,
};
use crate::error::{Error, ResetRoute, Result};
use crate::model::{ConnectorState, TargetState};
use crate::wait::{until, Poll, SystemClock, WaitPolicy};

/// What [`Operation::run_topic`] did.
#[derive(Debug)]
pub enum TopicRan {
    /// Every key already holds the value wanted.
    NoChanges,
    /// A dry run: the plan only.
    DryRun,
    /// The confirmation said no: nothing was written.
    Declined,
    Done(Box<TopicDone>),
}

/// Written, after the backup.
#[derive(Debug)]
pub struct TopicDone {
    pub backup: BackupReport,
    /// How the offsets topic's records were written (none: the plan wrote only groups).
    pub written: Option<Written>,
    /// Writes whose key, read back, does not hold the value written.
    pub mismatched: Vec<TopicWrite>,
    /// Group offsets that, read back, are not the ones written.
    pub mismatched_groups: Vec<GroupWrite>,
    /// The write or the read-back failed (some keys may be written: the backup undoes them).
    pub error: Option<Error>,
    /// The connectors deleted before the write and created again after it.
    pub recreated: Vec<String>,
}

impl Operation {
    /// Confirms, backs up and writes `plan` to the offsets topic through `topic`, then reads
    /// every key back. Refused, nothing written, while a connector of the cluster has one of
    /// the plan's names (it would write the same keys): listed again just before the write.
    /// On a service that deletes and creates connectors around the write, those of
    /// [`TopicPlan::recreated`] are deleted first and created again after (the module's doc).
    pub fn run_topic(
        &self,
        plan: &TopicPlan,
        settings: &Settings,
        topic: &dyn OffsetsTopic,
        confirm: &mut dyn FnMut(&TopicPlan) -> Result<bool>,
        seen: &dyn OperationObserver,
    ) -> Result<TopicRan> {
        if plan.cluster != self.cluster {
            return Err(Error::Other(format!(
                "a plan for cluster `{}` cannot run on `{}`",
                plan.cluster, self.cluster
            )));
        }
        self.refuse_unfinished()?;
        if plan.is_empty() {
            return Ok(TopicRan::NoChanges);
        }
        if self.dry_run || settings.dry_run {
            return Ok(TopicRan::DryRun);
        }
        if !confirm(plan)? {
            return Ok(TopicRan::Declined);
        }
        let now = crate::clock::now();
        let stamp = crate::clock::rfc3339(now);
        let dir = match &settings.backup_dir {
            Some(d) => d.clone(),
            None => self.state.new_backup_dir(&self.cluster, now),
        };
        let wait = &settings.exec.tx.wait;
        let keep = self.to_recreate(plan)?;
        if keep.is_empty() {
            return self.write_topic(plan, topic, (&dir, &stamp), None);
        }
        let backup = self.backup_topic(plan, &dir, &stamp)?;
        seen.backed_up(&backup);
        let deleted = self.delete_keeping(plan, topic, keep, (&backup, &stamp), wait, seen)?;
        let ran = self.write_topic(plan, topic, (&dir, &stamp), Some(backup));
        if let Ok(TopicRan::Done(done)) = &ran {
            let (ok, detail) = match &done.error {
                None => (
                    true,
                    format!("topic `{}` written and read back", plan.topic),
                ),
                Some(e) => (false, e.to_string()),
            };
            for (name, ..) in &deleted.connectors {
                seen.step(name, &record(Step::WriteTopic, ok, detail.clone()));
            }
        }
        let again = self.create_again(&deleted, wait, seen);
        match (ran, again) {
            (Ok(TopicRan::Done(mut done)), Ok(names)) => {
                done.recreated = names;
                Ok(TopicRan::Done(done))
            }
            (Ok(TopicRan::Done(mut done)), Err(e)) => {
                done.error.get_or_insert(e);
                Ok(TopicRan::Done(done))
            }
            (Ok(ran), Ok(_)) => Ok(ran),
            (Ok(_), Err(e)) | (Err(_), Err(e)) => Err(e),
            (Err(e), Ok(_)) => Err(e),
        }
    }

    /// The connectors of the plan that the service deletes and creates again around the
    /// write, with the state each is in: none unless its steps say so.
    fn to_recreate(&self, plan: &TopicPlan) -> Result<Vec<(String, TargetState)>> {
        let steps = self.client.steps(ChangeKind::Patch);
        if plan.recreated.is_empty() || !steps.contains(&Op::DeleteKeeping) {
            return Ok(Vec::new());
        }
        let live = self.listed()?;
        Ok(plan
            .recreated
            .iter()
            .filter_map(|n| live.get(n).map(|l| (n.clone(), l.state())))
            .map(|(n, s)| (n, s.map_or(TargetState::Running, |s| s.target())))
            .collect())
    }

    fn listed(&self) -> Result<BTreeMap<String, crate::client::ConnectorListing>> {
        self.client.list_connectors().map_err(|e| {
            Error::client(
                format!("cluster `{}`: listing its connectors", self.cluster),
                e,
            )
        })
    }

    /// Each connector described ([`Op::Describe`]: a failure there changes nothing), the
    /// journal written with every definition, then each deleted and waited for until it is
    /// gone and its group (a sink's) has no members ([`Op::DeleteKeeping`]). A failure after
    /// the first delete creates again what was deleted.
    fn delete_keeping(
        &self,
        plan: &TopicPlan,
        topic: &dyn OffsetsTopic,
        keep: Vec<(String, TargetState)>,
        (backup, stamp): (&BackupReport, &str),
        wait: &WaitPolicy,
        seen: &dyn OperationObserver,
    ) -> Result<Deleted> {
        let mut defined = BTreeMap::new();
        for (name, state) in keep {
            let definition = self.client.definition(&name).map_err(|e| {
                Error::client(
                    format!(
                        "cluster `{}`: reading `{name}`'s definition to create it again with (nothing was changed)",
                        self.cluster
                    ),
                    e,
                )
            })?;
            seen.step(
                &name,
                &record(Step::Describe, true, "definition read".into()),
            );
            defined.insert(name, (state, definition));
        }
        let journal = JournalFile::recreating(
            &self.state,
            (&self.cluster, &self.client.endpoint()),
            Some(&backup.dir),
            stamp,
            defined.clone(),
        )?;
        let mut deleted = Deleted {
            journal,
            connectors: Vec::new(),
        };
        for (name, (state, definition)) in defined {
            let gone = self
                .client
                .delete(&name)
                .map_err(|e| {
                    Error::client(format!("cluster `{}`: deleting `{name}`", self.cluster), e)
                })
                .and_then(|()| {
                    deleted.connectors.push((name.clone(), state, definition));
                    self.wait_gone(&name, wait)
                });
            if let Err(e) = gone {
                return Err(self.create_again(&deleted, wait, seen).err().unwrap_or(e));
            }
            let detail = "deleted (its definition in the journal), gone".to_string();
            seen.step(&name, &record(Step::WaitGone, true, detail));
        }
        if let Err(e) = self.wait_no_members(plan, topic, wait) {
            return Err(self.create_again(&deleted, wait, seen).err().unwrap_or(e));
        }
        Ok(deleted)
    }

    /// Until `name` is gone: its status is Connect's 404.
    fn wait_gone(&self, name: &str, wait: &WaitPolicy) -> Result<()> {
        until(&SystemClock, wait, || match self.client.status(name) {
            Err(e) if e.is_not_found() => Poll::Ready(()),
            Err(e) => Poll::Pending(e.to_string()),
            Ok(s) => Poll::Pending(format!("still {}", s.describe())),
        })
        .map_err(|e| {
            Error::Other(format!(
                "cluster `{}`: `{name}` deleted, but not gone: {e}",
                self.cluster
            ))
        })
    }

    /// Until the groups of the plan's sinks have no members (a deleted sink's tasks leave).
    fn wait_no_members(
        &self,
        plan: &TopicPlan,
        topic: &dyn OffsetsTopic,
        wait: &WaitPolicy,
    ) -> Result<()> {
        if plan.group_writes.is_empty() {
            return Ok(());
        }
        until(&SystemClock, wait, || {
            match orphaned::groups_in_use(topic, plan) {
                Ok(busy) if busy.is_empty() => Poll::Ready(()),
                Ok(busy) => Poll::Pending(format!("{} with members", busy[0].0)),
                Err(e) => Poll::Pending(e.to_string()),
            }
        })
        .map_err(|e| {
            Error::Other(format!(
                "cluster `{}`: the deleted sinks' groups keep members: {e}",
                self.cluster
            ))
        })
    }

    /// Creates each deleted connector again from its definition ([`Op::CreateFrom`]) and
    /// waits until it is in its recorded state; each one that is leaves the journal. The
    /// first failure, after every one was tried (the journal keeps those it names).
    fn create_again(
        &self,
        deleted: &Deleted,
        wait: &WaitPolicy,
        seen: &dyn OperationObserver,
    ) -> Result<Vec<String>> {
        let mut first = None;
        let mut created = Vec::new();
        for (name, state, definition) in &deleted.connectors {
            let back = self
                .client
                .create_from(definition)
                .map_err(|e| {
                    Error::client(
                        format!(
                            "cluster `{}`: creating `{name}` again from its definition (the journal keeps it: `kco recover` creates it)",
                            self.cluster
                        ),
                        e,
                    )
                })
                .and_then(|()| {
                    until(&SystemClock, wait, || {
                        poll_target(self.client.status(name), *state)
                    })
                    .map_err(|e| {
                        Error::Other(format!(
                            "cluster `{}`: `{name}` created again, but not {state}: {e}",
                            self.cluster
                        ))
                    })
                })
                .and_then(|_| deleted.journal.exists_again(name));
            match back {
                Ok(()) => {
                    let detail = format!("created again from its definition, {state}");
                    seen.step(name, &record(Step::CreateAgain, true, detail));
                    created.push(name.clone());
                }
                Err(e) => {
                    seen.step(name, &record(Step::CreateAgain, false, e.to_string()));
                    first.get_or_insert(e);
                }
            }
        }
        match first {
            None => Ok(created),
            Some(e) => Err(e),
        }
    }

    /// The values of every key and group the plan writes, backed up in `dir`.
    fn backup_topic(
        &self,
        plan: &TopicPlan,
        dir: &std::path::Path,
        stamp: &str,
    ) -> Result<BackupReport> {
        backup::write_topic(
            &self.cluster,
            &self.client.endpoint(),
            &plan.topic,
            (&plan.backup_records(), &plan.backup_groups()),
            dir,
            stamp,
        )
    }

    /// The write itself, once no connector has one of the plan's names (listed again now):
    /// backed up first (unless `backup` was made already), then written and read back.
    fn write_topic(
        &self,
        plan: &TopicPlan,
        topic: &dyn OffsetsTopic,
        (dir, stamp): (&std::path::Path, &str),
        backup: Option<BackupReport>,
    ) -> Result<TopicRan> {
        let live = self.listed()?;
        // A name planned while its connector was STOPPED may still have it, stopped.
        let present: Vec<(String, Option<ConnectorState>)> = plan
            .names
            .iter()
            .filter_map(|n| live.get(n).map(|l| (n.clone(), l.state())))
            .filter(|(n, s)| !(plan.stopped.contains(n) && *s == Some(ConnectorState::Stopped)))
            .collect();
        if !present.is_empty() {
            return Err(match plan.purpose {
                Purpose::Leftovers => Error::ConnectorsExist {
                    cluster: self.cluster.clone(),
                    topic: plan.topic.clone(),
                    names: present.into_iter().map(|(n, _)| n).collect(),
                    route: ResetRoute::of(&self.client.capabilities()),
                },
                Purpose::Apply => Error::NotWritable {
                    cluster: self.cluster.clone(),
                    route: ResetRoute::of(&self.client.capabilities()),
                    reasons: present
                        .into_iter()
                        .map(|(n, s)| {
                            let state = s.map_or("exists".into(), |s| format!("is {s}"));
                            format!("`{n}` {state} now (created or started since the plan)")
                        })
                        .collect(),
                },
            });
        }
        let kafka =
            |what: &str| format!("cluster `{}`: {what} topic `{}`", self.cluster, plan.topic);
        let busy = orphaned::groups_in_use(topic, plan).map_err(|source| Error::Kafka {
            context: format!("cluster `{}`: reading consumer groups", self.cluster),
            source,
        })?;
        if !busy.is_empty() {
            let busy: Vec<String> = busy
                .iter()
                .map(|(g, n)| format!("`{g}` ({})", crate::text::count(*n, "member")))
                .collect();
            return Err(Error::Other(format!(
                "cluster `{}`: nothing written: consumer group {} has members now, which would race the write (hint: stop what consumes with it, then run this again)",
                self.cluster,
                busy.join(", ")
            )));
        }
        let backup = match backup {
            Some(b) => b,
            None => self.backup_topic(plan, dir, stamp)?,
        };
        let millis = crate::clock::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let done = |written, (mismatched, mismatched_groups), error| {
            Ok(TopicRan::Done(Box::new(TopicDone {
                backup: backup.clone(),
                written,
                mismatched,
                mismatched_groups,
                error,
                recreated: Vec::new(),
            })))
        };
        let written = match orphaned::write(topic, plan, millis) {
            Ok(w) => w,
            Err(source) => {
                let context = kafka("writing to");
                return done(
                    None,
                    Default::default(),
                    Some(Error::Kafka { context, source }),
                );
            }
        };
        let read_back = orphaned::verify(topic, plan)
            .and_then(|keys| orphaned::verify_groups(topic, plan).map(|groups| (keys, groups)));
        match read_back {
            Ok(mismatched) => done(written, mismatched, None),
            Err(source) => {
                let context = kafka("reading back");
                done(
                    written,
                    Default::default(),
                    Some(Error::Kafka { context, source }),
                )
            }
        }
    }
}

fn record(step: Step, ok: bool, detail: String) -> StepRecord {
    StepRecord { step, ok, detail }
}

/// The connectors deleted before a write, each with the state and definition to create it
/// again in; the journal that keeps them until they exist again.
struct Deleted {
    journal: JournalFile,
    connectors: Vec<(String, TargetState, serde_json::Value)>,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;
    use crate::engine::operation::{journal, StateDir};
    use crate::engine::orphaned::memory::MemoryKafka;
    use crate::engine::orphaned::{find, find_sinks, plan_restore};
    use crate::engine::progress::Unheard;
    use crate::fake::{FakeConnect, State};
    use crate::wait::{ManualClock, WaitPolicy};

    /// One source offset left by `gone` in memory, and the group of a deleted sink `old`;
    /// what is written is kept.
    fn topic() -> MemoryKafka {
        let key = r#"["gone",{"filename":"/a"}]"#.to_string();
        MemoryKafka::new(
            vec![(2, Some(key), Some(r#"{"position":42}"#.into()), 1)],
            false,
        )
        .with_group("connect-old", "consumer", 0, &[("t", 0, 7), ("t", 1, 9)])
    }

    fn open(fake: &FakeConnect, dir: &tempfile::TempDir) -> Operation {
        Operation::open(
            &StateDir::at(dir.path()),
            "a",
            &|| Ok(fake.client()),
            &WaitPolicy::with_timeout(Duration::from_secs(5)),
            &ManualClock::default(),
        )
        .unwrap()
    }

    fn settings(dir: &tempfile::TempDir) -> Settings {
        Settings {
            dry_run: false,
            refuse: Vec::new(),
            exec: crate::engine::apply::ExecOptions::new(true, 1, Duration::from_secs(5)),
            backup_dir: Some(dir.path().join("backup")),
        }
    }

    #[test]
    fn a_connector_created_under_the_name_since_the_plan_refuses_the_write_with_nothing_backed_up()
    {
        let topic = topic();
        let found = find(&topic, "connect-offsets", &BTreeSet::new()).unwrap();
        let plan = orphaned::plan_reset("a", &found, &["gone".to_string()]);
        assert_eq!(plan.writes.len(), 1);
        // Created between the plan and the confirmation.
        let fake = FakeConnect::builder()
            .source("gone", "C", State::Running, serde_json::json!([]))
            .start();
        let dir = tempfile::tempdir().unwrap();
        let e = open(&fake, &dir)
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true), &Unheard)
            .unwrap_err();
        assert!(matches!(e, Error::ConnectorsExist { .. }), "{e}");
        assert_eq!(topic.records.borrow().len(), 1, "nothing written");
        assert!(!dir.path().join("backup").exists(), "nothing backed up");
    }

    #[test]
    fn the_keys_are_backed_up_as_they_were_before_they_are_written_and_read_back() {
        let topic = topic();
        let found = find(&topic, "connect-offsets", &BTreeSet::new()).unwrap();
        let plan = orphaned::plan_reset("a", &found, &["gone".to_string()]);
        let fake = FakeConnect::builder().start();
        let dir = tempfile::tempdir().unwrap();
        let op = open(&fake, &dir);
        // A dry run, or a no, writes nothing.
        let mut dry = settings(&dir);
        dry.dry_run = true;
        let ran = op
            .run_topic(&plan, &dry, &topic, &mut |_| Ok(true), &Unheard)
            .unwrap();
        assert!(matches!(ran, TopicRan::DryRun));
        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(false), &Unheard)
            .unwrap();
        assert!(matches!(ran, TopicRan::Declined));
        assert_eq!(topic.records.borrow().len(), 1);

        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true), &Unheard)
            .unwrap();
        let TopicRan::Done(done) = ran else {
            panic!("{ran:?}")
        };
        assert!(done.error.is_none() && done.mismatched.is_empty());
        assert_eq!(
            topic.records.borrow().last().unwrap().2,
            None,
            "a null value"
        );
        let marker = backup::read_marker(&done.backup.dir).unwrap();
        assert_eq!(marker.offsets_topic.as_deref(), Some(plan.topic.as_str()));
        let (kept, groups) = backup::read_topic(&done.backup.dir).unwrap();
        assert!(groups.is_empty(), "no group changed: {groups:?}");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].partition, 2);
        assert_eq!(kept[0].value.as_deref(), Some(r#"{"position":42}"#));
    }

    /// A deleted sink's group: its offsets are backed up, deleted and read back; a group
    /// that has members by then refuses the run with nothing backed up; the undo of the
    /// backup commits them back.
    #[test]
    fn a_sinks_group_offsets_are_backed_up_deleted_and_committed_back_by_the_undo() {
        let topic = topic();
        let mut found = find(&topic, "connect-offsets", &BTreeSet::new()).unwrap();
        found.sinks = find_sinks(&topic, &BTreeSet::new(), &BTreeSet::new()).unwrap();
        let plan = orphaned::plan_reset("a", &found, &["old".to_string()]);
        assert_eq!(plan.names, ["old"]);
        assert!(plan.writes.is_empty());
        assert_eq!(plan.group_writes.len(), 2);
        let fake = FakeConnect::builder().start();
        let dir = tempfile::tempdir().unwrap();
        let op = open(&fake, &dir);

        // A consumer joined the group since the plan.
        topic
            .groups
            .borrow_mut()
            .get_mut("connect-old")
            .unwrap()
            .members = 1;
        let e = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true), &Unheard)
            .unwrap_err();
        assert!(e.to_string().contains("`connect-old` (1 member)"), "{e}");
        assert!(!dir.path().join("backup").exists(), "nothing backed up");
        assert_eq!(topic.offsets("connect-old").len(), 2, "nothing deleted");
        topic
            .groups
            .borrow_mut()
            .get_mut("connect-old")
            .unwrap()
            .members = 0;

        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true), &Unheard)
            .unwrap();
        let TopicRan::Done(done) = ran else {
            panic!("{ran:?}")
        };
        assert!(done.error.is_none() && done.mismatched_groups.is_empty());
        assert!(topic.offsets("connect-old").is_empty(), "deleted");
        assert_eq!(topic.records.borrow().len(), 1, "the topic untouched");
        let (records, groups) = backup::read_topic(&done.backup.dir).unwrap();
        assert!(records.is_empty());
        assert_eq!(
            groups
                .iter()
                .map(|g| (g.group.as_str(), g.partition, g.offset))
                .collect::<Vec<_>>(),
            [("connect-old", 0, Some(7)), ("connect-old", 1, Some(9))]
        );

        let undo = plan_restore(&topic, "a", "connect-offsets", &records, &groups).unwrap();
        assert_eq!(undo.names, ["old"]);
        let ran = op
            .run_topic(
                &undo,
                &settings(&tempfile::tempdir().unwrap()),
                &topic,
                &mut |_| Ok(true),
                &Unheard,
            )
            .unwrap();
        assert!(
            matches!(ran, TopicRan::Done(ref d) if d.mismatched_groups.is_empty()),
            "{ran:?}"
        );
        assert_eq!(
            topic.offsets("connect-old").into_iter().collect::<Vec<_>>(),
            [(("t".to_string(), 0), 7), (("t".to_string(), 1), 9)]
        );
        let again = plan_restore(&topic, "a", "connect-offsets", &records, &groups).unwrap();
        assert!(again.is_empty(), "nothing left to write back");
    }

    /// The fake's Kafka Connect with the steps of a service that deletes and creates its
    /// connectors around a write through Kafka (Amazon MSK Connect's): its definition and
    /// create-again calls are Connect's (`GET /connectors/{name}`, `POST /connectors`).
    struct Recreating(Box<dyn crate::client::Service>);

    impl crate::client::Service for Recreating {
        fn backend(&self) -> &crate::client::Backend {
            self.0.backend()
        }
        fn capabilities(&self) -> crate::client::Capabilities {
            self.0.capabilities()
        }
        fn steps(&self, change: ChangeKind) -> &'static [Op] {
            crate::client::steps::recreated_around_a_kafka_write(change)
        }
        fn endpoint(&self) -> String {
            self.0.endpoint()
        }
        fn counting(
            &self,
        ) -> (
            Box<dyn crate::client::Service>,
            crate::client::layers::Counter,
        ) {
            let (s, c) = self.0.counting();
            (Box::new(Recreating(s)), c)
        }
        fn server_info(&self) -> crate::client::Result<crate::client::ServerInfo> {
            self.0.server_info()
        }
        fn list_connectors(
            &self,
        ) -> crate::client::Result<BTreeMap<String, crate::client::ConnectorListing>> {
            self.0.list_connectors()
        }
        fn connector_names(&self) -> crate::client::Result<Vec<String>> {
            self.0.connector_names()
        }
        fn status(&self, name: &str) -> crate::client::Result<crate::client::ConnectorStatus> {
            self.0.status(name)
        }
        fn offsets(&self, name: &str) -> crate::client::Result<Vec<crate::model::OffsetEntry>> {
            self.0.offsets(name)
        }
        fn offsets_read(&self, name: &str) -> crate::client::Result<crate::client::OffsetsRead> {
            self.0.offsets_read(name)
        }
        fn request_alter(
            &self,
            name: &str,
            kind: crate::client::AlterKind,
            entries: &[crate::model::PatchEntry],
        ) -> crate::client::Result<crate::client::AlterRequest> {
            self.0.request_alter(name, kind, entries)
        }
        fn alter_status(&self, name: &str) -> crate::client::Result<crate::client::AlterStatus> {
            self.0.alter_status(name)
        }
        fn patch_offsets(
            &self,
            name: &str,
            entries: &[crate::model::PatchEntry],
        ) -> crate::client::Result<crate::client::AlterAck> {
            self.0.patch_offsets(name, entries)
        }
        fn reset_offsets(&self, name: &str) -> crate::client::Result<crate::client::AlterAck> {
            self.0.reset_offsets(name)
        }
        fn stop(&self, name: &str) -> crate::client::Result<()> {
            self.0.stop(name)
        }
        fn pause(&self, name: &str) -> crate::client::Result<()> {
            self.0.pause(name)
        }
        fn resume(&self, name: &str) -> crate::client::Result<()> {
            self.0.resume(name)
        }
        fn create(
            &self,
            name: &str,
            config: &BTreeMap<String, String>,
            initial_state: Option<TargetState>,
        ) -> crate::client::Result<()> {
            self.0.create(name, config, initial_state)
        }
        fn create_at(
            &self,
            name: &str,
            config: &BTreeMap<String, String>,
            offsets: &[crate::model::PatchEntry],
        ) -> crate::client::Result<()> {
            self.0.create_at(name, config, offsets)
        }
        fn delete(&self, name: &str) -> crate::client::Result<()> {
            self.0.delete(name)
        }
        fn plugin_config(
            &self,
            class: &str,
        ) -> crate::client::Result<Vec<crate::client::ConfigDef>> {
            self.0.plugin_config(class)
        }
        fn definition(&self, name: &str) -> crate::client::Result<serde_json::Value> {
            self.0.definition(name)
        }
        fn create_from(&self, definition: &serde_json::Value) -> crate::client::Result<()> {
            self.0.create_from(definition)
        }
    }

    /// A running source `c` of the fake (its config: a file), and its offset in memory; the
    /// plan of a reset of its offsets, which the service makes by deleting and creating it.
    fn running_c() -> (FakeConnect, MemoryKafka, TopicPlan) {
        let fake = FakeConnect::builder()
            .connector(
                crate::fake::ConnectorSpec::source("c", "FileStreamSource")
                    .config("file", "/in.txt"),
            )
            .start();
        let key = r#"["c",{"filename":"/in.txt"}]"#.to_string();
        let topic = MemoryKafka::new(
            vec![(0, Some(key), Some(r#"{"position":7}"#.into()), 1)],
            false,
        );
        let found = find(&topic, "connect-offsets", &BTreeSet::new()).unwrap();
        let mut plan = orphaned::plan_reset("a", &found, &["c".to_string()]);
        assert_eq!(plan.writes.len(), 1);
        plan.recreated.insert("c".into());
        (fake, topic, plan)
    }

    fn open_recreating(fake: &FakeConnect, dir: &tempfile::TempDir) -> Operation {
        Operation::open(
            &StateDir::at(dir.path()),
            "a",
            &|| Ok(Box::new(Recreating(fake.client()))),
            &WaitPolicy::with_timeout(Duration::from_secs(5)),
            &ManualClock::default(),
        )
        .unwrap()
    }

    /// The connector is deleted before the write (the write would be refused while it
    /// exists) and created again after it with the same config, running; the journal, which
    /// held its definition meanwhile, is gone.
    #[test]
    fn a_running_connector_is_deleted_written_and_created_again_from_its_definition() {
        let (fake, topic, plan) = running_c();
        let config = fake.config("c").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let op = open_recreating(&fake, &dir);
        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true), &Unheard)
            .unwrap();
        let TopicRan::Done(done) = ran else {
            panic!("{ran:?}")
        };
        assert!(done.error.is_none(), "{:?}", done.error);
        assert_eq!(done.recreated, ["c"]);
        assert_eq!(topic.records.borrow().last().unwrap().2, None, "written");
        assert_eq!(fake.state("c"), Some(State::Running));
        assert_eq!(fake.config("c"), Some(config), "the same config");
        let changes: Vec<String> = fake
            .mutating_requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        assert_eq!(changes, ["DELETE /connectors/c", "POST /connectors"]);
        assert!(
            !StateDir::at(dir.path()).journal_path("a").exists(),
            "journal cleared"
        );
    }

    /// Creating it again fails after the write: the journal keeps its definition, and the
    /// next operation's recovery creates it from there, running, and clears the journal.
    #[test]
    fn a_connector_deleted_but_not_created_again_is_created_by_the_next_recovery() {
        let (fake, topic, plan) = running_c();
        let config = fake.config("c").unwrap();
        fake.fault(
            crate::fake::Fault::on("POST", "/connectors")
                .nth(1)
                .status(500),
        );
        let dir = tempfile::tempdir().unwrap();
        let op = open_recreating(&fake, &dir);
        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true), &Unheard)
            .unwrap();
        let TopicRan::Done(done) = ran else {
            panic!("{ran:?}")
        };
        let e = done.error.expect("the create failed").to_string();
        assert!(
            e.contains("creating `c` again") && e.contains("kco recover"),
            "{e}"
        );
        assert_eq!(fake.state("c"), None, "gone");
        let journal = journal::load(&StateDir::at(dir.path()), "a")
            .unwrap()
            .unwrap();
        let kept = &journal.connectors["c"];
        assert_eq!(
            kept.definition.as_ref().unwrap()["config"]["file"],
            "/in.txt"
        );
        drop(op);

        let op = open_recreating(&fake, &dir);
        let recovered = op.recovered().expect("recovered");
        assert_eq!(
            recovered.connectors[0].outcome,
            super::super::recover::RecoverOutcome::Recreated
        );
        assert_eq!(fake.state("c"), Some(State::Running));
        assert_eq!(fake.config("c"), Some(config));
        assert!(journal::load(&StateDir::at(dir.path()), "a")
            .unwrap()
            .is_none());
    }
}
