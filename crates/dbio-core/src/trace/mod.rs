//! Block I/O traces: one [`Request`] per block request (issue and
//! completion time, device, offset, length, operation, flags, issuing
//! thread), read and written as a stream of [`Entry`]s so that a trace of
//! any length is handled in bounded memory. `capture` records one from the
//! kernel's block tracepoints; `native` is dbio's own file format; `iolog`
//! reads fio's iolog v2/v3 and writes v3; `blktrace` reads blktrace's
//! binary per-CPU files. Replay reads traces through [`open`].
//!
//! Here in the core (not in `samplers/`) because a trace is an input of a
//! workload (replay) as much as a measurement: the core's replay must read
//! it without the `dbio` crate above.

pub(crate) mod blktrace;
pub mod capture;
pub mod iolog;
pub mod native;
pub(crate) mod pair;
pub(crate) mod rawpipe;
pub mod tracefs;

use std::fmt;
use std::path::{Path, PathBuf};

/// What a request asked of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read,
    Write,
    /// A cache flush with no data (REQ_OP_FLUSH; fio's `sync`).
    Flush,
    /// Discard / trim (secure erase included).
    Discard,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Flush, Op::Discard];

    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Discard => "discard",
        }
    }

    fn code(self) -> u8 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Flush => 2,
            Op::Discard => 3,
        }
    }

    fn from_code(c: u8) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.code() == c)
    }
}

/// Request flags as the block layer reports them (a bit set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    pub(crate) const SYNC: Flags = Flags(1);
    pub(crate) const FUA: Flags = Flags(2);
    pub(crate) const META: Flags = Flags(4);
    /// A cache flush before the data (REQ_PREFLUSH).
    pub(crate) const PREFLUSH: Flags = Flags(8);
    pub(crate) const READAHEAD: Flags = Flags(16);
    const KNOWN: u8 = 31;

    pub fn contains(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }

    pub fn insert(&mut self, f: Flags) {
        self.0 |= f.0;
    }

    pub fn bits(self) -> u8 {
        self.0
    }

    fn from_bits(b: u8) -> Option<Flags> {
        (b & !Flags::KNOWN == 0).then_some(Flags(b))
    }
}

/// A process name as the kernel keeps it (at most 16 bytes), held without
/// allocating; empty when unknown.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Comm {
    bytes: [u8; 16],
    len: u8,
}

impl Comm {
    pub fn new(name: &[u8]) -> Comm {
        let name = &name[..name.len().min(16)];
        let mut bytes = [0; 16];
        bytes[..name.len()].copy_from_slice(name);
        Comm {
            bytes,
            len: name.len() as u8,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// One block request: issued at `issue_ns`, completed at `complete_ns`
/// (None when the trace does not say), both from the trace's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub issue_ns: u64,
    pub complete_ns: Option<u64>,
    /// Index into the trace's devices (a [`Device`] entry came before).
    pub device: u16,
    /// Bytes from the start of the device (partition) traced.
    pub offset: u64,
    pub len: u32,
    pub op: Op,
    pub flags: Flags,
    /// Thread group (process) and thread that issued it, where known.
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub comm: Comm,
}

/// A device (or file) requests name by index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub index: u16,
    /// `/dev/loop0`, the iolog's file name, or `MAJ:MIN`.
    pub name: String,
    /// Its device number, where known.
    pub number: Option<(u32, u32)>,
}

/// What a trace is a stream of: devices, each before its first request,
/// and requests in issue order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Device(Device),
    Request(Request),
}

/// Where in a file something was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Line(u64),
    Byte(u64),
    /// After this many requests (inside a compressed stream).
    Request(u64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(n) => write!(f, "line {n}"),
            Position::Byte(n) => write!(f, "byte {n}"),
            Position::Request(n) => write!(f, "after request {n}"),
        }
    }
}

/// A trace that cannot be read or written, in one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot {doing} {}: {source}", path.display())]
    Io {
        doing: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {at}: {what}", path.display())]
    Bad {
        path: PathBuf,
        at: Position,
        what: String,
    },
    #[error("{}: {what}", path.display())]
    Unknown { path: PathBuf, what: String },
}

impl TraceError {
    pub(crate) fn bad(path: &Path, at: Position, what: impl Into<String>) -> TraceError {
        TraceError::Bad {
            path: path.to_path_buf(),
            at,
            what: what.into(),
        }
    }

    pub(crate) fn io(doing: &'static str, path: &Path, source: std::io::Error) -> TraceError {
        TraceError::Io {
            doing,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A trace's formats, as files say them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Native,
    FioIolog,
    Blktrace,
}

/// A stream of a trace's entries.
pub type Entries = Box<dyn Iterator<Item = Result<Entry, TraceError>>>;

/// The format of the file at `path`, from its first bytes.
pub(crate) fn sniff(path: &Path) -> Result<Format, TraceError> {
    use std::io::Read;
    let mut head = [0u8; 20];
    let mut f = std::fs::File::open(path).map_err(|e| TraceError::io("open", path, e))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(TraceError::io("read", path, e)),
        }
    }
    let head = &head[..n];
    if head.starts_with(native::MAGIC) {
        Ok(Format::Native)
    } else if head.starts_with(b"fio version ") {
        Ok(Format::FioIolog)
    } else if n >= 4 && blktrace::is_magic(head) {
        Ok(Format::Blktrace)
    } else {
        Err(TraceError::Unknown {
            path: path.to_path_buf(),
            what: "not a trace dbio reads (a dbio trace, a fio iolog v2/v3 or blktrace's per-CPU files)".into(),
        })
    }
}

/// The entries of the trace in `paths` (one file, or blktrace's per-CPU
/// files of one device), whatever its format.
pub fn open(paths: &[PathBuf]) -> Result<Entries, TraceError> {
    let first = paths.first().ok_or_else(|| TraceError::Unknown {
        path: PathBuf::new(),
        what: "no trace file given".into(),
    })?;
    let format = sniff(first)?;
    if paths.len() > 1 && format != Format::Blktrace {
        return Err(TraceError::Unknown {
            path: paths[1].clone(),
            what: "only blktrace's per-CPU files come several to a trace".into(),
        });
    }
    Ok(match format {
        Format::Native => Box::new(native::Reader::open(first)?),
        Format::FioIolog => Box::new(iolog::Reader::open(first)?),
        Format::Blktrace => Box::new(blktrace::Reader::open(paths)?),
    })
}

pub use crate::config::replay::Summary;

impl Summary {
    pub fn add(&mut self, e: &Entry) {
        let r = match e {
            Entry::Device(d) => return self.devices.push(d.name.clone()),
            Entry::Request(r) => r,
        };
        if self.requests == 0 {
            self.first_issue_ns = r.issue_ns;
        }
        self.requests += 1;
        self.last_issue_ns = self.last_issue_ns.max(r.issue_ns);
        match r.op {
            Op::Read => (self.reads += 1, self.read_bytes += u64::from(r.len)),
            Op::Write => (self.writes += 1, self.write_bytes += u64::from(r.len)),
            Op::Flush => (self.flushes += 1, ()),
            Op::Discard => (self.discards += 1, ()),
        };
        self.incomplete += u64::from(r.complete_ns.is_none());
        self.fua += u64::from(r.flags.contains(Flags::FUA));
        self.sync += u64::from(r.flags.contains(Flags::SYNC));
    }
}

#[cfg(test)]
mod tests;

/// Creates `path` for writing, never over an existing file.
pub(crate) fn create_new(path: &Path) -> Result<std::fs::File, TraceError> {
    std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| TraceError::io("create", path, e))
}

/// Reads until `buf` is full or the input ends; the bytes read.
pub(crate) fn read_full(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
