//! Who is at the other end: `GET /`, and whether its Connect version can do what is asked.

use crate::client::{ConnectVersion, ServerInfo, Service};
use crate::error::{Error, Result};

/// What `GET /` said, with the version parsed.
#[derive(Debug, Clone)]
pub struct ClusterInfo {
    pub info: ServerInfo,
    pub version: ConnectVersion,
    pub url: String,
}

/// Reads `GET /` and checks that offsets can at least be read (Connect 3.5+). A service
/// without `GET /` (Confluent Cloud) is not asked: the command's first request, the listing,
/// proves that it answers and takes the credentials; it has no version to check.
pub fn probe(client: &dyn Service) -> Result<ClusterInfo> {
    let info = client
        .server_info()
        .map_err(|e| Error::client(e.first_contact(), e))?;
    let caps = client.capabilities();
    if !caps.version_endpoint {
        return Ok(ClusterInfo {
            info,
            version: ConnectVersion::MANAGED,
            url: client.endpoint(),
        });
    }
    if caps.offsets_through_kafka {
        // Read through Kafka: the worker's own offsets endpoints are not needed.
        return parsed(info, client.endpoint());
    }
    cluster_info(info, client.endpoint())
}

/// Parses what `GET /` said at `url` and checks that offsets can at least be read.
pub fn cluster_info(info: ServerInfo, url: String) -> Result<ClusterInfo> {
    let cluster = parsed(info, url)?;
    require_version(&cluster, ConnectVersion::OFFSETS_READ, "reading offsets")?;
    Ok(cluster)
}

/// What `GET /` said at `url`, with its version parsed.
fn parsed(info: ServerInfo, url: String) -> Result<ClusterInfo> {
    let version =
        ConnectVersion::parse(&info.version).ok_or_else(|| Error::UnsupportedVersion {
            url: url.clone(),
            version: info.version.clone(),
            why: "the version cannot be parsed".into(),
        })?;
    Ok(ClusterInfo { info, version, url })
}

/// Fails when `client` only reads ([`Capabilities::read_only`](crate::client::Capabilities)):
/// `what` (`altering offsets`) is refused on cluster `name`; the error says what to use
/// instead.
pub fn require_changes(client: &dyn Service, name: &str, what: &str) -> Result<()> {
    match client.capabilities().read_only {
        None => Ok(()),
        Some(instead) => Err(read_only(client, name, what, instead)),
    }
}

/// The refusal of `what` on cluster `name`, which `client` reads without an API to change its
/// connectors through; `instead` is the hint.
pub fn read_only(client: &dyn Service, name: &str, what: &str, instead: &'static str) -> Error {
    Error::ReadOnly {
        cluster: name.to_string(),
        url: client.endpoint(),
        service: client.backend().service(),
        what: what.to_string(),
        instead,
    }
}

/// Fails unless the cluster is at least `min`, naming `what` needs it.
pub fn require_version(cluster: &ClusterInfo, min: ConnectVersion, what: &str) -> Result<()> {
    if cluster.version < min {
        return Err(Error::UnsupportedVersion {
            url: cluster.url.clone(),
            version: cluster.info.version.clone(),
            why: format!("{what} needs Kafka Connect {min} or newer"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(version: &str) -> ServerInfo {
        ServerInfo {
            version: version.into(),
            commit: None,
            kafka_cluster_id: None,
        }
    }

    fn refusal(err: Error) -> String {
        match err {
            Error::UnsupportedVersion { url, version, why } => format!("{url} {version}: {why}"),
            other => panic!("not a version refusal: {other:?}"),
        }
    }

    /// What `apply` and `reset` require before planning anything (engine::apply::plan).
    fn can_alter(version: &str) -> Result<()> {
        let c = cluster_info(info(version), "http://w:8083".into())?;
        require_version(&c, ConnectVersion::OFFSETS_WRITE, "altering offsets")
    }

    #[test]
    fn a_service_without_get_root_is_not_sent_one_and_passes_the_version_checks() {
        let fake = crate::fake::FakeConnect::builder()
            .confluent_cloud("env-a", "lkc-b")
            .in_process();
        let c = probe(&fake.client()).unwrap();
        assert!(fake.requests().is_empty(), "{:?}", fake.requests());
        assert_eq!(c.info.version, "Confluent Cloud");
        assert_eq!(c.info.kafka_cluster_id.as_deref(), Some("lkc-b"));
        require_version(&c, ConnectVersion::INITIAL_STATE, "creating stopped").unwrap();
        assert!(c.url.ends_with("/clusters/lkc-b"), "{}", c.url);
    }

    #[test]
    fn workers_older_than_3_5_cannot_even_be_read() {
        for raw in ["3.4.1", "2.8.0", "7.4.0-ccs"] {
            let err = cluster_info(info(raw), "http://w:8083".into()).unwrap_err();
            assert_eq!(
                refusal(err),
                format!("http://w:8083 {raw}: reading offsets needs Kafka Connect 3.5.0 or newer")
            );
        }
    }

    #[test]
    fn apply_and_reset_need_3_6_with_the_version_found_in_the_error() {
        for raw in ["3.5.0", "3.5.2", "7.5.3-ccs"] {
            let err = can_alter(raw).unwrap_err();
            assert_eq!(
                refusal(err),
                format!("http://w:8083 {raw}: altering offsets needs Kafka Connect 3.6.0 or newer")
            );
        }
        for raw in ["3.6.0", "3.6.2", "7.6.1-ccs", "4.3.1", "8.0.0-ccs"] {
            can_alter(raw).unwrap_or_else(|e| panic!("{raw}: {e:?}"));
        }
    }

    #[test]
    fn confluent_versions_are_mapped_and_unknown_ones_refused() {
        let c = cluster_info(info("7.7.1-ccs"), "u".into()).unwrap();
        assert_eq!(c.version, ConnectVersion::new(3, 7, 1));
        assert_eq!(
            c.info.version, "7.7.1-ccs",
            "the raw version is kept for messages"
        );
        require_version(&c, ConnectVersion::INITIAL_STATE, "creating stopped").unwrap();
        let old = cluster_info(info("3.6.2"), "u".into()).unwrap();
        let err = require_version(&old, ConnectVersion::INITIAL_STATE, "creating stopped");
        assert!(refusal(err.unwrap_err())
            .ends_with("creating stopped needs Kafka Connect 3.7.0 or newer"));
        let err = cluster_info(info("banana"), "u".into()).unwrap_err();
        assert_eq!(refusal(err), "u banana: the version cannot be parsed");
    }

    /// A worker before 3.5 is refused for reading offsets through its REST API, and read
    /// through Kafka where its offsets are (`kafka::through`): the version is still parsed
    /// and kept for the gates of what kco changes.
    #[test]
    fn a_worker_before_3_5_is_probed_when_its_offsets_are_read_through_kafka() {
        let fake = crate::fake::FakeConnect::builder()
            .version("3.4.1")
            .in_process();
        let rest = fake.client();
        assert!(matches!(
            probe(&rest),
            Err(Error::UnsupportedVersion { .. })
        ));
        let kafka = crate::kafka::KafkaOptions {
            bootstrap: vec!["127.0.0.1:1".into()],
            sasl: None,
            tls: None,
            timeout: std::time::Duration::from_secs(1),
        };
        let through = crate::kafka::through::ThroughKafka::new(
            Box::new(fake.client()),
            kafka,
            "connect-offsets".into(),
        );
        let cluster = probe(&through).unwrap();
        assert_eq!(cluster.version, ConnectVersion::parse("3.4.1").unwrap());
        let err = require_version(&cluster, ConnectVersion::OFFSETS_WRITE, "altering offsets");
        assert!(refusal(err.unwrap_err()).contains("altering offsets needs"));
    }
}
