use super::*;

#[test]
fn rwbs_says_operation_and_flags() {
    let f = |s: &str| parse_rwbs(s.as_bytes()).map(|(o, f)| (o, f.bits()));
    assert_eq!(f("R"), Some((Op::Read, 0)));
    assert_eq!(f("WS"), Some((Op::Write, Flags::SYNC.bits())));
    assert_eq!(
        f("FWFS"),
        Some((
            Op::Write,
            Flags::PREFLUSH.bits() | Flags::FUA.bits() | Flags::SYNC.bits()
        ))
    );
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
