//! Counts survive closing and reopening the database, with pages in the memtable (WAL
//! replay), in flushed files, and after compaction.

mod common;

#[test]
fn reopen_keeps_counts() {
    let mut t = common::TempStore::new();
    let cms = t.store().cms("k");
    cms.init_by_dim(100, 4).unwrap();
    cms.incr_by(&[("a", 5), ("b", 7)]).unwrap();
    drop(cms);
    t.reopen(); // WAL replay
    let cms = t.store().cms("k");
    assert_eq!(cms.query(&["a", "b", "c"]).unwrap(), vec![5, 7, 0]);
    cms.incr_by(&[("a", 1)]).unwrap();
    t.store().compact().unwrap();
    drop(cms);
    t.reopen();
    let cms = t.store().cms("k");
    assert_eq!(cms.query(&["a", "b"]).unwrap(), vec![6, 7]);
    assert_eq!(cms.info().unwrap().count, 13);
    assert_eq!(cms.dims().unwrap(), (100, 4));
}
