//! What a topic given as one of Connect's internal topics holds, told from its records' keys
//! before kco trusts it: a status topic given as the config topic lists no connector, and a
//! data topic given as the offsets topic holds no offset of any connector, so a snapshot
//! taken through either would empty every backup file without an error.
//!
//! The workers write each internal topic's keys in a shape of its own (Apache Kafka's
//! `KafkaConfigBackingStore`, `KafkaStatusBackingStore`, `OffsetStorageWriter`):
//! - config topic (`config.storage.topic`): `connector-<name>`, `target-state-<name>`,
//!   `task-<name>-<n>`, `commit-<name>`, `session-key`, `restart-connector-<name>`,
//!   `tasks-fencing-<name>`, `logger-cluster-<namespace>`;
//! - status topic (`status.storage.topic`): `status-connector-<name>`,
//!   `status-task-<name>-<n>`, `status-topic-<topic>:connector-<name>`;
//! - offsets topic (`offset.storage.topic`): `["<connector>", {partition}]` in JSON.
//!
//! A topic is taken for its role unless most of its records have keys of another shape; an
//! empty topic is a new cluster's and is taken.

use std::fmt;

use serde_json::Value;

/// One of the workers' three internal topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Offsets,
    Configs,
    Status,
}

impl Role {
    /// Its key under `connectTopics:` in kco.yaml.
    pub fn key(self) -> &'static str {
        match self {
            Role::Offsets => "offsets",
            Role::Configs => "configs",
            Role::Status => "status",
        }
    }

    /// The worker's property that names it.
    pub fn property(self) -> &'static str {
        match self {
            Role::Offsets => "offset.storage.topic",
            Role::Configs => "config.storage.topic",
            Role::Status => "status.storage.topic",
        }
    }

    /// Its name in prose.
    fn name(self) -> &'static str {
        match self {
            Role::Offsets => "offsets",
            Role::Configs => "config",
            Role::Status => "status",
        }
    }

    /// What its records are.
    fn records(self) -> &'static str {
        match self {
            Role::Offsets => "source offsets",
            Role::Configs => "connector configs",
            Role::Status => "connector and task states",
        }
    }
}

/// The key of a record of the offsets topic: its connector and source partition; `None` for
/// a key of another shape.
pub fn offset_key(key: &[u8]) -> Option<(String, Value)> {
    let key: Value = serde_json::from_slice(key).ok()?;
    let [name, partition] = key.as_array()?.as_slice() else {
        return None;
    };
    let name = name.as_str()?.to_string();
    partition.is_object().then(|| (name, partition.clone()))
}

/// The role whose records have keys like `key`, if any.
fn role_of(key: &[u8]) -> Option<Role> {
    const CONFIGS: &[&str] = &[
        "connector-",
        "target-state-",
        "task-",
        "commit-",
        "session-key",
        "restart-connector-",
        "tasks-fencing-",
        "logger-cluster-",
    ];
    const STATUS: &[&str] = &["status-connector-", "status-task-", "status-topic-"];
    if let Ok(text) = std::str::from_utf8(key) {
        if STATUS.iter().any(|p| text.starts_with(p)) {
            return Some(Role::Status);
        }
        if CONFIGS.iter().any(|p| text.starts_with(p)) {
            return Some(Role::Configs);
        }
    }
    offset_key(key).map(|_| Role::Offsets)
}

/// How many records of a topic have keys of each role's shape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub records: u64,
    pub offsets: u64,
    pub configs: u64,
    pub status: u64,
}

impl Tally {
    /// One record's key.
    pub fn add(&mut self, key: Option<&[u8]>) {
        self.records += 1;
        match key.and_then(role_of) {
            Some(Role::Offsets) => self.offsets += 1,
            Some(Role::Configs) => self.configs += 1,
            Some(Role::Status) => self.status += 1,
            None => {}
        }
    }

    fn of(&self, role: Role) -> u64 {
        match role {
            Role::Offsets => self.offsets,
            Role::Configs => self.configs,
            Role::Status => self.status,
        }
    }

    /// Whether the topic can be taken as `role`'s: empty, or most of its records of that
    /// role's shape; else what it holds instead.
    pub fn check(&self, role: Role) -> Result<(), Holds> {
        if self.records == 0 || self.of(role) * 2 > self.records {
            return Ok(());
        }
        let other = [Role::Offsets, Role::Configs, Role::Status]
            .into_iter()
            .filter(|r| *r != role)
            .max_by_key(|r| self.of(*r))
            .filter(|r| self.of(*r) * 2 > self.records);
        Err(Holds {
            role,
            tally: *self,
            other,
        })
    }
}

/// A topic given as `role`'s that holds something else: what [`Tally::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holds {
    pub role: Role,
    pub tally: Tally,
    /// The role most of its records are of, if one is.
    pub other: Option<Role>,
}

impl Holds {
    /// What to change in kco.yaml.
    pub fn hint(&self) -> String {
        let set = format!(
            "set the cluster's `connectTopics.{}` in kco.yaml to the workers' `{}`",
            self.role.key(),
            self.role.property()
        );
        match self.other {
            Some(other) => format!(
                "{set}: it names the workers' `{}` (`connectTopics.{}` and `connectTopics.{}` swapped?)",
                other.property(),
                self.role.key(),
                other.key()
            ),
            None => set,
        }
    }
}

impl fmt::Display for Holds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.tally;
        let what = match self.other {
            Some(other) => format!("the {} topic's records ({})", other.name(), other.records()),
            None => "records that are not Connect's (a data topic?)".to_string(),
        };
        write!(
            f,
            "the topic is given as the workers' {} topic (`{}`), but holds {what}: {} of its {} are {}",
            self.role.name(),
            self.role.property(),
            self.tally.of(self.role),
            crate::text::count(t.records as usize, "record"),
            self.role.records()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(keys: &[&str]) -> Tally {
        let mut t = Tally::default();
        for k in keys {
            t.add(Some(k.as_bytes()));
        }
        t
    }

    #[test]
    fn an_empty_topic_or_one_of_its_role_is_taken() {
        assert_eq!(Tally::default().check(Role::Configs), Ok(()));
        let configs = tally(&[
            "session-key",
            "connector-a",
            "target-state-a",
            "task-a-0",
            "commit-a",
        ]);
        assert_eq!(configs.check(Role::Configs), Ok(()));
        let status = tally(&[
            "status-connector-a",
            "status-task-a-0",
            "status-topic-t:connector-a",
        ]);
        assert_eq!(status.check(Role::Status), Ok(()));
        let offsets = tally(&[r#"["a",{"f":1}]"#, r#"["a",{"f":2}]"#, "junk"]);
        assert_eq!(
            offsets.check(Role::Offsets),
            Ok(()),
            "a minority of other records is left out"
        );
    }

    #[test]
    fn a_status_topic_given_as_the_config_topic_is_named_as_swapped() {
        let status = tally(&["status-connector-a", "status-task-a-0"]);
        let holds = status.check(Role::Configs).unwrap_err();
        assert_eq!(holds.other, Some(Role::Status));
        let said = holds.to_string();
        assert!(said.contains("holds the status topic's records"), "{said}");
        assert!(
            said.contains("0 of its 2 records are connector configs"),
            "{said}"
        );
        assert!(holds
            .hint()
            .contains("`connectTopics.configs` and `connectTopics.status` swapped?"));
        // And the other way round.
        let configs = tally(&["connector-a", "target-state-a"]);
        assert_eq!(
            configs.check(Role::Status).unwrap_err().other,
            Some(Role::Configs)
        );
    }

    #[test]
    fn a_data_topic_given_as_the_offsets_topic_is_refused() {
        let data = tally(&["1001", "1002", r#"{"id":3}"#, r#"["a",{"f":1}]"#]);
        let holds = data.check(Role::Offsets).unwrap_err();
        assert_eq!(holds.other, None);
        assert!(holds.to_string().contains("not Connect's (a data topic?)"));
        assert!(holds
            .to_string()
            .contains("1 of its 4 records are source offsets"));
        let mut keyless = Tally::default();
        keyless.add(None);
        assert!(
            keyless.check(Role::Offsets).is_err(),
            "records without keys are no offsets"
        );
    }

    #[test]
    fn offset_keys_are_a_name_and_a_map() {
        assert_eq!(
            offset_key(br#"["src",{"filename":"/a"}]"#),
            Some(("src".into(), serde_json::json!({"filename": "/a"})))
        );
        for k in [r#"["src"]"#, r#"["src","x"]"#, r#"[1,{}]"#, "connector-a"] {
            assert_eq!(offset_key(k.as_bytes()), None, "{k}");
        }
    }
}
