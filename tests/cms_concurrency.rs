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
