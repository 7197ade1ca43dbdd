//! `null`: completes every request at once without touching the kernel, like
//! fio's `engines/null.c`. It measures dbio's own cost per request, and makes
//! tests of the harness and the workloads fast and deterministic.

use std::io;

use super::{Completion, Engine, Io};

pub struct Null {
    depth: u32,
    /// Requests queued and not yet reaped: their slot and length.
    queued: Vec<(u32, u32)>,
    /// Time each request "takes", spun on the session's clock (0 = none).
    latency_ns: u64,
}

impl Null {
    /// An engine with `depth` requests in flight at most.
    pub fn new(depth: u32) -> Self {
        let depth = depth.max(1);
        Null {
            depth,
            queued: Vec::with_capacity(depth as usize),
            latency_ns: 0,
        }
    }

    /// Every request takes `ns` (busy-waited when it is reaped): a device of
    /// known latency, for tests of outliers and of the window's edges.
    #[cfg(test)]
    pub(crate) fn with_latency(mut self, ns: u64) -> Self {
        self.latency_ns = ns;
        self
    }
}

impl Engine for Null {
    fn depth(&self) -> u32 {
        self.depth
    }

    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        debug_assert!(
            self.queued.len() < self.depth as usize,
            "queue beyond depth"
        );
        self.queued.push((io.slot, io.len));
        Ok(())
    }

    fn reap<F: FnMut(Completion)>(&mut self, _min: u32, mut done: F) -> io::Result<u32> {
        if self.latency_ns > 0 && !self.queued.is_empty() {
            let until = crate::measure::clock::now_ns() + self.latency_ns;
            while crate::measure::clock::now_ns() < until {
                std::hint::spin_loop();
            }
        }
        let n = self.queued.len() as u32;
        for (slot, len) in self.queued.drain(..) {
            done(Completion {
                slot,
                res: len as i32,
                sync_ns: 0,
            });
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::OpKind;

    fn io(slot: u32) -> Io {
        Io {
            kind: OpKind::Write,
            file: 0,
            offset: 0,
            len: 4096,
            buf: std::ptr::null_mut(),
            slot,
        }
    }

    #[test]
    fn completes_everything_queued_with_its_length() {
        let mut e = Null::new(4);
        for s in 0..3 {
            unsafe { e.queue(&io(s)).unwrap() };
        }
        let mut seen = Vec::new();
        assert_eq!(e.reap(1, |c| seen.push((c.slot, c.res))).unwrap(), 3);
        assert_eq!(seen, vec![(0, 4096), (1, 4096), (2, 4096)]);
        assert_eq!(e.reap(0, |_| panic!("nothing is left")).unwrap(), 0);
    }

    #[test]
    fn latency_is_spent_when_reaping() {
        let mut e = Null::new(1).with_latency(2_000_000);
        unsafe { e.queue(&io(0)).unwrap() };
        let t = crate::measure::clock::now_ns();
        e.reap(1, |_| {}).unwrap();
        assert!(crate::measure::clock::now_ns() - t >= 2_000_000);
    }
}
