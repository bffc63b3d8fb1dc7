//! A windowed sketch or filter written at a constant rate for a simulated week holds
//! about one window's worth of pages on disk once compacted: the expiry sweep drops
//! every generation that aged out with a range delete, and compaction reclaims it.
//! Measured against the same structure after exactly one window of the same traffic
//! (the pages column family's table files after a full compaction).

mod common;

use common::TempStore;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksketch::{Clock, Store, StoreOptions, Window};

const START: u64 = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000;
const HOUR: u64 = 3_600_000;
const STEP: u64 = 30_000;

/// Writes one step's traffic to both structures.
fn write(store: &Store, rng: &mut StdRng) {
    let pairs: Vec<(String, u64)> = (0..20)
        .map(|_| (format!("user-{}", rng.gen_range(0..5000)), 1))
        .collect();
    store.cms("requests").incr_by(&pairs).unwrap();
    let items: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    store
        .bloom("seen")
        .madd(&items)
        .1
        .map_or(Ok(()), Err)
        .unwrap();
}

/// A store with a windowed sketch and filter, written from `START` until `end` every
/// `STEP`, the sweep run every ten steps; its pages' bytes after a full compaction.
fn pages_after(end: u64, seed: u64) -> (u64, usize) {
    let clock = Clock::manual(START);
    let t = TempStore::with_options(StoreOptions {
        clock: clock.clone(),
        ..StoreOptions::default()
    });
    let store = t.store();
    let window = Window::new(HOUR, 8).unwrap();
    store
        .cms("requests")
        .init_by_dim_windowed(2000, 5, window)
        .unwrap();
    store
        .bloom("seen")
        .reserve_windowed(0.01, 50_000, 2, window)
        .unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut steps = 0u64;
    while clock.now_ms() < end {
        write(store, &mut rng);
        steps += 1;
        if steps.is_multiple_of(10) {
            store.sweep_expired(None, 1000).unwrap();
        }
        clock.advance(STEP);
    }
    store.sweep_expired(None, 1000).unwrap();
    let records = common::pages_after_compaction(store);
    let db = store.db().unwrap();
    let cf = db.cf_handle(rocksketch::PAGES_CF).unwrap();
    let bytes = db
        .property_int_value_cf(cf, "rocksdb.total-sst-files-size")
        .unwrap()
        .unwrap();
    (bytes, records)
}

#[test]
fn a_week_of_traffic_holds_about_one_window_on_disk() {
    let (one_window, window_records) = pages_after(START + HOUR, 7);
    // A week, ending most of a slice past a boundary (the partly filled current
    // generation on top of a full window: the most a window holds).
    let slice = HOUR / 8;
    let (week, week_records) = pages_after(START + 7 * 24 * HOUR + slice * 9 / 10, 7);
    let ratio = week as f64 / one_window as f64;
    println!(
        "one window: {one_window} bytes in {window_records} records; a week: {week} bytes \
         in {week_records} records ({ratio:.2}x)"
    );
    assert!(ratio <= 1.2, "a week holds {ratio:.2}x one window's bytes");
    // Without the sweep, a week would hold 168 windows' generations.
    assert!(week_records <= window_records * 12 / 10 + 4);
}
