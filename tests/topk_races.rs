//! Top-K writes racing a `DEL`, an expiry or a `FLUSHDB` of their key: nothing lands on a
//! deleted version (no page survives a full compaction), and concurrent adds with
//! replies on one key are serialized: every add is counted.

mod common;

use rocksketch::{Error, TopKError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn adds_racing_delete_expiry_and_flush_leave_no_pages() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let ns = store.ns(0);
    for cycle in 0..9 {
        let key = format!("tk{cycle}");
        store.topk(&key).reserve(5, 50, 3, 0.9).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..3)
            .map(|i| {
                let (s, key, stop) = (store.clone(), key.clone(), stop.clone());
                std::thread::spawn(move || {
                    let top = s.topk(&key);
                    while !stop.load(Ordering::Relaxed) {
                        let result = match i {
                            0 => top.add(&[b"a".as_slice(), b"b"]).map(|_| ()),
                            1 => top.add_blind(&[(b"c".as_slice(), 3)]),
                            _ => top.list().map(|_| ()),
                        };
                        match result {
                            Ok(()) | Err(Error::TopK(TopKError::KeyDoesNotExist)) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                })
            })
            .collect();
        common::end_key_under_writers(&store, &key, cycle, &stop);
        for t in threads {
            t.join().unwrap();
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
fn concurrent_adds_with_replies_are_all_counted() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    // Decay 1 and one counter per item: no two items share a cell (width 1000, and the
    // items are checked to land apart), so counts are exact.
    store.topk("hot").reserve(10, 1000, 1, 1.0).unwrap();
    let items: Vec<String> = (0..4).map(|i| format!("user:{i}")).collect();
    common::assert_apart_in_top_k(&items, 1000);
    let threads: Vec<_> = items
        .iter()
        .map(|item| {
            let (s, item) = (store.clone(), item.clone());
            std::thread::spawn(move || {
                for _ in 0..500 {
                    let replies = s.topk("hot").add(&[item.as_bytes()]).unwrap();
                    assert_eq!(replies, vec![None]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let counts = store.topk("hot").count(&items).unwrap();
    assert_eq!(counts, vec![500; 4]);
    let list = store.topk("hot").list().unwrap();
    assert_eq!(list.len(), 4);
    assert!(list.iter().all(|(_, c)| *c == 500));
}
