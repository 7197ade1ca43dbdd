//! What each rank sends to rank 0 once its run is over: its exact counters
//! and HDR latency histograms (V2 + deflate, base64: the HdrHistogram log
//! encoding) — under `--rate` its due-time and lateness histograms too —,
//! per-second series, outliers, and its host's environment, storage chain
//! and telemetry window, as one JSON document.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::environment::Environment;
use crate::harness::{RunResult, Status};
use crate::measure::due::DueStats;
use crate::measure::stats::{OpStats, Outlier, SessionStats};
use crate::samplers::series::SecondPoint;
use crate::store::{StoreError, decode_histogram, encode_histogram};
use crate::workload::slob::events::EventStats;
use crate::workload::slob::instance::{Counters, Tally};
use crate::workload::slob::run::SlobRun;

/// What rank 0 cannot read in what a rank sent.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("rank {0} sent SLOB tallies of another shape")]
    SlobShape(u32),
    #[error("rank {rank} sent {kinds} operation kinds, not 3")]
    OpKinds { rank: u32, kinds: usize },
    #[error("rank {rank} sent due-time latencies of {kinds} operation kinds, not 2")]
    DueKinds { rank: u32, kinds: usize },
    #[error("rank {0}: {1}")]
    Rank(u32, Box<WireError>),
    #[error("a rank's result does not parse: {0}")]
    Parse(#[from] serde_json::Error),
    #[error("a latency histogram is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error(transparent)]
    Histogram(#[from] StoreError),
}

/// One rank's run, as sent to rank 0.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankResult {
    pub rank: u32,
    pub host: String,
    pub sessions: u32,
    /// Its threads: sessions and background threads (outliers number them).
    pub threads: u32,
    pub status: Status,
    pub error: Option<String>,
    /// Wall-clock ns when this rank's clock started (right after the barrier).
    pub start_unix_ns: u64,
    pub ramp_s: f64,
    pub measured_s: f64,
    pub issued: u64,
    /// Between this rank's first and last session leaving its start gate.
    pub start_skew_us: f64,
    pub peak_rss_bytes: u64,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// Read, write, sync.
    pub ops: Vec<WireOp>,
    pub outliers: Vec<Outlier>,
    pub outliers_unlisted: u64,
    pub series: Vec<SecondPoint>,
    pub environment: serde_json::Value,
    pub storage: serde_json::Value,
    pub telemetry_window: serde_json::Value,
    /// The SLOB model's tallies: sessions, DB writers, log writer.
    pub slob: Option<Vec<WireTally>>,
    /// An open-loop run's (`--rate`) due-time statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<WireDue>,
}

/// An open-loop rank's due-time latencies, lateness and counts, exact.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireDue {
    /// Read, write requests from their due time.
    pub due: Vec<WireOp>,
    pub op_due: WireOp,
    pub op_service: WireOp,
    pub lateness: WireOp,
    pub late: u64,
    pub fell_due: u64,
}

impl WireDue {
    fn new(d: &DueStats) -> Self {
        WireDue {
            due: d.due.iter().map(WireOp::new).collect(),
            op_due: WireOp::new(&d.op_due),
            op_service: WireOp::new(&d.op_service),
            lateness: WireOp::new(&d.lateness),
            late: d.late,
            fell_due: d.fell_due,
        }
    }

    fn stats(&self, rank: u32) -> Result<DueStats, WireError> {
        let [read, write] = &self.due[..] else {
            return Err(WireError::DueKinds {
                rank,
                kinds: self.due.len(),
            });
        };
        Ok(DueStats {
            due: [read.stats()?, write.stats()?],
            op_due: self.op_due.stats()?,
            op_service: self.op_service.stats()?,
            lateness: self.lateness.stats()?,
            late: self.late,
            fell_due: self.fell_due,
        })
    }
}

/// One SLOB model tally: AWR counters (window and whole run) and wait events.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireTally {
    pub window: Counters,
    pub total: Counters,
    /// Per event, in `EVENTS` order.
    pub events: Vec<WireOp>,
}

/// One operation kind's exact counters and latency histogram.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireOp {
    pub count: u64,
    pub bytes: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// HDR V2 + deflate, base64.
    pub hist: String,
}

impl RankResult {
    /// What rank `rank` on `env`'s host measured with `[sessions, threads]`.
    pub fn new(rank: u32, [sessions, threads]: [u32; 2], r: &RunResult, env: &Environment) -> Self {
        RankResult {
            rank,
            host: env.hostname.clone(),
            sessions,
            threads,
            status: r.status.clone(),
            error: r.error.clone(),
            start_unix_ns: r.start_unix_ns,
            ramp_s: r.ramp_s,
            measured_s: r.measured_s,
            issued: r.issued,
            start_skew_us: r.start_skew_us,
            peak_rss_bytes: r.peak_rss_bytes,
            cpu_user_s: r.cpu.user_s,
            cpu_sys_s: r.cpu.sys_s,
            ops: r.stats.ops.iter().map(WireOp::new).collect(),
            outliers: r.stats.outliers.clone(),
            outliers_unlisted: r.stats.outliers_unlisted,
            series: r.series.clone(),
            environment: json(env),
            storage: json(&r.chain),
            telemetry_window: json(&r.window),
            slob: None,
            open: r.stats.open.as_deref().map(WireDue::new),
        }
    }

    /// With the SLOB model's tallies.
    pub fn with_slob(mut self, run: &SlobRun) -> Self {
        self.slob = Some(
            [&run.sessions, &run.dbwr, &run.lgwr]
                .map(|t| WireTally {
                    window: t.window,
                    total: t.total,
                    events: t.events.by_event.iter().map(WireOp::new).collect(),
                })
                .to_vec(),
        );
        self
    }

    /// The SLOB model's tallies back (sessions, DB writers, log writer).
    pub fn slob_tallies(&self) -> Result<Option<[Tally; 3]>, WireError> {
        let Some(wire) = &self.slob else {
            return Ok(None);
        };
        let bad = || WireError::SlobShape(self.rank);
        let tally = |w: &WireTally| -> Result<Tally, WireError> {
            let mut t = Tally {
                window: w.window,
                total: w.total,
                events: EventStats::default(),
            };
            if w.events.len() != t.events.by_event.len() {
                return Err(bad());
            }
            for (e, o) in t.events.by_event.iter_mut().zip(&w.events) {
                *e = o.stats()?;
            }
            Ok(t)
        };
        match &wire[..] {
            [a, b, c] => Ok(Some([tally(a)?, tally(b)?, tally(c)?])),
            _ => Err(bad()),
        }
    }

    /// The rank's measurements back as statistics that merge exactly.
    pub fn stats(&self) -> Result<SessionStats, WireError> {
        if self.ops.len() != 3 {
            return Err(WireError::OpKinds {
                rank: self.rank,
                kinds: self.ops.len(),
            });
        }
        let mut s = SessionStats::new();
        for (o, w) in s.ops.iter_mut().zip(&self.ops) {
            *o = w
                .stats()
                .map_err(|e| WireError::Rank(self.rank, Box::new(e)))?;
        }
        s.outliers = self.outliers.clone();
        s.outliers_unlisted = self.outliers_unlisted;
        if let Some(o) = &self.open {
            let d = o
                .stats(self.rank)
                .map_err(|e| WireError::Rank(self.rank, Box::new(e)))?;
            s.open = Some(Box::new(d));
        }
        Ok(s)
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a rank's result serializes")
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, WireError> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

fn json(v: impl Serialize) -> serde_json::Value {
    serde_json::to_value(v).expect("serializes")
}

impl WireOp {
    fn new(s: &OpStats) -> Self {
        WireOp {
            count: s.count,
            bytes: s.bytes,
            sum_ns: s.sum_ns,
            min_ns: s.min_ns,
            max_ns: s.max_ns,
            hist: hist_to_base64(&s.hist),
        }
    }

    fn stats(&self) -> Result<OpStats, WireError> {
        Ok(OpStats {
            hist: hist_from_base64(&self.hist)?,
            count: self.count,
            bytes: self.bytes,
            sum_ns: self.sum_ns,
            min_ns: self.min_ns,
            max_ns: self.max_ns,
        })
    }
}

/// A latency histogram as HDR V2 + deflate in base64.
pub fn hist_to_base64(h: &Histogram<u64>) -> String {
    BASE64.encode(encode_histogram(h))
}

/// The histogram [`hist_to_base64`] encoded.
pub fn hist_from_base64(s: &str) -> Result<Histogram<u64>, WireError> {
    Ok(decode_histogram(&BASE64.decode(s)?)?)
}
