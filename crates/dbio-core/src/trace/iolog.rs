//! fio's iolog (fio's HOWTO, "Trace file format"): version 2 — a line
//! `fio version 2 iolog`, then `FILE add|open|close` and
//! `FILE read|write|sync|datasync|trim|wait OFFSET LENGTH` (a `wait` waits
//! OFFSET µs after the previous one) — and version 3, every line led by
//! its time in µs from the start (no `wait`; fio 3.33 writes µs:
//! a 1 s run's last line is near 1000000). Read line by line into
//! [`Entry`]s; written as version 3.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{Comm, Device, Entry, Flags, Op, Position, Request, TraceError};

const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

/// Reads an iolog v2 or v3.
pub(crate) struct Reader {
    input: BufReader<File>,
    path: PathBuf,
    v3: bool,
    line: u64,
    text: String,
    files: HashMap<String, u16>,
    /// v2: the time the `wait`s add up to.
    clock_ns: u64,
    done: bool,
}

impl Reader {
    pub fn open(path: &Path) -> Result<Reader, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::io("open", path, e))?;
        let mut r = Reader {
            input: BufReader::new(f),
            path: path.to_path_buf(),
            v3: false,
            line: 0,
            text: String::new(),
            files: HashMap::new(),
            clock_ns: 0,
            done: false,
        };
        if !r.read_line()? {
            return Err(r.bad("empty: no `fio version 2 iolog` or `fio version 3 iolog` line"));
        }
        r.v3 = match r.text.trim_end() {
            V2 => false,
            V3 => true,
            other => {
                return Err(r.bad(format!(
                    "not a fio iolog v2 or v3 (it begins {:?})",
                    other.chars().take(40).collect::<String>()
                )));
            }
        };
        Ok(r)
    }

    fn bad(&self, what: impl Into<String>) -> TraceError {
        TraceError::bad(&self.path, Position::Line(self.line), what)
    }

    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.text.clear();
        let n = self.input.read_line(&mut self.text).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                TraceError::bad(&self.path, Position::Line(self.line + 1), "not UTF-8 text")
            } else {
                TraceError::io("read", &self.path, e)
            }
        })?;
        self.line += 1;
        Ok(n > 0)
    }

    fn number(&self, field: Option<&str>, what: &str) -> Result<u64, TraceError> {
        let f = field.ok_or_else(|| self.bad(format!("no {what}")))?;
        f.parse()
            .map_err(|_| self.bad(format!("{what} {f:?} is not a whole number")))
    }

    /// The entry of the current line, if it makes one.
    fn parse(&mut self) -> Result<Option<Entry>, TraceError> {
        let text = std::mem::take(&mut self.text);
        let out = self.parse_fields(&text);
        self.text = text;
        out
    }

    fn parse_fields(&mut self, text: &str) -> Result<Option<Entry>, TraceError> {
        let mut f = text.split_whitespace();
        let us = match self.v3 {
            true => Some(self.number(f.next(), "timestamp (µs)")?),
            false => None,
        };
        let Some(file) = f.next() else {
            return match us {
                None => Ok(None), // a blank line
                Some(_) => Err(self.bad("a timestamp and nothing else")),
            };
        };
        let action = f
            .next()
            .ok_or_else(|| self.bad(format!("no action after {file:?}")))?;
        let now = match us {
            Some(us) => us.saturating_mul(1000),
            None => self.clock_ns,
        };
        let op = match action {
            "add" => return Ok(self.add(file)),
            "open" | "close" => return self.known(file).map(|_| None),
            "wait" if !self.v3 => {
                self.clock_ns += self.number(f.next(), "wait (µs)")? * 1000;
                return Ok(None);
            }
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Discard,
            "sync" | "datasync" => Op::Flush,
            other => return Err(self.bad(format!("unknown action {other:?}"))),
        };
        let device = self.known(file)?;
        let (offset, len) = match op {
            Op::Flush => (0, 0),
            _ => {
                let offset = self.number(f.next(), "offset")?;
                let len = self.number(f.next(), "length")?;
                let len = u32::try_from(len)
                    .map_err(|_| self.bad(format!("length {len} is over 4 GiB")))?;
                (offset, len)
            }
        };
        let mut flags = Flags::default();
        if op == Op::Flush {
            flags.insert(Flags::SYNC);
        }
        Ok(Some(Entry::Request(Request {
            issue_ns: now,
            complete_ns: None,
            device,
            offset,
            len,
            op,
            flags,
            pid: None,
            tid: None,
            comm: Comm::default(),
        })))
    }

    fn add(&mut self, file: &str) -> Option<Entry> {
        if self.files.contains_key(file) {
            return None;
        }
        let index = self.files.len() as u16;
        self.files.insert(file.to_string(), index);
        Some(Entry::Device(Device {
            index,
            name: file.to_string(),
            number: None,
        }))
    }

    fn known(&self, file: &str) -> Result<u16, TraceError> {
        self.files
            .get(file)
            .copied()
            .ok_or_else(|| self.bad(format!("{file:?} is used before its `add` line")))
    }
}

impl Iterator for Reader {
    type Item = Result<Entry, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let got = match self.read_line() {
                Ok(g) => g,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            if !got {
                self.done = true;
                return None;
            }
            match self.parse() {
                Ok(Some(e)) => return Some(Ok(e)),
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// Writes entries as fio iolog v3 (times in µs from the trace's start).
pub struct Writer {
    out: BufWriter<File>,
    path: PathBuf,
    names: Vec<String>,
    last_us: u64,
}

impl Writer {
    /// Creates `path` (never over an existing file).
    pub fn create(path: &Path) -> Result<Writer, TraceError> {
        let f = super::create_new(path)?;
        let mut w = Writer {
            out: BufWriter::new(f),
            path: path.to_path_buf(),
            names: Vec::new(),
            last_us: 0,
        };
        w.line(format_args!("{V3}"))?;
        Ok(w)
    }

    fn line(&mut self, a: std::fmt::Arguments) -> Result<(), TraceError> {
        writeln!(self.out, "{a}").map_err(|e| TraceError::io("write", &self.path, e))
    }

    pub fn write(&mut self, e: &Entry) -> Result<(), TraceError> {
        match e {
            Entry::Device(d) => {
                // fio reads the name as one word.
                if d.name.is_empty() || d.name.chars().any(char::is_whitespace) {
                    return Err(TraceError::Unknown {
                        path: self.path.clone(),
                        what: format!(
                            "device name {:?} cannot be written to a fio iolog (it must be one word)",
                            d.name
                        ),
                    });
                }
                self.names.push(d.name.clone());
                let us = self.last_us;
                self.line(format_args!("{us} {} add", d.name))?;
                self.line(format_args!("{us} {} open", d.name))
            }
            Entry::Request(r) => {
                let us = r.issue_ns / 1000;
                self.last_us = self.last_us.max(us);
                let name = &self.names[usize::from(r.device)];
                let act = match r.op {
                    Op::Read => "read",
                    Op::Write => "write",
                    Op::Discard => "trim",
                    Op::Flush => "sync",
                };
                writeln!(self.out, "{us} {name} {act} {} {}", r.offset, r.len)
                    .map_err(|e| TraceError::io("write", &self.path, e))
            }
        }
    }

    pub fn finish(mut self) -> Result<(), TraceError> {
        let us = self.last_us;
        for i in 0..self.names.len() {
            let name = self.names[i].clone();
            self.line(format_args!("{us} {name} close"))?;
        }
        let f = self
            .out
            .into_inner()
            .map_err(|e| TraceError::io("write", &self.path, e.into_error()))?;
        f.sync_all()
            .map_err(|e| TraceError::io("write", &self.path, e))
    }
}
