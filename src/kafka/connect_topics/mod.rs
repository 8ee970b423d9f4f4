//! A Kafka Connect cluster without a REST API (AWS MSK Connect, and other managed Connect
//! services that give only Kafka), read from its workers' internal topics: the connectors,
//! their configs and target states from the config topic (`config.storage.topic`), their
//! and their tasks' states from the status topic (`status.storage.topic`), in the formats
//! [`records`] describes. kco.yaml gives such a cluster no `urls`, but `kafka:` and
//! `connectTopics: {offsets, configs, status}`.
//!
//! [`ConnectTopics`] is the [`Service`] of those two topics; the CLI wraps it in
//! [`ThroughKafka`](super::through::ThroughKafka), which reads the offsets as for a worker
//! without the offsets endpoints (sources' from the offsets topic, sinks' from their consumer
//! groups). Each topic is read once per command, whole, the first time it is needed; the
//! status topic again only where a connector's state is transient (UNASSIGNED, RESTARTING)
//! and the command waits for it to settle, as it would read `GET .../status` again.
//!
//! The config topic does not say whether a connector is a source or a sink (Connect asks
//! its plugin class): [`connector_type`] tells it from the config.
//!
//! This service changes nothing: every call that would change a connector, or its offsets
//! through an API, is refused, naming the service and what to use instead, and nothing is
//! sent ([`Capabilities::read_only`]). Offsets are written beside it, through Kafka, for
//! connectors that do not run (`engine::through_kafka`, as on a worker without the offsets
//! endpoints).

pub mod records;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use records::{ConfigFold, ConfigTopic, StatusTopic};

use super::groups::{cluster_metadata, ClusterMetadata};
use super::topic_role::{Role, Tally};
use super::{KafkaError, KafkaOptions, RawRecord};
use crate::client::layers::Counter;
use crate::client::{
    connector_path, AlterAck, AlterKind, AlterRequest, AlterStatus, Backend, Capabilities,
    ChangeKind, ClientError, ConfigDef, ConnectorListing, ConnectorStatus, Method, OffsetsRead, Op,
    Request, ServerInfo, Service,
};
use crate::model::{ConnectorType, OffsetEntry, PatchEntry, TargetState};
use crate::shapes::Shapes;

type Result<T> = std::result::Result<T, ClientError>;

/// The workers' internal topics of a cluster read without a REST API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalTopics {
    /// `offset.storage.topic`: the source connectors' offsets.
    pub offsets: String,
    /// `config.storage.topic`: the connectors, their configs and target states.
    pub configs: String,
    /// `status.storage.topic`: the connectors' and tasks' states.
    pub status: String,
}

/// What to use instead of kco to change such a cluster's connectors.
pub use crate::client::CONNECT_TOPICS_INSTEAD as INSTEAD;

/// Where the topics' records come from: Kafka ([`KafkaSource`]), or memory in tests.
pub trait TopicSource: Send + Sync {
    /// The bootstrap address, for messages.
    fn bootstrap(&self) -> String;
    /// The Kafka cluster's id and its topics.
    fn describe(&self) -> std::result::Result<ClusterMetadata, KafkaError>;
    /// Every record of `topic`, each partition's in offset order, to the end each had when
    /// its read began.
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> std::result::Result<(), KafkaError>;
}

/// The topics of a Kafka cluster, read as `kafka:` in kco.yaml says.
pub struct KafkaSource(pub KafkaOptions);

impl TopicSource for KafkaSource {
    fn bootstrap(&self) -> String {
        self.0.bootstrap_display()
    }
    fn describe(&self) -> std::result::Result<ClusterMetadata, KafkaError> {
        cluster_metadata(&self.0)
    }
    fn scan(
        &self,
        topic: &str,
        visit: &mut dyn FnMut(RawRecord<'_>),
    ) -> std::result::Result<(), KafkaError> {
        super::scan_topic(&self.0, topic, &mut |_, r| visit(r)).map(|_| ())
    }
}

/// A connector's type, which the config topic does not record (Connect asks the plugin
/// class): a class that the offset shapes table in force knows (built in, or kco.yaml's
/// `shapes:`) has the type it gives there; any other is a sink when its config sets `topics`
/// or `topics.regex` (a sink must set one of them), else a source.
pub fn connector_type(config: &BTreeMap<String, String>, shapes: &Shapes) -> ConnectorType {
    let class = config.get("connector.class").map(String::as_str);
    let known = shapes
        .entries()
        .iter()
        .find(|s| class.is_some() && s.class.as_deref() == class);
    if let Some(shape) = known {
        return shape.connector_type;
    }
    let set = |k: &str| config.get(k).is_some_and(|v| !v.trim().is_empty());
    if set("topics") || set("topics.regex") {
        ConnectorType::Sink
    } else {
        ConnectorType::Source
    }
}

/// What one command has read of the topics, shared by the copies [`Service::counting`]
/// makes.
#[derive(Default)]
struct Read {
    info: Mutex<Option<ServerInfo>>,
    configs: Mutex<Option<Arc<ConfigTopic>>>,
    status: Mutex<Option<Arc<StatusTopic>>>,
}

/// A Connect cluster's connectors, read from its config and status topics.
#[derive(Clone)]
pub struct ConnectTopics {
    source: Arc<dyn TopicSource>,
    topics: InternalTopics,
    shapes: &'static Shapes,
    read: Arc<Read>,
}

impl ConnectTopics {
    /// What such a cluster can do ([`Backend::ConnectTopics`](crate::client::Backend)'s).
    pub const CAPABILITIES: Capabilities = crate::client::Backend::CONNECT_TOPICS;

    pub fn new(source: Arc<dyn TopicSource>, topics: InternalTopics) -> Self {
        Self::with_shapes(source, topics, crate::shapes::registry())
    }

    /// With `shapes` to tell connectors' types by ([`connector_type`]).
    pub fn with_shapes(
        source: Arc<dyn TopicSource>,
        topics: InternalTopics,
        shapes: &'static Shapes,
    ) -> Self {
        ConnectTopics {
            source,
            topics,
            shapes,
            read: Arc::default(),
        }
    }

    /// Checks that the Kafka cluster answers and has the three topics (one metadata
    /// request, whose cluster id [`Service::server_info`] then says).
    pub fn check(&self) -> std::result::Result<(), KafkaError> {
        let meta = self.source.describe()?;
        let t = &self.topics;
        for topic in [&t.configs, &t.status, &t.offsets] {
            if !meta.topics.contains(topic) {
                return Err(KafkaError::UnknownTopic {
                    topic: topic.clone(),
                    bootstrap: self.source.bootstrap(),
                });
            }
        }
        *lock(&self.read.info) = Some(self.info_of(meta));
        Ok(())
    }

    fn info_of(&self, meta: ClusterMetadata) -> ServerInfo {
        ServerInfo {
            version: Backend::ConnectTopics.service().to_string(),
            commit: None,
            kafka_cluster_id: meta.cluster_id,
        }
    }

    /// `kafka://<bootstrap>`, or that and the topic.
    fn place(&self, topic: Option<&str>) -> String {
        let at = format!("kafka://{}", self.source.bootstrap());
        match topic {
            Some(t) => format!("{at} (topic `{t}`)"),
            None => at,
        }
    }

    /// A read of `topic` failed: the error of the call `req` stood for.
    fn failed(&self, req: &Request, topic: &str, e: KafkaError) -> ClientError {
        ClientError::kafka(req, &self.place(Some(topic)), e.detail())
    }

    /// `topic`, read as `role`'s, unless it holds something else ([`Tally::check`]): then
    /// nothing read from it is used, and the error says what it holds and what to change.
    fn taken(&self, req: &Request, topic: &str, tally: &Tally, role: Role) -> Result<()> {
        tally.check(role).map_err(|holds| {
            let e = KafkaError::NotItsRole {
                topic: topic.to_string(),
                holds,
            };
            let mut err = ClientError::kafka(req, &self.place(Some(topic)), e.to_string());
            err.hint = e.hint().map(Box::new);
            err
        })
    }

    /// The config topic, read once.
    fn configs(&self, req: &Request) -> Result<Arc<ConfigTopic>> {
        let mut slot = lock(&self.read.configs);
        if let Some(c) = &*slot {
            return Ok(c.clone());
        }
        let topic = &self.topics.configs;
        let mut fold = ConfigFold::default();
        let mut tally = Tally::default();
        self.source
            .scan(topic, &mut |r| {
                tally.add(r.key);
                fold.record(r.key, r.value)
            })
            .map_err(|e| self.failed(req, topic, e))?;
        self.taken(req, topic, &tally, Role::Configs)?;
        let read = Arc::new(fold.finish());
        *slot = Some(read.clone());
        Ok(read)
    }

    /// The status topic: as read before, unless `again` (then read now, and kept).
    fn statuses(&self, req: &Request, again: bool) -> Result<Arc<StatusTopic>> {
        let mut slot = lock(&self.read.status);
        if let (Some(s), false) = (&*slot, again) {
            return Ok(s.clone());
        }
        let topic = &self.topics.status;
        let mut read = StatusTopic::default();
        let mut tally = Tally::default();
        self.source
            .scan(topic, &mut |r| {
                tally.add(r.key);
                read.record(r.key, r.value)
            })
            .map_err(|e| self.failed(req, topic, e))?;
        self.taken(req, topic, &tally, Role::Status)?;
        let read = Arc::new(read);
        *slot = Some(read.clone());
        Ok(read)
    }

    /// Connector `name`'s type, or the "no such connector" a worker answers (404).
    fn connector(&self, req: &Request, name: &str) -> Result<ConnectorType> {
        match self.configs(req)?.get(name) {
            Some(c) => Ok(connector_type(&c.config, self.shapes)),
            None => Err(ClientError::http(
                req,
                &self.place(Some(&self.topics.configs)),
                404,
                format!("Connector {name} not found"),
            )),
        }
    }

    /// A change refused: nothing sent.
    fn refuse<T>(&self, req: Request, what: &str) -> Result<T> {
        let url = format!("{}{}", self.place(None), req.path);
        let what = format!(
            "kco reads this cluster from its workers' internal topics, without a REST API: it cannot {what}; nothing was sent"
        );
        let mut e = ClientError::unsupported(&req, &url, Backend::ConnectTopics.service(), &what);
        e.hint = Some(Box::new(INSTEAD.to_string()));
        Err(e)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn on(method: Method, name: &str, tail: &str) -> Request {
    Request::new(method, format!("{}{tail}", connector_path(name))).about(name)
}

impl Service for ConnectTopics {
    fn backend(&self) -> &Backend {
        &Backend::ConnectTopics
    }
    fn capabilities(&self) -> Capabilities {
        Self::CAPABILITIES
    }
    /// None: kco only reads this cluster ([`Capabilities::read_only`]).
    fn steps(&self, _: ChangeKind) -> &'static [Op] {
        &[]
    }
    /// `kafka://<bootstrap>`: where the cluster is read (no credential).
    fn endpoint(&self) -> String {
        self.place(None)
    }
    /// The same service over what it has read; it sends nothing that changes anything.
    fn counting(&self) -> (Box<dyn Service>, Counter) {
        (Box::new(self.clone()), Counter::default())
    }
    /// No version to ask: the service's name, and the Kafka cluster's id (from
    /// [`ConnectTopics::check`], else one metadata request).
    fn server_info(&self) -> Result<ServerInfo> {
        if let Some(info) = &*lock(&self.read.info) {
            return Ok(info.clone());
        }
        let req = Request::new(Method::Get, "/");
        let meta = self
            .source
            .describe()
            .map_err(|e| ClientError::kafka(&req, &self.place(None), e.detail()))?;
        let info = self.info_of(meta);
        *lock(&self.read.info) = Some(info.clone());
        Ok(info)
    }
    /// Every connector of the config topic, with its state from the status topic (none
    /// where that topic holds none yet).
    fn list_connectors(&self) -> Result<BTreeMap<String, ConnectorListing>> {
        let req = Request::new(Method::Get, "/connectors?expand=status&expand=info");
        let configs = self.configs(&req)?;
        let statuses = self.statuses(&req, false)?;
        Ok(configs
            .iter()
            .map(|(name, c)| {
                let kind = connector_type(&c.config, self.shapes);
                let listing = ConnectorListing {
                    name: name.clone(),
                    connector_type: Some(kind),
                    class: c.config.get("connector.class").cloned(),
                    config: c.config.clone(),
                    status: statuses.status_of(name, kind),
                };
                (name.clone(), listing)
            })
            .collect())
    }
    fn connector_names(&self) -> Result<Vec<String>> {
        let req = Request::new(Method::Get, "/connectors");
        Ok(self.configs(&req)?.keys().cloned().collect())
    }
    /// From the status topic as read, or read again where the state read is transient.
    fn status(&self, name: &str) -> Result<ConnectorStatus> {
        let req = on(Method::Get, name, "/status");
        let kind = self.connector(&req, name)?;
        let mut status = self.statuses(&req, false)?.status_of(name, kind);
        let transient = |s: &ConnectorStatus| s.state.is_some_and(|s| s.is_transient());
        if status.as_ref().is_some_and(transient) {
            status = self.statuses(&req, true)?.status_of(name, kind);
        }
        status.ok_or_else(|| {
            ClientError::http(
                &req,
                &self.place(Some(&self.topics.status)),
                404,
                format!("No status found for connector {name}"),
            )
        })
    }
    /// Not read here: the offsets come from [`ThroughKafka`](super::through::ThroughKafka),
    /// which this service is wrapped in.
    fn offsets(&self, name: &str) -> Result<Vec<OffsetEntry>> {
        self.refuse(on(Method::Get, name, "/offsets"), "read offsets by itself")
    }
    fn offsets_read(&self, name: &str) -> Result<OffsetsRead> {
        self.refuse(on(Method::Get, name, "/offsets"), "read offsets by itself")
    }
    fn request_alter(
        &self,
        name: &str,
        kind: AlterKind,
        entries: &[PatchEntry],
    ) -> Result<AlterRequest> {
        let _ = (kind, entries);
        self.refuse(
            on(Method::Post, name, "/offsets/request"),
            "alter a connector's offsets",
        )
    }
    fn alter_status(&self, name: &str) -> Result<AlterStatus> {
        self.refuse(
            on(Method::Get, name, "/offsets/request/status"),
            "alter a connector's offsets",
        )
    }
    fn patch_offsets(&self, name: &str, entries: &[PatchEntry]) -> Result<AlterAck> {
        let _ = entries;
        self.refuse(
            on(Method::Patch, name, "/offsets"),
            "alter a connector's offsets",
        )
    }
    fn reset_offsets(&self, name: &str) -> Result<AlterAck> {
        self.refuse(
            on(Method::Delete, name, "/offsets"),
            "reset a connector's offsets",
        )
    }
    fn stop(&self, name: &str) -> Result<()> {
        self.refuse(on(Method::Put, name, "/stop"), "stop a connector")
    }
    fn pause(&self, name: &str) -> Result<()> {
        self.refuse(on(Method::Put, name, "/pause"), "pause a connector")
    }
    fn resume(&self, name: &str) -> Result<()> {
        self.refuse(on(Method::Put, name, "/resume"), "resume a connector")
    }
    fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial_state: Option<TargetState>,
    ) -> Result<()> {
        let _ = (config, initial_state);
        let req = Request::new(Method::Post, "/connectors").about(name);
        self.refuse(req, "create a connector")
    }
    fn create_at(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        offsets: &[PatchEntry],
    ) -> Result<()> {
        let _ = (config, offsets);
        let req = Request::new(Method::Post, "/connectors").about(name);
        self.refuse(req, "create a connector")
    }
    fn delete(&self, name: &str) -> Result<()> {
        self.refuse(on(Method::Delete, name, ""), "delete a connector")
    }
    fn plugin_config(&self, class: &str) -> Result<Vec<ConfigDef>> {
        let req = Request::new(
            Method::Get,
            format!("/connector-plugins/{class}/config/validate"),
        );
        self.refuse(req, "read a plugin's config definitions")
    }
}
