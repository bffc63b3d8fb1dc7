//! Durable mode: with every write synced before it is answered, writes that arrive
//! together share one sync (RocksDB's write group, and one batch for requests that ran
//! together), so a sync's cost is spread over many writers.

mod common;

use rocksketch::StoreOptions;
use std::sync::{Arc, Barrier};

/// `(writes, syncs)` of the WAL, from RocksDB's own statistics.
fn wal_counts(store: &rocksketch::Store) -> (u64, u64) {
    let stats = store
        .db()
        .unwrap()
        .property_value("rocksdb.stats")
        .unwrap()
        .unwrap();
    let line = stats
        .lines()
        .find(|l| l.starts_with("Cumulative WAL:"))
        .unwrap_or_else(|| panic!("no WAL line in {stats}"));
    let number = |word: &str| -> u64 {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words
            .iter()
            .position(|w| w.trim_end_matches(',') == word)
            .unwrap();
        // RocksDB prints large counts as 1.2K or 3.4M.
        let text = words[at - 1];
        let (digits, scale) = match text.chars().last() {
            Some('K') => (&text[..text.len() - 1], 1e3),
            Some('M') => (&text[..text.len() - 1], 1e6),
            _ => (text, 1.0),
        };
        (digits.parse::<f64>().unwrap() * scale) as u64
    };
    (number("writes"), number("syncs"))
}

#[test]
fn concurrent_synced_writes_share_syncs() {
    let db = common::TempStore::with_options(StoreOptions {
        sync_writes: true,
        ..StoreOptions::default()
    });
    let store = db.store().clone();
    store.cms("c").init_by_dim(1000, 4).unwrap();
    const THREADS: usize = 8;
    const WRITES: usize = 100;
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, barrier) = (store.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..WRITES {
                    store.cms("c").incr_by(&[(format!("{t}:{i}"), 1)]).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let (writes, syncs) = wal_counts(&store);
    eprintln!("WAL: {writes} writes, {syncs} syncs");
    assert!(syncs > 0, "nothing was synced");
    assert!(writes >= (THREADS * WRITES) as u64 / 2);
    // Each sync served more than one write on average.
    assert!(
        syncs * 3 < (THREADS * WRITES) as u64 * 2,
        "{syncs} syncs for {writes} writes"
    );
}
