//! Tests of `cache.rs`.

use super::*;

fn go() -> AtomicBool {
    AtomicBool::new(false)
}

/// Blocks 0..n read in, each still pinned; their buffers.
fn read_in(c: &Cache, n: u64) -> Vec<u32> {
    let stop = go();
    (0..n)
        .map(|b| {
            let Lookup::Claimed { buf } = c.lookup(b, &stop) else {
                panic!("block {b} must miss")
            };
            c.read_done(buf);
            buf
        })
        .collect()
}

#[test]
fn miss_then_hit() {
    let c = Cache::new(8, 8192);
    let stop = go();
    let Lookup::Claimed { buf } = c.lookup(42, &stop) else {
        panic!("first lookup must miss")
    };
    c.read_done(buf);
    c.unpin(buf);
    assert_eq!(c.lookup(42, &stop), Lookup::Hit { buf, waited_ns: 0 });
    c.unpin(buf);
    assert_eq!(c.block_of(buf), Some(42));
}

#[test]
fn eviction_skips_pinned_and_dirty_buffers() {
    let c = Cache::new(4, 512);
    let stop = go();
    let bufs = read_in(&c, 4);
    // All four pinned: nothing can be evicted.
    assert!(matches!(c.lookup(100, &stop), Lookup::NoFreeBuffer(_)));
    // Unpin all, dirty three: only the clean one can go.
    for (i, &b) in bufs.iter().enumerate() {
        if i < 3 {
            assert!(c.mark_dirty(b, 7));
            assert!(!c.mark_dirty(b, 8), "already dirty");
        }
        c.unpin(b);
    }
    assert_eq!(c.dirty(), 3);
    let Lookup::Claimed { buf } = c.lookup(100, &stop) else {
        panic!("the clean buffer is a victim")
    };
    assert_eq!(buf, bufs[3]);
    c.read_done(buf); // stays pinned: now nothing is free
    assert!(matches!(c.lookup(3, &stop), Lookup::NoFreeBuffer(_)));
    // A DB writer cleans one; then it can be replaced.
    assert_eq!(c.dirty_lsn(bufs[0]), Some(7));
    assert_eq!(c.begin_write(bufs[0]), Some(0));
    assert_eq!(c.begin_write(bufs[0]), None, "already being written");
    assert_eq!(c.dirty(), 2);
    assert!(
        matches!(c.lookup(3, &stop), Lookup::NoFreeBuffer(_)),
        "busy while written"
    );
    c.end_write(bufs[0]);
    assert!(matches!(c.lookup(3, &stop), Lookup::Claimed { .. }));
}

#[test]
fn a_second_session_waits_for_a_read_in_progress() {
    let c = Cache::new(8, 512);
    let stop = go();
    let Lookup::Claimed { buf } = c.lookup(5, &stop) else {
        panic!()
    };
    std::thread::scope(|s| {
        let h = s.spawn(|| c.lookup(5, &stop));
        std::thread::sleep(Duration::from_millis(30));
        c.read_done(buf);
        match h.join().unwrap() {
            Lookup::Hit { buf: b, waited_ns } => {
                assert_eq!(b, buf);
                assert!(waited_ns >= 10_000_000, "waited {waited_ns} ns");
            }
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn concurrent_sessions_never_map_a_block_twice() {
    never_twice(Replacement::CleanOnly);
}

/// The same with PostgreSQL's clock: sessions change a block now and then,
/// and write the dirty victims they are given before reusing them.
#[test]
fn concurrent_sessions_with_dirty_victims_never_map_a_block_twice() {
    never_twice(Replacement::DirtyToo);
}

fn never_twice(r: Replacement) {
    let c = Cache::new(64, 512).with_replacement(r);
    let stop = go();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let c = &c;
            let stop = &stop;
            s.spawn(move || {
                let mut x = t;
                for _ in 0..20_000 {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let block = (x >> 33) % 200;
                    let buf = match c.lookup(block, stop) {
                        Lookup::Claimed { buf } => {
                            c.read_done(buf);
                            buf
                        }
                        Lookup::Hit { buf, .. } => buf,
                        Lookup::DirtyVictim { buf, block: old } => {
                            assert_eq!(r, Replacement::DirtyToo);
                            assert_eq!(c.block_of(buf), Some(old));
                            match c.reuse_written(buf, block) {
                                Some(buf) => {
                                    c.read_done(buf);
                                    buf
                                }
                                None => continue,
                            }
                        }
                        Lookup::NoFreeBuffer(_) | Lookup::Stopped => continue,
                    };
                    assert_eq!(c.block_of(buf), Some(block));
                    if x & 0x700 == 0 {
                        c.mark_dirty(buf, x);
                    }
                    c.unpin(buf);
                }
            });
        }
    });
    let mut seen = std::collections::HashSet::new();
    for b in 0..64 {
        if let Some(block) = c.block_of(b) {
            assert!(seen.insert(block), "block {block} in two buffers");
        }
    }
}

/// A cache of `n` buffers holding blocks 0..n, each valid, dirty and unpinned.
fn all_dirty(n: u32) -> Cache {
    let c = Cache::new(n, 512);
    let stop = go();
    let mut block = 0u64;
    let mut filled = 0;
    // Blocks go to the working set their number hashes to: keep missing
    // until every buffer holds one.
    while filled < n {
        if let Lookup::Claimed { buf } = c.lookup(block, &stop) {
            c.read_done(buf);
            assert!(c.mark_dirty(buf, 1));
            c.unpin(buf);
            filled += 1;
        }
        block += 1;
        assert!(block < 100 * u64::from(n), "the cache never filled");
    }
    assert_eq!(c.dirty(), u64::from(n));
    c
}

/// Buffers the clock hands of all working sets have moved over, in total.
fn hands(c: &Cache) -> u64 {
    c.sets.iter().map(|s| s.hand.load(Relaxed)).sum()
}

#[test]
fn working_sets_split_the_cache_and_bound_a_miss_to_40_pct_of_one() {
    for n in [4u32, 96, 1000, 4096, 10_000, 65_536] {
        let c = Cache::new(n, 512);
        let mut covered = 0;
        for s in 0..c.sets() {
            let (lo, len, _) = c.set_span(s);
            assert_eq!(lo, covered, "sets are contiguous");
            covered += len;
            for b in lo..lo + len {
                assert_eq!(c.set_of(b), s, "buffer {b} of {n}");
            }
            let limit = c.sets[s].limit;
            assert!(
                limit <= (len * SCAN_PCT / 100).max(1) + SWEEP,
                "{n}: {limit} of {len}"
            );
        }
        assert_eq!(covered, n);
    }
    // A larger cache has more working sets, not a longer search.
    let small = Cache::new(8192, 512).scan_limit(7);
    let large = Cache::new(1 << 20, 512).scan_limit(7);
    assert!(large <= small + SWEEP, "{large} vs {small}");
}

#[test]
fn a_miss_in_a_dirty_cache_looks_at_most_at_its_bound_and_asks_the_writers() {
    let c = all_dirty(4096);
    let stop = go();
    for block in 10_000..10_050u64 {
        let set = c.set_for(block);
        let wanted = c.set_wanted(set);
        let before = hands(&c);
        assert!(matches!(c.lookup(block, &stop), Lookup::NoFreeBuffer(_)));
        let looked = hands(&c) - before;
        assert!(looked > 0, "the miss looked");
        assert!(
            looked <= u64::from(c.scan_limit(block)),
            "looked at {looked}, bound {}",
            c.scan_limit(block)
        );
        assert!(looked < 4096 * u64::from(SCAN_PCT) / 100);
        assert_eq!(c.set_wanted(set), wanted + 1, "the writers are asked");
    }
}

#[test]
fn a_miss_among_pinned_buffers_is_bounded_too() {
    let c = Cache::new(2048, 512);
    let stop = go();
    let mut block = 0u64;
    let mut pinned = 0;
    while pinned < 2048 {
        if let Lookup::Claimed { buf } = c.lookup(block, &stop) {
            c.read_done(buf); // stays pinned
            pinned += 1;
        }
        block += 1;
    }
    let before = hands(&c);
    assert!(matches!(c.lookup(1 << 40, &stop), Lookup::NoFreeBuffer(_)));
    assert!(hands(&c) - before <= u64::from(c.scan_limit(1 << 40)));
}

#[test]
fn clean_buffers_all_recently_used_are_still_taken() {
    // Second chance for every buffer in reach: the miss takes one of them
    // rather than waiting for a DB writer that has nothing to write.
    let c = Cache::new(4096, 512);
    let stop = go();
    let mut block = 0u64;
    let mut filled = 0;
    while filled < 4096 {
        if let Lookup::Claimed { buf } = c.lookup(block, &stop) {
            c.read_done(buf);
            c.unpin(buf);
            filled += 1;
        }
        block += 1;
    }
    for b in 0..4096 {
        c.state[b].fetch_or(USED, Relaxed);
    }
    let Lookup::Claimed { buf } = c.lookup(1 << 40, &stop) else {
        panic!("a clean, unpinned buffer was in reach")
    };
    c.read_done(buf);
    c.unpin(buf);
}

#[test]
fn a_free_buffer_wait_ends_when_a_writer_cleans_the_set() {
    let c = all_dirty(2048);
    let stop = go();
    let block = 1 << 40;
    let Lookup::NoFreeBuffer(w) = c.lookup(block, &stop) else {
        panic!("every buffer is dirty")
    };
    // Nobody cleans: the wait times out.
    let t = std::time::Instant::now();
    c.wait_free(w, Duration::from_millis(30));
    assert!(t.elapsed() >= Duration::from_millis(20));
    // A writer cleans buffers of that set: the sleeper wakes long before
    // its timeout, and the miss then finds a buffer.
    let (lo, len, _) = c.set_span(c.set_for(block));
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let t = std::time::Instant::now();
            c.wait_free(w, Duration::from_secs(20));
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(50));
        let bufs: Vec<u32> = (lo..lo + len).collect();
        for &b in &bufs {
            assert!(c.begin_write(b).is_some());
            c.end_write(b);
        }
        c.cleaned(&bufs);
        assert!(h.join().unwrap() < Duration::from_secs(10), "woken");
    });
    assert!(matches!(c.lookup(block, &stop), Lookup::Claimed { .. }));
}

/// A DB writer can clear a buffer's DIRTY bit and take it off its set's
/// count before the session that set the bit has counted it: the count
/// reads -1 for a moment, which is none dirty, not 2^64 - 1 (in a debug
/// build, `set_pressure` overflowed on it).
#[test]
fn a_dirty_count_caught_between_bit_and_count_reads_as_none() {
    assert_eq!(super::dirty_count(0u64.wrapping_sub(1)), 0);
    assert_eq!(super::dirty_count(0), 0);
    assert_eq!(super::dirty_count(7), 7);
}

#[test]
fn a_session_takes_an_unpinned_dirty_buffer_to_write_itself() {
    let c = Cache::new(4, 512);
    let stop = go();
    let bufs = read_in(&c, 4);
    for (b, &buf) in bufs.iter().enumerate() {
        assert!(c.mark_dirty(buf, b as u64));
    }
    // Every buffer dirty and pinned: a miss finds none, nor a dirty one to write.
    let Lookup::NoFreeBuffer(w) = c.lookup(100, &stop) else {
        panic!("all dirty and pinned")
    };
    assert_eq!(c.take_dirty(w), None, "pinned buffers are not written");
    // One unpinned: it is taken for writing (clean, WRITING), once.
    c.unpin(bufs[2]);
    assert_eq!(c.take_dirty(w), Some((bufs[2], 2)));
    assert_eq!(c.take_dirty(w), None, "being written already");
    assert_eq!(c.dirty(), 3);
    assert!(matches!(c.lookup(100, &stop), Lookup::NoFreeBuffer(_)));
    // Written: the next miss reuses it.
    c.end_write(bufs[2]);
    c.cleaned(&[bufs[2]]);
    let Lookup::Claimed { buf } = c.lookup(100, &stop) else {
        panic!("the written buffer is free")
    };
    assert_eq!(buf, bufs[2]);
    assert_eq!(c.block_of(buf), Some(100));
}

/// Blocks 0..4 read into a 4-buffer cache (used), unpinned, all dirty.
fn dirty_four(c: &Cache) -> Vec<u32> {
    let bufs = read_in(c, 4);
    for (b, &buf) in bufs.iter().enumerate() {
        assert!(c.mark_dirty(buf, b as u64));
        c.unpin(buf);
    }
    bufs
}

#[test]
fn postgres_clock_takes_a_dirty_victim_for_the_session_to_write() {
    let c = Cache::new(4, 512).with_replacement(Replacement::DirtyToo);
    let stop = go();
    let bufs = dirty_four(&c);
    // The miss's sweep gives each buffer its second chance (read in: used),
    // then takes the first it meets again as the victim, pinned and
    // WRITING: no longer dirty, not written by a DB writer meanwhile.
    let Lookup::DirtyVictim { buf, block } = c.lookup(100, &stop) else {
        panic!("a dirty buffer is a victim")
    };
    assert_eq!((buf, block), (bufs[0], 0));
    assert_eq!(c.dirty(), 3);
    assert_eq!(c.begin_write(buf), None, "the session writes it");
    // Written and unused meanwhile: it holds block 100, to be read in.
    assert_eq!(c.reuse_written(buf, 100), Some(buf));
    assert_eq!(c.block_of(buf), Some(100));
    c.read_done(buf);
    c.unpin(buf);
    assert_eq!(c.lookup(100, &stop), Lookup::Hit { buf, waited_ns: 0 });
    c.unpin(buf);
    // The old block is gone from the cache: its lookup is a miss.
    let l = c.lookup(block, &stop);
    assert!(!matches!(l, Lookup::Hit { .. }), "{l:?}");
}

#[test]
fn a_dirty_victim_used_while_written_stays_with_its_block() {
    let c = Cache::new(4, 512).with_replacement(Replacement::DirtyToo);
    let stop = go();
    dirty_four(&c);
    let Lookup::DirtyVictim { buf, block } = c.lookup(100, &stop) else {
        panic!("a dirty buffer is a victim")
    };
    // Another session hits the old block and changes it while it is written.
    assert_eq!(c.lookup(block, &stop), Lookup::Hit { buf, waited_ns: 0 });
    assert!(c.mark_dirty(buf, 9));
    c.unpin(buf);
    assert_eq!(c.reuse_written(buf, 100), None, "used: look again");
    assert_eq!(c.block_of(buf), Some(block));
    assert_eq!(c.pins(buf), 0);
    assert_eq!(c.dirty(), 4, "dirty again, to be written again");
    // A failed write leaves the victim dirty, with its block.
    let Lookup::DirtyVictim { buf, block } = c.lookup(100, &stop) else {
        panic!("another dirty victim")
    };
    c.victim_write_failed(buf);
    assert_eq!(
        (c.block_of(buf), c.pins(buf), c.dirty()),
        (Some(block), 0, 4)
    );
}

#[test]
fn oracles_clock_never_takes_a_dirty_buffer() {
    let c = Cache::new(4, 512);
    let stop = go();
    dirty_four(&c);
    for _ in 0..3 {
        assert!(matches!(c.lookup(100, &stop), Lookup::NoFreeBuffer(_)));
    }
    assert_eq!(c.dirty(), 4);
}
