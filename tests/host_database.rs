//! A host database that owns its `rocksdb::DB` (with column families of its own names)
//! registers rocksketch's merge operator and uses the typed API over its handle.

use rocksdb::{ColumnFamilyDescriptor, Options, DB};
use rocksketch::{register_merge_operator, ColumnFamilies, Store, StoreOptions};
use std::sync::Arc;

fn open_host(path: &std::path::Path) -> Arc<DB> {
    let mut db_opts = Options::default();
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    let mut pages = Options::default();
    register_merge_operator(&mut pages);
    let cfs = vec![
        ColumnFamilyDescriptor::new("host_data", Options::default()),
        ColumnFamilyDescriptor::new("sketch_meta", Options::default()),
        ColumnFamilyDescriptor::new("sketch_pages", pages),
    ];
    Arc::new(DB::open_cf_descriptors(&db_opts, path, cfs).unwrap())
}

fn names() -> ColumnFamilies {
    ColumnFamilies {
        meta: "sketch_meta".to_owned(),
        pages: "sketch_pages".to_owned(),
    }
}

#[test]
fn typed_api_over_a_host_database() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_host(dir.path());
        db.put_cf(db.cf_handle("host_data").unwrap(), b"own", b"data")
            .unwrap();
        let store = Store::with_db(db.clone(), names(), StoreOptions::default()).unwrap();
        let cms = store.cms("k");
        cms.init_by_dim(100, 3).unwrap();
        cms.incr_by(&[("a", 4), ("a", 1)]).unwrap();
        assert!(store.bloom("f").add("x").unwrap());
        // The host flushes and compacts its own way; merges run in RocksDB's threads.
        store.compact().unwrap();
        assert_eq!(cms.query(&["a"]).unwrap(), vec![5]);
    }
    let db = open_host(dir.path());
    let store = Store::with_db(db.clone(), names(), StoreOptions::default()).unwrap();
    assert_eq!(store.cms("k").query(&["a"]).unwrap(), vec![5]);
    assert!(store.bloom("f").exists("x").unwrap());
    let own = db
        .get_cf(db.cf_handle("host_data").unwrap(), b"own")
        .unwrap();
    assert_eq!(own.as_deref(), Some(&b"data"[..]));
}

#[test]
fn missing_column_families_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DB::open_default(dir.path()).unwrap());
    let err = Store::with_db(db, names(), StoreOptions::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("sketch_meta"), "{err}");
}
