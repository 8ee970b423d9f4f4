//! The AWS region: the one kco.yaml names, else `AWS_REGION`, `AWS_DEFAULT_REGION`, else the
//! `region` of the profile in the shared config file (`AWS_CONFIG_FILE`, default
//! `~/.aws/config`). Never asked of EC2's instance metadata: an answer that takes seconds to
//! time out off EC2 is no way to learn that a setting is missing.

use std::collections::HashMap;

/// A region and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub name: String,
    pub from: RegionFrom,
}

/// Where a [`Region`] was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionFrom {
    /// The setting (kco.yaml's `region:`).
    Entry,
    /// This environment variable.
    Env(&'static str),
    /// The `region` of this profile in the shared config file.
    Profile(String),
}

/// The variables the shared files are found and chosen with, read through `env`.
const FILE_VARS: [&str; 5] = [
    "HOME",
    "USERPROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_PROFILE",
];

/// The region: `entry`, else the environment's (`env` reads a variable), else the `region` of
/// `profile` (else of `AWS_PROFILE`, else of `default`) in the shared files. `None` when none
/// names one.
pub fn region(
    entry: Option<&str>,
    profile: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Region> {
    if let Some(r) = entry.map(str::trim).filter(|r| !r.is_empty()) {
        return Some(Region {
            name: r.to_string(),
            from: RegionFrom::Entry,
        });
    }
    for var in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
        if let Some(r) = env(var).filter(|r| !r.trim().is_empty()) {
            return Some(Region {
                name: r.trim().to_string(),
                from: RegionFrom::Env(var),
            });
        }
    }
    let vars: HashMap<String, String> = FILE_VARS
        .iter()
        .filter_map(|v| env(v).map(|value| (v.to_string(), value)))
        .collect();
    let name = profile
        .map(str::to_string)
        .or_else(|| vars.get("AWS_PROFILE").cloned())
        .unwrap_or_else(|| "default".into());
    let set = super::block_on(aws_config::profile::load(
        &aws_types::os_shim_internal::Fs::real(),
        &aws_types::os_shim_internal::Env::from(vars),
        &Default::default(),
        Some(name.clone().into()),
    ))
    .ok()?;
    let r = set.get_profile(&name)?.get("region")?.trim();
    (!r.is_empty()).then(|| Region {
        name: r.to_string(),
        from: RegionFrom::Profile(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_then_the_environment_then_the_profile_name_the_region() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n[profile team]\nregion = ap-south-1\n",
        )
        .unwrap();
        let config = config.display().to_string();
        let home = dir.path().display().to_string();
        let vars = |set: &'static [(&'static str, &'static str)]| {
            let config = config.clone();
            let home = home.clone();
            move |k: &str| match k {
                "AWS_CONFIG_FILE" => Some(config.clone()),
                "HOME" => Some(home.clone()),
                _ => set
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string()),
            }
        };
        let both = vars(&[
            ("AWS_REGION", "us-east-2"),
            ("AWS_DEFAULT_REGION", "us-west-1"),
        ]);
        let r = region(Some("eu-central-1"), None, &both).unwrap();
        assert_eq!(
            (r.name.as_str(), r.from),
            ("eu-central-1", RegionFrom::Entry)
        );
        let r = region(None, None, &both).unwrap();
        assert_eq!(
            (r.name.as_str(), r.from),
            ("us-east-2", RegionFrom::Env("AWS_REGION"))
        );
        let r = region(None, None, &vars(&[("AWS_DEFAULT_REGION", "us-west-1")])).unwrap();
        assert_eq!(r.from, RegionFrom::Env("AWS_DEFAULT_REGION"));
        let r = region(None, None, &vars(&[])).unwrap();
        assert_eq!(
            (r.name.as_str(), r.from),
            ("eu-west-1", RegionFrom::Profile("default".into()))
        );
        let r = region(None, Some("team"), &vars(&[])).unwrap();
        assert_eq!(r.name, "ap-south-1");
        let r = region(None, None, &vars(&[("AWS_PROFILE", "team")])).unwrap();
        assert_eq!(r.from, RegionFrom::Profile("team".into()));
        assert_eq!(region(None, Some("nobody"), &vars(&[])), None);
        let nothing = |k: &str| (k == "HOME").then(|| home.clone());
        assert_eq!(region(None, None, &nothing), None, "no file at all");
    }
}
