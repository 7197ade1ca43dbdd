//! `dbio capture`: the kernel's `block:block_rq_issue` and
//! `block:block_rq_complete` tracepoints, in a tracefs instance of dbio's
//! own filtered to the devices' dev_t, read as binary pages from every
//! CPU's `trace_pipe_raw` (`rawpipe`: ns times on the monotonic clock;
//! the reader sleeps until a buffer is [`BUFFER_PERCENT`] full or
//! `rawpipe::WAKE` passes, then reads whole pages), paired into one
//! [`Request`] each and written to a dbio trace in issue order. The
//! tracepoints name a partition's whole disk (`disk_devt`) with sectors
//! from the disk's start: a partition is traced as its disk and its
//! requests told apart by sector.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::native::Writer;
use super::pair::Pairer;
use super::rawpipe::{RawPipes, WAKE};
use super::tracefs::{Instance, TracefsError};
use super::{Comm, Device, Entry, Flags, Op, Request, Summary, TraceError};
use crate::measure::cpu::thread_cpu_ns;

/// The per-CPU ring buffer a capture asks for by default (KiB): measured
/// to lose nothing at a raw run's rates here (docs/replay.md).
pub const DEFAULT_BUFFER_KB: u32 = 16 * 1024;
/// How full a CPU's buffer is (%) when the kernel wakes the reader before
/// `rawpipe::WAKE` has passed: a quarter of 16 MiB is about 60,000 events,
/// and three quarters are left to fill while the reader catches up.
pub(crate) const BUFFER_PERCENT: u32 = 25;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("--device {}: {what}", path.display())]
    Device { path: PathBuf, what: String },
    #[error(transparent)]
    Tracefs(#[from] TracefsError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("cannot read the trace pipe {}: {source}", path.display())]
    Pipe {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A device to capture: what the user named and where the kernel's events
/// for it come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    pub number: (u32, u32),
    /// The whole disk the tracepoints name (the device itself if it is one).
    pub disk: (u32, u32),
    /// A partition's first sector and length on its disk (None: whole disk).
    pub range: Option<(u64, u64)>,
}

impl Target {
    /// `path` must be a block device; a partition resolves to its disk.
    pub fn resolve(path: &Path) -> Result<Target, CaptureError> {
        let bad = |what: String| CaptureError::Device {
            path: path.to_path_buf(),
            what,
        };
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        if !meta.file_type().is_block_device() {
            return Err(bad(
                "not a block device (capture traces block devices; give /dev/NAME)".into(),
            ));
        }
        let number = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
        let sys = Path::new("/sys/dev/block").join(format!("{}:{}", number.0, number.1));
        let sys =
            std::fs::canonicalize(&sys).map_err(|e| bad(format!("{}: {e}", sys.display())))?;
        if !sys.join("partition").exists() {
            return Ok(Target {
                path: path.to_path_buf(),
                number,
                disk: number,
                range: None,
            });
        }
        let read = |p: PathBuf| {
            std::fs::read_to_string(&p)
                .map(|s| s.trim().to_string())
                .map_err(|e| bad(format!("{}: {e}", p.display())))
        };
        let num = |p: PathBuf| -> Result<u64, CaptureError> {
            let s = read(p.clone())?;
            s.parse()
                .map_err(|_| bad(format!("{}: {s:?} is not a number", p.display())))
        };
        let disk_dev = read(sys.parent().unwrap_or(&sys).join("dev"))?;
        let disk = disk_dev
            .split_once(':')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or_else(|| {
                bad(format!(
                    "its disk's device number {disk_dev:?} is not MAJ:MIN"
                ))
            })?;
        let range = Some((num(sys.join("start"))?, num(sys.join("size"))?));
        Ok(Target {
            path: path.to_path_buf(),
            number,
            disk,
            range,
        })
    }

    /// The kernel's dev_t of the disk, as the tracepoints' `dev` field has it.
    pub(crate) fn kernel_dev(&self) -> u64 {
        (u64::from(self.disk.0) << 20) | u64::from(self.disk.1)
    }

    fn holds(&self, sector: u64) -> bool {
        self.range
            .is_none_or(|(start, len)| sector >= start && sector < start + len)
    }

    /// Its first sector on the disk the tracepoints name.
    fn first_sector(&self) -> u64 {
        self.range.map_or(0, |(s, _)| s)
    }
}

/// What to capture.
pub struct Options {
    pub targets: Vec<Target>,
    /// Stop after this long (else at `stop`).
    pub time: Option<Duration>,
    pub buffer_kb: u32,
    pub output: PathBuf,
}

/// What a capture recorded.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Outcome {
    pub summary: Summary,
    /// Events the kernel's ring buffer dropped (overruns): 0 for a whole trace.
    pub lost_events: u64,
    /// Completions of requests issued before the capture began.
    pub unmatched_completions: u64,
    pub seconds: f64,
    /// Times the reader woke to read the buffers (about 1 / `rawpipe::WAKE`
    /// a second, more only when a buffer fills faster).
    pub reader_wakes: u64,
    /// CPU time the reader's thread used from the start to the end
    /// (reading, decoding, pairing, compressing and writing the trace).
    pub reader_cpu_s: f64,
}

/// Captures until `time` passes or `stop` is raised; `ready` is called
/// once the tracepoints are on. The instance is removed on every return.
pub fn capture(
    opts: &Options,
    stop: &AtomicBool,
    ready: impl FnOnce(),
) -> Result<Outcome, CaptureError> {
    let mut writer = Writer::create(&opts.output)?;
    let result = capture_into(opts, stop, ready, &mut writer);
    match result {
        Ok(mut out) => {
            writer.finish()?;
            out.summary.devices = opts
                .targets
                .iter()
                .map(|t| t.path.display().to_string())
                .collect();
            Ok(out)
        }
        Err(e) => {
            drop(writer);
            let _ = std::fs::remove_file(&opts.output);
            Err(e)
        }
    }
}

fn configure(inst: &Instance, opts: &Options) -> Result<(), TracefsError> {
    inst.set("trace_clock", "mono")?;
    inst.set("buffer_size_kb", &opts.buffer_kb.to_string())?;
    inst.set("buffer_percent", &BUFFER_PERCENT.to_string())?;
    let mut devs: Vec<u64> = opts.targets.iter().map(Target::kernel_dev).collect();
    devs.sort_unstable();
    devs.dedup();
    let filter = devs
        .iter()
        .map(|d| format!("dev == {d}"))
        .collect::<Vec<_>>()
        .join(" || ");
    for ev in ["block_rq_issue", "block_rq_complete"] {
        inst.set(&format!("events/block/{ev}/filter"), &filter)?;
        inst.set(&format!("events/block/{ev}/enable"), "1")?;
    }
    inst.set("tracing_on", "1")
}

fn capture_into(
    opts: &Options,
    stop: &AtomicBool,
    ready: impl FnOnce(),
    writer: &mut Writer,
) -> Result<Outcome, CaptureError> {
    for (i, t) in opts.targets.iter().enumerate() {
        writer.write(&Entry::Device(Device {
            index: i as u16,
            name: t.path.display().to_string(),
            number: Some(t.number),
        }))?;
    }
    let inst = Instance::create(&format!("{}{}", super::tracefs::PREFIX, std::process::id()))?;
    configure(&inst, opts)?;
    yield_to_the_captured();
    let mut pipes = RawPipes::open(&inst)?;
    let started = Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut state = Reading::new(opts, mono_ns());
    ready();
    let mut wakes = 0;
    loop {
        wakes += 1;
        let over =
            stop.load(Ordering::Relaxed) || opts.time.is_some_and(|t| started.elapsed() >= t);
        if over {
            // No new events; what the buffers hold is still read.
            inst.set("tracing_on", "0")?;
        }
        let pipe_error = |source| CaptureError::Pipe {
            path: inst.path("per_cpu"),
            source,
        };
        pipes.drain().map_err(pipe_error)?;
        pipes.settled(over, |ev| state.event(ev, writer));
        if let Some(e) = state.write_error.take() {
            return Err(e.into());
        }
        if over {
            break;
        }
        pipes.wait(WAKE).map_err(pipe_error)?;
    }
    let (summary, werr) = (&mut state.summary, &mut state.write_error);
    state.pairer.finish(&mut |r| {
        let e = Entry::Request(r);
        summary.add(&e);
        if werr.is_none() {
            *werr = writer.write(&e).err();
        }
    });
    if let Some(e) = state.write_error.take() {
        return Err(e.into());
    }
    drop(pipes);
    let lost = inst.lost_events()?;
    Ok(Outcome {
        summary: state.summary,
        lost_events: lost,
        unmatched_completions: state.pairer.unmatched_completions,
        seconds: started.elapsed().as_secs_f64(),
        reader_wakes: wakes,
        reader_cpu_s: thread_cpu_ns().saturating_sub(cpu0) as f64 / 1e9,
    })
}

/// The reader's nice value: below the threads whose I/O it records, so
/// that a thread woken for its I/O (a session of a captured run) takes the
/// CPU from the reader at once rather than at the end of its slice. The
/// reader needs about 1.5% of a CPU at 40,000 requests a second and the
/// buffers hold seconds of events, so it catches up when they sleep.
pub(crate) const READER_NICE: i32 = 10;

/// Lowers the calling thread's priority to [`READER_NICE`] (never raises it).
fn yield_to_the_captured() {
    // SAFETY: plain system calls on this thread's own id.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if now < READER_NICE {
            libc::setpriority(libc::PRIO_PROCESS, tid, READER_NICE);
        }
    }
}

fn mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The reader's state between reads of the pipes.
struct Reading {
    t0: u64,
    /// Kernel dev_t → the targets on that disk (index, target).
    by_disk: FxHashMap<u64, Vec<(u16, Target)>>,
    pairer: Pairer,
    summary: Summary,
    write_error: Option<TraceError>,
}

impl Reading {
    fn new(opts: &Options, t0: u64) -> Reading {
        let mut by_disk: FxHashMap<u64, Vec<(u16, Target)>> = FxHashMap::default();
        for (i, t) in opts.targets.iter().enumerate() {
            by_disk
                .entry(t.kernel_dev())
                .or_default()
                .push((i as u16, t.clone()));
        }
        Reading {
            t0,
            by_disk,
            pairer: Pairer::default(),
            summary: Summary::default(),
            write_error: None,
        }
    }

    /// One issue or completion.
    fn event(&mut self, ev: Event, w: &mut Writer) {
        let Some((device, start)) = self.target(&ev) else {
            return;
        };
        let at = ev.ts_ns.saturating_sub(self.t0);
        let (summary, werr) = (&mut self.summary, &mut self.write_error);
        let mut out = |r: Request| {
            let e = Entry::Request(r);
            summary.add(&e);
            if werr.is_none() {
                *werr = w.write(&e).err();
            }
        };
        match ev.kind {
            Kind::Complete => self.pairer.complete(device, ev.sector, at, &mut out),
            Kind::Issue { comm } => {
                let r = Request {
                    issue_ns: at,
                    complete_ns: None,
                    device,
                    offset: if ev.op == Op::Flush {
                        0
                    } else {
                        ev.sector.saturating_sub(start) * 512
                    },
                    len: ev.sectors.saturating_mul(512),
                    op: ev.op,
                    flags: ev.flags,
                    pid: ev.tgid.or(Some(ev.tid)),
                    tid: Some(ev.tid),
                    comm,
                };
                self.pairer.issue(ev.sector, r, &mut out);
            }
        }
    }

    /// The target an event belongs to (by disk, then sector): its index
    /// and its first sector on the disk.
    fn target(&self, ev: &Event) -> Option<(u16, u64)> {
        let ts = self.by_disk.get(&ev.dev)?;
        let no_data = ev.sectors == 0;
        ts.iter()
            .find(|(_, t)| no_data || t.holds(ev.sector))
            .map(|(i, t)| (*i, t.first_sector()))
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    Issue { comm: Comm },
    Complete,
}

/// One block event, decoded.
#[derive(Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: Kind,
    pub ts_ns: u64,
    pub tid: u32,
    pub tgid: Option<u32>,
    pub dev: u64,
    pub op: Op,
    pub flags: Flags,
    pub sector: u64,
    pub sectors: u32,
}

/// The kernel's `rwbs` (blk_fill_rwbs): an optional `F` (preflush), the
/// operation (`W`, `D` or `DE`, `F`, `R`, `N`), then `F` (FUA), `A`
/// (readahead), `S` (sync), `M` (metadata). None for `N` (no data
/// operation a trace replays).
pub(crate) fn parse_rwbs(b: &[u8]) -> Option<(Op, Flags)> {
    let mut flags = Flags::default();
    let mut i = 0;
    if b.len() > 1 && b[0] == b'F' && matches!(b[1], b'W' | b'D' | b'F' | b'R' | b'N') {
        flags.insert(Flags::PREFLUSH);
        i = 1;
    }
    let op = match b.get(i)? {
        b'W' => Op::Write,
        b'R' => Op::Read,
        b'F' => Op::Flush,
        b'D' => {
            if b.get(i + 1) == Some(&b'E') {
                i += 1;
            }
            Op::Discard
        }
        _ => return None,
    };
    for c in &b[i + 1..] {
        match c {
            b'F' => flags.insert(Flags::FUA),
            b'A' => flags.insert(Flags::READAHEAD),
            b'S' => flags.insert(Flags::SYNC),
            b'M' => flags.insert(Flags::META),
            _ => return None,
        }
    }
    Some((op, flags))
}

#[cfg(test)]
mod tests;
