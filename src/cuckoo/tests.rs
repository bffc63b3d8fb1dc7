use super::*;

#[test]
fn sizing_follows_redisbloom() {
    let p = validate(CuckooOptions::default(), 16384).unwrap();
    assert_eq!(p.buckets, 512);
    assert_eq!(p.page_buckets, 8192);
    let sub = sub_of(&p, 0).unwrap();
    assert_eq!((sub.pages, sub.page_buckets), (1, 512));
    let p = validate(
        CuckooOptions {
            capacity: 1_000_000,
            bucket_size: 4,
            expansion: 3,
            ..CuckooOptions::default()
        },
        16384,
    )
    .unwrap();
    assert_eq!(p.buckets, 262_144);
    assert_eq!(p.expansion, 4);
    let second = sub_of(&p, 1).unwrap();
    assert_eq!(second.buckets, 4 * 262_144);
    assert_eq!(second.pages, 4 * 262_144 / 4096);
    assert!(validate(
        CuckooOptions {
            capacity: 3,
            ..CuckooOptions::default()
        },
        16384
    )
    .is_err());
}

#[test]
fn fingerprints_are_never_zero_and_fit() {
    for i in 0..10_000u32 {
        let h8 = hashed(&i.to_le_bytes(), 8);
        assert!((1..=255).contains(&h8.fp));
        let h16 = hashed(&i.to_le_bytes(), 16);
        assert!(h16.fp >= 1);
    }
}
