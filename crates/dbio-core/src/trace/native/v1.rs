//! Version 1's request entry (tag 2), read only — dbio writes version 2
//! since session 15, and traces kept in a store before that still read:
//! u64 issue ns, u64 completion ns (`u64::MAX`: none), u16 device, u64
//! offset, u32 length, u8 op, u8 flags, u32 pid, u32 tid (`u32::MAX`:
//! unknown), u8 name length, the name; all little-endian.

use super::Source;
use crate::trace::{Comm, Flags, Op, Request, TraceError};

pub(super) const TAG_REQUEST: u8 = 2;
const NONE32: u32 = u32::MAX;
const NONE64: u64 = u64::MAX;

/// A request (its tag read); its device is checked by the caller.
pub(super) fn request(s: &mut Source) -> Result<Request, TraceError> {
    let issue_ns = s.u64()?;
    let complete = s.u64()?;
    let device = s.u16()?;
    let offset = s.u64()?;
    let len = s.u32()?;
    let (op, flags) = (s.u8()?, s.u8()?);
    let (pid, tid) = (s.u32()?, s.u32()?);
    let clen = usize::from(s.u8()?);
    let mut comm = [0u8; 16];
    if clen > comm.len() {
        return Err(s.bad("garbled or truncated process name"));
    }
    s.fill(&mut comm[..clen], "a process name")?;
    let op = Op::from_code(op).ok_or_else(|| s.bad(format!("garbled: operation code {op}")))?;
    let flags =
        Flags::from_bits(flags).ok_or_else(|| s.bad(format!("garbled: flags {flags:#x}")))?;
    Ok(Request {
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
    })
}
