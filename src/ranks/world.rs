//! The MPI side of a run of several ranks (rsmpi over the system's MPI):
//! the job's ranks and hosts, errors every rank agrees on (so that no rank
//! waits at a barrier for one that gave up), the start barrier, the ranks'
//! results sent to rank 0 with a deadline (a hung rank is named, not waited
//! for), and a panic that aborts the whole job instead of leaving the other
//! ranks waiting. Before the start, the ranks' heartbeats (`watch`): a rank
//! silent for `--mpi-grace` while the others wait for it is named and the
//! job ended, so no rank waits at a barrier forever for one that hangs.
//!
//! MPI is called from the main thread only (`MPI_THREAD_FUNNELED`); long
//! work before the start runs on a worker thread (`busy`) while the main
//! thread keeps beating. Waits outside the measured window sleep between
//! polls: a rank spinning in a collective would take a core from the ranks
//! still running on its host.

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use ::mpi::collective::CommunicatorCollectives;
use ::mpi::datatype::PartitionMut;
use ::mpi::environment::Universe;
use ::mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use ::mpi::request::{Request, StaticScope};
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::{Count, Threading};

use super::watch::{FAILED, WAITING, Watch};
use crate::commands::CommandError;
use crate::harness::{NotStarted, StartSync};

/// The tag of a rank's results sent to rank 0 after the window.
const REPORT_TAG: ::mpi::Tag = 19;
/// The tags of the heartbeats before the start (what the rank is doing):
/// one per run of a plan, in turn, so that a late heartbeat of one run is
/// never heard in the next.
const HEARTBEAT_TAGS: std::ops::Range<::mpi::Tag> = 100..1100;

/// This process in its MPI job.
pub struct World {
    // Declared before the universe: dropped first, then MPI_Finalize.
    comm: SimpleCommunicator,
    _universe: Universe,
    pub rank: u32,
    pub size: u32,
    /// Every rank's host name, by rank.
    pub hosts: Vec<String>,
    /// The heartbeats before the start.
    watch: RefCell<Watch>,
    /// Heartbeats on their way (their bytes are static labels).
    sending: RefCell<Vec<Request<'static, [u8], StaticScope>>>,
    /// This run's heartbeat tag.
    tag: std::cell::Cell<::mpi::Tag>,
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
            watch: RefCell::new(Watch::new(rank, Vec::new())),
            sending: RefCell::new(Vec::new()),
            tag: std::cell::Cell::new(HEARTBEAT_TAGS.end - 1),
        };
        w.hosts = w
            .all_gather(host.as_bytes())
            .into_iter()
            .map(|h| String::from_utf8_lossy(&h).into_owned())
            .collect();
        w.watch = RefCell::new(Watch::new(rank, w.hosts.clone()));
        Ok(w)
    }

    /// Watches the ranks' heartbeats until the start barrier (or until the
    /// guard drops): a rank silent for `grace_s` ends the job, named.
    pub fn watch(&self, grace_s: f64) -> Watching<'_> {
        // Heartbeats left over from an earlier run of a plan say nothing now.
        while let Some(probed) = self
            .comm
            .any_process()
            .immediate_matched_probe_with_tag(self.tag.get())
        {
            probed.matched_receive_vec::<u8>();
        }
        let next = self.tag.get() + 1;
        self.tag.set(match HEARTBEAT_TAGS.contains(&next) {
            true => next,
            false => HEARTBEAT_TAGS.start,
        });
        let timeout = Duration::from_secs_f64(grace_s);
        self.watch.borrow_mut().arm(timeout, Instant::now());
        Watching(self)
    }

    /// Stops watching. The heartbeats still on their way are not waited
    /// for here, right before the start barrier (a rank that slept on them
    /// would reach the barrier late, and a rank spinning there for it may
    /// lose its core): they are seen off later (`beat`, `Drop`).
    fn unwatch(&self) {
        self.watch.borrow_mut().disarm();
    }

    /// `work` (this rank's `doing`, e.g. laying out its files) on a worker
    /// thread while this one keeps the heartbeats going: however long it
    /// takes, this rank is not silent; a stopped process or a stuck device
    /// is (`watch`). `work` is given a flag to stop early on, raised by
    /// `interrupt` (Ctrl-C) or when another rank failed; when `work` fails
    /// this rank says so at once, so that the others stop theirs.
    pub fn busy<T: Send, E: Send>(
        &self,
        doing: &'static str,
        interrupt: &AtomicBool,
        work: impl FnOnce(&AtomicBool) -> Result<T, E> + Send,
    ) -> Result<T, E> {
        if !self.watch.borrow().armed() {
            return work(interrupt);
        }
        self.watch.borrow_mut().doing(doing);
        let stop = AtomicBool::new(false);
        let out = std::thread::scope(|s| {
            let stop = &stop;
            let worker = std::thread::Builder::new()
                .name(format!("rank {}", self.rank))
                .spawn_scoped(s, move || work(stop))
                .expect("a worker thread for the work before the start");
            self.wait(|| {
                if interrupt.load(Relaxed) || self.watch.borrow().peer_failed() {
                    stop.store(true, Relaxed);
                }
                worker.is_finished()
            });
            worker.join()
        });
        let out = out.unwrap_or_else(|_| {
            eprintln!(
                "error: {} stopped on an internal error while {doing}; aborting every rank",
                self.name(self.rank)
            );
            World::abort(70)
        });
        let mut watch = self.watch.borrow_mut();
        match &out {
            Err(_) if !watch.peer_failed() => watch.doing(FAILED),
            _ => watch.doing(WAITING),
        }
        out
    }

    /// Waits until `done`, sleeping between polls; while watching, sends
    /// and hears the heartbeats and ends the job if a rank is silent.
    fn wait(&self, mut done: impl FnMut() -> bool) {
        while !done() {
            if self.watch.borrow().armed() {
                self.beat();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// One round of heartbeats: hear the ranks', send this one's when due,
    /// and end the job naming a watched rank that has been silent too long.
    fn beat(&self) {
        let now = Instant::now();
        let mut watch = self.watch.borrow_mut();
        watch.listen(now);
        while let Some(probed) = self
            .comm
            .any_process()
            .immediate_matched_probe_with_tag(self.tag.get())
        {
            let (doing, status) = probed.matched_receive_vec::<u8>();
            watch.heard(status.source_rank() as u32, &doing, now);
        }
        let mut sending = self.sending.borrow_mut();
        retire(&mut sending);
        if let Some(doing) = watch.due(now) {
            for p in watch.peers() {
                let to = self.comm.process_at_rank(p as i32);
                sending.push(to.immediate_send_with_tag(
                    StaticScope,
                    doing.as_bytes(),
                    self.tag.get(),
                ));
            }
        }
        if let Some(line) = watch.silent(now) {
            if crate::interrupt::interrupt_cause().is_some() {
                // This rank is being stopped (Ctrl-C, or mpirun ending the
                // job: it continues a stopped rank and sends SIGTERM): the
                // others' silence is the job ending, not a fault to name.
                World::abort(i32::from(crate::commands::EXIT_INTERRUPTED));
            }
            eprintln!("error: {line}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
            World::abort(i32::from(crate::commands::EXIT_FAILED));
        }
    }

    /// `rank N (host)`, as errors name a rank.
    pub fn name(&self, rank: u32) -> String {
        format!("rank {rank} ({})", self.hosts[rank as usize])
    }

    /// The MPI library's first line (`Open MPI v4.1.4`, `MPICH Version: 4.0.2`).
    pub fn library() -> String {
        let v = ::mpi::environment::library_version().unwrap_or_default();
        let v = v.trim_end_matches('\0');
        let first = v.split([',', '\n']).next().unwrap_or(v);
        first.split_whitespace().collect::<Vec<_>>().join(" ")
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
    /// A rank that gave up its step because another failed (`busy`) is
    /// named only if no rank failed on its own.
    pub fn agree<T>(&self, local: Result<T, CommandError>) -> Result<T, CommandError> {
        let gave_up = self.watch.borrow().peer_failed();
        let mine = match &local {
            Ok(_) => Vec::new(),
            Err(e) => format!("{}{e}", e.exit_code() as char).into_bytes(),
        };
        let mine = [vec![u8::from(gave_up && !mine.is_empty())], mine].concat();
        let all = self.all_gather(&mine);
        let failed = all
            .iter()
            .map(|m| (m[0] == 1, &m[1..]))
            .enumerate()
            .filter(|(_, (_, m))| !m.is_empty())
            .min_by_key(|(r, (gave_up, _))| (*gave_up, *r))
            .map(|(r, (_, m))| (r, m.to_vec()));
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

    /// Waits for every rank, sleeping between polls instead of spinning
    /// (and beating, while watching).
    fn quiet_barrier(&self) {
        let mut req = Some(self.comm.immediate_barrier());
        self.wait(|| match req.take().map(Request::test) {
            Some(Err(r)) => {
                req = Some(r);
                false
            }
            _ => true,
        });
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
        // Every rank is here: the heartbeats end before the barrier.
        self.unwatch();
        self.comm.barrier();
        Ok(())
    }
}

impl Drop for World {
    /// Sees off the heartbeats still on their way before MPI_Finalize (a
    /// send whose rank is gone is left to it).
    fn drop(&mut self) {
        let until = Instant::now() + Duration::from_secs(2);
        let sending = self.sending.get_mut();
        while !sending.is_empty() && Instant::now() < until {
            retire(sending);
            std::thread::sleep(Duration::from_millis(1));
        }
        sending.drain(..).for_each(std::mem::forget);
    }
}

/// Watching the heartbeats (`World::watch`) until dropped.
pub struct Watching<'a>(&'a World);

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        if self.0.watch.borrow().armed() {
            self.0.unwatch();
        }
    }
}

/// Drops the heartbeats that have left.
fn retire(sending: &mut Vec<Request<'static, [u8], StaticScope>>) {
    *sending = std::mem::take(sending)
        .into_iter()
        .filter_map(|r| r.test().err())
        .collect();
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
