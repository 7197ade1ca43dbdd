use super::*;

// Lines as this machine's kernel (6.18) writes them, options/record-tgid on.
const ISSUE: &str = "  dbio-session-3-29075   (  29069) [001] .....  4195.560314: block_rq_issue: 254,0 RS 8192 () 354851216 + 16 be,0,4 [dbio-session-3]";
const COMPLETE: &str = "  dbio-session-0-29072   (  29069) [001] ..s..  4195.560341: block_rq_complete: 254,0 RS () 354851216 + 16 be,0,4 [0]";

#[test]
fn an_issue_line_is_parsed_field_by_field() {
    let e = parse_line(ISSUE).expect("parsed");
    assert_eq!(
        e.kind,
        Kind::Issue {
            comm: Comm::new(b"dbio-session-3")
        }
    );
    assert_eq!(e.ts_ns, 4_195_560_314_000);
    assert_eq!((e.tid, e.tgid), (29075, Some(29069)));
    assert_eq!(e.dev, 254 << 20);
    assert_eq!((e.op, e.sector, e.sectors), (Op::Read, 354851216, 16));
    assert!(e.flags.contains(Flags::SYNC) && !e.flags.contains(Flags::FUA));
}

#[test]
fn a_completion_line_is_parsed_and_other_lines_are_not_events() {
    let e = parse_line(COMPLETE).expect("parsed");
    assert_eq!(e.kind, Kind::Complete);
    assert_eq!(
        (e.tid, e.sector, e.ts_ns),
        (29072, 354851216, 4_195_560_341_000)
    );
    // Without record-tgid, and a task name with spaces and dashes.
    let l = "  kworker/u4:1 a-b-77  [000] d..1.   12.000001: block_rq_issue: 7,3 FWFS 4096 () 8 + 8 none,0,0 [kworker/u4:1 a-b]";
    let e = parse_line(l).expect("parsed");
    assert_eq!((e.tid, e.tgid, e.dev), (77, None, (7 << 20) | 3));
    assert_eq!(e.op, Op::Write);
    for f in [Flags::PREFLUSH, Flags::FUA, Flags::SYNC] {
        assert!(e.flags.contains(f), "{f:?}");
    }
    assert_eq!(parse_line("CPU:1 [LOST 12 EVENTS]"), None);
    assert_eq!(lost_marker("CPU:1 [LOST 12 EVENTS]"), Some(12));
    assert_eq!(
        parse_line("  x-1 [000] ..... 1.000000: block_rq_issue: 254,0 RS"),
        None
    );
}

#[test]
fn rwbs_says_operation_and_flags() {
    let f = |s| parse_rwbs(s).map(|(o, f)| (o, f.bits()));
    assert_eq!(f("R"), Some((Op::Read, 0)));
    assert_eq!(f("WS"), Some((Op::Write, Flags::SYNC.bits())));
    assert_eq!(f("FF"), Some((Op::Flush, Flags::PREFLUSH.bits())));
    assert_eq!(f("F"), Some((Op::Flush, 0)));
    assert_eq!(f("FS"), Some((Op::Flush, Flags::SYNC.bits())));
    assert_eq!(f("DE"), Some((Op::Discard, 0)));
    assert_eq!(f("D"), Some((Op::Discard, 0)));
    assert_eq!(
        f("RAM"),
        Some((Op::Read, Flags::READAHEAD.bits() | Flags::META.bits()))
    );
    assert_eq!(f("N"), None);
    assert_eq!(f("WX"), None);
}

#[test]
fn seconds_with_any_fraction_become_ns() {
    assert_eq!(parse_secs("1.5:"), Some(1_500_000_000));
    assert_eq!(parse_secs("0.000001"), Some(1000));
    assert_eq!(parse_secs("3"), None);
    assert_eq!(parse_secs("3.x"), None);
}
