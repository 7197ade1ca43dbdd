//! The binary side of a tracing instance: every CPU's `trace_pipe_raw`,
//! read a ring-buffer sub-buffer at a time (the page header — u64
//! timestamp, u64 commit whose low 30 bits are the data's length — then
//! events, each behind a 32-bit header of 5 bits type/length and 27 bits
//! of time delta, as the kernel's `ring_buffer.c` writes them), the block
//! events decoded at the offsets their `format` files give, with ns
//! timestamps. The reader sleeps in `poll` until a CPU's buffer is
//! `buffer_percent` full or [`WAKE`] passes, so it reads whole pages
//! rather than a few events at a time. A CPU's events come in time order;
//! the CPUs' are merged and handed on once older than [`SETTLE_NS`]
//! (another CPU may still hold older ones).

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use rustc_hash::FxHashMap;

use super::Comm;
use super::capture::{Event, Kind, parse_rwbs};
use super::tracefs::{Instance, TracefsError};

/// Events are ordered across CPUs once this much older than the newest read.
pub(crate) const SETTLE_NS: u64 = 200_000_000;
/// The longest the reader sleeps between reads when the buffers fill slowly.
pub(crate) const WAKE: Duration = Duration::from_millis(100);
/// The sub-buffer ("page") size when the kernel does not say (before 6.8).
const PAGE: usize = 4096;
const HEADER: usize = 16;
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;

/// Where an event's fields are (from its `format` file).
#[derive(Clone, Copy, Debug, Default)]
struct Layout {
    id: u16,
    pid: usize,
    dev: usize,
    sector: usize,
    nr_sector: usize,
    rwbs: usize,
    comm: Option<usize>,
}

fn layout(inst: &Instance, event: &str) -> Result<Layout, TracefsError> {
    let dir = inst.dir.join("events/block").join(event);
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(|source| TracefsError::Io {
            doing: "read",
            path: p,
            source,
        })
    };
    let unsupported = |what: &str| TracefsError::Unsupported(format!("{event}: {what}"));
    let id = read("id")?
        .trim()
        .parse()
        .map_err(|_| unsupported("no event id"))?;
    let format = read("format")?;
    let offset = |field: &str| -> Option<usize> {
        format.lines().find_map(|l| {
            let (decl, rest) = l.trim().strip_prefix("field:")?.split_once(';')?;
            let name = decl.rsplit(' ').next()?.split('[').next()?;
            (name == field).then(|| {
                rest.trim()
                    .strip_prefix("offset:")?
                    .split(';')
                    .next()?
                    .parse()
                    .ok()
            })?
        })
    };
    let need = |f: &str| offset(f).ok_or_else(|| unsupported(&format!("no field {f}")));
    Ok(Layout {
        id,
        pid: need("common_pid")?,
        dev: need("dev")?,
        sector: need("sector")?,
        nr_sector: need("nr_sector")?,
        rwbs: need("rwbs")?,
        comm: offset("comm"),
    })
}

/// Every CPU's raw pipe and the events read but not yet handed on.
pub(crate) struct RawPipes {
    cpus: Vec<File>,
    issue: Layout,
    complete: Layout,
    /// Per CPU, its events read and not yet handed on, oldest first.
    queues: Vec<VecDeque<(u64, Pending)>>,
    newest: u64,
    tgids: FxHashMap<u32, Option<u32>>,
    page: Vec<u8>,
}

/// An event waiting for its turn.
struct Pending {
    issue: bool,
    pid: u32,
    dev: u64,
    sector: u64,
    sectors: u32,
    rwbs: [u8; 10],
    comm: [u8; 16],
}

impl RawPipes {
    pub fn open(inst: &Instance) -> Result<RawPipes, TracefsError> {
        let per_cpu = inst.dir.join("per_cpu");
        let mut dirs: Vec<_> = std::fs::read_dir(&per_cpu)
            .map_err(|source| TracefsError::Io {
                doing: "read",
                path: per_cpu.clone(),
                source,
            })?
            .flatten()
            .map(|e| e.path())
            .collect();
        dirs.sort();
        let mut cpus = Vec::new();
        for d in dirs {
            let p = d.join("trace_pipe_raw");
            let f = File::options()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&p)
                .map_err(|source| TracefsError::Io {
                    doing: "open",
                    path: p,
                    source,
                })?;
            cpus.push(f);
        }
        Ok(RawPipes {
            queues: cpus.iter().map(|_| VecDeque::new()).collect(),
            cpus,
            issue: layout(inst, "block_rq_issue")?,
            complete: layout(inst, "block_rq_complete")?,
            newest: 0,
            tgids: FxHashMap::default(),
            page: vec![0; subbuf_size(inst)],
        })
    }

    /// Sleeps until some CPU's buffer is `buffer_percent` full (the poll
    /// of `trace_pipe_raw` wakes only then) or `timeout` passes.
    pub fn wait(&self, timeout: Duration) -> std::io::Result<()> {
        let mut fds: Vec<libc::pollfd> = self
            .cpus
            .iter()
            .map(|f| libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: poll reads and writes only the `fds` we own, for their length.
        match unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) } {
            -1 => match std::io::Error::last_os_error() {
                e if e.kind() == std::io::ErrorKind::Interrupted => Ok(()),
                e => Err(e),
            },
            _ => Ok(()),
        }
    }

    /// Reads what every CPU holds now; the number of events read.
    pub fn drain(&mut self) -> std::io::Result<u64> {
        let mut n = 0;
        for i in 0..self.cpus.len() {
            loop {
                let got = match self.cpus[i].read(&mut self.page) {
                    Ok(0) => break,
                    Ok(k) => k,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                n += self.parse_page(i, got);
            }
        }
        Ok(n)
    }

    fn parse_page(&mut self, cpu: usize, got: usize) -> u64 {
        let page = std::mem::take(&mut self.page);
        let n = self.parse(cpu, &page[..got]);
        self.page = page;
        n
    }

    /// The events of one page read from `cpu`'s pipe.
    fn parse(&mut self, cpu: usize, page: &[u8]) -> u64 {
        if page.len() < HEADER {
            return 0;
        }
        let mut ts = u64_at(page, 0);
        let size = (u64_at(page, 8) & ((1 << 30) - 1)) as usize;
        let end = (HEADER + size).min(page.len());
        let mut off = HEADER;
        let mut n = 0;
        while off + 4 <= end {
            let head = u32_at(page, off);
            let (kind, delta) = (head & 31, u64::from(head >> 5));
            let arg = || (off + 8 <= end).then(|| u64::from(u32_at(page, off + 4)));
            match kind {
                PADDING => match (delta, arg()) {
                    (0, _) | (_, None) => break,
                    (_, Some(len)) => off += 4 + len as usize,
                },
                TIME_EXTEND => {
                    ts += (arg().unwrap_or(0) << 27) + delta;
                    off += 8;
                }
                TIME_STAMP => {
                    ts = (ts & !((1 << 59) - 1)) | (arg().unwrap_or(0) << 27) | delta;
                    off += 8;
                }
                0 => {
                    let Some(len) = arg() else { break };
                    ts += delta;
                    let (start, stop) = (off + 8, off + 4 + len as usize);
                    if stop > end || stop < start {
                        break;
                    }
                    n += u64::from(self.take(cpu, ts, &page[start..stop]));
                    off = stop;
                }
                words => {
                    ts += delta;
                    let (start, stop) = (off + 4, off + 4 + 4 * words as usize);
                    if stop > end {
                        break;
                    }
                    n += u64::from(self.take(cpu, ts, &page[start..stop]));
                    off = stop;
                }
            }
        }
        n
    }

    /// Keeps one block event (other events are skipped).
    fn take(&mut self, cpu: usize, ts: u64, data: &[u8]) -> bool {
        if data.len() < 2 {
            return false;
        }
        let id = u16::from_le_bytes([data[0], data[1]]);
        let (l, issue) = match id {
            i if i == self.issue.id => (self.issue, true),
            i if i == self.complete.id => (self.complete, false),
            _ => return false,
        };
        if data.len() < l.rwbs + 10 || l.comm.is_some_and(|c| data.len() < c + 16) {
            return false;
        }
        let mut rwbs = [0; 10];
        rwbs.copy_from_slice(&data[l.rwbs..l.rwbs + 10]);
        let mut comm = [0; 16];
        if let (true, Some(c)) = (issue, l.comm) {
            comm.copy_from_slice(&data[c..c + 16]);
        }
        let p = Pending {
            issue,
            pid: u32_at(data, l.pid),
            dev: u64::from(u32_at(data, l.dev)),
            sector: u64_at(data, l.sector),
            sectors: u32_at(data, l.nr_sector),
            rwbs,
            comm,
        };
        self.newest = self.newest.max(ts);
        self.queues[cpu].push_back((ts, p));
        true
    }

    /// Hands on the events that are settled (all of them at the end), in
    /// time order: the oldest of the CPUs' oldest each time (a tie goes to
    /// the lower CPU).
    pub(crate) fn settled(&mut self, all: bool, mut f: impl FnMut(Event)) {
        let limit = if all {
            u64::MAX
        } else {
            self.newest.saturating_sub(SETTLE_NS)
        };
        loop {
            let mut oldest: Option<(u64, usize)> = None;
            for (i, q) in self.queues.iter().enumerate() {
                if let Some(&(ts, _)) = q.front()
                    && ts <= limit
                    && oldest.is_none_or(|(o, _)| ts < o)
                {
                    oldest = Some((ts, i));
                }
            }
            let Some((_, i)) = oldest else { break };
            let (ts, p) = self.queues[i].pop_front().expect("a front");
            if let Some(ev) = self.event(ts, p) {
                f(ev);
            }
        }
    }

    fn event(&mut self, ts: u64, p: Pending) -> Option<Event> {
        let rwbs_len = p.rwbs.iter().position(|&b| b == 0).unwrap_or(10);
        let (op, flags) = parse_rwbs(&p.rwbs[..rwbs_len])?;
        let kind = if p.issue {
            let len = p.comm.iter().position(|&b| b == 0).unwrap_or(16);
            Kind::Issue {
                comm: Comm::new(&p.comm[..len]),
            }
        } else {
            Kind::Complete
        };
        let tgid = if p.issue { self.tgid(p.pid) } else { None };
        Some(Event {
            kind,
            ts_ns: ts,
            tid: p.pid,
            tgid,
            dev: p.dev,
            op,
            flags,
            sector: p.sector,
            sectors: p.sectors,
        })
    }

    /// A thread's process, from /proc (once per thread).
    fn tgid(&mut self, tid: u32) -> Option<u32> {
        *self.tgids.entry(tid).or_insert_with(|| {
            let status =
                std::fs::read_to_string(Path::new("/proc").join(tid.to_string()).join("status"))
                    .ok()?;
            status
                .lines()
                .find_map(|l| l.strip_prefix("Tgid:")?.trim().parse().ok())
        })
    }
}

/// The instance's sub-buffer size in bytes (`buffer_subbuf_size_kb`, 6.8
/// and later; a page before): what one read of `trace_pipe_raw` returns.
fn subbuf_size(inst: &Instance) -> usize {
    std::fs::read_to_string(inst.path("buffer_subbuf_size_kb"))
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(PAGE, |kb| kb * 1024)
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Flags, Op};

    /// The offsets this machine's kernel (6.18) gives in the events' `format`.
    fn pipes() -> RawPipes {
        let issue = Layout {
            id: 2104,
            pid: 4,
            dev: 8,
            sector: 16,
            nr_sector: 24,
            rwbs: 34,
            comm: Some(44),
        };
        let complete = Layout {
            id: 2107,
            comm: None,
            ..issue
        };
        RawPipes {
            cpus: Vec::new(),
            issue,
            complete,
            queues: vec![VecDeque::new(), VecDeque::new()],
            newest: 0,
            tgids: FxHashMap::default(),
            page: vec![0; PAGE],
        }
    }

    fn payload(id: u16, pid: u32, sector: u64, rwbs: &str, comm: &str) -> Vec<u8> {
        let mut d = vec![0u8; 64];
        d[0..2].copy_from_slice(&id.to_le_bytes());
        d[4..8].copy_from_slice(&pid.to_le_bytes());
        d[8..12].copy_from_slice(&((7u32 << 20) | 2).to_le_bytes());
        d[16..24].copy_from_slice(&sector.to_le_bytes());
        d[24..28].copy_from_slice(&16u32.to_le_bytes());
        d[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        d[44..44 + comm.len()].copy_from_slice(comm.as_bytes());
        d
    }

    fn header(kind: u32, delta: u32) -> [u8; 4] {
        (kind | (delta << 5)).to_le_bytes()
    }

    /// A page as ring_buffer.c lays it out: an issue (small event), a time
    /// extend, a completion written as a large (type 0) event, padding.
    fn page() -> Vec<u8> {
        let mut data = Vec::new();
        data.extend(header(16, 100)); // 16 words = 64 bytes
        data.extend(payload(2104, 4242, 2048, "WS", "postgres"));
        data.extend(header(TIME_EXTEND, 5));
        data.extend(1u32.to_le_bytes()); // + (1 << 27) + 5
        data.extend(header(0, 7));
        data.extend((64u32 + 4).to_le_bytes());
        data.extend(payload(2107, 0, 2048, "WS", ""));
        data.extend(header(PADDING, 1));
        data.extend(8u32.to_le_bytes());
        data.extend([0u8; 8]);
        page_at(1_000_000, data)
    }

    /// A page header (time `ts0`, the data's length), then `data`.
    fn page_at(ts0: u64, data: Vec<u8>) -> Vec<u8> {
        let mut page = ts0.to_le_bytes().to_vec();
        page.extend((data.len() as u64).to_le_bytes());
        page.extend(data);
        page
    }

    #[test]
    fn a_ring_buffer_page_gives_its_events_with_their_times() {
        let mut p = pipes();
        assert_eq!(p.parse(0, &page()), 2);
        let mut got = Vec::new();
        p.settled(false, |e| got.push(e));
        assert!(got.is_empty(), "not settled: the newest is recent");
        p.settled(true, |e| got.push(e));
        assert_eq!(got.len(), 2);
        let (i, c) = (&got[0], &got[1]);
        assert_eq!(
            i.kind,
            Kind::Issue {
                comm: Comm::new(b"postgres")
            }
        );
        assert_eq!(
            (i.ts_ns, i.tid, i.dev, i.sector, i.sectors),
            (1_000_100, 4242, (7 << 20) | 2, 2048, 16)
        );
        assert_eq!((i.op, i.flags), (Op::Write, Flags::SYNC));
        assert_eq!(c.kind, Kind::Complete);
        assert_eq!(c.ts_ns, 1_000_100 + (1 << 27) + 5 + 7);
    }

    /// A page starting at `ts0` of issues at the given (delta ns, sector).
    fn issues(ts0: u64, events: &[(u32, u64)]) -> Vec<u8> {
        let mut data = Vec::new();
        for &(delta, sector) in events {
            data.extend(header(16, delta));
            data.extend(payload(2104, 1, sector, "R", "db"));
        }
        page_at(ts0, data)
    }

    #[test]
    fn the_cpus_events_are_merged_in_time_order_once_settled() {
        let mut p = pipes();
        // CPU 0 at 1, 3, 5 ms; CPU 1 at 2, 4 ms and one 300 ms later.
        let ms = 1_000_000;
        p.parse(0, &issues(0, &[(ms, 1), (2 * ms, 3), (2 * ms, 5)]));
        p.parse(1, &issues(2 * ms as u64, &[(0, 2), (2 * ms, 4)]));
        p.parse(1, &issues(300 * ms as u64, &[(0, 300)]));
        let mut got = Vec::new();
        p.settled(false, |e| got.push((e.ts_ns / ms as u64, e.sector)));
        assert_eq!(got, [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]);
        // A page read later from CPU 0 with older events than CPU 1's last.
        p.parse(0, &issues(6 * ms as u64, &[(0, 6)]));
        p.settled(true, |e| got.push((e.ts_ns / ms as u64, e.sector)));
        assert_eq!(&got[5..], [(6, 6), (300, 300)]);
    }

    #[test]
    fn a_short_or_cut_page_ends_without_a_panic() {
        let page = page();
        for cut in 0..page.len() {
            let mut p = pipes();
            p.parse(0, &page[..cut]);
        }
        let mut p = pipes();
        let mut garbage = page.clone();
        garbage[16..20].copy_from_slice(&header(0, 0));
        garbage[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(p.parse(0, &garbage), 0);
    }
}
