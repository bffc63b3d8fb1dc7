//! Ribbon filters at scale: a million built items over two generations, across a
//! restart and a compaction, with no false negatives; the false-positive rate measured
//! over a million absent items against the bound `generations × 2^-r`.

mod common;

use common::TempStore;

const BUILT: u64 = 1_000_000;
const ABSENT: u64 = 1_000_000;

fn keys(range: std::ops::Range<u64>, tag: &str) -> Vec<Vec<u8>> {
    range.map(|i| format!("{tag}:{i}").into_bytes()).collect()
}

/// How many of `range` the filter reports present, in batches.
fn present(t: &TempStore, range: std::ops::Range<u64>, tag: &str) -> u64 {
    let mut found = 0;
    let mut at = range.start;
    while at < range.end {
        let end = (at + 50_000).min(range.end);
        let batch = keys(at..end, tag);
        let answers = t.store().ribbon("big").mexists(&batch).unwrap();
        found += answers.iter().filter(|f| **f).count() as u64;
        at = end;
    }
    found
}

#[test]
fn a_million_items_no_false_negatives_and_the_bound_holds() {
    let mut t = TempStore::new();
    let r = 7; // 1/128
    t.store().ribbon("big").reserve(1.0 / 128.0).unwrap();
    for (generation, range) in [0..600_000, 600_000..BUILT].into_iter().enumerate() {
        let mut at = range.start;
        while at < range.end {
            let end = (at + 100_000).min(range.end);
            t.store().ribbon("big").add(&keys(at..end, "in")).unwrap();
            at = end;
        }
        let items = range.end - range.start;
        assert_eq!(t.store().ribbon("big").build().unwrap(), items);
        if generation == 0 {
            t.reopen();
        }
    }
    t.store().compact().unwrap();
    t.reopen();
    assert_eq!(present(&t, 0..BUILT, "in"), BUILT, "false negatives");
    let info = t.store().ribbon("big").info().unwrap();
    assert_eq!((info.generations, info.built, info.staged), (2, BUILT, 0));
    // Bits per item: r × (1 + overhead) and page headers; the goal is 1.08 r.
    let bits = info.bytes as f64 * 8.0 / BUILT as f64;
    assert!(bits <= 1.08 * f64::from(r), "{bits} bits per item");
    // Each generation answers an absent item with probability 2^-r; six standard
    // deviations above the expected count cannot flake.
    let fp = present(&t, 0..ABSENT, "out") as f64;
    let expected = 2.0 * ABSENT as f64 / 128.0;
    assert!(
        fp <= expected + 6.0 * expected.sqrt(),
        "{fp} false positives"
    );
    assert!(
        fp >= expected - 6.0 * expected.sqrt(),
        "{fp}: suspiciously few"
    );
    println!(
        "{bits:.3} bits per item, FPR {:.5} over 2 generations",
        fp / ABSENT as f64
    );
}
