use std::io::Write;
use std::path::Path;

use super::pair::Pairer;
use super::*;

fn req(issue_ns: u64, device: u16, offset: u64, op: Op) -> Request {
    Request {
        issue_ns,
        complete_ns: Some(issue_ns + 100),
        device,
        offset,
        len: 4096,
        op,
        flags: Flags::SYNC,
        pid: Some(7),
        tid: Some(8),
        comm: Comm::new(b"postgres"),
    }
}

fn dev(index: u16, name: &str) -> Entry {
    Entry::Device(Device {
        index,
        name: name.into(),
        number: Some((7, u32::from(index))),
    })
}

fn write_native(path: &Path, entries: &[Entry]) {
    let mut w = native::Writer::create(path).unwrap();
    for e in entries {
        w.write(e).unwrap();
    }
    w.finish().unwrap();
}

fn read_all(path: &Path) -> Result<Vec<Entry>, TraceError> {
    open(&[path.to_path_buf()])?.collect()
}

#[test]
fn native_round_trips_every_field() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t");
    let mut r = req(5, 1, 1 << 40, Op::Discard);
    r.complete_ns = None;
    r.pid = None;
    r.comm = Comm::default();
    let entries = vec![
        dev(0, "/dev/loop0"),
        dev(1, "/dev/loop1"),
        Entry::Request(req(1, 0, 8192, Op::Write)),
        Entry::Request(r),
    ];
    write_native(&p, &entries);
    assert_eq!(read_all(&p).unwrap(), entries);
    assert!(
        native::Writer::create(&p).is_err(),
        "never over an existing file"
    );
}

#[test]
fn a_truncated_or_garbled_native_trace_is_named() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t");
    let mut entries = vec![dev(0, "/dev/sda")];
    entries.extend((0..5000).map(|i| Entry::Request(req(i, 0, i * 4096, Op::Read))));
    write_native(&p, &entries);
    let bytes = std::fs::read(&p).unwrap();
    let cut = d.path().join("cut");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_all(&cut).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}: after request ", cut.display())) && e.contains("truncated"),
        "{e}"
    );
    let mut bad = bytes.clone();
    bad[8] = 9; // version
    std::fs::write(&cut, &bad).unwrap();
    let e = read_all(&cut).unwrap_err().to_string();
    assert!(e.contains("byte 8") && e.contains("version 9"), "{e}");
    let mut bad = bytes;
    let mid = bad.len() / 2;
    bad[mid] ^= 0xFF;
    std::fs::write(&cut, &bad).unwrap();
    assert!(
        read_all(&cut).is_err(),
        "a flipped byte in the compressed stream is found"
    );
}

#[test]
fn the_pairer_gives_requests_in_issue_order_whatever_the_completion_order() {
    let mut p = Pairer::default();
    let mut out = Vec::new();
    let r = |t, off| Request {
        complete_ns: None,
        ..req(t, 0, off, Op::Read)
    };
    p.issue(10, r(1, 10), &mut |x| out.push(x));
    p.issue(20, r(2, 20), &mut |x| out.push(x));
    p.complete(0, 20, 5, &mut |x| out.push(x));
    assert!(out.is_empty(), "the first still waits");
    p.complete(0, 10, 9, &mut |x| out.push(x));
    assert_eq!(
        out.iter()
            .map(|x| (x.offset, x.complete_ns))
            .collect::<Vec<_>>(),
        [(10, Some(9)), (20, Some(5))]
    );
    p.complete(0, 99, 9, &mut |x| out.push(x));
    assert_eq!(p.unmatched_completions, 1);
    // A request never completed is given up on after MAX_WAIT_NS.
    p.issue(30, r(10, 30), &mut |x| out.push(x));
    p.issue(40, r(10 + pair::MAX_WAIT_NS + 1, 40), &mut |x| out.push(x));
    assert_eq!(out.len(), 3);
    assert_eq!(out[2].complete_ns, None);
    p.finish(&mut |x| out.push(x));
    assert_eq!(out.len(), 4);
}

#[test]
fn requests_at_one_sector_are_completed_oldest_first() {
    let mut p = Pairer::default();
    let mut out = Vec::new();
    let r = |t| Request {
        complete_ns: None,
        ..req(t, 0, 8, Op::Write)
    };
    for t in [1, 2, 3] {
        p.issue(8, r(t), &mut |x| out.push(x));
    }
    for done in [10, 20, 30] {
        p.complete(0, 8, done, &mut |x| out.push(x));
    }
    assert_eq!(
        out.iter()
            .map(|x| (x.issue_ns, x.complete_ns))
            .collect::<Vec<_>>(),
        [(1, Some(10)), (2, Some(20)), (3, Some(30))]
    );
    p.complete(0, 8, 40, &mut |x| out.push(x));
    assert_eq!(p.unmatched_completions, 1, "none left in flight there");
    // One given up on (never completed) is skipped by the next completion.
    p.issue(8, r(100), &mut |x| out.push(x));
    p.issue(16, r(101 + pair::MAX_WAIT_NS), &mut |x| out.push(x));
    p.issue(8, r(102 + pair::MAX_WAIT_NS), &mut |x| out.push(x));
    assert_eq!(out.len(), 4, "the first at 8 given up on");
    p.complete(0, 16, 103 + pair::MAX_WAIT_NS, &mut |x| out.push(x));
    p.complete(0, 8, 104 + pair::MAX_WAIT_NS, &mut |x| out.push(x));
    assert_eq!(out.len(), 6);
    assert_eq!(out[5].issue_ns, 102 + pair::MAX_WAIT_NS);
    assert_eq!(out[5].complete_ns, Some(104 + pair::MAX_WAIT_NS));
    assert_eq!(p.unmatched_completions, 1);
}

#[test]
fn an_iolog_v2_with_waits_and_a_v3_read_into_requests() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("v2");
    std::fs::write(&p, "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 1500 0\n/f write 8192 512\n/f sync 0 0\n/f trim 4096 4096\n/f close\n").unwrap();
    let e = read_all(&p).unwrap();
    let reqs: Vec<_> = e
        .iter()
        .filter_map(|e| match e {
            Entry::Request(r) => Some((r.issue_ns, r.op, r.offset, r.len)),
            _ => None,
        })
        .collect();
    assert_eq!(
        reqs,
        [
            (0, Op::Read, 0, 4096),
            (1_500_000, Op::Write, 8192, 512),
            (1_500_000, Op::Flush, 0, 0),
            (1_500_000, Op::Discard, 4096, 4096)
        ]
    );
    let p3 = d.path().join("v3");
    std::fs::write(
        &p3,
        "fio version 3 iolog\n0 /f add\n1 /f open\n7 /f write 4096 4096\n",
    )
    .unwrap();
    let e = read_all(&p3).unwrap();
    assert!(matches!(
        e[1],
        Entry::Request(Request {
            issue_ns: 7_000,
            op: Op::Write,
            ..
        })
    ));
}

#[test]
fn a_bad_iolog_line_is_named_by_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        (
            "fio version 3 iolog\n0 /f add\n5 /f read 10\n",
            "line 3: no length",
        ),
        (
            "fio version 3 iolog\n0 /f add\nx /f read 0 1\n",
            "line 3: timestamp (µs) \"x\" is not a whole number",
        ),
        (
            "fio version 3 iolog\n0 /f add\n0 /f wait 100 0\n",
            "line 3: unknown action \"wait\"",
        ),
        (
            "fio version 2 iolog\n/g read 0 1\n",
            "line 2: \"/g\" is used before its `add` line",
        ),
        (
            "fio version 2 iolog\n/f add\n/f frob 0 1\n",
            "line 3: unknown action \"frob\"",
        ),
        ("fio version 9 iolog\n", "line 1: not a fio iolog v2 or v3"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = d.path().join(format!("bad{i}"));
        std::fs::write(&p, text).unwrap();
        let e = read_all(&p).unwrap_err().to_string();
        assert_eq!(
            e.split_once(": ").map(|x| x.0),
            Some(p.to_str().unwrap()),
            "{e}"
        );
        assert!(e.contains(want), "{e} lacks {want}");
    }
}

#[test]
fn iolog_v3_written_reads_back() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("out");
    let mut w = iolog::Writer::create(&p).unwrap();
    for e in [
        dev(0, "/dev/loop0"),
        Entry::Request(req(2_000_000, 0, 4096, Op::Write)),
        Entry::Request(req(3_500_000, 0, 0, Op::Flush)),
    ] {
        w.write(&e).unwrap();
    }
    w.finish().unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        text,
        "fio version 3 iolog\n0 /dev/loop0 add\n0 /dev/loop0 open\n2000 /dev/loop0 write 4096 4096\n3500 /dev/loop0 sync 0 4096\n3500 /dev/loop0 close\n"
    );
    let back = read_all(&p).unwrap();
    assert_eq!(back.len(), 3);
    let mut w = iolog::Writer::create(&d.path().join("sp")).unwrap();
    assert!(
        w.write(&dev(0, "a b")).is_err(),
        "a name fio would split is refused"
    );
}

#[test]
fn an_unknown_file_is_refused_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x");
    std::fs::File::create(&p)
        .unwrap()
        .write_all(b"hello")
        .unwrap();
    let e = open(std::slice::from_ref(&p)).err().unwrap().to_string();
    assert!(
        e.starts_with(p.to_str().unwrap()) && e.contains("not a trace"),
        "{e}"
    );
}

/// A trace that holds every kind of value a field can take: devices with
/// and without numbers, every operation and flag set, requests with and
/// without completion, process, thread and name, extreme offsets and
/// lengths, times going backwards (imported traces may), and a run of
/// ordinary requests from a few threads (deterministic, no randomness).
pub(crate) fn sample_entries() -> Vec<Entry> {
    let mut e = vec![
        Entry::Device(Device {
            index: 0,
            name: "/dev/loop7".into(),
            number: Some((7, 7)),
        }),
        Entry::Device(Device {
            index: 1,
            name: "data file".into(),
            number: None,
        }),
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let comms: [&[u8]; 4] = [b"postgres", b"", b"0123456789abcdef", b"k\xffworker/1:2"];
    let mut t = 1_000u64;
    for i in 0..400u64 {
        let rnd = next();
        t += rnd % 50_000;
        let op = Op::ALL[(rnd >> 20) as usize % 4];
        let k = (i % 7) as usize;
        e.push(Entry::Request(Request {
            issue_ns: t,
            complete_ns: (i % 11 != 3).then_some(t + (rnd >> 32) % 2_000_000),
            device: (i % 5 == 4) as u16,
            offset: if op == Op::Flush {
                0
            } else {
                (rnd >> 8) % (1 << 30) * 512
            },
            len: [4096, 8192, 512, 131_072, 0, 1000][(rnd >> 40) as usize % 6],
            op,
            flags: Flags((i % 32) as u8),
            pid: (k != 5).then_some(4000 + k as u32),
            tid: (k != 6).then_some(4100 + (k as u32 % 3)),
            comm: Comm::new(comms[k % 4]),
        }));
    }
    let edge = |issue_ns, complete_ns, offset, len| {
        Entry::Request(Request {
            issue_ns,
            complete_ns,
            device: 1,
            offset,
            len,
            op: Op::Write,
            flags: Flags(31),
            pid: Some(0),
            tid: Some(u32::MAX - 1),
            comm: Comm::new(b"x"),
        })
    };
    e.push(edge(u64::MAX - 1, Some(0), u64::MAX, u32::MAX));
    e.push(edge(0, Some(u64::MAX - 1), 0, 0));
    e.push(edge(5, None, 1 << 63, 1));
    e
}
