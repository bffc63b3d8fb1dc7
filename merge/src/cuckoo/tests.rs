use super::*;

fn shape() -> Shape {
    Shape::new(8, 2, 16).unwrap()
}

#[test]
fn round_trips() {
    let mut page = FpPage::empty(shape());
    page.insert(3, 7);
    page.insert(3, 200);
    page.stash.push(page.shape, 5, 9);
    assert_eq!(FpPage::decode(&page.encode()), Ok(page.clone()));
    let wide = Shape::new(16, 4, 8).unwrap();
    let mut page = FpPage::empty(wide);
    page.insert(1, 60_000);
    assert_eq!(FpPage::decode(&page.encode()), Ok(page));
    let ops = FpOps::new(
        shape(),
        vec![
            FpOp::Insert { bucket: 1, fp: 2 },
            FpOp::Delete {
                bucket: 15,
                fp: 255,
            },
        ],
    )
    .unwrap();
    assert_eq!(FpOps::decode(&ops.encode()), Ok(ops));
}

#[test]
fn shapes_and_entries_are_checked() {
    assert!(Shape::new(10, 2, 16).is_err());
    assert!(Shape::new(12, 2, 16).is_ok());
    let twelve = Shape::new(12, 2, 16).unwrap();
    assert!(FpOps::new(
        twelve,
        vec![FpOp::Insert {
            bucket: 1,
            fp: 4096
        }]
    )
    .is_err());
    assert!(FpOps::new(
        twelve,
        vec![FpOp::Insert {
            bucket: 1,
            fp: 4095
        }]
    )
    .is_ok());
    assert!(Shape::new(8, 0, 16).is_err());
    assert!(Shape::new(8, 2, 12).is_err());
    assert!(FpOps::new(shape(), vec![FpOp::Insert { bucket: 16, fp: 1 }]).is_err());
    assert!(FpOps::new(shape(), vec![FpOp::Insert { bucket: 1, fp: 0 }]).is_err());
    assert!(FpOps::new(shape(), vec![FpOp::Insert { bucket: 1, fp: 256 }]).is_err());
}

#[test]
fn twelve_bit_slots_pack_two_in_three_bytes() {
    let odd = FpPage::empty(Shape::new(12, 1, 1).unwrap());
    assert_eq!(odd.slots.len(), 3);
    let shape = Shape::new(12, 3, 4).unwrap();
    let mut page = FpPage::empty(shape);
    assert_eq!(page.slots.len(), 12 * 12 / 8);
    for i in 0..12 {
        page.set_slot(i, (0xfff - i * 7) as u16);
    }
    for i in 0..12 {
        assert_eq!(page.slot(i), (0xfff - i * 7) as u16, "slot {i}");
    }
    page.set_slot(5, 0);
    assert_eq!(
        (page.slot(4), page.slot(5), page.slot(6)),
        (0xfff - 28, 0, 0xfff - 42)
    );
    assert_eq!(page.occupied(), 11);
    let bytes = page.encode();
    assert_eq!(bytes[1], crate::header::VERSION_2);
    assert_eq!(FpPage::decode(&bytes), Ok(page.clone()));
    // A 12-bit shape under a version-1 header is refused, and 8 bits under version 2.
    let mut wrong = bytes.clone();
    wrong[1] = crate::header::VERSION_1;
    assert!(FpPage::decode(&wrong).is_err());
    let eight = FpPage::empty(Shape::new(8, 3, 4).unwrap()).encode();
    assert_eq!(eight[1], crate::header::VERSION_1);
    // Inserting and deleting through the page keeps every fingerprint.
    let mut page = FpPage::empty(Shape::new(12, 2, 8).unwrap());
    for fp in 1..=20u16 {
        page.insert(u32::from(fp) % 8, fp * 200);
    }
    for fp in 1..=20u16 {
        assert!(page.contains(u32::from(fp) % 8, fp * 200), "{fp}");
    }
}

#[test]
fn an_overfull_page_stashes_and_loses_nothing() {
    let shape = Shape::new(8, 1, 4).unwrap();
    let mut page = FpPage::empty(shape);
    for fp in 1..=10u16 {
        page.insert(u32::from(fp) % 4, fp);
    }
    assert_eq!(page.occupied() + page.stashed(), 10);
    assert!(page.stashed() >= 6);
    for fp in 1..=10u16 {
        assert!(page.contains(u32::from(fp) % 4, fp), "{fp}");
    }
    // Deletes free slots, and stashed fingerprints move into them.
    for fp in 1..=5u16 {
        assert!(page.delete(u32::from(fp) % 4, fp));
    }
    assert!(!page.delete(1, 1));
    for fp in 6..=10u16 {
        assert!(page.contains(u32::from(fp) % 4, fp), "{fp}");
    }
    assert_eq!(page.occupied() + page.stashed(), 5);
}

#[test]
fn an_insert_then_its_delete_cancel_in_a_partial_merge() {
    let ops = |ops: Vec<FpOp>| FpOps::new(shape(), ops).unwrap().encode();
    let fp = 9;
    let alt = shape().alt(2, fp);
    let merged = partial_merge(&[
        &ops(vec![
            FpOp::Insert { bucket: 2, fp },
            FpOp::Insert { bucket: 5, fp: 1 },
        ]),
        &ops(vec![FpOp::Delete { bucket: alt, fp }]),
    ])
    .unwrap();
    assert_eq!(
        FpOps::decode(&merged).unwrap().ops,
        vec![FpOp::Insert { bucket: 5, fp: 1 }]
    );
    // A delete before any insert stays (it may remove a copy already in the page).
    let merged = partial_merge(&[&ops(vec![
        FpOp::Delete { bucket: 2, fp },
        FpOp::Insert { bucket: 2, fp },
    ])])
    .unwrap();
    assert_eq!(FpOps::decode(&merged).unwrap().ops.len(), 2);
    let other = FpOps::new(Shape::new(8, 4, 16).unwrap(), vec![])
        .unwrap()
        .encode();
    assert_eq!(partial_merge(&[&ops(vec![]), &other]), None);
}

#[test]
fn copies_past_their_pair_are_stashed_counted_and_deleted() {
    // An item added 11 times: its pair (2 buckets of 2) takes 4, the stash the rest, and
    // each copy reads back and deletes whichever bucket of the pair names it.
    let shape = Shape::new(8, 2, 64).unwrap();
    let mut page = FpPage::empty(shape);
    let (bucket, fp) = (10, 200);
    let alt = shape.alt(bucket, fp);
    for n in 1..=11u32 {
        page.insert(if n % 2 == 0 { bucket } else { alt }, fp);
        assert_eq!(page.count(bucket, fp), n);
        assert_eq!(page.count(alt, fp), n);
    }
    assert_eq!(page.stashed(), 7);
    // The page decodes to what it was, and a stash written in another order and with
    // the other bucket of its pair (as earlier versions did) reads the same.
    let encoded = page.encode();
    assert_eq!(FpPage::decode(&encoded), Ok(page.clone()));
    let mut other = page.clone();
    other.stash = stash::Stash::from_entries(shape, vec![(alt, fp); 7]);
    assert_eq!(other, page);
    for n in (0..11u32).rev() {
        assert!(page.delete(if n % 3 == 0 { alt } else { bucket }, fp));
        assert_eq!(page.count(bucket, fp), n);
    }
    assert!(!page.delete(bucket, fp));
    assert_eq!(page.stashed() + page.occupied(), 0);
}

#[test]
fn a_busy_page_operands_combine_in_one_partial_merge() {
    // 20 000 one-insert operands of one page, as a flush of a busy filter meets them.
    let shape = Shape::new(8, 2, 8192).unwrap();
    let operands: Vec<Vec<u8>> = (0..20_000u32)
        .map(|i| {
            let fp = (i % 255 + 1) as u16;
            FpOps::new(
                shape,
                vec![FpOp::Insert {
                    bucket: i * 7 % 8192,
                    fp,
                }],
            )
            .unwrap()
            .encode()
        })
        .collect();
    let refs: Vec<&[u8]> = operands.iter().map(Vec::as_slice).collect();
    let merged = partial_merge(&refs).expect("combined");
    assert_eq!(FpOps::decode(&merged).unwrap().ops.len(), 20_000);
    let mut one_by_one = FpPage::empty(shape);
    for operand in &refs {
        assert!(one_by_one.apply_operand(operand));
    }
    let mut combined = FpPage::empty(shape);
    assert!(combined.apply_operand(&merged));
    assert_eq!(combined, one_by_one);
}

/// The README's simulation of one page of `scripts/bench-serve`'s cuckoo filter: 12 500
/// inserts over 7 812 items (its 1.6M adds over 1M values, per page of 128), so many
/// items are added more often than their pair holds. Prints the time an insert takes
/// and the stash, each fifth of the way; asserts nothing is lost.
/// `cargo test --release -p rocksketch-merge -- --ignored a_page_of_repeated_items --nocapture`
#[test]
#[ignore = "a timing simulation, run by hand"]
fn a_page_of_repeated_items() {
    let shape = Shape::new(8, 2, 8192).unwrap();
    let mix = |mut h: u64| {
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    };
    let items: Vec<(u32, u16)> = (1..=7812u64)
        .map(|i| {
            let h = mix(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            (((h >> 20) % 8192) as u32, ((h >> 40) % 255 + 1) as u16)
        })
        .collect();
    let mut page = FpPage::empty(shape);
    let mut added = vec![0u32; items.len()];
    let mut x = 12345u64;
    for fifth in 1..=5 {
        let started = std::time::Instant::now();
        for _ in 0..2500 {
            x = mix(x.wrapping_add(1));
            let at = (x % items.len() as u64) as usize;
            page.insert(items[at].0, items[at].1);
            added[at] += 1;
        }
        eprintln!(
            "fifth {fifth}: {:?} an insert, {} stashed",
            started.elapsed() / 2500,
            page.stashed()
        );
    }
    assert_eq!(page.occupied() + page.stashed(), 12_500);
    for (at, (bucket, fp)) in items.iter().enumerate() {
        assert!(page.count(*bucket, *fp) >= added[at]);
    }
}
