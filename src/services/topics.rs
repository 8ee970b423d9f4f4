//! A Connect cluster without a REST API (kco.yaml gives it no `urls`, but `kafka:` and
//! `connectTopics: {offsets, configs, status}`): read from its workers' internal topics, its
//! offsets through Kafka as a worker's without the offsets endpoints.

use std::sync::Arc;

use super::{Kind, Wiring};
use crate::client::{Backend, Service};
use crate::config::ClusterTarget;
use crate::error::{Error, Result};
use crate::kafka::connect_topics::{ConnectTopics, KafkaSource};
use crate::kafka::through::ThroughKafka;

pub(super) const KIND: Kind = Kind {
    serves: |b| matches!(b, Backend::ConnectTopics),
    connect: |w, target, _| build(w, target),
    once: build,
};

/// The Kafka cluster is asked at once whether it has the three topics: an unreachable broker
/// or a missing topic fails here, naming the bootstrap address and the topic.
fn build(w: &Wiring, target: &ClusterTarget) -> Result<Box<dyn Service>> {
    let env = |k: &str| std::env::var(k).ok();
    let kafka = w.config.dr_settings(&target.name, &env)?.kafka;
    let topics = w.config.internal_topics(&target.name);
    let (Some(kafka), Some(topics)) = (kafka, topics) else {
        return Err(Error::Other(format!(
            "cluster `{}` has no `urls`, and kco.yaml gives it no `kafka:` and `connectTopics: {{offsets, configs, status}}` to read it from",
            target.name
        )));
    };
    if w.config.recreates(&target.name) {
        return Err(Error::Other(format!(
            "cluster `{}`: `connectTopics.recreate` needs its `urls`: kco deletes and creates the connectors through Connect's REST API, which kco.yaml does not give it",
            target.name
        )));
    }
    let service = ConnectTopics::new(Arc::new(KafkaSource(kafka.clone())), topics.clone());
    service.check().map_err(|source| Error::Kafka {
        context: format!(
            "cluster `{}`, read from topics `{}`, `{}` and `{}`",
            target.name, topics.configs, topics.status, topics.offsets
        ),
        source,
    })?;
    Ok(Box::new(ThroughKafka::new(
        Box::new(service),
        kafka,
        topics.offsets,
    )))
}
