//! The floor: the fewest instructions that can do random O_DIRECT reads on a
//! file — a bare pread loop and a bare io_uring loop, no clock read per I/O,
//! no statistics, no histogram. What it reaches is the machine's limit for
//! one thread; bench/vs-fio.sh reports dbio (and fio) as a fraction of it.
//!
//!     cargo build --release --example floor
//!     target/release/examples/floor FILE psync|psync-pool|io_uring DEPTH BS SECONDS RAMP [SUBMIT]
//!
//! `psync-pool` is the pread loop reading each block into a random slot of
//! a 256 MiB pool, as a buffer cache (the SLOB model's `--cache 256M`) reads
//! into buffers all over its memory: against `psync`, what cold copy
//! destinations cost the kernel.
//!
//! SUBMIT (io_uring) is dbio's `--uring-submit`: `each` (one
//! `io_uring_enter(1, 0, GETEVENTS)` per read as it is queued, as fio does;
//! when no completion is there, up to 8 calls that do not block before one
//! that waits), `batch`
//! (every free slot queued, then one `io_uring_enter(n, 1, GETEVENTS)`), or
//! `auto` (the default, as dbio's: `each` from 2 to 32 in flight).
//!
//! Prints one JSON line shaped like the part of dbio's report the benchmark
//! scripts read: `{"total": {"iops", "requests"}, "cpu": {"us_per_io"}}`.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, types};

/// IORING_ENTER_GETEVENTS.
const GETEVENTS: u32 = 1;

#[path = "floor_file.rs"]
mod floor_file;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, engine, depth, bs, seconds, ramp, submit) = match &args[..] {
        [f, e, d, b, s, r] => (f, e, d, b, s, r, "auto"),
        [f, e, d, b, s, r, m] => (f, e, d, b, s, r, m.as_str()),
        _ => {
            eprintln!(
                "usage: floor FILE psync|psync-pool|io_uring DEPTH BS SECONDS RAMP [each|batch|auto]"
            );
            std::process::exit(2);
        }
    };
    let parse = |what: &str, v: &str| -> u64 {
        v.parse().unwrap_or_else(|_| {
            eprintln!("floor: {what} {v:?} is not a whole number");
            std::process::exit(2)
        })
    };
    let (depth, bs) = (parse("DEPTH", depth) as u32, parse("BS", bs) as usize);
    let each = match submit {
        "each" => true,
        "batch" => false,
        "auto" => (2..=32).contains(&depth),
        other => {
            eprintln!("floor: SUBMIT is each, batch or auto, not {other:?}");
            std::process::exit(2)
        }
    };
    let (seconds, ramp): (f64, f64) = match (seconds.parse(), ramp.parse()) {
        (Ok(s), Ok(r)) => (s, r),
        _ => {
            eprintln!("floor: SECONDS and RAMP are numbers of seconds");
            std::process::exit(2)
        }
    };
    let (f, blocks) = floor_file::open_direct("floor", file, bs);
    let slots = if engine == "psync-pool" {
        (POOL / bs).max(1)
    } else {
        depth.max(1) as usize
    };
    let mut floor = Floor {
        fd: f.as_raw_fd(),
        bs,
        blocks,
        rng: 0x9E37_79B9_7F4A_7C15,
        slots,
        buf: Aligned::new(bs * slots),
    };
    let run = |floor: &mut Floor, secs: f64| match engine.as_str() {
        "psync" => floor.psync(secs, false),
        "psync-pool" => floor.psync(secs, true),
        "io_uring" => floor.uring(depth.max(1), each, secs),
        other => {
            eprintln!("floor: unknown engine {other:?} (psync, psync-pool or io_uring)");
            std::process::exit(2)
        }
    };
    if ramp > 0.0 {
        run(&mut floor, ramp);
    }
    let (cpu0, t0) = (floor_file::cpu_s(), Instant::now());
    let ios = run(&mut floor, seconds);
    let (cpu, secs) = (floor_file::cpu_s() - cpu0, t0.elapsed().as_secs_f64());
    println!(
        "{{\"total\": {{\"iops\": {}, \"requests\": {ios}}}, \"cpu\": {{\"us_per_io\": {}}}}}",
        ios as f64 / secs,
        cpu * 1e6 / ios.max(1) as f64
    );
}

/// The pool `psync-pool` reads into.
const POOL: usize = 256 << 20;

struct Floor {
    fd: i32,
    bs: usize,
    blocks: u64,
    rng: u64,
    /// Buffers of `bs` bytes in `buf`.
    slots: usize,
    buf: Aligned,
}

impl Floor {
    /// A random block's byte offset (xorshift64*, multiply-shift to range).
    #[inline]
    fn offset(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (((r as u128 * self.blocks as u128) >> 64) as u64) * self.bs as u64
    }

    /// pread until `secs` have passed (the clock is read every 256 reads),
    /// into the first buffer or, with `spread`, into a random one.
    fn psync(&mut self, secs: f64, spread: bool) -> u64 {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let mut ios = 0u64;
        while Instant::now() < end {
            for _ in 0..256 {
                let off = self.offset() as libc::off_t;
                let slot = if spread {
                    (self.rng >> 32) as usize % self.slots
                } else {
                    0
                };
                // SAFETY: slot < slots: bs bytes inside buf, aligned for O_DIRECT.
                let dst = unsafe { self.buf.ptr.add(slot * self.bs) };
                let n = unsafe { libc::pread(self.fd, dst.cast(), self.bs, off) };
                assert_eq!(n, self.bs as isize, "pread at {off}");
            }
            ios += 256;
        }
        ios
    }

    /// `depth` reads in flight on one ring with a registered file and
    /// buffers, until `secs` have passed; `each`: every read submitted by
    /// its own call as it is queued.
    fn uring(&mut self, depth: u32, each: bool, secs: f64) -> u64 {
        // As dbio's engine sets it up: one issuer, completions run when it waits.
        let entries = depth.next_power_of_two();
        let mut ring: IoUring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))
            .expect("io_uring");
        ring.submitter()
            .register_files(&[self.fd])
            .expect("register file");
        let iov: Vec<libc::iovec> = (0..depth as usize)
            .map(|i| libc::iovec {
                // SAFETY: slot i lies inside the buffer of bs * depth bytes.
                iov_base: unsafe { self.buf.ptr.add(i * self.bs) }.cast(),
                iov_len: self.bs,
            })
            .collect();
        // SAFETY: the buffers outlive the ring (dropped at the end of this call).
        unsafe { ring.submitter().register_buffers(&iov) }.expect("register buffers");
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let (mut ios, mut inflight) = (0u64, 0u32);
        let mut free: Vec<u16> = (0..depth as u16).collect();
        let mut stopping = false;
        loop {
            while let Some(slot) = (!stopping).then(|| free.pop()).flatten() {
                let sqe = opcode::ReadFixed::new(
                    types::Fixed(0),
                    iov[slot as usize].iov_base.cast(),
                    self.bs as u32,
                    slot,
                )
                .offset(self.offset())
                .build()
                .user_data(u64::from(slot));
                // SAFETY: the slot's buffer is not reused until its completion.
                unsafe { ring.submission().push(&sqe) }.expect("a free SQE");
                inflight += 1;
                if each {
                    // GETEVENTS: also runs the completion work waiting.
                    // SAFETY: no argument is passed.
                    unsafe {
                        ring.submitter()
                            .enter::<libc::sigset_t>(1, 0, GETEVENTS, None)
                    }
                    .expect("io_uring_enter");
                }
            }
            if inflight == 0 {
                return ios;
            }
            let (mut reaped, mut looks) = (0, 0);
            loop {
                for cqe in ring.completion() {
                    assert_eq!(cqe.result(), self.bs as i32, "read failed");
                    free.push(cqe.user_data() as u16);
                    inflight -= 1;
                    reaped += 1;
                }
                if reaped > 0 {
                    break;
                }
                if each && looks < 8 {
                    // As dbio: up to 8 looks without blocking before sleeping.
                    looks += 1;
                    // SAFETY: no argument is passed.
                    unsafe {
                        ring.submitter()
                            .enter::<libc::sigset_t>(0, 0, GETEVENTS, None)
                    }
                    .expect("io_uring_enter");
                    continue;
                }
                ring.submit_and_wait(1).expect("io_uring_enter");
            }
            ios += reaped;
            if ios % 256 < u64::from(depth) && Instant::now() >= end {
                stopping = true;
            }
        }
    }
}

/// A zeroed buffer aligned to 4 KiB, for O_DIRECT.
struct Aligned {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Aligned {
    fn new(len: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(len.max(4096), 4096).expect("layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory");
        Aligned { ptr, layout }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}
