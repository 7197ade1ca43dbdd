use super::*;
use crate::rng::Rng;
use crate::storage::block::{Header, fill};
use crate::verify::interrupted::Interruption;

const BS: usize = 4096;

fn block(n: u64, generation: u64, rng: &mut Rng) -> Vec<u8> {
    let mut b = vec![0u8; BS];
    let h = Header {
        block: n,
        generation,
        file: 0,
        size: BS as u32,
        target: 9,
        seed: 3,
    };
    fill(&mut b, h, rng);
    b
}

fn none() -> Interruption {
    Interruption::default()
}

fn expect(n: u64) -> Expect {
    Expect {
        target: 9,
        file: 0,
        offset: n * BS as u64,
        size: BS as u32,
        floor: None,
    }
}

#[test]
fn a_settled_block_is_judged_against_its_floor() {
    let mut rng = Rng::new(7);
    let m = GenMap::new(&[4, 4], 0);
    let current = block(1, 4, &mut rng);
    let look = before_read(Some(&m), 1);
    assert_eq!(
        judge(&current, (Some(&m), &none()), 1, look, expect(1)),
        Ok(true)
    );
    let stale = block(1, 3, &mut rng);
    let bad = judge(&stale, (Some(&m), &none()), 1, look, expect(1)).unwrap_err();
    assert_eq!(bad.class, Class::Lost);
    assert_eq!(bad.expect.floor, Some(4));
    let msg = bad.message(std::path::Path::new("/t/dbio-data-0000.dat"), false);
    assert!(
        msg.starts_with("lost block at /t/dbio-data-0000.dat offset 4096: sector 0 expected target 0x00000009 file 0 offset 4096 generation >= 4; found target 0x00000009 file 0 offset 4096 generation 3 seed 0x00000003: older than"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "one line: {msg}");
    let elsewhere = block(0, 4, &mut rng);
    let bad = judge(&elsewhere, (Some(&m), &none()), 1, look, expect(1)).unwrap_err();
    assert_eq!(bad.class, Class::Misdirected);
}

#[test]
fn a_read_that_races_a_write_of_its_block_is_not_judged() {
    let mut rng = Rng::new(8);
    let m = GenMap::new(&[4], 0);
    let stale = block(0, 1, &mut rng);
    // A write in flight when the read was issued.
    m.begin(0);
    let look = before_read(Some(&m), 0);
    assert_eq!(look, Look::Skip);
    assert_eq!(
        judge(&stale, (Some(&m), &none()), 0, look, expect(0)),
        Ok(false)
    );
    m.acknowledged(0);
    // A write begun while the read was in flight.
    let look = before_read(Some(&m), 0);
    m.begin(0);
    assert_eq!(
        judge(&stale, (Some(&m), &none()), 0, look, expect(0)),
        Ok(false)
    );
    m.acknowledged(0);
    let look = before_read(Some(&m), 0);
    assert_eq!(
        judge(&stale, (Some(&m), &none()), 0, look, expect(0)).map_err(|b| b.class),
        Err(Class::Lost),
        "settled again: judged"
    );
}

#[test]
fn without_a_map_every_class_but_lost_is_found() {
    let mut rng = Rng::new(9);
    let look = before_read(None, 2);
    let mut b = block(2, 1234, &mut rng);
    assert_eq!(judge(&b, (None, &none()), 2, look, expect(2)), Ok(true));
    b[700] ^= 1;
    let bad = judge(&b, (None, &none()), 2, look, expect(2)).unwrap_err();
    assert_eq!((bad.class, bad.sector), (Class::Checksum, 1));
    assert_eq!(
        judge(&vec![0; BS], (None, &none()), 2, look, expect(2)).map_err(|b| b.class),
        Err(Class::Zeroed)
    );
}
