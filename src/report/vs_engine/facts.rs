//! What the findings say about each run beside its quantities: when it
//! ran, on which host, how loaded the machine was over its window (the
//! 1-minute load average, the mean of the readings over the window), where
//! its window sat in the checkpoint cycle, and what dbio changed from the
//! server's defaults — all read from the stored run document.

use super::{Cell, Measured, Side};
use crate::config::{RunLength, WorkloadConfig};
use crate::document::Report;
use crate::document::cycle::CheckpointCycle;
use crate::workload::db::departures::Departure;

/// The host a run says it ran on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
}

/// One stored run of the table, for the findings.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunFacts {
    pub id: i64,
    /// The plan's arm (`model-postgres`, `pg` …).
    pub arm: String,
    #[serde(skip)]
    pub side: Side,
    #[serde(skip)]
    pub cell: Cell,
    pub started_unix_ms: u64,
    /// `--time` and `--ramp`, seconds (None: a run of a set count).
    pub time_s: Option<f64>,
    pub ramp_s: Option<f64>,
    /// The model's redo file size, bytes (None for a server).
    pub redo_file_size: Option<u64>,
    pub host: Host,
    /// The 1-minute load average over the window (None: no host telemetry).
    pub load1: Option<f64>,
    /// Where the window sat in the checkpoint cycle (None: not known).
    pub cycle: Option<CheckpointCycle>,
    /// What dbio changed from the stock server (empty for the model).
    pub departures: Vec<Departure>,
    /// Bytes of the loaded data restored before the run (`restore = true`
    /// lab arms: the stored environment's `lab.restore`); None: the run
    /// started from what the run before left.
    pub restored_bytes: Option<u64>,
}

impl RunFacts {
    /// The value of setting `name` dbio gave the server, as its departures
    /// list it (None: not a departure, or the model).
    pub fn departure(&self, name: &str) -> Option<&str> {
        self.departures
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.value.as_str())
    }

    /// The window the run was given (`any` when it recorded none).
    pub fn window(&self) -> &str {
        self.cycle.as_ref().map_or("any", |c| c.window.as_str())
    }

    /// The facts of stored run `id` of arm `arm`, measured as `m`.
    pub fn of(id: i64, arm: &str, r: &Report, m: &Measured) -> RunFacts {
        let e = &r.environment;
        let (cycle, departures) = if let Some(p) = &r.pg {
            (p.checkpoint_cycle.clone(), p.setup.departures.clone())
        } else if let Some(m) = &r.mysql {
            (m.checkpoint_cycle.clone(), m.setup.departures.clone())
        } else {
            let cycle = r.slob.as_ref().and_then(|s| s.checkpoint_cycle.clone());
            (cycle, Vec::new())
        };
        let (time_s, ramp_s) = match r.config.length {
            RunLength::Time { time_s, ramp_s } => (Some(time_s), Some(ramp_s)),
            RunLength::Ops { .. } => (None, None),
        };
        let redo_file_size = match &r.config.workload {
            WorkloadConfig::Slob(s) => Some(s.redo_file_size),
            _ => None,
        };
        RunFacts {
            id,
            redo_file_size,
            time_s,
            ramp_s,
            arm: arm.to_string(),
            side: m.side,
            cell: m.cell,
            started_unix_ms: r.started_unix_ms,
            host: Host {
                hostname: e.hostname.clone(),
                kernel: e.kernel.clone(),
                cpu_model: e.cpu_model.clone(),
                cpus: e.cpus,
                memory_bytes: e.memory_bytes,
            },
            load1: r.telemetry_window.as_ref().map(|t| t.host.load1),
            cycle,
            departures,
            restored_bytes: None,
        }
    }

    /// Notes what the stored environment says was restored before the run.
    pub fn with_environment(mut self, environment: &serde_json::Value) -> RunFacts {
        self.restored_bytes = environment["lab"]["restore"]["restored"]["bytes"].as_u64();
        self
    }
}
