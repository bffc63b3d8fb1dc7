//! A windowed Bloom filter fed at exactly its capacity's rate keeps its false-positive
//! rate over the window within the error it was created with: each of the `L` live
//! generations is sized for one slice's items at `error / L`. Measured on 200 000
//! never-added items after three windows of traffic, with every item of the last window
//! found. (A deterministic stream: the measured rate is the same on every run.)

mod common;

use common::TempStore;
use rocksketch::{Clock, StoreOptions, Window};

const START: u64 = 1_700_000_000_000;

fn measured_fpr(error: f64, slices: u16) -> (f64, u64) {
    let clock = Clock::manual(START);
    let t = TempStore::with_options(StoreOptions {
        clock: clock.clone(),
        ..StoreOptions::default()
    });
    let window = Window::new(8_000, slices).unwrap();
    let capacity = 8_000;
    let filter = t.store().bloom("w");
    filter.reserve_windowed(error, capacity, 2, window).unwrap();
    // One item per millisecond: `capacity` per window, in batches of 100.
    let mut next = 0u64;
    for _ in 0..(3 * capacity / 100) {
        let items: Vec<String> = (next..next + 100).map(|i| format!("item-{i}")).collect();
        filter.add_blind(&items).unwrap();
        next += 100;
        clock.advance(100);
    }
    // Most of a slice on: the current generation partly filled, as it usually is.
    clock.advance(window.slice_ms() * 3 / 4);
    let recent: Vec<String> = (next - capacity..next)
        .map(|i| format!("item-{i}"))
        .collect();
    assert!(filter.mexists(&recent).unwrap().iter().all(|f| *f));
    let probes: Vec<String> = (0..200_000).map(|i| format!("never-{i}")).collect();
    let found = filter
        .mexists(&probes)
        .unwrap()
        .iter()
        .filter(|f| **f)
        .count();
    (found as f64 / probes.len() as f64, filter.card().unwrap())
}

#[test]
fn the_false_positive_rate_over_the_window_stays_within_the_error() {
    for (error, slices) in [(0.01, 8), (0.001, 4), (0.05, 16)] {
        let (fpr, card) = measured_fpr(error, slices);
        println!("error {error}, {slices} slices: measured {fpr:.5} over {card} live items");
        assert!(
            fpr <= error,
            "error {error}, {slices} slices: measured {fpr}"
        );
        // Not vacuous: the filter is loaded (at least a window's items are live).
        assert!(card >= 8_000);
    }
}
