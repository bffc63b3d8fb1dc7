//! HyperLogLog writes racing each other and their key's `DEL`, expiry, `FLUSHDB`,
//! `SET` over it and recreation as another type.

mod common;

use rocksketch::{Error, Store};
use rocksketch_merge::hll::position;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Concurrent `PFADD`s of one item to a new key: exactly one is told it changed the
/// HyperLogLog (the one that created it), as Redis's serial execution answers.
#[test]
fn concurrent_adds_of_one_item_answer_one_exactly_once() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    for cycle in 0..40 {
        let key = format!("k{cycle}");
        let barrier = Arc::new(Barrier::new(6));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (s, key, barrier) = (store.clone(), key.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    s.hll(&key).add(&["same item"]).unwrap()
                })
            })
            .collect();
        let ones = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|changed| *changed)
            .count();
        assert_eq!(ones, 1, "cycle {cycle}");
        assert_eq!(store.hll(&key).count().unwrap(), 1);
    }
}

/// Writers add items of their own (answered, blind, and by merging a source) while
/// the key is deleted, expired, flushed, replaced with `SET` or made a Bloom filter;
/// at the end the writes made after the last of those are all there, and no page of a
/// deleted version survives compaction.
#[test]
fn writes_racing_deletes_and_replacements_lose_nothing_after_them() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    store.hll("source").add(&["from the source"]).unwrap();
    for cycle in 0..15u32 {
        let key = format!("h{cycle}");
        let stop = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(AtomicU64::new(0));
        let writers: Vec<_> = (0..3u32)
            .map(|w| {
                let (s, key, stop, writes) =
                    (store.clone(), key.clone(), stop.clone(), writes.clone());
                std::thread::spawn(move || {
                    let mut n = 0u32;
                    while !stop.load(Ordering::Relaxed) {
                        let item = format!("w{w}:{n}");
                        let hll = s.hll(&key);
                        let written = match (w + n) % 3 {
                            0 => hll.add(&[&item]).map(|_| ()),
                            1 => hll.add_blind(&[&item]),
                            _ => hll.merge_from(&["source"]),
                        };
                        match written {
                            Ok(()) => writes.fetch_add(1, Ordering::Relaxed),
                            // The key became a Bloom filter: the writer is told so.
                            Err(Error::WrongType) => 0,
                            Err(e) => panic!("{e}"),
                        };
                        n += 1;
                    }
                })
            })
            .collect();
        while writes.load(Ordering::Relaxed) < 20 {
            std::thread::yield_now();
        }
        let ns = store.ns(0);
        match cycle % 5 {
            0 => {
                ns.delete(key.as_bytes()).unwrap();
            }
            1 => {
                ns.expire_at(key.as_bytes(), rocksketch::now_ms() + 2)
                    .unwrap();
                std::thread::sleep(Duration::from_millis(5));
                store.sweep_expired(None, 1000).unwrap();
            }
            2 => {
                ns.flush().unwrap();
                store.hll("source").add(&["from the source"]).unwrap();
            }
            3 => {
                let other = store.hll("source").export().unwrap().unwrap();
                store.hll(&key).import(&other).unwrap();
            }
            _ => {
                ns.delete(key.as_bytes()).unwrap();
                // Writers may recreate it first; then the Bloom filter is refused.
                let _ = store.bloom(&key).add(b"x");
            }
        }
        std::thread::sleep(Duration::from_millis(3));
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.join().unwrap();
        }
        check_later_adds_stay(&store, &key);
        ns.delete(key.as_bytes()).unwrap();
    }
    store.ns(0).delete(b"source").unwrap();
    assert_eq!(
        common::pages_after_compaction(&store),
        0,
        "pages of deleted versions"
    );
}

/// After the race, adds to the key (if it is still a HyperLogLog) all show, across a
/// compaction and a flush.
fn check_later_adds_stay(store: &Store, key: &str) {
    let hll = store.hll(key);
    let items: Vec<String> = (0..50).map(|i| format!("{key} after {i}")).collect();
    match hll.add(&items) {
        Err(Error::WrongType) => return,
        other => other.map(|_| ()).unwrap(),
    }
    store.flush().unwrap();
    store.compact().unwrap();
    let regs = hll.registers().unwrap().expect("the key");
    for item in &items {
        let (index, rank) = position(item.as_bytes());
        assert!(regs.get(usize::from(index)) >= rank, "{key}: {item} lost");
    }
}
