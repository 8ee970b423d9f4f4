//! AWS credentials: aws-config's default chain, or one named profile alone; with where they
//! came from, in the words a user knows (the environment variables, the profile and its
//! files), for messages.

use aws_config::profile::ProfileFileCredentialsProvider;
use aws_config::provider_config::ProviderConfig;
use aws_config::BehaviorVersion;
use aws_credential_types::provider::ProvideCredentials;
use aws_smithy_http_client::tls;

use super::{block_on, Credentials, CredentialsError};

/// Where credentials are looked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CredentialSource {
    /// AWS's default chain: the environment, the profile `AWS_PROFILE` names (else
    /// `default`) in the shared files, web identity, ECS, EC2 instance metadata.
    #[default]
    DefaultChain,
    /// This profile of the shared files, and nothing else (kco.yaml's `profile:`).
    Profile(String),
}

/// Credentials found, and where.
#[derive(Debug, Clone)]
pub struct Found {
    /// Their `Debug` shows the access key id only.
    pub credentials: Credentials,
    /// Where they came from, for messages ("environment variables AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY", "profile `x` in ~/.aws/credentials or ~/.aws/config", ...).
    pub from: String,
}

/// Credentials from `source`; `region` is the one STS is asked in (web identity, a
/// profile's role). The default chain is AWS's, in its order, each source tried until one
/// has credentials: its name is then known for messages, and so is the one that failed.
pub fn credentials(source: &CredentialSource, region: &str) -> Result<Found, CredentialsError> {
    use aws_config::ecs::EcsCredentialsProvider;
    use aws_config::environment::EnvironmentVariableCredentialsProvider;
    use aws_config::imds::credentials::ImdsCredentialsProvider;
    use aws_config::web_identity_token::WebIdentityTokenCredentialsProvider;
    use aws_credential_types::provider::error::CredentialsError as Failure;
    use aws_credential_types::provider::SharedCredentialsProvider;

    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(
            tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    let conf = ProviderConfig::default()
        .with_http_client(http)
        .with_behavior_version(Some(BehaviorVersion::latest()))
        .with_region(Some(aws_types::region::Region::new(region.to_string())));
    let names = Names::of(source);
    let profile = |p: Option<&str>| {
        let mut b = ProfileFileCredentialsProvider::builder().configure(&conf);
        if let Some(p) = p {
            b = b.profile_name(p);
        }
        SharedCredentialsProvider::new(b.build())
    };
    let chain: Vec<(String, SharedCredentialsProvider)> = match source {
        CredentialSource::Profile(p) => vec![(names.profile_files(), profile(Some(p)))],
        CredentialSource::DefaultChain => vec![
            (
                ENV.to_string(),
                SharedCredentialsProvider::new(EnvironmentVariableCredentialsProvider::new()),
            ),
            (names.profile_files(), profile(None)),
            (
                WEB_IDENTITY.to_string(),
                SharedCredentialsProvider::new(
                    WebIdentityTokenCredentialsProvider::builder()
                        .configure(&conf)
                        .build(),
                ),
            ),
            (
                ECS.to_string(),
                SharedCredentialsProvider::new(
                    EcsCredentialsProvider::builder().configure(&conf).build(),
                ),
            ),
            (
                IMDS.to_string(),
                SharedCredentialsProvider::new(
                    ImdsCredentialsProvider::builder().configure(&conf).build(),
                ),
            ),
        ],
    };
    block_on(async {
        let mut last = None;
        for (from, provider) in &chain {
            match provider.provide_credentials().await {
                Ok(credentials) => {
                    return Ok(Found {
                        credentials,
                        from: from.clone(),
                    })
                }
                Err(e @ Failure::CredentialsNotLoaded(_)) => {
                    last = Some(match chain_text(&e) {
                        // aws-config's whole message for a profile or file that is not there.
                        t if t == "the credential provider was not enabled" => "not found".into(),
                        t => t,
                    })
                }
                Err(e) => {
                    return Err(CredentialsError {
                        tried: from.clone(),
                        detail: chain_text(&e),
                    })
                }
            }
        }
        Err(CredentialsError {
            tried: names.tried(source),
            detail: last.unwrap_or_else(|| "none has credentials".into()),
        })
    })
}

const ENV: &str = "environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";
const WEB_IDENTITY: &str = "web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN)";
const ECS: &str = "ECS container credentials (AWS_CONTAINER_CREDENTIALS_*)";
const IMDS: &str = "EC2 instance metadata";

/// An error and its sources, joined: aws-config's own messages say little at the top
/// ("an error occurred while loading credentials") and what failed below.
fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut next = e.source();
    while let Some(s) = next {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = s.source();
    }
    parts.join(": ")
}

/// The profile and the shared files, as the environment names them.
struct Names {
    profile: String,
    credentials_file: String,
    config_file: String,
}

impl Names {
    fn of(source: &CredentialSource) -> Self {
        let var = |v: &str| std::env::var(v).ok().filter(|s| !s.is_empty());
        Names {
            profile: match source {
                CredentialSource::Profile(p) => p.clone(),
                CredentialSource::DefaultChain => {
                    var("AWS_PROFILE").unwrap_or_else(|| "default".into())
                }
            },
            credentials_file: var("AWS_SHARED_CREDENTIALS_FILE")
                .unwrap_or_else(|| "~/.aws/credentials".into()),
            config_file: var("AWS_CONFIG_FILE").unwrap_or_else(|| "~/.aws/config".into()),
        }
    }

    fn profile_files(&self) -> String {
        format!(
            "profile `{}` in {} or {}",
            self.profile, self.credentials_file, self.config_file
        )
    }

    fn tried(&self, source: &CredentialSource) -> String {
        match source {
            CredentialSource::Profile(_) => self.profile_files(),
            CredentialSource::DefaultChain => format!(
                "AWS's default chain ({ENV}, {}, {WEB_IDENTITY}, {ECS}, {IMDS})",
                self.profile_files()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sources_tried_are_named_as_a_user_knows_them() {
        let n = Names {
            profile: "team".into(),
            credentials_file: "/c".into(),
            config_file: "/k".into(),
        };
        assert!(n
            .tried(&CredentialSource::DefaultChain)
            .contains("environment variables AWS_ACCESS_KEY_ID"));
        assert_eq!(
            n.tried(&CredentialSource::Profile("team".into())),
            "profile `team` in /c or /k"
        );
    }

    /// A profile that the files do not have: an error naming the profile and the files, the
    /// chain not tried further (the environment's keys are not taken in its place).
    #[test]
    fn a_named_profile_that_does_not_exist_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("credentials");
        std::fs::write(
            &file,
            "[other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = s\n",
        )
        .unwrap();
        // The process's environment is the chain's: this test sets only the variables no
        // other test reads.
        std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", &file);
        std::env::set_var("AWS_CONFIG_FILE", dir.path().join("config"));
        let e = credentials(&CredentialSource::Profile("missing".into()), "eu-west-1").unwrap_err();
        assert!(e.tried.contains("profile `missing`"), "{e}");
        assert!(e.tried.contains(&file.display().to_string()), "{e}");
        assert!(e.detail.contains("missing"), "{e}");
        let ok = credentials(&CredentialSource::Profile("other".into()), "eu-west-1").unwrap();
        assert_eq!(ok.credentials.access_key_id(), "AKIDOTHER");
        assert!(ok.from.starts_with("profile `other` in "), "{}", ok.from);
        assert!(!format!("{ok:?}").contains("aws_secret"), "{ok:?}");
    }
}
