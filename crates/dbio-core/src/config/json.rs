//! The run's settings as the run document (`dbio.run.v2`) writes them and
//! reads them back: the flat shape from before the workload was a type
//! (`workload` a word, a raw run's `pattern`, `read_pct`, `uring`, `verify`
//! among the shared fields, `null` pattern for the databases, the model's
//! or server's settings under `slob`, `pg` or `mysql`), field for field in
//! the order the document has always had them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::content::ContentSpec;
use super::dist::Distribution;
use super::uring::UringOpts;
use super::verify::VerifyOpts;
use super::{
    Arrival, EngineKind, HotspotConfig, IoMode, Pattern, RawConfig, RunConfig, RunLength,
    WorkloadConfig,
};
use crate::config::db::{MysqlConfig, PgConfig};
use crate::config::replay::ReplayConfig;
use crate::config::slob::SlobConfig;

/// `config` in the run document.
#[derive(Serialize, Deserialize)]
pub(super) struct RunConfigJson {
    workload: String,
    target: PathBuf,
    files: u32,
    size_bytes: Option<u64>,
    block_size_bytes: u32,
    pattern: Option<Pattern>,
    read_pct: Option<u8>,
    sessions: u32,
    iodepth: u32,
    engine: EngineKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uring: Option<UringOpts>,
    io_mode: IoMode,
    length: RunLength,
    #[serde(with = "as_text")]
    distribution: Distribution,
    hotspot: Option<HotspotConfig>,
    rate_iops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arrival: Option<Arrival>,
    seed: u64,
    outlier_ms: f64,
    interval_s: f64,
    destroy_device: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    allow_root_fs: bool,
    #[serde(default, skip_serializing_if = "VerifyOpts::is_off")]
    verify: VerifyOpts,
    #[serde(default, skip_serializing_if = "ContentSpec::is_default")]
    content: ContentSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    slob: Option<SlobConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pg: Option<PgConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mysql: Option<MysqlConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replay: Option<ReplayConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    steady_state: Option<crate::steady::Steady>,
}

/// Why a document's `config` is not a run's settings.
#[derive(Debug, thiserror::Error)]
pub enum ConfigJsonError {
    #[error(
        "config.workload {0:?} is not a workload this dbio knows (raw, slob, pg, mysql, replay)"
    )]
    Unknown(String),
    #[error("config.workload is {workload:?} but config.{missing} is missing")]
    Missing {
        workload: &'static str,
        missing: &'static str,
    },
}

/// Where the workload's own settings go in the flat shape.
struct Parts {
    raw: Option<RawConfig>,
    slob: Option<SlobConfig>,
    pg: Option<PgConfig>,
    mysql: Option<MysqlConfig>,
    replay: Option<ReplayConfig>,
}

/// A database run's fields in the flat shape: no pattern, uniform keys.
const NO_RAW: RawConfig = RawConfig {
    pattern: Pattern::Randread,
    read_pct: 0,
    distribution: Distribution::Uniform,
    uring: None,
    verify: VerifyOpts {
        reads: false,
        after_write: false,
        map_sync_ms: 0,
    },
};

fn split(w: WorkloadConfig) -> Parts {
    let none = Parts {
        raw: None,
        slob: None,
        pg: None,
        mysql: None,
        replay: None,
    };
    match w {
        WorkloadConfig::Raw(r) => Parts {
            raw: Some(r),
            ..none
        },
        WorkloadConfig::Slob(s) => Parts {
            slob: Some(s),
            ..none
        },
        WorkloadConfig::Pg(pg) => Parts {
            pg: Some(pg),
            ..none
        },
        WorkloadConfig::Mysql(my) => Parts {
            mysql: Some(my),
            ..none
        },
        WorkloadConfig::Replay(r) => Parts {
            replay: Some(r),
            ..none
        },
    }
}

impl From<RunConfig> for RunConfigJson {
    fn from(c: RunConfig) -> Self {
        let workload = c.workload.name().to_string();
        let parts = split(c.workload);
        let raw = parts.raw.as_ref().unwrap_or(&NO_RAW);
        // A replay's io_uring set-up is `uring`, as a raw run's.
        let uring = raw.uring.or(parts.replay.as_ref().and_then(|r| r.uring));
        RunConfigJson {
            workload,
            target: c.target,
            files: c.files,
            size_bytes: c.size_bytes,
            block_size_bytes: c.block_size,
            pattern: parts.raw.map(|r| r.pattern),
            read_pct: parts.raw.map(|r| r.read_pct),
            sessions: c.sessions,
            iodepth: c.iodepth,
            engine: c.engine,
            uring,
            io_mode: c.io_mode,
            length: c.length,
            distribution: raw.distribution,
            hotspot: c.hotspot,
            rate_iops: c.rate_iops,
            arrival: c.arrival,
            seed: c.seed,
            outlier_ms: c.outlier_ms,
            interval_s: c.interval_s,
            destroy_device: c.destroy_device,
            allow_root_fs: c.allow_root_fs,
            verify: raw.verify,
            content: c.content,
            slob: parts.slob,
            pg: parts.pg,
            mysql: parts.mysql,
            replay: parts.replay,
            steady_state: c.steady,
        }
    }
}

impl RunConfigJson {
    /// The workload the document names, from the fields it keeps it in.
    fn workload(&mut self) -> Result<WorkloadConfig, ConfigJsonError> {
        let missing = |workload, missing| ConfigJsonError::Missing { workload, missing };
        Ok(match self.workload.as_str() {
            "raw" => WorkloadConfig::Raw(RawConfig {
                pattern: self.pattern.ok_or(missing("raw", "pattern"))?,
                read_pct: self.read_pct.ok_or(missing("raw", "read_pct"))?,
                distribution: self.distribution,
                uring: self.uring,
                verify: self.verify,
            }),
            "slob" => WorkloadConfig::Slob(self.slob.take().ok_or(missing("slob", "slob"))?),
            "pg" => WorkloadConfig::Pg(self.pg.take().ok_or(missing("pg", "pg"))?),
            "mysql" => WorkloadConfig::Mysql(self.mysql.take().ok_or(missing("mysql", "mysql"))?),
            "replay" => {
                let mut r = self.replay.take().ok_or(missing("replay", "replay"))?;
                r.uring = self.uring;
                WorkloadConfig::Replay(r)
            }
            other => return Err(ConfigJsonError::Unknown(other.to_string())),
        })
    }
}

impl TryFrom<RunConfigJson> for RunConfig {
    type Error = ConfigJsonError;

    fn try_from(mut j: RunConfigJson) -> Result<Self, ConfigJsonError> {
        let workload = j.workload()?;
        Ok(RunConfig {
            target: j.target,
            files: j.files,
            size_bytes: j.size_bytes,
            block_size: j.block_size_bytes,
            sessions: j.sessions,
            iodepth: j.iodepth,
            engine: j.engine,
            io_mode: j.io_mode,
            length: j.length,
            hotspot: j.hotspot,
            rate_iops: j.rate_iops,
            arrival: j.arrival,
            seed: j.seed,
            load_parallel: 1,
            outlier_ms: j.outlier_ms,
            interval_s: j.interval_s,
            destroy_device: j.destroy_device,
            allow_root_fs: j.allow_root_fs,
            content: j.content,
            steady: j.steady_state,
            workload,
        })
    }
}

/// A [`Distribution`] as its text (`zipf:1.2`), which parses back exactly.
mod as_text {
    use crate::config::dist::Distribution;

    pub fn serialize<S: serde::Serializer>(v: &Distribution, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Distribution, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse()
            .map_err(|_| serde::de::Error::custom(format!("{text:?} is not a distribution")))
    }
}
