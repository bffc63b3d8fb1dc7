//! Flipped bytes in a page or an operand, written raw into the pages column family: reads
//! of that key report a corruption error naming it, every other key stays readable, the
//! store stays writable, and flushes and compactions keep working (a failed merge would
//! have made RocksDB read-only).
//!
//! The damage is done behind the store's back, as a disk would do it. A page the
//! hot-page cache holds is answered from memory until it leaves the cache, so the tests
//! damage pages that are not cached, or reopen the store (cold cache) after the damage.

mod common;

use rocksketch::{Error, Store, PAGES_CF};

/// The page keys of `key` (namespace 0) present in the pages column family.
fn page_keys(store: &Store, key: &[u8]) -> Vec<Vec<u8>> {
    let mut prefix = 0u16.to_be_bytes().to_vec();
    prefix.extend_from_slice(&(key.len() as u32).to_be_bytes());
    prefix.extend_from_slice(key);
    let db = store.db().unwrap();
    let cf = db.cf_handle(PAGES_CF).unwrap();
    db.iterator_cf(
        cf,
        rocksdb::IteratorMode::From(&prefix, rocksdb::Direction::Forward),
    )
    .map(|item| item.unwrap())
    .take_while(|(k, _)| k.starts_with(&prefix))
    .map(|(k, _)| k.to_vec())
    .collect()
}

fn assert_corruption_of(result: rocksketch::Result<impl std::fmt::Debug>, key: &str) {
    match result {
        Err(err @ Error::Corruption { .. }) => {
            let Error::Corruption { key: named, .. } = &err else {
                unreachable!()
            };
            assert_eq!(named, key.as_bytes());
            assert!(err.to_string().contains(&format!("key '{key}'")), "{err}");
        }
        other => panic!("expected a corruption error for {key}, got {other:?}"),
    }
}

/// Keys that must stay readable and writable whatever happens to the others.
fn bystanders_work(store: &Store, round: u32) {
    let cms = store.cms("other-cms");
    cms.incr_by(&[("a", 1)]).unwrap();
    assert_eq!(cms.query(&["a"]).unwrap(), vec![round + 1]);
    let bloom = store.bloom("other-bloom");
    bloom.add(format!("item-{round}")).unwrap();
    for r in 0..=round {
        assert!(bloom.exists(format!("item-{r}")).unwrap());
    }
}

fn setup(store: &Store) {
    store.cms("other-cms").init_by_dim(100, 3).unwrap();
    store.cms("other-cms").incr_by(&[("a", 1)]).unwrap();
    store.bloom("other-bloom").add("item-0").unwrap();
    store.cms("sketch").init_by_dim(100, 3).unwrap();
    store.cms("sketch").incr_by(&[("x", 4)]).unwrap();
    store.bloom("filter").reserve(0.01, 50, 0).unwrap();
    for i in 0..20 {
        store.bloom("filter").add(format!("f{i}")).unwrap();
    }
    store.compact().unwrap();
}

#[test]
fn a_page_with_flipped_bytes() {
    let t = common::TempStore::new();
    let store = t.store();
    setup(store);
    bystanders_work(store, 1);
    let db = store.db().unwrap();
    let cf = db.cf_handle(PAGES_CF).unwrap();
    // Every counter page of the sketch (not its tally) gets one byte flipped.
    for key in page_keys(store, b"sketch") {
        let mut value = db.get_cf(cf, &key).unwrap().unwrap();
        if value.len() > 100 {
            value[40] ^= 0x08;
            db.put_cf(cf, &key, value).unwrap();
        }
    }
    assert_corruption_of(store.cms("sketch").query(&["x"]), "sketch");
    bystanders_work(store, 2);
    // Writes to the damaged key still go in (blind); flushes and compactions work.
    store.cms("sketch").incr_by(&[("x", 1)]).unwrap();
    store.compact().unwrap();
    assert_corruption_of(store.cms("sketch").query(&["x"]), "sketch");
    bystanders_work(store, 3);
    // Deleting the damaged key recovers it.
    assert!(store.ns(0).delete(b"sketch").unwrap());
    store.cms("sketch").init_by_dim(100, 3).unwrap();
    assert_eq!(store.cms("sketch").query(&["x"]).unwrap(), vec![0]);
}

#[test]
fn an_operand_with_flipped_bytes() {
    let mut t = common::TempStore::new();
    let store = t.store().clone();
    setup(&store);
    let db = store.db().unwrap();
    let cf = db.cf_handle(PAGES_CF).unwrap();
    let keys = page_keys(&store, b"filter");
    // A 50-item filter is one bit page plus the tally page.
    assert_eq!(keys.len(), 2);
    let page_key = keys
        .iter()
        .find(|k| db.get_cf(cf, k).unwrap().unwrap().len() > 30)
        .unwrap();
    let mut operand = rocksketch_merge::bits::BitDelta::sparse(
        rocksketch_merge::bits::BitPage::decode(&db.get_cf(cf, page_key).unwrap().unwrap())
            .unwrap()
            .page_bits(),
        vec![1, 2, 3],
    )
    .unwrap()
    .encode();
    let last = operand.len() - 1;
    operand[last] ^= 0x01;
    db.merge_cf(cf, page_key, &operand).unwrap();
    // The filter's pages were read (and cached) by its adds: reopen, as after a crash.
    drop(db);
    drop(store);
    t.reopen();
    let store = t.store().clone();
    let db = store.db().unwrap();
    let cf = db.cf_handle(PAGES_CF).unwrap();
    // Read while the operand sits in the memtable, after a flush, after a compaction.
    for step in 0..3 {
        assert_corruption_of(store.bloom("filter").exists("f1"), "filter");
        assert!(store.skipped_operands() > 0);
        bystanders_work(&store, 1 + step);
        match step {
            0 => db.flush_cf(cf).unwrap(),
            _ => store.compact().unwrap(),
        }
    }
    drop(db);
    drop(store);
    t.reopen();
    assert_corruption_of(t.store().bloom("filter").exists("f1"), "filter");
    assert_eq!(t.store().cms("other-cms").query(&["a"]).unwrap(), vec![4]);
}

#[test]
fn corruption_reaches_redis_clients_as_an_error_reply() {
    let mut t = common::TempStore::new();
    setup(t.store());
    {
        let store = t.store();
        let db = store.db().unwrap();
        let cf = db.cf_handle(PAGES_CF).unwrap();
        for key in page_keys(store, b"filter") {
            db.put_cf(cf, &key, b"not a page").unwrap();
        }
    }
    t.reopen();
    let store = t.store();
    let ns = store.ns(0);
    let reply = rocksketch::command::execute(&ns, &common::args(&["BF.EXISTS", "filter", "f1"]));
    let rocksketch::command::Reply::Error(text) = reply else {
        panic!("an error reply, got {reply:?}")
    };
    assert!(
        text.starts_with("ERR corruption in") && text.contains("'filter'"),
        "{text}"
    );
    let reply = rocksketch::command::execute(&ns, &common::args(&["CMS.QUERY", "other-cms", "a"]));
    assert_eq!(
        reply,
        rocksketch::command::Reply::Array(vec![rocksketch::command::Reply::Int(1)])
    );
}
