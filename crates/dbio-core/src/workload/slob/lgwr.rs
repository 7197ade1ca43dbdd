//! The log writer: writes the redo sessions generated, sequentially, to the
//! redo log files, one write for everything pending (group commit: one write
//! makes every commit in it durable), ended as the flavor ends a partly
//! filled redo block ([`PartialBlock`]): Oracle pads it (the padding is
//! "redo wastage") and starts the next write at the next block; PostgreSQL
//! (8 KiB WAL pages) and InnoDB (512-byte log blocks) write the block as
//! far as it goes and write it again, fuller, with the next write. While
//! no commit waits, a rewriting log writer writes only whole blocks (the
//! WAL writer's background writes of the records selects log): a partly
//! filled block waits for the next commit. A full log file switches to the next one and
//! asks for a checkpoint; reusing a file whose checkpoint is not complete
//! waits, and so do sessions that want to commit meanwhile.
//!
//! When a write becomes durable is the flavor's [`Durability`]: each write
//! (Oracle's and InnoDB's log writers), or — PostgreSQL's
//! `wal_sync_method = fdatasync` — an fdatasync only when a commit waits,
//! a log file is full, or the WAL writer's round comes ([`WalWriter`]).
//!
//! Every redo block written carries dbio's per-sector stamps
//! (`target::block`): the redo file's number among the redo files, the
//! offset, the log sequence (1 for the first file this run writes, one
//! more at every switch) as the generation, the redo layout's target id and
//! the run's seed, so `dbio verify --target REDO_DIR/dbio-redo` checks them.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::time::Duration;

use super::RedoSync;
use super::doublewrite::sync_of;
use super::events::Event;
use super::flavor::Flavor;
use super::flavor::PartialBlock;
use super::futex;
use super::group_commit::{GroupCommit, Leader};
use super::instance::{Instance, Tally};
use crate::engine::buf::BufPool;
use crate::engine::{Engine, Io, OpKind, SyncAfterWrite, explain_result, perform};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::samplers::series::SeriesWriter;
use crate::storage::block::{self, Header};
use crate::storage::manifest::Manifest;

pub(crate) struct LogWriter<'a, E: Engine> {
    /// Thread number used in outliers.
    pub id: u32,
    pub inst: &'a Instance<'a>,
    pub engine: E,
    pub io_mode: crate::config::IoMode,
    pub files: &'a [std::path::PathBuf],
    /// File number of the first redo file in outliers (after the datafiles).
    pub file_base: u32,
    pub file_size: u64,
    pub redo_block: u64,
    /// How a write that ends inside a redo block ends it.
    pub partial: PartialBlock,
    /// When a write becomes durable.
    pub durability: Durability,
    /// `--flavor innodb`: the log as the committing sessions write it
    /// ([`Durability::Led`]; this thread then leads only InnoDB's other groups).
    pub group: Option<&'a GroupCommit>,
    /// The log buffer's memory: what each write writes.
    pub buf: BufPool,
    /// The run's seed, for the stamps.
    pub seed: u32,
    pub outlier_ns: u64,
    pub tally: Tally,
    pub stats: SessionStats,
    pub series: SeriesWriter<'a>,
}

impl<'a, E: Engine> LogWriter<'a, E> {
    pub fn run(&mut self) {
        if let Some(group) = self.group {
            return self.run_led(group);
        }
        let inst = self.inst;
        let log = &inst.log;
        let nfiles = self.files.len();
        // Redo position at which each file's current contents end (0 = unused).
        let mut file_end = vec![0u64; nfiles];
        let (mut file, mut pos) = (0usize, 0u64);
        // Redo written, and durable (what commits wait for).
        let mut at = Progress::new(log.flushed.load(Acquire), now_ns());
        // The redo layout's target id (its manifest), and the log sequence.
        let target = self.files[0]
            .parent()
            .and_then(|d| Manifest::load(d).ok().flatten())
            .map_or(0, |m| m.target_id);
        let mut seq = 1u64;
        loop {
            let round = self.wal_writer_round(&mut at);
            let upto = self.write_upto(at.flushed, at.written, round);
            if upto == at.written {
                if at.written > at.flushed && (round || self.sync_due(&at)) {
                    // Written before, not yet durable: a sync alone.
                    if !self.sync_alone(file, &mut at) {
                        return;
                    }
                    continue;
                }
                if inst.sessions_done.load(Acquire) || inst.stopping() {
                    break;
                }
                let seen = log.post.seq();
                log.posted.store(false, Release);
                if self.write_upto(at.flushed, at.written, false) == at.written {
                    log.post.wait_past(seen, self.idle_nap(&at));
                }
                continue;
            }
            let pending = upto - at.written;
            let room = self.file_size - pos;
            let data = pending.min(log.buffer_size).min(room);
            let w = span(self.partial, self.redo_block, pos, data);
            self.stamp(file, w.offset, w.len, (seq, target));
            let t = now_ns();
            if !self.write(file, w.offset, w.len) {
                return;
            }
            pos = w.pos_after;
            at.written += data;
            // A full log file is made durable before the next is written
            // (PostgreSQL fsyncs a WAL segment when it finishes it).
            let sync = self.durability == Durability::WhenAsked
                && (pos == self.file_size || round || self.sync_due(&at));
            if sync && !self.sync(file) {
                return;
            }
            let synced = self.durability == Durability::EachWrite || sync;
            self.written(&mut at, (t, now_ns()), (file, w), data, synced);
            if pos == self.file_size {
                file_end[file] = at.written;
                inst.begin_checkpoint(at.written, false);
                let next = (file + 1) % nfiles;
                if !await_checkpoint(inst, file_end[next]) {
                    return;
                }
                file = next;
                pos = 0;
                seq += 1;
                self.tally
                    .count(inst.in_window(now_ns()), |c| c.log_switches += 1);
            }
        }
    }

    /// `--flavor innodb`: InnoDB has no log writer thread (the committing
    /// sessions lead their groups, `group_commit`); this thread leads the
    /// groups InnoDB's other threads ask for: the log ahead of a page
    /// cleaner's batch (`doublewrite::log_ahead_of`), the checkpoint after
    /// a page cleaner's flush round, the log buffer half full, and what is
    /// left when the run ends.
    fn run_led(&mut self, group: &GroupCommit) {
        let inst = self.inst;
        let log = &inst.log;
        loop {
            let seen = log.post.seq();
            log.posted.store(false, Release);
            let checkpoint = log.cleaner.take();
            let flushed = log.flushed.load(Acquire);
            let alloc = log.alloc.load(Acquire);
            let ending = inst.sessions_done.load(Acquire) || inst.stopping();
            let asked = ending
                || log.wanted.load(Acquire) > flushed
                || alloc - flushed >= log.buffer_size / 2;
            let mut l = self.leader();
            let ok = if let Some(at) = checkpoint.filter(|_| !ending) {
                group.checkpoint(&mut l, at)
            } else if asked && alloc > flushed {
                group.up_to(&mut l, alloc).is_some()
            } else if ending {
                return;
            } else {
                log.post.wait_past(seen, Duration::from_millis(100));
                true
            };
            if !ok {
                return;
            }
        }
    }

    /// Publishes a log write `w` of `data` bytes of redo to file `file`
    /// that ran from `t` to `end`, durable when `synced`: commits waiting
    /// for it are told, the write is counted and timed.
    fn written(
        &mut self,
        at: &mut Progress,
        (t, end): (u64, u64),
        (file, w): (usize, Span),
        data: u64,
        synced: bool,
    ) {
        self.wrote(t, end, file, w.offset, w.len);
        let log = &self.inst.log;
        if synced {
            at.durable();
            log.flushed.store(at.flushed, Release);
        }
        log.written.notify();
        self.tally.count(self.inst.in_window(end), |c| {
            c.redo_writes += 1;
            c.redo_syncs += u64::from(synced);
            c.redo_written_bytes += w.len;
            c.redo_wastage_bytes += w.len - data;
        });
    }

    /// How far the next write goes: everything generated, except that a
    /// rewriting log writer with no commit waiting (and the run going on)
    /// writes whole redo blocks only. `written` when there is nothing to write.
    /// A WAL writer round writes everything too.
    fn write_upto(&self, flushed: u64, written: u64, round: bool) -> u64 {
        let alloc = self.inst.log.alloc.load(Acquire);
        upto(
            self.partial,
            self.redo_block,
            alloc,
            written,
            round || self.urgent(flushed),
        )
    }

    /// True when a commit waits for redo not yet durable, or the run ends.
    fn urgent(&self, flushed: u64) -> bool {
        let inst = self.inst;
        inst.log.wanted.load(Acquire) > flushed
            || inst.sessions_done.load(Acquire)
            || inst.stopping()
    }

    /// [`Durability::WhenAsked`]: true when redo written so far is to be
    /// made durable now: a commit waits, or `wal_writer_flush_after` is
    /// written and not yet durable.
    fn sync_due(&self, at: &Progress) -> bool {
        let flush_after = WAL_WRITER_FLUSH_AFTER.min(self.inst.log.buffer_size / 2);
        self.urgent(at.flushed) || at.written - at.flushed >= flush_after
    }

    /// [`Durability::WhenAsked`]: true when the WAL writer's round is due
    /// and finds redo not yet durable (it then writes and syncs it all).
    fn wal_writer_round(&self, at: &mut Progress) -> bool {
        if self.durability != Durability::WhenAsked {
            return false;
        }
        let alloc = self.inst.log.alloc.load(Acquire);
        WalWriter::round(&mut at.round_ns, now_ns()) && alloc > at.flushed
    }

    /// How long the idle log writer sleeps: until the WAL writer's next
    /// round when redo is not yet durable, else 100 ms (or until posted).
    fn idle_nap(&self, at: &Progress) -> Duration {
        let alloc = self.inst.log.alloc.load(Acquire);
        if self.durability == Durability::EachWrite || alloc == at.flushed {
            return Duration::from_millis(100);
        }
        let next = at.round_ns + WAL_WRITER_DELAY_NS;
        Duration::from_nanos(next.saturating_sub(now_ns()).clamp(1_000_000, 100_000_000))
    }

    /// Stamps the `len` bytes about to be written at `pos` of redo file
    /// `file`, redo block by redo block: (log sequence, target id).
    fn stamp(&mut self, file: usize, pos: u64, len: u64, (seq, target): (u64, u32)) {
        let data = self.buf.slot_mut(0, len as usize);
        stamp(data, self.redo_block, file, pos, (seq, target, self.seed));
    }

    /// One log write of `len` bytes at `pos` of redo file `file` (durable
    /// when it returns under [`Durability::EachWrite`]). False (the run
    /// failed) when it fails.
    fn write(&mut self, file: usize, pos: u64, len: u64) -> bool {
        let buf = self.buf.ptr(0);
        let res = write(&mut self.engine, self.io_mode, file as u32, pos, (buf, len));
        self.failed(res, file)
    }

    /// An fdatasync of redo file `file`. False (the run failed) when it fails.
    fn sync(&mut self, file: usize) -> bool {
        let res = sync(&mut self.engine, file as u32);
        self.failed(res, file)
    }

    /// True when `res` is Ok; otherwise the run fails with its message.
    fn failed(&self, res: Result<(), String>, file: usize) -> bool {
        res.map_err(|why| fail(self.inst, &self.files[file], &why))
            .is_ok()
    }

    /// Makes redo written before durable with nothing new to write (the WAL
    /// writer's timed flush, or a commit whose record a background write
    /// wrote): counted as a log write of no bytes, so that log file
    /// parallel write waits stay the log writes.
    fn sync_alone(&mut self, file: usize, at: &mut Progress) -> bool {
        let t = now_ns();
        if !self.sync(file) {
            return false;
        }
        let end = now_ns();
        self.wrote(t, end, file, 0, 0);
        at.durable();
        let log = &self.inst.log;
        log.flushed.store(at.flushed, Release);
        log.written.notify();
        self.tally.count(self.inst.in_window(end), |c| {
            c.redo_writes += 1;
            c.redo_syncs += 1;
        });
        true
    }

    /// Records a log write ("log file parallel write", its sync included)
    /// of `len` bytes at `pos` of redo file `file`, from `t` to `end`.
    fn wrote(&mut self, t: u64, end: u64, file: usize, pos: u64, len: u64) {
        let file = self.file_base + file as u32;
        self.leader().pen.wrote((t, end), file, pos, len);
    }

    /// This thread as a group's leader: its engine (the redo files only)
    /// and its books.
    fn leader(&mut self) -> Leader<'_, 'a, '_, E> {
        Leader::of(
            (&mut self.engine, 0),
            (self.id, self.inst, self.outlier_ns),
            (&mut self.tally, &mut self.stats, &mut self.series),
        )
    }
}

/// Where a log write is counted and timed: the log writer's books, or
/// (`--flavor innodb`) those of the session or thread leading a group.
pub(crate) struct Pen<'s, 'a> {
    /// Thread number (live tallies, outliers).
    pub id: u32,
    pub inst: &'s Instance<'a>,
    pub tally: &'s mut Tally,
    pub stats: &'s mut SessionStats,
    pub series: &'s mut SeriesWriter<'a>,
    pub outlier_ns: u64,
}

impl Pen<'_, '_> {
    /// Records a log write ("log file parallel write", its sync included)
    /// of `len` bytes at `pos` of file number `file` (as outliers number
    /// files), from `t` to `end`.
    pub(crate) fn wrote(&mut self, (t, end): (u64, u64), file: u32, pos: u64, len: u64) {
        let lat = end - t;
        let t0 = self.inst.run.start_ns.load(Acquire);
        self.series.record(Kind::Write, end - t0, lat, len);
        let live = &self.inst.live[self.id as usize];
        live.wait(Event::LogFileParallelWrite, lat);
        live.wrote(1, len);
        if self.inst.in_window(end) {
            self.tally.events.record(Event::LogFileParallelWrite, lat);
            self.stats.op(Kind::Write).record(lat, len);
            if lat >= self.outlier_ns {
                self.stats.outlier(Outlier {
                    t_s: (end - t0) as f64 / 1e9,
                    op: Kind::Write,
                    session: self.id,
                    file,
                    offset_bytes: pos,
                    len_bytes: len as u32,
                    latency_ms: lat as f64 / 1e6,
                });
            }
        }
    }
}

/// Stamps `data`, about to be written at `pos` of redo file `file`, redo
/// block by redo block of `redo_block` bytes: (log sequence, target id,
/// the run's seed).
pub(crate) fn stamp(
    data: &mut [u8],
    redo_block: u64,
    file: usize,
    pos: u64,
    (seq, target, seed): (u64, u32, u32),
) {
    let rb = redo_block as usize;
    for (i, b) in data.chunks_exact_mut(rb).enumerate() {
        let h = Header {
            block: pos / redo_block + i as u64,
            generation: seq,
            file: file as u32,
            size: rb as u32,
            target,
            seed,
        };
        block::seal(b, h);
    }
}

/// One log write of `len` bytes from `buf` at `pos` of the engine's file
/// `file`: Ok, or why it failed.
pub(crate) fn write<E: Engine>(
    engine: &mut E,
    io_mode: crate::config::IoMode,
    file: u32,
    pos: u64,
    (buf, len): (*mut u8, u64),
) -> Result<(), String> {
    let io = Io {
        kind: OpKind::Write,
        file,
        offset: pos,
        len: len as u32,
        buf,
        slot: 0,
    };
    // SAFETY: the caller's log buffer holds `len` bytes and outlives the call.
    match unsafe { perform(engine, &io) } {
        Ok(c) if c.res == len as i32 => Ok(()),
        Ok(c) => Err(format!(
            "writing redo at byte {pos} failed: {}",
            explain_result(c.res, len, io_mode)
        )),
        Err(e) => Err(format!("writing redo at byte {pos} failed: {e}")),
    }
}

/// An fdatasync of the engine's file `file`: Ok, or why it failed.
pub(crate) fn sync<E: Engine>(engine: &mut E, file: u32) -> Result<(), String> {
    // SAFETY: a flush carries no buffer.
    match unsafe { perform(engine, &sync_of(file)) } {
        Ok(c) if c.res >= 0 => Ok(()),
        Ok(c) => Err(format!(
            "fdatasync failed: {}",
            std::io::Error::from_raw_os_error(-c.res)
        )),
        Err(e) => Err(format!("fdatasync failed: {e}")),
    }
}

/// Fails the run: `why` happened to redo log `path`.
pub(crate) fn fail(inst: &Instance, path: &std::path::Path, why: &str) {
    inst.run.fail(format!("redo log {}: {why}", path.display()));
}

/// Waits until everything below `lsn` is checkpointed (the next log file
/// may be overwritten); sessions wanting to commit wait meanwhile. False
/// when the run stops first.
pub(crate) fn await_checkpoint(inst: &Instance, lsn: u64) -> bool {
    if inst.ckpt.done.load(Acquire) >= lsn {
        return true;
    }
    let blocked = &inst.log.switch_blocked;
    blocked.store(1, Release);
    let ok = loop {
        let seen = inst.ckpt.advanced.seq();
        if inst.ckpt.done.load(Acquire) >= lsn {
            break true;
        }
        if inst.stopping() {
            break false;
        }
        inst.ckpt.target.fetch_max(lsn, AcqRel);
        inst.dbwr_post.notify();
        inst.ckpt
            .advanced
            .wait_past(seen, Duration::from_millis(20));
    };
    blocked.store(0, Release);
    futex::wake_all(blocked);
    ok
}

/// When the log writer's writes become durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Each write is durable when it returns: the redo logs opened O_DSYNC,
    /// or an fdatasync by the engine after each write (Oracle's LGWR,
    /// `--redo-sync dsync` for PostgreSQL's `open_datasync`).
    EachWrite,
    /// InnoDB's group commit (`group_commit`): whoever leads a group — a
    /// committing session, or this thread for the page cleaners' and the
    /// run's end — writes and then fsyncs the log itself (no fsync when the
    /// logs are opened O_DSYNC); the engine syncs nothing by itself.
    Led,
    /// PostgreSQL's `wal_sync_method = fdatasync`, its default on Linux:
    /// writes are not synced by themselves; the log writer fdatasyncs when
    /// a commit waits for redo not yet durable (the committing backend's
    /// XLogFlush), when it has filled a log file (a finished WAL segment is
    /// fsynced), when `wal_writer_flush_after` is written unsynced, and in
    /// the WAL writer's rounds ([`WalWriter`]).
    /// The whole pages written while no commit waits (the WAL writer's
    /// background writes of what selects log) are durable only then.
    WhenAsked,
}

impl Durability {
    /// The durability of `flavor`'s log writer syncing with `sync`.
    pub(crate) fn of(flavor: Flavor, sync: RedoSync) -> Durability {
        match (flavor, sync) {
            (Flavor::Postgres, RedoSync::Fdatasync) => Durability::WhenAsked,
            (Flavor::Innodb, _) => Durability::Led,
            (Flavor::Postgres | Flavor::Oracle, _) => Durability::EachWrite,
        }
    }

    /// What the log writer's engine does after each write.
    pub(crate) fn engine_sync(self, sync: RedoSync) -> SyncAfterWrite {
        match (self, sync) {
            (Durability::WhenAsked | Durability::Led, _)
            | (Durability::EachWrite, RedoSync::Dsync) => SyncAfterWrite::None,
            (Durability::EachWrite, RedoSync::Fdatasync) => SyncAfterWrite::Fdatasync,
        }
    }
}

/// PostgreSQL's `wal_writer_delay` (200 ms): the WAL writer's round.
const WAL_WRITER_DELAY_NS: u64 = 200_000_000;
/// PostgreSQL's `wal_writer_flush_after` (1 MiB): WAL written and not yet
/// flushed is flushed once there is this much of it (at most half the log
/// buffer here, so that sessions never wait for log buffer space on it).
const WAL_WRITER_FLUSH_AFTER: u64 = 1 << 20;

/// The WAL writer's schedule: a round every `wal_writer_delay`, in which
/// `XLogBackgroundFlush` writes and fdatasyncs the WAL not yet durable. In
/// SLOB's load that is mostly what selects log: pruning a page logs a record
/// in a transaction with no id, which commits asynchronously (no flush of
/// its own), so between commits the WAL writer flushes it, about five
/// times a second (PostgreSQL's `wal_sync` beyond its commits).
struct WalWriter;

impl WalWriter {
    /// True when a round is due at `now` after the last one at `*last`
    /// (then moved to `now`).
    fn round(last: &mut u64, now: u64) -> bool {
        let due = now.saturating_sub(*last) >= WAL_WRITER_DELAY_NS;
        if due {
            *last = now;
        }
        due
    }
}

/// How far the log writer has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Progress {
    /// Redo written.
    written: u64,
    /// Redo durable: what commits wait for.
    flushed: u64,
    /// When the WAL writer's last round was.
    round_ns: u64,
}

impl Progress {
    fn new(flushed: u64, now: u64) -> Progress {
        Progress {
            written: flushed,
            flushed,
            round_ns: now,
        }
    }

    /// Everything written is durable.
    fn durable(&mut self) {
        self.flushed = self.written;
    }
}

/// How far a write goes with `alloc` generated and `flushed` durable:
/// everything when padding or `urgent` (a commit waits, or the run ends),
/// else the whole blocks only (nothing when there are none).
fn upto(partial: PartialBlock, block: u64, alloc: u64, flushed: u64, urgent: bool) -> u64 {
    if urgent || partial == PartialBlock::Pad {
        alloc
    } else {
        (alloc / block * block).max(flushed)
    }
}

/// One log write: where it starts in the file, how many bytes it writes,
/// and the file position of the redo after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub offset: u64,
    pub len: u64,
    pub pos_after: u64,
}

/// The write of `data` bytes of redo that go at file position `pos`, in
/// blocks of `block` bytes. Padding leaves `pos` block-aligned; rewriting
/// starts at the block `pos` is in (written before, partly filled).
pub(crate) fn span(partial: PartialBlock, block: u64, pos: u64, data: u64) -> Span {
    match partial {
        PartialBlock::Pad => {
            let len = data.div_ceil(block) * block;
            Span {
                offset: pos,
                len,
                pos_after: pos + len,
            }
        }
        PartialBlock::Rewrite => {
            let offset = pos / block * block;
            let end = (pos + data).div_ceil(block) * block;
            Span {
                offset,
                len: end - offset,
                pos_after: pos + data,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_wastes_the_rest_of_the_block_and_moves_past_it() {
        let a = span(PartialBlock::Pad, 512, 0, 100);
        assert_eq!((a.offset, a.len, a.pos_after), (0, 512, 512));
        let b = span(PartialBlock::Pad, 512, a.pos_after, 600);
        assert_eq!((b.offset, b.len, b.pos_after), (512, 1024, 1536));
    }

    #[test]
    fn rewriting_writes_a_partly_filled_page_again_with_the_next_group() {
        // Three commit groups of 3000 B into 8 KiB WAL pages.
        let p = PartialBlock::Rewrite;
        let a = span(p, 8192, 0, 3000);
        assert_eq!((a.offset, a.len, a.pos_after), (0, 8192, 3000));
        let b = span(p, 8192, a.pos_after, 3000);
        assert_eq!((b.offset, b.len, b.pos_after), (0, 8192, 6000));
        // The third crosses into the second page: both pages, one write.
        let c = span(p, 8192, b.pos_after, 3000);
        assert_eq!((c.offset, c.len, c.pos_after), (0, 16384, 9000));
        let d = span(p, 8192, c.pos_after, 100);
        assert_eq!((d.offset, d.len, d.pos_after), (8192, 8192, 9100));
    }

    #[test]
    fn with_no_commit_waiting_only_whole_pages_are_written() {
        let p = PartialBlock::Rewrite;
        // A select's 64 B record alone: nothing until a commit asks.
        assert_eq!(upto(p, 8192, 100 + 64, 100, false), 100);
        assert_eq!(upto(p, 8192, 100 + 64, 100, true), 164);
        // Records past a page boundary: the full page goes in the background.
        assert_eq!(upto(p, 8192, 8300, 100, false), 8192);
        assert_eq!(upto(p, 8192, 8300, 100, true), 8300);
        // Oracle's log writer writes whatever is there.
        assert_eq!(upto(PartialBlock::Pad, 512, 164, 100, false), 164);
    }

    #[test]
    fn the_wal_writer_comes_round_every_200_ms() {
        let ms = 1_000_000;
        let mut last = 0;
        assert!(!WalWriter::round(&mut last, 199 * ms));
        assert_eq!(last, 0);
        assert!(WalWriter::round(&mut last, 200 * ms));
        assert_eq!(last, 200 * ms, "the next round counts from this one");
        assert!(!WalWriter::round(&mut last, 399 * ms));
        assert!(
            WalWriter::round(&mut last, 1000 * ms),
            "a late round is not doubled"
        );
        assert!(!WalWriter::round(&mut last, 1100 * ms));
        let mut at = Progress::new(8192, 0);
        at.written = 3 * 8192;
        at.durable();
        assert_eq!((at.flushed, at.written), (3 * 8192, 3 * 8192));
    }

    #[test]
    fn only_postgres_with_fdatasync_leaves_writes_unsynced() {
        use Durability::{EachWrite, WhenAsked};
        let of = Durability::of;
        assert_eq!(of(Flavor::Postgres, RedoSync::Fdatasync), WhenAsked);
        assert_eq!(of(Flavor::Postgres, RedoSync::Dsync), EachWrite);
        assert_eq!(of(Flavor::Oracle, RedoSync::Fdatasync), EachWrite);
        assert_eq!(of(Flavor::Innodb, RedoSync::Fdatasync), Durability::Led);
        assert_eq!(of(Flavor::Innodb, RedoSync::Dsync), Durability::Led);
        assert_eq!(
            Durability::Led.engine_sync(RedoSync::Fdatasync),
            SyncAfterWrite::None,
            "the leader fsyncs, not the engine"
        );
        assert_eq!(
            WhenAsked.engine_sync(RedoSync::Fdatasync),
            SyncAfterWrite::None
        );
        assert_eq!(
            EachWrite.engine_sync(RedoSync::Fdatasync),
            SyncAfterWrite::Fdatasync
        );
        assert_eq!(EachWrite.engine_sync(RedoSync::Dsync), SyncAfterWrite::None);
    }

    #[test]
    fn rewriting_from_a_block_boundary_writes_whole_blocks() {
        let s = span(PartialBlock::Rewrite, 512, 1024, 1024);
        assert_eq!((s.offset, s.len, s.pos_after), (1024, 1024, 2048));
        // Every write covers its redo and stays within whole blocks.
        for pos in [0u64, 1, 511, 512, 4000] {
            for data in [1u64, 511, 512, 513, 9000] {
                let s = span(PartialBlock::Rewrite, 512, pos, data);
                assert!(s.offset <= pos && s.offset + s.len >= pos + data);
                assert_eq!(s.offset % 512, 0);
                assert_eq!(s.len % 512, 0);
                assert!(s.len < data + 1024);
            }
        }
    }
}
