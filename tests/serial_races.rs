//! Reads and merges racing writes must leave states some serial order gives: a t-digest
//! read that compresses racing an add, and merges racing the replacement of a source.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

#[test]
fn a_compressing_read_racing_an_add_leaves_a_serial_state() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let mut states = [0usize; 2];
    for round in 0..1500 {
        let key = format!("td{round}");
        let td = store.tdigest(&key);
        td.create(100).unwrap();
        td.add(&[1.0, 2.0, 3.0]).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let adder = {
            let (store, key, barrier) = (store.clone(), key.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                store.tdigest(&key).add(&[1e9]).unwrap();
            })
        };
        barrier.wait();
        let max = td.quantiles(&[1.0]).unwrap()[0];
        adder.join().unwrap();
        let info = td.info().unwrap();
        assert_eq!(info.observations, 4);
        if max == 3.0 {
            // Read, then add: the add's value waits unmerged (RedisBloom compresses in
            // the read, before the add); before, the read's compress operand, written
            // after the add, compressed it too.
            assert_eq!(info.unmerged_nodes, 1, "round {round}: {info:?}");
            states[0] += 1;
        } else {
            assert_eq!(max, 1e9, "round {round}");
            states[1] += 1;
        }
        store.ns(0).delete(key.as_bytes()).unwrap();
    }
    println!("read first {}, add first {}", states[0], states[1]);
}

/// Runs `replace` in a loop on another thread while `check` runs `rounds` times.
fn while_replacing(
    replace: impl Fn() + Send + 'static,
    rounds: usize,
    mut check: impl FnMut(usize),
) {
    let stop = Arc::new(AtomicBool::new(false));
    let replacer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                replace();
            }
        })
    };
    for round in 0..rounds {
        check(round);
    }
    stop.store(true, Ordering::Relaxed);
    replacer.join().unwrap();
}

#[test]
fn a_merge_racing_the_recreation_of_its_source_reads_one_version_of_it() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let values = |n: usize| (0..n).map(|v| v as f64).collect::<Vec<f64>>();
    for (key, n) in [("old", 600), ("new", 2000)] {
        store.tdigest(key).create(100).unwrap();
        store.tdigest(key).add(&values(n)).unwrap();
    }
    // Another client deletes `src` and makes it again (a new version, written in one
    // batch by a merge into the missing key), from one digest and then the other.
    let s = store.clone();
    let replace = move || {
        for from in ["old", "new"] {
            s.ns(0).delete(b"src").unwrap();
            s.tdigest("src").merge(&[from], None, true).unwrap();
        }
    };
    let mut seen_both = [false; 2];
    while_replacing(replace, 3000, |round| {
        match store.tdigest("dest").merge(&["src"], None, true) {
            Ok(()) => {}
            Err(rocksketch::Error::TDigest(rocksketch::TDigestError::KeyDoesNotExist)) => return,
            Err(err) => panic!("{err}"),
        }
        let seen = store.tdigest("dest").info().unwrap().observations;
        assert!(
            seen == 600 || seen == 2000,
            "round {round}: the merge saw {seen} observations, neither version"
        );
        seen_both[usize::from(seen == 2000)] = true;
    });
    println!(
        "saw the old version: {}, the new: {}",
        seen_both[0], seen_both[1]
    );
}

#[test]
fn a_count_min_merge_racing_the_recreation_of_its_source_reads_one_version_of_it() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    for (key, count) in [("old", 600u64), ("new", 2000)] {
        store.cms(key).init_by_dim(1000, 3).unwrap();
        store.cms(key).incr_by(&[("x", count)]).unwrap();
    }
    store.cms("src").init_by_dim(1000, 3).unwrap();
    store.cms("src").merge(&[("old", 1)]).unwrap();
    store.cms("dest").init_by_dim(1000, 3).unwrap();
    // Each `CMS.MERGE` into `src` writes a new version of it.
    let s = store.clone();
    let replace = move || {
        s.cms("src").merge(&[("old", 1)]).unwrap();
        s.cms("src").merge(&[("new", 1)]).unwrap();
    };
    while_replacing(replace, 3000, |round| {
        store.cms("dest").merge(&[("src", 1)]).unwrap();
        let seen = store.cms("dest").query(&["x"]).unwrap()[0];
        assert!(
            seen == 600 || seen == 2000,
            "round {round}: the merge saw {seen}, neither version"
        );
    });
}

/// Concurrent adds to one digest reach RocksDB in an order the page cache does not see:
/// whatever it holds must be what RocksDB holds (the same answers after a restart, when
/// the cache is empty).
#[test]
fn concurrent_adds_leave_the_cached_digest_equal_to_the_stored_one() {
    for round in 0..20 {
        let mut t = common::TempStore::new();
        let store = t.store().clone();
        // Small compression: buffers fill and compress often, so order shows.
        store.tdigest("td").create(5).unwrap();
        let adders: Vec<_> = (0..4)
            .map(|a| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for n in 0..300 {
                        let v = f64::from(a * 1000 + n);
                        store.tdigest("td").add(&[v, -v]).unwrap();
                    }
                })
            })
            .collect();
        // Reads fill the cache while the adds go on.
        for _ in 0..200 {
            store.tdigest("td").info().unwrap();
        }
        for adder in adders {
            adder.join().unwrap();
        }
        let cached = store.tdigest("td").info().unwrap();
        drop(store);
        t.reopen();
        let stored = t.store().tdigest("td").info().unwrap();
        assert_eq!(cached.observations, 2400);
        assert_eq!(cached, stored, "round {round}");
    }
}

/// `TDIGEST.MERGE` compresses each source it read (RedisBloom compresses them in
/// place): that compression must never take in a value added after the merge read the
/// source.
#[test]
fn a_merge_never_compresses_a_sources_later_adds() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    for round in 0..1500 {
        let src = format!("src{round}");
        store.tdigest(&src).create(100).unwrap();
        store.tdigest(&src).add(&[1.0, 2.0, 3.0]).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let adder = {
            let (store, src, barrier) = (store.clone(), src.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                store.tdigest(&src).add(&[1e9]).unwrap();
            })
        };
        barrier.wait();
        store.tdigest("dest").merge(&[&src], None, true).unwrap();
        adder.join().unwrap();
        let merged = store.tdigest("dest").info().unwrap().observations;
        let source = store.tdigest(&src).info().unwrap();
        if merged == 3 {
            assert!(
                source.unmerged_nodes >= 1,
                "round {round}: the source's later add was compressed: {source:?}"
            );
        } else {
            assert_eq!(merged, 4, "round {round}");
        }
        store.ns(0).delete(src.as_bytes()).unwrap();
    }
}
