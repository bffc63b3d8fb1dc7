//! Key expiry: an expired key is invisible to every read at once, its metadata and pages
//! are reclaimed by the sweep (or by a recreate), and a recreated key never shows old
//! contents.

mod common;

use rocksketch::{now_ms, CmsError, Error, Store, PAGES_CF};
use std::thread::sleep;
use std::time::Duration;

/// Page records (values or operands) of any version of `key` in namespace 0, as a
/// full scan of the pages column family after a compaction sees them.
fn page_records(store: &Store, key: &[u8]) -> usize {
    let mut prefix = 0u16.to_be_bytes().to_vec();
    prefix.extend_from_slice(&(key.len() as u32).to_be_bytes());
    prefix.extend_from_slice(key);
    let db = store.db().unwrap();
    let cf = db.cf_handle(PAGES_CF).unwrap();
    db.iterator_cf(cf, rocksdb::IteratorMode::Start)
        .map(|item| item.unwrap().0)
        .filter(|k| k.starts_with(&prefix))
        .count()
}

#[test]
fn an_expired_key_reads_as_absent_at_once_and_the_sweep_reclaims_it() {
    let t = common::TempStore::new();
    let store = t.store();
    let ns = store.ns(0);
    let cms = store.cms("visits");
    cms.init_by_dim(1000, 4).unwrap();
    cms.incr_by(&[("home", 3)]).unwrap();
    store.bloom("seen").add("alice").unwrap();
    let at = now_ms() + 300;
    assert!(ns.expire_at(b"visits", at).unwrap());
    assert_eq!(ns.expire_time(b"visits").unwrap(), Some(at));
    assert_eq!(ns.expire_time(b"seen").unwrap(), Some(0));
    assert_eq!(ns.expire_time(b"nothing").unwrap(), None);
    assert!(!ns.expire_at(b"nothing", at).unwrap());
    assert_eq!(cms.query(&["home"]).unwrap(), vec![3]);

    sleep(Duration::from_millis(400));
    assert!(!ns.exists(b"visits").unwrap());
    assert!(matches!(
        cms.query(&["home"]),
        Err(Error::Cms(CmsError::KeyDoesNotExist))
    ));
    assert!(matches!(
        cms.incr_by(&[("home", 1)]),
        Err(Error::Cms(CmsError::KeyDoesNotExist))
    ));
    let keys: Vec<Vec<u8>> = ns.keys().unwrap().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, vec![b"seen".to_vec()]);
    assert_eq!(ns.expire_time(b"visits").unwrap(), None);

    store.compact().unwrap();
    assert!(
        page_records(store, b"visits") > 0,
        "not reclaimed before the sweep"
    );
    let (deleted, next) = store.sweep_expired(None, 1000).unwrap();
    assert_eq!((deleted, next), (1, None));
    store.compact().unwrap();
    assert_eq!(page_records(store, b"visits"), 0);
    assert!(page_records(store, b"seen") > 0);
    // A new sketch at the key starts from zero.
    cms.init_by_dim(1000, 4).unwrap();
    assert_eq!(cms.query(&["home"]).unwrap(), vec![0]);
}

#[test]
fn the_sweep_walks_in_steps_and_spares_live_keys() {
    let t = common::TempStore::new();
    let store = t.store();
    for ns_id in [0u16, 3] {
        let ns = store.ns(ns_id);
        for i in 0..25 {
            let key = format!("k{i:02}");
            ns.bloom(&key).add("x").unwrap();
            if i % 2 == 0 {
                assert!(ns.expire_at(key.as_bytes(), now_ms() + 50).unwrap());
            }
        }
    }
    sleep(Duration::from_millis(100));
    let (mut total, mut cursor, mut steps) = (0, None, 0);
    loop {
        let (deleted, next) = store.sweep_expired(cursor.as_deref(), 7).unwrap();
        total += deleted;
        steps += 1;
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(total, 26);
    assert!(steps >= 50 / 7);
    for ns_id in [0u16, 3] {
        assert_eq!(store.ns(ns_id).keys().unwrap().len(), 12);
    }
}

#[test]
fn expire_in_the_past_deletes_persist_keeps_and_conditions_apply() {
    let t = common::TempStore::new();
    let store = t.store();
    let ns = store.ns(0);
    store.bloom("b").add("x").unwrap();
    store.bloom("gone").add("x").unwrap();
    assert!(ns.expire_at(b"gone", now_ms() - 1).unwrap());
    assert!(!ns.exists(b"gone").unwrap());
    store.compact().unwrap();
    assert_eq!(
        page_records(store, b"gone"),
        0,
        "deleted at once, pages too"
    );

    let far = now_ms() + 3_600_000;
    // NX-style: only without an expiry.
    let nx = |current: Option<u64>| current.is_none();
    assert!(ns.expire_at_if(b"b", far, nx).unwrap());
    assert!(!ns.expire_at_if(b"b", far + 1, nx).unwrap());
    assert_eq!(ns.expire_time(b"b").unwrap(), Some(far));
    assert!(ns.persist(b"b").unwrap());
    assert!(!ns.persist(b"b").unwrap());
    assert_eq!(ns.expire_time(b"b").unwrap(), Some(0));
    assert!(!ns.persist(b"missing").unwrap());
}

#[test]
fn recreating_an_expired_unswept_key_drops_its_old_pages() {
    let t = common::TempStore::new();
    let store = t.store();
    let ns = store.ns(0);
    let cms = store.cms("c");
    cms.init_by_dim(500, 3).unwrap();
    cms.incr_by(&[("a", 5)]).unwrap();
    let bloom = store.bloom("b");
    bloom.add("x").unwrap();
    assert!(ns.expire_at(b"c", now_ms() + 50).unwrap());
    assert!(ns.expire_at(b"b", now_ms() + 50).unwrap());
    sleep(Duration::from_millis(100));
    // No sweep: the new version replaces the expired record and removes its pages.
    cms.init_by_dim(500, 3).unwrap();
    bloom.reserve(0.01, 10, 0).unwrap();
    store.compact().unwrap();
    assert_eq!(page_records(store, b"c"), 0);
    assert_eq!(page_records(store, b"b"), 0);
    assert_eq!(cms.query(&["a"]).unwrap(), vec![0]);
    assert!(!bloom.exists("x").unwrap());
    assert_eq!(ns.expire_time(b"c").unwrap(), Some(0));
}

#[test]
fn expiry_survives_a_reopen() {
    let mut t = common::TempStore::new();
    t.store().bloom("b").add("x").unwrap();
    let at = now_ms() + 3_600_000;
    assert!(t.store().ns(0).expire_at(b"b", at).unwrap());
    t.reopen();
    assert_eq!(t.store().ns(0).expire_time(b"b").unwrap(), Some(at));
    assert!(t.store().bloom("b").exists("x").unwrap());
}
