//! dbio's own trace file: an 8-byte magic, a version and flags, then a
//! zlib-compressed stream of entries (a device, a request, or the end
//! marker with the number of requests, so that a truncated file is told
//! from a complete one). Written and read one entry at a time.
//!
//! Entries (little-endian): tag 1 device — u16 index, u32 major, u32 minor
//! (both `u32::MAX` when unknown), u16 name length, the name; tag 2 request
//! — u64 issue ns, u64 completion ns (`u64::MAX`: none), u16 device, u64
//! offset, u32 length, u8 op, u8 flags, u32 pid, u32 tid (`u32::MAX`:
//! unknown), u8 comm length, comm; tag 0xFF end — u64 requests.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;

use super::{Comm, Device, Entry, Flags, Op, Position, Request, TraceError, read_full};

pub const MAGIC: &[u8; 8] = b"DBIOTRAC";
pub const VERSION: u16 = 1;
/// Header flag: the entries are zlib-compressed.
const ZLIB: u16 = 1;
const TAG_DEVICE: u8 = 1;
const TAG_REQUEST: u8 = 2;
const TAG_END: u8 = 0xFF;
const NONE32: u32 = u32::MAX;
const NONE64: u64 = u64::MAX;

/// Writes a trace entry by entry; [`Writer::finish`] seals it.
pub struct Writer {
    out: ZlibEncoder<BufWriter<File>>,
    path: PathBuf,
    requests: u64,
    buf: Vec<u8>,
}

impl Writer {
    /// Creates `path` (never over an existing file).
    pub fn create(path: &Path) -> Result<Writer, TraceError> {
        let file = super::create_new(path)?;
        let mut w = BufWriter::new(file);
        let mut head = MAGIC.to_vec();
        head.extend(VERSION.to_le_bytes());
        head.extend(ZLIB.to_le_bytes());
        w.write_all(&head)
            .map_err(|e| TraceError::io("write", path, e))?;
        Ok(Writer {
            out: ZlibEncoder::new(w, Compression::fast()),
            path: path.to_path_buf(),
            requests: 0,
            buf: Vec::with_capacity(64),
        })
    }

    pub fn write(&mut self, e: &Entry) -> Result<(), TraceError> {
        self.buf.clear();
        match e {
            Entry::Device(d) => encode_device(&mut self.buf, d),
            Entry::Request(r) => {
                self.requests += 1;
                encode_request(&mut self.buf, r)
            }
        }
        self.out
            .write_all(&self.buf)
            .map_err(|e| TraceError::io("write", &self.path, e))
    }

    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Writes the end marker and flushes the file to its device.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        let io = |e| TraceError::io("write", &self.path, e);
        let mut end = vec![TAG_END];
        end.extend(self.requests.to_le_bytes());
        self.out.write_all(&end).map_err(io)?;
        let w = self.out.finish().map_err(io)?;
        let file = w.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        Ok(self.requests)
    }
}

fn encode_device(b: &mut Vec<u8>, d: &Device) {
    let (maj, min) = d.number.unwrap_or((NONE32, NONE32));
    let name = &d.name.as_bytes()[..d.name.len().min(u16::MAX as usize)];
    b.push(TAG_DEVICE);
    b.extend(d.index.to_le_bytes());
    b.extend(maj.to_le_bytes());
    b.extend(min.to_le_bytes());
    b.extend((name.len() as u16).to_le_bytes());
    b.extend(name);
}

fn encode_request(b: &mut Vec<u8>, r: &Request) {
    b.push(TAG_REQUEST);
    b.extend(r.issue_ns.to_le_bytes());
    b.extend(r.complete_ns.unwrap_or(NONE64).to_le_bytes());
    b.extend(r.device.to_le_bytes());
    b.extend(r.offset.to_le_bytes());
    b.extend(r.len.to_le_bytes());
    b.push(r.op.code());
    b.push(r.flags.bits());
    b.extend(r.pid.unwrap_or(NONE32).to_le_bytes());
    b.extend(r.tid.unwrap_or(NONE32).to_le_bytes());
    b.push(r.comm.as_bytes().len() as u8);
    b.extend(r.comm.as_bytes());
}

/// Reads a trace entry by entry.
pub(crate) struct Reader {
    input: BufReader<ZlibDecoder<BufReader<File>>>,
    path: PathBuf,
    requests: u64,
    devices: u32,
    ended: bool,
}

impl Reader {
    pub fn open(path: &Path) -> Result<Reader, TraceError> {
        let file = File::open(path).map_err(|e| TraceError::io("open", path, e))?;
        let mut file = BufReader::new(file);
        let mut head = [0u8; 12];
        let got = read_full(&mut file, &mut head).map_err(|e| TraceError::io("read", path, e))?;
        if got < head.len() || &head[..8] != MAGIC {
            return Err(TraceError::bad(
                path,
                Position::Byte(0),
                "not a dbio trace (its header is missing or truncated)",
            ));
        }
        let version = u16::from_le_bytes([head[8], head[9]]);
        let flags = u16::from_le_bytes([head[10], head[11]]);
        if version != VERSION || flags != ZLIB {
            return Err(TraceError::bad(
                path,
                Position::Byte(8),
                format!(
                    "dbio trace version {version} (flags {flags:#x}): this dbio reads version {VERSION}"
                ),
            ));
        }
        Ok(Reader {
            input: BufReader::new(ZlibDecoder::new(file)),
            path: path.to_path_buf(),
            requests: 0,
            devices: 0,
            ended: false,
        })
    }

    fn bad(&self, what: impl Into<String>) -> TraceError {
        TraceError::bad(&self.path, Position::Request(self.requests), what)
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], TraceError> {
        let mut b = [0u8; N];
        match read_full(&mut self.input, &mut b) {
            Ok(n) if n == N => Ok(b),
            Ok(_) => Err(self.bad("truncated: the file ends inside an entry")),
            Err(e) => Err(self.stream_error(e)),
        }
    }

    fn stream_error(&self, e: std::io::Error) -> TraceError {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            self.bad("truncated: the file ends inside its compressed data")
        } else {
            self.bad(format!("garbled compressed data ({e})"))
        }
    }

    fn u16(&mut self) -> Result<u16, TraceError> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32, TraceError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, TraceError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    fn device(&mut self) -> Result<Entry, TraceError> {
        let index = self.u16()?;
        let (maj, min) = (self.u32()?, self.u32()?);
        let len = self.u16()? as usize;
        let mut name = vec![0; len];
        if read_full(&mut self.input, &mut name).ok() != Some(len) {
            return Err(self.bad("truncated: the file ends inside a device's name"));
        }
        if u32::from(index) != self.devices {
            return Err(self.bad(format!(
                "garbled: device {index} where {} was due",
                self.devices
            )));
        }
        self.devices += 1;
        Ok(Entry::Device(Device {
            index,
            name: String::from_utf8_lossy(&name).into_owned(),
            number: (maj != NONE32).then_some((maj, min)),
        }))
    }

    fn request(&mut self) -> Result<Entry, TraceError> {
        let issue_ns = self.u64()?;
        let complete = self.u64()?;
        let device = self.u16()?;
        let offset = self.u64()?;
        let len = self.u32()?;
        let [op, flags] = self.take()?;
        let (pid, tid) = (self.u32()?, self.u32()?);
        let [clen] = self.take()?;
        let mut comm = [0u8; 16];
        let clen = usize::from(clen);
        if clen > 16 || read_full(&mut self.input, &mut comm[..clen]).ok() != Some(clen) {
            return Err(self.bad("garbled or truncated process name"));
        }
        let op =
            Op::from_code(op).ok_or_else(|| self.bad(format!("garbled: operation code {op}")))?;
        let flags = Flags::from_bits(flags)
            .ok_or_else(|| self.bad(format!("garbled: flags {flags:#x}")))?;
        if u32::from(device) >= self.devices {
            return Err(self.bad(format!(
                "garbled: request on device {device}, never declared"
            )));
        }
        self.requests += 1;
        Ok(Entry::Request(Request {
            issue_ns,
            complete_ns: (complete != NONE64).then_some(complete),
            device,
            offset,
            len,
            op,
            flags,
            pid: (pid != NONE32).then_some(pid),
            tid: (tid != NONE32).then_some(tid),
            comm: Comm::new(&comm[..clen]),
        }))
    }

    fn end(&mut self) -> Result<(), TraceError> {
        let n = self.u64()?;
        if n != self.requests {
            return Err(self.bad(format!(
                "garbled: its end says {n} requests, it holds {}",
                self.requests
            )));
        }
        let mut more = [0u8; 1];
        if read_full(&mut self.input, &mut more).ok() != Some(0) {
            return Err(self.bad("garbled: data after the end marker"));
        }
        self.ended = true;
        Ok(())
    }

    fn next_entry(&mut self) -> Result<Option<Entry>, TraceError> {
        let mut tag = [0u8; 1];
        match read_full(&mut self.input, &mut tag) {
            Ok(1) => {}
            Ok(_) => return Err(self.bad("truncated: no end marker (the capture did not finish)")),
            Err(e) => return Err(self.stream_error(e)),
        }
        match tag[0] {
            TAG_DEVICE => self.device().map(Some),
            TAG_REQUEST => self.request().map(Some),
            TAG_END => self.end().map(|()| None),
            t => Err(self.bad(format!("garbled: unknown entry tag {t:#04x}"))),
        }
    }
}

impl Iterator for Reader {
    type Item = Result<Entry, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        let r = self.next_entry();
        if r.is_err() {
            self.ended = true;
        }
        r.transpose()
    }
}
