//! Version 2's entries: requests as differences from the one before, in
//! LEB128 varints, and the issuing thread (process, thread, name) as a
//! slot of a small table declared by a thread entry when it changes, so a
//! request of an ordinary capture takes 15–20 bytes before compression
//! where version 1 took about 50 — less for the compressor to do.
//!
//! Thread entry (tag 3): varint slot (< [`SLOTS`]), varint pid + 1 and
//! tid + 1 (0: unknown), u8 name length, the name. Request (tag 4): u8
//! head — operation code (bits 0–1), a completion follows (bit 2), flags
//! (bits 3–7) — then varints: zigzag(issue − the previous request's
//! issue), zigzag(completion − issue) if there is one, device,
//! zigzag(offset − the previous request's end), length, thread slot.
//! Differences wrap around 2^64, so every u64 value is kept exactly.

use super::Source;
use crate::trace::{Comm, Flags, Op, Request, TraceError};

pub(super) const TAG_THREAD: u8 = 3;
pub(super) const TAG_REQUEST: u8 = 4;
/// Thread slots: a thread takes slot `tid % SLOTS` (so no lookup), and a
/// thread entry is written only when the slot held another thread.
pub(super) const SLOTS: usize = 1024;
const HAS_COMPLETION: u8 = 4;

/// Who issued a request, as a thread entry declares it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Thread {
    pid: Option<u32>,
    tid: Option<u32>,
    comm: Comm,
}

impl Thread {
    fn of(r: &Request) -> Thread {
        Thread {
            pid: r.pid,
            tid: r.tid,
            comm: r.comm,
        }
    }

    fn slot(&self) -> usize {
        self.tid.unwrap_or(u32::MAX) as usize % SLOTS
    }
}

/// What both sides carry from one request to the next.
struct Context {
    prev_issue: u64,
    prev_end: u64,
    threads: Box<[Option<Thread>]>,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            prev_issue: 0,
            prev_end: 0,
            threads: vec![None; SLOTS].into_boxed_slice(),
        }
    }
}

/// Encodes requests (and the thread entries they need) into a buffer.
#[derive(Default)]
pub(super) struct Encoder(Context);

impl Encoder {
    /// The request's entry, after a thread entry if its slot changes.
    pub(super) fn request(&mut self, b: &mut Vec<u8>, r: &Request) {
        let c = &mut self.0;
        let thread = Thread::of(r);
        let slot = thread.slot();
        if c.threads[slot] != Some(thread) {
            c.threads[slot] = Some(thread);
            b.push(TAG_THREAD);
            put(b, slot as u64);
            put(b, opt32(thread.pid));
            put(b, opt32(thread.tid));
            let name = thread.comm.as_bytes();
            b.push(name.len() as u8);
            b.extend_from_slice(name);
        }
        let completion = u8::from(r.complete_ns.is_some()) * HAS_COMPLETION;
        b.push(TAG_REQUEST);
        b.push(r.op.code() | completion | r.flags.bits() << 3);
        put(b, zigzag(r.issue_ns.wrapping_sub(c.prev_issue)));
        if let Some(done) = r.complete_ns {
            put(b, zigzag(done.wrapping_sub(r.issue_ns)));
        }
        put(b, u64::from(r.device));
        put(b, zigzag(r.offset.wrapping_sub(c.prev_end)));
        put(b, u64::from(r.len));
        put(b, slot as u64);
        c.prev_issue = r.issue_ns;
        c.prev_end = r.offset.wrapping_add(u64::from(r.len));
    }
}

/// Decodes what an [`Encoder`] wrote, checking every value it reads.
#[derive(Default)]
pub(super) struct Decoder(Context);

impl Decoder {
    /// A thread entry (its tag read).
    pub(super) fn thread(&mut self, s: &mut Source) -> Result<(), TraceError> {
        let slot = s.varint()?;
        let pid = s.varint()?;
        let pid = from_opt32(s, pid)?;
        let tid = s.varint()?;
        let tid = from_opt32(s, tid)?;
        let len = usize::from(s.u8()?);
        let mut name = [0u8; 16];
        if len > name.len() {
            return Err(s.bad(format!("garbled: a process name of {len} bytes")));
        }
        s.fill(&mut name[..len], "a process name")?;
        let slot = usize::try_from(slot)
            .ok()
            .filter(|&i| i < SLOTS)
            .ok_or_else(|| s.bad(format!("garbled: thread slot {slot}")))?;
        self.0.threads[slot] = Some(Thread {
            pid,
            tid,
            comm: Comm::new(&name[..len]),
        });
        Ok(())
    }

    /// A request (its tag read); its device is checked by the caller.
    pub(super) fn request(&mut self, s: &mut Source) -> Result<Request, TraceError> {
        let c = &mut self.0;
        let head = s.u8()?;
        let op = Op::from_code(head & 3).expect("two bits are an operation");
        let flags = Flags::from_bits(head >> 3).expect("five bits are known flags");
        let issue_ns = c.prev_issue.wrapping_add(unzigzag(s.varint()?));
        let complete_ns = if head & HAS_COMPLETION != 0 {
            Some(issue_ns.wrapping_add(unzigzag(s.varint()?)))
        } else {
            None
        };
        let device = s.varint()?;
        let device = u16::try_from(device)
            .map_err(|_| s.bad(format!("garbled: request on device {device}")))?;
        let offset = c.prev_end.wrapping_add(unzigzag(s.varint()?));
        let len = s.varint()?;
        let len =
            u32::try_from(len).map_err(|_| s.bad(format!("garbled: a length of {len} bytes")))?;
        let slot = s.varint()?;
        let thread = usize::try_from(slot)
            .ok()
            .and_then(|i| *c.threads.get(i)?)
            .ok_or_else(|| s.bad(format!("garbled: thread slot {slot}, never declared")))?;
        c.prev_issue = issue_ns;
        c.prev_end = offset.wrapping_add(u64::from(len));
        Ok(Request {
            issue_ns,
            complete_ns,
            device,
            offset,
            len,
            op,
            flags,
            pid: thread.pid,
            tid: thread.tid,
            comm: thread.comm,
        })
    }
}

/// `v` as an unsigned LEB128 varint: 7 bits a byte, low first.
pub(super) fn put(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

/// A wrapped difference as a small number whether it is up or down.
fn zigzag(d: u64) -> u64 {
    let s = d as i64;
    ((s << 1) ^ (s >> 63)) as u64
}

fn unzigzag(v: u64) -> u64 {
    (v >> 1) ^ (v & 1).wrapping_neg()
}

fn opt32(v: Option<u32>) -> u64 {
    v.map_or(0, |v| u64::from(v) + 1)
}

fn from_opt32(s: &Source, v: u64) -> Result<Option<u32>, TraceError> {
    match v {
        0 => Ok(None),
        v => u32::try_from(v - 1)
            .map(Some)
            .map_err(|_| s.bad(format!("garbled: process or thread id {}", v - 1))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_keeps_every_difference_and_makes_small_ones_short() {
        for d in [
            0,
            1,
            2,
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            (1 << 63) - 1,
            12345,
        ] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
        assert_eq!(zigzag(0u64.wrapping_sub(1)), 1, "-1 is small");
        assert_eq!(zigzag(1), 2);
        let mut b = Vec::new();
        put(&mut b, 300);
        assert_eq!(b, [0xAC, 0x02]);
        b.clear();
        put(&mut b, u64::MAX);
        assert_eq!(b.len(), 10);
    }
}
