//! What a database run (slob, pg, mysql) has counted so far, for a live
//! view (`harness::Observer::db`): its waits by event, its commits, and
//! its DB writers' and log writer's writes. The pg and mysql sampler thread
//! makes it about once a second from the server's own views; the SLOB
//! model sums it from per-thread tallies when the control thread asks
//! (`Workload::live`). Counts start when the workload's counting does: the
//! model's at the start, a server's at the window's first edge.

/// Who waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    /// dbio's sessions (DB time).
    Session,
    /// The server's (or the model's) background processes: writers, checkpointer.
    Background,
    /// Every thread of the server together (MariaDB's performance_schema
    /// summaries, which count each wait server-wide).
    Server,
}

impl Process {
    /// The `process` label's value.
    pub fn name(self) -> &'static str {
        match self {
            Process::Session => "session",
            Process::Background => "background",
            Process::Server => "server",
        }
    }
}

/// One wait event so far.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveWait {
    pub process: Process,
    /// As the database names it (`db file sequential read`, `IO:DataFileRead`).
    pub event: String,
    /// Its wait class (`User I/O`, `IO`); empty where the server has none.
    pub class: String,
    /// Seconds spent in it: measured (the model), or estimated from the
    /// sampled activity (samples / rate: pg, mysql).
    pub seconds: f64,
    /// Waits counted, where they are counted (the model); None where the
    /// activity is sampled.
    pub count: Option<u64>,
}

/// Which writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// The DB writers (DBWn; PostgreSQL's checkpointer and background
    /// writer; InnoDB's page flushes).
    Db,
    /// The log writer (LGWR; WAL; InnoDB's redo log).
    Log,
}

impl Writer {
    /// The `writer` label's value.
    pub fn name(self) -> &'static str {
        match self {
            Writer::Db => "db",
            Writer::Log => "log",
        }
    }
}

/// A writer's writes so far, where the database counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriterIo {
    pub writes: Option<f64>,
    pub bytes: Option<f64>,
}

/// A database's counters so far, besides its waits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Activity {
    /// Transactions committed.
    pub commits: Option<f64>,
    pub db_writer: WriterIo,
    pub log_writer: WriterIo,
}

/// What a database run has counted so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveDb {
    /// Raised each time there is something new to show.
    pub seq: u64,
    pub waits: Vec<LiveWait>,
    pub activity: Activity,
}

impl LiveDb {
    /// The writers with what they wrote so far.
    pub fn writers(&self) -> [(Writer, WriterIo); 2] {
        [
            (Writer::Db, self.activity.db_writer),
            (Writer::Log, self.activity.log_writer),
        ]
    }
}
