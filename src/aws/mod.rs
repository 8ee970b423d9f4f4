//! AWS credentials and regions, for what kco signs with SigV4 (Amazon MSK's IAM
//! authentication to Kafka: `kafka/msk_iam.rs`). AWS's own crates do the work: aws-config's
//! default credentials chain (environment, shared config and credentials files with their
//! profiles, SSO, `credential_process`, web identity, ECS, EC2 instance metadata), run to
//! completion on a small runtime of its own, since the rest of kco is blocking.
//!
//! [`credentials`] finds credentials and says where they came from ([`Found::from`], for
//! messages); [`region`] the region a cluster's entry, the environment or the profile names.
//! Neither prints; no credential is ever part of a message or a `Debug` output
//! (`aws_credential_types::Credentials` redacts its secret parts).

mod credentials;
mod region;

pub use aws_credential_types::Credentials;
pub use credentials::{credentials, CredentialSource, Found};
pub use region::{region, Region, RegionFrom};

/// Why no credentials could be had.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no usable AWS credentials from {tried}: {detail}")]
pub struct CredentialsError {
    /// The sources tried, as a user knows them ("environment variables AWS_ACCESS_KEY_ID
    /// and AWS_SECRET_ACCESS_KEY, profile `default` in ~/.aws/credentials, ...").
    pub tried: String,
    /// What the source that failed said.
    pub detail: String,
}

impl CredentialsError {
    /// What to change.
    pub fn hint(&self) -> String {
        "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials), or name a profile of ~/.aws/credentials or ~/.aws/config with `profile:` in kco.yaml or AWS_PROFILE (`aws sso login --profile NAME` for an SSO profile)".into()
    }
}

/// Runs `f` to completion on a current-thread runtime of its own (AWS's providers are async;
/// kco is not, and is never inside a runtime where this is called).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
        .block_on(f)
}
