//! The guarded operation's run for writes to Connect's offsets topic: `kco reset --orphaned`
//! (the offsets of deleted connectors) and its undo. No connector is stopped, so nothing is
//! journaled; under the cluster's lock, each key's value is backed up before the first write,
//! the names are checked to have no connector right before it, and every key is read back.

use super::{Operation, Settings};
use crate::engine::apply::{backup, BackupReport};
use crate::engine::orphaned::{self, OffsetsTopic, TopicPlan, TopicWrite};
use crate::error::{Error, Result};

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
    /// Writes whose key, read back, does not hold the value written.
    pub mismatched: Vec<TopicWrite>,
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
        if plan.writes.is_empty() {
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
        let present: Vec<String> = plan
            .names
            .iter()
            .filter(|n| live.contains_key(*n))
            .cloned()
            .collect();
        if !present.is_empty() {
            return Err(Error::ConnectorsExist {
                cluster: self.cluster.clone(),
                topic: plan.topic.clone(),
                names: present,
            });
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
            &plan.backup_records(),
            &dir,
            &stamp,
        )?;
        let kafka =
            |what: &str| format!("cluster `{}`: {what} topic `{}`", self.cluster, plan.topic);
        let millis = now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let done = |mismatched, error| {
            Ok(TopicRan::Done(Box::new(TopicDone {
                backup: backup.clone(),
                mismatched,
                error,
            })))
        };
        if let Err(source) = orphaned::write(topic, plan, millis) {
            let context = kafka("writing to");
            return done(Vec::new(), Some(Error::Kafka { context, source }));
        }
        match orphaned::verify(topic, plan) {
            Ok(mismatched) => done(mismatched, None),
            Err(source) => {
                let context = kafka("reading back");
                done(Vec::new(), Some(Error::Kafka { context, source }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;
    use crate::engine::operation::StateDir;
    use crate::engine::orphaned::find;
    use crate::fake::{FakeConnect, State};
    use crate::kafka::{KafkaError, OutRecord, RawRecord};
    use crate::wait::{ManualClock, WaitPolicy};

    /// One source offset left by `gone` in memory; what is written is kept.
    struct Topic(RefCell<Vec<(i32, String, Option<String>)>>);

    impl Topic {
        fn new() -> Self {
            let key = r#"["gone",{"filename":"/a"}]"#.to_string();
            Topic(RefCell::new(vec![(
                2,
                key,
                Some(r#"{"position":42}"#.into()),
            )]))
        }
    }

    impl OffsetsTopic for Topic {
        fn scan(
            &self,
            _: &str,
            visit: &mut dyn FnMut(i32, RawRecord<'_>),
        ) -> std::result::Result<(), KafkaError> {
            for (i, (p, k, v)) in self.0.borrow().iter().enumerate() {
                visit(
                    *p,
                    RawRecord {
                        offset: i as i64,
                        timestamp_ms: 1,
                        key: Some(k.as_bytes()),
                        value: v.as_deref().map(str::as_bytes),
                    },
                );
            }
            Ok(())
        }

        fn write(
            &self,
            _: &str,
            records: &[OutRecord],
            _: i64,
        ) -> std::result::Result<(), KafkaError> {
            let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
            self.0.borrow_mut().extend(
                records
                    .iter()
                    .map(|r| (r.partition, text(&r.key), r.value.as_deref().map(text))),
            );
            Ok(())
        }
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
        let topic = Topic::new();
        let found = find(&topic, "t", &BTreeSet::new()).unwrap();
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
        assert_eq!(topic.0.borrow().len(), 1, "nothing written");
        assert!(!dir.path().join("backup").exists(), "nothing backed up");
    }

    #[test]
    fn the_keys_are_backed_up_as_they_were_before_they_are_written_and_read_back() {
        let topic = Topic::new();
        let found = find(&topic, "t", &BTreeSet::new()).unwrap();
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
        assert_eq!(topic.0.borrow().len(), 1);

        let ran = op
            .run_topic(&plan, &settings(&dir), &topic, &mut |_| Ok(true))
            .unwrap();
        let TopicRan::Done(done) = ran else {
            panic!("{ran:?}")
        };
        assert!(done.error.is_none() && done.mismatched.is_empty());
        assert_eq!(topic.0.borrow().last().unwrap().2, None, "a null value");
        let marker = backup::read_marker(&done.backup.dir).unwrap();
        assert_eq!(marker.offsets_topic.as_deref(), Some(plan.topic.as_str()));
        let kept = backup::read_topic(&done.backup.dir).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].partition, 2);
        assert_eq!(kept[0].value.as_deref(), Some(r#"{"position":42}"#));
    }
}
