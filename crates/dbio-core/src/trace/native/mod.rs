//! dbio's own trace file: an 8-byte magic, a version and flags, then a
//! compressed stream of entries (a device, a thread, a request, or the end
//! marker with the number of requests, so that a truncated file is told
//! from a complete one). Written and read one entry at a time; the writer
//! hands the compressor whole blocks of [`BLOCK`] bytes.
//!
//! The version says how entries are laid out: version 2 (written since
//! session 15) keeps requests compact (`compact`: differences and varints,
//! threads declared once); version 1 (`v1`: fixed-width fields) still
//! reads. The flags say the compression: [`LZ4`] (an LZ4 frame with block
//! checksums; written since session 15: a fifth of zlib's CPU, which was
//! the capture reader's largest cost) or [`ZLIB`] (what version 1 files
//! have). Both versions share: tag 1 device — u16 index, u32 major, u32
//! minor (both `u32::MAX` when unknown), u16 name length, the name; tag
//! 0xFF end — u64 requests (little-endian).

mod compact;
mod v1;

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;
use lz4_flex::frame::{FrameDecoder, FrameEncoder, FrameInfo};

use super::{Device, Entry, Position, Request, TraceError, read_full};

pub const MAGIC: &[u8; 8] = b"DBIOTRAC";
/// The version written; every version up to it reads.
pub const VERSION: u16 = 2;
/// Header flag: the entries are zlib-compressed.
const ZLIB: u16 = 1;
/// Header flag: the entries are an LZ4 frame.
const LZ4: u16 = 2;
const TAG_DEVICE: u8 = 1;
const TAG_END: u8 = 0xFF;
const NONE32: u32 = u32::MAX;
/// Encoded entries are handed to the compressor this many bytes at a time.
const BLOCK: usize = 64 * 1024;

/// Writes a trace entry by entry; [`Writer::finish`] seals it.
pub struct Writer {
    /// Boxed: the encoder holds its hash table inline.
    out: Box<FrameEncoder<BufWriter<File>>>,
    path: PathBuf,
    requests: u64,
    block: Vec<u8>,
    enc: compact::Encoder,
}

impl Writer {
    /// Creates `path` (never over an existing file).
    pub fn create(path: &Path) -> Result<Writer, TraceError> {
        let file = super::create_new(path)?;
        let mut w = BufWriter::new(file);
        let mut head = MAGIC.to_vec();
        head.extend(VERSION.to_le_bytes());
        head.extend(LZ4.to_le_bytes());
        w.write_all(&head)
            .map_err(|e| TraceError::io("write", path, e))?;
        let mut frame = FrameInfo::new();
        frame.block_checksums = true;
        Ok(Writer {
            out: Box::new(FrameEncoder::with_frame_info(frame, w)),
            path: path.to_path_buf(),
            requests: 0,
            block: Vec::with_capacity(BLOCK + 256),
            enc: compact::Encoder::default(),
        })
    }

    pub fn write(&mut self, e: &Entry) -> Result<(), TraceError> {
        match e {
            Entry::Device(d) => encode_device(&mut self.block, d),
            Entry::Request(r) => {
                self.requests += 1;
                self.enc.request(&mut self.block, r);
            }
        }
        if self.block.len() >= BLOCK {
            self.compress()?;
        }
        Ok(())
    }

    /// Hands the block to the compressor.
    fn compress(&mut self) -> Result<(), TraceError> {
        let r = self.out.write_all(&self.block);
        self.block.clear();
        r.map_err(|e| TraceError::io("write", &self.path, e))
    }

    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Writes the end marker and flushes the file to its device.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        self.block.push(TAG_END);
        self.block.extend(self.requests.to_le_bytes());
        self.compress()?;
        let io = |e| TraceError::io("write", &self.path, e);
        let w = self.out.finish().map_err(|e| io(e.into()))?;
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

/// The decompressed entries and where in them the reader is.
struct Source {
    input: BufReader<Box<dyn Read>>,
    path: PathBuf,
    requests: u64,
}

impl Source {
    fn bad(&self, what: impl Into<String>) -> TraceError {
        TraceError::bad(&self.path, Position::Request(self.requests), what)
    }

    fn stream_error(&self, e: std::io::Error) -> TraceError {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            self.bad("truncated: the file ends inside its compressed data")
        } else {
            self.bad(format!("garbled compressed data ({e})"))
        }
    }

    /// The next byte; None at the end of the stream.
    fn next_byte(&mut self) -> Result<Option<u8>, TraceError> {
        let got = match self.input.fill_buf() {
            Ok(buf) => buf.first().copied(),
            Err(e) => return Err(self.stream_error(e)),
        };
        if got.is_some() {
            self.input.consume(1);
        }
        Ok(got)
    }

    fn u8(&mut self) -> Result<u8, TraceError> {
        self.next_byte()?
            .ok_or_else(|| self.bad("truncated: the file ends inside an entry"))
    }

    /// Fills `buf` (`what` names it when the file ends first).
    fn fill(&mut self, buf: &mut [u8], what: &str) -> Result<(), TraceError> {
        match read_full(&mut self.input, buf) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(_) => Err(self.bad(format!("truncated: the file ends inside {what}"))),
            Err(e) => Err(self.stream_error(e)),
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], TraceError> {
        let mut b = [0u8; N];
        self.fill(&mut b, "an entry")?;
        Ok(b)
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

    /// An unsigned LEB128 varint of at most 64 bits.
    fn varint(&mut self) -> Result<u64, TraceError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                break;
            }
            v |= u64::from(b & 0x7F) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.bad("garbled: a number longer than 64 bits"))
    }
}

/// How the entries after the header are laid out.
enum Layout {
    V1,
    V2(compact::Decoder),
}

/// Reads a trace entry by entry.
pub(crate) struct Reader {
    src: Source,
    layout: Layout,
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
        let layout = match version {
            1 => Layout::V1,
            2 => Layout::V2(compact::Decoder::default()),
            _ => {
                return Err(TraceError::bad(
                    path,
                    Position::Byte(8),
                    format!(
                        "dbio trace version {version}: this dbio reads versions 1 to {VERSION}"
                    ),
                ));
            }
        };
        let input: Box<dyn Read> = match flags {
            ZLIB => Box::new(ZlibDecoder::new(file)),
            LZ4 => Box::new(FrameDecoder::new(file)),
            _ => {
                return Err(TraceError::bad(
                    path,
                    Position::Byte(10),
                    format!("dbio trace flags {flags:#x}: this dbio reads zlib (1) and LZ4 (2)"),
                ));
            }
        };
        Ok(Reader {
            src: Source {
                input: BufReader::new(input),
                path: path.to_path_buf(),
                requests: 0,
            },
            layout,
            devices: 0,
            ended: false,
        })
    }

    fn device(&mut self) -> Result<Entry, TraceError> {
        let s = &mut self.src;
        let index = s.u16()?;
        let (maj, min) = (s.u32()?, s.u32()?);
        let len = s.u16()? as usize;
        let mut name = vec![0; len];
        s.fill(&mut name, "a device's name")?;
        if u32::from(index) != self.devices {
            return Err(s.bad(format!(
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

    fn request(&mut self, r: Result<Request, TraceError>) -> Result<Entry, TraceError> {
        let r = r?;
        if u32::from(r.device) >= self.devices {
            return Err(self.src.bad(format!(
                "garbled: request on device {}, never declared",
                r.device
            )));
        }
        self.src.requests += 1;
        Ok(Entry::Request(r))
    }

    fn end(&mut self) -> Result<(), TraceError> {
        let n = self.src.u64()?;
        if n != self.src.requests {
            return Err(self.src.bad(format!(
                "garbled: its end says {n} requests, it holds {}",
                self.src.requests
            )));
        }
        if self.src.next_byte()?.is_some() {
            return Err(self.src.bad("garbled: data after the end marker"));
        }
        self.ended = true;
        Ok(())
    }

    fn next_entry(&mut self) -> Result<Option<Entry>, TraceError> {
        loop {
            let Some(tag) = self.src.next_byte()? else {
                return Err(self
                    .src
                    .bad("truncated: no end marker (the capture did not finish)"));
            };
            let entry = match (&mut self.layout, tag) {
                (_, TAG_DEVICE) => self.device()?,
                (_, TAG_END) => return self.end().map(|()| None),
                (Layout::V1, v1::TAG_REQUEST) => {
                    let r = v1::request(&mut self.src);
                    self.request(r)?
                }
                (Layout::V2(d), compact::TAG_THREAD) => {
                    d.thread(&mut self.src)?;
                    continue;
                }
                (Layout::V2(d), compact::TAG_REQUEST) => {
                    let r = d.request(&mut self.src);
                    self.request(r)?
                }
                (_, t) => return Err(self.src.bad(format!("garbled: unknown entry tag {t:#04x}"))),
            };
            return Ok(Some(entry));
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

#[cfg(test)]
mod tests;
