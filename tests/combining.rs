//! Answered writes from many threads on one key are combined into batches, and their
//! replies stay linearizable: two clients adding the same new item get 1 and 0, never
//! 1 and 1; concurrent increments of one counter answer every count once.

mod common;

use common::TempStore;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::HashMap;
use std::sync::{Arc, Barrier};

const THREADS: usize = 8;
const ITEMS: usize = 3000;

/// Runs `THREADS` threads, each calling `add` on every item of `0..ITEMS` in its own
/// shuffled order; returns how many threads got `true` for each item.
fn race_adds(add: impl Fn(&str) -> bool + Send + Sync + 'static) -> Vec<usize> {
    let add = Arc::new(add);
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (add, barrier) = (add.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut order: Vec<usize> = (0..ITEMS).collect();
                order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(t as u64));
                barrier.wait();
                order
                    .into_iter()
                    .filter(|i| add(&format!("item:{i}")))
                    .collect::<Vec<usize>>()
            })
        })
        .collect();
    let mut wins = vec![0; ITEMS];
    for thread in threads {
        for i in thread.join().unwrap() {
            wins[i] += 1;
        }
    }
    wins
}

#[test]
fn bf_add_answers_each_new_item_true_exactly_once_while_the_chain_grows() {
    let db = TempStore::new();
    let bf = db.store().bloom("hot");
    // Small: the chain grows several times during the race.
    bf.reserve(0.001, 100, 2).unwrap();
    let store = db.store().clone();
    let wins = race_adds(move |item| store.bloom("hot").add(item).unwrap());
    assert!(wins.iter().all(|w| *w <= 1), "an item was added twice");
    let added = wins.iter().sum::<usize>();
    // Only a false positive answers 0 for every thread (error 0.001 at its first add).
    assert!(
        added >= ITEMS - 30,
        "only {added} of {ITEMS} items answered new"
    );
    // The items counted are exactly the adds answered 1.
    assert_eq!(bf.card().unwrap(), added as u64);
    for i in 0..ITEMS {
        assert!(bf.exists(format!("item:{i}")).unwrap());
    }
}

#[test]
fn cf_addnx_answers_each_new_item_true_exactly_once_while_the_chain_grows() {
    let db = TempStore::new();
    let cf = db.store().cuckoo("hot");
    cf.reserve(rocksketch::CuckooOptions {
        capacity: 500,
        bucket_size: 4,
        // 16-bit fingerprints: few false positives over the grown chain.
        fp_bits: 16,
        expansion: 2,
        ..Default::default()
    })
    .unwrap();
    let store = db.store().clone();
    let wins = race_adds(move |item| store.cuckoo("hot").add_nx(item).unwrap());
    assert!(wins.iter().all(|w| *w <= 1), "an item was added twice");
    let added = wins.iter().sum::<usize>();
    assert!(
        added >= ITEMS - 30,
        "only {added} of {ITEMS} items answered new"
    );
    let info = cf.info().unwrap();
    assert_eq!(info.inserted, added as u64);
    assert!(info.filters > 1, "the chain should have grown");
    for i in 0..ITEMS {
        assert!(cf.exists(format!("item:{i}")).unwrap());
        // Never two copies of one item.
        assert!(cf.count(format!("item:{i}")).unwrap() <= 1);
    }
}

#[test]
fn cms_incrby_answers_every_count_once() {
    let db = TempStore::new();
    let cms = db.store().cms("hot");
    cms.init_by_dim(100_000, 5).unwrap();
    let per_thread = 400;
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (store, barrier) = (db.store().clone(), barrier.clone());
            std::thread::spawn(move || {
                let cms = store.cms("hot");
                barrier.wait();
                (0..per_thread)
                    .map(|i| {
                        // Another item in the same call: its estimate is its own.
                        let other = format!("other:{t}:{i}");
                        let answer = cms
                            .incr_by_with_estimates(&[("x", 1), (other.as_str(), 2)])
                            .unwrap();
                        assert!(answer[1] >= 2);
                        answer[0]
                    })
                    .collect::<Vec<u32>>()
            })
        })
        .collect();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for thread in threads {
        for count in thread.join().unwrap() {
            *seen.entry(count).or_default() += 1;
        }
    }
    // One item alone in its counters (checked below): each count 1..=N answered once.
    let total = (THREADS * per_thread) as u32;
    assert_eq!(cms.query(&["x"]).unwrap(), vec![total]);
    for count in 1..=total {
        assert_eq!(seen.get(&count), Some(&1), "count {count}");
    }
}
