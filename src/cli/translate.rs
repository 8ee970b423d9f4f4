//! The DR flags of apply and diff (`--translate`, `--with-sources`, the readiness
//! thresholds), resolved with the cluster's `kafka:` and `mirrors:` in kco.yaml into the
//! engine's [`DrOptions`]; the engine does the rest (`engine::dr`).

use std::collections::BTreeMap;

use super::Context;
use crate::config::ClusterTarget;
use crate::engine::diff::Alarm;
use crate::engine::dr::DrOptions;
use crate::engine::mirror::TranslateMode;

/// `--translate`, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TranslateArg {
    /// The latest checkpoint at or below the file's offset: no record after it is skipped
    File,
    /// MirrorMaker 2's latest checkpoint: where the primary last committed (failover)
    Latest,
    /// Topics renamed per the mirror's policy, offsets kept (offset-preserving replication)
    None,
}

impl From<TranslateArg> for TranslateMode {
    fn from(a: TranslateArg) -> Self {
        match a {
            TranslateArg::File => TranslateMode::File,
            TranslateArg::Latest => TranslateMode::Latest,
            TranslateArg::None => TranslateMode::None,
        }
    }
}

/// The readiness alarm's flags (`diff` against a DR cluster); each wins over the mirror's
/// setting in kco.yaml, which wins over kco's default.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Thresholds {
    /// Against a DR cluster: a sink partition behind its file whose group's last MM2
    /// checkpoint is older than this rings the alarm (exit 2, `dr_lagging`), e.g. `90s`
    /// [default: the mirror's `maxCheckpointAgeSeconds`, else 5m]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_checkpoint_age: Option<std::time::Duration>,
    /// Against a DR cluster: a sink partition more records behind its file than this rings
    /// the alarm [default: the mirror's `maxBehind`, else any number]
    #[arg(long, value_name = "RECORDS")]
    pub max_behind: Option<u64>,
    /// Against a DR cluster: no heartbeat copied through the mirror for longer than this
    /// rings the alarm, and so does a mirror with none to tell (when given) [default: the
    /// mirror's `maxMirrorSilenceSeconds`, else 2m]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_mirror_silence: Option<std::time::Duration>,
}

impl Thresholds {
    /// The alarm of a mirror whose kco.yaml sets `set`.
    fn alarm(&self, set: &crate::config::MirrorAlarm) -> Alarm {
        let default = Alarm::default();
        let silence = self.max_mirror_silence.or(set.max_mirror_silence);
        Alarm {
            max_checkpoint_age: self
                .max_checkpoint_age
                .or(set.max_checkpoint_age)
                .unwrap_or(default.max_checkpoint_age),
            max_behind: self.max_behind.or(set.max_behind),
            max_mirror_silence: silence.unwrap_or(default.max_mirror_silence),
            require_heartbeat: silence.is_some(),
        }
    }
}

/// The DR options of cluster `target`: kco.yaml's settings (an error there only matters
/// when a file crosses Kafka clusters), the flags, and each mirror's alarm.
pub(super) fn options(
    ctx: &Context,
    target: &ClusterTarget,
    mode: Option<TranslateMode>,
    with_sources: bool,
    thresholds: &Thresholds,
) -> DrOptions {
    let env = |k: &str| std::env::var(k).ok();
    let settings = ctx.config.dr_settings(&target.name, &env);
    let alarms: BTreeMap<String, Alarm> = match &settings {
        Ok(s) => s
            .mirrors
            .iter()
            .map(|(cluster, relation)| {
                let set = s.alarms.get(cluster).copied().unwrap_or_default();
                (relation.alias.clone(), thresholds.alarm(&set))
            })
            .collect(),
        Err(_) => BTreeMap::new(),
    };
    DrOptions {
        settings,
        mode,
        with_sources,
        alarms,
    }
}
