//! Ribbon writes, builds and lookups racing deletes, expiry, flushes and recreation of
//! their key: every call answers or says the key is gone, and once the key is gone for
//! good, compaction leaves no page of any version (no operand or shard landed on a
//! deleted version).

mod common;

use rocksketch::{Error, RibbonError, Store};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Threads staging, looking up and building `key` until `stop`.
fn workers(store: &Store, key: &str, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    (0..3)
        .map(|role| {
            let (s, key, stop) = (store.clone(), key.to_owned(), stop.clone());
            std::thread::spawn(move || {
                let r = s.ribbon(&key);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let items: Vec<String> = (0..50).map(|i| format!("{n}:{i}")).collect();
                    let result = match role {
                        0 => r.add(&items).map(|_| ()),
                        1 => r.mexists(&items).map(|_| ()),
                        _ => r.build().map(|_| ()),
                    };
                    match result {
                        Ok(()) | Err(Error::Ribbon(RibbonError::NotFound)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect()
}

#[test]
fn staging_lookups_and_builds_racing_delete_expiry_flush_and_recreate_leave_no_pages() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let ns = store.ns(0);
    for cycle in 0..12 {
        let key = format!("rb{cycle}");
        store.ribbon(&key).reserve(0.01).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let threads = workers(&store, &key, &stop);
        if cycle % 4 == 3 {
            std::thread::sleep(std::time::Duration::from_millis(5));
            assert!(ns.delete(key.as_bytes()).unwrap());
            // Adds may recreate it at the default rate first; either way it is a ribbon.
            let _ = store.ribbon(&key).reserve(0.001);
            stop.store(true, Ordering::Relaxed);
        } else {
            common::end_key_under_writers(&store, &key, cycle, &stop);
        }
        for t in threads {
            t.join().unwrap();
        }
        // Whatever the adds recreated, a build and a lookup still agree.
        let r = store.ribbon(&key);
        if ns.exists(key.as_bytes()).unwrap() {
            r.add(&["last"]).unwrap();
            r.build().unwrap();
            assert!(r.exists("last").unwrap());
        }
        ns.flush().unwrap();
    }
    assert_eq!(
        common::pages_after_compaction(&store),
        0,
        "pages of deleted versions"
    );
}

#[test]
fn an_acknowledged_add_is_found_by_every_later_lookup_while_builds_run() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    store.ribbon("live").reserve(0.01).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let builder = {
        let (s, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            // Up to 25 generations (a key holds 32), a few milliseconds apart.
            let mut builds = 0;
            while !stop.load(Ordering::Relaxed) && builds < 25 {
                if s.ribbon("live").build().unwrap() > 0 {
                    builds += 1;
                }
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
            builds
        })
    };
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let s = store.clone();
            std::thread::spawn(move || {
                let r = s.ribbon("live");
                let mut acked: Vec<String> = Vec::new();
                for round in 0..300 {
                    let items: Vec<String> = (0..20).map(|i| format!("{w}:{round}:{i}")).collect();
                    r.add(&items).unwrap();
                    acked.extend(items);
                    // Everything this writer was told is staged is found, whatever
                    // builds sealed meanwhile (a sample of the older ones each round).
                    let probe: Vec<&String> = acked.iter().rev().step_by(7).collect();
                    let found = r.mexists(&probe).unwrap();
                    assert!(found.iter().all(|f| *f), "writer {w} round {round}");
                }
                acked
            })
        })
        .collect();
    let acked: Vec<String> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    stop.store(true, Ordering::Relaxed);
    let builds = builder.join().unwrap();
    let r = store.ribbon("live");
    assert!(r.mexists(&acked).unwrap().iter().all(|f| *f));
    r.build().unwrap();
    let info = r.info().unwrap();
    assert_eq!((info.built, info.staged), (acked.len() as u64, 0));
    assert!(r.mexists(&acked).unwrap().iter().all(|f| *f));
    assert!(builds >= 2, "builds ran during the adds: {builds}");
}
