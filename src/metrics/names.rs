//! Every metric dbio exposes: its family name, type, labels beyond the
//! run's and what it means (docs/metrics.md lists the same, a test keeps
//! them in step). Names follow Prometheus's conventions: a `dbio_` prefix,
//! base units (seconds, bytes, ratios) in the name, `_total` on counters.

/// A metric family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Counter,
    Gauge,
    Histogram,
}

impl Type {
    pub fn word(self) -> &'static str {
        match self {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
            Type::Histogram => "histogram",
        }
    }
}

/// Which labels a family carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The run's labels (run, plan, variable, workload, sessions, target) and `extra`.
    Run,
    /// Only `plan`.
    Plan,
}

/// One metric family.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The family name (a counter's samples add `_total`, a histogram's
    /// `_bucket`, `_sum`, `_count`).
    pub name: &'static str,
    pub kind: Type,
    pub scope: Scope,
    /// Labels besides the scope's.
    pub extra: &'static [&'static str],
    pub help: &'static str,
}

impl Family {
    /// The names its samples have.
    pub fn samples(&self) -> Vec<String> {
        match self.kind {
            Type::Counter => vec![format!("{}_total", self.name)],
            Type::Gauge => vec![self.name.to_string()],
            Type::Histogram => ["_bucket", "_sum", "_count"]
                .iter()
                .map(|s| format!("{}{s}", self.name))
                .collect(),
        }
    }
}

const fn f(
    name: &'static str,
    kind: Type,
    scope: Scope,
    extra: &'static [&'static str],
    help: &'static str,
) -> Family {
    Family {
        name,
        kind,
        scope,
        extra,
        help,
    }
}

use Scope::{Plan, Run};
use Type::{Counter, Gauge, Histogram};

/// Every family, in the order of the exposition.
pub const FAMILIES: &[Family] = &[
    f(
        "dbio_run_running",
        Gauge,
        Run,
        &[],
        "1 while the run's sessions are running, 0 before they start and once they ended.",
    ),
    f(
        "dbio_run_ramp",
        Gauge,
        Run,
        &[],
        "1 while the run is in its ramp (warm-up, not measured), else 0.",
    ),
    f(
        "dbio_run_elapsed_seconds",
        Gauge,
        Run,
        &[],
        "Seconds of the run collected so far (ramp included).",
    ),
    f(
        "dbio_run_planned_seconds",
        Gauge,
        Run,
        &[],
        "Ramp plus measured seconds of a time-bound run (absent for an --ops run).",
    ),
    f(
        "dbio_run_stored_id",
        Gauge,
        Run,
        &[],
        "The run's id in the results store once it is saved (dbio report ID).",
    ),
    f(
        "dbio_requests",
        Counter,
        Run,
        &["op"],
        "Requests completed, by operation (read, write, sync), ramp included.",
    ),
    f(
        "dbio_request_bytes",
        Counter,
        Run,
        &["op"],
        "Bytes moved by completed requests, by operation.",
    ),
    f(
        "dbio_request_service_seconds",
        Histogram,
        Run,
        &["op"],
        "Service latency of completed requests (issue to completion), by operation.",
    ),
    f(
        "dbio_request_due_seconds",
        Histogram,
        Run,
        &["op"],
        "A paced run's (--rate) latency from the due time (due time to completion: service plus any wait for a free session), of requests (raw) or operations and transactions (slob, pg, mysql: selects and scans as read, updates as write); absent in a closed loop.",
    ),
    f(
        "dbio_request_lateness_seconds",
        Histogram,
        Run,
        &["op"],
        "A paced run's issue lateness (due time to issue), by operation as dbio_request_due_seconds; absent in a closed loop.",
    ),
    f(
        "dbio_device_reads_completed",
        Counter,
        Run,
        &["device"],
        "Reads completed by a device under the target (iostat r/s integrated).",
    ),
    f(
        "dbio_device_writes_completed",
        Counter,
        Run,
        &["device"],
        "Writes completed by a device under the target (iostat w/s integrated).",
    ),
    f(
        "dbio_device_read_bytes",
        Counter,
        Run,
        &["device"],
        "Bytes read by a device under the target.",
    ),
    f(
        "dbio_device_written_bytes",
        Counter,
        Run,
        &["device"],
        "Bytes written by a device under the target.",
    ),
    f(
        "dbio_device_read_time_seconds",
        Counter,
        Run,
        &["device"],
        "Seconds reads spent in a device (r_await times reads).",
    ),
    f(
        "dbio_device_write_time_seconds",
        Counter,
        Run,
        &["device"],
        "Seconds writes spent in a device (w_await times writes).",
    ),
    f(
        "dbio_device_io_time_seconds",
        Counter,
        Run,
        &["device"],
        "Seconds a device was busy (its rate is %util as a ratio).",
    ),
    f(
        "dbio_device_io_time_weighted_seconds",
        Counter,
        Run,
        &["device"],
        "Request-seconds in a device (its rate is the average queue size, aqu-sz).",
    ),
    f(
        "dbio_device_utilization_ratio",
        Gauge,
        Run,
        &["device"],
        "A device's busy share over the last telemetry interval (%util / 100).",
    ),
    f(
        "dbio_host_cpu_ratio",
        Gauge,
        Run,
        &["mode"],
        "Share of the host's CPU time in each mode over the last telemetry interval.",
    ),
    f(
        "dbio_host_context_switches",
        Counter,
        Run,
        &[],
        "Context switches on the host during the run.",
    ),
    f(
        "dbio_host_load1",
        Gauge,
        Run,
        &[],
        "The host's 1-minute load average.",
    ),
    f(
        "dbio_host_dirty_bytes",
        Gauge,
        Run,
        &[],
        "Dirty page cache on the host (Dirty in /proc/meminfo).",
    ),
    f(
        "dbio_host_writeback_bytes",
        Gauge,
        Run,
        &[],
        "Page cache under writeback on the host (Writeback in /proc/meminfo).",
    ),
    f(
        "dbio_db_wait_seconds",
        Counter,
        Run,
        &["process", "event", "class"],
        "Seconds a database run's sessions (process session), background processes (process background) or server threads together (process server) spent in each wait event (class: its wait class) or CPU: measured by the SLOB model and MariaDB's performance_schema, estimated from the sampled activity for pg and mysql sessions (samples / rate).",
    ),
    f(
        "dbio_db_waits",
        Counter,
        Run,
        &["process", "event", "class"],
        "Waits counted in each wait event (the SLOB model; MariaDB's performance_schema, server-wide, process server; PostgreSQL counts none).",
    ),
    f(
        "dbio_db_commits",
        Counter,
        Run,
        &[],
        "Transactions committed (the SLOB model's commits; pg_stat_database xact_commit; MariaDB Com_commit).",
    ),
    f(
        "dbio_db_writer_writes",
        Counter,
        Run,
        &["writer"],
        "Writes by the DB writers (writer db: the model's DBWn, PostgreSQL's checkpointer and background writer buffers, InnoDB pages written) and the log writer (writer log: the model's LGWR, WAL writes; MariaDB has no count).",
    ),
    f(
        "dbio_db_writer_written_bytes",
        Counter,
        Run,
        &["writer"],
        "Bytes written by the DB writers (writer db) and the log writer (writer log: the model's redo, WAL generated, InnoDB's redo written).",
    ),
    f("dbio_plan_runs", Gauge, Plan, &[], "Runs in the plan."),
    f(
        "dbio_plan_runs_done",
        Gauge,
        Plan,
        &[],
        "Runs of the plan done (completed now or before) or failed.",
    ),
    f(
        "dbio_plan_eta_seconds",
        Gauge,
        Plan,
        &[],
        "Estimated seconds until the plan ends.",
    ),
];

/// The modes of `dbio_host_cpu_ratio`.
pub const CPU_MODES: &[&str] = &[
    "user", "nice", "system", "iowait", "irq", "softirq", "steal", "idle",
];

/// The family named `name`.
pub fn family(name: &str) -> &'static Family {
    FAMILIES
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("{name} is in metrics::names::FAMILIES"))
}
