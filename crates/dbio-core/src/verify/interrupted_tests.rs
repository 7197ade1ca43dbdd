use super::*;
use crate::rng::Rng;
use crate::verify::classify::classify;
use crate::verify::classify::tests::{BS, expect as expect_at};

/// Block `n` of file 1, stamped with `generation`.
fn block(n: u64, generation: u64, rng: &mut Rng) -> Vec<u8> {
    crate::verify::classify::tests::block(n, generation, 1, rng)
}

fn expect(n: u64, floor: u16) -> Expect {
    expect_at(n, Some(floor))
}

/// Block 3 was being written at generation 12 when the run was killed.
fn killed() -> Interruption {
    Interruption {
        writes: vec![
            Write {
                block: 3,
                generation: 12,
            },
            Write {
                block: 9,
                generation: 40,
            },
        ],
        blind: false,
    }
}

fn outcome(i: &Interruption, n: u64, data: &[u8], floor: u16) -> Option<Outcome> {
    let e = expect(n, floor);
    i.outcome(n, data, &e, &classify(data, &e))
}

/// The first half of `new`, the rest of `old`: a copy cut short.
fn half(new: &[u8], old: &[u8]) -> Vec<u8> {
    let mut b = old.to_vec();
    b[..BS / 2].copy_from_slice(&new[..BS / 2]);
    b
}

#[test]
fn a_block_torn_by_a_write_in_flight_is_the_interruption() {
    let mut rng = Rng::new(1);
    let i = killed();
    let torn = half(&block(3, 12, &mut rng), &block(3, 10, &mut rng));
    assert_eq!(outcome(&i, 3, &torn, 10), Some(Outcome::Torn));
    // The same tear where nothing was in flight is damage.
    let torn4 = half(&block(4, 12, &mut rng), &block(4, 10, &mut rng));
    assert_eq!(outcome(&i, 4, &torn4, 10), None);
    // Half of it older than the floor: a synced write was lost under it.
    let under = half(&block(3, 12, &mut rng), &block(3, 8, &mut rng));
    assert_eq!(outcome(&i, 3, &under, 10), None);
}

#[test]
fn a_write_in_flight_that_did_not_land_leaves_the_block_stale() {
    let mut rng = Rng::new(2);
    let i = killed();
    assert_eq!(
        outcome(&i, 3, &block(3, 11, &mut rng), 10),
        Some(Outcome::Stale)
    );
    assert_eq!(
        outcome(&i, 3, &block(3, 12, &mut rng), 10),
        None,
        "it landed"
    );
    assert_eq!(
        outcome(&i, 5, &block(5, 11, &mut rng), 10),
        None,
        "not in flight"
    );
    // Older than the floor: lost, in flight or not.
    let lost = block(3, 9, &mut rng);
    let e = expect(3, 10);
    let v = classify(&lost, &e);
    assert!(
        matches!(
            v,
            Verdict::Bad {
                class: Class::Lost,
                ..
            }
        ),
        "{v:?}"
    );
    assert_eq!(i.outcome(3, &lost, &e, &v), None);
}

#[test]
fn blind_takes_any_tear_above_the_floor_and_nothing_else() {
    let mut rng = Rng::new(3);
    let blind = Interruption {
        writes: Vec::new(),
        blind: true,
    };
    let torn = half(&block(6, 30, &mut rng), &block(6, 20, &mut rng));
    assert_eq!(outcome(&blind, 6, &torn, 20), Some(Outcome::Torn));
    assert_eq!(
        outcome(&blind, 6, &torn, 25),
        None,
        "the old half is below the floor"
    );
    assert_eq!(outcome(&blind, 6, &block(6, 20, &mut rng), 20), None);
    let none = Interruption::default();
    assert_eq!(
        outcome(&none, 6, &torn, 20),
        None,
        "no interruption: damage"
    );
}

#[test]
fn a_slob_runs_mark_makes_any_tear_its_interruption() {
    let mut rng = Rng::new(4);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    // A SLOB target: no map, no floors; generations are the wall clock.
    let torn = half(
        &block(5, 1_700_000_002, &mut rng),
        &block(5, 1_700_000_001, &mut rng),
    );
    let e = expect_at(5, None);
    let v = classify(&torn, &e);
    let judge = |(i, known): (Interruption, Known)| (i.outcome(5, &torn, &e, &v), known);
    let none = Interruption::default().with_slob_mark(&d, Known::Nothing);
    assert_eq!(judge(none), (None, Known::Nothing), "no mark: damage");
    let w = crate::storage::slob_mark::begin(std::slice::from_ref(&d)).unwrap();
    let (o, known) = judge(Interruption::default().with_slob_mark(&d, Known::Nothing));
    assert_eq!(o, Some(Outcome::Torn));
    assert!(matches!(&known, Known::Slob { why } if why.contains("did not end cleanly")));
    assert!(
        known
            .torn_text()
            .contains("the SLOB run writing it was interrupted")
    );
    // A run that ended cleanly, with no interrupted one before it: damage.
    w.end().unwrap();
    let after = Interruption::default().with_slob_mark(&d, Known::Nothing);
    assert_eq!(judge(after), (None, Known::Nothing));
}
