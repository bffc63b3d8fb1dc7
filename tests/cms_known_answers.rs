//! RedisBloom's known answers, through the library API.

mod common;

use rocksketch::{CmsError, Error};

#[test]
fn init_by_prob_sizes_like_redisbloom() {
    let t = common::TempStore::new();
    let cms = t.store().cms("p");
    cms.init_by_prob(0.001, 0.01).unwrap();
    let info = cms.info().unwrap();
    assert_eq!((info.width, info.depth, info.count), (2000, 7, 0));
    assert!(matches!(
        cms.init_by_dim(1, 1),
        Err(Error::Cms(CmsError::KeyAlreadyExists))
    ));
}

#[test]
fn b_and_c_share_their_cells_at_width_5_depth_2() {
    let t = common::TempStore::new();
    let cms = t.store().cms("s");
    cms.init_by_dim(5, 2).unwrap();
    cms.incr_by(&[("b", 3)]).unwrap();
    // "b" and "c" hash to the same column in both rows, so "c" reads b's count.
    assert_eq!(cms.query(&["b", "c"]).unwrap(), vec![3, 3]);
    assert_eq!(cms.incr_by_with_estimates(&[("c", 2)]).unwrap(), vec![5]);
    assert_eq!(cms.query(&["b"]).unwrap(), vec![5]);
}

#[test]
fn merge_with_weights() {
    let t = common::TempStore::new();
    let s = t.store();
    for key in ["a", "b", "dest"] {
        s.cms(key).init_by_dim(1000, 5).unwrap();
    }
    s.cms("a").incr_by(&[("x", 10), ("y", 1)]).unwrap();
    s.cms("b").incr_by(&[("x", 3)]).unwrap();
    s.cms("dest").incr_by(&[("old", 99)]).unwrap();
    s.cms("dest").merge(&[("a", 2), ("b", -1)]).unwrap();
    let dest = s.cms("dest");
    assert_eq!(dest.query(&["x", "y", "old"]).unwrap(), vec![17, 2, 0]);
    assert_eq!(dest.info().unwrap().count, 2 * 11 - 3);

    // A negative cell is an overflow, and nothing changes.
    assert!(matches!(
        dest.merge(&[("b", 1), ("a", -1)]),
        Err(Error::Cms(CmsError::MergeOverflow))
    ));
    assert_eq!(dest.query(&["x", "y"]).unwrap(), vec![17, 2]);

    // The destination may be a source; dimensions must agree.
    dest.merge(&[("dest", 1), ("a", 1)]).unwrap();
    assert_eq!(dest.query(&["x"]).unwrap(), vec![27]);
    s.cms("narrow").init_by_dim(10, 5).unwrap();
    assert!(matches!(
        dest.merge(&[("narrow", 1)]),
        Err(Error::Cms(CmsError::DimensionsDiffer))
    ));
    assert!(matches!(
        dest.merge(&[("missing", 1)]),
        Err(Error::Cms(CmsError::KeyDoesNotExist))
    ));
}

#[test]
fn counters_saturate_and_the_count_does_not() {
    let t = common::TempStore::new();
    let cms = t.store().cms("ov");
    cms.init_by_dim(100, 3).unwrap();
    let est = cms
        .incr_by_with_estimates(&[("x", u64::from(u32::MAX) - 1), ("x", 5)])
        .unwrap();
    assert_eq!(est, vec![u32::MAX - 1, u32::MAX]);
    cms.incr_by(&[("y", 1 << 40)]).unwrap();
    assert_eq!(cms.query(&["x", "y"]).unwrap(), vec![u32::MAX, u32::MAX]);
    assert_eq!(
        cms.info().unwrap().count,
        u64::from(u32::MAX) - 1 + 5 + (1 << 40)
    );
}

// RedisBloom computes a merge's weighted sums in 64 signed bits, term by term: a total
// count past i64::MAX times -1 overflows, though the whole sum (0) is in range. Found
// by the differential test against the live RedisBloom (issue 31).
#[test]
fn merge_overflows_term_by_term_as_redisbloom() {
    let t = common::TempStore::new();
    let s = t.store();
    s.cms("m").init_by_prob(0.01, 0.01).unwrap();
    s.cms("m")
        .incr_by(&[("b", i64::MAX as u64), ("a", 1 << 31)])
        .unwrap();
    assert!(matches!(
        s.cms("m").merge(&[("m", -1), ("m", 1)]),
        Err(Error::Cms(CmsError::MergeOverflow))
    ));
    assert_eq!(s.cms("m").query(&["a"]).unwrap(), vec![1 << 31]);
}
