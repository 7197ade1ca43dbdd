//! blktrace's binary per-CPU files (`DEV.blktrace.N`), as its
//! `blktrace_api.h` lays them out: a 48-byte `blk_io_trace` record — u32
//! magic (0x65617400 | version 7), u32 sequence, u64 time (ns), u64 sector,
//! u32 bytes, u32 action (category bits << 16 | action code), u32 pid,
//! u32 device (major << 20 | minor), u32 cpu, u16 error, u16 pdu length —
//! then that many bytes of payload. The files of one trace are merged by
//! time and each request's issue (D) is paired with its completion (C).

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use super::pair::Pairer;
use super::{Comm, Device, Entry, Flags, Op, Position, Request, TraceError, read_full};

pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u8 = 0x07;
pub(crate) const RECORD: usize = 48;

/// Action codes (the low 16 bits of `action`).
pub(crate) const TA_ISSUE: u32 = 7;
pub(crate) const TA_COMPLETE: u32 = 8;
/// Category bits (`action >> 16`).
#[allow(dead_code)] // the format's bit 0: a request is a read when WRITE is not set
pub const TC_READ: u32 = 1 << 0;
pub const TC_WRITE: u32 = 1 << 1;
pub const TC_FLUSH: u32 = 1 << 2;
pub const TC_SYNC: u32 = 1 << 3;
pub const TC_NOTIFY: u32 = 1 << 10;
pub(crate) const TC_AHEAD: u32 = 1 << 11;
pub(crate) const TC_META: u32 = 1 << 12;
pub(crate) const TC_DISCARD: u32 = 1 << 13;
pub const TC_FUA: u32 = 1 << 15;
/// The notification that names a process (payload: its name).
const TN_PROCESS: u32 = 0;
/// The action bit saying a cgroup id (8 bytes) leads the payload.
const TA_CGROUP: u32 = 1 << 8;

/// Whether `head` starts with a blk_io_trace magic (either byte order).
pub(crate) fn is_magic(head: &[u8]) -> bool {
    let m = [head[0], head[1], head[2], head[3]];
    (u32::from_le_bytes(m) & 0xFFFF_FF00) == MAGIC || (u32::from_be_bytes(m) & 0xFFFF_FF00) == MAGIC
}

/// One decoded record.
struct Event {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    pdu: Vec<u8>,
}

/// One per-CPU file, record by record.
struct CpuFile {
    input: BufReader<File>,
    path: PathBuf,
    at: u64,
    big_endian: Option<bool>,
}

impl CpuFile {
    fn read(&mut self) -> Result<Option<Event>, TraceError> {
        let mut rec = [0u8; RECORD];
        let n = read_full(&mut self.input, &mut rec)
            .map_err(|e| TraceError::io("read", &self.path, e))?;
        if n == 0 {
            return Ok(None);
        }
        if n < RECORD {
            return Err(self.bad(format!("truncated record ({n} of {RECORD} bytes)")));
        }
        let be = match self.big_endian {
            Some(b) => b,
            None if u32::from_le_bytes(rec[..4].try_into().unwrap()) & 0xFFFF_FF00 == MAGIC => {
                false
            }
            None => true,
        };
        self.big_endian = Some(be);
        let u32_at = |o: usize| {
            let b: [u8; 4] = rec[o..o + 4].try_into().unwrap();
            if be {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let u64_at = |o: usize| {
            let b: [u8; 8] = rec[o..o + 8].try_into().unwrap();
            if be {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        };
        let magic = u32_at(0);
        if magic & 0xFFFF_FF00 != MAGIC {
            return Err(self.bad(format!("bad magic {magic:#010x} (expected 0x654174xx)")));
        }
        if magic as u8 != VERSION {
            return Err(self.bad(format!(
                "blktrace version {} (this dbio reads version {VERSION})",
                magic as u8
            )));
        }
        let pdu_len = {
            let b = [rec[46], rec[47]];
            if be {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        } as usize;
        let mut pdu = vec![0; pdu_len];
        let got = read_full(&mut self.input, &mut pdu)
            .map_err(|e| TraceError::io("read", &self.path, e))?;
        if got < pdu_len {
            return Err(self.bad(format!("truncated payload ({got} of {pdu_len} bytes)")));
        }
        self.at += (RECORD + pdu_len) as u64;
        Ok(Some(Event {
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            pdu,
        }))
    }

    fn bad(&self, what: String) -> TraceError {
        TraceError::bad(&self.path, Position::Byte(self.at), what)
    }
}

/// Reads blktrace's per-CPU files of one trace as [`Entry`]s.
pub(crate) struct Reader {
    files: Vec<CpuFile>,
    heads: Vec<Option<Event>>,
    pairer: Pairer,
    devices: HashMap<u32, u16>,
    comms: HashMap<u32, Comm>,
    out: VecDeque<Entry>,
    done: bool,
}

impl Reader {
    pub fn open(paths: &[PathBuf]) -> Result<Reader, TraceError> {
        let mut files = Vec::new();
        for p in paths {
            let f = File::open(p).map_err(|e| TraceError::io("open", p, e))?;
            files.push(CpuFile {
                input: BufReader::new(f),
                path: p.clone(),
                at: 0,
                big_endian: None,
            });
        }
        let mut heads = Vec::new();
        for f in &mut files {
            heads.push(f.read()?);
        }
        Ok(Reader {
            files,
            heads,
            pairer: Pairer::default(),
            devices: HashMap::new(),
            comms: HashMap::new(),
            out: VecDeque::new(),
            done: false,
        })
    }

    /// The earliest event of all files.
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        let Some(i) = (0..self.heads.len())
            .filter(|&i| self.heads[i].is_some())
            .min_by_key(|&i| self.heads[i].as_ref().map(|e| e.time))
        else {
            return Ok(None);
        };
        let next = self.files[i].read()?;
        Ok(std::mem::replace(&mut self.heads[i], next))
    }

    fn device(&mut self, dev: u32) -> u16 {
        if let Some(&i) = self.devices.get(&dev) {
            return i;
        }
        let index = self.devices.len() as u16;
        self.devices.insert(dev, index);
        let (maj, min) = (dev >> 20, dev & 0xF_FFFF);
        self.out.push_back(Entry::Device(Device {
            index,
            name: format!("{maj}:{min}"),
            number: Some((maj, min)),
        }));
        index
    }

    fn feed(&mut self, e: Event) {
        let code = e.action & 0xFFFF & !TA_CGROUP;
        let cat = e.action >> 16;
        if cat & TC_NOTIFY != 0 {
            if code == TN_PROCESS {
                let skip = if e.action & TA_CGROUP != 0 { 8 } else { 0 };
                let name = e.pdu.get(skip..).unwrap_or_default();
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                self.comms.insert(e.pid, Comm::new(&name[..end]));
            }
            return;
        }
        let device = self.device(e.device);
        let mut out = std::mem::take(&mut self.out);
        let mut push = |r: Request| out.push_back(Entry::Request(r));
        match code {
            TA_ISSUE => {
                let r = Request {
                    issue_ns: e.time,
                    complete_ns: None,
                    device,
                    offset: e.sector * 512,
                    len: e.bytes,
                    op: op_of(cat, e.bytes),
                    flags: flags_of(cat),
                    pid: Some(e.pid),
                    tid: Some(e.pid),
                    comm: self.comms.get(&e.pid).copied().unwrap_or_default(),
                };
                self.pairer.issue(e.sector, r, &mut push);
            }
            TA_COMPLETE => self.pairer.complete(device, e.sector, e.time, &mut push),
            _ => {}
        }
        self.out = out;
    }
}

fn op_of(cat: u32, bytes: u32) -> Op {
    if cat & TC_DISCARD != 0 {
        Op::Discard
    } else if cat & TC_FLUSH != 0 && bytes == 0 {
        Op::Flush
    } else if cat & TC_WRITE != 0 {
        Op::Write
    } else {
        Op::Read
    }
}

fn flags_of(cat: u32) -> Flags {
    let mut f = Flags::default();
    for (bit, flag) in [
        (TC_SYNC, Flags::SYNC),
        (TC_FUA, Flags::FUA),
        (TC_META, Flags::META),
        (TC_AHEAD, Flags::READAHEAD),
    ] {
        if cat & bit != 0 {
            f.insert(flag);
        }
    }
    if cat & TC_FLUSH != 0 && cat & TC_WRITE != 0 {
        f.insert(Flags::PREFLUSH);
    }
    f
}

impl Iterator for Reader {
    type Item = Result<Entry, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.out.pop_front() {
                return Some(Ok(e));
            }
            if self.done {
                return None;
            }
            match self.next_event() {
                Ok(Some(e)) => self.feed(e),
                Ok(None) => {
                    self.done = true;
                    let mut out = std::mem::take(&mut self.out);
                    self.pairer
                        .finish(&mut |r| out.push_back(Entry::Request(r)));
                    self.out = out;
                }
                Err(e) => {
                    self.done = true;
                    self.out.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}
