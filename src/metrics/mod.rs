//! Watching runs live (`--metrics-listen`, `--metrics-textfile`): what the
//! harness's control thread already makes once a second and once a
//! telemetry interval, kept as counters and histograms ([`state`]) and
//! served as the Prometheus / OpenMetrics text exposition ([`expo`]) over a
//! small HTTP server ([`http`]) with a live page at `/` ([`page`]), or
//! written for node_exporter's textfile collector ([`textfile`]). The
//! metrics are listed in [`names`] and in docs/metrics.md.

pub mod expo;
pub mod http;
pub mod names;
pub mod page;
pub mod state;
#[cfg(test)]
mod tests;
pub mod textfile;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::config::{RunConfig, RunLength};
use crate::harness::Observer;
use crate::samplers::series::{DueHists, SecondHists, SecondPoint};
use crate::samplers::telemetry::TelemetryPoint;
use crate::workload::live::LiveDb;
use state::{Labels, State};

/// Why live metrics could not start: one line, a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error(
        "--metrics-listen {addr}: cannot listen there: {source}{hint}",
        hint = listen_hint(source)
    )]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("--metrics-textfile {}: {why}", crate::terminal::field(&path.display().to_string()))]
    Textfile { path: PathBuf, why: String },
    #[error(
        "--metrics-listen {addr}: rank {rank} would listen on port {} + {rank}, past 65535: give a lower port, or port 0 for any free one",
        addr.port()
    )]
    RankPort { addr: SocketAddr, rank: u32 },
}

fn listen_hint(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => {
            " (another program serves that port: pick another, or port 0 for any free one)"
        }
        std::io::ErrorKind::AddrNotAvailable => {
            " (no interface of this host has that address: use 127.0.0.1, 0.0.0.0 or one of `ip -brief address`)"
        }
        std::io::ErrorKind::PermissionDenied => {
            " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
        }
        _ => "",
    }
}

/// Binds `addr` (a refusal names it and the likely fix).
fn listen(addr: SocketAddr) -> Result<std::net::TcpListener, MetricsError> {
    std::net::TcpListener::bind(addr).map_err(|source| MetricsError::Listen { addr, source })
}

/// Where rank `rank` listens: the port plus its rank (port 0 stays 0: any
/// free port), so that ranks sharing a host do not collide.
fn rank_addr(mut addr: SocketAddr, rank: Option<u32>) -> Result<SocketAddr, MetricsError> {
    let (Some(rank), port @ 1..) = (rank, addr.port()) else {
        return Ok(addr);
    };
    let Some(p) = u16::try_from(u32::from(port) + rank).ok() else {
        return Err(MetricsError::RankPort { addr, rank });
    };
    addr.set_port(p);
    Ok(addr)
}

/// An `ADDR:PORT` with an IP address (`127.0.0.1:9464`, `[::1]:9464`).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse::<SocketAddr>().map_err(|_| {
        "expects an IP address and a port, ADDR:PORT: 127.0.0.1:9464 (this host only), 0.0.0.0:9464 (every interface), [::1]:9464".to_string()
    })
}

/// Where live metrics go: the command line's (or the plan's) choice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Wanted {
    pub listen: Option<SocketAddr>,
    pub textfile: Option<PathBuf>,
}

impl Wanted {
    /// The command line's choice, else the plan file's (key by key).
    pub fn or(self, plan: &Wanted) -> Wanted {
        Wanted {
            listen: self.listen.or(plan.listen),
            textfile: self.textfile.or_else(|| plan.textfile.clone()),
        }
    }
}

/// The live view shared by the control thread (through [`RunWatch`]), the
/// HTTP server and the textfile writer. Cloning it shares it.
#[derive(Clone, Debug)]
pub struct Live {
    inner: Arc<Inner>,
    /// The address the server listens on (the port chosen when 0 was asked).
    pub addr: Option<SocketAddr>,
    /// The file `--metrics-textfile` writes.
    textfile: Option<PathBuf>,
    /// This process's MPI rank (a `rank` label on every run metric).
    rank: Option<u32>,
}

#[derive(Debug, Default)]
struct Inner {
    state: Mutex<State>,
    /// Signalled each time the state changes (the textfile writer waits on it).
    changed: Condvar,
    /// The generation the textfile holds, held while it is written: the
    /// writer thread and the run's last write never write at once, and the
    /// last one written is not written again (so no write is under way when
    /// the process ends after the run's last write).
    written: Mutex<u64>,
}

impl Live {
    /// Starts what `wanted` asks, or `None` when it asks nothing. Binds the
    /// address and checks the textfile directory before anything else happens.
    pub fn start(wanted: &Wanted) -> Result<Option<Live>, MetricsError> {
        Live::start_as(wanted, None)
    }

    /// [`Live::start`] for MPI rank `rank` (docs/metrics.md, "Under MPI"):
    /// it listens on the given port plus its rank (any free port for 0),
    /// writes `dbio-rank-N.prom`, and labels its run metrics with `rank`.
    pub fn start_as(wanted: &Wanted, rank: Option<u32>) -> Result<Option<Live>, MetricsError> {
        if wanted.listen.is_none() && wanted.textfile.is_none() {
            return Ok(None);
        }
        let file = match wanted.textfile.as_deref() {
            Some(dir) => Some(textfile::check(dir, &textfile::file_name(rank))?),
            None => None,
        };
        let listener = match wanted.listen {
            Some(addr) => Some(listen(rank_addr(addr, rank)?)?),
            None => None,
        };
        let mut live = Live {
            inner: Arc::new(Inner::default()),
            addr: None,
            textfile: file.clone(),
            rank,
        };
        if let Some(l) = listener {
            live.addr = l.local_addr().ok();
            http::serve(l, live.clone());
        }
        if let Some(file) = file {
            textfile::spawn(file, live.clone());
        }
        Ok(Some(live))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the state, then tells the textfile writer.
    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.inner.changed.notify_all();
    }

    /// The exposition as `format` asks, of the state now.
    pub fn exposition(&self, format: expo::Format) -> String {
        expo::render(&self.lock(), format)
    }

    /// The state's generation and its exposition in text format 0.0.4.
    fn generation_text(&self) -> (u64, String) {
        let state = self.lock();
        (
            state.generation,
            expo::render(&state, expo::Format::Prometheus),
        )
    }

    /// The live page's data (`/api/live`) as JSON.
    pub fn json(&self) -> String {
        self.lock().json().to_string()
    }

    /// Waits up to `timeout` for a change after `seen`; returns the state's generation.
    fn wait_change(&self, seen: u64, timeout: std::time::Duration) -> u64 {
        let guard = self.lock();
        let (guard, _) = self
            .inner
            .changed
            .wait_timeout_while(guard, timeout, |s| s.generation == seen)
            .unwrap_or_else(|p| p.into_inner());
        guard.generation
    }

    /// A new run of `cfg` begins (its labels; in a plan, its plan and variable).
    pub fn watch(&self, cfg: &RunConfig, plan: Option<&str>, variable: Option<&str>) -> RunWatch {
        let (planned_s, ramp_s) = match cfg.length {
            RunLength::Time { time_s, ramp_s } => (Some(time_s + ramp_s), ramp_s),
            RunLength::Ops { .. } => (None, 0.0),
        };
        let mut labels = Labels::new(cfg, plan, variable);
        if let Some(r) = self.rank {
            labels.0.push(("rank", r.to_string()));
        }
        let paced = cfg.rate_iops.is_some();
        self.update(|s| s.begin(labels, planned_s, ramp_s, paced));
        RunWatch { live: self.clone() }
    }

    /// A plan's progress: `done` of `total` runs, `eta_s` seconds left.
    pub fn plan_progress(&self, plan: &str, done: usize, total: usize, eta_s: f64) {
        self.update(|s| s.plan_progress(plan, done, total, eta_s));
    }
}

/// One run's observer: what the harness's control thread tells it goes
/// into the live view.
pub struct RunWatch {
    live: Live,
}

impl RunWatch {
    /// The run was saved in the store as `run_id`.
    pub fn saved(&self, run_id: i64) {
        self.live.update(|s| s.saved(run_id));
        // The run's last state in the textfile now, not when the writer
        // thread next wakes (the process may end first).
        if let Some(file) = &self.live.textfile {
            textfile::write_now(file, &self.live);
        }
    }
}

impl Observer for RunWatch {
    fn started(&self, start_unix_ns: u64) {
        self.live.update(|s| s.started(start_unix_ns));
    }

    fn second(&self, point: &SecondPoint, hists: &SecondHists, due: &DueHists) {
        self.live.update(|s| s.second(point, hists, due));
    }

    fn telemetry(&self, point: &TelemetryPoint) {
        self.live.update(|s| s.telemetry(point));
    }

    fn db(&self, db: &LiveDb) {
        self.live.update(|s| s.db(db));
    }

    fn ended(&self, interrupted: bool) {
        self.live.update(|s| s.ended(interrupted));
    }
}
