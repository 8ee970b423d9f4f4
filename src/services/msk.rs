//! Amazon MSK Connect (`mskConnect:` in kco.yaml): its connectors through its control plane,
//! signed with credentials from AWS's default chain (or `mskConnect.profile`) in the region
//! the entry, the environment or the profile names; their offsets through the Kafka they use
//! (`kafka:`) in the offsets topic their worker configuration pins (`connectTopics.offsets`).
//! A change deletes the connector, keeping its definition in the journal, writes its offsets
//! and creates it again (`client::steps::recreated_around_a_kafka_write`).

use super::{Kind, Wiring};
use crate::aws::CredentialSource;
use crate::client::msk_connect::{MskConnect, MskOptions, MskService};
use crate::client::{Backend, Service};
use crate::config::ClusterTarget;
use crate::error::{Error, Result};
use crate::kafka::through::ThroughKafka;

pub(super) const KIND: Kind = Kind {
    serves: |b| matches!(b, Backend::MskConnect(_)),
    connect: |w, target, _| build(w, target),
    once: build,
};

fn build(w: &Wiring, target: &ClusterTarget) -> Result<Box<dyn Service>> {
    let Backend::MskConnect(site) = &target.backend else {
        unreachable!("the kind serves MSK Connect clusters only")
    };
    let name = &target.name;
    let env = |k: &str| std::env::var(k).ok();
    let region = crate::aws::region(site.region.as_deref(), site.profile.as_deref(), &env)
        .ok_or_else(|| {
            Error::Other(format!(
                "cluster `{name}`: no AWS region for MSK Connect (hint: set `mskConnect.region` in kco.yaml, AWS_REGION, or the profile's `region`)"
            ))
        })?;
    let source = match &site.profile {
        Some(p) => CredentialSource::Profile(p.clone()),
        None => CredentialSource::DefaultChain,
    };
    let found = crate::aws::credentials(&source, &region.name).map_err(|e| {
        Error::Other(format!(
            "cluster `{name}`: MSK Connect in {}: {e} (hint: {})",
            region.name,
            e.hint()
        ))
    })?;
    let mut opts = MskOptions::new(region.name.clone(), found.credentials);
    opts.credentials_from = Some(found.from.clone());
    opts.endpoint = site.endpoint.clone();
    opts.timeout = target.http.timeout;
    let api = MskConnect::new(opts).map_err(|e| {
        Error::Other(format!(
            "cluster `{name}`: MSK Connect in {}: {e}",
            region.name
        ))
    })?;
    if let Some(trace) = &w.trace {
        trace(&format!(
            "cluster `{name}`: MSK Connect in {}, credentials from {}",
            region.name, found.from
        ));
    }
    let kafka = w.config.dr_settings(name, &env)?.kafka;
    let topic = w.config.offsets_topic(name).map(str::to_string);
    let (Some(kafka), Some(topic)) = (kafka, topic) else {
        return Err(Error::Other(format!(
            "cluster `{name}` (`mskConnect:`) needs `kafka:` and `connectTopics.offsets`"
        )));
    };
    let service = MskService::new(api, target.backend.clone(), topic.clone());
    Ok(Box::new(
        ThroughKafka::new(Box::new(service), kafka, topic).recreating(true),
    ))
}
