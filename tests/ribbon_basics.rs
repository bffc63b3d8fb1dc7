//! Ribbon filters through the library: staging, builds, generations, restarts and
//! compactions; no built or staged item is ever missed.

mod common;

use common::TempStore;
use rocksketch::{Error, RibbonError, StoreOptions};

fn item(i: u64) -> Vec<u8> {
    format!("item:{i}").into_bytes()
}

fn items(range: std::ops::Range<u64>) -> Vec<Vec<u8>> {
    range.map(item).collect()
}

/// All of `range` is found (no false negatives).
fn all_found(t: &TempStore, key: &str, range: std::ops::Range<u64>) -> bool {
    let wanted = items(range);
    t.store()
        .ribbon(key)
        .mexists(&wanted)
        .unwrap()
        .iter()
        .all(|f| *f)
}

/// Of `n` items never added, how many are reported present.
fn false_positives(t: &TempStore, key: &str, n: u64) -> u64 {
    let absent = items(1 << 40..(1 << 40) + n);
    let found = t.store().ribbon(key).mexists(&absent).unwrap();
    found.iter().filter(|f| **f).count() as u64
}

#[test]
fn staged_items_are_found_exactly_then_built() {
    let t = TempStore::new();
    let r = t.store().ribbon("r");
    r.reserve(1.0 / 128.0).unwrap();
    assert_eq!(r.add(&items(0..1000)).unwrap(), 1000);
    assert!(all_found(&t, "r", 0..1000));
    // Staged items are exact: no false positives at all.
    assert_eq!(false_positives(&t, "r", 20_000), 0);
    let info = r.info().unwrap();
    assert_eq!((info.generations, info.built, info.staged), (0, 0, 1000));
    assert_eq!(info.result_bits, 7);
    // Repeats stage twice but build once.
    r.add(&items(0..10)).unwrap();
    assert_eq!(r.build().unwrap(), 1000);
    assert!(all_found(&t, "r", 0..1000));
    let info = r.info().unwrap();
    assert_eq!((info.generations, info.built, info.staged), (1, 1000, 0));
    assert!(info.bytes > 0);
    // A build with nothing staged makes no generation.
    assert_eq!(r.build().unwrap(), 0);
    assert_eq!(r.info().unwrap().generations, 1);
}

#[test]
fn generations_restarts_and_compactions_lose_nothing() {
    let mut t = TempStore::new();
    t.store().ribbon("g").reserve(0.01).unwrap();
    for generation in 0..4u64 {
        let range = generation * 30_000..(generation + 1) * 30_000;
        t.store().ribbon("g").add(&items(range.clone())).unwrap();
        if generation == 2 {
            t.reopen(); // staged items survive a restart
        }
        assert!(all_found(&t, "g", range.clone()));
        assert_eq!(t.store().ribbon("g").build().unwrap(), 30_000);
        t.store().compact().unwrap();
        t.reopen();
        assert!(
            all_found(&t, "g", 0..range.end),
            "after generation {generation}"
        );
    }
    let info = t.store().ribbon("g").info().unwrap();
    assert_eq!((info.generations, info.built), (4, 120_000));
    // Four generations: each adds up to 2^-7 of false positives.
    let fp = false_positives(&t, "g", 100_000);
    assert!(fp <= 4 * 100_000 / 128 + 4 * 60, "{fp}");
}

#[test]
fn adds_during_a_build_stay_staged() {
    let t = TempStore::new();
    let store = t.store().clone();
    store.ribbon("b").add(&items(0..200_000)).unwrap();
    std::thread::scope(|s| {
        let builder = s.spawn(|| store.ribbon("b").build().unwrap());
        let mut next = 200_000;
        while !builder.is_finished() {
            store.ribbon("b").add(&items(next..next + 100)).unwrap();
            next += 100;
        }
        // The build seals what was staged when it began: at least the first 200 000.
        let first = builder.join().unwrap();
        assert!((200_000..=next).contains(&first), "{first}");
        assert!(all_found(&t, "b", 0..next));
        let info = store.ribbon("b").info().unwrap();
        assert_eq!((info.built, info.built + info.staged), (first, next));
        assert_eq!(store.ribbon("b").build().unwrap(), next - first);
        assert!(all_found(&t, "b", 0..next));
    });
}

#[test]
fn errors_and_wrong_types() {
    let t = TempStore::new();
    let store = t.store();
    let r = store.ribbon("e");
    for bad in [0.0, 1.0, -1.0, 1.5, f64::NAN, 1e-10] {
        assert!(matches!(
            r.reserve(bad),
            Err(Error::Ribbon(RibbonError::ErrorRateRange))
        ));
    }
    assert!(matches!(
        r.info(),
        Err(Error::Ribbon(RibbonError::NotFound))
    ));
    assert!(matches!(
        r.build(),
        Err(Error::Ribbon(RibbonError::NotFound))
    ));
    assert_eq!(r.mexists(&[b"x"]).unwrap(), vec![false]);
    // RIBBON.ADD creates a missing key at the default error rate.
    r.add(&[b"x"]).unwrap();
    assert_eq!(r.info().unwrap().error, rocksketch::ribbon::DEFAULT_ERROR);
    assert!(matches!(
        r.reserve(0.1),
        Err(Error::Ribbon(RibbonError::KeyExists))
    ));
    store.cms("c").init_by_dim(10, 2).unwrap();
    let c = store.ribbon("c");
    assert!(matches!(c.add(&[b"x"]), Err(Error::WrongType)));
    assert!(matches!(c.exists(b"x"), Err(Error::WrongType)));
    assert!(matches!(c.build(), Err(Error::WrongType)));
    assert!(matches!(
        store.cms("e").query(&["x"]),
        Err(Error::WrongType)
    ));
}

#[test]
fn delete_during_a_build_writes_nothing_stray() {
    let t = TempStore::with_options(StoreOptions::default());
    let store = t.store().clone();
    for round in 0..5 {
        store.ribbon("d").add(&items(0..50_000)).unwrap();
        std::thread::scope(|s| {
            let builder = s.spawn(|| store.ribbon("d").build());
            std::thread::sleep(std::time::Duration::from_millis(round * 3));
            store.ns(0).delete(b"d").unwrap();
            // Before the delete, the build seals; after it, the key is not found.
            match builder.join().unwrap() {
                Ok(n) => assert_eq!(n, 50_000),
                Err(err) => assert!(matches!(err, Error::Ribbon(RibbonError::NotFound))),
            }
        });
        // Whatever the order, the key is gone and nothing of it remains.
        assert!(!store.ns(0).exists(b"d").unwrap());
        assert_eq!(
            store.ribbon("d").mexists(&[b"item:1"]).unwrap(),
            vec![false]
        );
    }
    store.compact().unwrap();
    let live = store.pages_property("rocksdb.estimate-num-keys").unwrap();
    assert_eq!(live, Some(0), "pages of deleted keys remain");
}
