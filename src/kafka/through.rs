//! A Kafka Connect cluster whose offsets kco reads through Kafka itself: a worker without the
//! offsets REST endpoints (Kafka 3.4 and older, Confluent Platform 7.4 and older), whose
//! cluster kco.yaml gives a `kafka:` and the workers' offsets topic (`connectTopics.offsets`).
//!
//! The REST API still lists the connectors, their configs and states, and changes their
//! lifecycle; only the offsets come from Kafka: a source connector's from the offsets topic
//! (the last record of each key, [`connect_offsets`](super::connect_offsets)), a sink's from
//! its consumer group's committed offsets (`connect-<name>`, or its
//! `consumer.override.group.id`), in the shapes the REST API of a newer worker answers with.
//! The offsets topic is read once per command, the first time a source's offsets are asked.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::connect_offsets::{read_source_offsets, SourceOffsets};
use super::groups::{consumer_group, describe};
use super::KafkaOptions;
use crate::client::layers::Counter;
use crate::client::{
    connector_path, AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities,
    ChangeKind, ClientError, ConfigDef, ConnectorListing, ConnectorStatus, Method, OffsetsRead, Op,
    Request, ServerInfo, Service,
};
use crate::model::{ConnectorType, Fields, OffsetEntry, PatchEntry, TargetState};

type Result<T> = std::result::Result<T, ClientError>;

/// A Connect cluster over `rest` whose offsets are read through Kafka.
pub struct ThroughKafka {
    rest: Box<dyn Service>,
    kafka: KafkaOptions,
    topic: String,
    /// Each offsets topic as read, once per command: the workers', and a connector's own
    /// (`offsets.storage.topic` in its config, KIP-618).
    sources: Mutex<BTreeMap<String, Arc<SourceOffsets>>>,
    /// The cluster's connectors as last listed (through this service or for a read): a
    /// connector's type and config say where its offsets are.
    listing: Mutex<Option<Arc<BTreeMap<String, ConnectorListing>>>>,
    /// kco deletes a connector a write changes and creates it again after
    /// (`connectTopics.recreate`): the steps of `steps::recreated_around_a_kafka_write`.
    recreate: bool,
}

impl ThroughKafka {
    pub fn new(rest: Box<dyn Service>, kafka: KafkaOptions, topic: String) -> Self {
        ThroughKafka {
            rest,
            kafka,
            topic,
            sources: Mutex::new(BTreeMap::new()),
            listing: Mutex::new(None),
            recreate: false,
        }
    }

    /// The same, deleting each connector a write changes and creating it again from its
    /// definition once written (its REST API's delete and create), where `recreate`.
    pub fn recreating(mut self, recreate: bool) -> Self {
        self.recreate = recreate;
        self
    }

    /// The listing to read a connector's type and config from: the last one, else a new one,
    /// asked once however many reads want it at the same time (they wait for it).
    fn listed(&self) -> Result<Arc<BTreeMap<String, ConnectorListing>>> {
        let mut slot = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = &*slot {
            return Ok(l.clone());
        }
        let listing = Arc::new(self.rest.list_connectors()?);
        *slot = Some(listing.clone());
        Ok(listing)
    }

    /// Where the offsets are, for messages: `kafka://<bootstrap>` and the topic or group.
    fn place(&self, what: &str) -> String {
        format!("kafka://{} ({what})", self.kafka.bootstrap_display())
    }

    /// Every connector's source offsets in `topic`, read the first time one is asked.
    fn topic_offsets(&self, topic: &str, name: &str) -> Result<Arc<SourceOffsets>> {
        let mut read = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(all) = read.get(topic) {
            return Ok(all.clone());
        }
        let all = read_source_offsets(&self.kafka, topic).map_err(|e| {
            let place = self.place(&format!("topic `{topic}`"));
            let mut err = ClientError::kafka(&offsets_request(name), &place, e.detail());
            err.hint = e.hint().map(Box::new);
            err
        })?;
        let all = Arc::new(all);
        read.insert(topic.to_string(), all.clone());
        Ok(all)
    }

    /// A source's offsets: those of the workers' offsets topic, and, for a connector with an
    /// offsets topic of its own (`offsets.storage.topic`, KIP-618), those of its topic over
    /// them, partition by partition, as the worker reads them (its own store first, the
    /// workers' for a partition it lacks).
    fn source_offsets(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<Vec<OffsetEntry>> {
        let mut by_partition: BTreeMap<String, (Value, Value)> = BTreeMap::new();
        let own = own_offsets_topic(config, &self.topic);
        let topics = std::iter::once(self.topic.as_str()).chain(own);
        for topic in topics {
            let all = self.topic_offsets(topic, name)?;
            for (p, o) in all.get(name).into_iter().flatten() {
                let key = crate::model::canonical_json(p);
                by_partition.insert(key, (p.clone(), o.clone()));
            }
        }
        by_partition
            .into_values()
            .map(|(p, o)| entry(name, p, o))
            .collect()
    }

    fn sink_offsets(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<Vec<OffsetEntry>> {
        let group = consumer_group(name, config);
        let state = describe(&self.kafka, &group).map_err(|e| {
            let place = self.place(&format!("consumer group `{group}`"));
            ClientError::kafka(&offsets_request(name), &place, e.detail())
        })?;
        state
            .offsets
            .iter()
            .map(|c| {
                entry(
                    name,
                    json!({"kafka_topic": c.topic, "kafka_partition": c.partition}),
                    json!({"kafka_offset": c.offset}),
                )
            })
            .collect()
    }
}

/// A source connector's own offsets topic (`offsets.storage.topic` in its config, KIP-618),
/// when it is not the workers' `workers_topic`.
pub fn own_offsets_topic<'a>(
    config: &'a BTreeMap<String, String>,
    workers_topic: &str,
) -> Option<&'a str> {
    config
        .get("offsets.storage.topic")
        .map(|t| t.trim())
        .filter(|t| !t.is_empty() && *t != workers_topic)
}

/// The call a read of `name`'s offsets stands for, in messages.
fn offsets_request(name: &str) -> Request {
    Request::new(Method::Get, format!("{}/offsets", connector_path(name))).about(name)
}

fn entry(name: &str, partition: Value, offset: Value) -> Result<OffsetEntry> {
    let fields = |v: Value| -> Result<Fields> {
        serde_json::from_value(v.clone()).map_err(|e| {
            ClientError::decode(
                &offsets_request(name),
                "the offsets topic",
                format!("{v} is not an offset kco can hold: {e}"),
            )
        })
    };
    Ok(OffsetEntry {
        partition: fields(partition)?,
        offset: fields(offset)?,
    })
}

impl Service for ThroughKafka {
    fn backend(&self) -> &Backend {
        self.rest.backend()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            offsets_through_kafka: true,
            ..self.rest.capabilities()
        }
    }
    /// Its REST API's: kco's apply writes the offsets topic instead (`engine::through_kafka`);
    /// with `connectTopics.recreate`, around a delete and a create of the connector.
    fn steps(&self, change: ChangeKind) -> &'static [Op] {
        match self.recreate {
            true => crate::client::steps::recreated_around_a_kafka_write(change),
            false => self.rest.steps(change),
        }
    }
    fn endpoint(&self) -> String {
        self.rest.endpoint()
    }
    fn counting(&self) -> (Box<dyn Service>, Counter) {
        let (rest, counter) = self.rest.counting();
        let counted = ThroughKafka::new(rest, self.kafka.clone(), self.topic.clone())
            .recreating(self.recreate);
        (Box::new(counted), counter)
    }
    fn server_info(&self) -> Result<ServerInfo> {
        self.rest.server_info()
    }
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        let listing = self.rest.list_connectors()?;
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(listing.clone()));
        Ok(listing)
    }
    fn connector_names(&self) -> Result<Vec<String>> {
        self.rest.connector_names()
    }
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        self.rest.status(name)
    }
    /// A source's offsets from the offsets topic, a sink's from its group; its type and
    /// config from the listing (the one the command made, else a new one), and a connector
    /// the listing lacks from its status (an unknown one is the REST API's 404).
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        let listed = self.listed()?;
        let (kind, config) = match listed.get(name) {
            Some(l) => (l.connector_type, l.config.clone()),
            // Created since the listing: its status says its type (or the 404).
            None => {
                let status = self.rest.status(name)?;
                let config = self.list_connectors()?.remove(name).map(|l| l.config);
                (status.connector_type, config.unwrap_or_default())
            }
        };
        match kind {
            Some(ConnectorType::Source) => self.source_offsets(name, &config),
            Some(ConnectorType::Sink) => self.sink_offsets(name, &config),
            None => Err(ClientError::decode(
                &offsets_request(name),
                &self.rest.endpoint(),
                "Connect says neither source nor sink (is its plugin installed on the worker?): kco cannot tell where its offsets are",
            )),
        }
    }
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        Ok(OffsetsRead {
            entries: self.offsets(name)?,
            observed_at: None,
        })
    }
    fn request_alter(
        &self,
        name: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> Result<AlterRequest> {
        self.rest.request_alter(name, kind, entries)
    }
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        self.rest.alter_status(name)
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<AlterAck> {
        self.rest.patch_offsets(name, entries)
    }
    fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        self.rest.reset_offsets(name)
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.rest.stop(name)
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.rest.pause(name)
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.rest.resume(name)
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        self.rest.create(name, config, initial_state)
    }
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()> {
        self.rest.create_at(name, config, offsets)
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.rest.delete(name)
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        self.rest.plugin_config(class)
    }
    fn definition(&self, name: &str) -> Result<serde_json::Value> {
        self.rest.definition(name)
    }
    fn create_from(&self, definition: &serde_json::Value) -> Result<()> {
        self.rest.create_from(definition)
    }
}
