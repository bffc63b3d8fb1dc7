//! Concurrent blind increments from several threads lose nothing.

mod common;

use std::thread;

const THREADS: usize = 4;
const PER_THREAD: u64 = 100_000;
const ITEMS_PER_THREAD: u64 = 10;

#[test]
fn four_threads_of_blind_increments_give_exact_totals() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    store.cms("hits").init_by_dim(2000, 7).unwrap();
    thread::scope(|scope| {
        for th in 0..THREADS {
            let cms = store.cms("hits");
            scope.spawn(move || {
                for i in 0..PER_THREAD {
                    let item = format!("t{th}-{}", i % ITEMS_PER_THREAD);
                    cms.incr_by(&[(item, 1)]).unwrap();
                }
            });
        }
    });
    let cms = store.cms("hits");
    assert_eq!(cms.info().unwrap().count, THREADS as u64 * PER_THREAD);
    let items: Vec<String> = (0..THREADS)
        .flat_map(|th| (0..ITEMS_PER_THREAD).map(move |i| format!("t{th}-{i}")))
        .collect();
    // 40 items in 2000 x 7 counters share no cell in every row: estimates are exact.
    let want = (PER_THREAD / ITEMS_PER_THREAD) as u32;
    assert_eq!(cms.query(&items).unwrap(), vec![want; items.len()]);
    store.compact().unwrap();
    assert_eq!(cms.query(&items).unwrap(), vec![want; items.len()]);
}

/// `CMS.INCRBY`'s answered increments take no lock: threads racing on one item each see
/// estimates that grow with their own increments, never fall below what they added
/// themselves, never exceed everything added, and the total is exact.
#[test]
fn answered_increments_race_without_losing_or_undercounting() {
    const ROUNDS: u32 = 2_000;
    let t = common::TempStore::new();
    let store = t.store().clone();
    store.cms("race").init_by_dim(1000, 4).unwrap();
    thread::scope(|scope| {
        for _ in 0..THREADS {
            let cms = store.cms("race");
            scope.spawn(move || {
                let mut last = 0;
                for mine in 1..=ROUNDS {
                    // Two pairs on one item: the first answer excludes the second's add.
                    let est = cms.incr_by_with_estimates(&[("x", 1), ("x", 2)]).unwrap();
                    assert_eq!(est[1], est[0] + 2, "{est:?}");
                    assert!(est[1] >= 3 * mine, "{est:?} after {mine} rounds");
                    assert!(est[1] > last && est[1] <= 3 * ROUNDS * THREADS as u32);
                    last = est[1];
                }
            });
        }
    });
    let total = 3 * ROUNDS * THREADS as u32;
    assert_eq!(store.cms("race").query(&["x"]).unwrap(), vec![total]);
}
