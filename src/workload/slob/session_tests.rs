//! Tests of `session.rs`: a real session (and a real DB writer) on a real file.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32};
use std::time::{Duration, Instant};

use super::*;
use crate::engine::SyncAfterWrite;
use crate::engine::psync::Psync;
use crate::measure::stats::SessionStats;
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::workload::Shared;
use crate::workload::slob::cache::Cache;
use crate::workload::slob::dbwr::DbWriter;
use crate::workload::slob::instance::{Checkpoint, Log};
use crate::workload::slob::locks::RowLocks;
use crate::workload::slob::options::SlobArgs;

const BS: u32 = 4096;
const BLOCKS: u64 = 64;

/// A data file of `BLOCKS` zero blocks in a fresh directory.
fn datafile() -> (tempfile::TempDir, std::path::PathBuf, std::fs::File) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let file = std::fs::File::options()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    file.set_len(BLOCKS * u64::from(BS)).unwrap();
    (dir, path, file)
}

fn config(dir: &std::path::Path, threads: u32) -> SlobConfig {
    let a = SlobArgs {
        schemas: Some(1),
        threads_per_schema: Some(threads),
        scale: Some(BLOCKS.to_string()),
        work_unit: Some(3),
        ..SlobArgs::default()
    };
    a.into_config(None, BS, 1, None, Some(dir)).unwrap()
}

fn instance(shared: &Shared, buffers: u32, sessions: u32) -> Instance<'_> {
    Instance {
        run: shared,
        cache: Cache::new(buffers, BS),
        locks: RowLocks::new(sessions, 8),
        log: Log {
            buffer_size: 1 << 20,
            ..Log::default()
        },
        ckpt: Checkpoint::new(1),
        dbwr_post: Default::default(),
        free_wanted: AtomicBool::new(false),
        dbwr_done: Default::default(),
        sessions_done: AtomicBool::new(false),
    }
}

fn session<'a>(
    id: u32,
    inst: &'a Instance<'a>,
    cfg: &'a SlobConfig,
    files: &'a [std::path::PathBuf],
    fd: &[i32],
    slot: &'a SessionSeries,
) -> Session<'a, Psync> {
    Session {
        id,
        inst,
        cfg,
        io_mode: crate::config::IoMode::Buffered,
        ts: Tablespace {
            datafiles: 1,
            block_size: BS,
            base: 0,
        },
        files,
        engine: Psync::new(fd, SyncAfterWrite::None),
        picker: KeyPicker::new(cfg, 0, 1),
        mix: OpMix::new(cfg.update_pct, cfg.scan_pct),
        rng: Rng::for_stream(1, u64::from(id)),
        scan_buf: BufPool::new(BS as usize, 1),
        scan_run: Vec::new(),
        rows: Vec::with_capacity(8),
        clock: now_ns(),
        outlier_ns: u64::MAX,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
    }
}

/// Stops the background threads however the test leaves its scope.
struct StopOnDrop<'a>(&'a Instance<'a>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.sessions_done.store(true, Release);
        self.0.run.stop.store(true, Release);
        self.0.dbwr_post.notify();
    }
}

#[test]
fn a_miss_in_an_all_dirty_cache_waits_for_the_db_writer_as_free_buffer_waits() {
    let (dir, path, file) = datafile();
    let cfg = config(dir.path(), 1);
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, 16, 1);
    // Blocks 0..16 cached, every one dirty and unpinned.
    let stop = AtomicBool::new(false);
    for block in 0..16 {
        let Lookup::Claimed { buf } = inst.cache.lookup(block, &stop) else {
            panic!("block {block} must miss")
        };
        inst.cache.read_done(buf);
        assert!(inst.cache.mark_dirty(buf, 1));
        inst.cache.unpin(buf);
    }
    let slots: Vec<_> = (0..2).map(|_| SessionSeries::new()).collect();
    std::thread::scope(|s| {
        let (inst_r, cfg_r, files_r, fd_r) = (&inst, &cfg, &files, &fd);
        let slot = &slots[0];
        let sess = s.spawn(move || {
            let mut sess = session(0, inst_r, cfg_r, files_r, fd_r, slot);
            let t = Instant::now();
            let buf = sess.get(40);
            (buf, t.elapsed(), sess.tally)
        });
        // The miss found no free buffer and asked the writers, and no
        // writer runs yet: the session waits.
        let t = Instant::now();
        while inst.cache.set_wanted(0) == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "the miss never asked"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            !sess.is_finished(),
            "no free buffer until a writer cleans one"
        );
        let slot = &slots[1];
        let guard = StopOnDrop(&inst);
        let writer = s.spawn(move || {
            let mut w = DbWriter {
                id: 0,
                thread: 1,
                writers: 1,
                inst: inst_r,
                engine: Psync::new(fd_r, SyncAfterWrite::None),
                io_mode: crate::config::IoMode::Buffered,
                ts: Tablespace {
                    datafiles: 1,
                    block_size: BS,
                    base: 0,
                },
                stamp: (0, 1),
                files: files_r,
                batch: 4,
                queued: vec![0; 4],
                rng: Rng::for_stream(1, 9),
                outlier_ns: u64::MAX,
                tally: Tally::default(),
                stats: SessionStats::new(),
                series: SeriesWriter::new(slot),
            };
            w.run();
            w.tally.total.physical_writes
        });
        let (buf, took, tally) = sess.join().unwrap();
        let buf = buf.expect("the block is read in once a buffer is free");
        assert!(took < Duration::from_secs(5));
        assert_eq!(inst.cache.block_of(buf), Some(40));
        inst.cache.unpin(buf);
        let fbw = tally.events.get(Event::FreeBufferWaits);
        assert!(fbw.count >= 1, "the session waited for a free buffer");
        assert!(
            fbw.count < 100,
            "{} waits: each ends when the writer cleans buffers",
            fbw.count
        );
        let waited_ns = fbw.hist.mean() * fbw.count as f64;
        assert!(
            waited_ns >= 20e6,
            "waited {waited_ns} ns: until the writer ran"
        );
        assert_eq!(tally.total.physical_reads, 1);
        assert_eq!(tally.events.get(Event::DbFileSequentialRead).count, 1);
        drop(guard);
        assert!(writer.join().unwrap() >= 1, "the DB writer cleaned buffers");
    });
}

#[test]
fn an_update_locks_each_row_just_before_changing_it_and_holds_no_pin_while_it_waits() {
    let (dir, path, file) = datafile();
    let cfg = config(dir.path(), 2);
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, 32, 2);
    let stop = AtomicBool::new(false);
    // Session 1's transaction holds row 20.
    assert_eq!(inst.locks.lock(1, 20, &stop), Some(None));
    let slots: Vec<_> = (0..1).map(|_| SessionSeries::new()).collect();
    let done = AtomicU32::new(0);
    std::thread::scope(|s| {
        let (inst_r, cfg_r, files_r, fd_r, slot, done_r) =
            (&inst, &cfg, &files, &fd, &slots[0], &done);
        let h = s.spawn(move || {
            let mut sess = session(0, inst_r, cfg_r, files_r, fd_r, slot);
            let ok = sess.update(&[30, 10, 20], now_ns());
            done_r.store(1, Release);
            (ok, sess.tally)
        });
        let _guard = StopOnDrop(&inst);
        // Row 10 comes first: changed before the session waits for row 20;
        // row 30 is not touched yet; no buffer is pinned while it waits.
        let t = Instant::now();
        let dirty_of = |block: u64| {
            (0..32)
                .any(|b| inst.cache.block_of(b) == Some(block) && inst.cache.dirty_lsn(b).is_some())
        };
        while !dirty_of(10) {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "row 10 never changed"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(done.load(Relaxed), 0, "row 20 is held: the update waits");
        assert!(!dirty_of(20) && !dirty_of(30));
        for b in 0..32 {
            assert_eq!(
                inst.cache.pins(b),
                0,
                "buffer {b} pinned during a row lock wait"
            );
        }
        // Session 1 commits: the update goes on and commits (the log
        // writer's part is played here).
        inst.locks.unlock_all(1, &[20]);
        while done.load(Relaxed) == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "the update never committed"
            );
            inst.log
                .flushed
                .store(inst.log.alloc.load(Relaxed), Release);
            inst.log.written.notify();
            std::thread::sleep(Duration::from_millis(1));
        }
        let (ok, tally) = h.join().unwrap();
        assert!(ok);
        assert!(dirty_of(20) && dirty_of(30));
        assert_eq!(tally.total.transactions, 1);
        assert_eq!(tally.total.block_changes, 3);
        assert_eq!(tally.events.get(Event::EnqTxRowLockContention).count, 1);
        assert_eq!(inst.locks.held(), 0, "every row released at commit");
    });
}

#[test]
fn the_read_histogram_is_the_read_events_together() {
    let (dir, path, file) = datafile();
    let mut cfg = config(dir.path(), 1);
    // Selects and scans only (no commits, so no log writer), 40 operations.
    (cfg.update_pct, cfg.scan_pct, cfg.scan_blocks, cfg.work_loop) = (0, 50, 4, Some(40));
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    shared.begin(None);
    // A cache of 16 buffers for 64 blocks: misses of both kinds.
    let inst = instance(&shared, 16, 1);
    let slot = SessionSeries::new();
    let mut s = session(0, &inst, &cfg, &files, &fd, &slot);
    s.scan_buf = BufPool::new(4 * BS as usize, 1);
    s.run();
    let seq = s.tally.events.get(Event::DbFileSequentialRead);
    let scattered = s.tally.events.get(Event::DbFileScatteredRead);
    assert!(seq.count > 0 && scattered.count > 0, "both kinds of read");
    let read = &s.stats.ops[Kind::Read as usize];
    assert_eq!(read.count, seq.count + scattered.count);
    assert_eq!(read.sum_ns, seq.sum_ns + scattered.sum_ns);
    assert_eq!(read.hist.len(), read.count);
    let mut both = seq.hist.clone();
    both.add(&scattered.hist).unwrap();
    assert_eq!(read.hist, both);
}
