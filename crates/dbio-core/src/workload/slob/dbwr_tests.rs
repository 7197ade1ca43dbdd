//! Tests of `dbwr.rs`: a real DB writer thread writing a real file.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering::Release};
use std::time::{Duration, Instant};

use super::*;
use crate::engine::SyncAfterWrite;
use crate::engine::psync::Psync;
use crate::samplers::series::SessionSeries;
use crate::workload::Shared;
use crate::workload::slob::bufsync::Marked;
use crate::workload::slob::cache::{Cache, Lookup};
use crate::workload::slob::instance::{Checkpoint, Log};

const BUFFERS: u32 = 96;
const BS: u32 = 4096;

/// Caches blocks 0..BUFFERS, every one valid, dirty at redo position
/// `10 * (block + 1)`, and unpinned.
fn dirty_cache() -> Cache {
    dirty_cache_in(BUFFERS)
}

/// [`dirty_cache`]'s blocks in a cache of `buffers` (more: the rest empty,
/// so that less than a quarter is dirty and only checkpoints write).
fn dirty_cache_in(buffers: u32) -> Cache {
    let cache = Cache::new(buffers, BS);
    let stop = AtomicBool::new(false);
    for block in 0..u64::from(BUFFERS) {
        let Lookup::Claimed { buf } = cache.lookup(block, &stop) else {
            panic!("block {block} must miss")
        };
        cache.read_done(buf);
        assert!(cache.mark_dirty(buf, 10 * (block + 1)));
        cache.unpin(buf);
    }
    cache
}

/// The model's shared state over `cache`, with `writers` DB writers.
fn instance<'a>(shared: &'a Shared, cache: Cache, writers: u32) -> Instance<'a> {
    Instance {
        run: shared,
        cache,
        locks: crate::workload::slob::locks::RowLocks::new(1, 1),
        log: Log::default(),
        ckpt: Checkpoint::new(writers),
        dbwr_post: Default::default(),
        free_wanted: AtomicBool::new(false),
        dbwr_done: Default::default(),
        sessions_done: AtomicBool::new(false),
        full_pages: None,
        live: crate::workload::slob::live::LiveSlot::many(64),
    }
}

/// DB writer `id` of `writers` over `inst`, writing `files` (`fd`) with
/// psync in batches of 4, not paced.
fn writer<'a>(
    id: u32,
    writers: u32,
    inst: &'a Instance<'a>,
    files: &'a [std::path::PathBuf],
    slot: &'a SessionSeries,
    fd: &[std::os::fd::RawFd],
) -> DbWriter<'a, Psync> {
    DbWriter {
        id,
        thread: id,
        writers,
        inst,
        engine: Psync::new(fd, SyncAfterWrite::None),
        io_mode: crate::config::IoMode::Buffered,
        ts: Tablespace {
            datafiles: 1,
            block_size: BS,
            base: 0,
            undo: None,
        },
        stamp: (0, 1),
        content: crate::storage::content::Content::new(Default::default(), 8192, 0),
        files,
        doublewrite: None,
        batch: 4,
        queued: vec![0; 4],
        scanned: 0,
        rng: Rng::for_stream(1, u64::from(id)),
        outlier_ns: u64::MAX,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
        pace: Default::default(),
        writeback: None,
        marked: None,
        ckpt_end: None,
    }
}

struct StopOnDrop<'a>(&'a Instance<'a>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.sessions_done.store(true, Release);
        self.0.dbwr_post.notify();
    }
}

/// Waits until `cond` holds or fails the test after 10 s.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_checkpoint_writes_what_changed_before_its_target_and_nothing_after() {
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = datafile(dir.path());
    let files = [path.clone()];
    let shared = Shared::new(0.0);
    let writers = 2;
    let inst = instance(&shared, dirty_cache(), writers);
    let last_lsn = 10 * u64::from(BUFFERS);
    inst.log.alloc.store(last_lsn + 1, Release);
    // Below the pressure threshold (a quarter of the cache dirty) only the
    // checkpoint makes the writers write.
    let cache = &inst.cache;
    let stop = AtomicBool::new(false);
    for block in 0..u64::from(BUFFERS) {
        if block % 5 != 0 {
            let Lookup::Hit { buf, .. } = cache.lookup(block, &stop) else {
                panic!()
            };
            assert!(cache.begin_write(buf).is_some());
            cache.end_write(buf);
            cache.unpin(buf);
        }
    }
    assert!(cache.dirty() * 4 <= u64::from(BUFFERS));
    let dirty_before: Vec<(u32, u64)> = (0..BUFFERS)
        .filter_map(|b| cache.dirty_lsn(b).map(|l| (b, l)))
        .collect();
    let target = 10 * 48 + 5; // blocks 0..=47 changed before it
    let slots: Vec<_> = (0..writers).map(|_| SessionSeries::new()).collect();
    let fd = [file.as_raw_fd()];
    std::thread::scope(|s| {
        for id in 0..writers {
            let (inst, files, slot, fd) = (&inst, &files, &slots[id as usize], &fd);
            s.spawn(move || {
                let mut w = writer(id, writers, inst, files, slot, fd);
                w.run();
                w.tally
            });
        }
        // Stops the writers however this thread leaves the scope.
        let _stop = StopOnDrop(&inst);
        inst.ckpt.target.store(target, Release);
        inst.dbwr_post.notify();
        eventually("the checkpoint completes", || {
            inst.ckpt.done.load(Acquire) >= target
        });
        // Everything changed before the target is clean; nothing changed at
        // or after it was written; the mark is at most the lowest still dirty.
        for &(b, lsn) in &dirty_before {
            let block = cache.block_of(b).unwrap();
            assert_eq!(
                cache.dirty_lsn(b).is_some(),
                lsn >= target,
                "block {block} changed at {lsn}"
            );
        }
        let low = (0..BUFFERS)
            .filter_map(|b| cache.dirty_lsn(b))
            .min()
            .unwrap();
        assert!(inst.ckpt.done.load(Acquire) <= low);
    });
    // The blocks written are sealed where they belong in the datafile.
    let bytes = std::fs::read(&path).unwrap();
    for &(b, lsn) in &dirty_before {
        let block = cache.block_of(b).unwrap();
        let at = (block * u64::from(BS)) as usize;
        let written = bytes[at..at + BS as usize].iter().any(|&x| x != 0);
        assert_eq!(written, lsn < target, "block {block}");
    }
}

#[test]
fn a_writer_asked_for_buffers_it_cannot_write_wakes_the_waiters() {
    // Every buffer pinned (clean): a miss finds nothing, asks the writers
    // and waits; the writer has nothing to write there, so it wakes the
    // waiters to look again instead of leaving them to their timeout.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).unwrap();
    let files = [path.clone()];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, Cache::new(2048, BS), 1);
    let stop = AtomicBool::new(false);
    let (mut block, mut pinned) = (0u64, 0);
    while pinned < 2048 {
        if let Lookup::Claimed { buf } = inst.cache.lookup(block, &stop) {
            inst.cache.read_done(buf);
            pinned += 1;
        }
        block += 1;
    }
    let Lookup::NoFreeBuffer(w) = inst.cache.lookup(1 << 40, &stop) else {
        panic!("every buffer is pinned")
    };
    let slot = SessionSeries::new();
    let fd = [file.as_raw_fd()];
    std::thread::scope(|s| {
        let (inst_r, files_r, slot_r, fd_r) = (&inst, &files, &slot, &fd);
        s.spawn(move || {
            let mut w = writer(0, 1, inst_r, files_r, slot_r, fd_r);
            w.run();
        });
        let _stop = StopOnDrop(&inst);
        let t = Instant::now();
        inst.free_wanted.store(true, Release);
        inst.dbwr_post.notify();
        inst.cache.wait_free(w, Duration::from_secs(30));
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "woken, not timed out"
        );
    });
}

#[test]
fn raise_priority_sets_this_threads_nice_only_where_allowed() {
    // On a thread of its own: the test runner's threads keep their nice.
    std::thread::spawn(|| {
        let tid = unsafe { libc::gettid() } as libc::id_t;
        let nice = || unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
        let before = nice();
        // Lowering the priority is always allowed.
        assert!(raise_priority(before + 1));
        assert_eq!(nice(), before + 1);
        let root = unsafe { libc::geteuid() } == 0;
        // Raising it needs root (or CAP_SYS_NICE): set, or left as it was.
        assert_eq!(raise_priority(-10), root);
        assert_eq!(nice(), if root { -10 } else { before + 1 });
    })
    .join()
    .unwrap();
}

/// A data file of the cache's size in a temporary directory.
fn datafile(dir: &std::path::Path) -> (std::path::PathBuf, std::fs::File) {
    let path = dir.join("data");
    let file = std::fs::File::options()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    file.set_len(u64::from(BUFFERS * BS)).unwrap();
    (path, file)
}

/// The buffer holding `block` (every block of `dirty_cache` is cached).
fn buffer_of(cache: &Cache, block: u64) -> u32 {
    (0..cache.buffers())
        .find(|&b| cache.block_of(b) == Some(block))
        .unwrap()
}

/// Runs `--flavor postgres`'s DB writer (its checkpoint passes marked and
/// spread over `interval` bytes of redo: `bufsync`) over a cache of 768
/// buffers holding [`dirty_cache`]'s 96 dirty blocks (less than a quarter:
/// only checkpoints write), with the redo generated so far at `alloc`,
/// while `body` acts on the model's shared state.
fn with_postgres_writer(interval: u64, alloc: u64, body: impl FnOnce(&Instance<'_>)) {
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = datafile(dir.path());
    let files = [path];
    let shared = Shared::new(0.0);
    let inst = instance(&shared, dirty_cache_in(8 * BUFFERS), 1);
    inst.log.alloc.store(alloc, Release);
    let slot = SessionSeries::new();
    let fd = [file.as_raw_fd()];
    std::thread::scope(|s| {
        let (inst_r, files_r, slot_r, fd_r) = (&inst, &files, &slot, &fd);
        s.spawn(move || {
            let mut w = writer(0, 1, inst_r, files_r, slot_r, fd_r);
            w.marked = Some(Marked::with_capacity(inst_r.cache.buffers()));
            w.pace.spread = Some(interval);
            w.run();
        });
        let _stop = StopOnDrop(&inst);
        body(&inst);
    });
}

#[test]
fn a_postgres_checkpoint_writes_what_was_dirty_when_it_began_not_what_the_next_one_asks() {
    // PostgreSQL's checkpointer marks the buffers dirty when a checkpoint
    // begins and writes only those; a checkpoint asked for meanwhile (the
    // next log switch) begins after it. The sweep Oracle's flavor makes
    // writes whatever is below the latest target, so a target moving
    // mid-pass made it write the next checkpoint's buffers too.
    let begun = 10 * u64::from(BUFFERS) + 40;
    with_postgres_writer(1000, begun, |inst| {
        let cache = &inst.cache;
        let still_dirty = |blocks: std::ops::Range<u64>| {
            blocks
                .filter(|&b| cache.dirty_lsn(buffer_of(cache, b)).is_some())
                .count()
        };
        // Blocks 0..=48 changed below 500: the checkpoint's 49 buffers.
        inst.ckpt.target.store(500, Release);
        inst.dbwr_post.notify();
        // Its first batch (blocks 0..=3, in block order), then it waits for
        // redo: no redo is generated.
        eventually("the first batch is written", || still_dirty(0..4) == 0);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(still_dirty(4..49), 45, "a spread pass waits for redo");
        // The next checkpoint is asked for; then redo moves past the spread.
        inst.ckpt.target.store(5000, Release);
        inst.dbwr_post.notify();
        inst.log.alloc.store(begun + 900, Release);
        eventually("the first checkpoint completes", || {
            inst.ckpt.done.load(Acquire) >= 500
        });
        assert_eq!(still_dirty(0..49), 0, "every marked buffer written");
        // Block 49 (changed at 500) holds the mark; the next pass has
        // written at most its first batch of the rest, and then waits.
        assert_eq!(inst.ckpt.done.load(Acquire), 500);
        assert!(
            still_dirty(49..96) >= 47 - 4,
            "{} left",
            still_dirty(49..96)
        );
    });
}

#[test]
fn a_checkpoint_dbio_asks_for_is_immediate_as_postgresql_s_checkpoint_command() {
    // dbio's checkpoint at the window's open (`--window cycles:N`) is not
    // spread: PostgreSQL's `CHECKPOINT` writes at full speed. A spread pass
    // would wait here for redo that never comes.
    let at = 10 * u64::from(BUFFERS) + 40;
    with_postgres_writer(1 << 30, at, |inst| {
        inst.begin_checkpoint(at, true);
        eventually("the asked checkpoint completes", || {
            inst.ckpt.done.load(Acquire) >= at
        });
        assert_eq!(inst.cache.dirty(), 0);
    });
}
