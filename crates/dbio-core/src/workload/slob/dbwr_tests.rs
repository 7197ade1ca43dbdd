//! Tests of `dbwr.rs`: a real DB writer thread writing a real file.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering::Release};
use std::time::{Duration, Instant};

use super::*;
use crate::engine::SyncAfterWrite;
use crate::engine::psync::Psync;
use crate::samplers::series::SessionSeries;
use crate::workload::Shared;
use crate::workload::slob::cache::{Cache, Lookup};
use crate::workload::slob::instance::{Checkpoint, Log};

const BUFFERS: u32 = 96;
const BS: u32 = 4096;

/// Caches blocks 0..BUFFERS, every one valid, dirty at redo position
/// `10 * (block + 1)`, and unpinned.
fn dirty_cache() -> Cache {
    let cache = Cache::new(BUFFERS, BS);
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
    let path = dir.path().join("data");
    let file = std::fs::File::options()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    file.set_len(u64::from(BUFFERS * BS)).unwrap();
    let files = [path.clone()];
    let shared = Shared::new(0.0);
    let writers = 2;
    let inst = Instance {
        run: &shared,
        cache: dirty_cache(),
        locks: crate::workload::slob::locks::RowLocks::new(1, 1),
        log: Log::default(),
        ckpt: Checkpoint::new(writers),
        dbwr_post: Default::default(),
        free_wanted: AtomicBool::new(false),
        dbwr_done: Default::default(),
        sessions_done: AtomicBool::new(false),
        full_pages: None,
        live: crate::workload::slob::live::LiveSlot::many(64),
    };
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
                let mut w = DbWriter {
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
                };
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
    let inst = Instance {
        run: &shared,
        cache: Cache::new(2048, BS),
        locks: crate::workload::slob::locks::RowLocks::new(1, 1),
        log: Log::default(),
        ckpt: Checkpoint::new(1),
        dbwr_post: Default::default(),
        free_wanted: AtomicBool::new(false),
        dbwr_done: Default::default(),
        sessions_done: AtomicBool::new(false),
        full_pages: None,
        live: crate::workload::slob::live::LiveSlot::many(64),
    };
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
            let mut w = DbWriter {
                id: 0,
                thread: 0,
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
                rng: Rng::for_stream(1, 0),
                outlier_ns: u64::MAX,
                tally: Tally::default(),
                stats: SessionStats::new(),
                series: SeriesWriter::new(slot_r),
                pace: Default::default(),
                writeback: None,
            };
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
