//! Deleting a key and creating it again reads zeros: the new version never sees the
//! old pages, whether they sit in the memtable or in compacted files.

mod common;

use rocksketch::{CmsError, Error, KeyType};

#[test]
fn delete_then_recreate_reads_zeros() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let cms = ns.cms("k");
    cms.init_by_dim(50, 3).unwrap();
    cms.incr_by(&[("x", 9)]).unwrap();
    t.store().compact().unwrap();
    cms.incr_by(&[("x", 1)]).unwrap(); // one more operand, still in the memtable
    assert_eq!(ns.key_type(b"k").unwrap(), Some(KeyType::Cms));

    assert!(ns.delete(b"k").unwrap());
    assert!(!ns.delete(b"k").unwrap());
    assert!(!ns.exists(b"k").unwrap());
    assert!(matches!(
        cms.query(&["x"]),
        Err(Error::Cms(CmsError::KeyDoesNotExist))
    ));

    cms.init_by_dim(50, 3).unwrap();
    assert_eq!(cms.query(&["x"]).unwrap(), vec![0]);
    assert_eq!(cms.info().unwrap().count, 0);
    t.store().compact().unwrap();
    assert_eq!(cms.query(&["x"]).unwrap(), vec![0]);

    // Recreated with other dimensions, the layout follows the new metadata.
    ns.delete(b"k").unwrap();
    cms.init_by_dim(7, 2).unwrap();
    cms.incr_by(&[("x", 2)]).unwrap();
    assert_eq!(cms.query(&["x"]).unwrap(), vec![2]);
}

#[test]
fn namespaces_are_separate() {
    let t = common::TempStore::new();
    let (a, b) = (t.store().ns(0), t.store().ns(1));
    a.cms("k").init_by_dim(10, 2).unwrap();
    assert!(!b.exists(b"k").unwrap());
    b.cms("k").init_by_dim(20, 2).unwrap();
    a.cms("k").incr_by(&[("i", 3)]).unwrap();
    assert_eq!(b.cms("k").query(&["i"]).unwrap(), vec![0]);
    assert_eq!(a.keys().unwrap(), vec![(b"k".to_vec(), KeyType::Cms)]);
    assert!(a.delete(b"k").unwrap());
    assert_eq!(b.cms("k").dims().unwrap(), (20, 2));
}
