//! The io_uring engine's setups, each reading a stamped file, and the
//! kernel's refusals.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use super::*;

const BS: usize = 4096;
const BLOCKS: u64 = 64;

/// A file whose every 8-byte word holds its own offset, in tmpfs when
/// there is one (O_DIRECT works there), opened O_DIRECT.
fn stamped() -> (tempfile::TempDir, std::fs::File) {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let path = dir.path().join("stamped");
    let words: Vec<u8> = (0..BLOCKS * BS as u64 / 8)
        .flat_map(|w| (w * 8).to_le_bytes())
        .collect();
    std::fs::write(&path, words).unwrap();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .unwrap();
    (dir, f)
}

/// Reads 200 blocks through a ring set up as `opts`, 8 in flight, and
/// checks each holds its offsets.
fn reads_right_bytes(opts: UringOpts) {
    let (_dir, f) = stamped();
    let mut bufs = BufPool::new(BS, 8);
    let mut e = Uring::with_opts(&[f.as_raw_fd()], Some(&bufs), 8, SyncAfterWrite::None, opts)
        .unwrap_or_else(|err| panic!("{opts:?}: {err}"));
    let ios: Vec<Io> = (0..200u64)
        .map(|i| Io {
            kind: OpKind::Read,
            file: 0,
            offset: (i * 37 % BLOCKS) * BS as u64,
            len: BS as u32,
            buf: std::ptr::null_mut(),
            slot: 0,
        })
        .collect();
    let mut free: Vec<u32> = (0..8).collect();
    let mut at = [0u64; 8];
    let (mut next, mut inflight, mut checked) = (0, 0, 0);
    while checked < ios.len() {
        while next < ios.len() && inflight < 8 {
            let slot = free.pop().unwrap();
            let io = Io {
                slot,
                buf: bufs.ptr(slot as usize),
                ..ios[next]
            };
            at[slot as usize] = io.offset;
            // SAFETY: the slot's buffer is not touched until reaped.
            unsafe { e.queue(&io).unwrap() };
            next += 1;
            inflight += 1;
        }
        let mut done = Vec::new();
        e.reap(1, |c| done.push(c)).unwrap();
        for c in done {
            assert_eq!(c.res, BS as i32, "{opts:?}");
            let off = at[c.slot as usize];
            let data = bufs.slot_mut(c.slot as usize, BS);
            for (w, word) in data.chunks_exact(8).enumerate() {
                let v = u64::from_le_bytes(word.try_into().unwrap());
                assert_eq!(v, off + w as u64 * 8, "{opts:?}: block at {off}");
            }
            data.fill(0xAA); // a stale buffer must not pass the next check
            free.push(c.slot);
            inflight -= 1;
            checked += 1;
        }
    }
}

#[test]
fn every_setup_reads_the_right_bytes() {
    let d = UringOpts::default();
    for opts in [
        d,
        UringOpts {
            fixedbufs: false,
            registerfiles: false,
            ..d
        },
        UringOpts {
            register_ring: true,
            ..d
        },
        UringOpts {
            taskrun: Taskrun::Coop,
            ..d
        },
        UringOpts {
            taskrun: Taskrun::None,
            ..d
        },
        UringOpts {
            taskrun: Taskrun::Defer,
            ..d
        },
        UringOpts {
            submit: Submit::Each,
            ..d
        },
        UringOpts {
            submit: Submit::Batch,
            ..d
        },
        UringOpts {
            submit: Submit::Each,
            taskrun: Taskrun::None,
            ..d
        },
    ] {
        reads_right_bytes(opts);
    }
}

#[test]
fn auto_submits_one_by_one_only_at_middle_depths() {
    let each: Vec<u32> = [1, 2, 8, 32, 33, 128]
        .into_iter()
        .filter(|&d| Submit::Auto.each_at(d))
        .collect();
    assert_eq!(each, [2, 8, 32]);
    assert!(Submit::Each.each_at(1) && !Submit::Batch.each_at(8));
}

/// With `each`, a request is in the kernel as soon as it is queued: its
/// completion can be reaped with `min` 0 (no wait), which `batch` would
/// only submit.
#[test]
fn each_hands_a_request_over_when_it_is_queued() {
    let (_dir, f) = stamped();
    let bufs = BufPool::new(BS, 2);
    let opts = UringOpts {
        submit: Submit::Each,
        ..UringOpts::default()
    };
    let mut e =
        Uring::with_opts(&[f.as_raw_fd()], Some(&bufs), 2, SyncAfterWrite::None, opts).unwrap();
    let io = Io {
        kind: OpKind::Read,
        file: 0,
        offset: 3 * BS as u64,
        len: BS as u32,
        buf: bufs.ptr(0),
        slot: 0,
    };
    // SAFETY: the buffer is not touched until reaped.
    unsafe { e.queue(&io).unwrap() };
    assert_eq!(e.queued, 0, "each: nothing left queued after queue()");
    let mut got = 0;
    let start = std::time::Instant::now();
    while got == 0 && start.elapsed() < std::time::Duration::from_secs(10) {
        got += e.reap(0, |c| assert_eq!(c.res, BS as i32)).unwrap();
    }
    assert_eq!(got, 1);

    let opts = UringOpts {
        submit: Submit::Batch,
        ..UringOpts::default()
    };
    let mut e =
        Uring::with_opts(&[f.as_raw_fd()], Some(&bufs), 2, SyncAfterWrite::None, opts).unwrap();
    // SAFETY: as above.
    unsafe { e.queue(&io).unwrap() };
    assert_eq!(e.queued, 1, "batch: queued until the session waits");
    assert_eq!(e.reap(1, |c| assert_eq!(c.res, BS as i32)).unwrap(), 1);
}

#[test]
fn sqpoll_run_completes_with_the_right_bytes() {
    for idle_ms in [1, 1000] {
        reads_right_bytes(UringOpts {
            sqthread_poll_ms: Some(idle_ms),
            register_ring: true,
            ..UringOpts::default()
        });
    }
}

#[test]
fn a_refused_setting_is_one_line_naming_it() {
    let (_dir, f) = stamped();
    // The kernel refuses DEFER_TASKRUN with SQPOLL (EINVAL).
    let opts = UringOpts {
        sqthread_poll_ms: Some(10),
        taskrun: Taskrun::Defer,
        ..UringOpts::default()
    };
    let err = Uring::with_opts(&[f.as_raw_fd()], None, 4, SyncAfterWrite::None, opts)
        .err()
        .expect("DEFER_TASKRUN with SQPOLL is refused")
        .to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    for needle in ["--sqthread-poll 10", "--uring-taskrun defer", "auto"] {
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
    // Registering a file that is not open is refused (-1 would be a
    // sparse slot, allowed).
    let err = Uring::with_opts(
        &[999_999],
        None,
        4,
        SyncAfterWrite::None,
        UringOpts::default(),
    )
    .err()
    .expect("a closed fd cannot be registered")
    .to_string();
    assert!(err.contains("--registerfiles false"), "{err}");
}

/// `reap_within` waits no longer than asked when nothing completes, and
/// returns a completion that comes (an open-loop session's wait).
#[test]
fn reap_within_gives_up_at_its_timeout_and_returns_a_completion() {
    let (_dir, f) = stamped();
    let bufs = BufPool::new(BS, 2);
    let mut e = Uring::with_opts(
        &[f.as_raw_fd()],
        Some(&bufs),
        2,
        SyncAfterWrite::None,
        UringOpts::default(),
    )
    .unwrap();
    let t = crate::measure::clock::now_ns();
    let n = e
        .reap_within(5_000_000, |_| panic!("nothing was queued"))
        .unwrap();
    let waited = crate::measure::clock::now_ns() - t;
    assert_eq!(n, 0);
    assert!(
        (4_000_000..200_000_000).contains(&waited),
        "waited {waited} ns"
    );
    let io = Io {
        kind: OpKind::Read,
        file: 0,
        offset: 0,
        len: BS as u32,
        buf: bufs.ptr(0),
        slot: 0,
    };
    // SAFETY: the buffer outlives the request, reaped below.
    unsafe { e.queue(&io) }.unwrap();
    let mut got = 0;
    let until = crate::measure::clock::now_ns() + 1_000_000_000;
    while got == 0 && crate::measure::clock::now_ns() < until {
        got += e
            .reap_within(100_000_000, |c| assert_eq!(c.res, BS as i32))
            .unwrap();
    }
    assert_eq!(got, 1);
}
