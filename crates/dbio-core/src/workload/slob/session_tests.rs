//! Tests of `session.rs`: a real session (and a real DB writer) on a real file.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
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
use crate::workload::slob::{RedoStress, RedoSync};

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

/// What `--schemas 1 --threads-per-schema N --scale 64 --work-unit 3`
/// resolves to (the CLI's defaults otherwise), the cache capped as it caps it.
fn config(dir: &std::path::Path, threads: u32) -> SlobConfig {
    let mut cfg = SlobConfig {
        schemas: 1,
        threads_per_schema: threads,
        scale_blocks: BLOCKS,
        block_size: BS,
        datafiles: 1,
        work_unit: 3,
        update_pct: 25,
        scan_pct: 0,
        scan_blocks: (1 << 20) / BS,
        redo_stress: RedoStress::Lite,
        flavor: Default::default(),
        hotspot: None,
        hot_schema_every: None,
        think: None,
        work_loop: None,
        cache_bytes: 16 << 20,
        db_writers: 1,
        dbwr_batch: 64,
        dbwr_rate: None,
        memory: None,
        dbwr_nice: -10,
        dbwr_engine: if crate::engine::uring::available() {
            crate::config::EngineKind::IoUring
        } else {
            crate::config::EngineKind::Psync
        },
        redo_dir: dir.to_path_buf(),
        redo_files: 3,
        redo_file_size: 128 << 20,
        redo_block: 512,
        redo_sync: RedoSync::Dsync,
        log_buffer: 4 << 20,
        window: Default::default(),
    };
    let bs = u64::from(BS);
    let min = u64::from(cfg.min_cache_buffers()) * bs;
    cfg.cache_bytes = cfg
        .cache_bytes
        .min((cfg.tablespace_blocks() * bs * 4).max(min));
    cfg
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
        full_pages: None,
        live: crate::workload::slob::live::LiveSlot::many(64),
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
            undo: None,
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
        schedule: None,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
        backend: None,
        group: None,
        prefetch: None,
    }
}

/// Blocks 0..n cached, every one dirty and unpinned.
fn all_dirty(inst: &Instance<'_>, n: u64) {
    let stop = AtomicBool::new(false);
    for block in 0..n {
        let Lookup::Claimed { buf } = inst.cache.lookup(block, &stop) else {
            panic!("block {block} must miss")
        };
        inst.cache.read_done(buf);
        assert!(inst.cache.mark_dirty(buf, 1));
        inst.cache.unpin(buf);
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
    all_dirty(&inst, 16);
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
                    undo: None,
                },
                stamp: (0, 1),
                content: crate::storage::content::Content::new(Default::default(), 8192, 0),
                files: files_r,
                doublewrite: None,
                batch: 4,
                queued: vec![0; 4],
                scanned: 0,
                rng: Rng::for_stream(1, 9),
                outlier_ns: u64::MAX,
                tally: Tally::default(),
                stats: SessionStats::new(),
                series: SeriesWriter::new(slot),
                pace: Default::default(),
                writeback: None,
                marked: None,
                ckpt_end: None,
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

/// Runs `blocks` as one update of session `sess` to its commit, playing the
/// log writer's part (everything allocated is made durable at once).
fn update_committed(sess: &mut Session<'_, Psync>, blocks: &[u64]) {
    let inst = sess.inst;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Acquire) {
                inst.log
                    .flushed
                    .store(inst.log.alloc.load(Acquire), Release);
                inst.log.written.notify();
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let ok = sess.update(blocks, now_ns());
        done.store(true, Release);
        assert!(ok, "the update committed");
    });
}

#[test]
fn postgres_redo_logs_a_page_image_once_per_block_per_checkpoint() {
    use super::super::flavor::{
        Flavor, FullPages, PG_CHANGE_BYTES, PG_COMMIT_BYTES, PG_PAGE_IMAGE_BYTES,
    };
    let (dir, path, file) = datafile();
    let mut cfg = config(dir.path(), 1);
    cfg.flavor = Flavor::Postgres;
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let mut inst = instance(&shared, 32, 1);
    inst.full_pages = Some(FullPages::new(BLOCKS));
    let slot = SessionSeries::new();
    let mut sess = session(0, &inst, &cfg, &files, &fd, &slot);
    let (change, image, commit) = (
        u64::from(PG_CHANGE_BYTES),
        u64::from(PG_PAGE_IMAGE_BYTES),
        u64::from(PG_COMMIT_BYTES),
    );
    let mut expect = 0;
    // Three blocks never changed since the checkpoint: three images.
    update_committed(&mut sess, &[10, 11, 12]);
    expect += 3 * change + 3 * image + commit;
    assert_eq!(sess.tally.total.full_page_images, 3);
    assert_eq!(sess.tally.total.redo_bytes, expect);
    // Two of them again and one new one: one image.
    update_committed(&mut sess, &[10, 12, 13]);
    expect += 3 * change + image + commit;
    assert_eq!(sess.tally.total.full_page_images, 4);
    assert_eq!(sess.tally.total.redo_bytes, expect);
    // A checkpoint begins: every block's next change logs its image again.
    inst.full_pages.as_ref().unwrap().checkpoint_begins();
    update_committed(&mut sess, &[10, 13, 20]);
    expect += 3 * change + 3 * image + commit;
    assert_eq!(sess.tally.total.full_page_images, 7);
    assert_eq!(sess.tally.total.redo_bytes, expect);
    assert_eq!(
        inst.log.alloc.load(Acquire),
        expect,
        "the log got the same redo"
    );
    assert_eq!(sess.tally.total.transactions, 3);
}

#[test]
fn a_postgres_select_hints_a_changed_block_once_and_dirties_it_again() {
    use super::super::flavor::{Flavor, FullPages, PG_PAGE_IMAGE_BYTES, PG_PRUNE_BYTES};
    let (dir, path, file) = datafile();
    let mut cfg = config(dir.path(), 1);
    cfg.flavor = Flavor::Postgres;
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let mut inst = instance(&shared, 32, 1);
    inst.full_pages = Some(FullPages::new(BLOCKS));
    let slot = SessionSeries::new();
    let mut sess = session(0, &inst, &cfg, &files, &fd, &slot);
    update_committed(&mut sess, &[10, 11, 12]);
    // A DB writer writes the three blocks: clean again.
    for b in 0..32 {
        if inst.cache.begin_write(b).is_some() {
            inst.cache.end_write(b);
        }
    }
    assert_eq!(inst.cache.dirty(), 0);
    let (redo, images) = (
        sess.tally.total.redo_bytes,
        sess.tally.total.full_page_images,
    );
    // A select of two of them and one never changed: two hinted, dirty
    // again, a prune record each; imaged by the update already.
    assert!(sess.select(&[10, 12, 20]));
    let t = sess.tally.total;
    assert_eq!(t.hint_dirtied, 2);
    assert_eq!(inst.cache.dirty(), 2);
    assert_eq!(t.redo_bytes, redo + 2 * u64::from(PG_PRUNE_BYTES));
    assert_eq!(t.full_page_images, images);
    // Hinted once: selecting them again changes nothing.
    assert!(sess.select(&[10, 12]));
    assert_eq!(sess.tally.total.redo_bytes, t.redo_bytes);
    // After a checkpoint, the hint of block 11 logs its image.
    inst.full_pages.as_ref().unwrap().checkpoint_begins();
    assert!(sess.select(&[11]));
    let u = sess.tally.total;
    assert_eq!(u.full_page_images, images + 1);
    assert_eq!(
        u.redo_bytes,
        t.redo_bytes + u64::from(PG_PRUNE_BYTES) + u64::from(PG_PAGE_IMAGE_BYTES)
    );
    assert_eq!(
        inst.log.alloc.load(Acquire),
        u.redo_bytes,
        "all of it in the log"
    );
}

#[test]
fn a_postgres_miss_advises_its_block_before_reading_it_and_a_hit_does_not() {
    use super::super::flavor::Flavor;
    use super::super::prefetch::Prefetch;
    let (dir, path, file) = datafile();
    let mut cfg = config(dir.path(), 1);
    cfg.flavor = Flavor::Postgres;
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, 32, 1);
    let slot = SessionSeries::new();
    let mut sess = session(0, &inst, &cfg, &files, &fd, &slot);
    sess.prefetch = Prefetch::of(true, true, &fd);
    assert!(sess.select(&[3, 9, 27]));
    assert!(sess.select(&[3, 9]));
    let t = sess.tally.total;
    assert_eq!((t.physical_reads, t.cache_hits), (3, 2));
    assert_eq!(t.prefetches, 3, "one advice per miss, none per hit");
    let advised = sess.tally.events.get(Event::DataFilePrefetch).count;
    assert_eq!(advised, 3);
    // Without the advice (O_DIRECT, or another flavor) none is counted.
    let slot = SessionSeries::new();
    let mut plain = session(0, &inst, &cfg, &files, &fd, &slot);
    assert!(plain.select(&[40, 41]));
    assert_eq!(plain.tally.total.physical_reads, 2);
    assert_eq!(plain.tally.total.prefetches, 0);
    assert_eq!(plain.tally.events.get(Event::DataFilePrefetch).count, 0);
}

#[test]
fn oracle_redo_is_the_change_vectors_only() {
    let (dir, path, file) = datafile();
    let cfg = config(dir.path(), 1);
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, 32, 1);
    let slot = SessionSeries::new();
    let mut sess = session(0, &inst, &cfg, &files, &fd, &slot);
    update_committed(&mut sess, &[10, 11, 12]);
    update_committed(&mut sess, &[10, 11, 12]);
    let one = 3 * u64::from(super::super::RedoStress::Lite.bytes_per_block())
        + u64::from(super::super::COMMIT_RECORD_BYTES);
    assert_eq!(sess.tally.total.redo_bytes, 2 * one);
    assert_eq!(sess.tally.total.full_page_images, 0);
}

#[test]
fn a_postgres_session_in_an_all_dirty_cache_writes_a_buffer_itself() {
    let (dir, path, file) = datafile();
    let cfg = config(dir.path(), 1);
    let files = [path.clone()];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, 16, 1);
    // No DB writer runs.
    all_dirty(&inst, 16);
    let slot = SessionSeries::new();
    let mut sess = session(0, &inst, &cfg, &files, &fd, &slot);
    sess.backend = Some(crate::workload::slob::evict::BackendWriter {
        content: crate::storage::content::Content::new(Default::default(), BS, 0),
        stamp: (0, 1),
    });
    let t = Instant::now();
    let buf = sess
        .get(40)
        .expect("read in after the session freed a buffer");
    assert!(t.elapsed() < Duration::from_secs(5), "no wait for a writer");
    assert_eq!(inst.cache.block_of(buf), Some(40));
    inst.cache.unpin(buf);
    let c = sess.tally.total;
    assert_eq!(
        (c.backend_writes, c.physical_writes, c.write_requests),
        (1, 1, 1)
    );
    assert_eq!(sess.tally.events.get(Event::BackendBufferWrite).count, 1);
    assert_eq!(sess.tally.events.get(Event::FreeBufferWaits).count, 0);
    assert_eq!(inst.cache.dirty(), 15);
    // Exactly one block of the (zeroed) datafile was written: the victim.
    let bytes = std::fs::read(&path).unwrap();
    let written = bytes
        .chunks(BS as usize)
        .filter(|b| b.iter().any(|&x| x != 0))
        .count();
    assert_eq!(written, 1);
}

#[test]
fn an_innodb_session_logs_each_row_change_as_it_makes_it() {
    use super::super::group_commit::GroupCommit;
    let (dir, path, file) = datafile();
    let cfg = config(dir.path(), 1);
    let files = [path];
    let fd = [file.as_raw_fd()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, 32, 1);
    let slot = SessionSeries::new();
    let change = u64::from(INNODB_CHANGE_BYTES);

    // Another flavor: the changes wait for the commit to be logged.
    let mut sess = session(0, &inst, &cfg, &files, &fd, &slot);
    assert_eq!(sess.change(&[10, 11, 12], false), Ok(0));
    assert_eq!(inst.log.alloc.load(Acquire), 0);

    // InnoDB: each change's redo is in the log before the commit, and the
    // page's change sits at its redo's position (what a page cleaner's
    // write-ahead compares with the durable log).
    let redo = dir.path().join("redo");
    let group = GroupCommit::new(
        vec![redo],
        (1 << 20, 512, 1 << 20),
        crate::config::IoMode::Buffered,
        true,
        (0, 0),
    );
    let mut sess = session(1, &inst, &cfg, &files, &fd, &slot);
    sess.group = Some((&group, 1));
    assert_eq!(sess.change(&[20, 21, 22], false), Ok(0));
    assert_eq!(inst.log.alloc.load(Acquire), 3 * change);
    let at = |b: u64| match inst.cache.lookup(b, &shared.stop) {
        super::super::cache::Lookup::Hit { buf, .. } => {
            let at = inst.cache.changed_at(buf);
            inst.cache.unpin(buf);
            at
        }
        _ => panic!("block {b} is cached"),
    };
    assert_eq!([at(20), at(21), at(22)], [0, change, 2 * change]);
}
