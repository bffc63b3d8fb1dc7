//! Sizes a client controls, at their limits: every command's work and memory stay
//! bounded (count-min dimensions, `CMS.MERGE`, restored dump headers, dumps of huge
//! filters).

mod common;

use common::args;
use rocksketch::command::{execute, Reply};
use rocksketch::{CmsError, Error};
use std::time::{Duration, Instant};

/// Resident memory of this process, in MiB.
fn rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("VmRSS")
        / 1024
}

// Post-mortem: `CMS.INITBYDIM big 65536 65536` then `CMS.MERGE big 1 big` allocated
// 64 GiB (the whole sketch, as i128 sums) and aborted; `CMS.INITBYDIM deep 4096
// 1048576` made every query decode a million pages.
#[test]
fn sketches_whose_commands_cannot_be_bounded_are_refused_with_the_reason() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    assert_eq!(
        execute(&ns, &args(&["CMS.INITBYDIM", "big", "16777216", "64"])),
        Reply::Error(CmsError::TooManyCounters.text().to_owned())
    );
    assert_eq!(
        execute(&ns, &args(&["CMS.INITBYDIM", "deep", "4096", "1048576"])),
        Reply::Error(CmsError::DepthTooLarge.text().to_owned())
    );
    assert!(CmsError::DepthTooLarge.text().contains("at most 128 rows"));
    assert!(matches!(
        execute(&ns, &args(&["CMS.INITBYPROB", "p", "0.001", "1e-300"])),
        Reply::Error(_)
    ));
    assert!(!ns.exists(b"big").unwrap() && !ns.exists(b"deep").unwrap());
    // The largest allowed sketch works.
    assert_eq!(
        execute(&ns, &args(&["CMS.INITBYDIM", "max", "2097152", "128"])),
        Reply::ok()
    );
}

#[test]
fn merging_the_largest_sketch_streams_a_page_at_a_time() {
    let t = common::TempStore::new();
    let cms = t.store().cms("max");
    cms.init_by_dim(2_097_152, 128).unwrap();
    cms.incr_by(&[("a", 3), ("b", 5)]).unwrap();
    let before = rss_mib();
    let started = Instant::now();
    cms.merge(&[("max", 2)]).unwrap();
    let grown = rss_mib().saturating_sub(before);
    assert!(
        grown < 200,
        "CMS.MERGE of a 1 GiB sketch grew resident memory by {grown} MiB"
    );
    assert!(started.elapsed() < Duration::from_secs(120));
    // Pages × sources past the bound: refused before any read.
    let many: Vec<(&str, i64)> = vec![("max", 1); 257];
    assert!(matches!(
        cms.merge(&many),
        Err(Error::Cms(CmsError::MergeTooLarge))
    ));
    assert_eq!(cms.query(&["a", "b", "c"]).unwrap(), vec![6, 10, 0]);
    assert_eq!(cms.info().unwrap().count, 16);
    assert_eq!(cms.query(&["a"]).unwrap(), vec![6]);
}

#[test]
fn a_merge_that_overflows_changes_nothing_and_leaves_no_pages() {
    let t = common::TempStore::new();
    let store = t.store();
    let (k, other) = (store.cms("k"), store.cms("other"));
    k.init_by_dim(100_000, 4).unwrap();
    other.init_by_dim(100_000, 4).unwrap();
    k.incr_by(&[("a", 5)]).unwrap();
    other.incr_by(&[("z", 7)]).unwrap();
    store.compact().unwrap();
    let count_pages = || {
        let db = store.db().unwrap();
        let cf = db.cf_handle(rocksketch::PAGES_CF).unwrap();
        db.iterator_cf(cf, rocksdb::IteratorMode::Start).count()
    };
    let pages = count_pages();
    // k - 2·other: "z"'s counters go negative, on whichever pages they fall.
    assert!(matches!(
        k.merge(&[("k", 1), ("other", -2)]),
        Err(Error::Cms(CmsError::MergeOverflow))
    ));
    assert_eq!(k.query(&["a", "z"]).unwrap(), vec![5, 0]);
    assert_eq!(k.info().unwrap().count, 5);
    store.compact().unwrap();
    assert_eq!(count_pages(), pages, "an aborted merge left pages behind");
    // A merge that fits replaces k, and drops k's old pages: k then holds exactly the
    // pages of a sketch built afresh with the same counts.
    k.merge(&[("k", 1), ("other", 1)]).unwrap();
    assert_eq!(k.query(&["a", "z"]).unwrap(), vec![5, 7]);
    store.ns(0).delete(b"other").unwrap();
    store.compact().unwrap();
    let merged_pages = count_pages();
    let fresh = store.cms("fresh");
    fresh.init_by_dim(100_000, 4).unwrap();
    fresh.incr_by(&[("a", 5), ("z", 7)]).unwrap();
    store.compact().unwrap();
    assert_eq!(count_pages() - merged_pages, merged_pages);
}
