//! T-Digest writes racing deletes, expiry, flushes, recreation and merges of their key:
//! nothing acknowledged is lost, nothing lands on a deleted version, and the compress
//! operands reads write never outlive the version they were written for.

mod common;

use rocksketch::{Error, Store, TDigestError};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Threads adding and reading `key` until `stop`; returns the acknowledged adds.
fn workers(store: &Store, key: &str, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<u64>> {
    (0..3)
        .map(|i| {
            let (s, key, stop) = (store.clone(), key.to_owned(), stop.clone());
            std::thread::spawn(move || {
                let mut acked = 0;
                let digest = s.tdigest(&key);
                while !stop.load(Ordering::Relaxed) {
                    let result = if i == 2 {
                        digest.quantiles(&[0.5]).map(|_| ())
                    } else {
                        digest.add(&[1.0, 2.0, 3.0]).map(|()| acked += 3)
                    };
                    match result {
                        Ok(()) => {}
                        Err(Error::TDigest(TDigestError::KeyDoesNotExist)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                acked
            })
        })
        .collect()
}

#[test]
fn adds_and_reads_racing_delete_expiry_flush_and_recreate_leave_no_pages() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let ns = store.ns(0);
    for cycle in 0..12 {
        let key = format!("td{cycle}");
        store.tdigest(&key).create(5).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let threads = workers(&store, &key, &stop);
        if cycle % 4 == 3 {
            // Recreate: the new digest starts empty, whatever was in flight.
            std::thread::sleep(Duration::from_millis(5));
            assert!(ns.delete(key.as_bytes()).unwrap());
            store.tdigest(&key).create(7).unwrap();
            assert_eq!(store.tdigest(&key).info().unwrap().compression, 7);
            stop.store(true, Ordering::Relaxed);
        } else {
            common::end_key_under_writers(&store, &key, cycle, &stop);
        }
        for t in threads {
            t.join().unwrap();
        }
        ns.flush().unwrap();
    }
    assert_eq!(
        common::pages_after_compaction(&store),
        0,
        "pages of deleted versions"
    );
}

#[test]
fn merging_a_digest_into_itself_keeps_every_acknowledged_add() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let digest = store.tdigest("k");
    digest.create(20).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let threads = workers(&store, "k", &stop);
    // Writers may start late on a loaded machine: wait for a first acknowledged add.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while digest.info().unwrap().observations == 0 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    let merges = AtomicU64::new(0);
    for _ in 0..100 {
        // MERGE k 1 k OVERRIDE: k := k, a no-op on the count, unless it loses adds.
        digest.merge(&["k"], None, true).unwrap();
        merges.fetch_add(1, Ordering::Relaxed);
    }
    stop.store(true, Ordering::Relaxed);
    let acked: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(acked > 0);
    let info = digest.info().unwrap();
    assert_eq!(info.observations as u64, acked);
    assert_eq!((digest.min().unwrap(), digest.max().unwrap()), (1.0, 3.0));
    store.compact().unwrap();
    assert_eq!(digest.info().unwrap().observations as u64, acked);
}
