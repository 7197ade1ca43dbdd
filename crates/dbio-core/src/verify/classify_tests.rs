use super::*;
use crate::rng::Rng;
use crate::storage::block::{Header, fill};

pub(crate) const BS: usize = 8192;

/// Block `n` of `file` of target 77, stamped with `generation`.
pub(crate) fn block(n: u64, generation: u64, file: u32, rng: &mut Rng) -> Vec<u8> {
    let mut b = vec![0u8; BS];
    let h = Header {
        block: n,
        generation,
        file,
        size: BS as u32,
        target: 77,
        seed: 5,
    };
    fill(&mut b, h, rng);
    b
}

/// What block `n` of file 1 of target 77 must hold.
pub(crate) fn expect(n: u64, floor: Option<u16>) -> Expect {
    Expect {
        target: 77,
        file: 1,
        offset: n * BS as u64,
        size: BS as u32,
        floor,
    }
}

fn class(v: Verdict) -> Option<(Class, usize)> {
    match v {
        Verdict::Bad { class, sector, .. } => Some((class, sector)),
        Verdict::Intact { .. } => None,
    }
}

#[test]
fn each_kind_of_damage_is_named() {
    let mut rng = Rng::new(1);
    let good = block(9, 4, 1, &mut rng);
    assert_eq!(
        classify(&good, &expect(9, Some(4))),
        Verdict::Intact {
            newer: false,
            copy: false
        }
    );
    assert_eq!(
        classify(&good, &expect(9, Some(3))),
        Verdict::Intact {
            newer: true,
            copy: false
        }
    );
    assert_eq!(
        classify(&good, &expect(9, None)),
        Verdict::Intact {
            newer: false,
            copy: false
        }
    );

    let zero = vec![0u8; BS];
    assert_eq!(
        class(classify(&zero, &expect(9, None))),
        Some((Class::Zeroed, 0))
    );
    let mut half_zero = good.clone();
    half_zero[4096..].fill(0);
    assert_eq!(
        class(classify(&half_zero, &expect(9, None))),
        Some((Class::Zeroed, 8))
    );

    let mut rot = good.clone();
    rot[3 * 512 + 200] ^= 0x10;
    assert_eq!(
        class(classify(&rot, &expect(9, None))),
        Some((Class::Checksum, 3))
    );
    let mut magic = good.clone();
    magic[1024] = b'X';
    assert_eq!(
        class(classify(&magic, &expect(9, None))),
        Some((Class::Checksum, 2))
    );

    // Block 5 copied over block 9; a block of file 2; of another target.
    let five = block(5, 4, 1, &mut rng);
    let v = classify(&five, &expect(9, None));
    assert_eq!(class(v), Some((Class::Misdirected, 0)));
    let Verdict::Bad { found: Some(f), .. } = v else {
        panic!("{v:?}")
    };
    assert_eq!(f.offset, 5 * BS as u64);
    let other_file = block(9, 4, 2, &mut rng);
    assert_eq!(
        class(classify(&other_file, &expect(9, None))),
        Some((Class::Misdirected, 0))
    );
    let mut other_target = expect(9, None);
    other_target.target = 78;
    assert_eq!(
        class(classify(&good, &other_target)),
        Some((Class::Misdirected, 0))
    );

    // Half old, half new.
    let newer_block = block(9, 5, 1, &mut rng);
    let mut torn = newer_block.clone();
    torn[4096..].copy_from_slice(&good[4096..]);
    let v = classify(&torn, &expect(9, Some(4)));
    assert_eq!(class(v), Some((Class::Torn, 8)));

    // An older, whole block where generation 5 was acknowledged.
    let v = classify(&good, &expect(9, Some(5)));
    assert_eq!(class(v), Some((Class::Lost, 0)));
    // Generations compare as serial numbers across the wrap.
    let wrapped = block(9, 2, 1, &mut rng);
    assert_eq!(
        classify(&wrapped, &expect(9, Some(65534))),
        Verdict::Intact {
            newer: true,
            copy: false
        }
    );
}

#[test]
fn zeros_outrank_rot_and_rot_outranks_misplacement() {
    let mut rng = Rng::new(2);
    let mut b = block(5, 1, 1, &mut rng);
    b[100] ^= 1; // sector 0 rots
    b[BS - 512..].fill(0); // the last sector is zero
    assert_eq!(
        class(classify(&b, &expect(5, None))),
        Some((Class::Zeroed, 15))
    );
    let mut c = block(5, 1, 1, &mut rng);
    c[BS - 10] ^= 1; // last sector rots, and the block is in the wrong place
    assert_eq!(
        class(classify(&c, &expect(6, None))),
        Some((Class::Checksum, 15))
    );
}

/// Pool block `k` of target 77, as `--dedupe-pct` writes it.
fn pool_copy(k: u64, rng: &mut Rng) -> Vec<u8> {
    block(k, 0, crate::storage::block::POOL_FILE, rng)
}

#[test]
fn a_dedupe_copy_is_intact_anywhere_but_not_torn_or_foreign() {
    let mut rng = Rng::new(2);
    let copy = {
        let mut b = pool_copy(3, &mut rng);
        // The pool's stamps carry seed 0 and generation 0.
        let h = Header {
            block: 3,
            generation: 0,
            file: crate::storage::block::POOL_FILE,
            size: BS as u32,
            target: 77,
            seed: 0,
        };
        crate::storage::block::seal(&mut b, h);
        b
    };
    let copied = Verdict::Intact {
        newer: false,
        copy: true,
    };
    // Anywhere, whatever the map's floor: a copy has no place or generation.
    assert_eq!(classify(&copy, &expect(9, Some(40))), copied);
    assert_eq!(classify(&copy, &expect(500, None)), copied);
    // Another target's pool block: misdirected.
    let mut foreign = expect(9, None);
    foreign.target = 78;
    assert_eq!(
        class(classify(&copy, &foreign)),
        Some((Class::Misdirected, 0))
    );
    // A pool entry past the pool, or its sectors out of order: misdirected.
    let beyond = pool_copy(POOL_BLOCKS as u64, &mut rng);
    assert_eq!(
        class(classify(&beyond, &expect(9, None))),
        Some((Class::Misdirected, 0))
    );
    let mut swapped = copy.clone();
    swapped[..SECTOR].copy_from_slice(&copy[SECTOR..2 * SECTOR]);
    assert_eq!(
        class(classify(&swapped, &expect(9, None))),
        Some((Class::Misdirected, 0))
    );
    // Half a copy, half the block's own write; half of two copies: torn.
    let own = block(9, 4, 1, &mut rng);
    let mut half = own.clone();
    half[BS / 2..].copy_from_slice(&copy[BS / 2..]);
    assert_eq!(
        class(classify(&half, &expect(9, Some(4)))),
        Some((Class::Torn, 8))
    );
    let other = pool_copy(4, &mut rng);
    let mut two = copy.clone();
    two[BS / 2..].copy_from_slice(&other[BS / 2..]);
    assert_eq!(
        class(classify(&two, &expect(9, None))),
        Some((Class::Torn, 8))
    );
}
