//! The guarded operation's run for writes to Connect's offsets topic and the sinks' groups:
//! `kco reset --orphaned` (the offsets of deleted connectors), an apply or reset on a cluster
//! read through Kafka (`engine::through_kafka`), and their undo. No connector is stopped, so
//! nothing is journaled; under the cluster's lock, each key's value is backed up before the
//! first write, the names are checked to have no connector right before it (or, for an apply,
//! one still STOPPED), and every key is read back.

use super::{Operation, Settings};
use crate::engine::apply::{backup, BackupReport};
use crate::engine::orphaned::{
    self, GroupWrite, OffsetsTopic, Purpose, TopicPlan, TopicWrite, Written,
};
use crate::error::{Error, ResetRoute, Result};
use crate::model::ConnectorState;

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
}

impl Operation {
    /// Confirms, backs up and writes `plan` to the offsets topic through `topic`, then reads
    /// every key back. Refused, nothing written, while a connector of the cluster has one of
    /// the plan's names (it would write the same keys): listed again just before the write.
    pub fn run_topic(
        &self,
        plan: &TopicPlan,
        settings: &Settings,
        topic: &dyn OffsetsTopic,
        confirm: &mut dyn FnMut(&TopicPlan) -> Result<bool>,
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
        let live = self.client.list_connectors().map_err(|e| {
            Error::client(
                format!("cluster `{}`: listing its connectors", self.cluster),
                e,
            )
        })?;
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
        let now = crate::clock::now();
        let stamp = crate::clock::rfc3339(now);
        let dir = match &settings.backup_dir {
            Some(d) => d.clone(),
            None => self.state.new_backup_dir(&self.cluster, now),
        };
        let backup = backup::write_topic(
            &self.cluster,
            &self.client.endpoint(),
            &plan.topic,
            (&plan.backup_records(), &plan.backup_groups()),
            &dir,
            &stamp,
        )?;
        let millis = now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let done = |written, (mismatched, mismatched_groups), error| {
            Ok(TopicRan::Done(Box::new(TopicDone {
                backup: backup.clone(),
                written,
                mismatched,
                mismatched_groups,
                error,
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;
    use crate::engine::operation::StateDir;
    use crate::engine::orphaned::memory::MemoryKafka;
    use crate::engine::orphaned::{find, find_sinks, plan_restore};
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
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true))
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
            .run_topic(&plan, &dry, &topic, &mut |_| Ok(true))
            .unwrap();
        assert!(matches!(ran, TopicRan::DryRun));
        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(false))
            .unwrap();
        assert!(matches!(ran, TopicRan::Declined));
        assert_eq!(topic.records.borrow().len(), 1);

        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true))
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
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true))
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
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true))
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
}
