//! Dump iterators as JavaScript clients hold them: node-redis reads RESP integers as
//! doubles, so a `SCANDUMP` iterator must be exact in a double (below 2^53), or the dump
//! loop and `LOADCHUNK` get changed iterators. Every iterator goes through an `f64` here,
//! as in node-redis's own `scanDump`/`loadChunk` helpers, for Bloom and cuckoo filters
//! with several sub-filters.

mod common;

/// An iterator as a JavaScript number keeps it.
fn through_a_double(cursor: i64) -> i64 {
    cursor as f64 as i64
}

/// A JavaScript client's dump loop: every iterator read as a double; at most `most`
/// chunks (a changed iterator can repeat a position forever).
fn dump_as_javascript(
    mut scandump: impl FnMut(i64) -> rocksketch::Result<(i64, Vec<u8>)>,
    most: usize,
) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut cursor = 0;
    while chunks.len() <= most {
        let (next, chunk) = scandump(through_a_double(cursor)).expect("a dump chunk");
        if next == 0 {
            return chunks;
        }
        assert!(next < 1 << 53, "iterator {next} is not exact in a double");
        chunks.push((next, chunk));
        cursor = next;
    }
    panic!("the dump did not end within {most} chunks");
}

#[test]
fn bloom_dumps_restore_with_iterators_read_as_doubles() {
    let t = common::TempStore::new();
    let src = t.store().bloom("src");
    src.reserve(0.001, 1000, 2).unwrap();
    let items: Vec<String> = (0..5000).map(|n| format!("item{n}")).collect();
    for chunk in items.chunks(500) {
        src.madd(chunk);
    }
    let chunks = dump_as_javascript(|cursor| src.scandump(cursor), 1000);
    assert!(chunks.len() > 3, "a dump of several chunks");
    let dst = t.store().bloom("dst");
    for (cursor, chunk) in &chunks {
        assert!(
            *cursor < 1 << 53,
            "iterator {cursor} is not exact in a double"
        );
        dst.loadchunk(through_a_double(*cursor), chunk).unwrap();
    }
    assert_eq!(dst.mexists(&items).unwrap(), vec![true; items.len()]);
    assert_eq!(dst.info().unwrap(), src.info().unwrap());
}

#[test]
fn cuckoo_dumps_restore_with_iterators_read_as_doubles() {
    let t = common::TempStore::new();
    let src = t.store().cuckoo("src");
    let options = rocksketch::CuckooOptions {
        capacity: 500,
        ..Default::default()
    };
    src.reserve(options).unwrap();
    let items: Vec<String> = (0..3000).map(|n| format!("item{n}")).collect();
    for item in &items {
        src.add(item).unwrap();
    }
    let chunks = dump_as_javascript(|cursor| src.scandump(cursor), 1000);
    let dst = t.store().cuckoo("dst");
    for (cursor, chunk) in &chunks {
        assert!(
            *cursor < 1 << 53,
            "iterator {cursor} is not exact in a double"
        );
        dst.loadchunk(through_a_double(*cursor), chunk).unwrap();
    }
    for item in &items {
        assert!(dst.exists(item).unwrap(), "{item} lost in the restore");
    }
}
