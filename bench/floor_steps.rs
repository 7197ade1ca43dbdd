//! The psync floor with dbio's per-I/O work added back one piece at a time,
//! so that interleaved runs can price each piece (issue 14 item 3). With no
//! steps it is `floor.rs`'s pread loop; each step adds what dbio's raw
//! session does per I/O, using dbio's own code:
//!
//! * `rng`    — the offset from dbio's `Rng::below` instead of the floor's xorshift
//! * `pool`   — the buffer from dbio's `BufPool` (filled as a session fills it)
//! * `clock`  — two `now_ns` reads per I/O, as a session times each request
//! * `hist`   — the latency recorded in an `OpStats` (HDR histogram + counters)
//! * `series` — and in the per-second series (`SeriesWriter::record`)
//! * `thread` — a second, idle thread in the process (dbio has its control
//!   thread): glibc's `pread` then toggles cancellation around each call and
//!   the kernel takes a reference on the file at each call
//! * `rustix` — `rustix::io::pread` (a raw system call) instead of glibc's
//! * `unshare` — the reading thread's own descriptor table
//!   (`engine::psync::private_fd_table`)
//!
//! ```text
//! cargo build --release --example floor_steps
//! target/release/examples/floor_steps FILE SECONDS RAMP [STEP,STEP,...]
//! target/release/examples/floor_steps --clock-cost
//! ```
//!
//! `--clock-cost` prints the cost of one `now_ns` and of one
//! `clock_gettime(CLOCK_MONOTONIC)` in ns (best of 20 rounds of 1M calls).
//!
//! Prints the same JSON line as `floor.rs`. `DBIO_CLOCK=tsc` makes
//! `now_ns` read the TSC instead of `clock_gettime` (see measure/clock.rs).

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use dbio::engine::buf::BufPool;
use dbio::measure::clock::now_ns;
use dbio::measure::stats::{Kind, OpStats};
use dbio::rng::Rng;
use dbio::samplers::series::{SeriesWriter, SessionSeries};

const BS: usize = 4096;

#[path = "floor_file.rs"]
mod floor_file;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--clock-cost") {
        clock_cost();
        return;
    }
    let (file, seconds, ramp, steps) = match &args[..] {
        [f, s, r] => (f, s, r, ""),
        [f, s, r, steps] => (f, s, r, steps.as_str()),
        _ => {
            eprintln!(
                "usage: floor_steps FILE SECONDS RAMP [rng,pool,clock,hist,series,thread,rustix,unshare]"
            );
            std::process::exit(2);
        }
    };
    let (seconds, ramp): (f64, f64) = match (seconds.parse(), ramp.parse()) {
        (Ok(s), Ok(r)) => (s, r),
        _ => {
            eprintln!("floor_steps: SECONDS and RAMP are numbers of seconds");
            std::process::exit(2)
        }
    };
    let mut on = Steps::default();
    for s in steps.split(',').filter(|s| !s.is_empty()) {
        match s {
            "rng" => on.rng = true,
            "pool" => on.pool = true,
            "clock" => on.clock = true,
            "hist" => on.hist = true,
            "series" => on.series = true,
            "thread" => on.thread = true,
            "rustix" => on.rustix = true,
            "unshare" => on.unshare = true,
            _ => {
                eprintln!(
                    "floor_steps: unknown step {s:?} (rng, pool, clock, hist, series, thread, rustix, unshare)"
                );
                std::process::exit(2)
            }
        }
    }
    let (f, blocks) = floor_file::open_direct("floor_steps", file, BS);
    let series = SessionSeries::new();
    let mut run = Run {
        fd: f.as_raw_fd(),
        blocks,
        on,
        xs: 0x9E37_79B9_7F4A_7C15,
        rng: Rng::new(1),
        pool: BufPool::new(BS, 1),
        plain: BufPool::new(BS, 1),
        stats: OpStats::default(),
        series: SeriesWriter::new(&series),
        t0: now_ns(),
    };
    // Parked for the whole run: only there, as dbio's control thread is.
    let _idle = on
        .thread
        .then(|| std::thread::spawn(|| std::thread::park_timeout(Duration::from_secs(3600))));
    if on.unshare {
        dbio::engine::psync::private_fd_table();
    }
    if on.pool {
        let mut fill = Rng::new(2);
        fill.fill(run.pool.slot_mut(0, BS));
    }
    if ramp > 0.0 {
        run.psync(ramp);
    }
    let (cpu0, t0) = (floor_file::cpu_s(), Instant::now());
    let ios = run.psync(seconds);
    let (cpu, secs) = (floor_file::cpu_s() - cpu0, t0.elapsed().as_secs_f64());
    std::hint::black_box(&run.stats);
    // The idle thread is not joined: the process exits under it.
    println!(
        "{{\"total\": {{\"iops\": {}, \"requests\": {ios}}}, \"cpu\": {{\"us_per_io\": {}}}}}",
        ios as f64 / secs,
        cpu * 1e6 / ios.max(1) as f64
    );
}

#[derive(Default, Clone, Copy)]
struct Steps {
    rng: bool,
    pool: bool,
    clock: bool,
    hist: bool,
    series: bool,
    thread: bool,
    rustix: bool,
    unshare: bool,
}

struct Run<'a> {
    fd: i32,
    blocks: u64,
    on: Steps,
    xs: u64,
    rng: Rng,
    pool: BufPool,
    plain: BufPool,
    stats: OpStats,
    series: SeriesWriter<'a>,
    t0: u64,
}

impl Run<'_> {
    #[inline]
    fn block(&mut self) -> u64 {
        if self.on.rng {
            return self.rng.below(self.blocks);
        }
        // floor.rs's xorshift64*, multiply-shift to range.
        self.xs ^= self.xs >> 12;
        self.xs ^= self.xs << 25;
        self.xs ^= self.xs >> 27;
        let r = self.xs.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((r as u128 * self.blocks as u128) >> 64) as u64
    }

    fn psync(&mut self, secs: f64) -> u64 {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let buf = if self.on.pool {
            self.pool.ptr(0)
        } else {
            self.plain.ptr(0)
        };
        let on = self.on;
        let mut ios = 0u64;
        while Instant::now() < end {
            for _ in 0..256 {
                let off = (self.block() * BS as u64) as libc::off_t;
                let start = if on.clock { now_ns() } else { 0 };
                let n = if on.rustix {
                    // SAFETY: the descriptor is open; buf holds BS bytes.
                    let (f, b) = unsafe {
                        (
                            std::os::fd::BorrowedFd::borrow_raw(self.fd),
                            std::slice::from_raw_parts_mut(buf, BS),
                        )
                    };
                    rustix::io::pread(f, b, off as u64).map_or(-1, |n| n as isize)
                } else {
                    // SAFETY: buf holds BS bytes, aligned for O_DIRECT.
                    unsafe { libc::pread(self.fd, buf.cast(), BS, off) }
                };
                assert_eq!(n, BS as isize, "pread at {off}");
                if on.clock {
                    let done = now_ns();
                    let lat = done - start;
                    if on.hist {
                        self.stats.record(lat, BS as u64);
                    } else {
                        std::hint::black_box(lat);
                    }
                    if on.series {
                        self.series
                            .record(Kind::Read, done - self.t0, lat, BS as u64);
                    }
                }
            }
            ios += 256;
        }
        ios
    }
}

/// Best-of-20 ns per call of `now_ns` and of `clock_gettime`.
fn clock_cost() {
    let best = |f: &dyn Fn() -> u64| {
        (0..20)
            .map(|_| {
                let t = Instant::now();
                let mut x = 0u64;
                for _ in 0..1_000_000 {
                    x = x.wrapping_add(f());
                }
                std::hint::black_box(x);
                t.elapsed().as_nanos() as f64 / 1e6
            })
            .fold(f64::MAX, f64::min)
    };
    println!(
        "{{\"now_ns\": {:.2}, \"source\": \"{}\", \"clock_gettime\": {:.2}}}",
        best(&now_ns),
        dbio::measure::clock::source(),
        best(&dbio::measure::clock::monotonic_ns)
    );
}
