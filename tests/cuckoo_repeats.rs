//! Items added more often than their bucket pair holds: every copy past the pair's slots
//! lives in the page's stash. Counts stay exact (no copy lost, none invented) and read
//! the same whatever RocksDB flushed or compacted, after a restart, and whether the
//! page came from the hot-page cache, from a cache too small to keep it, or from none.

mod common;

use common::TempStore;
use rocksketch::{CuckooOptions, StoreOptions};

const ITEMS: u64 = 60;

fn item(i: u64) -> String {
    format!("repeated-{i}")
}

/// Copies of item `i` the model holds: `i % 13 + 1` added, then `i % 3` deleted.
fn copies(i: u64) -> u64 {
    i % 13 + 1 - (i % 3).min(i % 13 + 1)
}

/// Every item's count, and an absent item's.
fn answers(t: &TempStore) -> Vec<u64> {
    let cf = t.store().cuckoo("cf");
    let mut counts: Vec<u64> = (0..ITEMS).map(|i| cf.count(item(i)).unwrap()).collect();
    counts.push(cf.count("never-added").unwrap());
    counts
}

fn run(page_cache_bytes: usize) -> Vec<u64> {
    let mut t = TempStore::with_options(StoreOptions {
        page_cache_bytes,
        ..StoreOptions::default()
    });
    // One page of 2048 two-slot buckets: 60 items with up to 13 copies stash hundreds.
    t.store()
        .cuckoo("cf")
        .reserve(CuckooOptions {
            capacity: 4096,
            ..CuckooOptions::default()
        })
        .unwrap();
    for round in 0..13 {
        let batch: Vec<String> = (0..ITEMS).filter(|i| round <= i % 13).map(item).collect();
        let (added, error) = t.store().cuckoo("cf").add_many(&batch);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(added, batch.len());
        if round == 6 {
            t.store().flush().unwrap();
        }
    }
    for i in 0..ITEMS {
        for _ in 0..(i % 3).min(i % 13 + 1) {
            assert!(t.store().cuckoo("cf").delete(item(i)).unwrap());
        }
    }
    let first = answers(&t);
    for (i, count) in first.iter().take(ITEMS as usize).enumerate() {
        // Never below the copies held; above only by a fingerprint shared with another
        // item in the same pair, which 60 items in 2048 buckets make rare.
        assert!(*count >= copies(i as u64), "item {i}: {count}");
    }
    let exact = (0..ITEMS)
        .filter(|i| first[*i as usize] == copies(*i))
        .count();
    assert!(exact >= 55, "only {exact} of {ITEMS} counts exact");
    t.store().flush().unwrap();
    assert_eq!(answers(&t), first, "after a flush");
    t.store().compact().unwrap();
    assert_eq!(answers(&t), first, "after a compaction");
    t.reopen();
    assert_eq!(answers(&t), first, "after a restart");
    first
}

#[test]
fn repeated_items_count_the_same_across_flushes_compactions_restarts_and_caches() {
    let cached = run(StoreOptions::default().page_cache_bytes);
    // 20 KB holds the filter's page and little else; 0 turns the cache off.
    assert_eq!(run(20_000), cached);
    assert_eq!(run(0), cached);
    // The stash held copies: more than the four a pair's slots take, for many items.
    assert!((0..ITEMS).filter(|i| copies(*i) > 4).count() > 20);
}
