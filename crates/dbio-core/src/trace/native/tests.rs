use std::path::Path;

use flate2::Compression;
use flate2::write::ZlibEncoder;

use super::*;
use crate::trace::tests::sample_entries;
use crate::trace::{Comm, Flags, Op};

fn write(path: &Path, entries: &[Entry]) {
    let mut w = Writer::create(path).unwrap();
    for e in entries {
        w.write(e).unwrap();
    }
    w.finish().unwrap();
}

fn read(path: &Path) -> Result<Vec<Entry>, TraceError> {
    Reader::open(path)?.collect()
}

/// `entries` compressed as `flags` says behind a header of `version`.
fn file_of(path: &Path, version: u16, flags: u16, entries: &[u8]) {
    let mut bytes = MAGIC.to_vec();
    bytes.extend(version.to_le_bytes());
    bytes.extend(flags.to_le_bytes());
    let bytes = if flags == ZLIB {
        let mut z = ZlibEncoder::new(bytes, Compression::fast());
        z.write_all(entries).unwrap();
        z.finish().unwrap()
    } else {
        let mut z = FrameEncoder::new(bytes);
        z.write_all(entries).unwrap();
        z.finish().unwrap()
    };
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn version_2_gives_back_every_field_of_every_entry() {
    let d = tempfile::tempdir().unwrap();
    let (p, again) = (d.path().join("t"), d.path().join("again"));
    let entries = sample_entries();
    write(&p, &entries);
    assert_eq!(
        &std::fs::read(&p).unwrap()[8..12],
        &[2, 0, 2, 0],
        "version 2, LZ4"
    );
    let back = read(&p).unwrap();
    assert_eq!(back.len(), entries.len());
    for (i, (a, b)) in entries.iter().zip(&back).enumerate() {
        assert_eq!(a, b, "entry {i}");
    }
    // What was read, written again, is the same file byte for byte.
    write(&again, &back);
    assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&again).unwrap());
}

/// `testdata/v1.dbtrace` was written by session 14's writer (version 1)
/// from `sample_entries()`, as traces kept in stores before were.
#[test]
fn a_version_1_trace_still_reads_every_field() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/trace/testdata/v1.dbtrace");
    assert_eq!(&std::fs::read(&p).unwrap()[8..10], &1u16.to_le_bytes());
    let back = read(&p).unwrap();
    let want = sample_entries();
    assert_eq!(back.len(), want.len());
    for (i, (a, b)) in want.iter().zip(&back).enumerate() {
        assert_eq!(a, b, "entry {i}");
    }
}

#[test]
fn version_2_takes_a_third_of_version_1_before_compression() {
    // A capture's requests: 4 KiB random reads over 256 MiB from two
    // threads, about 27 µs apart, completed 40-100 µs later.
    let mut x: u64 = 88172645463325252;
    let mut enc = compact::Encoder::default();
    let mut b = Vec::new();
    let mut t = 0;
    for i in 0..10_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 20_000 + x % 15_000;
        let r = Request {
            issue_ns: t,
            complete_ns: Some(t + 40_000 + (x >> 20) % 60_000),
            device: 0,
            offset: (x >> 32) % 65536 * 4096,
            len: 4096,
            op: Op::Read,
            flags: Flags::SYNC,
            pid: Some(4000),
            tid: Some(4001 + i % 2),
            comm: Comm::new(b"dbio-session"),
        };
        enc.request(&mut b, &r);
    }
    let per_request = b.len() as f64 / 10_000.0;
    // Version 1: 45 bytes and the name (12 here) for each.
    assert!(per_request < 57.0 / 3.0, "{per_request} bytes a request");
}

#[test]
fn a_garbled_version_2_entry_is_named_with_its_place() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t");
    let device = {
        let mut b = Vec::new();
        encode_device(
            &mut b,
            &Device {
                index: 0,
                name: "/dev/x".into(),
                number: None,
            },
        );
        b
    };
    let one = Request {
        issue_ns: 10,
        complete_ns: Some(20),
        device: 0,
        offset: 4096,
        len: 4096,
        op: Op::Read,
        flags: Flags::SYNC,
        pid: Some(1),
        tid: Some(2),
        comm: Comm::new(b"db"),
    };
    let mut good = device.clone();
    compact::Encoder::default().request(&mut good, &one);
    let thread_len = 1 + 1 + 1 + 1 + 1 + 2; // tag, slot, pid, tid, name length, name
    let cases: Vec<(Vec<u8>, &str)> = vec![
        // The request without its thread entry.
        (
            [&device[..], &good[device.len() + thread_len..]].concat(),
            "after request 0: garbled: thread slot 2, never declared",
        ),
        // A varint that never ends.
        (
            [&device[..], &[compact::TAG_THREAD], &[0xFF; 11]].concat(),
            "number longer than 64 bits",
        ),
        // A thread slot past the table.
        (
            [&device[..], &[compact::TAG_THREAD, 0x80, 0x08, 0, 0, 0]].concat(),
            "garbled: thread slot 1024",
        ),
        // A version 1 request in a version 2 file.
        (
            [&device[..], &[v1::TAG_REQUEST]].concat(),
            "unknown entry tag 0x02",
        ),
        // Cut inside the request.
        (
            good[..good.len() - 2].to_vec(),
            "truncated: the file ends inside an entry",
        ),
        // The end marker says another count.
        (
            [&good[..], &[TAG_END], &5u64.to_le_bytes()].concat(),
            "after request 1: garbled: its end says 5 requests, it holds 1",
        ),
    ];
    for (bytes, want) in cases {
        let _ = std::fs::remove_file(&p);
        file_of(&p, 2, LZ4, &bytes);
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(p.to_str().unwrap()) && e.contains(want),
            "{e} lacks {want}"
        );
    }
    let whole = [&good[..], &[TAG_END], &1u64.to_le_bytes()].concat();
    for flags in [LZ4, ZLIB] {
        let _ = std::fs::remove_file(&p);
        file_of(&p, 2, flags, &whole);
        assert_eq!(read(&p).unwrap()[1], Entry::Request(one), "flags {flags}");
    }
    let _ = std::fs::remove_file(&p);
    file_of(&p, 2, 4, &whole);
    let e = read(&p).unwrap_err().to_string();
    assert!(e.contains("byte 10: dbio trace flags 0x4"), "{e}");
}
