//! Who is at the other end: `GET /`, and whether its Connect version can do what is asked.

use crate::client::{Connect, ConnectVersion, ServerInfo};
use crate::error::{Error, Result};

/// What `GET /` said, with the version parsed.
#[derive(Debug, Clone)]
pub struct ClusterInfo {
    pub info: ServerInfo,
    pub version: ConnectVersion,
    pub url: String,
}

/// Reads `GET /` and checks that offsets can at least be read (Connect 3.5+).
pub fn probe(client: &Connect) -> Result<ClusterInfo> {
    let info = client
        .server_info()
        .map_err(|e| Error::client(e.first_contact(), e))?;
    let url = client.endpoint();
    let version =
        ConnectVersion::parse(&info.version).ok_or_else(|| Error::UnsupportedVersion {
            url: url.clone(),
            version: info.version.clone(),
            why: "the version cannot be parsed".into(),
        })?;
    let cluster = ClusterInfo { info, version, url };
    require_version(&cluster, ConnectVersion::OFFSETS_READ, "reading offsets")?;
    Ok(cluster)
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
