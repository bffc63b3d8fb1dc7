//! Listing a namespace's keys in steps with a cursor, with their types.

mod common;

use rocksketch::KeyType;

#[test]
fn scan_pages_through_every_key_once() {
    let t = common::TempStore::new();
    let ns = t.store().ns(2);
    let mut want = Vec::new();
    for i in 0..25 {
        let key = format!("key:{i:02}");
        if i % 2 == 0 {
            ns.cms(&key).init_by_dim(4, 1).unwrap();
            want.push((key.into_bytes(), KeyType::Cms));
        } else {
            ns.bloom(&key).add("x").unwrap();
            want.push((key.into_bytes(), KeyType::Bloom));
        }
    }
    // Keys of another namespace, before and after this one, stay out.
    t.store().ns(1).cms("zz").init_by_dim(4, 1).unwrap();
    t.store().ns(3).cms("aa").init_by_dim(4, 1).unwrap();

    let mut seen = Vec::new();
    let mut cursor: Option<Vec<u8>> = None;
    loop {
        let page = ns.scan(cursor.as_deref(), 7).unwrap();
        assert!(page.len() <= 7);
        let Some((last, _)) = page.last() else { break };
        cursor = Some(last.clone());
        seen.extend(page);
    }
    assert_eq!(seen, want);
    assert_eq!(ns.keys().unwrap(), want);
    assert!(ns.delete(b"key:03").unwrap());
    assert_eq!(ns.keys().unwrap().len(), 24);
}
