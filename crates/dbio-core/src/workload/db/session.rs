//! One SLOB session against a real server, whatever the server: SLOB's
//! exact mix — a select of WORK_UNIT adjacent keys (scattered pages), an
//! update of them followed by its own COMMIT, or a scan of `--scan-size`
//! physically contiguous pages — with SLOB's hot spot, hot schema and think
//! time, each operation timed from the client (select, update, commit,
//! scan). The server's client is a [`SlobClient`]; the loop is the same.
//! Under `--rate` each operation is a transaction that starts at its due
//! time (`measure::pace`), or at once when the session is behind, and is
//! timed from both.

use std::sync::atomic::Ordering::*;
use std::time::Duration;

use super::DbPart;
use crate::config::RunConfig;
use crate::measure::clock::now_ns;
use crate::measure::pace::{Pacer, Slot};
use crate::measure::schedule::Schedule;
use crate::measure::stats::{Kind, SessionStats};
use crate::rng::Rng;
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::workload::slob::SlobConfig;
use crate::workload::slob::keys::{KeyPicker, OpMix, OpType};
use crate::workload::{Shared, ThreadEnd};

/// A session's connection, as the loop drives it. `table` is the schema
/// the keys belong to (the session's own, or table 0 for SLOB's hot schema).
pub trait SlobClient {
    /// Reads the rows of keys `lo..=hi`.
    fn select(&mut self, table: u32, lo: i64, hi: i64) -> Result<(), super::Refused>;
    /// Changes the rows of keys `lo..=hi` in a transaction and commits it;
    /// returns when (`now_ns`) the commit was sent.
    fn update(&mut self, table: u32, lo: i64, hi: i64) -> Result<u64, super::Refused>;
    /// Reads pages `first..end` (one row each), physically contiguous.
    fn scan(&mut self, table: u32, first: i64, end: i64) -> Result<(), super::Refused>;
    /// The ramp is over and the window opens, before the session's first
    /// operation in it: a server whose sessions hold counts back (PostgreSQL
    /// sends its statistics up to a second late) sends them now.
    fn window_opens(&mut self) -> Result<(), super::Refused> {
        Ok(())
    }
}

/// Runs session `id` of `cfg` until the window ends, `--work-loop`
/// operations are done, or the run stops. `page` is the server's page
/// (bytes per row).
#[allow(clippy::too_many_arguments)]
pub fn run<C: SlobClient, S: Default>(
    client: &mut C,
    id: u32,
    slob: &SlobConfig,
    cfg: &RunConfig,
    page: u32,
    shared: &Shared,
    slot: &SessionSeries,
) -> ThreadEnd<DbPart<S>> {
    let seed = cfg.seed;
    let own = id / slob.threads_per_schema;
    let mut picker = KeyPicker::new(slob, own, seed ^ u64::from(own).wrapping_mul(0x9E37_79B9));
    let mut mix = OpMix::new(slob.update_pct, slob.scan_pct);
    let mut rng = Rng::for_stream(seed, u64::from(id));
    let mut series = SeriesWriter::paced(slot, cfg.rate_iops.is_some());
    let mut part = DbPart::<S>::default();
    let start = shared.start_ns.load(SeqCst);
    let ramp_end = start + shared.ramp_ns;
    let mut ops = 0u64;
    let mut last_ns = 0;
    let mut before_window = shared.ramp_ns > 0;
    let mut pace = Schedule::of_run(cfg, &shared.arrivals).map(|s| Pacer::new(s, start, ramp_end));
    let mut measured = match pace {
        Some(_) => SessionStats::open_loop(),
        None => SessionStats::new(),
    };
    loop {
        let slot = match pace.as_mut().map(|p| due(p, shared, &mut measured)) {
            Some(None) => break, // nothing more falls due, or stopped
            s => s.flatten(),
        };
        if shared.stop.load(Relaxed)
            || now_ns() >= shared.end_ns.load(Relaxed)
            || slob.work_loop.is_some_and(|n| ops >= n)
        {
            break;
        }
        if before_window && now_ns() >= ramp_end {
            before_window = false;
            if let Err(e) = client.window_opens() {
                if !shared.stop.load(Relaxed) {
                    shared.fail(format!("session {id}: {e}"));
                }
                break;
            }
        }
        let op = mix.next_op();
        let (schema, lo, hi, n) = keys(op, &mut picker, &mut rng, slob);
        let table = schema as u32;
        let t0 = slot.map_or_else(now_ns, |s| s.start);
        let done = match op {
            OpType::Update => client.update(table, lo, hi).map(Some),
            OpType::Scan => client.scan(table, lo, hi).map(|_| None),
            OpType::Select => client.select(table, lo, hi).map(|_| None),
        };
        let t2 = now_ns();
        let commit_at = match done {
            Ok(c) => c,
            Err(e) => {
                if !shared.stop.load(Relaxed) {
                    shared.fail(format!("session {id}: {e}"));
                }
                break;
            }
        };
        ops += 1;
        last_ns = t2 - start;
        let (kind, stats) = match op {
            OpType::Update => (Kind::Write, &mut part.update),
            OpType::Scan => (Kind::Read, &mut part.scan),
            OpType::Select => (Kind::Read, &mut part.select),
        };
        series.record(kind, t2 - start, t2 - t0, n * u64::from(page));
        if let Some(s) = slot {
            series.record_due(kind, t2 - start, t2 - s.due, s.start.saturating_sub(s.due));
        }
        if t0 >= ramp_end {
            let end = commit_at.unwrap_or(t2);
            stats.record(end - t0, n * u64::from(page));
            if let Some(t1) = commit_at {
                part.commit.record(t2 - t1, 0);
            }
            part.rows += n;
            if let (Some(s), Some(open)) = (slot, measured.open.as_deref_mut()) {
                open.record_op(s.due, s.start, t2);
            }
        }
        if let Some(t) = slob.think
            && ops.is_multiple_of(u64::from(t.every))
        {
            think(shared, t.min_s + (t.max_s - t.min_s) * rng.next_f64());
        }
    }
    if let (Some(p), Some(open)) = (&mut pace, measured.open.as_deref_mut()) {
        p.finish(shared.end_ns.load(Relaxed), open);
    }
    ThreadEnd {
        stats: measured,
        last_ns,
        issued: ops,
        part,
    }
}

/// The schema and the keys `lo..=hi` of operation `op` — for a scan pages
/// `lo..hi` (one row each) — and how many rows it reads.
fn keys(
    op: OpType,
    picker: &mut KeyPicker,
    rng: &mut Rng,
    slob: &SlobConfig,
) -> (u64, i64, i64, u64) {
    let scale = slob.scale_blocks;
    match op {
        OpType::Scan => {
            let b = picker.scan(rng);
            let n = u64::from(slob.scan_blocks).min(scale);
            let first = b % scale;
            (b / scale, first as i64, (first + n) as i64, n)
        }
        OpType::Select | OpType::Update => {
            let (s, key, n) = picker.key_range(rng);
            (s, key as i64, (key + n - 1) as i64, n)
        }
    }
}

/// Waits for the next transaction's due time (`--rate`); None when nothing
/// more falls due in the run or it stops.
fn due(p: &mut Pacer, shared: &Shared, stats: &mut SessionStats) -> Option<Slot> {
    let open = stats.open.get_or_insert_default();
    p.next(
        shared.end_ns.load(Relaxed),
        || shared.stop.load(Relaxed),
        open,
    )
}

/// SLOB's think time: idle (not an operation), cut short by the end of the
/// window or a stop.
fn think(shared: &Shared, secs: f64) {
    let until = now_ns() + (secs * 1e9) as u64;
    loop {
        let now = now_ns();
        if now >= until || shared.stop.load(Relaxed) || now >= shared.end_ns.load(Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_nanos((until - now).min(10_000_000)));
    }
}
