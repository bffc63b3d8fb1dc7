//! Sliding windows against an exact model (every add or increment with its time), the
//! store's clock driven by the test over many windows, with flushes, compactions,
//! reopens, expiry sweeps and three page-cache sizes in between:
//! - an item added at `t` is found at every time in `[t, t + ms]` (no false negative);
//! - an item whose last add is `ms + slice_ms` or more in the past is found no more
//!   often than a never-added one (false positives only);
//! - a windowed count-min estimate is never below the exact count over the window and
//!   never above the exact count of the live generations plus the sketch's bound.
//!
//! The random streams are seeded, so every run checks the same sequences.

mod common;

use common::TempStore;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksketch::{Clock, CuckooOptions, StoreOptions, Window};
use std::collections::HashMap;

const START: u64 = 1_700_000_000_000;

fn options(clock: &Clock, cache: usize) -> StoreOptions {
    StoreOptions {
        clock: clock.clone(),
        page_cache_bytes: cache,
        // Small pages: a filter spans many, so items land on pages of their own.
        page_bytes: 1024,
        ..StoreOptions::default()
    }
}

/// A maintenance step now and then: what must never change an answer.
fn churn(t: &mut TempStore, rng: &mut StdRng) {
    match rng.gen_range(0..40) {
        0 => t.store().flush().unwrap(),
        1 => t.store().compact().unwrap(),
        2 => t.reopen(),
        3..=8 => {
            t.store().sweep_expired(None, 1000).unwrap();
        }
        _ => {}
    }
}

#[test]
fn bloom_window_finds_every_item_for_its_window_and_forgets_it_a_slice_later() {
    for (seed, cache) in [(1u64, 64 << 20), (2, 4096), (3, 0)] {
        let clock = Clock::manual(START);
        let mut t = TempStore::with_options(options(&clock, cache));
        let window = Window::new(10_000, 8).unwrap();
        let slice = window.slice_ms();
        t.store()
            .bloom("w")
            .reserve_windowed(0.001, 2000, 2, window)
            .unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut last_add: HashMap<u32, u64> = HashMap::new();
        let (mut stale_checks, mut stale_found) = (0u64, 0u64);
        let (mut fresh_probes, mut fresh_found) = (0u64, 0u64);
        for step in 0..600 {
            clock.advance(rng.gen_range(0..700));
            let now = clock.now_ms();
            let filter = t.store().bloom("w");
            let items: Vec<u32> = (0..rng.gen_range(0..6))
                .map(|_| rng.gen_range(0..400))
                .collect();
            match rng.gen_range(0..3) {
                0 => {
                    let answers = filter.madd(&keys(&items)).0;
                    // New means: not added within the live generations (the model's
                    // last add is no older than the window plus a slice), as far as a
                    // filter can tell (a false positive answers 0).
                    for (item, new) in items.iter().zip(answers) {
                        if let Some(at) = last_add.get(item) {
                            if now <= at + window.ms {
                                assert!(!new, "seed {seed} step {step}: {item} re-added as new");
                            }
                        }
                    }
                }
                1 => filter.add_blind(&keys(&items)).unwrap(),
                _ => {
                    for item in &items {
                        filter.add(key(*item)).unwrap();
                    }
                }
            }
            for item in &items {
                last_add.insert(*item, now);
            }
            drop(filter);
            churn(&mut t, &mut rng);
            let filter = t.store().bloom("w");
            let probe: Vec<u32> = (0..40).map(|_| rng.gen_range(0..400)).collect();
            let found = filter.mexists(&keys(&probe)).unwrap();
            for (item, found) in probe.iter().zip(found) {
                match last_add.get(item) {
                    Some(at) if now <= at + window.ms => {
                        assert!(
                            found,
                            "seed {seed} step {step}: {item} added at {at} lost at {now}"
                        )
                    }
                    Some(at) if now >= at + window.ms + slice => {
                        stale_checks += 1;
                        stale_found += u64::from(found);
                    }
                    Some(_) => {}
                    None => {
                        fresh_probes += 1;
                        fresh_found += u64::from(found);
                    }
                }
            }
            let never: Vec<String> = (0..20).map(|i| format!("never-{step}-{i}")).collect();
            let found = filter.mexists(&never).unwrap();
            fresh_probes += never.len() as u64;
            fresh_found += found.iter().filter(|f| **f).count() as u64;
        }
        assert!(
            stale_checks > 5000,
            "seed {seed}: the stream expired too few items"
        );
        // Both are false positives at a rate of at most 0.001: allow 10x (a handful).
        assert!(
            stale_found * 100 <= stale_checks,
            "seed {seed}: {stale_found} of {stale_checks} expired items still found"
        );
        assert!(
            fresh_found * 100 <= fresh_probes,
            "seed {seed}: {fresh_found} of {fresh_probes} never-added items found"
        );
    }
}

#[test]
fn cms_window_counts_lie_between_the_window_and_the_live_generations() {
    for (seed, cache) in [(11u64, 64 << 20), (12, 4096), (13, 0)] {
        let clock = Clock::manual(START + 123);
        let mut t = TempStore::with_options(options(&clock, cache));
        let window = Window::new(10_000, 5).unwrap();
        t.store()
            .cms("c")
            .init_by_dim_windowed(2000, 5, window)
            .unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut log: Vec<(u64, u32, u64)> = Vec::new();
        for step in 0..500 {
            clock.advance(rng.gen_range(0..900));
            let now = clock.now_ms();
            let cms = t.store().cms("c");
            let pairs: Vec<(String, u64)> = (0..rng.gen_range(1..5))
                .map(|_| (key(rng.gen_range(0..60)), rng.gen_range(1..10)))
                .collect();
            let items: Vec<u32> = pairs.iter().map(|(k, _)| k[2..].parse().unwrap()).collect();
            for (item, (_, n)) in items.iter().zip(&pairs) {
                log.push((now, *item, *n));
            }
            let live = window.live(now);
            let exact = |item: u32, live_only: bool| -> u64 {
                log.iter()
                    .filter(|(at, i, _)| {
                        *i == item
                            && match live_only {
                                true => live.contains(&window.generation(*at)),
                                false => *at + window.ms >= now,
                            }
                    })
                    .map(|(_, _, n)| n)
                    .sum()
            };
            let total_live: u64 = log
                .iter()
                .filter(|(at, _, _)| live.contains(&window.generation(*at)))
                .map(|(_, _, n)| n)
                .sum();
            // The sketch's bound: 2/width of the live total (RedisBloom's error).
            let slack = (2 * total_live).div_ceil(2000);
            if rng.gen_bool(0.5) {
                let answered = cms.incr_by_with_estimates(&pairs).unwrap();
                for (item, estimate) in items.iter().zip(answered) {
                    // Later pairs of the same call are not in an earlier pair's answer.
                    let estimate = u64::from(estimate);
                    assert!(
                        estimate <= exact(*item, true) + slack,
                        "seed {seed} step {step}"
                    );
                }
            } else {
                cms.incr_by(&pairs).unwrap();
            }
            drop(cms);
            churn(&mut t, &mut rng);
            let probe: Vec<u32> = (0..60).collect();
            let estimates = t.store().cms("c").query(&keys(&probe)).unwrap();
            for (item, estimate) in probe.iter().zip(estimates) {
                let (window_count, live_count) = (exact(*item, false), exact(*item, true));
                let estimate = u64::from(estimate);
                assert!(
                    estimate >= window_count,
                    "seed {seed} step {step}: {item} {estimate} < {window_count}"
                );
                assert!(
                    estimate <= live_count + slack,
                    "seed {seed} step {step}: {item} {estimate} > {live_count} + {slack}"
                );
            }
            assert_eq!(t.store().cms("c").info().unwrap().count, total_live);
        }
    }
}

#[test]
fn cuckoo_window_counts_the_live_generations_adds_and_deletes_the_newest() {
    for (seed, cache) in [(21u64, 64 << 20), (22, 4096), (23, 0)] {
        let clock = Clock::manual(START + 77);
        let mut t = TempStore::with_options(options(&clock, cache));
        let window = Window::new(8_000, 4).unwrap();
        let reserve = CuckooOptions {
            capacity: 4000,
            fp_bits: 16,
            ..CuckooOptions::default()
        };
        t.store()
            .cuckoo("f")
            .reserve_windowed(reserve, window)
            .unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        // Every add still counted, with its time.
        let mut adds: Vec<(u64, u32)> = Vec::new();
        for step in 0..600 {
            clock.advance(rng.gen_range(0..600));
            let now = clock.now_ms();
            let live = window.live(now);
            let in_live = |at: u64| live.contains(&window.generation(at));
            let filter = t.store().cuckoo("f");
            let item = rng.gen_range(0..150u32);
            let held = adds
                .iter()
                .filter(|(at, i)| *i == item && in_live(*at))
                .count();
            match rng.gen_range(0..4) {
                0 | 1 => {
                    filter.add(key(item)).unwrap();
                    adds.push((now, item));
                }
                2 => {
                    let added = filter.add_nx(key(item)).unwrap();
                    assert_eq!(added, held == 0, "seed {seed} step {step}: ADDNX {item}");
                    if added {
                        adds.push((now, item));
                    }
                }
                _ => {
                    let deleted = filter.delete(key(item)).unwrap();
                    assert_eq!(deleted, held > 0, "seed {seed} step {step}: DEL {item}");
                    // The newest live add goes.
                    if let Some(at) = adds.iter().rposition(|(at, i)| *i == item && in_live(*at)) {
                        adds.remove(at);
                    }
                }
            }
            drop(filter);
            churn(&mut t, &mut rng);
            let probe: Vec<u32> = (0..150).collect();
            let counts: Vec<u64> = {
                let filter = t.store().cuckoo("f");
                probe
                    .iter()
                    .map(|i| filter.count(key(*i)).unwrap())
                    .collect()
            };
            for (item, count) in probe.iter().zip(counts) {
                let expected = adds
                    .iter()
                    .filter(|(at, i)| i == item && in_live(*at))
                    .count();
                assert_eq!(
                    count, expected as u64,
                    "seed {seed} step {step}: count of {item}"
                );
                let in_window = adds
                    .iter()
                    .any(|(at, i)| i == item && now <= at + window.ms);
                assert!(
                    !in_window || count > 0,
                    "seed {seed} step {step}: {item} lost"
                );
            }
            let live_adds = adds.iter().filter(|(at, _)| in_live(*at)).count() as u64;
            let info = t.store().cuckoo("f").info().unwrap();
            assert_eq!(info.inserted, live_adds, "seed {seed} step {step}");
        }
    }
}

fn key(item: u32) -> String {
    format!("i-{item}")
}

fn keys(items: &[u32]) -> Vec<String> {
    items.iter().map(|i| key(*i)).collect()
}
