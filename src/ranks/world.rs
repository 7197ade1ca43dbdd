//! The MPI side of a run of several ranks (rsmpi over the system's MPI):
//! the job's ranks and hosts, errors every rank agrees on (so that no rank
//! waits at a barrier for one that gave up), the start barrier, the ranks'
//! results sent to rank 0 with a deadline (a hung rank is named, not waited
//! for), and a panic that aborts the whole job instead of leaving the other
//! ranks waiting.
//!
//! MPI is called from the main thread only (`MPI_THREAD_FUNNELED`). Waits
//! outside the measured window sleep between polls: a rank spinning in a
//! collective would take a core from the ranks still running on its host.

use std::time::{Duration, Instant};

use ::mpi::collective::CommunicatorCollectives;
use ::mpi::datatype::PartitionMut;
use ::mpi::environment::Universe;
use ::mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::{Count, Threading};

use crate::commands::CommandError;
use crate::harness::{NotStarted, StartSync};

/// The tag of a rank's results sent to rank 0 after the window.
const REPORT_TAG: ::mpi::Tag = 19;

/// This process in its MPI job.
pub struct World {
    // Declared before the universe: dropped first, then MPI_Finalize.
    comm: SimpleCommunicator,
    _universe: Universe,
    pub rank: u32,
    pub size: u32,
    /// Every rank's host name, by rank.
    pub hosts: Vec<String>,
}

impl World {
    /// Joins the job (MPI_Init): one rank of one when not started by a launcher.
    pub fn init(host: &str) -> Result<World, CommandError> {
        let (universe, _) =
            ::mpi::initialize_with_threading(Threading::Funneled).ok_or_else(|| {
                CommandError::Failed("--mpi: MPI was already initialized in this process".into())
            })?;
        let comm = universe.world();
        let (rank, size) = (comm.rank() as u32, comm.size() as u32);
        let mut w = World {
            comm,
            _universe: universe,
            rank,
            size,
            hosts: Vec::new(),
        };
        w.hosts = w
            .all_gather(host.as_bytes())
            .into_iter()
            .map(|h| String::from_utf8_lossy(&h).into_owned())
            .collect();
        Ok(w)
    }

    /// `rank N (host)`, as errors name a rank.
    pub fn name(&self, rank: u32) -> String {
        format!("rank {rank} ({})", self.hosts[rank as usize])
    }

    /// The MPI library's first line (`Open MPI v4.1.4, ...`).
    pub fn library() -> String {
        let v = ::mpi::environment::library_version().unwrap_or_default();
        let v = v.trim_end_matches('\0');
        v.split([',', '\n']).next().unwrap_or(v).trim().to_string()
    }

    /// Every rank's `bytes`, by rank, on every rank.
    pub fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let bytes = not_in_place(bytes);
        self.quiet_barrier();
        let mut lens = vec![0 as Count; self.size as usize];
        self.comm
            .all_gather_into(&(bytes.len() as Count), &mut lens[..]);
        let (displs, total) = displacements(&lens);
        let mut buf = vec![0u8; total.max(1)];
        let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        self.comm.all_gather_varcount_into(bytes, &mut part);
        split(&buf, &lens, &displs)
    }

    /// Every rank's `bytes` on rank 0, by rank, waiting for them until
    /// `deadline` at most: a rank that has not sent by then is `None` (a
    /// hung rank; the caller ends the job). The others get `None` back once
    /// rank 0 has their bytes. Point to point rather than a collective, so
    /// that rank 0 learns which ranks are missing; every wait sleeps
    /// between polls.
    pub fn report_by(&self, bytes: &[u8], deadline: Instant) -> Option<Vec<Option<Vec<u8>>>> {
        let bytes = not_in_place(bytes);
        if self.rank != 0 {
            let root = self.comm.process_at_rank(0);
            ::mpi::request::scope(|scope| {
                let mut req = root.immediate_send_with_tag(scope, bytes, REPORT_TAG);
                loop {
                    match req.test() {
                        Ok(_) => return,
                        Err(r) => req = r,
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            return None;
        }
        let mut got: Vec<Option<Vec<u8>>> = vec![None; self.size as usize];
        got[0] = Some(bytes.to_vec());
        loop {
            for (r, slot) in got.iter_mut().enumerate().skip(1) {
                if slot.is_some() {
                    continue;
                }
                let from = self.comm.process_at_rank(r as i32);
                if let Some(probed) = from.immediate_matched_probe_with_tag(REPORT_TAG) {
                    *slot = Some(probed.matched_receive_vec::<u8>().0);
                }
            }
            if got.iter().all(Option::is_some) || Instant::now() >= deadline {
                return Some(got);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Rank 0's `bytes` on every rank (the others' are ignored).
    pub fn root_says(&self, bytes: &[u8]) -> Vec<u8> {
        let mine = if self.rank == 0 { bytes } else { &[] };
        self.all_gather(mine).swap_remove(0)
    }

    /// `local` if every rank succeeded, else on every rank the error of the
    /// lowest rank that failed, naming it: every rank gives up together.
    pub fn agree<T>(&self, local: Result<T, CommandError>) -> Result<T, CommandError> {
        let mine = match &local {
            Ok(_) => Vec::new(),
            Err(e) => format!("{}{e}", e.exit_code() as char).into_bytes(),
        };
        let failed = self
            .all_gather(&mine)
            .into_iter()
            .enumerate()
            .find(|(_, m)| !m.is_empty());
        match failed {
            None => local,
            Some((rank, m)) => {
                let (code, msg) = (m[0], String::from_utf8_lossy(&m[1..]));
                let msg = format!("{}: {msg}", self.name(rank as u32));
                Err(match code {
                    c if c == crate::commands::EXIT_USAGE => CommandError::Usage(msg),
                    c if c == crate::commands::EXIT_INTERRUPTED => CommandError::Interrupted(msg),
                    _ => CommandError::Failed(msg),
                })
            }
        }
    }

    /// Waits for every rank, sleeping between polls instead of spinning.
    fn quiet_barrier(&self) {
        let mut req = self.comm.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => req = r,
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Ends every rank of the job at once (mpirun exits with `code`).
    pub fn abort(code: i32) -> ! {
        SimpleCommunicator::world().abort(code)
    }
}

impl StartSync for World {
    /// Agrees on whether every rank is ready, then leaves one barrier
    /// together: the clocks start within microseconds of each other.
    fn start(&self, local_error: Option<String>) -> Result<(), NotStarted> {
        let local = local_error.map_or(Ok(()), |e| Err(CommandError::Failed(e)));
        self.agree(local).map_err(|e| NotStarted(e.to_string()))?;
        self.comm.barrier();
        Ok(())
    }
}

/// A panic on the main thread (the one that talks to MPI) aborts the job:
/// unwinding would leave the other ranks waiting in a collective. A panic
/// of a run's thread is the harness's to report: it fails the run cleanly.
pub fn abort_on_panic(rank: u32, host: String) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        if std::thread::current().name() == Some("main") {
            eprintln!(
                "error: rank {rank} ({host}) stopped on an internal error; aborting every rank"
            );
            World::abort(70);
        }
    }));
}

/// An empty slice's dangling address is 1, which Open MPI reads as
/// MPI_IN_PLACE: an empty buffer is sent from a real address instead.
fn not_in_place(bytes: &[u8]) -> &[u8] {
    static NOTHING: [u8; 1] = [0];
    if bytes.is_empty() {
        &NOTHING[..0]
    } else {
        bytes
    }
}

fn displacements(lens: &[Count]) -> (Vec<Count>, usize) {
    let mut displs = Vec::with_capacity(lens.len());
    let mut at: Count = 0;
    for l in lens {
        displs.push(at);
        at += l;
    }
    (displs, at as usize)
}

fn split(buf: &[u8], lens: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    lens.iter()
        .zip(displs)
        .map(|(l, d)| buf[*d as usize..(*d + *l) as usize].to_vec())
        .collect()
}
