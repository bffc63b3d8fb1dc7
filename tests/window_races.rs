//! Windowed writes racing the expiry of their generations, and their key's `DEL`,
//! expiry and recreation: an acknowledged add is found for its whole window whatever
//! the sweep dropped meanwhile, no page of a dead generation or a deleted version
//! survives compaction, and nothing panics or fails but with the errors a client is
//! told.

mod common;

use common::TempStore;
use rand::{Rng, SeedableRng};
use rocksketch::{Clock, CuckooOptions, Store, StoreOptions, Window};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const START: u64 = 1_700_000_000_000;

/// Every page key of a windowed key names its generation: `... | 0xFFFE | gen u64 BE |
/// sub u16 | page u32`. The generations of the pages left in the pages column family.
fn stored_generations(store: &Store) -> Vec<u64> {
    let db = store.db().unwrap();
    let cf = db.cf_handle(rocksketch::PAGES_CF).unwrap();
    db.iterator_cf(cf, rocksdb::IteratorMode::Start)
        .map(|item| {
            let (key, _) = item.unwrap();
            let n = key.len();
            assert_eq!(
                &key[n - 16..n - 14],
                &[0xFF, 0xFE],
                "a page outside any generation"
            );
            u64::from_be_bytes(key[n - 14..n - 6].try_into().unwrap())
        })
        .collect()
}

#[test]
fn adds_racing_generation_expiry_stay_for_their_window_and_dead_generations_go() {
    let clock = Clock::manual(START);
    let t = TempStore::with_options(StoreOptions {
        clock: clock.clone(),
        ..StoreOptions::default()
    });
    let store = t.store().clone();
    let window = Window::new(200, 4).unwrap();
    store
        .bloom("bf")
        .reserve_windowed(0.0001, 10_000, 2, window)
        .unwrap();
    let fp16 = CuckooOptions {
        capacity: 10_000,
        fp_bits: 16,
        ..CuckooOptions::default()
    };
    store.cuckoo("cf").reserve_windowed(fp16, window).unwrap();
    store
        .cms("cms")
        .init_by_dim_windowed(4000, 5, window)
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let log: Arc<Mutex<Vec<(u64, String, u32)>>> = Arc::default();
    let writes = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..3u32)
        .map(|w| {
            let (s, stop, log, writes, clock) = (
                store.clone(),
                stop.clone(),
                log.clone(),
                writes.clone(),
                clock.clone(),
            );
            std::thread::spawn(move || {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let item = format!("w{w}:{n}");
                    // The add's generation is no older than the one of this time.
                    let at = clock.now_ms();
                    match n % 4 {
                        0 => assert!(s.bloom("bf").add(&item).unwrap()),
                        1 => s.bloom("bf").add_blind(&[&item]).unwrap(),
                        2 => s.cuckoo("cf").add(&item).unwrap(),
                        _ => s.cms("cms").incr_by(&[(&item, 1)]).unwrap(),
                    }
                    log.lock().unwrap().push((at, item, n % 4));
                    writes.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
            })
        })
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for tick in 0..1500 {
        clock.advance(rng.gen_range(0..15));
        store.sweep_expired(None, 1000).unwrap();
        if tick % 50 == 0 {
            store.flush().unwrap();
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    assert!(writes.load(Ordering::Relaxed) > 400, "too few writes raced");
    let now = clock.now_ms();
    let log = log.lock().unwrap();
    let mut checked = 0;
    for (at, item, kind) in log.iter().filter(|(at, _, _)| at + window.ms >= now) {
        let found = match kind {
            0 | 1 => store.bloom("bf").exists(item).unwrap(),
            2 => store.cuckoo("cf").exists(item).unwrap(),
            _ => store.cms("cms").query(&[item]).unwrap()[0] >= 1,
        };
        assert!(found, "{item} added at {at} lost at {now}");
        checked += 1;
    }
    assert!(checked > 0);
    store.sweep_expired(None, 1000).unwrap();
    store.compact().unwrap();
    let live = window.live(now);
    let stored = stored_generations(&store);
    assert!(!stored.is_empty());
    for g in stored {
        assert!(
            live.contains(&g),
            "a page of dead generation {g} (live {live:?})"
        );
    }
}

/// Windowed writes while their key is deleted, expired or flushed and made again with
/// a window: writers see only the errors a client is told, adds after the last
/// recreation are all found, and no page of a deleted version survives compaction.
#[test]
fn windowed_writes_racing_delete_and_recreation_lose_nothing_after_it() {
    let t = TempStore::new();
    let store = t.store().clone();
    let window = Window::new(60_000, 8).unwrap();
    for cycle in 0..12u32 {
        let key = format!("k{cycle}");
        let create = |s: &Store| match cycle % 2 {
            0 => s.bloom(&key).reserve_windowed(0.01, 1000, 2, window),
            _ => s.cms(&key).init_by_dim_windowed(500, 4, window),
        };
        create(&store).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..3u32)
            .map(|w| {
                let (s, key, stop) = (store.clone(), key.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut n = 0u32;
                    while !stop.load(Ordering::Relaxed) {
                        let item = format!("w{w}:{n}");
                        let written = match cycle % 2 {
                            0 => s.bloom(&key).add_blind(&[&item]),
                            _ => s.cms(&key).incr_by(&[(&item, 1)]),
                        };
                        match written {
                            Ok(()) => {}
                            // The sketch was deleted under the increment.
                            Err(rocksketch::Error::Cms(rocksketch::CmsError::KeyDoesNotExist)) => {}
                            Err(e) => panic!("{e}"),
                        }
                        n += 1;
                    }
                })
            })
            .collect();
        common::end_key_under_writers(&store, &key, cycle / 2, &stop);
        for w in writers {
            w.join().unwrap();
        }
        // The writers may have made a plain filter (BF.ADD's defaults) meanwhile.
        store.ns(0).delete(key.as_bytes()).unwrap();
        create(&store).unwrap();
        let items: Vec<String> = (0..50).map(|i| format!("after {i}")).collect();
        match cycle % 2 {
            0 => {
                store.bloom(&key).add_blind(&items).unwrap();
                assert!(store
                    .bloom(&key)
                    .mexists(&items)
                    .unwrap()
                    .iter()
                    .all(|f| *f));
            }
            _ => {
                let pairs: Vec<(&String, u64)> = items.iter().map(|i| (i, 2)).collect();
                store.cms(&key).incr_by(&pairs).unwrap();
                let counts = store.cms(&key).query(&items).unwrap();
                assert!(counts.iter().all(|c| *c >= 2), "{key}: {counts:?}");
            }
        }
        assert!(store.ns(0).delete(key.as_bytes()).unwrap());
    }
    assert_eq!(
        common::pages_after_compaction(&store),
        0,
        "pages of deleted versions"
    );
}
