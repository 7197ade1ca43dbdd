use super::*;

fn header(block: u64, generation: u64) -> Header {
    Header {
        block,
        generation,
        file: 2,
        size: 8192,
        target: 0xfeed,
        seed: 42,
    }
}

#[test]
fn sealed_blocks_verify_and_corruption_is_caught() {
    let mut rng = Rng::new(1);
    let mut b = vec![0u8; 8192];
    let h = header(77, 3);
    fill(&mut b, h, &mut rng);
    assert_eq!(verify(&b, Some((2, 77))), Ok(h));
    assert!(matches!(
        verify(&b, Some((2, 78))),
        Err(BlockError::Misplaced { .. })
    ));
    // A flipped bit in the last sector: caught by that sector's checksum.
    b[8000] ^= 1;
    assert!(matches!(
        verify(&b, None),
        Err(BlockError::Checksum { sector: 15, .. })
    ));
    let zero = vec![0u8; 512];
    assert!(matches!(
        verify(&zero, None),
        Err(BlockError::Zero { sector: 0 })
    ));
    assert_eq!(read_stamp(&zero), Err(SectorError::Zero));
}

#[test]
fn every_sector_carries_its_own_place_and_the_block() {
    let mut rng = Rng::new(2);
    let mut b = vec![0u8; 4096];
    let h = Header {
        size: 4096,
        ..header(5, 9)
    };
    fill(&mut b, h, &mut rng);
    for (i, s) in b.chunks(SECTOR).enumerate() {
        let st = read_stamp(s).unwrap();
        assert_eq!(st.offset, 5 * 4096 + 512 * i as u64);
        assert_eq!(st.header(i), h);
        assert_eq!(st, Stamp::of(&h, i));
    }
    assert_eq!(claimed_size(&b), Some(4096));
}

#[test]
fn half_old_half_new_is_torn() {
    let mut rng = Rng::new(3);
    let mut old = vec![0u8; 8192];
    let mut new = vec![0u8; 8192];
    fill(&mut old, header(1, 4), &mut rng);
    fill(&mut new, header(1, 5), &mut rng);
    new[4096..].copy_from_slice(&old[4096..]);
    assert_eq!(
        verify(&new, Some((2, 1))),
        Err(BlockError::Torn {
            sector: 8,
            found: 4,
            first: 5
        })
    );
}

#[test]
fn refreshed_blocks_verify_and_change_every_sector() {
    let mut rng = Rng::new(3);
    let mut b = vec![0u8; 8192];
    let h = header(5, 1);
    fill(&mut b, h, &mut rng);
    let before = b.clone();
    refresh(&mut b, Header { generation: 2, ..h }, &mut rng);
    assert_eq!(verify(&b, Some((2, 5))).unwrap().generation, 2);
    for (old, new) in before.chunks(512).zip(b.chunks(512)) {
        assert_ne!(
            old[STAMP_LEN..],
            new[STAMP_LEN..],
            "every sector's payload changes"
        );
    }
}

#[test]
fn payloads_differ_between_blocks() {
    let mut rng = Rng::new(9);
    let mut a = vec![0u8; 4096];
    let mut b = vec![0u8; 4096];
    let h = Header {
        size: 4096,
        ..header(0, 0)
    };
    fill(&mut a, h, &mut rng);
    fill(&mut b, h, &mut rng);
    assert_ne!(a[STAMP_LEN..], b[STAMP_LEN..]);
}
