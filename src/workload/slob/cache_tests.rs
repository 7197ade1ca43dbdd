//! Tests of `cache.rs`.

use super::*;

fn go() -> AtomicBool {
    AtomicBool::new(false)
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
    let mut bufs = Vec::new();
    for b in 0..4u64 {
        let Lookup::Claimed { buf } = c.lookup(b, &stop) else {
            panic!()
        };
        c.read_done(buf);
        bufs.push(buf);
    }
    // All four pinned: nothing can be evicted.
    assert_eq!(c.lookup(100, &stop), Lookup::NoFreeBuffer);
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
    assert!(matches!(c.lookup(3, &stop), Lookup::NoFreeBuffer));
    // A DB writer cleans one; then it can be replaced.
    assert_eq!(c.dirty_lsn(bufs[0]), Some(7));
    assert_eq!(c.begin_write(bufs[0]), Some(0));
    assert_eq!(c.begin_write(bufs[0]), None, "already being written");
    assert_eq!(c.dirty(), 2);
    assert!(
        matches!(c.lookup(3, &stop), Lookup::NoFreeBuffer),
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
    let c = Cache::new(64, 512);
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
                    match c.lookup(block, stop) {
                        Lookup::Claimed { buf } => {
                            c.read_done(buf);
                            assert_eq!(c.block_of(buf), Some(block));
                            c.unpin(buf);
                        }
                        Lookup::Hit { buf, .. } => {
                            assert_eq!(c.block_of(buf), Some(block));
                            c.unpin(buf);
                        }
                        Lookup::NoFreeBuffer | Lookup::Stopped => {}
                    }
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
